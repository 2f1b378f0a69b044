package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Review verdicts of a base-only problem.
const (
	VerdictGenuine        = "genuine"         // the base model really solves it
	VerdictLucky          = "lucky"           // a correct answer reached by chance
	VerdictVerifierFP     = "verifier-fp"     // the verifier accepted a wrong answer
	VerdictWrongReference = "wrong-reference" // the dataset's reference answer is wrong
	VerdictUnsure         = "unsure"
)

// ReviewVerdicts lists the verdicts in display order.
var ReviewVerdicts = []string{VerdictGenuine, VerdictLucky, VerdictVerifierFP, VerdictWrongReference, VerdictUnsure}

// Review is one reviewer's verdict on one problem of a comparison.
type Review struct {
	ComparisonID int64
	ProblemID    int64
	// OtherRunID is the pair's other model (the base model is always the
	// pair's first); 0 in SetReview means the first other model.
	OtherRunID    int64
	Verdict       string
	Note          string
	ReviewerID    int64
	ReviewerEmail string
	UpdatedAt     time.Time
}

// AuditEntry is one change: who changed what from what to what.
type AuditEntry struct {
	ID           int64
	At           time.Time
	UserID       int64
	UserEmail    string
	ComparisonID int64
	ProblemID    int64  // 0 when the change is not about one problem
	ProblemKey   string // the problem's id in its dataset ("" with ProblemID 0)
	Action       string
	Target       string
	Old, New     string
	Note         string
}

