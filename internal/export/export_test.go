package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/reach-lab/reach/internal/store"
)

func records(n int) []Record {
	tr, step := true, 100
	var out []Record
	for i := range n {
		x := store.ExportSample{ProblemKey: "test/algebra/1.json", ProblemIndex: i % 7, Model: "RL <ckpt>", Role: "checkpoint", Step: &step,
			SampleIndex: i, Completion: strings.Repeat("so x = 5. ", i%50) + "\\boxed{5} \u00e9\u4e2d", FinishReason: "stop",
			CompletionTokens: i, Extracted: "5", Status: []string{"correct", "incorrect", "unparseable", "pending"}[i%4],
			VerdictSource: "reach-math/1", Rule: "boxed", Reason: "5 = 5", Policy: "strict"}
		// Every eighth sample from i = 4 on is correct by a fallback rule:
		// not counted under the strict policy.
		x.Counted = x.Status == "correct" && i%8 != 4
		if i%8 == 4 {
			x.Rule = "last-number"
		}
		if i%3 == 0 {
			x.FileCorrect, x.FileExtracted = &tr, "5"
		}
		out = append(out, FromStore(x))
	}
	return out
}

func each(rs []Record) func(func(Record) error) error {
	return func(fn func(Record) error) error {
		for _, r := range rs {
			if err := fn(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// Both formats give back exactly the records written, over several parquet row groups.
func TestWriteRoundTrip(t *testing.T) {
	in := records(2*rowsPerGroup + 17)
	var b bytes.Buffer
	if err := Write(&b, "jsonl", each(in)); err != nil {
		t.Fatal(err)
	}
	var got []Record
	sc := bufio.NewScanner(&b)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if !reflect.DeepEqual(got, in) {
		t.Errorf("jsonl: %d records back, first %+v", len(got), got[0])
	}
	if !strings.Contains(string(mustJSON(t, in[0])), `"verdict":"correct","correct":true`) || in[3].Correct != nil {
		t.Errorf("verdict fields: %s; a pending sample's correct %v", mustJSON(t, in[0]), in[3].Correct)
	}
	if j := string(mustJSON(t, in[4])); !strings.Contains(j, `"verdict":"correct","correct":false`) || !strings.Contains(j, `"grading_policy":"strict"`) {
		t.Errorf("a fallback-graded sample under strict: %s; want verdict correct, correct false, grading_policy strict", j)
	}

	b.Reset()
	if err := Write(&b, "parquet", each(in)); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[Record](bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rows, in) {
		t.Errorf("parquet: %d records back, first %+v", len(rows), rows[0])
	}
	f, err := parquet.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil || len(f.RowGroups()) != 3 {
		t.Errorf("parquet row groups: %v %v", len(f.RowGroups()), err)
	}
	if err := Write(&b, "csv", each(in)); err == nil {
		t.Error("csv accepted")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A file without token counts is stored with 0: the export says null, not 0.
func TestCompletionTokensNullWhenUnknown(t *testing.T) {
	if r := FromStore(store.ExportSample{CompletionTokens: 0}); r.CompletionTokens != nil {
		t.Errorf("unknown tokens exported as %d", *r.CompletionTokens)
	}
	if j := string(mustJSON(t, FromStore(store.ExportSample{}))); !strings.Contains(j, `"completion_tokens":null`) {
		t.Errorf("unknown tokens in JSON: %s", j)
	}
	if r := FromStore(store.ExportSample{CompletionTokens: 412}); r.CompletionTokens == nil || *r.CompletionTokens != 412 {
		t.Errorf("412 tokens exported as %v", r.CompletionTokens)
	}
}
