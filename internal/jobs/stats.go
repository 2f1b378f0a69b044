package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"golang.org/x/sync/errgroup"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/answerclass"
	"github.com/reach-lab/reach/internal/store"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// StatsArgs computes and caches a comparison's bootstrap intervals and
// maj@k for each report variant (all problems, without guessable ones, and
// each of those without the few short problems that cut k max, when the
// report suggests leaving them out). ComparisonID 0 is the periodic sweep: it enqueues a StatsArgs for
// every ready comparison whose statistics are missing or older than its
// last change (counts-only imports, comparisons from before this job).
type StatsArgs struct {
	ComparisonID int64 `json:"comparison_id"`
}

// Kind implements river.JobArgs.
func (StatsArgs) Kind() string { return "stats" }

// InsertOpts: at most one unfinished statistics job per comparison.
func (StatsArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: StatsQueue, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}}}
}

// StatsSweepInterval is how often the periodic sweep looks for comparisons
// without current statistics.
const StatsSweepInterval = 30 * time.Second

// statsPeriodic is the sweep, registered on every client that works jobs.
func statsPeriodic() []*river.PeriodicJob {
	return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(StatsSweepInterval),
		func() (river.JobArgs, *river.InsertOpts) { return StatsArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true})}
}

// StatsWorker works StatsArgs.
type StatsWorker struct {
	river.WorkerDefaults[StatsArgs]
	st    *store.Store
	draws int                   // bootstrap draws; 0 means 2,000
	hook  func(context.Context) // tests: called as each job starts
}

// Work computes what is missing or stale and stores it. Statistics that
// cannot be computed from the counts are stored as failed (shown on the
// page) rather than retried.
func (w *StatsWorker) Work(ctx context.Context, job *river.Job[StatsArgs]) error {
	if w.hook != nil {
		w.hook(ctx)
	}
	if job.Args.ComparisonID == 0 {
		return w.sweep(ctx)
	}
	views, err := computeStats(ctx, w.st, job.Args.ComparisonID, w.draws)
	if err == nil {
		// The page shows the default report and links to the other views:
		// compute them here, once, rather than in a page request (a
		// million problems take seconds and a gigabyte per view).
		err = analysis.Precompute(ctx, w.st, job.Args.ComparisonID, views...)
	}
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	return err
}

// ComputeStats computes and stores comparison id's statistics (bootstrap
// intervals, maj@k) for each report variant whose cached ones are missing
// or stale, in this process: the statistics job calls it, and so do the
// CLI's `import --wait` and `report` so that their figures never wait on a
// worker that may not run. draws 0 means 2,000. Statistics that cannot be
// computed from the counts are stored as failed (shown on the page).
//
// It stores the default report too; the other views the page links to are
// left to the statistics job (StartStats), which computes them the same way.
func ComputeStats(ctx context.Context, st *store.Store, id int64, draws int) error {
	if _, err := computeStats(ctx, st, id, draws); err != nil {
		return err
	}
	return analysis.Precompute(ctx, st, id)
}

