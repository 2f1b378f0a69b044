package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
)

// The judge and scoring jobs (issue 15) work one run's samples on one
// problem each, against the comparison's judge or scoring endpoint
// (store.DebateEndpoint). Like SampleJobs they wait on inference servers, so
// they run on the sampling queue. They are idempotent: a job asks only for
// the samples without a verdict (or score) yet and stores each answer as it
// arrives, so a retried, resumed or reaped job never asks twice for a
// finished sample.

// debateStages are the run_progress stages of the two jobs.
const (
	StageJudge = "judge"
	StageScore = "score"
)

// debateOpts: the sampling queue, a few attempts (the client already retries
// each request), one unfinished job per run and problem.
func debateOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SamplingQueue, MaxAttempts: 4, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}}}
}

// endpointClients caches one sampling.Client per comparison and purpose, so
// that its concurrency limit holds across the jobs of this process; a
// changed endpoint (another updated_at) gets a new client.
type endpointClients struct {
	box *secret.Box
	// downAfter is Config.EndpointDownAfter: how long a refused endpoint
	// is retried before its requests fail (0: the client's default).
	downAfter time.Duration
	mu        sync.Mutex
	m         map[string]*endpointClient
}

type endpointClient struct {
	runClient // the client and the error counts already written
	version   time.Time
}

func (ec *endpointClients) get(e store.DebateEndpoint) (*endpointClient, error) {
	key := fmt.Sprintf("%d/%s", e.ComparisonID, e.Purpose)
	ec.mu.Lock()
	defer ec.mu.Unlock()
	if c, ok := ec.m[key]; ok && c.version.Equal(e.UpdatedAt) {
		return c, nil
	}
	c, err := openEndpoint(ec.box, e, false, ec.downAfter)
	if err != nil {
		return nil, err
	}
	if ec.m == nil {
		ec.m = map[string]*endpointClient{}
	}
	x := &endpointClient{runClient: runClient{c: c, flushed: map[string]int64{}}, version: e.UpdatedAt}
	ec.m[key] = x
	return x, nil
}

// openEndpoint builds the client of a judge or scoring endpoint (the API
// key opened with the server secret); a test client makes one attempt per
// request and waits at most a minute.
func openEndpoint(box *secret.Box, e store.DebateEndpoint, test bool, downAfter time.Duration) (*sampling.Client, error) {
	var key string
	if len(e.Endpoint.APIKeyEnc) > 0 {
		if box == nil {
			return nil, errors.New("no server secret: cannot read the endpoint's API key (set REACH_SECRET)")
		}
		var err error
		if key, err = box.OpenFor(e.Endpoint.APIKeyEnc, e.Endpoint.BaseURL); err != nil {
			return nil, err
		}
	}
	ep := sampling.Endpoint{BaseURL: e.Endpoint.BaseURL, Model: e.Endpoint.Model, APIKey: key,
		Style: sampling.Style(e.Endpoint.Style), MaxConcurrency: e.Endpoint.MaxConcurrency}
	ep.Retry.DownAfter = downAfter
	if test {
		ep.Retry, ep.Timeout = sampling.RetryPolicy{MaxAttempts: 1}, time.Minute
	}
	return sampling.New(ep, nil)
}

