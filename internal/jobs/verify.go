package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reach-lab/reach/internal/metrics"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// VerifyArgs verifies a run's pending samples.
type VerifyArgs struct {
	RunID        int64 `json:"run_id"`
	ComparisonID int64 `json:"comparison_id"`
	// All re-verifies every sample (not only those without a verdict),
	// rewriting each row once rather than resetting and rewriting it.
	All bool `json:"all,omitempty"`
}

// Kind implements river.JobArgs.
func (VerifyArgs) Kind() string { return "verify" }

// InsertOpts: at most one unfinished verification per run (a finished one
// does not block a later re-verification).
func (VerifyArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 10, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}}}
}

// VerifyWorker works VerifyArgs.
type VerifyWorker struct {
	river.WorkerDefaults[VerifyArgs]
	st *store.Store
	v  verify.Verifier
}

const verifyBatch = 5000

// Timeout lets verification of a large run take long.
func (w *VerifyWorker) Timeout(*river.Job[VerifyArgs]) time.Duration { return longTimeout }

// Work verifies pending samples batch by batch; each batch's verdicts are
// committed on their own, so a killed worker resumes where it stopped.
// Samples the verifier could not grade (code without a working sandbox)
// stay pending: the job retries, and fails the run with the reason when
// this worker cannot grade code at all or the retries run out.
func (w *VerifyWorker) Work(ctx context.Context, job *river.Job[VerifyArgs]) error {
	if w.v == nil {
		return river.JobCancel(fmt.Errorf("no verifier configured"))
	}
	runID := job.Args.RunID
	c, err := w.st.GetComparison(ctx, job.Args.ComparisonID)
	if err != nil {
		return river.JobCancel(err)
	}
	run, _ := runOf(c, runID)
	probs := newProblems(w.st, run.CodeHarness)
	if probs.harness, err = chooseHarness(ctx, w.st, w.v, probs, c, run); err != nil {
		return err
	}
	total, pending, err := w.st.CountSamples(ctx, runID)
	if err != nil {
		return err
	}
	need := pending
	if job.Args.All {
		need = total
	}
	prog := store.Progress{RunID: runID, Stage: "verify", Total: need, Unit: "samples", Status: "running"}
	_ = w.st.SetProgress(ctx, prog)
	var (
		afterProblem int64
		afterIndex   = -1
		done         int64
		changed      int64
		ungraded     int64
		why          string
		names        = map[string]bool{}
		start        = time.Now()
	)
	for {
		batch, err := w.st.PendingSamples(ctx, runID, afterProblem, afterIndex, verifyBatch, job.Args.All)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		if hasCode(batch) {
			if err := verify.Unavailable(w.v, "code"); err != nil {
				_, pend, _ := w.st.CountSamples(ctx, runID)
				return failNotGraded(ctx, w.st, job.Args.ComparisonID, runID, pend, err.Error())
			}
		}
		// Code runs at a few samples a second per core: a batch takes
		// minutes, so the bar moves while it is graded, not only after.
		var inBatch atomic.Int64
		stop, ticked := make(chan struct{}), make(chan struct{})
		go func(p store.Progress, before int64) {
			defer close(ticked)
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-tick.C:
					p.Done = before + inBatch.Load()
					p.Detail = fmt.Sprintf("%d of %d samples, %.1f/s", p.Done, need, float64(p.Done)/time.Since(start).Seconds())
					_ = w.st.SetProgress(ctx, p)
				case <-stop:
					return
				}
			}
		}(prog, done)
		bySource, n, reason, err := w.grade(ctx, probs, batch, &inBatch)
		close(stop)
		<-ticked
		if err != nil {
			return err
		}
		if n > 0 {
			ungraded, why = ungraded+n, reason
		}
		for source, verdicts := range bySource {
			ch, err := w.st.SaveVerdicts(ctx, runID, source, verdicts)
			if err != nil {
				return err
			}
			metrics.SamplesVerified(int64(len(verdicts)))
			changed += ch
			names[source] = true
		}
		done += int64(len(batch)) - n
		last := batch[len(batch)-1]
		afterProblem, afterIndex = last.ProblemID, last.SampleIndex
		rate := float64(done) / time.Since(start).Seconds()
		prog.Done, prog.Detail = done, fmt.Sprintf("%d of %d samples, %.0f/s", done, need, rate)
		_ = w.st.SetProgress(ctx, prog)
	}
	if ungraded > 0 {
		if job.Attempt >= job.MaxAttempts {
			return failNotGraded(ctx, w.st, job.Args.ComparisonID, runID, ungraded, why)
		}
		return fmt.Errorf("%d samples not graded, retried later: %s", ungraded, why)
	}
	if job.Args.All {
		// Every labelled sample was graded again: the total is exact.
		if err := w.st.SetVerdictsChanged(ctx, runID, changed); err != nil {
			return err
		}
	} else if c.Reverify {
		// Re-verified at upload: the samples the import could not grade
		// inline (code) were graded here; count over the whole run so the
		// page says how far Reach's verdicts are from the file's labels.
		labelled, err := w.st.FileLabelled(ctx, runID)
		if err != nil {
			return err
		}
		if labelled {
			n, err := w.st.ChangedVerdicts(ctx, runID)
			if err != nil {
				return err
			}
			if err := w.st.SetVerdictsChanged(ctx, runID, n); err != nil {
				return err
			}
		}
	}
	prog.Status, prog.Done = "done", need
	prog.Detail = fmt.Sprintf("%d samples verified by %s", done, strings.Join(slices.Sorted(maps.Keys(names)), " and "))
	if changed > 0 {
		prog.Detail += fmt.Sprintf("; %d verdicts differ from the file's", changed)
	}
	_ = w.st.SetProgress(ctx, prog)
	return w.st.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.SetRunStatus(ctx, runID, "aggregating", ""); err != nil {
			return err
		}
		if err := tx.SetProgress(ctx, store.Progress{RunID: runID, Stage: "aggregate", Status: "queued"}); err != nil {
			return err
		}
		return enqueue(ctx, tx, AggregateArgs{RunID: runID, ComparisonID: job.Args.ComparisonID})
	})
}

