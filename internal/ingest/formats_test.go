package ingest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReachFormats(t *testing.T) {
	perSample := `{"problem_id": "p1", "sample_index": 1, "completion": "b", "correct": false}
{"problem_id": "p1", "sample_index": 0, "completion": "a", "finish_reason": "stop", "completion_tokens": 12, "correct": true, "extracted": "4"}
{"problem_id": 7, "completion": "c"}
{"problem_id": 7.0, "completion": "d", "correct": 1}
`
	got, err := collect(t, perSample, FormatReachSample, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, fa := true, false
	want := []Sample{
		{Line: 1, ProblemKey: "p1", SampleIndex: 1, Completion: "b", Correct: &fa},
		{Line: 2, ProblemKey: "p1", SampleIndex: 0, Completion: "a", FinishReason: "stop", CompletionTokens: 12, Correct: &tr, Extracted: "4"},
		{Line: 3, ProblemKey: "7", SampleIndex: 0, Completion: "c"},
		{Line: 4, ProblemKey: "7", SampleIndex: 1, Completion: "d", Correct: &tr},
	}
	sameSamples(t, got, want)

	perProblem := `{"completions": ["x", "y", "z"], "correct": [true, false, true], "problem_id": "q"}
{"problem_id": "r", "completions": [{"completion": "u", "sample_index": 3, "correct": false, "finish_reason": "length"}, {"completion": "v"}]}
`
	got, err = collect(t, perProblem, FormatReachProblem, nil)
	if err != nil {
		t.Fatal(err)
	}
	want = []Sample{
		{Line: 1, ProblemKey: "q", SampleIndex: 0, Completion: "x", Correct: &tr},
		{Line: 1, ProblemKey: "q", SampleIndex: 1, Completion: "y", Correct: &fa},
		{Line: 1, ProblemKey: "q", SampleIndex: 2, Completion: "z", Correct: &tr},
		{Line: 2, ProblemKey: "r", SampleIndex: 3, Completion: "u", FinishReason: "length", Correct: &fa},
		{Line: 2, ProblemKey: "r", SampleIndex: 1, Completion: "v"}, // second of the problem, index 1 is free
	}
	sameSamples(t, got, want)
}

func TestQwenEvalShortFinishReason(t *testing.T) {
	in := `{"idx": 0, "question": "q", "gt": "1", "code": ["a", "b", "c"], "pred": ["1", "2", null], "score": [true, false, false], "finish_reason": ["stop"]}
{"idx": 1, "code": ["d"], "score": [1]}
{"idx": 2, "code": ["e"], "pred": ["3"]}
`
	got, err := collect(t, in, FormatQwenEval, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, fa := true, false
	sameSamples(t, got, []Sample{
		{Line: 1, ProblemKey: "0", SampleIndex: 0, Completion: "a", FinishReason: "stop", Correct: &tr, Extracted: "1", Question: "q", Reference: "1"},
		{Line: 1, ProblemKey: "0", SampleIndex: 1, Completion: "b", Correct: &fa, Extracted: "2", Question: "q", Reference: "1"},
		{Line: 1, ProblemKey: "0", SampleIndex: 2, Completion: "c", Correct: &fa, Question: "q", Reference: "1"},
		{Line: 2, ProblemKey: "1", SampleIndex: 0, Completion: "d", Correct: &tr},
		{Line: 3, ProblemKey: "2", SampleIndex: 0, Completion: "e", Extracted: "3"},
	})
}

func TestMappedParallelLists(t *testing.T) {
	// A long-tail file: a list of completion strings with verdicts in a parallel list.
	in := `{"pid": "a", "outputs": ["x", "y"], "is_correct": [false, true], "num_tokens": [10, 20]}` + "\n"
	f, m, err := Sniff([]byte(in), "o.jsonl")
	want := Mapping{ProblemID: "pid", List: "outputs", Correct: "is_correct", Tokens: "num_tokens"}
	if err != nil || f != FormatMapped || *m != want {
		t.Fatalf("Sniff = %q %+v %v, want %+v", f, m, err, want)
	}
	got, err := collect(t, in, f, m)
	if err != nil {
		t.Fatal(err)
	}
	tr, fa := true, false
	sameSamples(t, got, []Sample{
		{Line: 1, ProblemKey: "a", SampleIndex: 0, Completion: "x", Correct: &fa, CompletionTokens: 10},
		{Line: 1, ProblemKey: "a", SampleIndex: 1, Completion: "y", Correct: &tr, CompletionTokens: 20},
	})
}

func sameSamples(t *testing.T, got, want []Sample) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d: %+v", len(got), len(want), got)
	}
	str := func(s Sample) string {
		c := "nil"
		if s.Correct != nil {
			c = fmt.Sprint(*s.Correct)
		}
		s.Correct = nil
		s.indexed, s.perLine = false, false // how the reader got there, not what it read
		return fmt.Sprintf("%+v correct=%s", s, c)
	}
	for i := range got {
		if str(got[i]) != str(want[i]) {
			t.Errorf("sample %d:\n got %s\nwant %s", i, str(got[i]), str(want[i]))
		}
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		head string
		want Format
	}{
		{`{"idx": 0, "question": "q", "code": ["a"], "score": [true]}`, FormatQwenEval},
		{`{"problem_id": "a", "completions": ["x"]}`, FormatReachProblem},
		{`{"problem_id": "a", "sample_index": 0, "completion": "x"}`, FormatReachSample},
		{`{"task_id": "HumanEval/0", "completion": "x", "passed": true}`, FormatHumanEvalResults},
		{"\ufeffproblem_id,n,correct\r\na,8,3\r\n", FormatCountsCSV},
		{"Problem_ID, N, C\n", FormatCountsCSV},
		// A head of SniffBytes cut in the middle of the first completion: the keys before it are
		// enough. (A shorter head is the whole file, and a file that ends there is truncated.)
		{(`{"idx": 0, "question": "q", "gt": "1", "code": ["a very long compl` + strings.Repeat("x", SniffBytes))[:SniffBytes], FormatQwenEval},
	}
	for _, tc := range tests {
		f, _, err := Sniff([]byte(tc.head), "x")
		if err != nil || f != tc.want {
			t.Errorf("Sniff(%.40q) = %q, %v; want %q", tc.head, f, err, tc.want)
		}
	}
	bad := []struct{ head, msg string }{
		{"", "empty file"},
		{"\n \n", "empty file"},
		{"\x00\x01\x02garbage\xff\xfe", "a NUL byte at byte 1: binary data"},
		{"{\"a\": \"x\"}\n{\"b\": \"caf\xe9\"}\n", "invalid UTF-8 at byte 11: binary data, or text in an encoding other than UTF-8"},
		{"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xec\xbd", "gzip data that does not decompress"},
		{`[{"a": 1}]`, "no field holds text"},
		{`[1, 2]`, "a JSON list of numbers"},
		{"id,score\n1,0.5\n", "the header must name problem_id, n and correct"},
		{"hello world\n", "not JSON"},
		{"{\"a\": 1}\n{\"a\": tru}\n{}", "invalid JSON"},
		{"{\"a\": \"x\n{}\n", "invalid JSON"},
		{"\x89PNG\r\n\x1a\n\x00\x00", "a PNG image"},
		{"model: qwen\ntemperature: 0.6\ntasks:\n- gsm8k\n", "a YAML or config file"},
		{`{"problem": "What is 2+2?", "answer": "4", "unique_id": "a"}`, "a dataset"},
		{`{"results": {"gsm8k": {"exact_match": 0.5}}, "configs": {}}`, "an evaluation results summary"},
	}
	for _, tc := range bad {
		_, _, err := Sniff([]byte(tc.head), "x.jsonl")
		var e *Error
		if !errors.As(err, &e) || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("Sniff(%q) = %v, want *Error ~%q", tc.head, err, tc.msg)
		}
	}
	// The place of the first byte that is not text: line 2 above.
	if _, _, err := Sniff([]byte("{\"a\": \"x\"}\n{\"b\": \"caf\xe9\"}\n"), "x.jsonl"); err == nil || !strings.HasPrefix(err.Error(), "x.jsonl:2: ") {
		t.Errorf("latin-1 on line 2: %v", err)
	}
	// A UTF-8 rune cut by the head's end is not binary.
	cutRune := `{"problem_id": "a", "completion": "caf`
	cutRune += strings.Repeat("x", SniffBytes-len(cutRune)-1) + "\xc3"
	if _, _, err := Sniff([]byte(cutRune), "x"); err != nil {
		t.Errorf("cut rune: %v", err)
	}
}

