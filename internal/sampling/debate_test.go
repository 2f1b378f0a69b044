package sampling

import (
	"context"
	"errors"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/replay"
)

func TestParseVerdict(t *testing.T) {
	for _, tc := range []struct {
		reply, verdict, reason string
		ok                     bool
	}{
		{"REASON: every step holds\nVERDICT: VALID", "valid", "every step holds", true},
		{"**Reason:** skipped the key step\n**Verdict:** **FLAWED**", "flawed", "skipped the key step", true},
		{"verdict: invalid\nlater thoughts\nVERDICT: correct", "valid", "verdict: invalid\nlater thoughts", true},
		{"<think>VERDICT: FLAWED maybe</think>\nREASON: fine\nVERDICT: Valid", "valid", "fine", true},
		{"Verdict: unsure", "unsure", "", true},
		{"The reasoning looks fine.", "", "", false},
		{"VERDICT: maybe", "", "", false},
	} {
		v, r, ok := ParseVerdict(tc.reply)
		if v != tc.verdict || r != tc.reason || ok != tc.ok {
			t.Errorf("ParseVerdict(%q) = %q, %q, %v; want %q, %q, %v", tc.reply, v, r, ok, tc.verdict, tc.reason, tc.ok)
		}
	}
}

func TestRenderJudge(t *testing.T) {
	got, err := RenderJudge(Template{Name: "default", Text: DefaultJudgeTemplate}, JudgeData{Problem: "What is 2+2?", Reference: "4", Completion: "2+2 = 4. \\boxed{4}"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Problem:\nWhat is 2+2?", "Reference answer:\n4", "<<<SOLUTION\n2+2 = 4. \\boxed{4}\nSOLUTION>>>", "VERDICT: VALID"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered judge prompt lacks %q:\n%s", want, got)
		}
	}
	for text, want := range map[string]string{
		"Judge {{.Problem}}":                  "never inserts {{.Completion}}",
		"{{.Completion}} {{.Answer}}":         "field .Answer",
		"{{.Completion}} {{printf \"%d\" 1}}": "not allowed",
	} {
		if _, err := RenderJudge(Template{Name: "t", Text: text}, JudgeData{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", text, err, want)
		}
	}
	_, err = RenderJudge(Template{Name: "t", Text: "{{.Completion}}"}, JudgeData{Completion: strings.Repeat("x", MaxJudgePromptBytes+1)})
	if err == nil || !strings.Contains(err.Error(), "too long to judge") {
		t.Errorf("huge completion: %v", err)
	}
}

