package jobs_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// auditLabels plant two disagreements in the debate fixture for the
// verifier audit's judge (reach replay-server --judge): base p3 #1 "\boxed{8}"
// (graded incorrect; the judge says correct) and RL p3 #0 (graded correct;
// the judge says incorrect), and three agreements. Unlabelled samples get
// the replay judge's default, unsure.
var auditLabels = map[string]string{
	"\\boxed{8}":                         "correct",
	"\\boxed{10}":                        "incorrect",
	"Two plus three is five. \\boxed{5}": "correct",
	"Three threes make nine. \\boxed{9}": "incorrect",
	"Five: \\boxed{5}":                   "correct",
}

func (e env) waitAudit(t *testing.T, id int64) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		n, err := jobs.ActiveAuditJobs(context.Background(), e.st, id)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("verifier audit jobs of comparison %d not done after a minute", id)
}

func auditSummary(t *testing.T, e env, id int64) analysis.AuditSummary {
	t.Helper()
	ctx := context.Background()
	sc, err := analysis.LoadAuditScope(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	items, err := e.st.AuditItems(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	s, err := analysis.SummariseAudit(sc, items)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The verifier audit end to end against reach replay-server in judge mode.
// Counts (n = 4): base p1 2, p2 1, p3 0; RL p1 4, p2 2, p3 1. Only p3 is in a
// one-model set (RL-only): its incorrect or unparseable samples are the
// deciding stratum, base #0-#3 and RL #1-#3, 7 samples; the rest are the
// other 17 of the 24.
func TestVerifierAuditFindsPlantedDisagreements(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := reachOnce(t)
	e := start(t)
	ctx := context.Background()
	id, dir := e.debateFixture(t)
	var labels []any
	for c, v := range auditLabels {
		labels = append(labels, map[string]string{"completion": c, "verdict": v, "reason": "labelled " + v})
	}
	writeJSONL(t, filepath.Join(dir, "audit-labels.jsonl"), labels)
	url := replayServer(t, bin, "--judge", filepath.Join(dir, "audit-labels.jsonl"))

	// Without a judge endpoint the audit cannot start.
	if _, err := jobs.StartAudit(ctx, e.client, e.st, id, 5, 1, 0, true); err == nil {
		t.Fatal("an audit started without a judge endpoint")
	}
	if err := e.st.PutDebateEndpoint(ctx, store.DebateEndpoint{ComparisonID: id, Purpose: store.PurposeJudge,
		Endpoint: store.Endpoint{BaseURL: url, Model: "judge", Style: "chat", MaxConcurrency: 4}, Template: "default", MaxTokens: 64}, false); err != nil {
		t.Fatal(err)
	}

	sc, err := analysis.LoadAuditScope(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := analysis.PlanAudit(ctx, e.st, sc, 5)
	if err != nil {
		t.Fatal(err)
	}
	if plan.DecidingProblems != 1 || plan.Deciding != 7 || plan.Rest != 17 || plan.Requests != 12 {
		t.Fatalf("plan with m = 5: %+v, want 1 problem, 7 deciding, 17 rest, 12 requests", plan)
	}
	// m = 5: 12 items, 5 of them random, the same 5 for the same seed.
	left, err := jobs.StartAudit(ctx, e.client, e.st, id, 5, 42, 0, true)
	if err != nil || left != 12 {
		t.Fatalf("start with m = 5: %d left, %v; want 12", left, err)
	}
	e.waitAudit(t, id)
	items, _ := e.st.AuditItems(ctx, id)
	random := 0
	for _, it := range items {
		if it.Stratum == "random" {
			random++
		}
	}
	if len(items) != 12 || random != 5 {
		t.Fatalf("m = 5: %d items, %d random", len(items), random)
	}

	// m = 17: every sample is audited, 24 requests; both planted
	// disagreements are found.
	if left, err = jobs.StartAudit(ctx, e.client, e.st, id, 17, 42, 0, true); err != nil || left != 24 {
		t.Fatalf("start with m = 17: %d left, %v; want 24", left, err)
	}
	e.waitAudit(t, id)
	au, err := e.st.GetVerifierAudit(ctx, id)
	if err != nil || au.Status != store.AuditDone || au.Items != 24 || au.Answered != 24 || au.Requests != 24 || au.TokensIn == 0 {
		t.Fatalf("audit %+v, %v; want done, 24 answered in 24 requests", au, err)
	}
	// Resuming a finished audit asks nothing.
	if left, err = jobs.StartAudit(ctx, e.client, e.st, id, 17, 42, 0, false); err != nil || left != 0 {
		t.Fatalf("resume a finished audit: %d left, %v", left, err)
	}

	s := auditSummary(t, e, id)
	if len(s.Disagreements) != 2 || s.Open != 2 {
		t.Fatalf("%d disagreements (%d open), want 2: %+v", len(s.Disagreements), s.Open, s.Disagreements)
	}
	d0, d1 := s.Disagreements[0], s.Disagreements[1]
	if d0.ModelName != "base" || d0.ProblemKey != "p3" || d0.SampleIndex != 1 || d0.ReachStatus != "incorrect" || d0.Verdict != "correct" ||
		d0.Reason != "labelled correct" || d0.Completion != "\\boxed{8}" || d0.Stratum != "deciding" {
		t.Errorf("first disagreement %+v", d0)
	}
	if d1.ModelName != "rl" || d1.ProblemKey != "p3" || d1.SampleIndex != 0 || d1.ReachStatus != "correct" || d1.Verdict != "incorrect" ||
		d1.Stratum != "random" || !d1.Counted {
		t.Errorf("second disagreement %+v", d1)
	}
	// Base: 12 items, 3 definite verdicts (p1 #0, p3 #1, p3 #2), 1 disagreement:
	// 1/3, Wilson [0.0615, 0.7923]. RL: 2 definite (p1 #0, p3 #0), 1: 1/2,
	// [0.0945, 0.9055]; both RL ones are in the random stratum.
	b, r := s.Models[0], s.Models[1]
	if b.Items != 12 || b.Definite != 3 || b.Disagreements != 1 || b.Unsure != 9 || !near(b.Rate.P, 1.0/3) ||
		!near(b.Rate.Lo, 0.06149194472039621) || !near(b.Rate.Hi, 0.7923403991979522) || b.Random.N != 1 || b.Random.K != 0 {
		t.Errorf("base %+v", b)
	}
	if r.Items != 12 || r.Definite != 2 || r.Disagreements != 1 || !near(r.Rate.Lo, 0.09453120573423074) ||
		!near(r.Rate.Hi, 0.9054687942657693) || r.Random.N != 2 || r.Random.K != 1 {
		t.Errorf("RL %+v", r)
	}
	// Flipped: base p3 0 -> 1, RL p3 1 -> 0. Base pass@k 1/3, 11/18, 5/6, 1;
	// RL 1/2, 11/18, 2/3, 2/3: k* = 2 (equal there, base ahead after).
	if len(s.Flips) != 1 || !flipLabel("base-only 0 → 1, RL-only 1 → 0").MatchString(s.Flips[0].Label()) {
		t.Errorf("flip %+v: %q", s.Flips, s.Flips[0].Label())
	}
	// The report's k* and solved sets are the flip's "before".
	rep, err := analysis.Build(ctx, e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pairs[0].Crossover.Found || rep.Pairs[0].Solved.OtherOnly != 1 || rep.Pairs[0].Solved.BaseOnly != 0 {
		t.Errorf("report: crossover %+v, solved %+v", rep.Pairs[0].Crossover, rep.Pairs[0].Solved)
	}

	// Accepting the judge's verdict on base p3 #1 overrides the sample: base
	// p3 is solved (c = 1) and p3 leaves the RL-only set. The flip still
	// applies the open RL one: k* none -> 2.0, base-only 0 -> 1, RL-only 0 -> 0.
	base, rl := s.Models[0].RunID, s.Models[1].RunID
	p3 := problemID(t, e, id, "p3")
	if err := e.st.ResolveAuditItem(ctx, id, base, p3, 1, store.ResolveJudge, 0); err != nil {
		t.Fatal(err)
	}
	rep, _ = analysis.Build(ctx, e.st, id)
	if rep.Pairs[0].Solved.OtherOnly != 0 || rep.Pairs[0].Solved.Both != 3 || rep.Models[0].Overrides != 1 {
		t.Errorf("after accepting: solved %+v, base overrides %d", rep.Pairs[0].Solved, rep.Models[0].Overrides)
	}
	s = auditSummary(t, e, id)
	if s.Open != 2 || !flipLabel("base-only 0 → 1, RL-only 0 → 0").MatchString(s.Flips[0].Label()) || s.Disagreements[0].Resolution != store.ResolveJudge {
		t.Errorf("after accepting: open %d, flip %q, %+v", s.Open, s.Flips[0].Label(), s.Disagreements[0])
	}
	// Keeping Reach's verdict on RL p3 #0 takes it out of the flip.
	if err := e.st.ResolveAuditItem(ctx, id, rl, p3, 0, store.ResolveReach, 0); err != nil {
		t.Fatal(err)
	}
	s = auditSummary(t, e, id)
	if s.Open != 1 || s.Flips[0].Label() != "no change" {
		t.Errorf("after keeping: open %d, flip %q", s.Open, s.Flips[0].Label())
	}
	// Keeping Reach's verdict after accepting the judge's sets the sample back.
	if err := e.st.ResolveAuditItem(ctx, id, base, p3, 1, store.ResolveReach, 0); err != nil {
		t.Fatal(err)
	}
	rep, _ = analysis.Build(ctx, e.st, id)
	if rep.Pairs[0].Solved.OtherOnly != 1 || rep.Models[0].Overrides != 0 {
		t.Errorf("after keeping Reach's again: solved %+v, base overrides %d", rep.Pairs[0].Solved, rep.Models[0].Overrides)
	}
	// An agreement cannot be resolved.
	if err := e.st.ResolveAuditItem(ctx, id, base, p3, 2, store.ResolveJudge, 0); err == nil {
		t.Error("resolved an agreement")
	}
	es, err := e.st.Audit(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range es {
		if x.Action == "verifier-audit" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d verifier-audit entries in the audit log, want 3", n)
	}
}

// A judge that does not answer: the audit stays running (River tries
// again), the page's message says why nothing moves, and the refused
// attempts are not counted as requests spent (a new user saw "Spent: 2730
// requests" against a judge that was down, and no message).
func TestVerifierAuditJudgeDown(t *testing.T) {
	// A refused connection is retried until the endpoint has been down this
	// long (REACH_ENDPOINT_DOWN_AFTER, 2 minutes by default).
	e := startWith(t, func(c *jobs.Config) { c.EndpointDownAfter = 3 * time.Second })
	ctx := context.Background()
	id, _ := e.debateFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	if err := e.st.PutDebateEndpoint(ctx, store.DebateEndpoint{ComparisonID: id, Purpose: store.PurposeJudge,
		Endpoint: store.Endpoint{BaseURL: down, Model: "judge", Style: "chat", MaxConcurrency: 2}, Template: "default", MaxTokens: 64}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.StartAudit(ctx, e.client, e.st, id, 0, 1, 0, true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		a, err := e.st.GetVerifierAudit(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(a.Error, "did not answer") {
			if a.Status != store.DebateRunning || a.Requests != 0 || a.Answered != 0 {
				t.Errorf("judge down: status %s, %d requests spent, %d answered; want running, 0, 0", a.Status, a.Requests, a.Answered)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no message after 90 s: status %s, error %q, %d requests", a.Status, a.Error, a.Requests)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A new audit is refused while this one's jobs still run (its items were
	// left behind the old jobs), and accepted once it is paused.
	if _, err := jobs.StartAudit(ctx, e.client, e.st, id, 0, 2, 0, true); !errors.Is(err, jobs.ErrWrongState) {
		t.Errorf("a new audit while one runs: %v, want ErrWrongState", err)
	}
	if err := jobs.PauseAudit(ctx, e.client, e.st, id); err != nil {
		t.Fatal(err)
	}
	e.waitAudit(t, id)
	if _, err := jobs.StartAudit(ctx, e.client, e.st, id, 0, 2, 0, true); err != nil {
		t.Errorf("a new audit after a pause: %v", err)
	}
	jobs.PauseAudit(ctx, e.client, e.st, id)
}

// A process that skips the sampling queue (reach import --wait, which has
// no secret for endpoint keys) leaves an audit's jobs to others: the judge
// is never asked. A new user saw import --wait take another comparison's
// audit jobs and lose their accounting when it exited.
func TestSkipSamplingLeavesEndpointJobs(t *testing.T) {
	e := startWith(t, func(c *jobs.Config) { c.SkipSampling = true })
	ctx := context.Background()
	id, _ := e.debateFixture(t)
	asked := make(chan struct{}, 100)
	judge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer judge.Close()
	if err := e.st.PutDebateEndpoint(ctx, store.DebateEndpoint{ComparisonID: id, Purpose: store.PurposeJudge,
		Endpoint: store.Endpoint{BaseURL: judge.URL + "/v1", Model: "judge", Style: "chat", MaxConcurrency: 2}, Template: "default", MaxTokens: 64}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.StartAudit(ctx, e.client, e.st, id, 0, 1, 0, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if n, err := jobs.ActiveAuditJobs(ctx, e.st, id); err != nil || n == 0 {
		t.Errorf("%d audit jobs left (%v), want them all waiting", n, err)
	}
	if len(asked) != 0 {
		t.Errorf("the judge was asked %d times by a process that skips the sampling queue", len(asked))
	}
}

// flipLabel matches the flip's words on the fixture: k* none → 2.0, each
// with its bootstrap interval (RL is ahead on every problem before the
// flip, so no draw has a crossover; after it some do), then sets.
func flipLabel(sets string) *regexp.Regexp {
	return regexp.MustCompile(`^k\* none \[none ≤ 4, none ≤ 4\] → 2\.0 \[(\d\.\d|none ≤ 4), none ≤ 4\], ` + regexp.QuoteMeta(sets) + `$`)
}