func TestReadSamplesErrors(t *testing.T) {
	ok := `{"problem_id": "a", "completion": "x"}` + "\n"
	for _, tc := range []struct {
		name, in   string
		f          Format
		m          *Mapping
		line       int
		field, msg string
	}{
		{"truncated line 3", ok + ok + `{"problem_id": "a", "compl`, FormatReachSample, nil, 3, "", "truncated JSON"},
		{"truncated inside value", ok + "\n" + `{"problem_id": "a", "completion": "x`, FormatReachSample, nil, 3, "", "truncated JSON"},
		{"invalid json", ok + `{"problem_id": "a", completion: 1}`, FormatReachSample, nil, 2, "", "invalid JSON"},
		{"wrong type index", `{"problem_id": "a", "sample_index": "zero", "completion": "x"}`, FormatReachSample, nil, 1, "sample_index", "want a non-negative integer, got string"},
		{"negative index", `{"problem_id": "a", "sample_index": -1, "completion": "x"}`, FormatReachSample, nil, 1, "sample_index", "non-negative"},
		{"wrong type verdict", `{"problem_id": "a", "completion": "x", "correct": "yes"}`, FormatReachSample, nil, 1, "correct", "want a verdict"},
		{"verdict 0.5", `{"problem_id": "a", "completion": "x", "correct": 0.5}`, FormatReachSample, nil, 1, "correct", "want a verdict"},
		{"completion not string", `{"problem_id": "a", "completion": 5}`, FormatReachSample, nil, 1, "completion", "want a string, got number"},
		{"missing id", `{"completion": "x"}`, FormatReachSample, nil, 1, "problem_id", "missing"},
		{"bool id", `{"problem_id": true, "completion": "x"}`, FormatReachSample, nil, 1, "problem_id", "want a problem id"},
		{"missing completion", `{"problem_id": "a"}`, FormatReachSample, nil, 1, "completion", "missing"},
		{"duplicate index", ok + `{"problem_id": "b", "sample_index": 0, "completion": "x"}` + "\n" + `{"problem_id": "a", "sample_index": 0, "completion": "y"}`, FormatReachSample, nil, 3, "sample_index", `duplicate sample index 0 for problem "a"`},
		{"duplicate field", `{"problem_id": "a", "completion": "x", "completion": "y"}`, FormatReachSample, nil, 1, "completion", "appears twice"},
		{"two values", `{"problem_id": "a", "completion": "x"} {}`, FormatReachSample, nil, 1, "", "more than one JSON value"},
		{"not an object", ok + `"just a string"`, FormatReachSample, nil, 2, "", "want one JSON object per record, got string"},
		{"qwen score wrong type", `{"idx": 0, "code": ["a", "b"], "score": [true, "no"]}`, FormatQwenEval, nil, 1, "score[1]", "want a verdict"},
		{"qwen score short", `{"idx": 0, "code": ["a", "b"], "score": [true]}`, FormatQwenEval, nil, 1, "score", "has 1 entries, code has 2"},
		{"qwen pred long", `{"idx": 0, "code": ["a"], "pred": ["1", "2"]}`, FormatQwenEval, nil, 1, "pred", "has 2 entries, code has 1"},
		{"qwen score not a list", `{"idx": 0, "code": ["a"], "score": true}`, FormatQwenEval, nil, 1, "score", "want a list parallel to code"},
		{"qwen code not a list", `{"idx": 0, "code": "a"}`, FormatQwenEval, nil, 1, "code", "want a list, got string"},
		{"qwen code item", `{"idx": 0, "code": ["a", 3]}`, FormatQwenEval, nil, 1, "code[1]", "want a completion"},
		{"qwen missing code", `{"idx": 0}`, FormatQwenEval, nil, 1, "code", "missing list"},
		{"mapped item type", `{"qid": 1, "rollouts": [{"text": "a", "correct": true}, {"text": "b", "correct": true}, {"text": "c", "correct": "x"}]}`, FormatMapped, &gsm8kRollouts, 1, "rollouts[2].correct", "want a verdict"},
		{"mapped missing text", `{"qid": 1, "rollouts": [{"correct": true}]}`, FormatMapped, &gsm8kRollouts, 1, "rollouts[0].text", "missing completion"},
		{"mapped dup rollout", `{"qid": 1, "rollouts": [{"text": "a", "rollout": 0}, {"text": "b", "rollout": 0}]}`, FormatMapped, &gsm8kRollouts, 1, "rollouts[1].rollout", "duplicate sample index 0"},
		{"mapped dotted not object", `{"sys": "x"}`, FormatMapped, &Mapping{Completion: "sys.solution"}, 1, "sys.solution", "missing completion"},
		{"deep nesting", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), FormatReachSample, nil, 1, "", "nested deeper than 128 levels"},
		{"deep nesting in a field", `{"problem_id": "a", "completion": "x", "m": ` + strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200) + "}", FormatReachSample, nil, 1, "", "nested deeper than 128 levels"},
		{"invalid utf-8", ok + "{\"problem_id\": \"a\", \"completion\": \"caf\xe9\"}", FormatReachSample, nil, 2, "", "invalid UTF-8 at byte 39 (0xe9)"},
		{"score needs a threshold", `{"problem_id": "a", "completion": "x", "correct": 0.5}`, FormatReachSample, nil, 1, "correct", "give a threshold"},
		{"inspect partial", `{"problem_id": "a", "completion": "x", "correct": "P"}`, FormatReachSample, nil, 1, "correct", "partial credit"},
		{"repeated problem line", `{"problem_id": "q", "completions": ["a"]}` + "\n" + `{"problem_id": "r", "completions": ["b"]}` + "\n" + `{"problem_id": "q", "completions": ["c"]}`, FormatReachProblem, nil, 3, "problem_id", `problem "q" is repeated: its samples were already on line 1`},
		{"qwen repeated idx", `{"idx": 0, "code": ["a"]}` + "\n" + `{"idx": 0, "code": ["a"]}`, FormatQwenEval, nil, 2, "idx", `problem "0" is repeated`},
		{"empty", "", FormatReachSample, nil, 0, "", "empty file"},
		{"blank lines only", "\n\r\n  \n", FormatQwenEval, nil, 0, "", "empty file"},
		{"binary garbage", "\x00\x01\x02\xff\xfe", FormatReachSample, nil, 1, "", "invalid UTF-8"},
		{"nul bytes", "\x00\x01\x02", FormatReachSample, nil, 1, "", "invalid JSON"},
		{"csv c > n", "problem_id,n,correct\na,8,3\nb,8,9\n", FormatCountsCSV, nil, 3, "correct", "9 correct out of n = 8"},
		{"csv c column", "problem_id,n,c\na,8,-1\n", FormatCountsCSV, nil, 2, "c", "non-negative"},
		{"csv bad n", "problem_id,n,correct\na,eight,3\n", FormatCountsCSV, nil, 2, "n", "at least 1"},
		{"csv n = 0", "problem_id,n,correct\na,4,3\nb,0,0\n", FormatCountsCSV, nil, 3, "n", "at least 1"},
		{"csv duplicate", "problem_id,n,correct\na,8,3\na,8,3\n", FormatCountsCSV, nil, 3, "problem_id", "duplicate problem"},
		{"csv short row", "problem_id,n,correct\na,8\n", FormatCountsCSV, nil, 2, "", "has 2 columns"},
		{"csv no header", "a,8,3\n", FormatCountsCSV, nil, 1, "", "header must name problem_id, n and correct (or c), e.g. the header problem_id,n,correct"},
		{"csv empty", "", FormatCountsCSV, nil, 0, "", "empty file"},
		{"csv header only", "problem_id,n,correct\n", FormatCountsCSV, nil, 1, "", "no data rows"},
		{"csv quotes", "problem_id,n,correct\n\"a,8,3\n", FormatCountsCSV, nil, 2, "", "invalid CSV"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ReadSamples(strings.NewReader(tc.in), "in.jsonl", tc.f, tc.m,
				func(Sample) error { return nil }, func(Count) error { return nil })
			wantError(t, err, tc.line, tc.field, tc.msg)
			if e := err.(*Error); e.File != "in.jsonl" || !strings.HasPrefix(e.Error(), "in.jsonl") {
				t.Errorf("error %q does not name the file", e.Error())
			}
		})
	}
}