// grade runs the verifier over a batch on all cores and returns the
// verdicts by the name of the verifier that gave them, and how many samples
// it could not grade (with the last reason): those are left out.
// graded counts the samples done so far, for the progress bar.
func (w *VerifyWorker) grade(ctx context.Context, probs *problems, batch []store.PendingSample, graded *atomic.Int64) (map[string][]store.Verdict, int64, string, error) {
	ps := make([]verify.Problem, len(batch))
	for i, s := range batch {
		p, err := probs.get(ctx, s.ProblemID, s.Reference, s.Kind)
		if err != nil {
			return nil, 0, "", err
		}
		ps[i] = p
	}
	out := make([]verify.Verdict, len(batch))
	onAllCores(len(batch), func(i int) {
		out[i] = w.v.Verify(ctx, ps[i], batch[i].Completion)
		graded.Add(1)
	})
	bySource := map[string][]store.Verdict{}
	var ungraded int64
	var why string
	for i, v := range out {
		if v.Status == verify.NotGraded {
			ungraded, why = ungraded+1, v.Reason
			continue
		}
		s := batch[i]
		src := verify.SourceName(w.v, ps[i])
		bySource[src] = append(bySource[src], store.Verdict{ProblemID: s.ProblemID, SampleIndex: s.SampleIndex, Status: string(v.Status),
			Extracted: v.Extracted, Rule: v.Rule, Reason: v.Reason, Detail: v.Detail})
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, "", err
	}
	return bySource, ungraded, why, nil
}

// onAllCores calls f(0..n-1), spread over GOMAXPROCS goroutines; the
// verifier is pure CPU work and safe for concurrent use.
func onAllCores(n int, f func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += workers {
				f(i)
			}
		}()
	}
	wg.Wait()
}

// failEmptySampledRun fails a run sampled from an endpoint that has no
// sample, and its comparison, with the cause: the last error its requests
// got, or the cancel that came before any answer. It reports whether it
// did (false for an imported run, which the import checks).
func (w *AggregateWorker) failEmptySampledRun(ctx context.Context, comparisonID, runID int64) (bool, error) {
	c, err := w.st.GetComparison(ctx, comparisonID)
	if err != nil {
		return false, err
	}
	var run store.Run
	for _, r := range c.Runs {
		if r.ID == runID {
			run = r
		}
	}
	if run.Endpoint.BaseURL == "" {
		return false, nil
	}
	cause, err := w.st.LastChunkError(ctx, runID)
	if err != nil {
		return false, err
	}
	if cause == "" {
		cause = "no request was answered"
	}
	msg := fmt.Sprintf("model %q has no samples: %s", run.ModelName, cause)
	_ = w.st.SetProgress(ctx, store.Progress{RunID: runID, Stage: "aggregate", Status: "failed", Error: msg})
	if err := w.st.SetRunStatus(ctx, runID, store.StatusFailed, msg); err != nil {
		return false, err
	}
	if err := w.st.SetComparisonStatus(ctx, comparisonID, store.StatusFailed, msg); err != nil {
		return false, err
	}
	return true, river.JobCancel(errors.New(msg))
}

