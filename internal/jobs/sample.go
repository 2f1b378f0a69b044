package jobs

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reach-lab/reach/internal/metrics"
	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// SamplingQueue is the River queue of SampleJobs: they wait on inference
// servers, not on CPU, so it runs many more workers than the default queue.
const SamplingQueue = "sampling"

// DefaultPerRequest is how many completions one SampleJob asks for in one
// request (`n`) unless the config says otherwise.
const DefaultPerRequest = 16

// SamplingConfig is a comparison's sampling settings, the same for every
// model unless a run overrides them.
type SamplingConfig struct {
	N           int      `json:"n"`
	Temperature float64  `json:"temperature"`
	TopP        float64  `json:"top_p"`
	TopK        int      `json:"top_k,omitempty"`
	MinP        float64  `json:"min_p,omitempty"`
	MaxTokens   int      `json:"max_tokens"`
	Stop        []string `json:"stop,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	// Template is a preset name (sampling.PresetNames) or "custom" with
	// TemplateText.
	Template     string `json:"template"`
	TemplateText string `json:"template_text,omitempty"`
	// Limit samples only the first Limit problems of the dataset (0 = all).
	Limit int `json:"limit,omitempty"`
	// PerRequest is the `n` of one request, i.e. the samples of one
	// SampleJob (0 = DefaultPerRequest; 1 for servers that ignore n).
	PerRequest int `json:"per_request,omitempty"`
	// Adaptive draws in rounds (internal/adaptive): a pilot round for every
	// model and problem, then rounds that give the rest of Budget to the
	// models and problems where more samples most narrow the pass@k curves.
	// N is then the target n, which no problem goes past.
	Adaptive bool `json:"adaptive,omitempty"`
	// Budget is an adaptive design's total samples over all models and
	// problems, those drawn already included (CheckBudget: at least 2 per
	// model and problem, at most the uniform design's N per model and problem).
	Budget int `json:"budget,omitempty"`
}

// BudgetError is an adaptive config whose budget does not fit the
// comparison; its message says why in words.
type BudgetError struct{ msg string }

func (e *BudgetError) Error() string { return e.msg }

// CheckBudget checks an adaptive config's budget against the design's size:
// models endpoint models and problems dataset problems (Limit applied here).
// A non-adaptive config passes.
func (c SamplingConfig) CheckBudget(models, problems int) error {
	if !c.Adaptive {
		return nil
	}
	if c.Limit > 0 && c.Limit < problems {
		problems = c.Limit
	}
	cells := models * problems
	if cells == 0 {
		return &BudgetError{"adaptive sampling needs at least one model and one problem"}
	}
	if lo := 2 * cells; c.Budget < lo {
		return &BudgetError{fmt.Sprintf("a budget of %s samples is too small: adaptive sampling draws at least 2 samples per model and problem, %s for %d models × %s problems",
			Grouped(c.Budget), Grouped(lo), models, Grouped(problems))}
	}
	if hi := c.N * cells; c.Budget > hi {
		return &BudgetError{fmt.Sprintf("a budget of %s samples is more than the uniform design draws (n = %d × %d models × %s problems = %s): lower the budget or raise n",
			Grouped(c.Budget), c.N, models, Grouped(problems), Grouped(hi))}
	}
	return nil
}

// Grouped writes n with a comma between thousands (64,000).
func Grouped(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// chunkSize is the samples per SampleJob; it is fixed per comparison so
// that raising n keeps the chunks already drawn.
func (c SamplingConfig) chunkSize() int {
	return min(cmp.Or(c.PerRequest, DefaultPerRequest), c.N)
}

// DefaultSamplingConfig is Yue et al.'s setting: T = 0.6, top-p 0.95, the
// zero-shot qwen-boxed prompt.
func DefaultSamplingConfig() SamplingConfig {
	p := sampling.DefaultParams()
	return SamplingConfig{N: 64, Temperature: p.Temperature, TopP: p.TopP, MaxTokens: p.MaxTokens, Template: "qwen-boxed"}
}

// TemplateFor returns the config's prompt template.
func (c SamplingConfig) TemplateFor() (sampling.Template, error) {
	if c.Template == "custom" {
		if c.TemplateText == "" {
			return sampling.Template{}, errors.New("custom prompt template is empty")
		}
		return sampling.Template{Name: "custom", Text: c.TemplateText}, nil
	}
	name := c.Template
	if name == "" {
		name = "qwen-boxed"
	}
	return sampling.Preset(name)
}

// ModelOverride is one model's departure from the comparison's sampling
// config: its own prompt template (e.g. a chat template for a chat model
// next to a raw-prompt base model).
type ModelOverride struct {
	Template     string `json:"template,omitempty"`
	TemplateText string `json:"template_text,omitempty"`
	// Temperature is the run's own temperature: one run of a temperature
	// sweep (nil = the comparison's).
	Temperature *float64 `json:"temperature,omitempty"`
}

// ForRun returns the config a run samples with: the comparison's, with the
// run's override applied. A chat-style endpoint whose template is a raw
// completions prompt (chat markup written out, as qwen-boxed is) gets the
// chat preset instead: the server applies the model's own chat template, so
// the markup would be doubled.
func (c SamplingConfig) ForRun(r store.Run) (SamplingConfig, error) {
	if len(r.SamplingOverride) > 0 && string(r.SamplingOverride) != "null" {
		var o ModelOverride
		if err := json.Unmarshal(r.SamplingOverride, &o); err != nil {
			return c, fmt.Errorf("sampling override of %q: %w", r.ModelName, err)
		}
		if o.Temperature != nil {
			c.Temperature = *o.Temperature
		}
		if o.Template != "" {
			c.Template, c.TemplateText = o.Template, o.TemplateText
			c.Stop = nil
			if t, err := c.TemplateFor(); err == nil {
				c.Stop = t.Stop
			}
		}
	}
	if r.Endpoint.Style == string(sampling.StyleChat) && c.Template != "custom" {
		if t, err := c.TemplateFor(); err == nil && !t.Chat {
			c.Template, c.Stop = "chat", nil
		}
	}
	return c, nil
}

// Params returns the request parameters for n completions.
func (c SamplingConfig) Params(n int) sampling.Params {
	return sampling.Params{N: n, Temperature: c.Temperature, TopP: c.TopP, TopK: c.TopK, MinP: c.MinP,
		MaxTokens: c.MaxTokens, Stop: c.Stop, Seed: c.Seed}
}

// Validate checks the config before any request is sent.
func (c SamplingConfig) Validate() error {
	if c.N < 1 || c.N > 65536 {
		return fmt.Errorf("n = %d: want 1 to 65,536 samples per problem", c.N)
	}
	if c.PerRequest < 0 || c.PerRequest > 1024 {
		return fmt.Errorf("samples per request = %d: want 1 to 1,024 (0 = %d)", c.PerRequest, DefaultPerRequest)
	}
	if c.Budget != 0 && !c.Adaptive {
		return fmt.Errorf("a budget (%s samples) applies only to adaptive sampling: turn adaptive on, or leave the budget out", Grouped(c.Budget))
	}
	if c.Adaptive {
		if c.N < 2 {
			return fmt.Errorf("adaptive sampling: n = %d; the target n must be at least 2", c.N)
		}
		if c.Budget < 0 {
			return fmt.Errorf("adaptive sampling: a budget of %d samples is negative; give the total samples over all models and problems", c.Budget)
		}
		if c.Budget == 0 {
			return errors.New("adaptive sampling needs a budget: the total samples over all models and problems")
		}
	}
	if _, err := c.TemplateFor(); err != nil {
		return err
	}
	return c.Params(1).Validate()
}

// ParseSamplingConfig decodes a stored config.
func ParseSamplingConfig(raw []byte) (SamplingConfig, error) {
	var c SamplingConfig
	if len(raw) == 0 {
		return c, errors.New("comparison has no sampling config")
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("sampling config: %w", err)
	}
	return c, nil
}

// SampleArgs draws the missing samples of one chunk.
type SampleArgs struct {
	ComparisonID int64 `json:"comparison_id"`
	RunID        int64 `json:"run_id"`
	ProblemID    int64 `json:"problem_id"`
	First        int   `json:"first"`
	Count        int   `json:"count"`
}

// Kind implements river.JobArgs.
func (SampleArgs) Kind() string { return "sample" }

// InsertOpts: the sampling queue, and one unfinished job per chunk (a resume
// after a pause does not double a chunk still queued).
func (SampleArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: SamplingQueue, MaxAttempts: 6, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}}}
}

// SampleWorker works SampleArgs.
type SampleWorker struct {
	river.WorkerDefaults[SampleArgs]
	st  *store.Store
	v   verify.Verifier
	box *secret.Box
	// downAfter is how long an endpoint may refuse connections before its
	// run fails (sampling.RetryPolicy.DownAfter; 0 = its default).
	downAfter time.Duration

	mu      sync.Mutex
	clients map[int64]*runClient // by run id
}

// runClient is one run's endpoint client and the error counts already
// written to the database.
type runClient struct {
	c       *sampling.Client
	mu      sync.Mutex
	flushed map[string]int64
}

func (w *SampleWorker) client(r store.Run) (*runClient, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rc, ok := w.clients[r.ID]; ok {
		return rc, nil
	}
	var key string
	if len(r.Endpoint.APIKeyEnc) > 0 {
		if w.box == nil {
			return nil, errors.New("no server secret: cannot read the endpoint's API key (set REACH_SECRET)")
		}
		var err error
		if key, err = w.box.OpenFor(r.Endpoint.APIKeyEnc, r.Endpoint.BaseURL); err != nil {
			return nil, err
		}
	}
	c, err := sampling.New(sampling.Endpoint{BaseURL: r.Endpoint.BaseURL, Model: r.Endpoint.Model, APIKey: key,
		Style: sampling.Style(r.Endpoint.Style), MaxConcurrency: r.Endpoint.MaxConcurrency,
		Retry: sampling.RetryPolicy{DownAfter: w.downAfter}}, nil)
	if err != nil {
		return nil, err
	}
	rc := &runClient{c: c, flushed: map[string]int64{}}
	w.clients[r.ID] = rc
	return rc, nil
}

// errorDelta returns the failed attempts by kind since the last call.
func (rc *runClient) errorDelta() map[string]int64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]int64{}
	for k, v := range rc.c.Stats().Errors {
		if d := v - rc.flushed[k]; d > 0 {
			out[k] = d
			rc.flushed[k] = v
		}
	}
	return out
}

// Work asks the run's endpoint for the chunk's missing samples, verifies
// them and stores them: in one request for all of them, or, when the config
// sets a seed, in one request per sample index with that index's SampleSeed
// (recorded with the sample). A chunk that fails for good is
// marked failed with the error (its problem drops out of the run's counts)
// without stopping the others.
func (w *SampleWorker) Work(ctx context.Context, job *river.Job[SampleArgs]) error {
	a := job.Args
	c, err := w.st.GetComparison(ctx, a.ComparisonID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if c.Status != store.StatusSampling {
		// Paused or cancelled: the chunk stays pending; Resume enqueues it again.
		return river.JobCancel(fmt.Errorf("comparison is %s", c.Status))
	}
	var run store.Run
	for _, r := range c.Runs {
		if r.ID == a.RunID {
			run = r
		}
	}
	chunk := store.Chunk{RunID: a.RunID, ProblemID: a.ProblemID, First: a.First, Count: a.Count}
	adaptiveOn := isAdaptive(c.Sampling)
	fail := func(err error) error {
		slog.Warn("sample chunk failed for good", "run", a.RunID, "problem", a.ProblemID, "err", err)
		if ferr := w.st.FinishChunk(ctx, chunk, "failed", err.Error(), sampling.ErrorKind(err)); ferr != nil {
			return ferr
		}
		return w.afterChunk(ctx, a, adaptiveOn)
	}
	cfg, err := ParseSamplingConfig(c.Sampling)
	if err != nil {
		return fail(err)
	}
	if cfg, err = cfg.ForRun(run); err != nil {
		return fail(err)
	}
	tmpl, err := cfg.TemplateFor()
	if err != nil {
		return fail(err)
	}
	p, err := w.st.GetProblem(ctx, a.ProblemID)
	if err != nil {
		return fail(err)
	}
	prompt, err := sampling.Render(tmpl, sampling.PromptData{Problem: p.Statement, Subject: p.Subject, Level: p.Level})
	if err != nil {
		return fail(err)
	}
	have, err := w.st.ExistingIndices(ctx, a.RunID, a.ProblemID, a.First, a.First+a.Count)
	if err != nil {
		return err
	}
	var missing []int
	for i := a.First; i < a.First+a.Count; i++ {
		if !have[i] {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		rc, err := w.client(run)
		if err != nil {
			return fail(err)
		}
		ctx := sampling.WithRetryHook(sampling.WithReschedule(ctx), func(n sampling.RetryNotice) {
			if nerr := w.st.NoteChunkRetry(ctx, chunk, retryNote(rc.c.Endpoint().BaseURL, n), n.Err.Kind); nerr != nil {
				slog.Warn("note a retry", "run", a.RunID, "err", nerr)
			}
		})
		var (
			comps    []sampling.Completion
			seeds    []*int64
			usage    sampling.Usage
			requests int64 = 1
		)
		if cfg.Seed != nil {
			requests = int64(len(missing))
			comps, seeds, usage, err = sampleSeeded(ctx, rc.c, prompt, cfg, p.Key, missing)
		} else {
			comps, usage, err = rc.c.Sample(ctx, prompt, cfg.Params(len(missing)))
			seeds = make([]*int64, len(comps))
		}
		if uerr := w.st.AddRunUsage(context.WithoutCancel(ctx), a.RunID, int64(usage.PromptTokens), int64(usage.CompletionTokens), requests, rc.errorDelta()); uerr != nil {
			slog.Warn("record usage", "run", a.RunID, "err", uerr)
		}
		if ctx.Err() != nil {
			// Paused or cancelled (River cancelled this job) or shutting
			// down: the chunk stays pending for Resume or a retry.
			return ctx.Err()
		}
		// Seeded samples that arrived are kept even when others of the
		// chunk failed: a retry asks only for the rest, with the same seeds.
		if cfg.Seed != nil || err == nil {
			vp := verify.Problem{Reference: p.Reference, Kind: p.Kind}
			if p.Kind == "code" {
				vp.Fields, vp.Harness = p.Extra, run.CodeHarness
			}
			rows := make([]store.Sample, 0, len(comps))
			var graded int64
			for i, comp := range comps {
				if i >= len(missing) {
					break
				}
				if seeds[i] == nil && cfg.Seed != nil {
					continue // this index's request failed
				}
				v := w.v.Verify(ctx, vp, comp.Text)
				row := store.Sample{RunID: a.RunID, ProblemID: a.ProblemID, SampleIndex: missing[i], Seed: seeds[i],
					Completion: comp.Text, FinishReason: comp.FinishReason, CompletionTokens: comp.CompletionTokens,
					Status: string(v.Status), Extracted: v.Extracted, Rule: v.Rule, Reason: v.Reason, Detail: v.Detail,
					VerdictSource: verify.SourceName(w.v, vp)}
				if v.Status == verify.NotGraded {
					// Kept, ungraded: the run's VerifyJob grades it or says why not.
					row.Status, row.VerdictSource = store.SamplePending, ""
				} else {
					graded++
				}
				rows = append(rows, row)
			}
			added, aerr := w.st.AddSamples(ctx, rows)
			if aerr != nil {
				return aerr
			}
			metrics.SamplesSampled(added)
			metrics.SamplesVerified(min(added, graded))
			if err == nil && len(rows) < len(missing) {
				return fmt.Errorf("server returned %d of %d completions", len(rows), len(missing)) // retried
			}
		}
		if err != nil {
			var se *sampling.Error
			if errors.As(err, &se) && se.Down {
				return w.endpointDown(ctx, run, chunk, se)
			}
			if errors.As(err, &se) && se.Unreachable {
				return w.unreachable(ctx, rc.c, chunk, se)
			}
			retryable := errors.As(err, &se) && se.Retryable() || errors.Is(err, context.DeadlineExceeded)
			if !retryable || job.Attempt >= job.MaxAttempts {
				return fail(err)
			}
			return err // River retries with backoff
		}
	}
	if err := w.st.FinishChunk(ctx, chunk, "done", "", ""); err != nil {
		return err
	}
	return w.afterChunk(ctx, a, adaptiveOn)
}

// retryNote says on the progress page why a chunk's request is retried:
// the endpoint, the error, the attempts so far and when the next one is.
func retryNote(where string, n sampling.RetryNotice) string {
	next := n.Next.UTC().Format("15:04:05")
	if n.UnreachableSince.IsZero() {
		return fmt.Sprintf("retrying %s: %s · attempt %d of this request failed · next try at %s UTC", where, n.Err.Message, n.Attempt, next)
	}
	return fmt.Sprintf("cannot connect to %s: %s · %d attempts failed since %s UTC · next try at %s UTC · given up at %s UTC unless it answers",
		where, n.Err.Message, n.Tries, n.UnreachableSince.UTC().Format("15:04:05"), next, n.GiveUpAt.UTC().Format("15:04:05"))
}

// unreachable puts off a chunk whose endpoint could not be connected to:
// its job is snoozed (River's attempts are kept for other errors) and
// gives its worker back, so a down endpoint does not hold every sampling
// worker while the other models wait. The wait grows with the time the
// endpoint has been unreachable (1 to 15 s) and ends by the time it is
// given up, when the next attempt fails the run (endpointDown).
func (w *SampleWorker) unreachable(ctx context.Context, c *sampling.Client, chunk store.Chunk, se *sampling.Error) error {
	since, tries := c.Unreachable()
	if since.IsZero() { // it answered meanwhile
		since = time.Now()
	}
	giveUp := since.Add(c.DownAfter())
	wait := min(max(time.Since(since)/2, time.Second), 15*time.Second)
	wait = wait/2 + rand.N(wait/2+1)
	wait = max(0, min(wait, time.Until(giveUp)+10*time.Millisecond))
	n := sampling.RetryNotice{Err: se, Next: time.Now().Add(wait), UnreachableSince: since, Tries: tries, GiveUpAt: giveUp}
	if err := w.st.NoteChunkRetry(context.WithoutCancel(ctx), chunk, retryNote(c.Endpoint().BaseURL, n), se.Kind); err != nil {
		return err
	}
	return river.JobSnooze(wait)
}

// endpointDown fails a run whose endpoint stayed unreachable for the
// client's DownAfter, and the comparison with it, naming the endpoint and
// the cause. The chunk stays pending, as do the run's other chunks, and
// every sample drawn (of any model) is kept: Retry continues from there.
// The comparison's other SampleJobs are cancelled.
func (w *SampleWorker) endpointDown(ctx context.Context, run store.Run, chunk store.Chunk, se *sampling.Error) error {
	ctx = context.WithoutCancel(ctx)
	msg := fmt.Sprintf("model %q: %s (REACH_ENDPOINT_DOWN_AFTER sets how long). The samples drawn so far are kept: start the server (or fix the address) and Retry.", run.ModelName, se.Error())
	slog.Warn("endpoint down: sampling stopped", "run", run.ID, "err", se)
	if err := w.st.NoteChunkRetry(ctx, chunk, se.Error(), se.Kind); err != nil {
		return err
	}
	if err := w.st.SetRunStatus(ctx, run.ID, store.StatusFailed, msg); err != nil {
		return err
	}
	if err := w.st.SetComparisonStatus(ctx, run.ComparisonID, store.StatusFailed, msg); err != nil {
		return err
	}
	if client, err := river.ClientFromContextSafely[pgx.Tx](ctx); err == nil {
		if err := cancelSampleJobs(ctx, client, w.st, run.ComparisonID); err != nil {
			slog.Warn("cancel the sample jobs of a failed comparison", "comparison", run.ComparisonID, "err", err)
		}
	}
	// Completed, not cancelled: the failure is recorded, and River's
	// cancel above does not apply to this job.
	return nil
}

// afterChunk enqueues the run's aggregation when its last chunk is done,
// or, on an adaptive comparison, the planning of the next round when the
// last chunk of all its runs is (afterAdaptiveChunk). It runs after this
// chunk's status is committed, so the last chunk to finish always sees the
// others done.
func (w *SampleWorker) afterChunk(ctx context.Context, a SampleArgs, adaptiveOn bool) error {
	open, err := w.st.OpenChunks(ctx, a.RunID)
	if err != nil || open > 0 {
		return err
	}
	if adaptiveOn {
		return afterAdaptiveChunk(ctx, w.st, a.ComparisonID)
	}
	return finishSampling(ctx, w.st, a.ComparisonID, a.RunID)
}

func finishSampling(ctx context.Context, st *store.Store, comparisonID, runID int64) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	return st.WithTx(ctx, func(tx *store.Store) error { return finishRun(ctx, client, tx, comparisonID, runID) })
}

// finishRun ends a run's sampling inside tx: its samples go to
// verification when some are still pending, else to aggregation.
func finishRun(ctx context.Context, client *Client, tx *store.Store, comparisonID, runID int64) error {
	_, pending, err := tx.CountSamples(ctx, runID)
	if err != nil {
		return err
	}
	var next river.JobArgs
	if pending > 0 {
		// Samples that could not be graded inline (code without a
		// sandbox here): the VerifyJob grades them, or fails the run
		// saying why, before anything is counted.
		if err := tx.SetRunStatus(ctx, runID, store.StatusVerifying, ""); err != nil {
			return err
		}
		if err := tx.SetProgress(ctx, store.Progress{RunID: runID, Stage: "verify", Total: pending, Unit: "samples", Status: "queued"}); err != nil {
			return err
		}
		next = VerifyArgs{RunID: runID, ComparisonID: comparisonID}
	} else {
		if err := tx.SetRunStatus(ctx, runID, "aggregating", ""); err != nil {
			return err
		}
		if err := tx.SetProgress(ctx, store.Progress{RunID: runID, Stage: "aggregate", Status: "queued"}); err != nil {
			return err
		}
		next = AggregateArgs{RunID: runID, ComparisonID: comparisonID}
	}
	if _, err := client.InsertTx(ctx, tx.Tx(), next, nil); err != nil {
		return fmt.Errorf("enqueue jobs: %w", err)
	}
	return nil
}

// StartSampling creates the chunks of every endpoint run of a comparison
// (only the missing ones when n was raised) and enqueues their SampleJobs,
// inside tx. The dataset must be loaded. On an adaptive comparison it
// enqueues the chunks still open, or when none is, plans the next round
// (the pilot on a new comparison; see startAdaptive). A budget that does not
// fit the comparison is a *BudgetError.
func StartSampling(ctx context.Context, client *Client, tx *store.Store, c store.Comparison) error {
	cfg, err := ParseSamplingConfig(c.Sampling)
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	if c.DatasetID == nil {
		return errors.New("the dataset is not loaded yet")
	}
	problems, err := tx.Problems(ctx, *c.DatasetID, false)
	if err != nil {
		return err
	}
	sort.Slice(problems, func(i, j int) bool { return problems[i].Idx < problems[j].Idx })
	if cfg.Limit > 0 && cfg.Limit < len(problems) {
		problems = problems[:cfg.Limit]
	}
	pids := make([]int64, len(problems))
	for i, p := range problems {
		pids[i] = p.ID
	}
	if cfg.Adaptive {
		return startAdaptive(ctx, client, tx, c, cfg, pids)
	}
	var params []river.InsertManyParams
	for _, r := range c.Runs {
		if r.Endpoint.BaseURL == "" {
			continue
		}
		chunks, err := tx.EnsureChunks(ctx, r.ID, pids, cfg.N, cfg.chunkSize())
		if err != nil {
			return err
		}
		if err := tx.StartRunSampling(ctx, r.ID); err != nil {
			return err
		}
		_ = tx.SetRunImported(ctx, r.ID, "endpoint", true, "verifier")
		for _, ch := range chunks {
			params = append(params, river.InsertManyParams{Args: SampleArgs{ComparisonID: c.ID, RunID: r.ID,
				ProblemID: ch.ProblemID, First: ch.First, Count: ch.Count}})
		}
		if len(chunks) == 0 { // nothing new to draw: recount what is there
			params = append(params, river.InsertManyParams{Args: AggregateArgs{RunID: r.ID, ComparisonID: c.ID}})
		}
	}
	if err := tx.SetComparisonStatus(ctx, c.ID, store.StatusSampling, ""); err != nil {
		return err
	}
	if len(params) == 0 {
		return errors.New("no model of this comparison has an endpoint")
	}
	if client == nil {
		client, err = river.ClientFromContextSafely[pgx.Tx](ctx)
		if err != nil {
			return err
		}
	}
	if _, err := client.InsertManyTx(ctx, tx.Tx(), params); err != nil {
		return fmt.Errorf("enqueue sampling jobs: %w", err)
	}
	return nil
}

// PauseSampling stops drawing samples at once: queued SampleJobs are
// cancelled and running ones have their requests cancelled. Their chunks
// stay pending; ResumeSampling enqueues them again.
func PauseSampling(ctx context.Context, client *Client, st *store.Store, id int64) error {
	if err := st.SetComparisonStatus(ctx, id, store.StatusPaused, ""); err != nil {
		return err
	}
	return cancelSampleJobs(ctx, client, st, id)
}

func cancelSampleJobs(ctx context.Context, client *Client, st *store.Store, id int64) error {
	ids, err := st.ActiveSampleJobs(ctx, id)
	if err != nil {
		return err
	}
	for _, jid := range ids {
		if _, err := client.JobCancel(ctx, jid); err != nil && !errors.Is(err, river.ErrNotFound) {
			return fmt.Errorf("cancel sample job %d: %w", jid, err)
		}
	}
	return nil
}

// ErrNothingToRetry: a failed comparison has no chunk left to sample, so
// Retry cannot help (its failure was elsewhere).
var ErrNothingToRetry = errors.New("nothing is left to sample: the comparison failed after sampling")

// ErrSamplingStopping: Retry came while the failed comparison's sampling
// jobs were still stopping.
var ErrSamplingStopping = errors.New("the failed comparison's sampling jobs are still stopping: try again in a minute")

// ResumeSampling enqueues the pending chunks of a paused comparison again.
// On a failed one (Retry: an endpoint was down, or every request of a
// model failed) it first reopens the chunks that failed for good, keeping
// every sample drawn.
func ResumeSampling(ctx context.Context, client *Client, st *store.Store, id int64) error {
	if err := waitSampleJobsStopped(ctx, st, id); err != nil {
		return err
	}
	return st.WithTx(ctx, func(tx *store.Store) error {
		c, err := tx.GetComparison(ctx, id)
		if err != nil {
			return err
		}
		if c.Status == store.StatusFailed {
			open, err := tx.ReopenFailedChunks(ctx, id)
			if err != nil {
				return err
			}
			if open == 0 {
				return ErrNothingToRetry
			}
		}
		return StartSampling(ctx, client, tx, c)
	})
}

// waitSampleJobsStopped waits (up to 10 s) until a failed comparison's
// SampleJobs, cancelled when it failed, have ended: a job still running
// would keep Retry from enqueueing its chunk again (one unfinished job per
// chunk) and then end cancelled, leaving the chunk without a job.
func waitSampleJobsStopped(ctx context.Context, st *store.Store, id int64) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, err := st.ComparisonStatus(ctx, id)
		if err != nil || status != store.StatusFailed {
			return err
		}
		active, err := st.ActiveSampleJobs(ctx, id)
		if err != nil || len(active) == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w (%d jobs)", ErrSamplingStopping, len(active))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// CancelSampling gives up the samples not drawn yet: their problems drop
// out of the counts, and the comparison is reported on what was sampled.
func CancelSampling(ctx context.Context, client *Client, st *store.Store, id int64) error {
	if err := st.SetComparisonStatus(ctx, id, store.StatusPaused, ""); err != nil {
		return err
	}
	if err := cancelSampleJobs(ctx, client, st, id); err != nil {
		return err
	}
	return st.WithTx(ctx, func(tx *store.Store) error {
		c, err := tx.GetComparison(ctx, id)
		if err != nil {
			return err
		}
		if _, err := tx.FailPendingChunks(ctx, id, "cancelled by the user"); err != nil {
			return err
		}
		if err := tx.SetComparisonStatus(ctx, id, store.StatusVerifying, ""); err != nil {
			return err
		}
		var params []river.InsertManyParams
		for _, r := range c.Runs {
			if r.Endpoint.BaseURL != "" {
				if err := tx.SetRunStatus(ctx, r.ID, "aggregating", ""); err != nil {
					return err
				}
				params = append(params, river.InsertManyParams{Args: AggregateArgs{RunID: r.ID, ComparisonID: id}})
			}
		}
		if len(params) == 0 {
			return nil
		}
		_, err = client.InsertManyTx(ctx, tx.Tx(), params)
		return err
	})
}

// sampleSeeded asks for each missing sample index in a request of its own
// (n = 1) with the index's SampleSeed, at most the endpoint's concurrency
// at a time. comps and seeds are aligned with missing; seeds[i] is nil
// where index missing[i] failed. A request for n > 1 with one seed cannot
// be used: vLLM derives choice i's seed as seed + i, so the next chunk,
// asked with the same seed, would repeat this one. The error is the first
// that cannot be retried, else the first (nil when every index arrived).
func sampleSeeded(ctx context.Context, c *sampling.Client, prompt string, cfg SamplingConfig, problemKey string, missing []int) ([]sampling.Completion, []*int64, sampling.Usage, error) {
	comps := make([]sampling.Completion, len(missing))
	seeds := make([]*int64, len(missing))
	errs := make([]error, len(missing))
	var (
		mu    sync.Mutex
		usage sampling.Usage
		wg    sync.WaitGroup
	)
	slots := make(chan struct{}, max(1, c.Endpoint().MaxConcurrency))
	for i, idx := range missing {
		seed := SampleSeed(*cfg.Seed, problemKey, idx)
		p := cfg.Params(1)
		p.Seed = &seed
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			got, u, err := c.Sample(ctx, prompt, p)
			mu.Lock()
			usage.PromptTokens += u.PromptTokens
			usage.CompletionTokens += u.CompletionTokens
			mu.Unlock()
			if err != nil {
				errs[i] = err
				return
			}
			comps[i], seeds[i] = got[0], &seed
		}()
	}
	wg.Wait()
	var first error
	for _, err := range errs {
		var se *sampling.Error
		switch {
		case err == nil:
		case errors.As(err, &se) && !se.Retryable():
			return comps, seeds, usage, err
		case first == nil:
			first = err
		}
	}
	return comps, seeds, usage, first
}
