package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/adaptive"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
)

// Adaptive sampling (SamplingConfig.Adaptive) draws in rounds. StartSampling
// plans the pilot; each round's chunks are ordinary SampleJobs; when the last
// open chunk of the whole comparison finishes, the SampleJob enqueues an
// AdaptiveRoundArgs, which reads what every (run, problem) has so far, asks
// adaptive.Next for the next round and creates its chunks, or, when Next
// allots nothing, finishes every run as a non-adaptive comparison's last
// chunk does (verification of pending samples, then aggregation). Each plan
// is recorded in adaptive_rounds for the progress page.
//
// A round's new indices on a problem start past every chunk the problem has
// (store.SampledCell.Extent) and stop at the target n, so the seeded samples
// (SampleSeed: per problem and index) of a design are the same however its
// rounds fall, and a re-planned round never draws an index twice.

// AdaptiveRoundArgs plans the next round of an adaptive comparison.
// Planned is how many rounds had been planned when it was enqueued: a job
// that finds another count (the round was planned by another job, a Resume
// or an Extend) does nothing, and the next round's job has other arguments
// than this one's, so River's uniqueness never drops it while this one is
// still marked running.
type AdaptiveRoundArgs struct {
	ComparisonID int64 `json:"comparison_id"`
	Planned      int   `json:"planned"`
}

// Kind implements river.JobArgs.
func (AdaptiveRoundArgs) Kind() string { return "adaptive-round" }

// InsertOpts: one unfinished job per comparison and round (the last chunks of
// a round finishing at once each enqueue it).
func (AdaptiveRoundArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinished}}
}

// AdaptiveRoundWorker works AdaptiveRoundArgs.
type AdaptiveRoundWorker struct {
	river.WorkerDefaults[AdaptiveRoundArgs]
	st *store.Store
}

// Timeout: planning reads the comparison's counts and fits a prior per
// model, a fraction of a second for 1,000 cells; a minute is generous.
func (w *AdaptiveRoundWorker) Timeout(*river.Job[AdaptiveRoundArgs]) time.Duration {
	return time.Minute
}

// Work plans the round, with the comparison's row locked so that it never
// runs beside a Pause, Resume, Extend or another plan of the same comparison.
// It does nothing unless the comparison is sampling with no chunk open and
// the planned rounds are still job.Args.Planned. A plan that cannot be made
// (a config that no longer fits, an error of the planner) fails the
// comparison with the reason after the job's last attempt.
func (w *AdaptiveRoundWorker) Work(ctx context.Context, job *river.Job[AdaptiveRoundArgs]) error {
	id := job.Args.ComparisonID
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	err = w.st.WithTx(ctx, func(tx *store.Store) error {
		status, err := tx.LockComparisonStatus(ctx, id)
		if err != nil {
			return err
		}
		if status != store.StatusSampling {
			return nil // paused or cancelled: Resume plans from where the design stands
		}
		rounds, last, err := tx.AdaptiveProgress(ctx, id)
		if err != nil {
			return err
		}
		if rounds != job.Args.Planned || (last != nil && last.Planned == 0) {
			return nil // planned already, or the design is done
		}
		open, err := tx.OpenChunksOfComparison(ctx, id)
		if err != nil || open > 0 {
			return err
		}
		c, err := tx.GetComparison(ctx, id)
		if err != nil {
			return err
		}
		cfg, err := ParseSamplingConfig(c.Sampling)
		if err != nil {
			return err
		}
		pids, err := samplingProblems(ctx, tx, c, cfg)
		if err != nil {
			return err
		}
		if err := cfg.CheckBudget(len(endpointRuns(c)), len(pids)); err != nil {
			return err
		}
		return planRound(ctx, client, tx, c, cfg, pids)
	})
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil && !transient(err) && job.Attempt >= job.MaxAttempts {
		msg := "adaptive sampling could not plan its next round: " + err.Error()
		if serr := w.st.SetComparisonStatus(context.WithoutCancel(ctx), id, store.StatusFailed, msg); serr != nil {
			return errors.Join(err, serr)
		}
		return river.JobCancel(err)
	}
	return err
}

