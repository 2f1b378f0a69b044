package ingest

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// Some trainers write the training step on every record, so that one file
// may hold several checkpoints' samples (the step files concatenated, or
// one table of a whole run):
//   - verl, RayPPOTrainer._dump_generations: "step": self.global_steps (a number)
//   - TRL, GRPOTrainer's completions table (parquet, wandb table, JSONL):
//     "step": str(self.state.global_step) (a string of digits)

// CarriesSteps reports whether records of format f may carry a training
// step (Sample.Step).
func CarriesSteps(f Format) bool {
	return f == FormatVerlValidation || f == FormatTRLCompletions || f == FormatWandbTable
}

// stepValue reads a record's step: a whole number ≥ 0, as a JSON number
// (verl) or a string of digits (TRL).
func stepValue(w where, field, raw string) (int, error) {
	v := gjson.Parse(raw)
	var s string
	switch v.Type {
	case gjson.Number:
		s = v.Raw
		if f := v.Float(); f == float64(int64(f)) && strings.ContainsAny(s, ".eE") {
			s = strconv.FormatInt(int64(f), 10) // 100.0
		}
	case gjson.String:
		s = strings.TrimSpace(v.Str)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxStep {
		return 0, w.errorf(field, "training step %s: want a whole number from 0 to %d", truncateText(raw, 40), maxStep)
	}
	return n, nil
}

// maxStep bounds a training step (far above any run's).
const maxStep = 1 << 30

// MaxSteps is the most distinct steps ScanSteps lists; past it, it counts
// them only.
const MaxSteps = 1000

// StepScan is what ScanSteps found: the distinct training steps the
// records carry, ascending (at most MaxSteps; Distinct counts them all),
// and the samples read.
type StepScan struct {
	Steps    []int
	Distinct int
	Samples  int
}

// ScanSteps reads a samples file of format f (as Read does, streaming: one
// record in memory) and returns the training steps its records carry. A
// file where some records carry a step and others do not is refused with
// an *Error naming the first record without one (or, when the file starts
// without steps, the first record with one). A file in a format without
// steps, or whose records carry none, gives no steps.
func ScanSteps(r io.Reader, file string, f Format, m *Mapping) (StepScan, error) {
	var out StepScan
	if !CarriesSteps(f) {
		return out, nil
	}
	seen := map[int]bool{}
	var with, without *Sample
	err := Read(r, file, f, m, Options{
		OnSample: func(s Sample) error {
			out.Samples++
			if !s.HasStep {
				if without == nil {
					without = &Sample{Line: s.Line, Record: s.Record}
				}
			} else {
				if with == nil {
					with = &Sample{Line: s.Line, Record: s.Record, Step: s.Step}
				}
				if !seen[s.Step] {
					out.Distinct++
					if len(seen) < MaxSteps {
						seen[s.Step] = true
					}
				}
			}
			if with != nil && without != nil {
				return missingStep(file, with, without)
			}
			return nil
		},
		OnCount: func(Count) error { return nil },
	})
	if err != nil {
		return StepScan{}, err
	}
	for s := range seen {
		out.Steps = append(out.Steps, s)
	}
	slices.Sort(out.Steps)
	return out, nil
}

// missingStep refuses a file mixing records with and without a step.
func missingStep(file string, with, without *Sample) error {
	at := func(s *Sample) string {
		if s.Line > 0 {
			return fmt.Sprintf("line %d", s.Line)
		}
		return s.Record
	}
	return &Error{File: file, Line: without.Line, Record: without.Record, Field: "step",
		Msg: fmt.Sprintf("no training step, while %s carries step %d: each record of a file whose records carry steps needs its own (add it, or remove the step field everywhere)", at(with), with.Step)}
}

// MissingStep is ScanSteps' refusal for sample s, which carries no
// training step, in a file whose record at line (or record) carried step.
func MissingStep(file string, s Sample, line int, record string, step int) error {
	return missingStep(file, &Sample{Line: line, Record: record, Step: step}, &s)
}
