package jobs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// ReverifyPlan says what a re-verification of a comparison would do, or
// why there is none to do.
type ReverifyPlan struct {
	Runs     []store.Run // the models whose samples would be graded again
	Samples  int64       // how many samples that is
	Verifier string
	// Why is set when re-verification does not apply: no model has
	// completion texts (counts-only imports), or no verifier grades the
	// dataset's problem kinds.
	Why string
}

// ErrCannotReverify is returned when re-verification does not apply.
var ErrCannotReverify = errors.New("re-verification does not apply")

// PlanReverify works out which models of comparison c a re-verification
// with v would grade: those with completion texts, on a dataset whose
// problem kinds v grades.
func PlanReverify(ctx context.Context, st *store.Store, v verify.Verifier, c store.Comparison) (ReverifyPlan, error) {
	var p ReverifyPlan
	if v == nil {
		p.Why = "this server has no verifier configured"
		return p, nil
	}
	p.Verifier = v.Name()
	if c.DatasetID == nil {
		p.Why = "the dataset is not loaded"
		return p, nil
	}
	kinds, err := st.DatasetKinds(ctx, *c.DatasetID)
	if err != nil {
		return p, err
	}
	var unsupported []string
	for _, k := range kinds {
		if !verify.Supports(v, k) {
			u := fmt.Sprintf("%q", k)
			if why := verify.Unavailable(v, k); why != nil {
				u += " (" + why.Error() + ")"
			}
			unsupported = append(unsupported, u)
		}
	}
	if len(unsupported) > 0 {
		p.Why = fmt.Sprintf("%s cannot grade this dataset's %s problems", v.Name(), strings.Join(unsupported, ", "))
		return p, nil
	}
	// Graded "unparseable", their samples would count as the models' failures (as at import).
	if n, key, idx, err := st.NoReference(ctx, *c.DatasetID); err != nil {
		return p, err
	} else if n > 0 {
		p.Why = fmt.Sprintf("%d of the dataset's problems have no reference answer, so Reach cannot grade their samples (the first: %q, %s line %d)",
			n, key, c.DatasetName, idx+1)
		return p, nil
	}
	// As of the runs' last aggregation (the comparison is shown ready):
	// counting them now would read every sample on each view of its page.
	totals, err := st.SampleTotals(ctx, c.ID)
	if err != nil {
		return p, err
	}
	for _, r := range c.Runs {
		if !r.HasTexts {
			continue
		}
		p.Runs = append(p.Runs, r)
		p.Samples += totals[r.ID]
	}
	if len(p.Runs) == 0 {
		p.Why = "no model of this comparison has completion texts (only per-problem counts were imported), so there is nothing to verify"
	}
	return p, nil
}

// StartReverify grades every sample of comparison id again with v
// (reviewer overrides stay), in one transaction that also records who
// asked for it in the audit log. The files' own verdicts stay stored:
// RestoreFileVerdicts brings them back. It returns ErrCannotReverify (with
// the reason) when re-verification does not apply, and ErrWrongState when
// the comparison is not ready (an answer of 409, not a failure).
func StartReverify(ctx context.Context, client *Client, st *store.Store, v verify.Verifier, id, userID int64) error {
	return st.WithTx(ctx, func(tx *store.Store) error {
		status, err := tx.LockComparisonStatus(ctx, id)
		if err != nil {
			return err
		}
		if status != store.StatusReady {
			return fmt.Errorf("%w: comparison %d is %s; re-verify it once it is ready", ErrWrongState, id, status)
		}
		c, err := tx.GetComparison(ctx, id)
		if err != nil {
			return err
		}
		plan, err := PlanReverify(ctx, tx, v, c)
		if err != nil {
			return err
		}
		if plan.Why != "" {
			return fmt.Errorf("%w: %s", ErrCannotReverify, plan.Why)
		}
		var follow []river.InsertManyParams
		var names []string
		for _, r := range plan.Runs {
			if err := tx.SetRunStatus(ctx, r.ID, store.StatusVerifying, ""); err != nil {
				return err
			}
			if err := tx.SetRunVerdictSource(ctx, r.ID, "verifier"); err != nil {
				return err
			}
			if err := tx.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "verify", Unit: "samples", Status: "queued"}); err != nil {
				return err
			}
			follow = append(follow, river.InsertManyParams{Args: VerifyArgs{RunID: r.ID, ComparisonID: id, All: true}})
			names = append(names, r.ModelName)
		}
		if err := tx.SetReverify(ctx, id, true); err != nil {
			return err
		}
		if err := tx.SetComparisonStatus(ctx, id, store.StatusVerifying, ""); err != nil {
			return err
		}
		if err := tx.AddAudit(ctx, store.AuditEntry{UserID: userID, ComparisonID: id, Action: "reverify",
			Target: strings.Join(names, ", "), New: plan.Verifier,
			Note: fmt.Sprintf("%d samples graded again; the files' verdicts stay stored", plan.Samples)}); err != nil {
			return err
		}
		if _, err := client.InsertManyTx(ctx, tx.Tx(), follow); err != nil {
			return fmt.Errorf("enqueue re-verification: %w", err)
		}
		return nil
	})
}

