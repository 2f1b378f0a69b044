package jobs

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/store"
)

// ScoreArgs gets the log-probabilities, under the comparison's scoring model
// (the base model), of one run's completions on one problem (those among
// the window of the first max_per_problem samples without a score yet):
// their perplexity under the base model (Yue et al. 2025, arXiv 2504.13837,
// Fig. 6).
type ScoreArgs struct {
	ComparisonID int64 `json:"comparison_id"`
	RunID        int64 `json:"run_id"`
	ProblemID    int64 `json:"problem_id"`
}

// Kind implements river.JobArgs.
func (ScoreArgs) Kind() string { return "score" }

// InsertOpts: see debateOpts.
func (ScoreArgs) InsertOpts() river.InsertOpts { return debateOpts() }

// ScoreWorker works ScoreArgs.
type ScoreWorker struct {
	river.WorkerDefaults[ScoreArgs]
	st      *store.Store
	clients endpointClients
}

// ScoreTemplate returns the prompt a scoring endpoint conditions the
// completions on: its custom text, or a sampling preset (qwen-boxed when
// none is set).
func ScoreTemplate(e store.DebateEndpoint) (sampling.Template, error) {
	if e.Template == "custom" {
		return sampling.Template{Name: "custom", Text: e.TemplateText}, nil
	}
	return sampling.Preset(cmp.Or(e.Template, "qwen-boxed"))
}

// Work renders the problem's prompt, asks the server for its token count
// (the boundary when the server gives no offsets), then scores each sample
// still without a score, several at once, storing each as it comes. Failures
// are handled as JudgeWorker's are.
func (w *ScoreWorker) Work(ctx context.Context, job *river.Job[ScoreArgs]) error {
	a := job.Args
	e, err := debateGate(ctx, w.st, a.ComparisonID, store.PurposeScore)
	if err != nil {
		return err
	}
	items, err := w.st.ScoreItems(ctx, a.RunID, a.ProblemID, e.MaxPerProblem)
	if err != nil {
		return err
	}
	if len(items) == 0 { // done by a job whose worker died before counting it
		return w.st.RecountDebateProgress(ctx, a.ComparisonID, a.RunID, store.PurposeScore, StageScore, e.MaxPerProblem)
	}
	p, err := w.st.GetProblem(ctx, a.ProblemID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	tmpl, err := ScoreTemplate(e)
	if err != nil {
		return failDebate(ctx, w.st, a.ComparisonID, store.PurposeScore, err)
	}
	prompt, err := sampling.Render(tmpl, sampling.PromptData{Problem: p.Statement, Subject: p.Subject, Level: p.Level})
	if err != nil {
		return failDebate(ctx, w.st, a.ComparisonID, store.PurposeScore, err)
	}
	ec, err := w.clients.get(e)
	if err != nil {
		return failDebate(ctx, w.st, a.ComparisonID, store.PurposeScore, err)
	}
	var in, out, reqs, done atomic.Int64
	uctx := context.WithoutCancel(ctx)
	defer func() {
		if uerr := w.st.AddDebateUsage(uctx, a.ComparisonID, store.PurposeScore, in.Load(), out.Load(), reqs.Load(), ec.errorDelta()); uerr != nil {
			slog.Warn("record scoring usage", "comparison", a.ComparisonID, "err", uerr)
		}
		if done.Load() > 0 { // recounted from stored scores (see JudgeWorker)
			if perr := w.st.RecountDebateProgress(uctx, a.ComparisonID, a.RunID, store.PurposeScore, StageScore, e.MaxPerProblem); perr != nil {
				slog.Warn("scoring progress", "run", a.RunID, "err", perr)
			}
		}
	}()
	promptTokens, u, err := ec.c.PromptTokenCount(ctx, e.Method, prompt)
	in.Add(int64(u.PromptTokens))
	reqs.Add(1)
	if err != nil {
		if stopping(err) {
			return failDebate(ctx, w.st, a.ComparisonID, store.PurposeScore, err)
		}
		return err
	}
	last := job.Attempt >= job.MaxAttempts
	var stop stopFlag
	err = forEach(items, cmp.Or(e.Endpoint.MaxConcurrency, 8), func(it store.WorkItem) error {
		if stop.get() != nil || ctx.Err() != nil {
			return ctx.Err()
		}
		x := store.Score{RunID: it.RunID, ProblemID: it.ProblemID, SampleIndex: it.SampleIndex, ScorerModel: e.Endpoint.Model, Method: e.Method}
		res, u, err := ec.c.ScoreCompletion(ctx, e.Method, prompt, it.Completion, promptTokens)
		in.Add(int64(u.PromptTokens))
		out.Add(int64(u.CompletionTokens))
		reqs.Add(1)
		msg, fatal := requestOutcome(ctx, err, last, &stop)
		if fatal != nil {
			return fatal
		}
		if err == nil {
			x.Tokens, x.SumLogprob, x.Perplexity = res.Tokens, res.SumLogprob, res.Perplexity
		}
		x.Error = msg
		if err := w.st.SaveScore(ctx, x); err != nil {
			return err
		}
		done.Add(1)
		return nil
	})
	if s := stop.get(); s != nil {
		return failDebate(ctx, w.st, a.ComparisonID, store.PurposeScore, s)
	}
	return err
}