// forEach runs fn on each item with at most limit at a time and returns the
// first error (the others still finish).
func forEach[T any](items []T, limit int, fn func(T) error) error {
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, it := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn(it); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// stopFlag holds the first error that stops a job's remaining requests.
type stopFlag struct {
	mu  sync.Mutex
	err error
}

func (f *stopFlag) set(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *stopFlag) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// stopping reports whether a request error means the whole endpoint cannot
// work (bad credentials, unknown model, an address refused by the network
// policy): judging or scoring then stops with that message rather than
// recording it against every sample.
func stopping(err error) bool {
	var e *sampling.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Kind == sampling.KindAuth || (e.Kind == sampling.KindBadRequest && (e.Status == 404 || e.Status == 0))
}

// requestOutcome sorts one request's error for the jobs that ask an
// endpoint about samples one at a time (judge, scoring, token scoring,
// verifier audit). fatal ends the job's attempt: the context is done, the
// endpoint as a whole refuses (recorded in stop, so the job stops with
// that message), or a transient failure that River retries while attempts
// remain (finished items stay). Otherwise itemError is what to store on
// the item: "" on success, the request's own failure else.
func requestOutcome(ctx context.Context, err error, last bool, stop *stopFlag) (itemError string, fatal error) {
	var se *sampling.Error
	switch {
	case err == nil:
		return "", nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	case stopping(err):
		stop.set(err)
		return "", err
	case errors.As(err, &se) && (se.Retryable() || se.Down) && !last:
		// An endpoint that is down (refused for its whole DownAfter) is
		// tried again by River later, not recorded as each item's error.
		return "", err
	}
	return err.Error(), nil
}

// StartDebate starts (or resumes) judging or scoring a ready comparison:
// failed samples are cleared so they are tried again, each run's progress
// row counts what is done, and one job is enqueued per run and problem with
// samples left. It returns how many samples are left to do (0: nothing
// enqueued, the endpoint stays idle).
func StartDebate(ctx context.Context, client *Client, st *store.Store, comparisonID int64, purpose string) (int64, error) {
	var left int64
	err := st.WithTx(ctx, func(tx *store.Store) error {
		c, err := tx.GetComparison(ctx, comparisonID)
		if err != nil {
			return err
		}
		if c.Status != store.StatusReady {
			return fmt.Errorf("%w: the comparison is %s; judge or score it once it is ready", ErrWrongState, c.Status)
		}
		e, err := tx.GetDebateEndpoint(ctx, comparisonID, purpose)
		if err != nil {
			return err
		}
		if purpose == store.PurposeScore && e.Method == "" {
			return fmt.Errorf("%w: the scoring endpoint's way of giving log-probabilities is not known yet: test the connection first", ErrWrongState)
		}
		var open []store.OpenWork
		stage := StageJudge
		if purpose == store.PurposeJudge {
			if err := tx.ClearJudgeErrors(ctx, comparisonID); err != nil {
				return err
			}
			open, err = tx.OpenJudgeWork(ctx, comparisonID, e.MaxPerProblem)
		} else {
			stage = StageScore
			if err := tx.ClearScoreErrors(ctx, comparisonID); err != nil {
				return err
			}
			open, err = tx.OpenScoreWork(ctx, comparisonID, e.MaxPerProblem)
		}
		if err != nil {
			return err
		}
		var params []river.InsertManyParams
		for _, w := range open {
			if err := startProgress(ctx, tx, stage, w); err != nil {
				return err
			}
			left += w.Samples
			for _, pid := range w.Problems {
				var args river.JobArgs = JudgeArgs{ComparisonID: comparisonID, RunID: w.RunID, ProblemID: pid}
				if purpose == store.PurposeScore {
					args = ScoreArgs{ComparisonID: comparisonID, RunID: w.RunID, ProblemID: pid}
				}
				params = append(params, river.InsertManyParams{Args: args})
			}
		}
		if len(params) == 0 {
			return tx.SetDebateStatus(ctx, comparisonID, purpose, store.DebateIdle, "")
		}
		if err := tx.SetDebateStatus(ctx, comparisonID, purpose, store.DebateRunning, ""); err != nil {
			return err
		}
		if _, err := client.InsertManyTx(ctx, tx.Tx(), params); err != nil {
			return fmt.Errorf("enqueue %s jobs: %w", purpose, err)
		}
		return nil
	})
	return left, err
}

// PauseDebate stops judging or scoring at once: queued jobs are cancelled
// and running ones have their requests cancelled; what they stored stays,
// and StartDebate resumes with the rest.
func PauseDebate(ctx context.Context, client *Client, st *store.Store, comparisonID int64, purpose string) error {
	if err := st.SetDebateStatus(ctx, comparisonID, purpose, store.DebatePaused, ""); err != nil {
		return err
	}
	kind := debateKind(purpose)
	ids, err := st.ActiveJobs(ctx, comparisonID, kind)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := client.JobCancel(ctx, id); err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("cancel %s job %d: %w", kind, id, err)
		}
	}
	return nil
}

