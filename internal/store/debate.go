package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/verify"
)

// Review verdicts of an RL-only problem (one only the other model solved):
// the labels Wu et al. 2025 ("The Invisible Leash", arXiv 2507.14843) give
// an apparent expansion of the base model's support, with VerdictVerifierFP
// ("verifier error") and VerdictUnsure shared with base-only reviews.
const (
	VerdictFormatFix   = "format-fix"   // the base model knew the answer but not the format
	VerdictComposition = "composition"  // a composition of sub-skills the base model had
	VerdictNewSolution = "new-solution" // a solution the base model never reaches
)

// RLOnlyVerdicts lists the verdicts of an RL-only problem in display order.
var RLOnlyVerdicts = []string{VerdictFormatFix, VerdictComposition, VerdictNewSolution, VerdictVerifierFP, VerdictUnsure}

// IsReviewVerdict reports whether v is a verdict of a base-only or an
// RL-only review.
func IsReviewVerdict(v string) bool {
	for _, x := range append(ReviewVerdicts[:len(ReviewVerdicts):len(ReviewVerdicts)], RLOnlyVerdicts...) {
		if x == v {
			return true
		}
	}
	return false
}

// Purposes of a comparison's extra endpoints (comparison_endpoints).
const (
	PurposeJudge = "judge" // a judge model grading the reasoning of answer-correct samples
	PurposeScore = "score" // a scoring model (the base model) giving log-probabilities of completions
	// PurposeTokens: the RL model's scoring endpoint, for token-level
	// divergence against the base model's (the PurposeScore endpoint).
	PurposeTokens = "tokens"
)

// Reasoning verdicts of a judge, and labels of a person (valid or flawed only).
const (
	ReasoningValid  = "valid"
	ReasoningFlawed = "flawed"
	ReasoningUnsure = "unsure"
)

// Statuses of an extra endpoint's work (DebateEndpoint.Status).
const (
	DebateIdle    = "idle"
	DebateRunning = "running"
	DebatePaused  = "paused"
	DebateFailed  = "failed"
)

// DebateEndpoint is the judge or the scoring model of a comparison.
type DebateEndpoint struct {
	ComparisonID int64
	Purpose      string // PurposeJudge or PurposeScore
	Endpoint     Endpoint
	// Template and TemplateText: for the judge, the prompt template's name
	// ("default" or "custom") and text; for scoring, the prompt the
	// completions are scored after (a sampling preset, or "custom" + text).
	Template      string
	TemplateText  string
	MaxTokens     int // judge reply budget
	MaxPerProblem int // first N samples per problem and model; 0 = all
	Method        string
	MethodNote    string
	Status        string
	Error         string
	Usage         RunUsage
	UpdatedAt     time.Time
	// Scope (PurposeTokens): whose samples are scored, TokenScopeSplit or
	// TokenScopeAll.
	Scope string
}

// GetDebateEndpoint returns a comparison's judge or scoring endpoint, or
// ErrNotFound.
func (s *Store) GetDebateEndpoint(ctx context.Context, comparisonID int64, purpose string) (DebateEndpoint, error) {
	var e DebateEndpoint
	var found bool
	if err := s.Batch(ctx, s.DebateEndpointInto(comparisonID, purpose, &e, &found)); err != nil {
		return e, err
	}
	if !found {
		return e, fmt.Errorf("%s endpoint of comparison %d: %w", purpose, comparisonID, ErrNotFound)
	}
	return e, nil
}

// DebateEndpointInto queues GetDebateEndpoint's query (Batch): e is the
// endpoint and found whether there is one.
func (s *Store) DebateEndpointInto(comparisonID int64, purpose string, e *DebateEndpoint, found *bool) Queued {
	return func(b *pgx.Batch) {
		*e, *found = DebateEndpoint{ComparisonID: comparisonID, Purpose: purpose}, false
		b.Queue(`SELECT base_url, model, style, api_key_enc, max_concurrency, template, template_text, max_tokens,
			max_per_problem, method, method_note, status, error, tokens_in, tokens_out, requests, errors, started_at, updated_at, scope
		FROM comparison_endpoints WHERE comparison_id = $1 AND purpose = $2`, comparisonID, purpose).QueryRow(func(row pgx.Row) error {
			var errs []byte
			err := row.Scan(&e.Endpoint.BaseURL, &e.Endpoint.Model, &e.Endpoint.Style, &e.Endpoint.APIKeyEnc, &e.Endpoint.MaxConcurrency,
				&e.Template, &e.TemplateText, &e.MaxTokens, &e.MaxPerProblem, &e.Method, &e.MethodNote, &e.Status, &e.Error,
				&e.Usage.TokensIn, &e.Usage.TokensOut, &e.Usage.Requests, &errs, &e.Usage.StartedAt, &e.UpdatedAt, &e.Scope)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s endpoint of comparison %d: %w", purpose, comparisonID, err)
			}
			*found = true
			if len(errs) > 0 {
				_ = json.Unmarshal(errs, &e.Usage.Errors)
			}
			return nil
		})
	}
}

