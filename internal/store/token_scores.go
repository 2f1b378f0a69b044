package store

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/verify"
)

// Token-level scoring (issue 26): each sample's completion scored token by
// token under the base model and the RL model, one row per sample and model
// (sample_token_scores), arrays rather than one row per token.

// Scopes of token scoring (DebateEndpoint.Scope).
const (
	TokenScopeSplit = "split" // samples of the problems only one of base and RL solves
	TokenScopeAll   = "all"   // samples of every problem
)

// Roles of a token score: the model the completion was scored under.
const (
	RoleBase = "base"
	RoleRL   = "rl"
)

// TokenScore is one completion scored token by token under one model.
// TopTokens and TopLogprobs hold TopK alternatives per position, flattened
// (position i at i*TopK …), padded with "" and −Inf.
type TokenScore struct {
	RunID       int64
	ProblemID   int64
	SampleIndex int
	Role        string
	Model       string
	Method      string
	Tokens      []string
	Logprobs    []float32
	TopK        int
	TopTokens   []string
	TopLogprobs []float32
	Error       string
}

// SaveTokenScore stores (or replaces) one sample's token score under one
// model; a sample deleted meanwhile gets none (see sampleRowTables).
func (s *Store) SaveTokenScore(ctx context.Context, x TokenScore) error {
	for _, p := range []*[]string{&x.Tokens, &x.TopTokens} {
		if *p == nil {
			*p = []string{}
		}
	}
	for _, p := range []*[]float32{&x.Logprobs, &x.TopLogprobs} {
		if *p == nil {
			*p = []float32{}
		}
	}
	_, err := s.db.Exec(ctx, `INSERT INTO sample_token_scores (run_id, problem_id, sample_index, role, model, method, tokens, logprobs,
			top_k, top_tokens, top_logprobs, error, scored_at)
		SELECT run_id, problem_id, sample_index, $4::text, $5::text, $6::text, $7::text[], $8::real[], $9::int, $10::text[], $11::real[], $12::text, now()
			`+lockSampleSQL+`
		ON CONFLICT (run_id, problem_id, sample_index, role) DO UPDATE SET model = EXCLUDED.model, method = EXCLUDED.method,
			tokens = EXCLUDED.tokens, logprobs = EXCLUDED.logprobs, top_k = EXCLUDED.top_k, top_tokens = EXCLUDED.top_tokens,
			top_logprobs = EXCLUDED.top_logprobs, error = EXCLUDED.error, scored_at = now()`,
		x.RunID, x.ProblemID, x.SampleIndex, x.Role, x.Model, x.Method, x.Tokens, x.Logprobs, x.TopK, x.TopTokens, x.TopLogprobs, x.Error)
	if err != nil {
		return fmt.Errorf("save token score of run %d problem %d sample %d (%s): %w", x.RunID, x.ProblemID, x.SampleIndex, x.Role, err)
	}
	return nil
}

// TokenItem is a sample to score token by token, with the models it
// already has a stored score under.
type TokenItem struct {
	WorkItem
	HaveBase, HaveRL bool
}

// TokenItems returns the samples of one run on one problem among the first
// window (0 = all) that lack a token score under the base or the RL model,
// in sample order.
func (s *Store) TokenItems(ctx context.Context, runID, problemID int64, window int) ([]TokenItem, error) {
	rows, err := s.db.Query(ctx, `SELECT w.sample_index, w.completion,
			EXISTS (SELECT 1 FROM sample_token_scores t WHERE t.run_id = $1 AND t.problem_id = $2 AND t.sample_index = w.sample_index AND t.role = 'base'),
			EXISTS (SELECT 1 FROM sample_token_scores t WHERE t.run_id = $1 AND t.problem_id = $2 AND t.sample_index = w.sample_index AND t.role = 'rl')
		FROM (SELECT s.sample_index, s.completion, `+windowSQL+` AS rn FROM samples s WHERE s.run_id = $1 AND s.problem_id = $2) w
		WHERE ($3 = 0 OR w.rn <= $3)
		ORDER BY w.sample_index`, runID, problemID, window)
	if err != nil {
		return nil, fmt.Errorf("samples to score by token of run %d problem %d: %w", runID, problemID, err)
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TokenItem, error) {
		it := TokenItem{WorkItem: WorkItem{RunID: runID, ProblemID: problemID}}
		return it, r.Scan(&it.SampleIndex, &it.Completion, &it.HaveBase, &it.HaveRL)
	})
	if err != nil {
		return nil, fmt.Errorf("samples to score by token of run %d problem %d: %w", runID, problemID, err)
	}
	var out []TokenItem
	for _, it := range all {
		if !it.HaveBase || !it.HaveRL {
			out = append(out, it)
		}
	}
	return out, nil
}

