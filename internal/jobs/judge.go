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

// JudgeArgs asks the comparison's judge model about the reasoning of one
// run's answer-correct samples on one problem (those among the judge's
// window of the first max_per_problem samples that have no verdict yet),
// for CoT-pass@k (Wen et al. 2025, arXiv 2506.14245).
type JudgeArgs struct {
	ComparisonID int64 `json:"comparison_id"`
	RunID        int64 `json:"run_id"`
	ProblemID    int64 `json:"problem_id"`
}

// Kind implements river.JobArgs.
func (JudgeArgs) Kind() string { return "judge" }

// InsertOpts: see debateOpts.
func (JudgeArgs) InsertOpts() river.InsertOpts { return debateOpts() }

// JudgeWorker works JudgeArgs.
type JudgeWorker struct {
	river.WorkerDefaults[JudgeArgs]
	st      *store.Store
	clients endpointClients
}

// JudgeTemplate returns the judge prompt template an endpoint uses: its own
// text when it has one, else sampling.DefaultJudgeTemplate.
func JudgeTemplate(e store.DebateEndpoint) sampling.Template {
	if e.Template == "custom" && e.TemplateText != "" {
		return sampling.Template{Name: "custom", Text: e.TemplateText}
	}
	return sampling.Template{Name: "default", Text: sampling.DefaultJudgeTemplate}
}

// Work asks the judge about each sample still without a verdict, several at
// once (up to the endpoint's concurrency), and stores each verdict as it
// comes. A sample the judge cannot answer usefully (its reply has no
// verdict line, the prompt is too long, the server refuses that request) is
// stored as an error; a failure of the endpoint as a whole (credentials,
// unknown model) stops judging with the message; transient failures that
// outlast the client's retries fail the job, which River retries, and on
// its last attempt they are stored as errors.
func (w *JudgeWorker) Work(ctx context.Context, job *river.Job[JudgeArgs]) error {
	a := job.Args
	e, err := debateGate(ctx, w.st, a.ComparisonID, store.PurposeJudge)
	if err != nil {
		return err
	}
	items, err := w.st.JudgeItems(ctx, a.RunID, a.ProblemID, e.MaxPerProblem)
	if err != nil {
		return err
	}
	if len(items) == 0 { // done by a job whose worker died before counting it
		return w.st.RecountDebateProgress(ctx, a.ComparisonID, a.RunID, store.PurposeJudge, StageJudge, e.MaxPerProblem)
	}
	p, err := w.st.GetProblem(ctx, a.ProblemID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	ec, err := w.clients.get(e)
	if err != nil {
		return failDebate(ctx, w.st, a.ComparisonID, store.PurposeJudge, err)
	}
	tmpl := JudgeTemplate(e)
	last := job.Attempt >= job.MaxAttempts
	var in, out, reqs, done atomic.Int64
	var stop stopFlag
	err = forEach(items, cmp.Or(e.Endpoint.MaxConcurrency, 8), func(it store.WorkItem) error {
		if stop.get() != nil || ctx.Err() != nil {
			return ctx.Err()
		}
		j := store.Judgment{RunID: it.RunID, ProblemID: it.ProblemID, SampleIndex: it.SampleIndex, JudgeModel: e.Endpoint.Model}
		prompt, err := sampling.RenderJudge(tmpl, sampling.JudgeData{Problem: p.Statement, Reference: p.Reference,
			Completion: it.Completion, Subject: p.Subject, Level: p.Level})
		if err != nil {
			j.Error = err.Error()
			return w.save(ctx, j, &done)
		}
		res, err := ec.c.Judge(ctx, prompt, cmp.Or(e.MaxTokens, 512))
		in.Add(int64(res.Usage.PromptTokens))
		out.Add(int64(res.Usage.CompletionTokens))
		reqs.Add(1)
		j.PromptTokens, j.CompletionTokens = res.Usage.PromptTokens, res.Usage.CompletionTokens
		msg, fatal := requestOutcome(ctx, err, last, &stop)
		if fatal != nil {
			return fatal
		}
		if err == nil {
			j.Verdict, j.Reason = res.Verdict, res.Reason
		}
		j.Error = msg
		return w.save(ctx, j, &done)
	})
	uctx := context.WithoutCancel(ctx)
	if uerr := w.st.AddDebateUsage(uctx, a.ComparisonID, store.PurposeJudge, in.Load(), out.Load(), reqs.Load(), ec.errorDelta()); uerr != nil {
		slog.Warn("record judge usage", "comparison", a.ComparisonID, "err", uerr)
	}
	if done.Load() > 0 {
		// Recounted from stored verdicts, not added: a job killed before
		// this point left its verdicts uncounted.
		if perr := w.st.RecountDebateProgress(uctx, a.ComparisonID, a.RunID, store.PurposeJudge, StageJudge, e.MaxPerProblem); perr != nil {
			slog.Warn("judge progress", "run", a.RunID, "err", perr)
		}
	}
	if s := stop.get(); s != nil {
		return failDebate(ctx, w.st, a.ComparisonID, store.PurposeJudge, s)
	}
	return err
}

func (w *JudgeWorker) save(ctx context.Context, j store.Judgment, done *atomic.Int64) error {
	if err := w.st.SaveJudgment(ctx, j); err != nil {
		return err
	}
	done.Add(1)
	return nil
}