// RestoreFileVerdicts undoes re-verification: every sample that carried a
// verdict in its file gets it back, the counts are recomputed, and the
// audit log records it. It returns how many samples changed.
func RestoreFileVerdicts(ctx context.Context, client *Client, st *store.Store, id, userID int64) (int64, error) {
	var total int64
	err := st.WithTx(ctx, func(tx *store.Store) error {
		status, err := tx.LockComparisonStatus(ctx, id)
		if err != nil {
			return err
		}
		if status != store.StatusReady {
			return fmt.Errorf("%w: comparison %d is %s; restore the files' verdicts once it is ready", ErrWrongState, id, status)
		}
		replaced, err := tx.FileVerdictsReplaced(ctx, id)
		if err != nil {
			return err
		}
		if len(replaced) == 0 {
			return fmt.Errorf("%w: no sample's file verdict was replaced", ErrCannotReverify)
		}
		c, err := tx.GetComparison(ctx, id)
		if err != nil {
			return err
		}
		var follow []river.InsertManyParams
		for _, r := range c.Runs {
			if replaced[r.ID] == 0 {
				continue
			}
			n, err := tx.RestoreFileVerdicts(ctx, r.ID)
			if err != nil {
				return err
			}
			total += n
			if err := tx.SetRunStatus(ctx, r.ID, "aggregating", ""); err != nil {
				return err
			}
			follow = append(follow, river.InsertManyParams{Args: AggregateArgs{RunID: r.ID, ComparisonID: id}})
		}
		if err := tx.SetReverify(ctx, id, false); err != nil {
			return err
		}
		if err := tx.SetComparisonStatus(ctx, id, store.StatusVerifying, ""); err != nil {
			return err
		}
		if err := tx.AddAudit(ctx, store.AuditEntry{UserID: userID, ComparisonID: id, Action: "restore-file-verdicts",
			Old: "verifier", New: "file", Note: fmt.Sprintf("%d samples got their file's verdict back", total)}); err != nil {
			return err
		}
		_, err = client.InsertManyTx(ctx, tx.Tx(), follow)
		return err
	})
	return total, err
}

// SetGradingPolicy switches comparison id to policy (store.PolicyStrict or
// store.PolicyLenient) and recounts every model with completion texts from
// the stored verdicts; nothing is imported or verified again.
func SetGradingPolicy(ctx context.Context, client *Client, st *store.Store, id, userID int64, policy string) error {
	return st.WithTx(ctx, func(tx *store.Store) error {
		status, err := tx.LockComparisonStatus(ctx, id)
		if err != nil {
			return err
		}
		c, err := tx.GetComparison(ctx, id)
		if err != nil {
			return err
		}
		if c.GradingPolicy == policy {
			return nil
		}
		if err := tx.SetGradingPolicy(ctx, id, policy); err != nil {
			return err
		}
		if err := tx.AddAudit(ctx, store.AuditEntry{UserID: userID, ComparisonID: id, Action: "grading-policy",
			Old: c.GradingPolicy, New: policy}); err != nil {
			return err
		}
		if status != store.StatusReady {
			return nil // the aggregation still to come counts under the new policy
		}
		var follow []river.InsertManyParams
		for _, r := range c.Runs {
			if !r.HasTexts {
				continue
			}
			if err := tx.SetRunStatus(ctx, r.ID, "aggregating", ""); err != nil {
				return err
			}
			follow = append(follow, river.InsertManyParams{Args: AggregateArgs{RunID: r.ID, ComparisonID: id}})
		}
		if len(follow) == 0 {
			return nil
		}
		if err := tx.SetComparisonStatus(ctx, id, store.StatusVerifying, ""); err != nil {
			return err
		}
		_, err = client.InsertManyTx(ctx, tx.Tx(), follow)
		return err
	})
}

// ReverifyArgs is kept so that re-verifications enqueued by earlier
// versions still run; StartReverify enqueues VerifyJobs directly.
type ReverifyArgs struct {
	ComparisonID int64 `json:"comparison_id"`
}

// Kind implements river.JobArgs.
func (ReverifyArgs) Kind() string { return "reverify" }

// ReverifyWorker works ReverifyArgs.
type ReverifyWorker struct {
	river.WorkerDefaults[ReverifyArgs]
	st *store.Store
	v  verify.Verifier
}

// Work starts the re-verification, or leaves the comparison as it is when
// none applies.
func (w *ReverifyWorker) Work(ctx context.Context, job *river.Job[ReverifyArgs]) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return err
	}
	err = StartReverify(ctx, client, w.st, w.v, job.Args.ComparisonID, 0)
	if err != nil && !transient(err) {
		return river.JobCancel(err)
	}
	return err
}
