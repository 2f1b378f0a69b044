package jobs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/testfiles"
	"github.com/reach-lab/reach/internal/verify"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// repoCase is cases/<rel> of the carried test data (internal/testfiles).
func repoCase(t *testing.T, rel string) string {
	t.Helper()
	return testfiles.Path(t, "cases/"+rel)
}

func truncatedSpec(t *testing.T) intake.Spec {
	dir := repoCase(t, "from-reports/truncated-length")
	return intake.Spec{Name: "truncated", Dataset: intake.LocalFile(filepath.Join(dir, "dataset.jsonl")),
		Models: []intake.Model{{Name: "base", File: intake.LocalFile(filepath.Join(dir, "base.jsonl"))},
			{Name: "rl", File: intake.LocalFile(filepath.Join(dir, "rl.jsonl"))}}}
}

// waitReady waits until the comparison is ready again after an action.
func (e env) waitReady(t *testing.T, id int64) *analysis.Report {
	t.Helper()
	time.Sleep(50 * time.Millisecond)
	if c := e.wait(t, id); c.Status != store.StatusReady {
		t.Fatalf("comparison %d: %s %s", id, c.Status, c.Error)
	}
	rep, err := analysis.Build(context.Background(), e.st, id)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Issue 9, case 4: a completion cut off by the length limit that never
// marks an answer is not a solve under the strict policy (the default);
// the lenient policy (Qwen2.5-Math evaluator's last-number fallback) counts
// it, and switching recounts without importing again.
func TestGradingPolicyTruncated(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	rep := e.importReady(t, truncatedSpec(t))
	id := rep.ComparisonID
	check := func(policy string, rep *analysis.Report, pass1, pass2 float64, solved analysis.Solved) {
		t.Helper()
		b := rep.Models[0]
		if pct(b.Pass1) != pass1 || pct(b.PassAtK[1].Value) != pass2 {
			t.Errorf("%s: base pass@1 %.2f, pass@2 %.2f; want %.2f, %.2f", policy, 100*b.Pass1, 100*b.PassAtK[1].Value, pass1, pass2)
		}
		if rep.Pairs[0].Solved != solved {
			t.Errorf("%s: solved sets %+v; want %+v", policy, rep.Pairs[0].Solved, solved)
		}
	}
	c, _ := e.st.GetComparison(ctx, id)
	if c.GradingPolicy != store.PolicyStrict {
		t.Fatalf("default policy %q; want strict", c.GradingPolicy)
	}
	check("strict", rep, 25, 50, analysis.Solved{Both: 1, OtherOnly: 1})

	if err := jobs.SetGradingPolicy(ctx, e.client, e.st, id, 0, store.PolicyLenient); err != nil {
		t.Fatal(err)
	}
	check("lenient", e.waitReady(t, id), 75, 100, analysis.Solved{Both: 2})

	if err := jobs.SetGradingPolicy(ctx, e.client, e.st, id, 0, store.PolicyStrict); err != nil {
		t.Fatal(err)
	}
	check("strict again", e.waitReady(t, id), 25, 50, analysis.Solved{Both: 1, OtherOnly: 1})
	audit, err := e.st.Audit(ctx, id, 0)
	if err != nil || len(audit) != 2 || audit[0].Action != "grading-policy" {
		t.Errorf("audit log %+v (%v); want two grading-policy entries", audit, err)
	}
}

// Issue 9, case 1: re-verification is refused where no verifier applies
// (counts only; code problems without a code verifier), and a comparison
// left in "verifying" with no job on it (as earlier versions did) is
// repaired by the reaper.
func TestReverifyOnlyWhereItApplies(t *testing.T) {
	e := startWith(t, func(c *jobs.Config) {
		c.Lease = jobs.LeaseConfig{ReapEvery: 300 * time.Millisecond, StuckAfter: time.Second}
	})
	ctx := context.Background()
	specs := examples.Specs()
	for _, spec := range specs {
		rep := e.importReady(t, spec)
		err := jobs.StartReverify(ctx, e.client, e.st, vmath.New(), rep.ComparisonID, 0)
		if !errors.Is(err, jobs.ErrCannotReverify) {
			t.Errorf("%s: re-verify gave %v; want ErrCannotReverify", spec.Name, err)
		}
		c, _ := e.st.GetComparison(ctx, rep.ComparisonID)
		if c.Status != store.StatusReady {
			t.Errorf("%s: status %s after a refused re-verification", spec.Name, c.Status)
		}
		// What earlier versions left behind: a status no job will finish.
		if err := e.st.SetComparisonStatus(ctx, rep.ComparisonID, store.StatusVerifying, ""); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		e.waitReady(t, rep.ComparisonID)
		t.Logf("%s: repaired after %s", spec.Name, time.Since(start).Round(100*time.Millisecond))
	}
}

// Issue 9, case 1: re-verification keeps the files' verdicts; restoring
// them is one call that gives back the original counts, and both are in
// the audit log.
func TestRestoreFileVerdicts(t *testing.T) { testRestoreFileVerdicts(t) }

// TestRestoreFileVerdictsUnlicensed is TestRestoreFileVerdicts on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestRestoreFileVerdicts runs on the stand-in.
func TestRestoreFileVerdictsUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testRestoreFileVerdicts(t)
}