// AggregateArgs recomputes a run's per-problem counts.
type AggregateArgs struct {
	RunID        int64 `json:"run_id"`
	ComparisonID int64 `json:"comparison_id"`
}

// Kind implements river.JobArgs.
func (AggregateArgs) Kind() string { return "aggregate" }

// AggregateWorker works AggregateArgs.
type AggregateWorker struct {
	river.WorkerDefaults[AggregateArgs]
	st *store.Store
}

// Work recomputes counts and marks the run (and, when it is the last, the
// comparison) ready, then enqueues the comparison's statistics.
func (w *AggregateWorker) Work(ctx context.Context, job *river.Job[AggregateArgs]) error {
	runID := job.Args.RunID
	_ = w.st.SetProgress(ctx, store.Progress{RunID: runID, Stage: "aggregate", Status: "running"})
	// A run none of whose samples could be read was almost surely mapped
	// wrongly (the prompt taken for the completion, say): a pass@k of 0
	// would be a silent wrong number, so the comparison fails instead.
	g, err := w.st.RunGradability(ctx, runID)
	if err != nil {
		return err
	}
	if g.Total == 0 {
		// A sampled model without a single sample has no pass@k to show: the
		// comparison fails naming why (the last error of its requests)
		// rather than turning ready with nothing in it.
		if failed, err := w.failEmptySampledRun(ctx, job.Args.ComparisonID, runID); failed || err != nil {
			return err
		}
	}
	if g.Total > 0 && g.Unparseable == g.Total {
		c, err := w.st.GetComparison(ctx, job.Args.ComparisonID)
		if err != nil {
			return err
		}
		name, advice := fmt.Sprint(runID), "check that the completion field is the model's output"
		for _, r := range c.Runs {
			if r.ID != runID {
				continue
			}
			name = fmt.Sprintf("%q (%s)", r.ModelName, r.SourceFile)
			if r.Endpoint.BaseURL != "" {
				// Sampled: no file, no field to pick.
				name = fmt.Sprintf("%q (sampled from %s)", r.ModelName, r.Endpoint.Model)
				advice = "check the prompt template and what the endpoint answers (a problem page shows its samples)"
			}
		}
		msg := fmt.Sprintf("nothing could be graded: all %d samples of model %s are unparseable (e.g. %s); %s", g.Total, name, g.Example, advice)
		_ = w.st.SetProgress(ctx, store.Progress{RunID: runID, Stage: "aggregate", Status: "failed", Error: msg})
		if err := w.st.SetRunStatus(ctx, runID, store.StatusFailed, msg); err != nil {
			return err
		}
		if err := w.st.SetComparisonStatus(ctx, job.Args.ComparisonID, store.StatusFailed, msg); err != nil {
			return err
		}
		return river.JobCancel(errors.New(msg))
	}
	err = w.st.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.AggregateRun(ctx, runID); err != nil {
			return err
		}
		// The report's warnings read the samples' quality figures
		// (truncated, fallback-graded, no answer, distinct texts,
		// duplicates): recompute them with the counts, in the same
		// transaction and before the run is called ready, so that a late
		// duplicate of this job never shows a ready comparison without them
		// between its delete and its insert (a second recomputation outside
		// the transaction did, now and then, under load).
		if err := tx.RefreshRunQuality(ctx, runID, verify.FallbackRules); err != nil {
			return err
		}
		// A late duplicate of this job (one per finished chunk may be
		// enqueued) must not call a run ready while it is being extended
		// or re-verified.
		return tx.SetRunReadyIfSettled(ctx, runID)
	})
	if err != nil {
		return err
	}
	_ = w.st.SetProgress(ctx, store.Progress{RunID: runID, Stage: "aggregate", Done: 1, Total: 1, Status: "done", Detail: "counts n, c per problem"})
	if err := w.st.MarkComparisonReadyIfDone(ctx, job.Args.ComparisonID); err != nil {
		return err
	}
	return startStatsIfReady(ctx, w.st, job.Args.ComparisonID)
}