// PutDebateEndpoint stores a comparison's judge or scoring endpoint
// settings. A nil Endpoint.APIKeyEnc keeps the stored key when keepKey is
// set (the form left the key empty), else clears it. Status, usage and the
// detected method are kept, except that a changed base URL or model clears
// the detected method.
func (s *Store) PutDebateEndpoint(ctx context.Context, e DebateEndpoint, keepKey bool) error {
	_, err := s.db.Exec(ctx, `INSERT INTO comparison_endpoints (comparison_id, purpose, base_url, model, style, api_key_enc,
			max_concurrency, template, template_text, max_tokens, max_per_problem)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (comparison_id, purpose) DO UPDATE SET
			method = CASE WHEN comparison_endpoints.base_url = EXCLUDED.base_url AND comparison_endpoints.model = EXCLUDED.model
				THEN comparison_endpoints.method ELSE '' END,
			method_note = CASE WHEN comparison_endpoints.base_url = EXCLUDED.base_url AND comparison_endpoints.model = EXCLUDED.model
				THEN comparison_endpoints.method_note ELSE '' END,
			base_url = EXCLUDED.base_url, model = EXCLUDED.model, style = EXCLUDED.style,
			api_key_enc = CASE WHEN $12 AND EXCLUDED.api_key_enc IS NULL THEN comparison_endpoints.api_key_enc ELSE EXCLUDED.api_key_enc END,
			max_concurrency = EXCLUDED.max_concurrency, template = EXCLUDED.template, template_text = EXCLUDED.template_text,
			max_tokens = EXCLUDED.max_tokens, max_per_problem = EXCLUDED.max_per_problem, updated_at = now()`,
		e.ComparisonID, e.Purpose, e.Endpoint.BaseURL, e.Endpoint.Model, e.Endpoint.Style, e.Endpoint.APIKeyEnc,
		e.Endpoint.MaxConcurrency, e.Template, e.TemplateText, e.MaxTokens, e.MaxPerProblem, keepKey)
	if err != nil {
		return fmt.Errorf("save %s endpoint of comparison %d: %w", e.Purpose, e.ComparisonID, err)
	}
	return nil
}

// SetDebateStatus sets the state of a comparison's judging or scoring
// (DebateIdle, DebateRunning, ...) with an error message for DebateFailed.
// Running for the first time records the start.
func (s *Store) SetDebateStatus(ctx context.Context, comparisonID int64, purpose, status, errText string) error {
	_, err := s.db.Exec(ctx, `UPDATE comparison_endpoints SET status = $3, error = $4, updated_at = now(),
			started_at = CASE WHEN $3 = 'running' THEN COALESCE(started_at, now()) ELSE started_at END
		WHERE comparison_id = $1 AND purpose = $2`, comparisonID, purpose, status, errText)
	if err != nil {
		return fmt.Errorf("set %s status of comparison %d: %w", purpose, comparisonID, err)
	}
	return nil
}

// SetScoreMethod records how the scoring endpoint gives log-probabilities
// (echo or prompt_logprobs) and what the detection found.
func (s *Store) SetScoreMethod(ctx context.Context, comparisonID int64, method, note string) error {
	return s.SetEndpointMethod(ctx, comparisonID, PurposeScore, method, note)
}