func TestErrorString(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{File: "a.jsonl", Line: 3, Field: "score[1]", Msg: "want a verdict"}, "a.jsonl:3: score[1]: want a verdict"},
		{Error{File: "a.jsonl", Line: 3, Msg: "truncated JSON"}, "a.jsonl:3: truncated JSON"},
		{Error{File: "a.jsonl", Msg: "empty file"}, "a.jsonl: empty file"},
		{Error{File: "a.parquet", Record: "row 4", Field: "doc.id", Msg: "missing"}, "a.parquet: row 4: doc.id: missing"},
		{Error{File: "a.json", Line: 12, Record: "samples[3]", Msg: "bad"}, "a.json:12: samples[3]: bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%q, want %q", got, tc.want)
		}
	}
}

func TestReadSamplesCallerErrors(t *testing.T) {
	stop := errors.New("stop")
	in := `{"problem_id": "a", "completion": "x"}` + "\n" + `{"problem_id": "b", "completion": "y"}` + "\n"
	n := 0
	err := ReadSamples(strings.NewReader(in), "in.jsonl", FormatReachSample, nil, func(Sample) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	}, nil)
	var e *Error
	if !errors.Is(err, stop) || errors.As(err, &e) || err.Error() != "in.jsonl:2: stop" {
		t.Errorf("callback error = %v", err)
	}
	err = ReadSamples(strings.NewReader("problem_id,n,correct\na,1,1\n"), "c.csv", FormatCountsCSV, nil, nil,
		func(Count) error { return stop })
	if !errors.Is(err, stop) || err.Error() != "c.csv:2: stop" {
		t.Errorf("count callback error = %v", err)
	}
	// A failing reader is an I/O error, not the file's fault.
	err = ReadSamples(iotest.TimeoutReader(strings.NewReader(strings.Repeat(in, 10000))), "in.jsonl", FormatReachSample, nil, func(Sample) error { return nil }, nil)
	if !errors.Is(err, iotest.ErrTimeout) || errors.As(err, &e) {
		t.Errorf("reader error = %v", err)
	}
	for _, tc := range []struct {
		f Format
		m *Mapping
	}{{"nope", nil}, {FormatMapped, nil}, {FormatMapped, &Mapping{ProblemID: "id"}}, {FormatMapped, &Mapping{Completion: "a[0"}},
		{FormatMapped, &Mapping{Completion: "a", IDKind: "index7"}}, {FormatMapped, &Mapping{Completion: "a", Threshold: -1}}} {
		err := ReadSamples(strings.NewReader(in), "in.jsonl", tc.f, tc.m, func(Sample) error { return nil }, nil)
		if err == nil || errors.As(err, &e) {
			t.Errorf("format %q mapping %+v: err = %v, want a plain error", tc.f, tc.m, err)
		}
	}
}

