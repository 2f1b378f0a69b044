package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/audit"
	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/store"
)

// AuditArgs asks the comparison's judge model, for the verifier audit
// (issue 25, item 2), whether the final answer of each audit item of one
// run on one problem equals the reference answer (those without a verdict
// yet).
type AuditArgs struct {
	ComparisonID int64 `json:"comparison_id"`
	RunID        int64 `json:"run_id"`
	ProblemID    int64 `json:"problem_id"`
}

// Kind implements river.JobArgs.
func (AuditArgs) Kind() string { return "verifier_audit" }

// InsertOpts: see debateOpts (the sampling queue, one unfinished job per
// run and problem).
func (AuditArgs) InsertOpts() river.InsertOpts { return debateOpts() }

// AuditWorker works AuditArgs against the judge endpoint (store.PurposeJudge)
// with the prompt audit.DefaultTemplate.
type AuditWorker struct {
	river.WorkerDefaults[AuditArgs]
	st      *store.Store
	clients endpointClients
}

// Work asks the judge about each item still without a verdict, up to the
// endpoint's concurrency at once, and stores each answer as it comes;
// errors are handled as JudgeWorker's (stored per item, or stopping the
// audit for a failure of the endpoint as a whole). The audit is set done
// when no item is left.
func (w *AuditWorker) Work(ctx context.Context, job *river.Job[AuditArgs]) error {
	a := job.Args
	au, err := w.st.GetVerifierAudit(ctx, a.ComparisonID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if au.Status != store.DebateRunning {
		return river.JobCancel(fmt.Errorf("verifier audit of comparison %d is %s", a.ComparisonID, au.Status))
	}
	e, err := w.st.GetDebateEndpoint(ctx, a.ComparisonID, store.PurposeJudge)
	if errors.Is(err, store.ErrNotFound) {
		return w.fail(ctx, a.ComparisonID, errors.New("the comparison has no judge endpoint: set one up in the Debate section"))
	}
	if err != nil {
		return err
	}
	items, err := w.st.AuditWorkItems(ctx, a.ComparisonID, a.RunID, a.ProblemID)
	if err != nil {
		return err
	}
	if len(items) > 0 {
		err = w.ask(ctx, job, e, items)
	}
	if _, ferr := w.st.FinishAuditIfDone(context.WithoutCancel(ctx), a.ComparisonID); ferr != nil {
		slog.Warn("finish verifier audit", "comparison", a.ComparisonID, "err", ferr)
	}
	return err
}

func (w *AuditWorker) ask(ctx context.Context, job *river.Job[AuditArgs], e store.DebateEndpoint, items []store.WorkItem) error {
	a := job.Args
	p, err := w.st.GetProblem(ctx, a.ProblemID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	ec, err := w.clients.get(e)
	if err != nil {
		return w.fail(ctx, a.ComparisonID, err)
	}
	tmpl := sampling.Template{Name: "answer-check", Text: audit.DefaultTemplate}
	last := job.Attempt >= job.MaxAttempts
	var in, out, reqs atomic.Int64
	var stop stopFlag
	err = forEach(items, cmp.Or(e.Endpoint.MaxConcurrency, 8), func(it store.WorkItem) error {
		if stop.get() != nil || ctx.Err() != nil {
			return ctx.Err()
		}
		v := store.AuditVerdict{ComparisonID: a.ComparisonID, RunID: it.RunID, ProblemID: it.ProblemID, SampleIndex: it.SampleIndex}
		prompt, err := sampling.RenderJudge(tmpl, sampling.JudgeData{Problem: p.Statement, Reference: p.Reference,
			Completion: it.Completion, Subject: p.Subject, Level: p.Level})
		if err != nil {
			v.Error = err.Error()
			return w.st.SaveAuditVerdict(ctx, v)
		}
		res, err := ec.c.Judge(ctx, prompt, cmp.Or(e.MaxTokens, 512))
		in.Add(int64(res.Usage.PromptTokens))
		out.Add(int64(res.Usage.CompletionTokens))
		v.PromptTokens, v.CompletionTokens = res.Usage.PromptTokens, res.Usage.CompletionTokens
		msg, fatal := requestOutcome(ctx, err, last, &stop)
		if fatal != nil {
			return fatal
		}
		// Spent requests are the ones that got an answer (or failed for good):
		// attempts refused on the way (a judge that is down) are not the
		// cost the page announced.
		reqs.Add(1)
		if err == nil {
			v.Verdict, v.Reason = audit.FromJudge(res.Verdict), res.Reason
		}
		v.Error = msg
		return w.st.SaveAuditVerdict(ctx, v)
	})
	uctx := context.WithoutCancel(ctx)
	if uerr := w.st.AddAuditUsage(uctx, a.ComparisonID, in.Load(), out.Load(), reqs.Load()); uerr != nil {
		slog.Warn("record verifier audit usage", "comparison", a.ComparisonID, "err", uerr)
	}
	if s := stop.get(); s != nil {
		return w.fail(ctx, a.ComparisonID, s)
	}
	// While River retries a transient failure the audit is still running:
	// the page says why nothing moves (and the next answer clears it).
	note := ""
	if err != nil && ctx.Err() == nil {
		note = fmt.Sprintf("The judge did not answer (attempt %d of %d; Reach tries again): %v", job.Attempt, job.MaxAttempts, err)
	}
	if nerr := w.st.NoteAuditRetry(uctx, a.ComparisonID, note); nerr != nil {
		slog.Warn("note verifier audit retry", "comparison", a.ComparisonID, "err", nerr)
	}
	return err
}

func (w *AuditWorker) fail(ctx context.Context, comparisonID int64, err error) error {
	if ferr := w.st.SetAuditStatus(context.WithoutCancel(ctx), comparisonID, store.DebateFailed, err.Error()); ferr != nil {
		return ferr
	}
	return river.JobCancel(err)
}

// MaxAuditRandom bounds the random stratum a user may ask for.
const MaxAuditRandom = 100_000

// StartAudit starts a verifier audit of a ready comparison with a judge
// endpoint: a new one (its items chosen now: every deciding sample and m
// seeded random others, see analysis.LoadAuditScope and
// audit.RandomOrdinals) when fresh is set or none exists, else the existing
// one resumed (failed items asked again). It enqueues one job per run and
// problem with items left and returns how many items are left (0: nothing
// to do; the audit is done).
func StartAudit(ctx context.Context, client *Client, st *store.Store, comparisonID int64, m int, seed uint64, userID int64, fresh bool) (int64, error) {
	if m < 0 || m > MaxAuditRandom {
		return 0, fmt.Errorf("%w: the random sample must be 0 to %d samples", ErrWrongState, MaxAuditRandom)
	}
	if _, err := st.GetDebateEndpoint(ctx, comparisonID, store.PurposeJudge); errors.Is(err, store.ErrNotFound) {
		return 0, fmt.Errorf("%w: set up a judge in the Debate section of the comparison page first", ErrWrongState)
	} else if err != nil {
		return 0, err
	}
	if au, err := st.GetVerifierAudit(ctx, comparisonID); errors.Is(err, store.ErrNotFound) {
		fresh = true
	} else if err != nil {
		return 0, err
	} else if fresh {
		// Replacing an audit whose jobs still run left the new one's items
		// behind the old jobs (taken for duplicates) and "finished" short.
		active, err := ActiveAuditJobs(ctx, st, comparisonID)
		if err != nil {
			return 0, err
		}
		if active > 0 && au.Status == store.DebateRunning {
			return 0, fmt.Errorf("%w: an audit is running; pause it before starting a new one", ErrWrongState)
		}
		if active > 0 {
			return 0, fmt.Errorf("%w: the last audit's requests are still stopping; start the new one in a few seconds", ErrWrongState)
		}
	}
	if fresh {
		sc, err := analysis.LoadAuditScope(ctx, st, comparisonID)
		if errors.Is(err, analysis.ErrNotReady) {
			return 0, fmt.Errorf("%w: %v", ErrWrongState, err)
		}
		if err != nil {
			return 0, err
		}
		_, rest, err := st.AuditScope(ctx, comparisonID, sc.Kept, sc.Deciding)
		if err != nil {
			return 0, err
		}
		if _, err := st.NewVerifierAudit(ctx, comparisonID, m, seed, userID, sc.Kept, sc.Deciding, audit.RandomOrdinals(rest, m, seed)); err != nil {
			return 0, err
		}
	}
	var left int64
	err := st.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.ClearAuditErrors(ctx, comparisonID); err != nil {
			return err
		}
		open, err := tx.OpenAuditWork(ctx, comparisonID)
		if err != nil {
			return err
		}
		if len(open) == 0 {
			return tx.SetAuditStatus(ctx, comparisonID, store.AuditDone, "")
		}
		if err := tx.SetAuditStatus(ctx, comparisonID, store.DebateRunning, ""); err != nil {
			return err
		}
		params := make([]river.InsertManyParams, len(open))
		for i, w := range open {
			params[i] = river.InsertManyParams{Args: AuditArgs{ComparisonID: comparisonID, RunID: w.RunID, ProblemID: w.ProblemID}}
		}
		if _, err := client.InsertManyTx(ctx, tx.Tx(), params); err != nil {
			return fmt.Errorf("enqueue verifier audit jobs: %w", err)
		}
		au, err := tx.GetVerifierAudit(ctx, comparisonID)
		left = au.Items - au.Answered
		return err
	})
	return left, err
}

// PauseAudit stops a verifier audit at once: queued jobs are cancelled and
// running ones have their requests cancelled; answers stay, and StartAudit
// (not fresh) resumes with the rest.
func PauseAudit(ctx context.Context, client *Client, st *store.Store, comparisonID int64) error {
	if err := st.SetAuditStatus(ctx, comparisonID, store.DebatePaused, ""); err != nil {
		return err
	}
	ids, err := st.ActiveJobs(ctx, comparisonID, AuditArgs{}.Kind())
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := client.JobCancel(ctx, id); err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("cancel verifier audit job %d: %w", id, err)
		}
	}
	return nil
}

// ActiveAuditJobs counts a comparison's unfinished verifier audit jobs.
func ActiveAuditJobs(ctx context.Context, st *store.Store, comparisonID int64) (int, error) {
	ids, err := st.ActiveJobs(ctx, comparisonID, AuditArgs{}.Kind())
	return len(ids), err
}