// openTokenSQL: $1 comparison, $2 window, $3 one run (0: all), $4 base run,
// $5 RL run, $6 split scope, $7 one problem (0: the scope's). A sample is
// open while it lacks a stored score (any, an error too: start clears
// errors) under either model.
const openTokenSQL = `SELECT w.run_id, w.problem_id, count(*) FILTER (WHERE w.stored < 2), count(*) FROM (
		SELECT s.run_id, s.problem_id, s.sample_index, ` + windowSQL + ` AS rn,
			(SELECT count(*) FROM sample_token_scores t WHERE t.run_id = s.run_id AND t.problem_id = s.problem_id
				AND t.sample_index = s.sample_index) AS stored
		FROM samples s JOIN runs r ON r.id = s.run_id
		WHERE r.comparison_id = $1 AND s.run_id IN ($4, $5) AND ($3 = 0 OR s.run_id = $3)
			AND ($7 = 0 OR s.problem_id = $7)
			AND ($7 <> 0 OR NOT $6 OR s.problem_id IN (SELECT b.problem_id FROM run_counts b
				JOIN run_counts x ON x.problem_id = b.problem_id AND x.run_id = $5 WHERE b.run_id = $4 AND (b.c > 0) <> (x.c > 0)))) w
	WHERE ($2 = 0 OR w.rn <= $2)
	GROUP BY w.run_id, w.problem_id ORDER BY w.run_id, w.problem_id`

// TokenWork selects the samples token scoring covers: the base and RL runs'
// first window samples (0 = all) of each problem in scope (split: those only
// one of the two solves; all), or of problemID alone when it is not 0.
type TokenWork struct {
	ComparisonID, BaseRun, RLRun int64
	Window                       int
	Split                        bool
	ProblemID                    int64
}

// OpenTokenWork lists per run the problems with samples still to score by
// token, as OpenScoreWork does.
func (s *Store) OpenTokenWork(ctx context.Context, w TokenWork) ([]OpenWork, error) {
	return s.openWork(ctx, openTokenSQL, w.ComparisonID, w.Window, 0, w.BaseRun, w.RLRun, w.Split, w.ProblemID)
}

// RecountTokenProgress sets a run's token-scoring progress (stage) to what
// is stored.
func (s *Store) RecountTokenProgress(ctx context.Context, w TokenWork, runID int64, stage string) error {
	ws, err := s.openWork(ctx, openTokenSQL, w.ComparisonID, w.Window, runID, w.BaseRun, w.RLRun, w.Split, w.ProblemID)
	if err != nil || len(ws) == 0 {
		return err
	}
	x := ws[0]
	if _, err := s.db.Exec(ctx, `UPDATE run_progress SET done = $3::bigint, total = $4::bigint,
			status = CASE WHEN $3::bigint >= $4::bigint THEN 'done' ELSE status END, updated_at = now()
		WHERE run_id = $1 AND stage = $2`, runID, stage, x.Total-x.Samples, x.Total); err != nil {
		return fmt.Errorf("%s progress of run %d: %w", stage, runID, err)
	}
	return nil
}