// ActiveDebateJobs counts a comparison's unfinished judge or scoring jobs
// (the page shows judging as finished when none is left).
func ActiveDebateJobs(ctx context.Context, st *store.Store, comparisonID int64, purpose string) (int, error) {
	ids, err := st.ActiveJobs(ctx, comparisonID, debateKind(purpose))
	return len(ids), err
}

// debateKind is the job kind of a purpose's work.
func debateKind(purpose string) string {
	switch purpose {
	case store.PurposeScore:
		return ScoreArgs{}.Kind()
	case store.PurposeTokens:
		return TokenArgs{}.Kind()
	}
	return JudgeArgs{}.Kind()
}

// debateGate loads the endpoint of a job and says whether the job should
// run: a missing endpoint or comparison cancels it, a paused or failed one
// too (StartDebate enqueues the rest again).
func debateGate(ctx context.Context, st *store.Store, comparisonID int64, purpose string) (store.DebateEndpoint, error) {
	e, err := st.GetDebateEndpoint(ctx, comparisonID, purpose)
	if errors.Is(err, store.ErrNotFound) {
		return e, river.JobCancel(err)
	}
	if err != nil {
		return e, err
	}
	if e.Status != store.DebateRunning {
		return e, river.JobCancel(fmt.Errorf("%s of comparison %d is %s", purpose, comparisonID, e.Status))
	}
	return e, nil
}

// failDebate stops a comparison's judging or scoring with an error the page
// shows, and cancels this job.
func failDebate(ctx context.Context, st *store.Store, comparisonID int64, purpose string, err error) error {
	if ferr := st.SetDebateStatus(context.WithoutCancel(ctx), comparisonID, purpose, store.DebateFailed, err.Error()); ferr != nil {
		return ferr
	}
	return river.JobCancel(err)
}

// TestDebateEndpoint tries a comparison's judge or scoring endpoint with one
// real request and returns what to show. The judge gets the rendered judge
// prompt of the comparison's first answer-correct sample, so the answer also
// shows whether the judge follows the VERDICT format; the scoring endpoint
// gets DetectLogprobs' probes, and the method found is stored (scoring needs
// it). Errors are meant to be shown as they are.
func TestDebateEndpoint(ctx context.Context, st *store.Store, box *secret.Box, comparisonID int64, purpose string) (string, error) {
	e, err := st.GetDebateEndpoint(ctx, comparisonID, purpose)
	if err != nil {
		return "", err
	}
	c, err := openEndpoint(box, e, true, 0)
	if err != nil {
		return "", err
	}
	if purpose == store.PurposeScore {
		method, note, err := c.DetectLogprobs(ctx)
		if err != nil {
			return "", err
		}
		if err := st.SetScoreMethod(ctx, comparisonID, method, note); err != nil {
			return "", err
		}
		return "Scoring works: " + note + ".", nil
	}
	it, err := st.FirstSolvedSample(ctx, comparisonID)
	if err != nil {
		return "", err
	}
	p, err := st.GetProblem(ctx, it.ProblemID)
	if err != nil {
		return "", err
	}
	prompt, err := sampling.RenderJudge(JudgeTemplate(e), sampling.JudgeData{Problem: p.Statement, Reference: p.Reference,
		Completion: it.Completion, Subject: p.Subject, Level: p.Level})
	if err != nil {
		return "", err
	}
	j, err := c.Judge(ctx, prompt, cmp.Or(e.MaxTokens, 512))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("The judge answered %s for sample #%d of problem %s: %s", strings.ToUpper(j.Verdict), it.SampleIndex, p.Key, j.Reason), nil
}

// startProgress records where one run's work stands as it is started
// (judging, scoring, token scoring): the samples of its window done so far,
// "done" when none is left.
func startProgress(ctx context.Context, tx *store.Store, stage string, o store.OpenWork) error {
	status := "running"
	if o.Samples == 0 {
		status = "done"
	}
	return tx.SetProgress(ctx, store.Progress{RunID: o.RunID, Stage: stage, Done: o.Total - o.Samples, Total: o.Total,
		Unit: "samples", Status: status})
}
