package jobs_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/tokendiv"
)

// Token-level divergence end to end: the base model's scoring endpoint is a
// replay server, the RL model's another with --favour, so that they differ
// exactly at the favoured tokens; the figures are worked out by hand.
func TestTokenScoringTwoReplayServers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := reachOnce(t)
	e := start(t)
	ctx := context.Background()
	id, _ := e.debateFixture(t)
	baseURL := replayServer(t, bin, "--logprobs", "prompt_logprobs")
	rlURL := replayServer(t, bin, "--logprobs", "echo", "--favour", `Three,\boxed{9}`)
	noneURL := replayServer(t, bin, "--logprobs", "none")
	put := func(purpose, url string) {
		t.Helper()
		ep := store.DebateEndpoint{ComparisonID: id, Purpose: purpose, Endpoint: store.Endpoint{BaseURL: url, Model: purpose,
			Style: "completions", MaxConcurrency: 4}, Template: "qwen-boxed", MaxPerProblem: 2}
		if err := e.st.PutDebateEndpoint(ctx, ep, false); err != nil {
			t.Fatal(err)
		}
	}
	put(store.PurposeScore, baseURL)
	put(store.PurposeTokens, noneURL)
	if _, err := jobs.StartTokens(ctx, e.client, e.st, id, 0); err == nil || !strings.Contains(err.Error(), "test the RL model's scoring endpoint first") {
		t.Fatalf("start before detection: %v", err)
	}
	if _, err := jobs.TestTokenEndpoints(ctx, e.st, nil, id); err == nil || !strings.Contains(err.Error(), "no per-token log-probabilities with alternatives") {
		t.Fatalf("a server without log-probabilities: %v", err)
	}
	put(store.PurposeTokens, rlURL)
	msg, err := jobs.TestTokenEndpoints(ctx, e.st, nil, id)
	if err != nil || !strings.Contains(msg, `RL model: the server returns per-token log-probabilities with top-5 alternatives through "echo"`) ||
		!strings.Contains(msg, `base model: the server returns per-token log-probabilities with top-5 alternatives through vLLM's "prompt_logprobs"`) {
		t.Fatalf("detection: %q, %v", msg, err)
	}
	// Scope split: only p3 (base 0 of 4, RL 1 of 4); window 2: base #0 #1, RL #0 #1.
	left, err := jobs.StartTokens(ctx, e.client, e.st, id, 0)
	if err != nil || left != 4 {
		t.Fatalf("start: %d left, %v; want 4", left, err)
	}
	e.waitDebate(t, id, store.PurposeTokens)
	ep, err := e.st.GetDebateEndpoint(ctx, id, store.PurposeTokens)
	if err != nil || ep.Status != store.DebateRunning || ep.Usage.Requests < 8+2 || ep.Usage.TokensIn == 0 {
		t.Fatalf("tokens endpoint after the run: %+v, %v", ep, err)
	}
	pairs, err := e.st.TokenPairs(ctx, id, 0, true, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 4 {
		t.Fatalf("%d scored samples, want 4", len(pairs))
	}
	var samples []tokendiv.Sample
	for _, p := range pairs {
		if p.Base == nil || p.RL == nil || p.Base.Error != "" || p.RL.Error != "" {
			t.Fatalf("pair %+v", p)
		}
		b := tokendiv.FromArrays(p.Base.Tokens, p.Base.Logprobs, p.Base.TopK, p.Base.TopTokens, p.Base.TopLogprobs)
		r := tokendiv.FromArrays(p.RL.Tokens, p.RL.Logprobs, p.RL.TopK, p.RL.TopTokens, p.RL.TopLogprobs)
		ps, ok := tokendiv.Compare(b, r)
		if !ok {
			t.Fatalf("tokenizations differ: %q vs %q", p.Base.Tokens, p.RL.Tokens)
		}
		samples = append(samples, tokendiv.Sample{Correct: p.Correct, Positions: ps})
	}
	// RL #0 on p3: "Three threes make nine. \boxed{9}": 9 tokens; base −0.1 a
	// character, RL −0.01 at "Three" and "\boxed{9}".
	rl0 := pairs[2]
	if !rl0.Correct || strings.Join(rl0.RL.Tokens, "|") != `Three| |threes| |make| |nine.| |\boxed{9}` || rl0.Base.TopK != 5 || rl0.RL.TopK != 5 {
		t.Fatalf("RL #0: correct %v, tokens %q, k %d %d", rl0.Correct, rl0.RL.Tokens, rl0.Base.TopK, rl0.RL.TopK)
	}
	wantBase := []float64{-0.5, -0.1, -0.6, -0.1, -0.4, -0.1, -0.5, -0.1, -0.9}
	for i, v := range wantBase {
		rv := v
		if i == 0 || i == 8 {
			rv = -0.01
		}
		if math.Abs(float64(rl0.Base.Logprobs[i])-v) > 1e-6 || math.Abs(float64(rl0.RL.Logprobs[i])-rv) > 1e-6 {
			t.Errorf("position %d: base %v RL %v, want %v %v", i, rl0.Base.Logprobs[i], rl0.RL.Logprobs[i], v, rv)
		}
	}
	ps := samples[2].Positions
	if !ps[0].HasJS || math.Abs(ps[0].Delta-0.49) > 1e-6 || math.Abs(ps[8].Delta-0.89) > 1e-6 || ps[1].JS > 1e-9 {
		t.Errorf("positions %+v", ps[:2])
	}
	// JS at "Three": both lists are the token then alt1…alt4 at (1 − p)/2^j,
	// the rest (1 − p)/16; p = e^−0.5 (base) and e^−0.01 (RL).
	dist := func(p float64) []float64 {
		return []float64{p, (1 - p) / 2, (1 - p) / 4, (1 - p) / 8, (1 - p) / 16, (1 - p) / 16}
	}
	P, Q := dist(math.Exp(-0.01)), dist(math.Exp(-0.5))
	var js float64
	for i := range P {
		m := (P[i] + Q[i]) / 2
		js += P[i]*math.Log2(P[i]/m)/2 + Q[i]*math.Log2(Q[i]/m)/2
	}
	if math.Abs(ps[0].JS-js) > 1e-5 { // float4 storage
		t.Errorf("JS at Three = %v, want %v", ps[0].JS, js)
	}
	// Aggregates: positions 1 + 1 + 9 + 7 ("Three and three: \boxed{6}":
	// Three, ' ', and, ' ', three:, ' ', \boxed{6}); above ln 2 only
	// "\boxed{9}" (0.89): 1 of 18. Correct: RL #0 alone (9 positions,
	// mean |Δ| = (0.49 + 0.89)/9); the only critical token (among a
	// sample's 5 largest |Δ| and above ln 2) is RL #0's "\boxed{9}".
	a := tokendiv.Summarize(samples, tokendiv.DefaultThreshold, 5, 10)
	if a.Samples != 4 || a.Positions != 18 || math.Abs(a.Share-1.0/18) > 1e-9 || a.Correct.Samples != 1 ||
		math.Abs(a.Correct.MeanAbsDelta-1.38/9) > 1e-6 || math.Abs(a.Incorrect.MeanAbsDelta-0.49/9) > 1e-6 {
		t.Errorf("aggregate %+v", a)
	}
	if len(a.Frequent) != 1 || a.Frequent[0] != (tokendiv.TokenCount{Token: `\boxed{9}`, Count: 1}) {
		t.Errorf("frequent critical tokens %+v", a.Frequent)
	}
	prs, err := e.st.ProgressForComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, pr := range prs {
		if pr.Stage == jobs.StageTokens {
			n++
			if pr.Done != 2 || pr.Total != 2 || pr.Status != "done" {
				t.Errorf("token progress %+v", pr)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d token progress rows, want 2", n)
	}
	// Resuming asks for nothing more.
	if left, err := jobs.StartTokens(ctx, e.client, e.st, id, 0); err != nil || left != 0 {
		t.Errorf("restart: %d left, %v", left, err)
	}
}

// Pause stops token scoring at once and keeps what was stored; start
// resumes with the rest only (scope all: 3 problems × 2 models × 2 samples).
func TestTokenScoringPauseResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := reachOnce(t)
	e := start(t)
	ctx := context.Background()
	id, _ := e.debateFixture(t)
	baseURL := replayServer(t, bin, "--logprobs", "echo", "--latency", "150ms")
	rlURL := replayServer(t, bin, "--logprobs", "echo", "--latency", "150ms", "--favour", "Three")
	for _, x := range []struct{ purpose, url string }{{store.PurposeScore, baseURL}, {store.PurposeTokens, rlURL}} {
		ep := store.DebateEndpoint{ComparisonID: id, Purpose: x.purpose, Endpoint: store.Endpoint{BaseURL: x.url, Model: x.purpose,
			Style: "completions", MaxConcurrency: 1}, Template: "qwen-boxed", MaxPerProblem: 2}
		if err := e.st.PutDebateEndpoint(ctx, ep, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.st.SetTokenScope(ctx, id, store.TokenScopeAll); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.TestTokenEndpoints(ctx, e.st, nil, id); err != nil {
		t.Fatal(err)
	}
	left, err := jobs.StartTokens(ctx, e.client, e.st, id, 0)
	if err != nil || left != 12 {
		t.Fatalf("start: %d left, %v; want 12", left, err)
	}
	complete := 0 // samples with both scores, at the last count
	stored := func() int {
		pairs, err := e.st.TokenPairs(ctx, id, 0, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		complete = 0
		for _, p := range pairs {
			if p.Base != nil {
				n++
			}
			if p.RL != nil {
				n++
			}
			if p.Base != nil && p.RL != nil {
				complete++
			}
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for stored() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := jobs.PauseDebate(ctx, e.client, e.st, id, store.PurposeTokens); err != nil {
		t.Fatal(err)
	}
	e.waitDebate(t, id, store.PurposeTokens)
	paused := stored()
	if paused == 0 || paused >= 24 {
		t.Fatalf("%d of 24 scores stored when paused", paused)
	}
	time.Sleep(500 * time.Millisecond)
	if n := stored(); n != paused {
		t.Errorf("scoring went on after the pause: %d, then %d", paused, n)
	}
	if ep, _ := e.st.GetDebateEndpoint(ctx, id, store.PurposeTokens); ep.Status != store.DebatePaused {
		t.Errorf("status %q after the pause", ep.Status)
	}
	left, err = jobs.StartTokens(ctx, e.client, e.st, id, 0)
	// A sample counts as left until both its scores are stored.
	if err != nil || left != 12-int64(complete) {
		t.Fatalf("resume: %d left after %d scores (%d samples complete), %v; want %d", left, paused, complete, err, 12-complete)
	}
	e.waitDebate(t, id, store.PurposeTokens)
	if n := stored(); n != 24 {
		t.Errorf("%d scores stored after resuming, want 24", n)
	}
}