func testRestoreFileVerdicts(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	before := e.importReady(t, gsm8kSpec(t, false))
	id := before.ComparisonID
	if err := jobs.StartReverify(ctx, e.client, e.st, vmath.New(), id, 0); err != nil {
		t.Fatal(err)
	}
	after := e.waitReady(t, id)
	replaced, err := e.st.FileVerdictsReplaced(ctx, id)
	if err != nil || len(replaced) != 2 {
		t.Fatalf("replaced file verdicts %v (%v); want both runs", replaced, err)
	}
	if after.Models[0].VerdictSource != "verifier" {
		t.Errorf("verdict source after re-verification %q", after.Models[0].VerdictSource)
	}
	n, err := jobs.RestoreFileVerdicts(ctx, e.client, e.st, id, 0)
	if err != nil || n == 0 {
		t.Fatalf("restore: %d samples, %v", n, err)
	}
	restored := e.waitReady(t, id)
	for i := range before.Models {
		if restored.Models[i].Pass1 != before.Models[i].Pass1 || restored.Models[i].Solved != before.Models[i].Solved {
			t.Errorf("%s: pass@1 %.4f solved %d after restore; want %.4f, %d", before.Models[i].Name,
				restored.Models[i].Pass1, restored.Models[i].Solved, before.Models[i].Pass1, before.Models[i].Solved)
		}
		if restored.Models[i].VerdictSource != "file" {
			t.Errorf("%s: verdict source %q after restore", before.Models[i].Name, restored.Models[i].VerdictSource)
		}
	}
	audit, _ := e.st.Audit(ctx, id, 0)
	var actions []string
	for _, a := range audit {
		actions = append(actions, a.Action)
	}
	if len(actions) != 2 || actions[0] != "restore-file-verdicts" || actions[1] != "reverify" {
		t.Errorf("audit actions %v; want [restore-file-verdicts reverify]", actions)
	}
	if _, err := jobs.RestoreFileVerdicts(ctx, e.client, e.st, id, 0); !errors.Is(err, jobs.ErrCannotReverify) {
		t.Errorf("a second restore gave %v; want ErrCannotReverify", err)
	}
}