func replayClient(t *testing.T, opts replay.Options, style Style) *Client {
	t.Helper()
	srv := httptest.NewServer(replay.New(nil, opts))
	t.Cleanup(srv.Close)
	c, err := New(Endpoint{BaseURL: srv.URL + "/v1", Model: "m", Style: style, Retry: RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestJudgeThroughReplay(t *testing.T) {
	labels := []replay.JudgeLabel{{Completion: "Two and two make 4, so \\boxed{4}.", Verdict: "valid", Reason: "fine"}}
	ctx := context.Background()
	c := replayClient(t, replay.Options{Judge: labels}, StyleChat)
	prompt, _ := RenderJudge(Template{Name: "default", Text: DefaultJudgeTemplate},
		JudgeData{Problem: "2+2?", Reference: "4", Completion: "Two and two make 4, so \\boxed{4}."})
	j, err := c.Judge(ctx, prompt, 64)
	if err != nil || j.Verdict != VerdictValid || j.Reason != "fine" || j.Usage.PromptTokens == 0 {
		t.Fatalf("judgment %+v, %v", j, err)
	}
	c = replayClient(t, replay.Options{Judge: labels, JudgeDefault: replay.JudgeNoVerdict}, StyleChat)
	_, err = c.Judge(ctx, "unlabelled {{x}}", 64)
	var e *Error
	if !errors.As(err, &e) || !strings.Contains(e.Message, "no VERDICT line") {
		t.Errorf("reply without a verdict: %v", err)
	}
}

func TestDetectLogprobs(t *testing.T) {
	ctx := context.Background()
	for mode, want := range map[string]string{
		replay.LogprobsBoth: MethodEcho, replay.LogprobsEcho: MethodEcho, replay.LogprobsPrompt: MethodPromptLogprobs,
	} {
		m, note, err := replayClient(t, replay.Options{Logprobs: mode}, StyleCompletions).DetectLogprobs(ctx)
		if err != nil || m != want || !strings.Contains(note, "probe tokens scored") {
			t.Errorf("server %q: method %q (%s), %v; want %q", mode, m, note, err, want)
		}
	}
	_, _, err := replayClient(t, replay.Options{Logprobs: replay.LogprobsNone}, StyleCompletions).DetectLogprobs(ctx)
	if err == nil || !strings.Contains(err.Error(), "gives no prompt log-probabilities") {
		t.Errorf("server without log-probabilities: %v", err)
	}
	_, _, err = replayClient(t, replay.Options{}, StyleChat).DetectLogprobs(ctx)
	if err == nil || !strings.Contains(err.Error(), "completions API") {
		t.Errorf("chat endpoint: %v", err)
	}
}

func TestScoreCompletionByHand(t *testing.T) {
	ctx := context.Background()
	prompt, completion := "Question: 2+2?\nAnswer:", " 4 is the answer."
	// Completion tokens " ", "4", " ", "is", " ", "the", " ", "answer.": 8 tokens, 17 characters,
	// log-probability −1.7, perplexity exp(1.7 / 8) = exp(0.2125).
	for _, mode := range []string{replay.LogprobsEcho, replay.LogprobsPrompt} {
		c := replayClient(t, replay.Options{Logprobs: mode}, StyleCompletions)
		method, _, err := c.DetectLogprobs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		p, _, err := c.PromptTokenCount(ctx, method, prompt)
		if err != nil || p != 5 {
			t.Fatalf("%s: prompt tokens %d, %v; want 5", mode, p, err)
		}
		r, u, err := c.ScoreCompletion(ctx, method, prompt, completion, p)
		if err != nil {
			t.Fatal(err)
		}
		if r.Tokens != 8 || math.Abs(r.SumLogprob+1.7) > 1e-9 || math.Abs(r.Perplexity-math.Exp(0.2125)) > 1e-9 || u.PromptTokens != 13 {
			t.Errorf("%s: %+v usage %+v; want 8 tokens, −1.7, exp(0.2125)", mode, r, u)
		}
	}
	// A prompt ending in white space that the completion continues: the merged token "\n\n"
	// holds the completion's first character, so it is scored with it, by the server's offsets
	// (echo) and by the decoded tokens' (prompt_logprobs) alike: "\n\n", "B", " ", "c" (−0.5).
	// (Counted with the prompt, the completion's first token was lost: issue 22.6.)
	for _, mode := range []string{replay.LogprobsEcho, replay.LogprobsPrompt} {
		c := replayClient(t, replay.Options{Logprobs: mode}, StyleCompletions)
		method, _, _ := c.DetectLogprobs(ctx)
		p, _, _ := c.PromptTokenCount(ctx, method, "A\n")
		r, _, err := c.ScoreCompletion(ctx, method, "A\n", "\nB c", p)
		if err != nil || r.Tokens != 4 || math.Abs(r.SumLogprob+0.5) > 1e-9 || r.Boundary != "offsets" {
			t.Errorf("%s merged boundary: %+v, %v", mode, r, err)
		}
	}
}

func TestDecodedOffsets(t *testing.T) {
	full := "Q: 2+2?\nAnswer: 4"
	// vLLM gives no entry for the first token; the others spell the text's end.
	got := decodedOffsets([]string{"", ":", " 2", "+", "2", "?\n", "Answer", ":", " 4"}, full)
	want := []int{0, 1, 2, 4, 5, 6, 8, 14, 15}
	if len(got) != len(want) {
		t.Fatalf("offsets %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("offsets %v, want %v", got, want)
		}
	}
	// A byte token decoded as a replacement character does not spell the text: no offsets.
	if got := decodedOffsets([]string{"", "\ufffd", " 4"}, "é 4"); got != nil {
		t.Errorf("replacement character: %v", got)
	}
}

func TestScoreTokensThroughReplay(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{replay.LogprobsEcho, replay.LogprobsPrompt} {
		c := replayClient(t, replay.Options{Logprobs: mode, Favour: []string{"Wait"}}, StyleCompletions)
		m, note, err := c.DetectTopLogprobs(ctx)
		if err != nil || m != mode || !strings.Contains(note, "top-5") {
			t.Fatalf("%s: DetectTopLogprobs = %q, %q, %v", mode, m, note, err)
		}
		n, _, err := c.PromptTokenCount(ctx, m, "Q: x?\nA:")
		if err != nil {
			t.Fatal(err)
		}
		// Completion tokens " ", "Wait", ",", … — replay tokens are runs of
		// white space or not: " ", "Wait,", " ", "x=1".
		ts, u, err := c.ScoreTokens(ctx, m, "Q: x?\nA:", " Wait, x=1", n)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		want := []string{" ", "Wait,", " ", "x=1"}
		if strings.Join(ts.Tokens, "|") != strings.Join(want, "|") || u.PromptTokens == 0 {
			t.Fatalf("%s: tokens %q (usage %+v), want %q", mode, ts.Tokens, u, want)
		}
		wantLp := []float64{-0.1, -0.5, -0.1, -0.3}
		for i, lp := range ts.Logprobs {
			if math.Abs(lp-wantLp[i]) > 1e-9 {
				t.Errorf("%s: logprob %d = %v, want %v", mode, i, lp, wantLp[i])
			}
			top := ts.Top[i]
			// The token itself (most likely here) then alt1…alt4 at (1 − e^lp)/2^j.
			if len(top) != TopK || top[0].Token != want[i] || top[1].Token != "alt1" ||
				math.Abs(top[1].Logprob-math.Log((1-math.Exp(wantLp[i]))/2)) > 1e-9 {
				t.Errorf("%s: top %d = %+v", mode, i, top)
			}
		}
		// A favoured token: −0.01 whatever its length.
		ts, _, err = c.ScoreTokens(ctx, m, "Q: x?\nA:", " Wait again", n)
		if err != nil || ts.Logprobs[1] != replay.FavouredLogprob {
			t.Errorf("%s: favoured %v %v", mode, ts.Logprobs, err)
		}
	}
	c := replayClient(t, replay.Options{Logprobs: replay.LogprobsNone}, StyleCompletions)
	if _, _, err := c.DetectTopLogprobs(ctx); err == nil || !strings.Contains(err.Error(), "no per-token log-probabilities") {
		t.Errorf("none: %v", err)
	}
}
