package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// One samples file whose records carry the training step (a verl dump of
// several steps, TRL's completions table of a whole run) is one checkpoint
// per step: the run holding the file and the runs split off it
// (store.Run.SplitOf), one per step. The file is read once, by the import
// of the run holding it: each sample goes to its step's run, matched and
// numbered within that run as if the step were a file of its own, in one
// transaction for all of them.

// stepRuns returns run r and the runs split off it, by step ascending; r
// alone when none are.
func stepRuns(c store.Comparison, r store.Run) []store.Run {
	out := []store.Run{r}
	for _, o := range c.Runs {
		if o.SplitOf != nil && *o.SplitOf == r.ID {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b store.Run) int { return stepOf(a) - stepOf(b) })
	return out
}

func stepOf(r store.Run) int {
	if r.Step == nil {
		return -1
	}
	return *r.Step
}

// markSplitImporting shows a run split off another's file as importing
// (inside tx): the other run's import stores its samples.
func markSplitImporting(ctx context.Context, tx *store.Store, r store.Run) error {
	if err := tx.SetRunStatus(ctx, r.ID, store.StatusImporting, ""); err != nil {
		return err
	}
	return tx.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "import", Unit: "bytes", Status: "queued",
		Detail: "read with " + r.SourceFile})
}

// add counts a stored row as the pipeline counts a whole file's (one run
// of a split import).
func (s *pipelineStats) add(row store.Sample) {
	s.samples++
	if row.FileCorrect != nil {
		s.fileLabel = true
	}
	switch {
	case row.Status == store.SamplePending:
		s.pending++
	case row.VerdictSource != "file":
		s.verified++
		if row.FileCorrect != nil && *row.FileCorrect != (row.Status == store.SampleCorrect) {
			s.changed++
		}
	}
}