// ClearTokenErrors deletes a comparison's failed token scores, so that the
// next start tries them again.
func (s *Store) ClearTokenErrors(ctx context.Context, comparisonID int64) error {
	_, err := s.db.Exec(ctx, `DELETE FROM sample_token_scores x USING runs r WHERE r.id = x.run_id AND r.comparison_id = $1
		AND x.error <> ''`, comparisonID)
	if err != nil {
		return fmt.Errorf("clear token score errors of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// SetTokenScope sets the scope of a comparison's token scoring.
func (s *Store) SetTokenScope(ctx context.Context, comparisonID int64, scope string) error {
	_, err := s.db.Exec(ctx, `UPDATE comparison_endpoints SET scope = $2 WHERE comparison_id = $1 AND purpose = 'tokens'`, comparisonID, scope)
	if err != nil {
		return fmt.Errorf("set token scope of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// TokenPair is one sample's token scores under both models (nil where
// missing), with whether the sample counts as solved.
type TokenPair struct {
	RunID       int64
	ProblemID   int64
	SampleIndex int
	Correct     bool
	Base, RL    *TokenScore
}

// TokenPairs returns the token-scored samples of a comparison (problemID 0:
// every problem), in run, problem and sample order; withTop also loads the
// alternatives (the token view needs them, the aggregates do not). limit
// caps the samples (0: no cap).
func (s *Store) TokenPairs(ctx context.Context, comparisonID, problemID int64, withTop bool, limit int) ([]TokenPair, error) {
	top := `'{}'::text[], '{}'::real[]`
	if withTop {
		top = `t.top_tokens, t.top_logprobs`
	}
	rows, err := s.db.Query(ctx, `SELECT s.run_id, s.problem_id, s.sample_index, `+solveSQL+`, t.role, t.model, t.method, t.tokens, t.logprobs,
			t.top_k, `+top+`, t.error
		FROM sample_token_scores t JOIN samples s USING (run_id, problem_id, sample_index)
			JOIN problems p ON p.id = s.problem_id JOIN runs r ON r.id = s.run_id JOIN comparisons cmp ON cmp.id = r.comparison_id
		WHERE r.comparison_id = $1 AND ($3 = 0 OR s.problem_id = $3)
			AND ($4 = 0 OR (s.run_id, s.problem_id, s.sample_index) IN (SELECT DISTINCT run_id, problem_id, sample_index
				FROM sample_token_scores t2 JOIN runs r2 ON r2.id = t2.run_id WHERE r2.comparison_id = $1 AND ($3 = 0 OR t2.problem_id = $3)
				ORDER BY run_id, problem_id, sample_index LIMIT $4))
		ORDER BY r.position, s.problem_id, s.sample_index, t.role`, comparisonID, verify.FallbackRules, problemID, limit)
	if err != nil {
		return nil, fmt.Errorf("token scores of comparison %d: %w", comparisonID, err)
	}
	defer rows.Close()
	var out []TokenPair
	for rows.Next() {
		var p TokenPair
		x := &TokenScore{}
		if err := rows.Scan(&p.RunID, &p.ProblemID, &p.SampleIndex, &p.Correct, &x.Role, &x.Model, &x.Method, &x.Tokens, &x.Logprobs,
			&x.TopK, &x.TopTokens, &x.TopLogprobs, &x.Error); err != nil {
			return nil, fmt.Errorf("token scores of comparison %d: %w", comparisonID, err)
		}
		x.RunID, x.ProblemID, x.SampleIndex = p.RunID, p.ProblemID, p.SampleIndex
		if n := len(out); n == 0 || out[n-1].RunID != p.RunID || out[n-1].ProblemID != p.ProblemID || out[n-1].SampleIndex != p.SampleIndex {
			out = append(out, p)
		}
		if x.Role == RoleBase {
			out[len(out)-1].Base = x
		} else {
			out[len(out)-1].RL = x
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("token scores of comparison %d: %w", comparisonID, err)
	}
	return out, nil
}

// TokenPair loads one sample's token scores with their alternatives.
func (s *Store) TokenPair(ctx context.Context, runID, problemID int64, sampleIndex int) (TokenPair, error) {
	p := TokenPair{RunID: runID, ProblemID: problemID, SampleIndex: sampleIndex}
	rows, err := s.db.Query(ctx, `SELECT role, model, method, tokens, logprobs, top_k, top_tokens, top_logprobs, error
		FROM sample_token_scores WHERE run_id = $1 AND problem_id = $2 AND sample_index = $3`, runID, problemID, sampleIndex)
	if err != nil {
		return p, fmt.Errorf("token scores of run %d problem %d sample %d: %w", runID, problemID, sampleIndex, err)
	}
	defer rows.Close()
	for rows.Next() {
		x := &TokenScore{RunID: runID, ProblemID: problemID, SampleIndex: sampleIndex}
		if err := rows.Scan(&x.Role, &x.Model, &x.Method, &x.Tokens, &x.Logprobs, &x.TopK, &x.TopTokens, &x.TopLogprobs, &x.Error); err != nil {
			return p, fmt.Errorf("token scores of run %d problem %d sample %d: %w", runID, problemID, sampleIndex, err)
		}
		if x.Role == RoleBase {
			p.Base = x
		} else {
			p.RL = x
		}
	}
	return p, rows.Err()
}

// Padding of the flattened alternatives.
var padLogprob = float32(math.Inf(-1))

// PadLogprob is the log-probability of a padding slot in TopLogprobs.
func PadLogprob() float32 { return padLogprob }

// TokenScoredSample is one sample of a problem with token scores, for the
// problem page's list.
type TokenScoredSample struct {
	RunID       int64
	SampleIndex int
	Correct     bool
	Tokens      int    // positions scored (under the base model)
	Models      int    // models it was scored under without an error (2: comparable)
	Error       string // the first error, if any
}

// TokenScoredSamplesInto queues the listing of a problem's samples with
// token scores in comparison comparisonID, whose runs are runs (ids; the
// comparison's, all of them), in run and sample order (arrays are not
// read), and whether the comparison's RL scoring endpoint is set up, for
// the problem page's round trips (Batch). The runs' ids go into the query
// literally so that Postgres plans only their partitions of samples:
// reached through runs, it planned every partition (3.5 ms at 29 runs).
func (s *Store) TokenScoredSamplesInto(comparisonID int64, runs []int64, problemID int64, out *[]TokenScoredSample, setUp *bool) Queued {
	return func(b *pgx.Batch) {
		if len(runs) > 0 {
			ids := make([]string, len(runs))
			for i, id := range runs {
				ids[i] = strconv.FormatInt(id, 10)
			}
			in := strings.Join(ids, ",")
			b.Queue(`SELECT s.run_id, s.sample_index, `+solveSQL+`,
				COALESCE(max(cardinality(t.logprobs)) FILTER (WHERE t.role = 'base'), 0), count(*) FILTER (WHERE t.error = ''),
				COALESCE(min(NULLIF(t.error, '')), '')
			FROM sample_token_scores t JOIN samples s USING (run_id, problem_id, sample_index)
				JOIN problems p ON p.id = s.problem_id JOIN runs r ON r.id = s.run_id JOIN comparisons cmp ON cmp.id = r.comparison_id
			WHERE r.comparison_id = $1 AND s.problem_id = $3 AND s.run_id IN (`+in+`) AND t.run_id IN (`+in+`)
			GROUP BY s.run_id, s.sample_index, r.position, s.status, cmp.grading_policy, s.override_at, s.verdict_source, s.rule,
				s.finish_reason, p.kind
			ORDER BY r.position, s.sample_index`, comparisonID, verify.FallbackRules, problemID).
				Query(func(rows pgx.Rows) error {
					var err error
					*out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (TokenScoredSample, error) {
						var x TokenScoredSample
						return x, r.Scan(&x.RunID, &x.SampleIndex, &x.Correct, &x.Tokens, &x.Models, &x.Error)
					})
					if err != nil {
						return fmt.Errorf("token-scored samples of problem %d: %w", problemID, err)
					}
					return nil
				})
		}
		b.Queue(`SELECT EXISTS (SELECT 1 FROM comparison_endpoints WHERE comparison_id = $1 AND purpose = 'tokens')`, comparisonID).
			QueryRow(func(row pgx.Row) error {
				if err := row.Scan(setUp); err != nil {
					return fmt.Errorf("token endpoint of comparison %d: %w", comparisonID, err)
				}
				return nil
			})
	}
}