func TestLongLines(t *testing.T) {
	// A per-problem line far beyond bufio.Scanner's 64 KiB default: 20 completions of 100 KiB.
	big := strings.Repeat("x", 100<<10)
	var b strings.Builder
	b.WriteString(`{"problem_id": "p", "completions": [`)
	for i := range 20 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"%d%s"`, i, big)
	}
	b.WriteString("]}\n" + `{"problem_id": "q", "completions": ["short"]}`)
	got, err := collect(t, b.String(), FormatReachProblem, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 21 || got[19].Completion != "19"+big || got[20].Line != 2 || got[20].Completion != "short" {
		t.Errorf("%d samples", len(got))
	}

	// Lines past the limit are an error naming the line and the limit.
	in := `{"problem_id": "q", "completions": ["short"]}` + "\n" + b.String()
	err = Read(strings.NewReader(in), "in.jsonl", FormatReachProblem, nil, Options{OnSample: func(Sample) error { return nil },
		Limits: Limits{MaxRecordBytes: 64 << 10}})
	wantError(t, err, 2, "", "line longer than the limit of 64 KiB")
}

// A NUL character (\u0000, which Postgres text cannot hold) is removed from the sample's texts and
// each line that had one is reported; the rest of the text is kept.
func TestNULRemovedWithWarning(t *testing.T) {
	in := `{"problem_id": "a", "completion": "x\u0000y", "extracted": "4\u0000"}` + "\n" + `{"problem_id": "a", "completion": "fine"}` + "\n" +
		`{"problem_id": "b", "completion": "\u0000\u0000z"}` + "\n"
	var got []Sample
	var warns []Warning
	err := Read(strings.NewReader(in), "nul.jsonl", FormatReachSample, nil, Options{
		OnSample:  func(s Sample) error { got = append(got, s); return nil },
		OnWarning: func(w Warning) { warns = append(warns, w) }})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Completion != "xy" || got[0].Extracted != "4" || got[2].Completion != "z" || got[1].Completion != "fine" {
		t.Errorf("samples %+v", got)
	}
	if len(warns) != 2 || warns[0].Code != "nul-removed" || warns[0].Err.Line != 1 || warns[1].Err.Line != 3 ||
		!strings.Contains(warns[1].Err.Error(), "nul.jsonl:3: removed 2 NUL character(s)") {
		t.Errorf("warnings %+v", warns)
	}
}
