package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/verify"
)

// Statuses of a verifier audit (VerifierAudit.Status): DebateIdle,
// DebateRunning, DebatePaused, DebateFailed and AuditDone.
const AuditDone = "done"

// Resolutions of a disagreement (AuditItem.Resolution).
const (
	ResolveReach = "reach" // keep Reach's verdict
	ResolveJudge = "judge" // accept the judge's, as a verdict override
)

// VerifierAudit is a comparison's verifier audit (issue 25, item 2): the
// judge's second opinion on the samples that decide the figures.
type VerifierAudit struct {
	ComparisonID int64
	M            int    // size of the random stratum asked for
	Seed         uint64 // its seed
	Status       string
	Error        string
	TokensIn     int64
	TokensOut    int64
	Requests     int64
	StartedBy    string // e-mail, "" when unknown
	StartedAt    time.Time
	UpdatedAt    time.Time
	// Items, Answered and Errors count the audit's samples, those with a
	// verdict and those whose last request failed.
	Items, Answered, Errors int64
}

// GetVerifierAudit returns a comparison's audit with its progress, or
// ErrNotFound when none was started.
func (s *Store) GetVerifierAudit(ctx context.Context, comparisonID int64) (VerifierAudit, error) {
	a := VerifierAudit{ComparisonID: comparisonID}
	var seed int64
	err := s.db.QueryRow(ctx, `SELECT a.m, a.seed, a.status, a.error, a.tokens_in, a.tokens_out, a.requests,
			COALESCE(u.email, ''), a.started_at, a.updated_at,
			(SELECT count(*) FROM verifier_audit_items i WHERE i.comparison_id = a.comparison_id),
			(SELECT count(*) FROM verifier_audit_items i WHERE i.comparison_id = a.comparison_id AND i.verdict IS NOT NULL),
			(SELECT count(*) FROM verifier_audit_items i WHERE i.comparison_id = a.comparison_id AND i.verdict IS NULL AND i.error <> '')
		FROM verifier_audits a LEFT JOIN users u ON u.id = a.started_by WHERE a.comparison_id = $1`, comparisonID).Scan(
		&a.M, &seed, &a.Status, &a.Error, &a.TokensIn, &a.TokensOut, &a.Requests, &a.StartedBy, &a.StartedAt, &a.UpdatedAt,
		&a.Items, &a.Answered, &a.Errors)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, fmt.Errorf("verifier audit of comparison %d: %w", comparisonID, ErrNotFound)
	}
	if err != nil {
		return a, fmt.Errorf("verifier audit of comparison %d: %w", comparisonID, err)
	}
	a.Seed = uint64(seed)
	return a, nil
}

// auditScopeSQL selects the graded samples of a comparison's runs on the
// problems $2 (the problems in the figures) that have a completion text,
// with whether each is deciding (its problem among $3 and graded incorrect
// or unparseable); ord numbers the others by run, problem and sample.
const auditScopeSQL = `SELECT s.run_id, s.problem_id, s.sample_index, s.status, s.rule, s.extracted,
		(s.problem_id = ANY($3::bigint[]) AND s.status IN ('incorrect', 'unparseable')) AS deciding
	FROM samples s JOIN runs r ON r.id = s.run_id
	WHERE r.comparison_id = $1 AND s.problem_id = ANY($2::bigint[])
		AND s.status IN ('correct', 'incorrect', 'unparseable') AND s.completion <> ''`

// AuditScope counts the samples an audit would choose from: deciding ones
// (graded incorrect or unparseable on the problems decidingProblems, those
// base-only or RL-only in some pair) and the rest, over the problems kept
// in the figures and samples with a completion text.
func (s *Store) AuditScope(ctx context.Context, comparisonID int64, kept, decidingProblems []int64) (deciding, rest int64, err error) {
	err = s.db.QueryRow(ctx, `SELECT count(*) FILTER (WHERE deciding), count(*) FILTER (WHERE NOT deciding) FROM (`+auditScopeSQL+`) x`,
		comparisonID, kept, decidingProblems).Scan(&deciding, &rest)
	if err != nil {
		return 0, 0, fmt.Errorf("audit scope of comparison %d: %w", comparisonID, err)
	}
	return deciding, rest, nil
}

