package replay

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTokensAndLogprobsByHand(t *testing.T) {
	toks := Tokens("x = 42\nok")
	if got := strings.Join(toks, "|"); got != "x| |=| |42|\n|ok" {
		t.Fatalf("tokens %q", got)
	}
	if TokenLogprob("42") != -0.2 || TokenLogprob("é") != -0.1 {
		t.Errorf("token log-probabilities %v %v", TokenLogprob("42"), TokenLogprob("é"))
	}
}

func TestEchoLogprobs(t *testing.T) {
	h := New(nil, Options{})
	one := 1
	rec, resp := post(t, h, "/v1/completions", map[string]any{"model": "m", "prompt": "Q: 2+2?\nA: 4", "echo": true, "logprobs": one, "max_tokens": 1})
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	ch := resp["choices"].([]any)[0].(map[string]any)
	if ch["text"] != "Q: 2+2?\nA: 4." {
		t.Errorf("echoed text %q", ch["text"])
	}
	lp := ch["logprobs"].(map[string]any)
	toks, lps, offs := lp["tokens"].([]any), lp["token_logprobs"].([]any), lp["text_offset"].([]any)
	// "Q:", " ", "2+2?", "\n", "A:", " ", "4" and the generated ".".
	if len(toks) != 8 || len(lps) != 8 || len(offs) != 8 {
		t.Fatalf("tokens %v", toks)
	}
	if lps[0] != nil {
		t.Errorf("first token's log-probability %v, want null as vLLM sends", lps[0])
	}
	want := []float64{0, -0.1, -0.4, -0.1, -0.2, -0.1, -0.1, -0.1}
	wantOff := []float64{0, 2, 3, 7, 8, 10, 11, 12}
	for i := 1; i < 8; i++ {
		if math.Abs(lps[i].(float64)-want[i]) > 1e-12 || offs[i] != wantOff[i] {
			t.Errorf("token %d %q: logprob %v offset %v, want %v at %v", i, toks[i], lps[i], offs[i], want[i], wantOff[i])
		}
	}
	if u := resp["usage"].(map[string]any); u["prompt_tokens"] != 7.0 {
		t.Errorf("usage %v", u)
	}
}

func TestPromptLogprobsAndModes(t *testing.T) {
	zero := 0
	body := map[string]any{"model": "m", "prompt": "a bb", "prompt_logprobs": zero, "max_tokens": 1}
	_, resp := post(t, New(nil, Options{}), "/v1/completions", body)
	pl := resp["choices"].([]any)[0].(map[string]any)["prompt_logprobs"].([]any)
	if len(pl) != 3 || pl[0] != nil {
		t.Fatalf("prompt_logprobs %v", pl)
	}
	for _, v := range pl[2].(map[string]any) {
		if e := v.(map[string]any); e["logprob"] != -0.2 || e["decoded_token"] != "bb" {
			t.Errorf("entry %v", e)
		}
	}
	// A server with echo only ignores prompt_logprobs; one with prompt_logprobs only refuses echo.
	_, resp = post(t, New(nil, Options{Logprobs: LogprobsEcho}), "/v1/completions", body)
	if _, ok := resp["choices"].([]any)[0].(map[string]any)["prompt_logprobs"]; ok {
		t.Error("echo-only server sent prompt_logprobs")
	}
	rec, _ := post(t, New(nil, Options{Logprobs: LogprobsPrompt}), "/v1/completions",
		map[string]any{"model": "m", "prompt": "a", "echo": true, "logprobs": 1})
	if rec.Code != 400 {
		t.Errorf("echo on a prompt_logprobs-only server: %d", rec.Code)
	}
	_, resp = post(t, New(nil, Options{Logprobs: LogprobsNone}), "/v1/completions",
		map[string]any{"model": "m", "prompt": "a b", "echo": true, "logprobs": 1})
	if resp["choices"].([]any)[0].(map[string]any)["logprobs"] != nil {
		t.Error("a server without log-probabilities sent some")
	}
	// Without samples a sampling request is refused with the reason.
	rec, _ = post(t, New(nil, Options{}), "/v1/completions", map[string]any{"model": "m", "prompt": "a"})
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "no recorded samples") {
		t.Errorf("sampling without samples: %d %s", rec.Code, rec.Body)
	}
}

