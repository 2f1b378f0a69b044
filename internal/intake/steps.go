package intake

import (
	"fmt"
	"io"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/store"
)

// SplitSteps turns a model's run into one checkpoint per training step when
// its one file's records carry two or more steps (a verl dump of several
// steps, TRL's completions table of a whole run: ingest.ScanSteps reads it
// once, streaming). The checkpoints are named "NAME step N" with role
// checkpoint, steps ascending; the first keeps run's file and the others
// are split off it (store.NewRun.SplitOf = at+1, at being the index the
// first will have among the runs created together). A file of one step, or
// of none, gives run unchanged, and so does a model given its step (not
// read here). Refused in words: a base model's file of several steps, more
// steps than a comparison has room for, and (an *ingest.Error naming the
// line) a record without a step among records with one.
func SplitSteps(run store.NewRun, files int, open func() (io.ReadCloser, error), at int) ([]store.NewRun, error) {
	if files != 1 || run.Step != nil || !ingest.CarriesSteps(ingest.Format(run.Format)) {
		// A model given its step (a step file of a run's folder, --step)
		// is not read twice for it: its import refuses records of other
		// steps (jobs: oneStep).
		return []store.NewRun{run}, nil
	}
	r, err := open()
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", run.ModelName, err)
	}
	scan, err := ingest.ScanSteps(r, run.SourceFile, ingest.Format(run.Format), nil)
	r.Close()
	if err != nil {
		return nil, fmt.Errorf("model %q: %w", run.ModelName, err)
	}
	if scan.Distinct < 2 {
		return []store.NewRun{run}, nil
	}
	span := fmt.Sprintf("%d training steps (%d to %d)", scan.Distinct, scan.Steps[0], scan.Steps[len(scan.Steps)-1])
	switch {
	case run.Role == "base":
		return nil, fmt.Errorf("base model %q: the records of %s carry %s; the base model is one model: give the checkpoints as another model", run.ModelName, run.SourceFile, span)
	case scan.Distinct > MaxModels-1:
		return nil, fmt.Errorf("model %q: the records of %s carry %s, one checkpoint each; a comparison has at most %d models (the base model included): keep fewer steps in the file", run.ModelName, run.SourceFile, span, MaxModels)
	}
	out := make([]store.NewRun, 0, len(scan.Steps))
	for i, s := range scan.Steps {
		step := s
		ck := run
		ck.ModelName, ck.Role, ck.Step = fmt.Sprintf("%s step %d", run.ModelName, step), "checkpoint", &step
		if i > 0 {
			ck.UploadID, ck.MoreUploadIDs, ck.SplitOf = 0, nil, at+1
		}
		out = append(out, ck)
	}
	return out, nil
}

// checkRuns refuses runs that a model's steps made too many, or whose
// names (a checkpoint's "NAME step N") repeat another model's.
func checkRuns(runs []store.NewRun) error {
	if err := checkModelCount(len(runs)); err != nil {
		return fmt.Errorf("with every training step a checkpoint: %w", err)
	}
	seen := map[string]bool{}
	for _, r := range runs {
		if seen[r.ModelName] {
			return fmt.Errorf("two models are named %q (a training step's checkpoint is named NAME step N): rename one", r.ModelName)
		}
		seen[r.ModelName] = true
	}
	return nil
}
