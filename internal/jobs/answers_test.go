package jobs_test

import (
	"context"
	"testing"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	vmath "github.com/reach-lab/reach/internal/verify/math"

	"github.com/reach-lab/reach/internal/testfiles"
)

// answerGroupsStale counts the differences between the stored answer
// groups of comparison id (run_answers) and a grouping of its samples now,
// and between the groups' solves and the run counts.
func answerGroupsStale(t *testing.T, st *store.Store, id int64) (groups, counts int) {
	t.Helper()
	ctx := context.Background()
	err := st.Pool().QueryRow(ctx, `WITH stored AS (
			SELECT a.run_id, a.problem_id, a.answer, a.n, a.correct FROM run_answers a JOIN runs r ON r.id = a.run_id WHERE r.comparison_id = $1),
		live AS (
			SELECT s.run_id, s.problem_id, `+store.AnswerSQL+` AS answer, count(*)::int AS n, count(*) FILTER (WHERE s.status = 'correct')::int AS correct
			FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.comparison_id = $1 GROUP BY 1, 2, 3)
		SELECT count(*) FROM ((TABLE stored EXCEPT ALL TABLE live) UNION ALL (TABLE live EXCEPT ALL TABLE stored)) d`, id).Scan(&groups)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Pool().QueryRow(ctx, `SELECT count(*) FROM run_counts rc JOIN runs r ON r.id = rc.run_id
		FULL JOIN (SELECT a.run_id, a.problem_id, sum(a.n) AS n, sum(a.correct - a.fallback - a.truncated) AS c
			FROM run_answers a JOIN runs r ON r.id = a.run_id WHERE r.comparison_id = $1 GROUP BY 1, 2) g USING (run_id, problem_id)
		WHERE (r.comparison_id = $1 OR rc.run_id IS NULL) AND (rc.n IS DISTINCT FROM g.n OR rc.c IS DISTINCT FROM g.c)`, id).Scan(&counts)
	if err != nil {
		t.Fatal(err)
	}
	return groups, counts
}

func checkAnswerGroups(t *testing.T, st *store.Store, id int64, when string) {
	t.Helper()
	if groups, counts := answerGroupsStale(t, st, id); groups != 0 || counts != 0 {
		t.Errorf("%s: %d stored answer groups differ from the samples', %d problems' solves from the counts", when, groups, counts)
	}
}

// groupOf is the stored answer group of answer on a problem for a run.
func groupOf(t *testing.T, st *store.Store, cid, runID, pid int64, answer string) store.AnswerCount {
	t.Helper()
	counts, err := st.AnswerCounts(context.Background(), cid, pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range counts {
		if a.RunID == runID && a.Answer == answer {
			return a
		}
	}
	return store.AnswerCount{}
}

// The problem page's answer distribution is stored (run_answers) and
// rewritten with the counts whenever verdicts change: after the import, a
// reviewer's override (and its undoing), re-verification and restoring the
// files' verdicts it always equals a grouping of the samples.
func TestAnswerGroupsFollowVerdicts(t *testing.T) { testAnswerGroupsFollowVerdicts(t) }

// TestAnswerGroupsFollowVerdictsUnlicensed is TestAnswerGroupsFollowVerdicts on the real GSM8K SFT-vs-PPO pair where the unlicensed folder is present
// (testfiles.GSM8KProbe); TestAnswerGroupsFollowVerdicts runs on the stand-in.
func TestAnswerGroupsFollowVerdictsUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testAnswerGroupsFollowVerdicts(t)
}

func testAnswerGroupsFollowVerdicts(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	id := e.importReady(t, gsm8kSpec(t, false)).ComparisonID
	checkAnswerGroups(t, e.st, id, "after import")

	var x store.Sample
	err := e.st.Pool().QueryRow(ctx, `SELECT s.run_id, s.problem_id, s.sample_index, s.status, `+store.AnswerSQL+`
		FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.comparison_id = $1 AND s.status = 'incorrect'
		ORDER BY s.run_id, s.problem_id, s.sample_index LIMIT 1`, id).Scan(&x.RunID, &x.ProblemID, &x.SampleIndex, &x.Status, &x.Extracted)
	if err != nil {
		t.Fatal(err)
	}
	before := groupOf(t, e.st, id, x.RunID, x.ProblemID, x.Extracted)
	if before.N == 0 {
		t.Fatalf("no stored group for answer %q of run %d on problem %d", x.Extracted, x.RunID, x.ProblemID)
	}
	override := store.SampleOverride{ComparisonID: id, RunID: x.RunID, ProblemID: x.ProblemID, SampleIndex: x.SampleIndex, Status: store.SampleCorrect}
	if _, err := e.st.OverrideSample(ctx, override); err != nil {
		t.Fatal(err)
	}
	if after := groupOf(t, e.st, id, x.RunID, x.ProblemID, x.Extracted); after.Correct != before.Correct+1 || after.N != before.N {
		t.Errorf("answer %q after overriding one sample to correct: %d of %d correct; want %d of %d",
			x.Extracted, after.Correct, after.N, before.Correct+1, before.N)
	}
	checkAnswerGroups(t, e.st, id, "after an override")
	override.Status = store.SampleIncorrect
	if _, err := e.st.OverrideSample(ctx, override); err != nil {
		t.Fatal(err)
	}
	if after := groupOf(t, e.st, id, x.RunID, x.ProblemID, x.Extracted); after != before {
		t.Errorf("answer %q after undoing the override: %+v; want %+v", x.Extracted, after, before)
	}

	if err := jobs.StartReverify(ctx, e.client, e.st, vmath.New(), id, 0); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, id)
	checkAnswerGroups(t, e.st, id, "after re-verification")
	if _, err := jobs.RestoreFileVerdicts(ctx, e.client, e.st, id, 0); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, id)
	checkAnswerGroups(t, e.st, id, "after restoring the files' verdicts")
}

// The samples a grading policy leaves uncounted are stored with the answer
// groups and follow a change of policy: the strict policy's truncated
// solves count under the lenient one.
func TestAnswerGroupsFollowPolicy(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	id := e.importReady(t, truncatedSpec(t)).ComparisonID
	uncounted := func() (n int) {
		t.Helper()
		if err := e.st.Pool().QueryRow(ctx, `SELECT COALESCE(sum(a.fallback + a.truncated), 0) FROM run_answers a
			JOIN runs r ON r.id = a.run_id WHERE r.comparison_id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := uncounted(); n == 0 {
		t.Errorf("strict: no uncounted sample stored; the case has truncated solves")
	}
	checkAnswerGroups(t, e.st, id, "strict")
	if err := jobs.SetGradingPolicy(ctx, e.client, e.st, id, 0, store.PolicyLenient); err != nil {
		t.Fatal(err)
	}
	e.waitReady(t, id)
	if n := uncounted(); n != 0 {
		t.Errorf("lenient: %d uncounted samples stored; want 0", n)
	}
	checkAnswerGroups(t, e.st, id, "lenient")
}
