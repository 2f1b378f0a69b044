package jobs

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// readyPair stores a ready two-model comparison (one problem, two samples a
// model) without any job.
func readyPair(t *testing.T, st *store.Store) int64 {
	t.Helper()
	ctx := context.Background()
	did, err := st.CreateDataset(ctx, "q", "q.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsertProblems(ctx, did, []store.Problem{{Idx: 0, Key: "p0", Statement: "1+1?", Reference: "2"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		t.Fatal(err)
	}
	cid, err := st.CreateComparison(ctx, store.NewComparison{Name: "q", DatasetID: did, Status: store.StatusReady,
		Runs: []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := st.Problems(ctx, did, false)
	if err != nil {
		t.Fatal(err)
	}
	var batch []store.Sample
	for _, r := range c.Runs {
		for i := range 2 {
			batch = append(batch, store.Sample{RunID: r.ID, ProblemID: ps[0].ID, SampleIndex: i, Completion: "2", Status: store.SampleCorrect})
		}
	}
	if err := st.InsertSamples(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Runs {
		for _, step := range []func() error{
			func() error { return st.AggregateRun(ctx, r.ID) },
			func() error { return st.SetRunImported(ctx, r.ID, "reach-jsonl", true, "file") },
			func() error { return st.SetRunStatus(ctx, r.ID, store.StatusReady, "") },
		} {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return cid
}

// TestRepairDoesNotWaitForStatistics: with one worker per queue and a
// statistics job busy (held until the end of the test), a comparison left in
// a working state with no job is repaired by the reaper all the same (in 2
// of 7 worker kills the repair waited 239 and 263 s behind statistics).
func TestRepairDoesNotWaitForStatistics(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	busy, cid := readyPair(t, st), readyPair(t, st)
	release, started := make(chan struct{}), make(chan struct{})
	var once sync.Once
	client, err := NewClient(st, Config{Workers: 1, Verifier: vmath.New(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Lease: LeaseConfig{ReapEvery: 300 * time.Millisecond, StuckAfter: time.Second},
		statsHook: func(ctx context.Context) {
			once.Do(func() { close(started) })
			select {
			case <-release:
			case <-ctx.Done():
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		close(release)
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = client.Stop(sctx)
	})
	if _, err := client.Insert(ctx, StatsArgs{ComparisonID: busy}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("no statistics job started")
	}
	if err := st.SetComparisonStatus(ctx, cid, store.StatusVerifying, ""); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := st.GetComparison(ctx, cid)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status == store.StatusReady {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("comparison still %s after 20 s with a statistics job busy: the repair waited behind it", c.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestJudgeProgressRecounted: a judge job killed after storing its verdicts
// but before counting them left progress at 264 / 320 with all 320 stored.
// The job run again finds nothing to do and recounts from stored rows.
func TestJudgeProgressRecounted(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	cid := readyPair(t, st)
	if err := st.PutDebateEndpoint(ctx, store.DebateEndpoint{ComparisonID: cid, Purpose: store.PurposeJudge,
		Endpoint: store.Endpoint{BaseURL: "http://127.0.0.1:9/v1", Model: "judge", Style: "chat"}}, false); err != nil {
		t.Fatal(err)
	}
	if err := st.SetDebateStatus(ctx, cid, store.PurposeJudge, store.DebateRunning, ""); err != nil {
		t.Fatal(err)
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	run := c.Runs[0]
	open, err := st.OpenJudgeWork(ctx, cid, 0)
	if err != nil || len(open) == 0 {
		t.Fatalf("open judge work %v (%v)", open, err)
	}
	w := open[0]
	if err := st.SetProgress(ctx, store.Progress{RunID: run.ID, Stage: StageJudge, Done: 0, Total: w.Total, Unit: "samples", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	// What the killed job stored: every verdict.
	for i := range 2 {
		j := store.Judgment{RunID: run.ID, ProblemID: w.Problems[0], SampleIndex: i, JudgeModel: "judge", Verdict: "valid"}
		if err := st.SaveJudgment(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	wk := &JudgeWorker{st: st, clients: endpointClients{}}
	if err := wk.Work(ctx, &river.Job[JudgeArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: 4},
		Args: JudgeArgs{ComparisonID: cid, RunID: run.ID, ProblemID: w.Problems[0]}}); err != nil {
		t.Fatal(err)
	}
	ps, err := st.ProgressForComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.RunID == run.ID && p.Stage == StageJudge && (p.Done != w.Total || p.Status != "done") {
			t.Errorf("judge progress %d / %d (%s) with every verdict stored", p.Done, p.Total, p.Status)
		}
	}
}