// SetEndpointMethod records how a scoring endpoint (PurposeScore or
// PurposeTokens) gives log-probabilities and what the detection found.
func (s *Store) SetEndpointMethod(ctx context.Context, comparisonID int64, purpose, method, note string) error {
	_, err := s.db.Exec(ctx, `UPDATE comparison_endpoints SET method = $2, method_note = $3, updated_at = now()
		WHERE comparison_id = $1 AND purpose = $4`, comparisonID, method, note, purpose)
	if err != nil {
		return fmt.Errorf("set scoring method of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// AddDebateUsage adds tokens, requests and failed attempts by kind to a
// comparison's judge or scoring endpoint.
func (s *Store) AddDebateUsage(ctx context.Context, comparisonID int64, purpose string, tokensIn, tokensOut, requests int64, errs map[string]int64) error {
	e, err := json.Marshal(errs)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(ctx, `UPDATE comparison_endpoints ce SET tokens_in = tokens_in + $3, tokens_out = tokens_out + $4,
			requests = requests + $5,
			errors = (SELECT COALESCE(jsonb_object_agg(k, COALESCE((ce.errors->>k)::bigint, 0) + COALESCE((d->>k)::bigint, 0)), '{}')
				FROM (SELECT $6::jsonb AS d) x, LATERAL (SELECT jsonb_object_keys(ce.errors) UNION SELECT jsonb_object_keys($6::jsonb)) AS keys(k)),
			updated_at = now()
		WHERE comparison_id = $1 AND purpose = $2`, comparisonID, purpose, tokensIn, tokensOut, requests, string(e))
	if err != nil {
		return fmt.Errorf("add %s usage of comparison %d: %w", purpose, comparisonID, err)
	}
	return nil
}

// windowSQL numbers a run's samples on each problem by sample index: the
// first max_per_problem of them (rn <= N) are the ones judged and scored.
const windowSQL = `row_number() OVER (PARTITION BY s.run_id, s.problem_id ORDER BY s.sample_index)`

// WorkItem is one sample to judge or score.
type WorkItem struct {
	RunID       int64
	ProblemID   int64
	SampleIndex int
	Completion  string
}

// JudgeItems returns the samples of one run on one problem that the judge
// still has to grade: answer-correct (as the counts count them) among the
// first window samples (0 = all), without a verdict (never judged, or
// judged with an error), in sample order.
func (s *Store) JudgeItems(ctx context.Context, runID, problemID int64, window int) ([]WorkItem, error) {
	rows, err := s.db.Query(ctx, `SELECT w.sample_index, w.completion FROM (
			SELECT s.sample_index, s.completion, `+solveSQL+` AS solved, `+windowSQL+` AS rn
			FROM samples s JOIN problems p ON p.id = s.problem_id JOIN runs r ON r.id = s.run_id
				JOIN comparisons cmp ON cmp.id = r.comparison_id
			WHERE s.run_id = $1 AND s.problem_id = $3) w
		LEFT JOIN sample_judgments j ON j.run_id = $1 AND j.problem_id = $3 AND j.sample_index = w.sample_index
		WHERE w.solved AND ($4 = 0 OR w.rn <= $4) AND j.verdict IS NULL
		ORDER BY w.sample_index`, runID, verify.FallbackRules, problemID, window)
	return collectItems(rows, err, runID, problemID, "judge")
}

// ScoreItems returns the samples of one run on one problem still to be
// scored: among the first window samples (0 = all), without a score
// (never scored, or scored with an error), in sample order.
func (s *Store) ScoreItems(ctx context.Context, runID, problemID int64, window int) ([]WorkItem, error) {
	rows, err := s.db.Query(ctx, `SELECT w.sample_index, w.completion FROM (
			SELECT s.sample_index, s.completion, `+windowSQL+` AS rn FROM samples s WHERE s.run_id = $1 AND s.problem_id = $2) w
		LEFT JOIN sample_scores sc ON sc.run_id = $1 AND sc.problem_id = $2 AND sc.sample_index = w.sample_index
		WHERE ($3 = 0 OR w.rn <= $3) AND sc.perplexity IS NULL
		ORDER BY w.sample_index`, runID, problemID, window)
	return collectItems(rows, err, runID, problemID, "score")
}

func collectItems(rows pgx.Rows, err error, runID, problemID int64, what string) ([]WorkItem, error) {
	if err != nil {
		return nil, fmt.Errorf("samples to %s of run %d problem %d: %w", what, runID, problemID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (WorkItem, error) {
		w := WorkItem{RunID: runID, ProblemID: problemID}
		return w, r.Scan(&w.SampleIndex, &w.Completion)
	})
	if err != nil {
		return nil, fmt.Errorf("samples to %s of run %d problem %d: %w", what, runID, problemID, err)
	}
	return out, nil
}

// OpenWork is one run's problems that still have samples to judge or
// score, and how many samples.
type OpenWork struct {
	RunID    int64
	Problems []int64
	Samples  int64 // samples still to do
	Total    int64 // samples in the window that are (or were) to do
}

// OpenJudgeWork lists, for each run of a comparison with texts, the
// problems with answer-correct samples in the window that have no verdict
// yet, and counts them; Total counts every answer-correct sample in the window.
func (s *Store) OpenJudgeWork(ctx context.Context, comparisonID int64, window int) ([]OpenWork, error) {
	return s.openWork(ctx, openJudgeSQL, comparisonID, verify.FallbackRules, window, 0)
}

// The open work of a comparison's runs ($4: one run, 0 for all).
const (
	openJudgeSQL = `SELECT w.run_id, w.problem_id, count(*) FILTER (WHERE j.verdict IS NULL), count(*) FROM (
			SELECT s.run_id, s.problem_id, s.sample_index, ` + solveSQL + ` AS solved, ` + windowSQL + ` AS rn
			FROM samples s JOIN problems p ON p.id = s.problem_id JOIN runs r ON r.id = s.run_id
				JOIN comparisons cmp ON cmp.id = r.comparison_id
			WHERE r.comparison_id = $1 AND ($4 = 0 OR s.run_id = $4)) w
		LEFT JOIN sample_judgments j ON j.run_id = w.run_id AND j.problem_id = w.problem_id AND j.sample_index = w.sample_index
		WHERE w.solved AND ($3 = 0 OR w.rn <= $3)
		GROUP BY w.run_id, w.problem_id ORDER BY w.run_id, w.problem_id`
	openScoreSQL = `SELECT w.run_id, w.problem_id, count(*) FILTER (WHERE sc.perplexity IS NULL), count(*) FROM (
			SELECT s.run_id, s.problem_id, s.sample_index, ` + windowSQL + ` AS rn
			FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.comparison_id = $1 AND ($3 = 0 OR s.run_id = $3)) w
		LEFT JOIN sample_scores sc ON sc.run_id = w.run_id AND sc.problem_id = w.problem_id AND sc.sample_index = w.sample_index
		WHERE ($2 = 0 OR w.rn <= $2)
		GROUP BY w.run_id, w.problem_id ORDER BY w.run_id, w.problem_id`
)

// OpenScoreWork is OpenJudgeWork for scoring: every sample in the window,
// correct or not, without a perplexity yet.
func (s *Store) OpenScoreWork(ctx context.Context, comparisonID int64, window int) ([]OpenWork, error) {
	return s.openWork(ctx, openScoreSQL, comparisonID, window, 0)
}

// RecountDebateProgress sets a run's judging (PurposeJudge) or scoring
// progress to what is stored: done = the samples in the window that have a
// stored result (a verdict or perplexity, or an error). A job adds what it did when it ends; one killed
// before that leaves its stored results uncounted, which this corrects.
func (s *Store) RecountDebateProgress(ctx context.Context, comparisonID, runID int64, purpose, stage string, window int) error {
	return s.WithTx(ctx, func(tx *Store) error {
		return tx.recountDebateProgress(ctx, comparisonID, runID, purpose, stage, window)
	})
}

func (s *Store) recountDebateProgress(ctx context.Context, comparisonID, runID int64, purpose, stage string, window int) error {
	// The progress row is locked first, in its own statement, and the
	// results counted after (a new snapshot): two jobs of a run ending at
	// once then count one after the other. Counted before the lock, the
	// one that counted first could write last and leave "2 of 3, done"
	// with all 3 stored (TestScoreJobsAndPerplexity, 1 run in 5).
	if _, err := s.db.Exec(ctx, `SELECT 1 FROM run_progress WHERE run_id = $1 AND stage = $2 FOR UPDATE`, runID, stage); err != nil {
		return fmt.Errorf("lock %s progress of run %d: %w", stage, runID, err)
	}
	var ws []OpenWork
	var err error
	// Done is what has a stored result, a verdict or an error, as a job
	// counts it (Start clears the errors, so there both agree).
	if purpose == PurposeJudge {
		ws, err = s.openWork(ctx, strings.Replace(openJudgeSQL, "j.verdict IS NULL", "j.run_id IS NULL", 1), comparisonID, verify.FallbackRules, window, runID)
	} else {
		ws, err = s.openWork(ctx, strings.Replace(openScoreSQL, "sc.perplexity IS NULL", "sc.run_id IS NULL", 1), comparisonID, window, runID)
	}
	if err != nil || len(ws) == 0 {
		return err
	}
	w := ws[0]
	if _, err := s.db.Exec(ctx, `UPDATE run_progress SET done = $3::bigint, total = $4::bigint,
			status = CASE WHEN $3::bigint >= $4::bigint THEN 'done' ELSE status END, updated_at = now()
		WHERE run_id = $1 AND stage = $2`, runID, stage, w.Total-w.Samples, w.Total); err != nil {
		return fmt.Errorf("%s progress of run %d: %w", stage, runID, err)
	}
	return nil
}

func (s *Store) openWork(ctx context.Context, sql string, comparisonID int64, args ...any) ([]OpenWork, error) {
	rows, err := s.db.Query(ctx, sql, append([]any{comparisonID}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("open work of comparison %d: %w", comparisonID, err)
	}
	defer rows.Close()
	var out []OpenWork
	for rows.Next() {
		var run, pid, open, total int64
		if err := rows.Scan(&run, &pid, &open, &total); err != nil {
			return nil, fmt.Errorf("open work of comparison %d: %w", comparisonID, err)
		}
		if len(out) == 0 || out[len(out)-1].RunID != run {
			out = append(out, OpenWork{RunID: run})
		}
		w := &out[len(out)-1]
		w.Total += total
		if open > 0 {
			w.Problems = append(w.Problems, pid)
			w.Samples += open
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("open work of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}

// Judgment is a judge model's verdict on one sample (Verdict "" with Error
// set when the judge failed on it).
type Judgment struct {
	RunID            int64
	ProblemID        int64
	SampleIndex      int
	Verdict          string
	Reason           string
	Error            string
	JudgeModel       string
	PromptTokens     int
	CompletionTokens int
	JudgedAt         time.Time
}

// SaveJudgment stores (or replaces) a judge's verdict on a sample. A
// sample deleted meanwhile gets none (nor a score, token score or reasoning
// label: see sampleRowTables).
func (s *Store) SaveJudgment(ctx context.Context, j Judgment) error {
	var verdict *string
	if j.Verdict != "" {
		verdict = &j.Verdict
	}
	_, err := s.db.Exec(ctx, `INSERT INTO sample_judgments (run_id, problem_id, sample_index, verdict, reason, error, judge_model,
			prompt_tokens, completion_tokens, judged_at)
		SELECT run_id, problem_id, sample_index, $4::text, $5::text, $6::text, $7::text, $8::int, $9::int, now() `+lockSampleSQL+`
		ON CONFLICT (run_id, problem_id, sample_index) DO UPDATE SET verdict = EXCLUDED.verdict, reason = EXCLUDED.reason,
			error = EXCLUDED.error, judge_model = EXCLUDED.judge_model, prompt_tokens = EXCLUDED.prompt_tokens,
			completion_tokens = EXCLUDED.completion_tokens, judged_at = now()`,
		j.RunID, j.ProblemID, j.SampleIndex, verdict, j.Reason, j.Error, j.JudgeModel, j.PromptTokens, j.CompletionTokens)
	if err != nil {
		return fmt.Errorf("save judgment of run %d problem %d sample %d: %w", j.RunID, j.ProblemID, j.SampleIndex, err)
	}
	return nil
}

// Score is the log-probability of one sample's completion under the
// scoring model (Perplexity 0 with Error set when scoring failed).
type Score struct {
	RunID       int64
	ProblemID   int64
	SampleIndex int
	ScorerModel string
	Method      string
	Tokens      int
	SumLogprob  float64
	Perplexity  float64
	Error       string
}

// SaveScore stores (or replaces) a sample's score.
func (s *Store) SaveScore(ctx context.Context, x Score) error {
	var sum, ppl *float64
	if x.Error == "" {
		sum, ppl = &x.SumLogprob, &x.Perplexity
	}
	_, err := s.db.Exec(ctx, `INSERT INTO sample_scores (run_id, problem_id, sample_index, scorer_model, method, tokens, sum_logprob,
			perplexity, error, scored_at)
		SELECT run_id, problem_id, sample_index, $4::text, $5::text, $6::int, $7::float8, $8::float8, $9::text, now() `+lockSampleSQL+`
		ON CONFLICT (run_id, problem_id, sample_index) DO UPDATE SET scorer_model = EXCLUDED.scorer_model, method = EXCLUDED.method,
			tokens = EXCLUDED.tokens, sum_logprob = EXCLUDED.sum_logprob, perplexity = EXCLUDED.perplexity, error = EXCLUDED.error,
			scored_at = now()`,
		x.RunID, x.ProblemID, x.SampleIndex, x.ScorerModel, x.Method, x.Tokens, sum, ppl, x.Error)
	if err != nil {
		return fmt.Errorf("save score of run %d problem %d sample %d: %w", x.RunID, x.ProblemID, x.SampleIndex, err)
	}
	return nil
}

// ClearJudgeErrors and ClearScoreErrors delete a comparison's failed
// judgments or scores, so that the next start tries those samples again.
func (s *Store) ClearJudgeErrors(ctx context.Context, comparisonID int64) error {
	_, err := s.db.Exec(ctx, `DELETE FROM sample_judgments j USING runs r WHERE r.id = j.run_id AND r.comparison_id = $1
		AND j.verdict IS NULL`, comparisonID)
	if err != nil {
		return fmt.Errorf("clear judge errors of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// ClearScoreErrors: see ClearJudgeErrors.
func (s *Store) ClearScoreErrors(ctx context.Context, comparisonID int64) error {
	_, err := s.db.Exec(ctx, `DELETE FROM sample_scores x USING runs r WHERE r.id = x.run_id AND r.comparison_id = $1
		AND x.perplexity IS NULL`, comparisonID)
	if err != nil {
		return fmt.Errorf("clear score errors of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// CoTCount is one run's reasoning verdicts on one problem, within the
// judge's window (the first max_per_problem samples). Correct counts the
// answer-correct samples (as run_counts.c counts them); of those, Valid
// have valid reasoning (a person's label, else the judge's verdict),
// Flawed flawed, Unsure the judge could not tell (and no person labelled),
// Pending have neither a verdict nor a label (Errors of them because the
// judge failed). Human counts the labels among Correct.
type CoTCount struct {
	RunID, ProblemID                                  int64
	N, Correct, Valid, Flawed, Unsure, Pending, Human int
	Errors                                            int
}

// CoTCounts returns every run's CoTCounts of a comparison for a window of
// the first window samples per problem (0 = all), by run id, in problem id order.
func (s *Store) CoTCounts(ctx context.Context, comparisonID int64, window int) (map[int64][]CoTCount, error) {
	rows, err := s.db.Query(ctx, `SELECT w.run_id, w.problem_id, count(*),
			count(*) FILTER (WHERE w.solved),
			count(*) FILTER (WHERE w.solved AND COALESCE(l.label, j.verdict) = 'valid'),
			count(*) FILTER (WHERE w.solved AND COALESCE(l.label, j.verdict) = 'flawed'),
			count(*) FILTER (WHERE w.solved AND l.label IS NULL AND j.verdict = 'unsure'),
			count(*) FILTER (WHERE w.solved AND l.label IS NULL AND j.verdict IS NULL),
			count(*) FILTER (WHERE w.solved AND l.label IS NOT NULL),
			count(*) FILTER (WHERE w.solved AND l.label IS NULL AND j.verdict IS NULL AND j.error <> '')
		FROM (SELECT s.run_id, s.problem_id, s.sample_index, `+solveSQL+` AS solved, `+windowSQL+` AS rn
			FROM samples s JOIN problems p ON p.id = s.problem_id JOIN runs r ON r.id = s.run_id
				JOIN comparisons cmp ON cmp.id = r.comparison_id
			WHERE r.comparison_id = $1) w
		LEFT JOIN sample_judgments j ON j.run_id = w.run_id AND j.problem_id = w.problem_id AND j.sample_index = w.sample_index
		LEFT JOIN sample_reasoning_labels l ON l.run_id = w.run_id AND l.problem_id = w.problem_id AND l.sample_index = w.sample_index
		WHERE $3 = 0 OR w.rn <= $3
		GROUP BY w.run_id, w.problem_id ORDER BY w.run_id, w.problem_id`, comparisonID, verify.FallbackRules, window)
	if err != nil {
		return nil, fmt.Errorf("reasoning verdicts of comparison %d: %w", comparisonID, err)
	}
	defer rows.Close()
	out := map[int64][]CoTCount{}
	for rows.Next() {
		var x CoTCount
		if err := rows.Scan(&x.RunID, &x.ProblemID, &x.N, &x.Correct, &x.Valid, &x.Flawed, &x.Unsure, &x.Pending, &x.Human, &x.Errors); err != nil {
			return nil, fmt.Errorf("reasoning verdicts of comparison %d: %w", comparisonID, err)
		}
		out[x.RunID] = append(out[x.RunID], x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reasoning verdicts of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}

// Agreement counts the samples of a comparison with both a person's label
// and a judge's verdict: Table[judge][human] with judge in valid, flawed,
// unsure (rows 0-2) and human in valid, flawed (columns 0-1).
type Agreement struct {
	Table [3][2]int
}

// JudgeHumanAgreement returns the agreement table of a comparison.
func (s *Store) JudgeHumanAgreement(ctx context.Context, comparisonID int64) (Agreement, error) {
	var a Agreement
	rows, err := s.db.Query(ctx, `SELECT j.verdict, l.label, count(*) FROM sample_reasoning_labels l
		JOIN sample_judgments j USING (run_id, problem_id, sample_index) JOIN runs r ON r.id = l.run_id
		WHERE r.comparison_id = $1 AND j.verdict IS NOT NULL GROUP BY 1, 2`, comparisonID)
	if err != nil {
		return a, fmt.Errorf("judge-human agreement of comparison %d: %w", comparisonID, err)
	}
	defer rows.Close()
	idx := map[string]int{ReasoningValid: 0, ReasoningFlawed: 1, ReasoningUnsure: 2}
	for rows.Next() {
		var j, h string
		var n int
		if err := rows.Scan(&j, &h, &n); err != nil {
			return a, fmt.Errorf("judge-human agreement of comparison %d: %w", comparisonID, err)
		}
		a.Table[idx[j]][idx[h]] += n
	}
	return a, rows.Err()
}

// ReasoningLabel is a person's label of one sample's reasoning.
type ReasoningLabel struct {
	ComparisonID int64
	RunID        int64
	ProblemID    int64
	SampleIndex  int
	Label        string // ReasoningValid or ReasoningFlawed; "" removes the label
	Note         string
	UserID       int64
	UserEmail    string
	UpdatedAt    time.Time
}

// SetReasoningLabel records (or, with an empty Label, removes) a person's
// label of a sample's reasoning, with its audit entry, in one transaction.
// An unknown sample gives ErrNotFound.
func (s *Store) SetReasoningLabel(ctx context.Context, l ReasoningLabel) error {
	if l.Label != "" && l.Label != ReasoningValid && l.Label != ReasoningFlawed {
		return fmt.Errorf("reasoning label %q: want %s or %s", l.Label, ReasoningValid, ReasoningFlawed)
	}
	return s.WithTx(ctx, func(tx *Store) error {
		var one int
		err := tx.db.QueryRow(ctx, `SELECT 1 `+lockSampleSQL, l.RunID, l.ProblemID, l.SampleIndex).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("sample %d of run %d problem %d: %w", l.SampleIndex, l.RunID, l.ProblemID, ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("reasoning label: %w", err)
		}
		var old string
		err = tx.db.QueryRow(ctx, `SELECT label FROM sample_reasoning_labels WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3 FOR UPDATE`,
			l.RunID, l.ProblemID, l.SampleIndex).Scan(&old)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("reasoning label: %w", err)
		}
		if l.Label == "" {
			_, err = tx.db.Exec(ctx, `DELETE FROM sample_reasoning_labels WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3`,
				l.RunID, l.ProblemID, l.SampleIndex)
		} else {
			_, err = tx.db.Exec(ctx, `INSERT INTO sample_reasoning_labels (run_id, problem_id, sample_index, label, note, user_id, updated_at)
				VALUES ($1, $2, $3, $4, $5, $6, now())
				ON CONFLICT (run_id, problem_id, sample_index) DO UPDATE SET label = EXCLUDED.label, note = EXCLUDED.note,
					user_id = EXCLUDED.user_id, updated_at = now()`, l.RunID, l.ProblemID, l.SampleIndex, l.Label, l.Note, nullID(l.UserID))
		}
		if err != nil {
			return fmt.Errorf("reasoning label: %w", err)
		}
		target, err := tx.sampleTarget(ctx, l.RunID, l.SampleIndex)
		if err != nil {
			return err
		}
		return tx.AddAudit(ctx, AuditEntry{UserID: l.UserID, ComparisonID: l.ComparisonID, ProblemID: l.ProblemID, Action: "reasoning-label",
			Target: target, Old: old, New: l.Label, Note: l.Note})
	})
}

// SampleKey names one sample of a problem: its run and index.
type SampleKey struct {
	RunID       int64
	SampleIndex int
}

// ReasoningForProblem returns the judge's verdicts, the people's labels and
// the scores of every sample of a comparison's runs on one problem.
func (s *Store) ReasoningForProblem(ctx context.Context, comparisonID, problemID int64) (map[SampleKey]Judgment, map[SampleKey]ReasoningLabel, map[SampleKey]Score, error) {
	var r Reasoning
	err := s.Batch(ctx, s.ReasoningInto(comparisonID, problemID, &r))
	return r.Judgments, r.Labels, r.Scores, err
}

// Reasoning is what ReasoningForProblem returns, for ReasoningInto.
type Reasoning struct {
	Judgments map[SampleKey]Judgment
	Labels    map[SampleKey]ReasoningLabel
	Scores    map[SampleKey]Score
}

// ReasoningInto queues ReasoningForProblem's queries (three) with r as the
// result.
func (s *Store) ReasoningInto(comparisonID, problemID int64, r *Reasoning) Queued {
	return func(b *pgx.Batch) {
		*r = Reasoning{Judgments: map[SampleKey]Judgment{}, Labels: map[SampleKey]ReasoningLabel{}, Scores: map[SampleKey]Score{}}
		b.Queue(`SELECT j.run_id, j.sample_index, COALESCE(j.verdict, ''), j.reason, j.error, j.judge_model, j.judged_at
			FROM sample_judgments j JOIN runs r ON r.id = j.run_id WHERE r.comparison_id = $1 AND j.problem_id = $2`, comparisonID, problemID).
			Query(func(rows pgx.Rows) error {
				_, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct{}, error) {
					j := Judgment{ProblemID: problemID}
					err := row.Scan(&j.RunID, &j.SampleIndex, &j.Verdict, &j.Reason, &j.Error, &j.JudgeModel, &j.JudgedAt)
					r.Judgments[SampleKey{j.RunID, j.SampleIndex}] = j
					return struct{}{}, err
				})
				if err != nil {
					return fmt.Errorf("judgments of problem %d: %w", problemID, err)
				}
				return nil
			})
		b.Queue(`SELECT l.run_id, l.sample_index, l.label, l.note, COALESCE(l.user_id, 0), COALESCE(u.email, ''), l.updated_at
			FROM sample_reasoning_labels l JOIN runs r ON r.id = l.run_id LEFT JOIN users u ON u.id = l.user_id
			WHERE r.comparison_id = $1 AND l.problem_id = $2`, comparisonID, problemID).
			Query(func(rows pgx.Rows) error {
				_, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct{}, error) {
					l := ReasoningLabel{ComparisonID: comparisonID, ProblemID: problemID}
					err := row.Scan(&l.RunID, &l.SampleIndex, &l.Label, &l.Note, &l.UserID, &l.UserEmail, &l.UpdatedAt)
					r.Labels[SampleKey{l.RunID, l.SampleIndex}] = l
					return struct{}{}, err
				})
				if err != nil {
					return fmt.Errorf("reasoning labels of problem %d: %w", problemID, err)
				}
				return nil
			})
		b.Queue(`SELECT x.run_id, x.sample_index, x.scorer_model, x.method, x.tokens, COALESCE(x.sum_logprob, 0),
				COALESCE(x.perplexity, 0), x.error
			FROM sample_scores x JOIN runs r ON r.id = x.run_id WHERE r.comparison_id = $1 AND x.problem_id = $2`, comparisonID, problemID).
			Query(func(rows pgx.Rows) error {
				_, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (struct{}, error) {
					x := Score{ProblemID: problemID}
					err := row.Scan(&x.RunID, &x.SampleIndex, &x.ScorerModel, &x.Method, &x.Tokens, &x.SumLogprob, &x.Perplexity, &x.Error)
					r.Scores[SampleKey{x.RunID, x.SampleIndex}] = x
					return struct{}{}, err
				})
				if err != nil {
					return fmt.Errorf("scores of problem %d: %w", problemID, err)
				}
				return nil
			})
	}
}

// PerplexityGroup is the perplexities of one run's scored samples that are
// correct (or not): their quartiles (Postgres percentile_cont, the same
// type-7 quantiles as R's default), mean and count.
type PerplexityGroup struct {
	RunID                    int64
	Correct                  bool
	N                        int
	Min, Q1, Median, Q3, Max float64
	Mean                     float64
	ScorerModel              string
	Failed                   int // samples whose scoring failed
}

// PerplexityGroups summarises a comparison's scored samples by run and
// correctness, over the problems in problemIDs (nil = all). Correctness is
// the counts' (the grading policy's) solve.
func (s *Store) PerplexityGroups(ctx context.Context, comparisonID int64, problemIDs []int64) ([]PerplexityGroup, error) {
	rows, err := s.db.Query(ctx, `SELECT s.run_id, `+solveSQL+` AS solved,
			count(x.perplexity), COALESCE(min(x.perplexity), 0),
			COALESCE(percentile_cont(0.25) WITHIN GROUP (ORDER BY x.perplexity), 0),
			COALESCE(percentile_cont(0.5) WITHIN GROUP (ORDER BY x.perplexity), 0),
			COALESCE(percentile_cont(0.75) WITHIN GROUP (ORDER BY x.perplexity), 0),
			COALESCE(max(x.perplexity), 0), COALESCE(avg(x.perplexity), 0), COALESCE(min(x.scorer_model), ''),
			count(*) FILTER (WHERE x.perplexity IS NULL)
		FROM sample_scores x JOIN samples s USING (run_id, problem_id, sample_index)
			JOIN problems p ON p.id = s.problem_id JOIN runs r ON r.id = s.run_id JOIN comparisons cmp ON cmp.id = r.comparison_id
		WHERE r.comparison_id = $1 AND ($3::bigint[] IS NULL OR s.problem_id = ANY($3))
		GROUP BY s.run_id, solved ORDER BY s.run_id, solved DESC`, comparisonID, verify.FallbackRules, problemIDs)
	if err != nil {
		return nil, fmt.Errorf("perplexities of comparison %d: %w", comparisonID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (PerplexityGroup, error) {
		var g PerplexityGroup
		err := r.Scan(&g.RunID, &g.Correct, &g.N, &g.Min, &g.Q1, &g.Median, &g.Q3, &g.Max, &g.Mean, &g.ScorerModel, &g.Failed)
		return g, err
	})
	if err != nil {
		return nil, fmt.Errorf("perplexities of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}

// FirstSolvedSample returns one answer-correct sample of a comparison (of
// the first run and problem that has one): what "Test the judge" sends.
func (s *Store) FirstSolvedSample(ctx context.Context, comparisonID int64) (WorkItem, error) {
	var w WorkItem
	err := s.db.QueryRow(ctx, `SELECT s.run_id, s.problem_id, s.sample_index, s.completion
		FROM samples s JOIN problems p ON p.id = s.problem_id JOIN runs r ON r.id = s.run_id JOIN comparisons cmp ON cmp.id = r.comparison_id
		WHERE r.comparison_id = $1 AND `+solveSQL+`
		ORDER BY r.position, p.idx, s.sample_index LIMIT 1`, comparisonID, verify.FallbackRules).Scan(&w.RunID, &w.ProblemID, &w.SampleIndex, &w.Completion)
	if errors.Is(err, pgx.ErrNoRows) {
		return w, fmt.Errorf("no answer-correct sample with text in comparison %d: %w", comparisonID, ErrNotFound)
	}
	if err != nil {
		return w, fmt.Errorf("a solved sample of comparison %d: %w", comparisonID, err)
	}
	return w, nil
}
