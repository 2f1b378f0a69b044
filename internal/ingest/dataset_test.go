package ingest

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/testfiles"
)

func readAll(t *testing.T, rel string) []Problem {
	t.Helper()
	var ps []Problem
	err := ReadDataset(open(t, rel), rel, func(p Problem) error {
		ps = append(ps, p)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadDataset(%s): %v", rel, err)
	}
	return ps
}

func kinds(ps []Problem) map[string]int {
	k := map[string]int{}
	for _, p := range ps {
		k[p.Kind]++
	}
	return k
}

func TestReadDatasetRealFiles(t *testing.T) { testReadDatasetRealFiles(t) }

// TestReadDatasetRealFilesUnlicensed is TestReadDatasetRealFiles on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestReadDatasetRealFiles runs on the stand-in.
func TestReadDatasetRealFilesUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testReadDatasetRealFiles(t)
}

func testReadDatasetRealFiles(t *testing.T) {
	tests := []struct {
		file  string
		n     int
		kinds map[string]int
		check func(t *testing.T, ps []Problem)
	}{
		{"math500/test.jsonl", 500, map[string]int{KindMath: 500}, func(t *testing.T, ps []Problem) {
			p := ps[0]
			if p.Key != "test/precalculus/807.json" || p.Index != 0 || p.Reference != `\left( 3, \frac{\pi}{2} \right)` ||
				p.Subject != "Precalculus" || p.Level != "2" || !strings.HasPrefix(p.Statement, "Convert the point $(0,3)$") ||
				!strings.Contains(p.Extra["solution"], `\boxed{\left( 3, \frac{\pi}{2} \right)}`) {
				t.Errorf("problem 0 = %+v", p)
			}
			p = ps[2]
			if p.Key != "test/algebra/2584.json" || p.Index != 2 || p.Reference != `\frac{14}{3}` || p.Subject != "Algebra" || p.Level != "3" {
				t.Errorf("problem 2 = %+v", p)
			}
			levels := map[string]int{}
			for _, p := range ps {
				levels[p.Level]++
			}
			if levels["1"] != 43 || levels["2"] != 90 || levels["3"] != 105 || levels["4"] != 128 || levels["5"] != 134 {
				t.Errorf("levels %v", levels)
			}
		}},
		{"aime24/test.jsonl", 30, map[string]int{KindMath: 30}, func(t *testing.T, ps []Problem) {
			if ps[0].Key != "60" || ps[0].Reference != "204" || !strings.HasPrefix(ps[0].Statement, "Every morning Aya") {
				t.Errorf("problem 0 = %+v", ps[0])
			}
			if ps[7].Key != "67" || ps[7].Reference != "025" { // leading zeros kept as given
				t.Errorf("problem 7: key %q ref %q", ps[7].Key, ps[7].Reference)
			}
			if !strings.HasPrefix(ps[0].Extra["url"], "https://artofproblemsolving.com/") || ps[0].Extra["solution"] == "" {
				t.Errorf("extra %v", ps[0].Extra)
			}
		}},
		{"aime25/test.jsonl", 30, map[string]int{KindMath: 30}, func(t *testing.T, ps []Problem) {
			if ps[0].Key != "90" || ps[0].Reference != "70" || ps[29].Key != "119" {
				t.Errorf("first %+v last key %q", ps[0], ps[29].Key)
			}
		}},
		{"amc23/test.jsonl", 40, map[string]int{KindMath: 40}, func(t *testing.T, ps []Problem) {
			if ps[0].Key != "0" || ps[0].Reference != "27" || ps[3].Reference != "3159" {
				t.Errorf("problem 0 %+v, 3 ref %q", ps[0], ps[3].Reference)
			}
			for _, p := range ps {
				if _, err := strconv.Atoi(p.Reference); err != nil {
					t.Errorf("%s: reference %q not an integer (27.0 must read as 27)", p.Key, p.Reference)
				}
			}
		}},
		{"humaneval/HumanEval.jsonl", 164, map[string]int{KindCode: 164}, func(t *testing.T, ps []Problem) {
			p := ps[0]
			if p.Key != "HumanEval/0" || p.Extra["entry_point"] != "has_close_elements" || p.Extra["prompt"] != p.Statement ||
				!strings.Contains(p.Statement, "def has_close_elements(") || !strings.Contains(p.Extra["test"], "def check(candidate)") ||
				!strings.Contains(p.Extra["canonical_solution"], "for idx, elem in enumerate(numbers)") || p.Reference != "" {
				t.Errorf("problem 0 = %+v", p)
			}
			if ps[163].Key != "HumanEval/163" {
				t.Errorf("last key %q", ps[163].Key)
			}
		}},
		{"generations/gsm8k-openai-gpt3-example-solutions/test.jsonl", 1319, map[string]int{KindMath: 1319}, func(t *testing.T, ps []Problem) {
			p := ps[0]
			if p.Key != "" || p.Index != 0 || p.Reference != "18" || !strings.HasSuffix(p.Extra["solution"], "#### 18") ||
				!strings.HasPrefix(p.Statement, "Janet") {
				t.Errorf("problem 0 = %+v", p)
			}
			if ps[1].Reference != "3" || ps[1318].Index != 1318 {
				t.Errorf("problem 1 ref %q, last index %d", ps[1].Reference, ps[1318].Index)
			}
			for _, p := range ps {
				if strings.Contains(p.Reference, "#") || p.Reference == "" {
					t.Fatalf("line %d: reference %q", p.Index+1, p.Reference)
				}
			}
		}},
		{"generations/gsm8k30-qwen25-1.5b-sft-vs-rlvr-ppo/data/gsm8k_subset.jsonl", 30, map[string]int{KindMath: 30}, func(t *testing.T, ps []Problem) {
			if f := testfiles.Facts(t); ps[0].Key != "0" || ps[0].Reference != f.FirstRef || ps[22].Key != "22" || ps[29].Reference != f.LastRef {
				t.Errorf("problem 0 %+v; 29 ref %q", ps[0], ps[29].Reference)
			}
		}},
		// An evaluator output file also reads as a dataset: "Level 3" loses its prefix, idx is the key.
		{"generations/math100-qwen25-math-instruct-maj8-example/math_cot_100.jsonl", 100, map[string]int{KindMath: 100}, func(t *testing.T, ps []Problem) {
			if ps[0].Key != "0" || ps[0].Level != "3" || ps[0].Reference != "420" || !strings.HasPrefix(ps[0].Statement, "What is $10.0000198") {
				t.Errorf("problem 0 = %+v", ps[0])
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			ps := readAll(t, tc.file)
			if len(ps) != tc.n {
				t.Fatalf("%d problems, want %d", len(ps), tc.n)
			}
			for i, p := range ps {
				if p.Index != i {
					t.Fatalf("problem %d has Index %d", i, p.Index)
				}
			}
			if got := kinds(ps); len(got) != len(tc.kinds) || got[KindMath] != tc.kinds[KindMath] || got[KindCode] != tc.kinds[KindCode] {
				t.Errorf("kinds %v, want %v", got, tc.kinds)
			}
			tc.check(t, ps)
		})
	}
}

func TestReadDatasetKindsAndFields(t *testing.T) {
	in := `{"id": "q1", "question": "Which is prime?\n(A) 4\n(B) 6\n(C) 7\n(D) 9", "answer": "C", "subject": "Number Theory"}

{"id": "q2", "question": "Pick one", "answer": "B", "options": ["x", "y"], "level": "Level 5"}
{"id": "q3", "question": "What is A + B?", "answer": "A"}
{"id": 4, "problem": "2+2?", "answer": 4.0, "meta": {"src": "x"}, "tags": null}
`
	var ps []Problem
	if err := ReadDataset(strings.NewReader(in), "d.jsonl", func(p Problem) error { ps = append(ps, p); return nil }); err != nil {
		t.Fatal(err)
	}
	want := []struct{ key, kind, ref, level string }{{"q1", KindChoice, "C", ""}, {"q2", KindChoice, "B", "5"}, {"q3", KindMath, "A", ""}, {"4", KindMath, "4", ""}}
	for i, w := range want {
		p := ps[i]
		if p.Key != w.key || p.Kind != w.kind || p.Reference != w.ref || p.Level != w.level || p.Index != i {
			t.Errorf("problem %d = %+v, want %+v", i, p, w)
		}
	}
	if ps[1].Extra["options"] != `["x","y"]` || ps[3].Extra["meta"] != `{"src":"x"}` {
		t.Errorf("extra: %v %v", ps[1].Extra, ps[3].Extra)
	}
	if _, ok := ps[3].Extra["tags"]; ok {
		t.Error("null field kept in Extra")
	}
}

func TestReadDatasetErrors(t *testing.T) {
	read := func(in string) error {
		return ReadDataset(strings.NewReader(in), "d.jsonl", func(Problem) error { return nil })
	}
	wantError(t, read(`{"id":1,"problem":"a"}`+"\n"+`{"id":2,"answer":"3"}`), 2, "problem", "missing")
	wantError(t, read(`{"id":1,"problem":"a"}`+"\n"+`{"id":1,"problem":"b"}`), 2, "id", `duplicate problem id "1" (first on line 1)`)
	wantError(t, read(`{"id":1,"problem":"a"}`+"\n"+`{"problem":"b"}`), 2, "id", "missing")
	wantError(t, read(`{"problem":"a"}`+"\n\n"+`{"problem": "b", "answer": "x`), 3, "", "truncated JSON")
	wantError(t, read(`{"problem": 7}`), 1, "problem", "want a string, got number")
	wantError(t, read(`{"problem": "x", "answer": [1, 2]}`), 1, "answer", "want a string or number, got list")
	wantError(t, read("\n  \n"), 0, "", "empty file")
	wantError(t, read(`["problem", "x"]`), 1, "", "want one JSON object per record, got list")

	stop := errors.New("stop")
	err := ReadDataset(strings.NewReader(`{"problem":"a"}`+"\n"+`{"problem":"b"}`), "d.jsonl", func(p Problem) error {
		if p.Index == 1 {
			return stop
		}
		return nil
	})
	var e *Error
	if !errors.Is(err, stop) || errors.As(err, &e) || err.Error() != "d.jsonl:2: stop" {
		t.Errorf("callback error: %v", err)
	}
}

// Code datasets with stdin/stdout tests (APPS, CodeContests, LiveCodeBench
// layouts) read as code problems; tests that cannot be run are refused at
// once, naming line and field.
func TestReadDatasetCodeTests(t *testing.T) {
	in := `{"problem_id": 1, "question": "Add two numbers.", "input_output": "{\"inputs\": [\"1 2\\n\"], \"outputs\": [\"3\\n\"]}"}
{"problem_id": 2, "question": "Echo.", "public_tests": {"input": ["a\n"], "output": ["a\n"]}, "time_limit": 2}
{"problem_id": 3, "question_content": "Negate.", "public_test_cases": "[{\"input\": \"1\\n\", \"output\": \"-1\\n\", \"testtype\": \"stdin\"}]"}
{"problem_id": 4, "prompt": "Write f.", "test_list": ["assert f(1) == 1"]}
`
	var ps []Problem
	if err := ReadDataset(strings.NewReader(in), "d.jsonl", func(p Problem) error { ps = append(ps, p); return nil }); err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		if p.Kind != KindCode {
			t.Errorf("problem %d: kind %s", i+1, p.Kind)
		}
	}
	if ps[2].Statement != "Negate." || ps[1].Extra["time_limit"] != "2" {
		t.Errorf("fields: %+v / %+v", ps[2], ps[1])
	}
	read := func(in string) error {
		return ReadDataset(strings.NewReader(in), "d.jsonl", func(Problem) error { return nil })
	}
	wantError(t, read(`{"question": "q", "input_output": {"fn_name": "f", "inputs": [[1]], "outputs": [1]}}`), 1, "input_output", "call-based")
	wantError(t, read(`{"question": "q", "tests": [{"input": "1"}]}`), 1, "tests", "want text fields input and output")
	wantError(t, read(`{"prompt": "def f():\n", "test": "def check(c): pass"}`), 1, "entry_point", "missing")
	wantError(t, read(`{"question": "q", "tests": [{"input": "", "output": ""}], "time_limit": "forever"}`), 1, "time_limit", "want seconds")
}
