package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
)

// StageTokens is the run_progress stage of token scoring.
const StageTokens = "tokens"

// TokenArgs scores one run's completions on one problem token by token under
// both the base model (the comparison's scoring endpoint) and the RL model
// (its tokens endpoint), with each position's top-k alternatives, for the
// token-level divergence of internal/tokendiv ("Sparse but Critical", Meng
// et al. 2026, arXiv 2603.22446). Like ScoreArgs it asks only for what is
// not stored yet, so it resumes where a paused or killed job stopped.
type TokenArgs struct {
	ComparisonID int64 `json:"comparison_id"`
	RunID        int64 `json:"run_id"`
	ProblemID    int64 `json:"problem_id"`
	// Window is the samples per problem and model (the budget), fixed when
	// the job was enqueued.
	Window int `json:"window"`
	// BaseRun, RLRun, Split and Only say what the start covered (progress
	// is recounted over it): see store.TokenWork.
	BaseRun int64 `json:"base_run"`
	RLRun   int64 `json:"rl_run"`
	Split   bool  `json:"split"`
	Only    int64 `json:"only,omitempty"`
}

// Kind implements river.JobArgs.
func (TokenArgs) Kind() string { return "token_score" }

// InsertOpts: see debateOpts.
func (TokenArgs) InsertOpts() river.InsertOpts { return debateOpts() }

// TokenWorker works TokenArgs.
type TokenWorker struct {
	river.WorkerDefaults[TokenArgs]
	st      *store.Store
	clients endpointClients
}

// tokenModel is one of the two models a completion is scored under.
type tokenModel struct {
	role   string
	e      store.DebateEndpoint
	ec     *endpointClient
	prompt int // the prompt's token count under this model's server
}