// AddAudit records a change.
func (s *Store) AddAudit(ctx context.Context, e AuditEntry) error {
	_, err := s.db.Exec(ctx, `INSERT INTO audit_log (user_id, comparison_id, problem_id, action, target, old_value, new_value, note)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, nullID(e.UserID), nullID(e.ComparisonID), nullID(e.ProblemID), e.Action, e.Target, e.Old, e.New, e.Note)
	if err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// Audit returns a comparison's changes, newest first; problemID 0 means all.
func (s *Store) Audit(ctx context.Context, comparisonID, problemID int64) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.Batch(ctx, s.AuditInto(comparisonID, problemID, &out))
	return out, err
}

// AuditInto queues Audit's query with out as the result.
func (s *Store) AuditInto(comparisonID, problemID int64, out *[]AuditEntry) Queued {
	return func(b *pgx.Batch) {
		b.Queue(`SELECT a.id, a.at, COALESCE(a.user_id, 0), COALESCE(u.email, ''), COALESCE(a.comparison_id, 0),
				COALESCE(a.problem_id, 0), COALESCE(p.key, ''), a.action, a.target, a.old_value, a.new_value, a.note
			FROM audit_log a LEFT JOIN users u ON u.id = a.user_id LEFT JOIN problems p ON p.id = a.problem_id
			WHERE a.comparison_id = $1 AND ($2 = 0 OR a.problem_id = $2) ORDER BY a.id DESC LIMIT 1000`, comparisonID, problemID).
			Query(func(rows pgx.Rows) error {
				var err error
				*out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditEntry, error) {
					var e AuditEntry
					err := r.Scan(&e.ID, &e.At, &e.UserID, &e.UserEmail, &e.ComparisonID, &e.ProblemID, &e.ProblemKey, &e.Action, &e.Target, &e.Old, &e.New, &e.Note)
					return e, err
				})
				if err != nil {
					return fmt.Errorf("audit log of comparison %d: %w", comparisonID, err)
				}
				return nil
			})
	}
}

// SetReview records a verdict on a problem against one pair (replacing an
// earlier one there) and its audit entry, in one transaction. OtherRunID 0
// is the first other model. Errors: an OtherRunID that is not a run of the
// comparison (ErrNotFound), or the store's.
func (s *Store) SetReview(ctx context.Context, r Review) error {
	return s.WithTx(ctx, func(tx *Store) error {
		var other string
		err := tx.db.QueryRow(ctx, `SELECT id, model_name FROM runs WHERE comparison_id = $1 AND position > 0 AND (id = $2 OR $2 = 0)
			ORDER BY position LIMIT 1`, r.ComparisonID, r.OtherRunID).Scan(&r.OtherRunID, &other)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("pair of run %d in comparison %d: %w", r.OtherRunID, r.ComparisonID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("review of problem %d: %w", r.ProblemID, err)
		}
		var old string
		err = tx.db.QueryRow(ctx, `SELECT verdict FROM problem_reviews WHERE comparison_id = $1 AND problem_id = $2 AND other_run_id = $3 FOR UPDATE`,
			r.ComparisonID, r.ProblemID, r.OtherRunID).Scan(&old)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("review of problem %d: %w", r.ProblemID, err)
		}
		_, err = tx.db.Exec(ctx, `INSERT INTO problem_reviews (comparison_id, problem_id, other_run_id, verdict, note, reviewer_id, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, now())
			ON CONFLICT (comparison_id, problem_id, other_run_id) DO UPDATE SET verdict = EXCLUDED.verdict, note = EXCLUDED.note,
				reviewer_id = EXCLUDED.reviewer_id, updated_at = now()`, r.ComparisonID, r.ProblemID, r.OtherRunID, r.Verdict, r.Note, nullID(r.ReviewerID))
		if err != nil {
			return fmt.Errorf("review of problem %d: %w", r.ProblemID, err)
		}
		return tx.AddAudit(ctx, AuditEntry{UserID: r.ReviewerID, ComparisonID: r.ComparisonID, ProblemID: r.ProblemID,
			Action: "review", Target: "problem verdict against " + other, Old: old, New: r.Verdict, Note: r.Note})
	})
}

// ReviewKey is a problem and a pair's other model.
type ReviewKey struct{ Problem, Other int64 }

// Reviews are a comparison's review verdicts, by problem and pair.
type Reviews map[ReviewKey]Review

// Of returns the verdicts against the pair whose other model is run
// other, by problem id.
func (rs Reviews) Of(other int64) map[int64]Review {
	out := map[int64]Review{}
	for k, r := range rs {
		if k.Other == other {
			out[k.Problem] = r
		}
	}
	return out
}

// Reviews returns a comparison's reviews.
func (s *Store) Reviews(ctx context.Context, comparisonID int64) (Reviews, error) {
	var out Reviews
	err := s.Batch(ctx, s.ReviewsInto(comparisonID, &out))
	return out, err
}

// ReviewsInto queues Reviews' query with out as the result.
func (s *Store) ReviewsInto(comparisonID int64, out *Reviews) Queued {
	return func(b *pgx.Batch) {
		b.Queue(`SELECT r.problem_id, r.other_run_id, r.verdict, r.note, COALESCE(r.reviewer_id, 0), COALESCE(u.email, ''), r.updated_at
			FROM problem_reviews r LEFT JOIN users u ON u.id = r.reviewer_id WHERE r.comparison_id = $1`, comparisonID).
			Query(func(rows pgx.Rows) error {
				*out = Reviews{}
				for rows.Next() {
					r := Review{ComparisonID: comparisonID}
					if err := rows.Scan(&r.ProblemID, &r.OtherRunID, &r.Verdict, &r.Note, &r.ReviewerID, &r.ReviewerEmail, &r.UpdatedAt); err != nil {
						return fmt.Errorf("reviews of comparison %d: %w", comparisonID, err)
					}
					(*out)[ReviewKey{r.ProblemID, r.OtherRunID}] = r
				}
				if err := rows.Err(); err != nil {
					return fmt.Errorf("reviews of comparison %d: %w", comparisonID, err)
				}
				return nil
			})
	}
}

// SampleOverride is a reviewer's change of one sample's verdict.
type SampleOverride struct {
	ComparisonID int64
	RunID        int64
	ProblemID    int64
	SampleIndex  int
	Status       string // SampleCorrect or SampleIncorrect
	UserID       int64
	Note         string
}

// OverrideSample sets one sample's verdict (correct or incorrect; or
// unparseable, only back to an original unparseable verdict), keeps what it was before the
// first override (setting it back clears the override), recomputes the
// run's counts and records the change in the audit log, all in one
// transaction, so the report is current as soon as it returns. It returns
// the sample's previous status; an unknown sample gives ErrNotFound.
func (s *Store) OverrideSample(ctx context.Context, o SampleOverride) (string, error) {
	if o.Status != SampleCorrect && o.Status != SampleIncorrect && o.Status != SampleUnparseable {
		return "", fmt.Errorf("override verdict %q: want %s or %s", o.Status, SampleCorrect, SampleIncorrect)
	}
	var old string
	err := s.WithTx(ctx, func(tx *Store) error {
		var orig *string
		err := tx.db.QueryRow(ctx, `SELECT status, override_from FROM samples WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3 FOR UPDATE`,
			o.RunID, o.ProblemID, o.SampleIndex).Scan(&old, &orig)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("sample %d of run %d problem %d: %w", o.SampleIndex, o.RunID, o.ProblemID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("sample %d of run %d problem %d: %w", o.SampleIndex, o.RunID, o.ProblemID, err)
		}
		// Unparseable only as a way back to an original unparseable verdict
		// (the verifier audit's "keep Reach's" after accepting the judge's).
		if o.Status == SampleUnparseable && (orig == nil || *orig != SampleUnparseable) {
			return fmt.Errorf("override verdict %q: want %s or %s", o.Status, SampleCorrect, SampleIncorrect)
		}
		if orig != nil && *orig == o.Status { // back to the original verdict
			_, err = tx.db.Exec(ctx, `UPDATE samples SET status = override_from, override_from = NULL, override_by = NULL,
					override_at = NULL, override_note = '' WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3`,
				o.RunID, o.ProblemID, o.SampleIndex)
		} else {
			_, err = tx.db.Exec(ctx, `UPDATE samples SET override_from = COALESCE(override_from, status), status = $4,
					override_by = $5, override_at = now(), override_note = $6 WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3`,
				o.RunID, o.ProblemID, o.SampleIndex, o.Status, nullID(o.UserID), o.Note)
		}
		if err != nil {
			return fmt.Errorf("override sample %d of run %d problem %d: %w", o.SampleIndex, o.RunID, o.ProblemID, err)
		}
		if err := tx.AggregateRun(ctx, o.RunID); err != nil {
			return err
		}
		target, err := tx.sampleTarget(ctx, o.RunID, o.SampleIndex)
		if err != nil {
			return err
		}
		return tx.AddAudit(ctx, AuditEntry{UserID: o.UserID, ComparisonID: o.ComparisonID, ProblemID: o.ProblemID,
			Action: "sample-verdict", Target: target, Old: old, New: o.Status, Note: o.Note})
	})
	return old, err
}

// sampleTarget names a sample in the audit log by its model, as the pages
// do ("model step-300 sample #3"), not by the run's id.
func (s *Store) sampleTarget(ctx context.Context, runID int64, idx int) (string, error) {
	var name string
	if err := s.db.QueryRow(ctx, `SELECT model_name FROM runs WHERE id = $1`, runID).Scan(&name); err != nil {
		return "", fmt.Errorf("audit target of run %d: %w", runID, err)
	}
	return fmt.Sprintf("model %s sample #%d", name, idx), nil
}