// NewVerifierAudit replaces a comparison's audit by a new one, running:
// every deciding sample, and the samples of the rest at the positions
// randomOrdinals (ascending, 0-based, in run, problem, sample order; see
// audit.RandomOrdinals). It returns the number of items.
func (s *Store) NewVerifierAudit(ctx context.Context, comparisonID int64, m int, seed uint64, userID int64,
	kept, decidingProblems, randomOrdinals []int64) (int64, error) {
	var n int64
	err := s.WithTx(ctx, func(tx *Store) error {
		// Two starts at once (a double click) replace the audit one after
		// the other instead of colliding on its key.
		if _, err := tx.db.Exec(ctx, `SELECT 1 FROM comparisons WHERE id = $1 FOR UPDATE`, comparisonID); err != nil {
			return fmt.Errorf("replace verifier audit of comparison %d: %w", comparisonID, err)
		}
		if _, err := tx.db.Exec(ctx, `DELETE FROM verifier_audits WHERE comparison_id = $1`, comparisonID); err != nil {
			return fmt.Errorf("replace verifier audit of comparison %d: %w", comparisonID, err)
		}
		if _, err := tx.db.Exec(ctx, `INSERT INTO verifier_audits (comparison_id, m, seed, status, started_by) VALUES ($1, $2, $3, 'running', $4)`,
			comparisonID, m, int64(seed), nullID(userID)); err != nil {
			return fmt.Errorf("new verifier audit of comparison %d: %w", comparisonID, err)
		}
		tag, err := tx.db.Exec(ctx, `INSERT INTO verifier_audit_items (comparison_id, run_id, problem_id, sample_index, stratum,
				reach_status, reach_rule, reach_extracted)
			SELECT $1, run_id, problem_id, sample_index, CASE WHEN deciding THEN 'deciding' ELSE 'random' END, status, rule, extracted
			FROM (SELECT x.*, CASE WHEN x.deciding THEN -1 ELSE
					row_number() OVER (PARTITION BY x.deciding ORDER BY x.run_id, x.problem_id, x.sample_index) - 1 END AS ord
				FROM (`+auditScopeSQL+`) x) y
			WHERE deciding OR ord = ANY($4::bigint[])`, comparisonID, kept, decidingProblems, randomOrdinals)
		if err != nil {
			return fmt.Errorf("choose samples of the verifier audit of comparison %d: %w", comparisonID, err)
		}
		// The chosen samples locked, as a judgment's writer locks its sample
		// (sampleRowTables), then the items of those deleted meanwhile
		// dropped: a delete of them leaves no item behind. Apart from the
		// insert, whose plan reads the whole scope: joining samples there
		// could make it read all of samples.
		locked, err := tx.db.Exec(ctx, `SELECT 1 FROM verifier_audit_items i
				JOIN samples s ON s.run_id = i.run_id AND s.problem_id = i.problem_id AND s.sample_index = i.sample_index
			WHERE i.comparison_id = $1 FOR KEY SHARE OF s`, comparisonID)
		if err != nil {
			return fmt.Errorf("lock the samples of the verifier audit of comparison %d: %w", comparisonID, err)
		}
		n = tag.RowsAffected()
		if locked.RowsAffected() == n {
			return nil // every chosen sample is there
		}
		gone, err := tx.db.Exec(ctx, `DELETE FROM verifier_audit_items i WHERE i.comparison_id = $1 AND NOT EXISTS (SELECT 1 FROM samples s
			WHERE s.run_id = i.run_id AND s.problem_id = i.problem_id AND s.sample_index = i.sample_index)`, comparisonID)
		if err != nil {
			return fmt.Errorf("choose samples of the verifier audit of comparison %d: %w", comparisonID, err)
		}
		n -= gone.RowsAffected()
		return nil
	})
	return n, err
}

