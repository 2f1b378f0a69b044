package store_test

import (
	"context"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// The verifier audit's store: choosing items (deciding + random positions),
// progress, errors, and resolving a disagreement on an unparseable sample
// both ways (accepting the judge's overrides it, keeping Reach's restores
// "unparseable").
func TestVerifierAuditStore(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	cid, runs, pids := tiny(t, st, 0)
	base, rl := runs[0].ID, runs[1].ID
	if _, err := st.Pool().Exec(ctx, `UPDATE samples SET status = 'unparseable', rule = '' WHERE run_id = $1 AND problem_id = $2 AND sample_index = 2`,
		base, pids[1]); err != nil {
		t.Fatal(err)
	}
	// p0 is base-only, p1 RL-only: deciding are base p0 #1 #2, base p1 #0-#2
	// and RL p0 #0-#2; the rest, in order, base p0 #0 (position 0) and RL p1
	// #0-#2 (1-3).
	d, rest, err := st.AuditScope(ctx, cid, pids, pids)
	if err != nil || d != 8 || rest != 4 {
		t.Fatalf("scope %d deciding, %d rest, %v", d, rest, err)
	}
	if d, rest, _ = st.AuditScope(ctx, cid, pids, pids[:1]); d != 5 || rest != 7 {
		t.Fatalf("scope with only p0 deciding: %d, %d", d, rest)
	}
	n, err := st.NewVerifierAudit(ctx, cid, 2, 9, 0, pids, pids, []int64{0, 3})
	if err != nil || n != 10 {
		t.Fatalf("new audit: %d items, %v", n, err)
	}
	items, err := st.AuditItems(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	var random []string
	for _, it := range items {
		if it.Stratum == "random" {
			random = append(random, it.ModelName+" "+it.ProblemKey+" "+string(rune('0'+it.SampleIndex)))
		}
	}
	if len(random) != 2 || random[0] != "base p0 0" || random[1] != "rl p1 2" {
		t.Fatalf("random stratum %v, want base p0 #0 and rl p1 #2", random)
	}
	work, err := st.OpenAuditWork(ctx, cid)
	if err != nil || len(work) != 4 {
		t.Fatalf("open work %v, %v: want 4 runs × problems", work, err)
	}
	// The judge: base p1 #2 (unparseable) is correct; an error on RL p0 #0.
	if err := st.SaveAuditVerdict(ctx, store.AuditVerdict{ComparisonID: cid, RunID: base, ProblemID: pids[1], SampleIndex: 2,
		Verdict: "correct", Reason: "it says 3"}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveAuditVerdict(ctx, store.AuditVerdict{ComparisonID: cid, RunID: rl, ProblemID: pids[0], SampleIndex: 0, Error: "HTTP 500"}); err != nil {
		t.Fatal(err)
	}
	a, err := st.GetVerifierAudit(ctx, cid)
	if err != nil || a.Items != 10 || a.Answered != 1 || a.Errors != 1 || a.Status != store.DebateRunning || a.M != 2 || a.Seed != 9 {
		t.Fatalf("audit %+v, %v", a, err)
	}
	if left, _ := st.AuditWorkItems(ctx, cid, rl, pids[0]); len(left) != 2 {
		t.Errorf("work items of RL p0: %d, want 2 (the failed one waits for a resume)", len(left))
	}
	if err := st.ClearAuditErrors(ctx, cid); err != nil {
		t.Fatal(err)
	}
	if left, _ := st.AuditWorkItems(ctx, cid, rl, pids[0]); len(left) != 3 {
		t.Errorf("work items of RL p0 after clearing errors: %d, want 3", len(left))
	}
	if done, err := st.FinishAuditIfDone(ctx, cid); err != nil || done {
		t.Errorf("finished with 9 items open: %v, %v", done, err)
	}

	if err := st.ResolveAuditItem(ctx, cid, base, pids[1], 2, store.ResolveJudge, 0); err != nil {
		t.Fatal(err)
	}
	if c := cOf(t, st, cid, base, pids[1]); c != 1 {
		t.Errorf("base p1 c = %d after accepting the judge's verdict, want 1", c)
	}
	if err := st.ResolveAuditItem(ctx, cid, base, pids[1], 2, store.ResolveReach, 0); err != nil {
		t.Fatal(err)
	}
	ss, err := st.SamplesForProblem(ctx, base, pids[1], 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ss {
		if x.SampleIndex == 2 && (x.Status != store.SampleUnparseable || x.Override != nil || cOf(t, st, cid, base, pids[1]) != 0) {
			t.Errorf("after keeping Reach's: %s, override %+v", x.Status, x.Override)
		}
	}
	// Only a disagreement can be resolved.
	if err := st.ResolveAuditItem(ctx, cid, base, pids[1], 0, store.ResolveJudge, 0); err == nil {
		t.Error("resolved an unanswered item")
	}
}
