package follow

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// Run is a followed training run, as `reach import --follow` and a
// comparison following a server folder both give it to Look.
type Run struct {
	ComparisonID int64
	Model        string // its checkpoints are "Model step N"
	Arg, Root    string // the folder or pattern, and the folder below which names give steps (Scan)
	Every        time.Duration
	// Roots are the allowed server folders every step file must lie in;
	// nil on the importing machine, whose own files are read.
	Roots       []string
	CodeHarness string
	AcceptGuess bool
	Mapping     *ingest.Mapping // the field mapping of every step's files (reach import --map); nil to detect each
}

// Adding is the step a look added whose import has not ended yet.
type Adding struct {
	Step  int      `json:"step"`
	Files []string `json:"files"`
	Seen  Seen     `json:"seen"` // its first file as it was when added
}

// Outcome is what one look did.
type Outcome struct {
	In      []int              // steps whose import ended with them in
	Failed  []store.FailedStep // steps refused or taken out at this look
	Adding  int                // the step added at this look, now importing; -1 for none
	ScanErr error              // the folder could not be listed (it may be between writes)
}

// Busy reports whether the look changed anything: looking again at once
// may do more (a step refused leaves the next one to add).
func (o Outcome) Busy() bool { return len(o.In) > 0 || len(o.Failed) > 0 || o.Adding >= 0 }

// Look is one look at a followed run, the rule both kinds of following
// share: it first settles the step the last look added (in, or failed: its
// failure kept until the step goes in, and the step tried again only once
// its first file changes), then, when the comparison is ready, adds the
// next complete step as checkpoint "Model step N" (read through first, so
// that a file not whole is refused rather than failing the import). One
// step per look: the comparison imports it before the next.
func (s *State) Look(ctx context.Context, st *store.Store, client *jobs.Client, r Run, now time.Time) (Outcome, error) {
	out := Outcome{Adding: -1}
	c, err := st.GetComparison(ctx, r.ComparisonID)
	if err != nil {
		return out, err
	}
	known := map[int]bool{}
	for _, run := range c.Runs {
		if run.Step != nil && run.ModelName == CheckpointName(r.Model, *run.Step) {
			known[*run.Step] = true
		}
	}
	if a := s.Adding; a != nil && (c.Status == store.StatusReady || c.Status == store.StatusFailed) {
		s.Adding = nil
		if known[a.Step] && c.Status == store.StatusReady {
			out.In = append(out.In, a.Step)
		} else {
			why, ok := store.AdditionFailure(c.Error)
			if !ok {
				why = c.Error
			}
			if why == "" {
				why = "its import ended without it"
			}
			out.Failed = append(out.Failed, s.fail(r.Model, a.Step, a.Files, why))
			if s.Refused == nil {
				s.Refused = map[string]Seen{}
			}
			// As it was added: a file fixed since is tried again.
			s.Refused[a.Files[0]] = a.Seen
		}
	}
	// A failed step that went in (at a later try, or added by hand) is no
	// longer failed.
	s.Failed = slices.DeleteFunc(s.Failed, func(f store.FailedStep) bool { return known[f.Step] })
	cks, err := s.Scan(r.Arg, r.Root, known, now, r.Every)
	if err != nil {
		out.ScanErr = err
	}
	if c.Status != store.StatusReady || s.Adding != nil || len(cks) == 0 {
		return out, nil
	}
	ck := cks[0]
	step := ck.Step
	m := intake.Model{Name: CheckpointName(r.Model, step), Role: "checkpoint", Step: &step, File: intake.LocalFile(ck.Files[0]), CodeHarness: r.CodeHarness, Mapping: r.Mapping}
	if m.Mapping == nil {
		m.Mapping = earlierMapping(&c, r.Model)
	}
	for _, p := range ck.Files[1:] {
		m.More = append(m.More, intake.LocalFile(p))
	}
	var addErr error
	for _, p := range ck.Files {
		if addErr == nil && r.Roots != nil {
			addErr = Within(r.Roots, p) // a step file may be a link leading out
		}
		if addErr == nil {
			addErr = readable(p)
		}
	}
	if addErr == nil {
		_, addErr = intake.AddModels(ctx, st, client, r.ComparisonID, []intake.Model{m}, r.AcceptGuess)
	}
	if addErr != nil {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		out.Failed = append(out.Failed, s.fail(r.Model, step, ck.Files, addErr.Error()))
		s.Refuse(ck)
		return out, nil
	}
	s.Adding = &Adding{Step: step, Files: ck.Files, Seen: s.Files[ck.Files[0]]}
	out.Adding = step
	return out, nil
}

// fail keeps step's failure (replacing an earlier one of the step).
func (s *State) fail(model string, step int, files []string, why string) store.FailedStep {
	f := store.FailedStep{Step: step, Model: CheckpointName(model, step), File: filepath.Base(files[0]), Error: truncate(why, 1000)}
	s.Failed = slices.DeleteFunc(s.Failed, func(o store.FailedStep) bool { return o.Step == step })
	s.Failed = append(s.Failed, f)
	slices.SortFunc(s.Failed, func(a, b store.FailedStep) int { return a.Step - b.Step })
	return f
}

// Summary is what the follow's line on the page says went wrong: every
// step that failed and has not gone in since, and a look's own error.
func (s *State) Summary(scanErr error) string {
	var parts []string
	for _, f := range s.Failed {
		parts = append(parts, FailureText(f))
	}
	if scanErr != nil {
		parts = append(parts, scanErr.Error())
	}
	return truncate(strings.Join(parts, "; "), 4000)
}

// FailureText says which step failed, why, and when it is tried again.
func FailureText(f store.FailedStep) string {
	return fmt.Sprintf("step %d not added: %s (tried again once %s changes)", f.Step, strings.TrimRight(f.Error, ". "), f.File)
}

// earlierMapping is the field mapping the latest checkpoint of model in c
// was read with, when its file was in no layout Reach recognises and the
// mapping was given or confirmed: a trainer writes every step alike, and
// a step followed from the browser has no --map to give (a trial's server
// folder refused each new step as unmapped). nil when there is none; a
// step whose file the mapping does not fit is refused as before
// (ingest.CheckMapping).
func earlierMapping(c *store.Comparison, model string) *ingest.Mapping {
	// The model itself counts too, below every step: `reach import
	// --model ppo=DIR/` of a folder holding one step makes the model
	// "ppo" without one.
	var latest *store.Run
	at := func(r *store.Run) int {
		if r.Step == nil {
			return -1
		}
		return *r.Step
	}
	for i, run := range c.Runs {
		ours := run.ModelName == model || (run.Step != nil && run.ModelName == CheckpointName(model, *run.Step))
		if !ours || run.Format != string(ingest.FormatMapped) || len(run.Mapping) == 0 {
			continue
		}
		if latest == nil || at(&c.Runs[i]) > at(latest) {
			latest = &c.Runs[i]
		}
	}
	if latest == nil {
		return nil
	}
	var m ingest.Mapping
	if err := json.Unmarshal(latest.Mapping, &m); err != nil || m == (ingest.Mapping{}) {
		return nil
	}
	return &m
}