// importSplit imports run r's file (inside tx) into steps, r and the runs
// split off it: each sample into the run of its record's step. A record
// without a step, or with one no run has (the file changed since it was
// examined), fails the import naming its line.
func importSplit(ctx context.Context, st, tx *store.Store, v verify.Verifier, c store.Comparison, r store.Run, up source,
	format ingest.Format, mapping *ingest.Mapping, ix problemIndex, steps []store.Run) (pipelineStats, error) {
	var sum pipelineStats
	if len(up.more) > 0 {
		return sum, fmt.Errorf("model %q: a file split by its records' training steps is one file, not %d: %w", r.ModelName, len(up.more)+1, errBadInput)
	}
	type target struct {
		run   store.Run
		mt    *ingest.Matcher
		stats pipelineStats
	}
	byStep := map[int]*target{}
	byRun := map[int64]*target{}
	for _, sr := range steps {
		if sr.Step == nil {
			return sum, fmt.Errorf("model %q has no training step, yet runs are split off its file: %w", sr.ModelName, errBadInput)
		}
		t := &target{run: sr, mt: ix.matcher(up.name)}
		t.mt.GuardCompletions(format == ingest.FormatMapped)
		byStep[*sr.Step], byRun[sr.ID] = t, t
	}

	f, err := up.open()
	if err != nil {
		return sum, fmt.Errorf("open %s: %w", up.name, err)
	}
	defer f.Close()
	cr := &countingReader{r: f}
	var written atomic.Int64
	ctx, stopWatch, release := watchImport(ctx, st, c.ID, func() store.Progress {
		return store.Progress{RunID: r.ID, Stage: "import", Total: up.size, Unit: "bytes", Status: "running", Done: cr.n.Load(),
			Detail: fmt.Sprintf("%d samples of %d training steps", written.Load(), len(steps))}
	})
	defer release()
	defer stopWatch()

	var first *ingest.Sample // the first sample, for the refusal of one without a step
	p := samplePipeline{v: v, ix: ix, reverify: c.Reverify, runID: r.ID, file: up.name}
	p.route = func(s *ingest.Sample) (int64, *ingest.Matcher, error) {
		if first == nil {
			first = &ingest.Sample{Line: s.Line, Record: s.Record, Step: s.Step, HasStep: s.HasStep}
		}
		if !s.HasStep {
			if first.HasStep {
				return 0, nil, ingest.MissingStep(up.name, *s, first.Line, first.Record, first.Step)
			}
			return 0, nil, &ingest.Error{File: up.name, Line: s.Line, Record: s.Record, Field: "step",
				Msg: fmt.Sprintf("no training step: the file was examined with %d steps", len(steps))}
		}
		t := byStep[s.Step]
		if t == nil {
			return 0, nil, &ingest.Error{File: up.name, Line: s.Line, Record: s.Record, Field: "step",
				Msg: fmt.Sprintf("training step %d is not one of the %d the file held when it was examined (it changed since): import it again", s.Step, len(steps))}
		}
		return t.run.ID, t.mt, nil
	}
	var (
		meta  *ingest.RunMeta
		warns importWarnings
	)
	read := func(onSample func(ingest.Sample) error, onCount func(ingest.Count) error) error {
		opts := ingest.Options{OnSample: onSample,
			OnCount: func(k ingest.Count) error {
				return &ingest.Error{File: up.name, Line: k.Line, Msg: "per-problem counts in a file split by training step"}
			},
			OnMeta:    func(m ingest.RunMeta) error { meta = &m; return nil },
			OnWarning: warns.add}
		if err := ingest.Read(cr, up.name, format, mapping, opts); err != nil {
			return err
		}
		for _, sr := range steps {
			if err := byRun[sr.ID].mt.Finish(); err != nil {
				return err
			}
		}
		return nil
	}
	sum, err = p.run(ctx, read, func(b *batch) error {
		if err := tx.InsertSamples(ctx, b.samples); err != nil {
			return err
		}
		for _, row := range b.samples {
			byRun[row.RunID].stats.add(row)
		}
		written.Add(int64(len(b.samples)))
		return nil
	})
	stopWatch()
	if errors.Is(context.Cause(ctx), errImportAborted) {
		return sum, errImportAborted
	}
	if err != nil {
		return sum, err
	}
	for _, sr := range steps {
		if byRun[sr.ID].stats.samples == 0 {
			return sum, &ingest.Error{File: up.name, Field: "step", Msg: fmt.Sprintf("no samples of training step %d, which the file held when it was examined (it changed since): import it again", *sr.Step)}
		}
	}
	if st, err := tx.LockComparisonStatus(ctx, c.ID); err != nil {
		return sum, err
	} else if st == store.StatusFailed {
		return sum, errImportAborted
	}
	for _, sr := range steps {
		if err := warns.save(ctx, tx, sr.ID, meta); err != nil {
			return sum, err
		}
		file := up
		if sr.ID != r.ID {
			file = source{name: up.name, size: up.size} // the file is r's: dropped once, with r
		}
		t := byRun[sr.ID]
		t.stats.runDone = true
		if err := finishRunImport(ctx, tx, v, c, sr, file, format, t.stats); err != nil {
			return sum, err
		}
	}
	sum.runDone = true
	return sum, nil
}

// oneStep refuses, in the import of run r (given its training step), a
// file whose records carry more than one step: it would pool several
// checkpoints' samples as one. Its samples go to r as without it.
func oneStep(r store.Run, file string, mt *ingest.Matcher) func(s *ingest.Sample) (int64, *ingest.Matcher, error) {
	var first *ingest.Sample
	return func(s *ingest.Sample) (int64, *ingest.Matcher, error) {
		if s.HasStep {
			if first == nil {
				first = &ingest.Sample{Line: s.Line, Record: s.Record, Step: s.Step}
			} else if s.Step != first.Step {
				return 0, nil, &ingest.Error{File: file, Line: s.Line, Record: s.Record, Field: "step",
					Msg: fmt.Sprintf("training step %d, while line %d carries step %d: model %q is given step %d, and its file must hold that step only (give one file of several steps without a step, and each step becomes a checkpoint)",
						s.Step, first.Line, first.Step, r.ModelName, *r.Step)}
			}
		}
		return r.ID, mt, nil
	}
}