func TestJudgeMode(t *testing.T) {
	labels := []JudgeLabel{
		{Completion: "Half of 48 is 24, so 48 + 24 = 72. The answer is 72.", Verdict: "valid", Reason: "all steps right"},
		{Completion: "I guess 72.", Verdict: "flawed", Reason: "a guess"},
	}
	h := New(nil, Options{Judge: labels})
	prompt := "Problem: clips\nSolution:\n<<<\nI guess   72.\n>>>\nVERDICT?"
	_, resp := post(t, h, "/v1/chat/completions", map[string]any{"model": "j", "messages": []any{map[string]any{"role": "user", "content": prompt}}})
	got := resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]
	if got != "REASON: a guess\nVERDICT: FLAWED" {
		t.Errorf("judge reply %q", got)
	}
	_, resp = post(t, h, "/v1/completions", map[string]any{"model": "j", "prompt": "Solution: something else"})
	if got := texts(t, resp, false); got[0] != "REASON: no label for this completion\nVERDICT: UNSURE" {
		t.Errorf("unlabelled: %q", got)
	}
	_, resp = post(t, New(nil, Options{Judge: labels, JudgeDefault: JudgeNoVerdict}), "/v1/completions", map[string]any{"model": "j", "prompt": "x"})
	if got := texts(t, resp, false); strings.Contains(got[0], "VERDICT") {
		t.Errorf("no-verdict default: %q", got)
	}
}

func TestLoadJudgeLabels(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "labels.jsonl")
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	ls, err := LoadJudgeLabels(write(`{"completion": "a", "verdict": "valid"}` + "\n\n" + `{"completion": "b", "verdict": "flawed", "reason": "r"}`))
	if err != nil || len(ls) != 2 || ls[1].Reason != "r" {
		t.Fatalf("%v %v", ls, err)
	}
	for body, want := range map[string]string{
		`{"completion": "a", "verdict": "maybe"}`:                                                           "labels.jsonl:1: field verdict",
		`{"completion": "  ", "verdict": "valid"}`:                                                          "labels.jsonl:1: field completion is empty",
		"{\"completion\": \"a\", \"verdict\": \"valid\"}\n{\"completion\": \"a\", \"verdict\": \"flawed\"}": "labels.jsonl:2: this completion is labelled valid",
		`{"completion": `: "labels.jsonl:1:",
		``:                "holds no labels",
	} {
		if _, err := LoadJudgeLabels(write(body)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", body, err, want)
		}
	}
}

// The verifier audit's labels: correct and incorrect answer its prompt with
// a VERDICT line the audit reads (sampling.ParseVerdict: correct is valid,
// incorrect flawed).
func TestJudgeModeAnswerCheck(t *testing.T) {
	h := New(nil, Options{Judge: []JudgeLabel{{Completion: "So the answer is \\boxed{8}.", Verdict: "correct", Reason: "8 = 8"},
		{Completion: "It is \\boxed{9}", Verdict: "incorrect"}}})
	for prompt, want := range map[string]string{
		"Reference answer:\n8\n<<<ANSWER-CHECK\nSo the answer is \\boxed{8}.\nANSWER-CHECK>>>": "REASON: 8 = 8\nVERDICT: CORRECT",
		"<<<ANSWER-CHECK\nIt is \\boxed{9}\nANSWER-CHECK>>>":                                   "REASON: as labelled\nVERDICT: INCORRECT",
	} {
		_, resp := post(t, h, "/v1/completions", map[string]any{"model": "j", "prompt": prompt})
		if got := texts(t, resp, false); got[0] != want {
			t.Errorf("reply %q, want %q", got[0], want)
		}
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "labels.jsonl")
	os.WriteFile(p, []byte(`{"completion": "a", "verdict": "correct"}`+"\n"+`{"completion": "b", "verdict": "incorrect"}`), 0o644)
	if ls, err := LoadJudgeLabels(p); err != nil || len(ls) != 2 {
		t.Errorf("correct/incorrect labels: %v, %v", ls, err)
	}
}