// afterAdaptiveChunk enqueues the planning of the next round when no chunk
// of the comparison is open any more.
func afterAdaptiveChunk(ctx context.Context, st *store.Store, comparisonID int64) error {
	open, err := st.OpenChunksOfComparison(ctx, comparisonID)
	if err != nil || open > 0 {
		return err
	}
	rounds, _, err := st.AdaptiveProgress(ctx, comparisonID)
	if err != nil {
		return err
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	if _, err := client.Insert(ctx, AdaptiveRoundArgs{ComparisonID: comparisonID, Planned: rounds}, nil); err != nil {
		return fmt.Errorf("enqueue the next adaptive round of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// startAdaptive is StartSampling for an adaptive comparison, inside tx: it
// marks the endpoint runs sampling and enqueues their open chunks again (a
// Resume after a pause mid-round, or jobs lost with a dead worker); when no
// chunk is open it plans the next round (the pilot on a new comparison, the
// next round after a pause between rounds, more rounds after an Extend).
func startAdaptive(ctx context.Context, client *Client, tx *store.Store, c store.Comparison, cfg SamplingConfig, pids []int64) error {
	runs := endpointRuns(c)
	if len(runs) == 0 {
		return errors.New("no model of this comparison has an endpoint")
	}
	if err := cfg.CheckBudget(len(runs), len(pids)); err != nil {
		return err
	}
	if client == nil {
		var err error
		if client, err = river.ClientFromContextSafely[pgx.Tx](ctx); err != nil {
			return err
		}
	}
	// Serializes with a round job planning the same comparison: after the
	// lock, its chunks are visible here and are enqueued, not planned again.
	if _, err := tx.LockComparisonStatus(ctx, c.ID); err != nil {
		return err
	}
	var params []river.InsertManyParams
	for _, r := range runs {
		if err := tx.StartRunSampling(ctx, r.ID); err != nil {
			return err
		}
		_ = tx.SetRunImported(ctx, r.ID, "endpoint", true, "verifier")
		open, err := tx.PendingChunks(ctx, r.ID)
		if err != nil {
			return err
		}
		for _, ch := range open {
			params = append(params, river.InsertManyParams{Args: SampleArgs{ComparisonID: c.ID, RunID: r.ID,
				ProblemID: ch.ProblemID, First: ch.First, Count: ch.Count}})
		}
	}
	if err := tx.SetComparisonStatus(ctx, c.ID, store.StatusSampling, ""); err != nil {
		return err
	}
	if len(params) == 0 {
		return planRound(ctx, client, tx, c, cfg, pids)
	}
	if _, err := client.InsertManyTx(ctx, tx.Tx(), params); err != nil {
		return fmt.Errorf("enqueue sampling jobs: %w", err)
	}
	return nil
}

// planRound plans the next round of an adaptive comparison inside tx (its
// row locked, no chunk open): it gives adaptive.Next the graded counts of
// every endpoint run (in comparison order) on every problem pids lists (in
// dataset order), creates chunks for the extra indices of each (run,
// problem), from its extent up and never past the target n, and enqueues
// their SampleJobs. When nothing is left to draw it finishes every run
// (finishRun). Either way the plan is recorded in adaptive_rounds.
//
// It plans from graded samples only: samples still pending verification
// (code drawn on a worker without a sandbox) are left out of the counts, so
// no verdict is guessed, but they count against the budget (Next's budget is
// lowered by them and the round is cut to what the budget has left), so the
// design never draws more than the budget.
func planRound(ctx context.Context, client *Client, tx *store.Store, c store.Comparison, cfg SamplingConfig, pids []int64) error {
	runs := endpointRuns(c)
	runAt := make(map[int64]int, len(runs))
	for m, r := range runs {
		runAt[r.ID] = m
	}
	problemAt := make(map[int64]int, len(pids))
	for i, pid := range pids {
		problemAt[pid] = i
	}
	counts := make([][]passk.Count, len(runs))
	extent := make([][]int, len(runs))
	failed := make([][]bool, len(runs))
	for m := range runs {
		counts[m] = make([]passk.Count, len(pids))
		extent[m] = make([]int, len(pids))
		failed[m] = make([]bool, len(pids))
	}
	cells, err := tx.SampledCells(ctx, c.ID)
	if err != nil {
		return err
	}
	var stored, pending int
	for _, x := range cells {
		m, ok := runAt[x.RunID]
		i, ok2 := problemAt[x.ProblemID]
		stored += x.Graded + x.Pending // every stored sample is spent budget, on any problem
		if !ok || !ok2 {
			continue
		}
		counts[m][i] = passk.Count{N: x.Graded, C: x.Solved}
		extent[m][i], failed[m][i] = x.Extent, x.Failed
		pending += x.Pending
	}
	ncells := len(runs) * len(pids)
	opt := adaptive.Options{Target: cfg.N, Budget: min(max(cfg.Budget-pending, 2*ncells), cfg.N*ncells)}
	more, err := adaptive.Next(counts, opt)
	if err != nil {
		return fmt.Errorf("plan the next adaptive round: %w", err)
	}
	widest := map[int64]float64{}
	if sum, err := adaptive.Summarize(counts, opt); err != nil {
		// Only the progress page's interval widths rest on it.
		slog.Warn("adaptive sampling: summarize", "comparison", c.ID, "err", err)
	} else {
		for m, w := range sum.Widest {
			if w != nil {
				widest[runs[m].ID] = *w
			}
		}
	}

	left := cfg.Budget - stored
	size := cfg.chunkSize()
	var chunks []store.Chunk
	planned := 0
	for i, pid := range pids {
		for m, r := range runs {
			// A problem with a failed chunk drops out of the run's counts:
			// more samples of it would not count.
			if more[m][i] <= 0 || failed[m][i] || left <= 0 {
				continue
			}
			from := extent[m][i]
			to := min(from+more[m][i], cfg.N, from+left)
			for f := from; f < to; f += size {
				chunks = append(chunks, store.Chunk{RunID: r.ID, ProblemID: pid, First: f, Count: min(size, to-f)})
			}
			if to > from {
				planned += to - from
				left -= to - from
			}
		}
	}
	seq, err := tx.AddAdaptiveRound(ctx, c.ID, store.AdaptiveRound{Drawn: int64(stored), Planned: int64(planned),
		Budget: int64(cfg.Budget), Widest: widest})
	if err != nil {
		return err
	}
	if planned == 0 {
		slog.Info("adaptive sampling done", "comparison", c.ID, "samples", stored, "budget", cfg.Budget, "plans", seq)
		for _, r := range runs {
			if err := finishRun(ctx, client, tx, c.ID, r.ID); err != nil {
				return err
			}
		}
		return nil
	}
	if err := tx.AddChunks(ctx, chunks); err != nil {
		return err
	}
	params := make([]river.InsertManyParams, len(chunks))
	for j, ch := range chunks {
		params[j] = river.InsertManyParams{Args: SampleArgs{ComparisonID: c.ID, RunID: ch.RunID, ProblemID: ch.ProblemID,
			First: ch.First, Count: ch.Count}}
	}
	if _, err := client.InsertManyTx(ctx, tx.Tx(), params); err != nil {
		return fmt.Errorf("enqueue the adaptive round's sampling jobs: %w", err)
	}
	slog.Info("adaptive round planned", "comparison", c.ID, "plan", seq, "samples", planned, "drawn", stored, "budget", cfg.Budget)
	return nil
}

// endpointRuns returns the runs of c that are sampled from endpoints, in
// comparison order (the base model first).
func endpointRuns(c store.Comparison) []store.Run {
	var out []store.Run
	for _, r := range c.Runs {
		if r.Endpoint.BaseURL != "" {
			out = append(out, r)
		}
	}
	return out
}

// samplingProblems returns the ids of the problems a comparison samples: its
// dataset's, in dataset order, the first cfg.Limit when set.
func samplingProblems(ctx context.Context, tx *store.Store, c store.Comparison, cfg SamplingConfig) ([]int64, error) {
	if c.DatasetID == nil {
		return nil, errors.New("the dataset is not loaded yet")
	}
	problems, err := tx.Problems(ctx, *c.DatasetID, false)
	if err != nil {
		return nil, err
	}
	if cfg.Limit > 0 && cfg.Limit < len(problems) {
		problems = problems[:cfg.Limit]
	}
	pids := make([]int64, len(problems))
	for i, p := range problems {
		pids[i] = p.ID
	}
	return pids, nil
}

// isAdaptive reports whether a stored sampling config is adaptive (false
// for one that cannot be read: the SampleJob fails on it by itself).
func isAdaptive(raw []byte) bool {
	var c struct {
		Adaptive bool `json:"adaptive"`
	}
	return len(raw) > 0 && json.Unmarshal(raw, &c) == nil && c.Adaptive
}

// AdaptiveStatus is an adaptive comparison's design for the progress page.
type AdaptiveStatus struct {
	Rounds  int   // rounds planned so far, the pilot included
	Drawn   int64 // samples stored now, over every endpoint run
	Budget  int
	Uniform int // samples the uniform design at n would draw
	// Widest is, by run id, the widest 95% interval of the run's pass@k over
	// the curve's ks on the counts the last round was planned from (absent
	// before the pilot's samples are in).
	Widest map[int64]float64
	Done   bool // the design allots nothing more
}

// AdaptiveProgress returns the adaptive design's state of comparison c, or
// nil when c does not sample adaptively. drawn is the samples stored over
// its endpoint runs (the progress page has them already).
func AdaptiveProgress(ctx context.Context, st *store.Store, c store.Comparison, drawn int64) (*AdaptiveStatus, error) {
	if !isAdaptive(c.Sampling) {
		return nil, nil
	}
	cfg, err := ParseSamplingConfig(c.Sampling)
	if err != nil {
		return nil, err
	}
	out := &AdaptiveStatus{Drawn: drawn, Budget: cfg.Budget}
	if c.DatasetID != nil {
		d, err := st.GetDataset(ctx, *c.DatasetID)
		if err != nil {
			return nil, err
		}
		problems := d.ProblemCount
		if cfg.Limit > 0 && cfg.Limit < problems {
			problems = cfg.Limit
		}
		out.Uniform = cfg.N * problems * len(endpointRuns(c))
	}
	rounds, last, err := st.AdaptiveProgress(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	out.Rounds = rounds
	if last != nil {
		out.Widest, out.Done = last.Widest, last.Planned == 0
	}
	return out, nil
}