// computeStats is ComputeStats without the stored reports. It returns the
// report views the comparison page shows or links to (all problems first,
// then those without guessable or short problems that leave some out), each
// with either estimator.
func computeStats(ctx context.Context, st *store.Store, id int64, draws int) ([]analysis.Options, error) {
	w := &StatsWorker{st: st, draws: draws}
	c, problems, counts, err := analysis.Load(ctx, w.st, id)
	switch {
	case errors.Is(err, analysis.ErrNotReady) && c.Status == store.StatusReady:
		// Ready but without a dataset or a second model: record why, so the sweep stops asking.
		return nil, w.st.PutStats(ctx, store.Stats{ComparisonID: id, Variant: analysis.VariantAll, Status: analysis.StatsFailed, Error: err.Error()})
	case errors.Is(err, analysis.ErrNotReady):
		return nil, nil // enqueued again once the comparison is ready
	case err != nil:
		return nil, err
	}
	var answers map[int64]map[int64][]store.Answer
	memo := analysis.NewStatsMemo() // the variants share each problem's answer grouping and maj@k
	variants := []analysis.Options{{}, {ExcludeGuessable: true}}
	var shown []analysis.Options // the views the page links to, each with either estimator
	for i := 0; i < len(variants); i++ {
		opt := variants[i]
		rep, err := analysis.ComputeWith(c, problems, counts, opt)
		if err != nil {
			if opt.ExcludeGuessable || opt.MinN > 0 {
				continue // every problem is guessable or short: there is no such variant
			}
			return nil, w.st.PutStats(ctx, store.Stats{ComparisonID: id, Variant: analysis.VariantAll, Status: analysis.StatsFailed, Error: err.Error()})
		}
		if (opt.ExcludeGuessable && rep.Excluded == 0) || (opt.MinN > 0 && rep.ShortLeftOut == 0) {
			continue // nothing left out: the same as a variant already computed
		}
		shown = append(shown, opt, analysis.Options{ExcludeGuessable: opt.ExcludeGuessable, MinN: opt.MinN, Biased: true})
		if m := rep.Budget.SuggestMinN; m > 0 && opt.MinN == 0 {
			// The page offers leaving the few short problems out: give that view intervals too.
			variants = append(variants, analysis.Options{ExcludeGuessable: opt.ExcludeGuessable, MinN: m})
		}
		cached, err := w.st.GetStats(ctx, id, rep.Variant)
		if err == nil && cached.Hash == rep.Hash() && cached.Status == analysis.StatsReady {
			if err := w.st.TouchStats(ctx, id, rep.Variant); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if answers == nil {
			if answers, err = readAnswers(ctx, w.st, c.Runs, anyCode(problems)); err != nil {
				return nil, err
			}
		}
		row := store.Stats{ComparisonID: id, Variant: rep.Variant, Hash: rep.Hash(), Status: analysis.StatsReady}
		s, err := analysis.ComputeStats(rep, answers, analysis.StatsOptions{Draws: w.draws, Equiv: answerclass.MathEquiv,
			EquivName: vmath.Name + " answer equivalence", Memo: memo})
		if err == nil {
			row.Data, err = json.Marshal(s)
		}
		if err != nil {
			row.Status, row.Error = analysis.StatsFailed, err.Error()
		}
		if err := w.st.PutStats(ctx, row); err != nil {
			return nil, err
		}
		slog.InfoContext(ctx, "statistics computed", "comparison", id, "variant", rep.Variant, "status", row.Status, "seconds", s.Seconds)
	}
	return shown, nil
}

// readAnswers reads the answers of the runs with texts, several runs at a
// time: from their answer groups (store.AnswersFromGroups), or, with code
// problems (whose answer diversity counts programs) or groups aggregated
// before they kept their first samples, by a scan of the run's samples.
func readAnswers(ctx context.Context, st *store.Store, runs []store.Run, code bool) (map[int64]map[int64][]store.Answer, error) {
	var mu sync.Mutex
	answers := map[int64]map[int64][]store.Answer{}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, r := range runs {
		if !r.HasTexts {
			continue
		}
		g.Go(func() error {
			var as map[int64][]store.Answer
			ok := false
			var err error
			if !code {
				as, ok, err = st.AnswersFromGroups(ctx, r.ID)
			}
			if err == nil && !ok {
				as, err = st.AnswersForRun(ctx, r.ID)
			}
			mu.Lock()
			answers[r.ID] = as
			mu.Unlock()
			return err
		})
	}
	return answers, g.Wait()
}

// anyCode reports whether any of the problems is a code problem.
func anyCode(problems []store.Problem) bool {
	for _, p := range problems {
		if p.Kind == "code" {
			return true
		}
	}
	return false
}

func (w *StatsWorker) sweep(ctx context.Context) error {
	ids, err := w.st.ComparisonsNeedingStats(ctx, 100)
	if err != nil || len(ids) == 0 {
		return err
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	params := make([]river.InsertManyParams, len(ids))
	for i, id := range ids {
		params[i] = river.InsertManyParams{Args: StatsArgs{ComparisonID: id}}
	}
	if _, err := client.InsertMany(ctx, params); err != nil {
		return fmt.Errorf("enqueue statistics: %w", err)
	}
	return nil
}

// StartStats enqueues the statistics of a comparison (a no-op while one is
// already queued or running). The comparison page calls it when its cached
// statistics are missing or stale.
func StartStats(ctx context.Context, client *Client, comparisonID int64) error {
	if _, err := client.Insert(ctx, StatsArgs{ComparisonID: comparisonID}, nil); err != nil {
		return fmt.Errorf("enqueue statistics of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// startStatsIfReady enqueues the statistics (and, with texts, the search
// indexes: SearchIndexArgs) once a comparison is ready
// (called by the worker that may have made it so).
func startStatsIfReady(ctx context.Context, st *store.Store, comparisonID int64) error {
	c, err := st.GetComparison(ctx, comparisonID)
	if err != nil || c.Status != store.StatusReady {
		return err
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	if err := startSearchIndexIfTexts(ctx, c); err != nil {
		return err
	}
	return StartStats(ctx, client, comparisonID)
}