// Issue 9, case 5: a run none of whose samples can be read fails the
// comparison with the reason instead of showing pass@k = 0 as "ready".
func TestNothingGradableFails(t *testing.T) {
	e := start(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ds := write("ds.jsonl", `{"id":"a","problem":"1+1?","answer":"2"}`+"\n"+`{"id":"b","problem":"2+2?","answer":"4"}`+"\n")
	base := write("base.jsonl", `{"problem_id":"a","completions":["I cannot say.","No idea."]}`+"\n"+`{"problem_id":"b","completions":["Unknown.","Pass."]}`+"\n")
	rl := write("rl.jsonl", `{"problem_id":"a","completions":["\\boxed{2}","\\boxed{3}"]}`+"\n"+`{"problem_id":"b","completions":["\\boxed{4}","\\boxed{4}"]}`+"\n")
	id, _, err := intake.Create(context.Background(), e.st, e.client, intake.Spec{Name: "unreadable", Dataset: intake.LocalFile(ds),
		Models: []intake.Model{{Name: "base", File: intake.LocalFile(base)}, {Name: "rl", File: intake.LocalFile(rl)}}})
	if err != nil {
		t.Fatal(err)
	}
	c := e.wait(t, id)
	if c.Status != store.StatusFailed || !strings.Contains(c.Error, "nothing could be graded: all 4 samples of model \"base\"") {
		t.Fatalf("status %s, error %q; want failed: nothing could be graded", c.Status, c.Error)
	}
}

// Issue 28: the grading panel's counts (PolicyScopeOf, FileVerdictsReplaced,
// the re-verification's sample total) are kept per run, not counted from
// the samples on each view; after import, an override and its undo, a
// re-verification and a restore of the files' verdicts they are what
// scanning the samples gives.
func TestGradingCountsStayExact(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	id := e.importReady(t, policySpec(t)).ComparisonID
	scope := testdb.CheckGrading(t, e.st, id, "imported")
	if scope.Graded == 0 || scope.FileVerdicts == 0 || scope.Fallback == 0 || scope.Truncated == 0 {
		t.Fatalf("imported: policy scope %+v; the spec has verifier verdicts, file verdicts, fallback answers and a cut completion", scope)
	}
	c, err := e.st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rl := c.Runs[1].ID
	var pid int64
	var idx int
	var status string
	if err := e.st.Pool().QueryRow(ctx, `SELECT problem_id, sample_index, status FROM samples
		WHERE run_id = $1 AND status = 'correct' AND split_part(rule, '+', 1) = ANY($2) ORDER BY 1, 2 LIMIT 1`, rl, verify.FallbackRules).
		Scan(&pid, &idx, &status); err != nil {
		t.Fatal(err)
	}
	override := func(to string) {
		t.Helper()
		if _, err := e.st.OverrideSample(ctx, store.SampleOverride{ComparisonID: id, RunID: rl, ProblemID: pid, SampleIndex: idx, Status: to}); err != nil {
			t.Fatal(err)
		}
	}
	override(store.SampleIncorrect)
	if got := testdb.CheckGrading(t, e.st, id, "overridden"); got.Overrides != 1 || got.Fallback != scope.Fallback-1 {
		t.Errorf("overridden: policy scope %+v; want one override and one fallback fewer than %+v", got, scope)
	}
	override(status) // back to the verifier's verdict: the override is cleared
	if got := testdb.CheckGrading(t, e.st, id, "override undone"); got != scope {
		t.Errorf("override undone: policy scope %+v; want %+v as imported", got, scope)
	}

	if err := jobs.StartReverify(ctx, e.client, e.st, vmath.New(), id, 0); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, id)
	testdb.CheckGrading(t, e.st, id, "re-verified")
	if replaced, err := e.st.FileVerdictsReplaced(ctx, id); err != nil || replaced[c.Runs[0].ID] == 0 {
		t.Fatalf("re-verified: replaced file verdicts %v (%v); want the base model's", replaced, err)
	}
	if _, err := jobs.RestoreFileVerdicts(ctx, e.client, e.st, id, 0); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, id)
	if got := testdb.CheckGrading(t, e.st, id, "restored"); got != scope {
		t.Errorf("restored: policy scope %+v; want %+v as imported", got, scope)
	}
}
