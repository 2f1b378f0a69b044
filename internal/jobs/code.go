package jobs

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// Code problems are graded by running their tests in a sandbox (verify/code):
// ~10-100 ms per sample rather than microseconds, so the import leaves code
// samples pending for a VerifyJob, which grades them on all of its worker's
// cores. A sample that could not be graded (no sandbox on this worker) stays
// pending and its run fails with the reason: it is never counted wrong.

// problems gives the verifier what it needs per problem: reference and
// kind from the sample row, and for code problems the dataset fields (the
// tests) and the run's harness, read once per problem.
type problems struct {
	st      *store.Store
	harness string
	mu      sync.Mutex
	fields  map[int64]map[string]string
}

func newProblems(st *store.Store, harness string) *problems {
	return &problems{st: st, harness: harness, fields: map[int64]map[string]string{}}
}

// get returns the verify.Problem of one pending sample.
func (ps *problems) get(ctx context.Context, id int64, reference, kind string) (verify.Problem, error) {
	p := verify.Problem{Reference: reference, Kind: kind}
	if kind != "code" {
		return p, nil
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	f, ok := ps.fields[id]
	if !ok {
		full, err := ps.st.GetProblem(ctx, id)
		if err != nil {
			return p, err
		}
		f = full.Extra
		ps.fields[id] = f
	}
	p.Fields, p.Harness = f, ps.harness
	return p, nil
}

// runOf returns the run with id among a comparison's runs.
func runOf(c store.Comparison, id int64) (store.Run, bool) {
	for _, r := range c.Runs {
		if r.ID == id {
			return r, true
		}
	}
	return store.Run{}, false
}

func hasCode(batch []store.PendingSample) bool {
	for _, s := range batch {
		if s.Kind == "code" {
			return true
		}
	}
	return false
}

// failNotGraded fails a run (and its comparison) whose samples cannot be
// graded on this worker: they stay pending, so no figure counts them wrong,
// and the page shows why. Re-verify or a re-import grades them once a worker
// with a working sandbox runs the job.
func failNotGraded(ctx context.Context, st *store.Store, comparisonID, runID int64, n int64, why string) error {
	host, _ := os.Hostname()
	msg := fmt.Sprintf("%d samples not graded on worker %s: %s", n, host, why)
	ctx = context.WithoutCancel(ctx)
	_ = st.SetProgress(ctx, store.Progress{RunID: runID, Stage: "verify", Unit: "samples", Status: "failed", Error: msg})
	if err := st.SetRunStatus(ctx, runID, store.StatusFailed, msg); err != nil {
		return err
	}
	if err := st.SetComparisonStatus(ctx, comparisonID, store.StatusFailed, msg); err != nil {
		return err
	}
	return river.JobCancel(fmt.Errorf("%s", msg))
}