// Work renders the problem's prompt (the scoring endpoint's template), gets
// its token count from each server, then scores each sample still missing a
// score under either model, several at once, storing each as it comes.
// Usage of both servers is added to the tokens endpoint (the page's token
// cost of this analysis). Failures are handled as ScoreWorker's are.
func (w *TokenWorker) Work(ctx context.Context, job *river.Job[TokenArgs]) error {
	a := job.Args
	e, err := debateGate(ctx, w.st, a.ComparisonID, store.PurposeTokens)
	if err != nil {
		return err
	}
	fail := func(err error) error { return failDebate(ctx, w.st, a.ComparisonID, store.PurposeTokens, err) }
	be, err := w.st.GetDebateEndpoint(ctx, a.ComparisonID, store.PurposeScore)
	if err != nil {
		return fail(fmt.Errorf("the base model's scoring endpoint: %w", err))
	}
	items, err := w.st.TokenItems(ctx, a.RunID, a.ProblemID, a.Window)
	if err != nil {
		return err
	}
	work := a.work()
	if len(items) == 0 {
		return w.st.RecountTokenProgress(ctx, work, a.RunID, StageTokens)
	}
	p, err := w.st.GetProblem(ctx, a.ProblemID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	tmpl, err := ScoreTemplate(be)
	if err != nil {
		return fail(err)
	}
	prompt, err := sampling.Render(tmpl, sampling.PromptData{Problem: p.Statement, Subject: p.Subject, Level: p.Level})
	if err != nil {
		return fail(err)
	}
	models := []*tokenModel{{role: store.RoleBase, e: be}, {role: store.RoleRL, e: e}}
	var in, out, reqs, done atomic.Int64
	uctx := context.WithoutCancel(ctx)
	defer func() {
		errs := map[string]int64{}
		for _, m := range models {
			if m.ec != nil {
				for k, v := range m.ec.errorDelta() {
					errs[k] += v
				}
			}
		}
		if uerr := w.st.AddDebateUsage(uctx, a.ComparisonID, store.PurposeTokens, in.Load(), out.Load(), reqs.Load(), errs); uerr != nil {
			slog.Warn("record token scoring usage", "comparison", a.ComparisonID, "err", uerr)
		}
		if done.Load() > 0 {
			if perr := w.st.RecountTokenProgress(uctx, work, a.RunID, StageTokens); perr != nil {
				slog.Warn("token scoring progress", "run", a.RunID, "err", perr)
			}
		}
	}()
	for _, m := range models {
		if m.ec, err = w.clients.get(m.e); err != nil {
			return fail(err)
		}
		n, u, err := m.ec.c.PromptTokenCount(ctx, m.e.Method, prompt)
		in.Add(int64(u.PromptTokens))
		reqs.Add(1)
		if err != nil {
			if stopping(err) {
				return fail(err)
			}
			return err
		}
		m.prompt = n
	}
	last := job.Attempt >= job.MaxAttempts
	var stop stopFlag
	type task struct {
		it store.TokenItem
		m  *tokenModel
	}
	var tasks []task
	for _, it := range items {
		if !it.HaveBase {
			tasks = append(tasks, task{it, models[0]})
		}
		if !it.HaveRL {
			tasks = append(tasks, task{it, models[1]})
		}
	}
	err = forEach(tasks, cmp.Or(e.Endpoint.MaxConcurrency, 8), func(t task) error {
		if stop.get() != nil || ctx.Err() != nil {
			return ctx.Err()
		}
		x := store.TokenScore{RunID: t.it.RunID, ProblemID: t.it.ProblemID, SampleIndex: t.it.SampleIndex, Role: t.m.role,
			Model: t.m.e.Endpoint.Model, Method: t.m.e.Method}
		res, u, err := t.m.ec.c.ScoreTokens(ctx, t.m.e.Method, prompt, t.it.Completion, t.m.prompt)
		in.Add(int64(u.PromptTokens))
		out.Add(int64(u.CompletionTokens))
		reqs.Add(1)
		msg, fatal := requestOutcome(ctx, err, last, &stop)
		if fatal != nil {
			return fatal
		}
		if err == nil {
			flattenTokenScores(&x, res)
		}
		x.Error = msg
		if err := w.st.SaveTokenScore(ctx, x); err != nil {
			return err
		}
		done.Add(1)
		return nil
	})
	if s := stop.get(); s != nil {
		return fail(s)
	}
	return err
}

func (a TokenArgs) work() store.TokenWork {
	return store.TokenWork{ComparisonID: a.ComparisonID, Window: a.Window, Split: a.Split, BaseRun: a.BaseRun, RLRun: a.RLRun, ProblemID: a.Only}
}

// TokenRLRun is the model token scoring compares with the base model: the
// first model after it that is not a base model (a temperature sweep may
// hold the base model at several temperatures), else the second model.
// c has at least two models.
func TokenRLRun(c store.Comparison) store.Run {
	for _, r := range c.Runs[1:] {
		if r.Role != "base" {
			return r
		}
	}
	return c.Runs[1]
}

// StartTokens starts (or resumes) token scoring of a ready comparison with
// at least two models: the base model (Runs[0]) and the RL model (TokenRLRun)
// samples, the first MaxPerProblem of each problem in the tokens endpoint's
// scope, or of problemID alone when it is not 0. Failed scores are cleared
// so they are tried again. It returns the samples left (0: nothing
// enqueued). Both endpoints must have been tested (their method known).
func StartTokens(ctx context.Context, client *Client, st *store.Store, comparisonID, problemID int64) (int64, error) {
	var left int64
	err := st.WithTx(ctx, func(tx *store.Store) error {
		c, err := tx.GetComparison(ctx, comparisonID)
		if err != nil {
			return err
		}
		if c.Status != store.StatusReady {
			return fmt.Errorf("%w: the comparison is %s; score it once it is ready", ErrWrongState, c.Status)
		}
		if len(c.Runs) < 2 {
			return fmt.Errorf("%w: token divergence needs a base and an RL model", ErrWrongState)
		}
		e, err := tx.GetDebateEndpoint(ctx, comparisonID, store.PurposeTokens)
		if err != nil {
			return err
		}
		be, err := tx.GetDebateEndpoint(ctx, comparisonID, store.PurposeScore)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("%w: set up and test the base model's scoring endpoint (perplexity) first", ErrWrongState)
		}
		if err != nil {
			return err
		}
		if e.Method == "" || be.Method == "" {
			return fmt.Errorf("%w: how the servers give per-token log-probabilities is not known yet: test the RL model's scoring endpoint first", ErrWrongState)
		}
		w := store.TokenWork{ComparisonID: comparisonID, BaseRun: c.Runs[0].ID, RLRun: TokenRLRun(c).ID, Window: e.MaxPerProblem,
			Split: e.Scope != store.TokenScopeAll, ProblemID: problemID}
		if err := tx.ClearTokenErrors(ctx, comparisonID); err != nil {
			return err
		}
		open, err := tx.OpenTokenWork(ctx, w)
		if err != nil {
			return err
		}
		var params []river.InsertManyParams
		for _, o := range open {
			if err := startProgress(ctx, tx, StageTokens, o); err != nil {
				return err
			}
			left += o.Samples
			for _, pid := range o.Problems {
				params = append(params, river.InsertManyParams{Args: TokenArgs{ComparisonID: comparisonID, RunID: o.RunID, ProblemID: pid,
					Window: w.Window, BaseRun: w.BaseRun, RLRun: w.RLRun, Split: w.Split, Only: problemID}})
			}
		}
		if len(params) == 0 {
			return tx.SetDebateStatus(ctx, comparisonID, store.PurposeTokens, store.DebateIdle, "")
		}
		if err := tx.SetDebateStatus(ctx, comparisonID, store.PurposeTokens, store.DebateRunning, ""); err != nil {
			return err
		}
		if _, err := client.InsertManyTx(ctx, tx.Tx(), params); err != nil {
			return fmt.Errorf("enqueue token scoring jobs: %w", err)
		}
		return nil
	})
	return left, err
}

