package store

import (
	"context"
	"fmt"

	"github.com/reach-lab/reach/internal/verify"
)

// ExportSample is one sample as the per-sample export writes it.
type ExportSample struct {
	ProblemID        int64
	ProblemKey       string // the dataset's id, else its 0-based position as text
	ProblemIndex     int    // 0-based position in the dataset
	Model            string
	Role             string // base | rl | checkpoint | distilled
	Step             *int
	SampleIndex      int
	Completion       string
	FinishReason     string
	CompletionTokens int
	Extracted        string // the verdict's extracted answer (the file's when the verdict is the file's)
	Status           string // correct | incorrect | unparseable | pending
	VerdictSource    string // "file", the verifier's name, or "override" for a reviewer's
	Rule             string // the extraction rule that fired ("boxed", "last-number", ...)
	Reason           string
	FileCorrect      *bool  // the file's own verdict, when it had one
	FileExtracted    string // the file's own extracted answer
	// Counted: the sample is a solve under the comparison's grading
	// policy, exactly as AggregateRun counts it into run_counts.c (a
	// correct verdict from a fallback rule or on a truncated math
	// completion is not, under strict).
	Counted bool
	Policy  string // the comparison's grading policy: PolicyStrict or PolicyLenient
}

// EachExportSample calls fn for every sample of a comparison, model by model
// (in the comparison's order), then by problem and sample index, reading
// rows from Postgres as fn consumes them (no whole comparison in memory).
func (s *Store) EachExportSample(ctx context.Context, comparisonID int64, fn func(ExportSample) error) error {
	runs, err := s.db.Query(ctx, `SELECT id FROM runs WHERE comparison_id = $1 ORDER BY position`, comparisonID)
	if err != nil {
		return fmt.Errorf("export runs of comparison %d: %w", comparisonID, err)
	}
	var ids []int64
	for runs.Next() {
		var id int64
		if err := runs.Scan(&id); err != nil {
			runs.Close()
			return err
		}
		ids = append(ids, id)
	}
	runs.Close()
	if err := runs.Err(); err != nil {
		return fmt.Errorf("export runs of comparison %d: %w", comparisonID, err)
	}
	for _, id := range ids {
		rows, err := s.db.Query(ctx, `SELECT p.id, p.key, p.idx, r.model_name, r.role, r.step, s.sample_index, s.completion, s.finish_reason,
				s.completion_tokens, s.extracted, s.status, CASE WHEN s.override_at IS NOT NULL THEN 'override' ELSE s.verdict_source END,
				s.rule, s.reason, s.file_correct, s.file_extracted, `+solveSQL+`, cmp.grading_policy
			FROM samples s JOIN runs r ON r.id = s.run_id JOIN problems p ON p.id = s.problem_id
				JOIN comparisons cmp ON cmp.id = r.comparison_id
			WHERE s.run_id = $1 ORDER BY s.problem_id, s.sample_index`, id, verify.FallbackRules)
		if err != nil {
			return fmt.Errorf("export samples of run %d: %w", id, err)
		}
		for rows.Next() {
			var x ExportSample
			if err := rows.Scan(&x.ProblemID, &x.ProblemKey, &x.ProblemIndex, &x.Model, &x.Role, &x.Step, &x.SampleIndex, &x.Completion, &x.FinishReason,
				&x.CompletionTokens, &x.Extracted, &x.Status, &x.VerdictSource, &x.Rule, &x.Reason, &x.FileCorrect, &x.FileExtracted, &x.Counted, &x.Policy); err != nil {
				rows.Close()
				return fmt.Errorf("export samples of run %d: %w", id, err)
			}
			if x.ProblemKey == "" {
				x.ProblemKey = fmt.Sprint(x.ProblemIndex)
			}
			if err := fn(x); err != nil {
				rows.Close()
				return err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("export samples of run %d: %w", id, err)
		}
	}
	return nil
}

// ExportAnswer is the sample's final answer as store.AnswerSQL gives it
// (the one the page and the answer classes group).
func (x ExportSample) ExportAnswer() string {
	return Sample{Extracted: x.Extracted, FileExtracted: x.FileExtracted}.Answer()
}

// ProblemAnswers is one problem's answer counts over a comparison's runs
// with completion texts (AnswerCounts of every problem at once).
type ProblemAnswers struct {
	Kind   string // the problem's kind: math, choice, code
	Counts []AnswerCount
}

// AnswerCountsOfComparison is AnswerCounts for every problem of a
// comparison, from the runs with completion texts (as the problem page
// shows them), keyed by problem id: one read of run_answers, a few rows per
// problem and run.
func (s *Store) AnswerCountsOfComparison(ctx context.Context, comparisonID int64) (map[int64]*ProblemAnswers, error) {
	rows, err := s.db.Query(ctx, `SELECT a.problem_id, p.kind, a.run_id, a.answer, a.n, a.correct, a.fallback, a.truncated
		FROM run_answers a JOIN runs r ON r.id = a.run_id JOIN problems p ON p.id = a.problem_id
		WHERE r.comparison_id = $1 AND r.has_texts`, comparisonID)
	if err != nil {
		return nil, fmt.Errorf("answers of comparison %d: %w", comparisonID, err)
	}
	defer rows.Close()
	out := map[int64]*ProblemAnswers{}
	for rows.Next() {
		var pid int64
		var kind string
		var a AnswerCount
		if err := rows.Scan(&pid, &kind, &a.RunID, &a.Answer, &a.N, &a.Correct, &a.Fallback, &a.Truncated); err != nil {
			return nil, fmt.Errorf("answers of comparison %d: %w", comparisonID, err)
		}
		pa := out[pid]
		if pa == nil {
			pa = &ProblemAnswers{Kind: kind}
			out[pid] = pa
		}
		pa.Counts = append(pa.Counts, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("answers of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}