// SetAuditStatus sets an audit's status with an error message for
// DebateFailed.
func (s *Store) SetAuditStatus(ctx context.Context, comparisonID int64, status, errText string) error {
	_, err := s.db.Exec(ctx, `UPDATE verifier_audits SET status = $2, error = $3, updated_at = now() WHERE comparison_id = $1`,
		comparisonID, status, errText)
	if err != nil {
		return fmt.Errorf("set verifier audit status of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// NoteAuditRetry sets the message of a running audit (why it waits: a
// judge that does not answer), or clears it with "". An audit that is not
// running keeps its own.
func (s *Store) NoteAuditRetry(ctx context.Context, comparisonID int64, text string) error {
	_, err := s.db.Exec(ctx, `UPDATE verifier_audits SET error = $2 WHERE comparison_id = $1 AND status = 'running' AND error <> $2`,
		comparisonID, text)
	if err != nil {
		return fmt.Errorf("note verifier audit of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// FinishAuditIfDone sets a running audit done when no item is left without
// a verdict or with an error; it reports whether it did.
func (s *Store) FinishAuditIfDone(ctx context.Context, comparisonID int64) (bool, error) {
	tag, err := s.db.Exec(ctx, `UPDATE verifier_audits a SET status = 'done', updated_at = now()
		WHERE a.comparison_id = $1 AND a.status = 'running'
			AND NOT EXISTS (SELECT 1 FROM verifier_audit_items i WHERE i.comparison_id = $1 AND i.verdict IS NULL AND i.error = '')`, comparisonID)
	if err != nil {
		return false, fmt.Errorf("finish verifier audit of comparison %d: %w", comparisonID, err)
	}
	return tag.RowsAffected() > 0, nil
}

// ClearAuditErrors forgets the errors of items without a verdict, so a
// resumed audit asks for them again.
func (s *Store) ClearAuditErrors(ctx context.Context, comparisonID int64) error {
	_, err := s.db.Exec(ctx, `UPDATE verifier_audit_items SET error = '' WHERE comparison_id = $1 AND verdict IS NULL AND error <> ''`, comparisonID)
	if err != nil {
		return fmt.Errorf("clear verifier audit errors of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// AuditWork is one run and problem with audit items still to ask about.
type AuditWork struct{ RunID, ProblemID int64 }

// OpenAuditWork lists the runs and problems with items without a verdict.
func (s *Store) OpenAuditWork(ctx context.Context, comparisonID int64) ([]AuditWork, error) {
	rows, err := s.db.Query(ctx, `SELECT DISTINCT run_id, problem_id FROM verifier_audit_items
		WHERE comparison_id = $1 AND verdict IS NULL ORDER BY run_id, problem_id`, comparisonID)
	if err != nil {
		return nil, fmt.Errorf("open verifier audit work of comparison %d: %w", comparisonID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditWork, error) {
		var w AuditWork
		return w, r.Scan(&w.RunID, &w.ProblemID)
	})
	if err != nil {
		return nil, fmt.Errorf("open verifier audit work of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}

// AuditWorkItems returns the items of one run and problem still without a
// verdict or error, with their completions, in sample order.
func (s *Store) AuditWorkItems(ctx context.Context, comparisonID, runID, problemID int64) ([]WorkItem, error) {
	rows, err := s.db.Query(ctx, `SELECT i.sample_index, s.completion FROM verifier_audit_items i
			JOIN samples s ON s.run_id = i.run_id AND s.problem_id = i.problem_id AND s.sample_index = i.sample_index
		WHERE i.comparison_id = $1 AND i.run_id = $2 AND i.problem_id = $3 AND i.verdict IS NULL AND i.error = ''
		ORDER BY i.sample_index`, comparisonID, runID, problemID)
	return collectItems(rows, err, runID, problemID, "verifier audit")
}

// AuditVerdict is the judge's answer on one audit item: Verdict correct,
// incorrect or unsure with its Reason, or Error.
type AuditVerdict struct {
	ComparisonID, RunID, ProblemID int64
	SampleIndex                    int
	Verdict, Reason, Error         string
	PromptTokens, CompletionTokens int
}

// SaveAuditVerdict stores the judge's answer on one item.
func (s *Store) SaveAuditVerdict(ctx context.Context, v AuditVerdict) error {
	var verdict *string
	if v.Error == "" {
		verdict = &v.Verdict
	}
	_, err := s.db.Exec(ctx, `UPDATE verifier_audit_items SET verdict = $5, reason = $6, error = $7, prompt_tokens = $8, completion_tokens = $9
		WHERE comparison_id = $1 AND run_id = $2 AND problem_id = $3 AND sample_index = $4`,
		v.ComparisonID, v.RunID, v.ProblemID, v.SampleIndex, verdict, clipRunes(v.Reason, 2000), clipRunes(v.Error, 2000),
		v.PromptTokens, v.CompletionTokens)
	if err != nil {
		return fmt.Errorf("save verifier audit verdict of sample %d of run %d problem %d: %w", v.SampleIndex, v.RunID, v.ProblemID, err)
	}
	return nil
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// AddAuditUsage adds tokens and requests to a comparison's audit.
func (s *Store) AddAuditUsage(ctx context.Context, comparisonID, tokensIn, tokensOut, requests int64) error {
	_, err := s.db.Exec(ctx, `UPDATE verifier_audits SET tokens_in = tokens_in + $2, tokens_out = tokens_out + $3,
		requests = requests + $4, updated_at = now() WHERE comparison_id = $1`, comparisonID, tokensIn, tokensOut, requests)
	if err != nil {
		return fmt.Errorf("add verifier audit usage of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// AuditItem is one audited sample as the audit page shows it.
type AuditItem struct {
	RunID       int64
	ModelName   string
	ProblemID   int64
	ProblemKey  string
	SampleIndex int
	Stratum     string
	// ReachStatus, ReachRule, ReachExtracted: Reach's verdict when the
	// audit chose the sample; Status is the sample's verdict now (an
	// accepted judge verdict changes it) and Counted whether it is a solve
	// now under the comparison's grading policy.
	ReachStatus, ReachRule, ReachExtracted string
	Status                                 string
	Counted                                bool
	Verdict                                string // "" until the judge answered
	Reason                                 string
	Error                                  string
	Resolution                             string // "", ResolveReach or ResolveJudge
	ResolvedBy                             string
	ResolvedAt                             *time.Time
	// Completion is the sample's text, filled (up to CompletionShown
	// characters) only for disagreements.
	Completion string
}

// AuditItems lists a comparison's audit items, by model, problem and
// sample; only disagreements (verdict correct or incorrect and contrary to
// Reach's) carry their completion.
func (s *Store) AuditItems(ctx context.Context, comparisonID int64) ([]AuditItem, error) {
	rows, err := s.db.Query(ctx, `SELECT i.run_id, r.model_name, i.problem_id, p.key, i.sample_index, i.stratum,
			i.reach_status, i.reach_rule, i.reach_extracted, s.status, (`+solveSQL+`), COALESCE(i.verdict, ''), i.reason, i.error,
			COALESCE(i.resolution, ''), COALESCE(u.email, ''), i.resolved_at,
			CASE WHEN (i.verdict = 'correct' AND i.reach_status <> 'correct') OR (i.verdict = 'incorrect' AND i.reach_status = 'correct')
				THEN left(s.completion, $3) ELSE '' END
		FROM verifier_audit_items i
			JOIN samples s ON s.run_id = i.run_id AND s.problem_id = i.problem_id AND s.sample_index = i.sample_index
			JOIN runs r ON r.id = i.run_id JOIN problems p ON p.id = i.problem_id JOIN comparisons cmp ON cmp.id = r.comparison_id
			LEFT JOIN users u ON u.id = i.resolved_by
		WHERE i.comparison_id = $1
		ORDER BY r.id, p.idx, i.sample_index`, comparisonID, verify.FallbackRules, CompletionShown)
	if err != nil {
		return nil, fmt.Errorf("verifier audit items of comparison %d: %w", comparisonID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AuditItem, error) {
		var x AuditItem
		return x, r.Scan(&x.RunID, &x.ModelName, &x.ProblemID, &x.ProblemKey, &x.SampleIndex, &x.Stratum,
			&x.ReachStatus, &x.ReachRule, &x.ReachExtracted, &x.Status, &x.Counted, &x.Verdict, &x.Reason, &x.Error,
			&x.Resolution, &x.ResolvedBy, &x.ResolvedAt, &x.Completion)
	})
	if err != nil {
		return nil, fmt.Errorf("verifier audit items of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}

// ResolveAuditItem records a reviewer's choice on a disagreement:
// ResolveReach keeps Reach's verdict; ResolveJudge sets the sample's
// verdict to the judge's through OverrideSample (counts recomputed, audit
// log entry "sample-verdict"). Both are in the audit log
// ("verifier-audit"), all in one transaction. Choosing again replaces the choice: keeping Reach's
// after accepting the judge's sets the sample back to Reach's verdict. An
// item that is not a disagreement, or unknown, gives ErrNotFound.
func (s *Store) ResolveAuditItem(ctx context.Context, comparisonID, runID, problemID int64, idx int, resolution string, userID int64) error {
	if resolution != ResolveReach && resolution != ResolveJudge {
		return fmt.Errorf("resolution %q: want %s or %s", resolution, ResolveReach, ResolveJudge)
	}
	return s.WithTx(ctx, func(tx *Store) error {
		var reach, verdict, old string
		err := tx.db.QueryRow(ctx, `SELECT reach_status, verdict, COALESCE(resolution, '') FROM verifier_audit_items
			WHERE comparison_id = $1 AND run_id = $2 AND problem_id = $3 AND sample_index = $4
				AND ((verdict = 'correct' AND reach_status <> 'correct') OR (verdict = 'incorrect' AND reach_status = 'correct'))
			FOR UPDATE`, comparisonID, runID, problemID, idx).Scan(&reach, &verdict, &old)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("disagreement on sample %d of run %d problem %d: %w", idx, runID, problemID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("disagreement on sample %d of run %d problem %d: %w", idx, runID, problemID, err)
		}
		// The verdict the sample gets: the judge's, or Reach's own back.
		status := verdict
		if resolution == ResolveReach {
			status = reach
		}
		if resolution == ResolveJudge || old == ResolveJudge {
			note := "verifier audit: the judge's verdict accepted"
			if resolution == ResolveReach {
				note = "verifier audit: Reach's verdict kept"
			}
			// In this transaction (OverrideSample's own is a savepoint).
			if _, err := tx.OverrideSample(ctx, SampleOverride{ComparisonID: comparisonID, RunID: runID, ProblemID: problemID,
				SampleIndex: idx, Status: status, UserID: userID, Note: note}); err != nil {
				return err
			}
		}
		if _, err := tx.db.Exec(ctx, `UPDATE verifier_audit_items SET resolution = $5, resolved_by = $6, resolved_at = now()
			WHERE comparison_id = $1 AND run_id = $2 AND problem_id = $3 AND sample_index = $4`,
			comparisonID, runID, problemID, idx, resolution, nullID(userID)); err != nil {
			return fmt.Errorf("resolve disagreement on sample %d of run %d problem %d: %w", idx, runID, problemID, err)
		}
		target, err := tx.sampleTarget(ctx, runID, idx)
		if err != nil {
			return err
		}
		label := map[string]string{ResolveReach: "Reach's verdict kept (" + reach + ")", ResolveJudge: "judge's verdict accepted (" + verdict + ")"}
		return tx.AddAudit(ctx, AuditEntry{UserID: userID, ComparisonID: comparisonID, ProblemID: problemID,
			Action: "verifier-audit", Target: target, Old: label[old], New: label[resolution]})
	})
}