// TestTokenEndpoints detects, on the RL model's endpoint and the base
// model's, how each gives per-token log-probabilities with alternatives
// (sampling.DetectTopLogprobs), stores the methods (the base one on the
// scoring endpoint, for perplexity too) and returns what to show. Errors
// name what the server lacks and are meant to be shown as they are.
func TestTokenEndpoints(ctx context.Context, st *store.Store, box *secret.Box, comparisonID int64) (string, error) {
	e, err := st.GetDebateEndpoint(ctx, comparisonID, store.PurposeTokens)
	if err != nil {
		return "", err
	}
	be, err := st.GetDebateEndpoint(ctx, comparisonID, store.PurposeScore)
	if errors.Is(err, store.ErrNotFound) {
		return "", errors.New("set up the base model's scoring endpoint (perplexity) first: token divergence scores each completion under both")
	}
	if err != nil {
		return "", err
	}
	var notes []string
	for _, x := range []struct {
		who string
		e   store.DebateEndpoint
	}{{"RL model", e}, {"base model", be}} {
		c, err := openEndpoint(box, x.e, true, 0)
		if err != nil {
			return "", err
		}
		method, note, err := c.DetectTopLogprobs(ctx)
		if err != nil {
			return "", fmt.Errorf("%s (%s): %w", x.who, x.e.Endpoint.Model, err)
		}
		if err := st.SetEndpointMethod(ctx, comparisonID, x.e.Purpose, method, note); err != nil {
			return "", err
		}
		notes = append(notes, x.who+": "+note)
	}
	return "Token scoring works. " + strings.Join(notes, "; ") + ".", nil
}

// flattenTokenScores stores res in x: tokens, log-probabilities, and the
// alternatives flattened with a fixed k per position (the most any position
// has), padded with "" and −Inf.
func flattenTokenScores(x *store.TokenScore, res sampling.TokenScores) {
	x.Tokens = res.Tokens
	x.Logprobs = make([]float32, len(res.Logprobs))
	for i, v := range res.Logprobs {
		x.Logprobs[i] = float32(v)
	}
	for _, t := range res.Top {
		x.TopK = max(x.TopK, len(t))
	}
	if x.TopK == 0 {
		return
	}
	x.TopTokens = make([]string, len(res.Top)*x.TopK)
	x.TopLogprobs = make([]float32, len(res.Top)*x.TopK)
	for i, t := range res.Top {
		for j := range x.TopK {
			if j < len(t) {
				x.TopTokens[i*x.TopK+j], x.TopLogprobs[i*x.TopK+j] = t[j].Token, float32(t[j].Logprob)
			} else {
				x.TopLogprobs[i*x.TopK+j] = store.PadLogprob()
			}
		}
	}
}
