// Package sampling draws completions from OpenAI-compatible inference servers
// (vLLM, SGLang, TGI, Ollama, OpenAI) for the pass@k study of Yue et al. 2025
// (arXiv 2504.13837): n completions of one prompt per request, a concurrency
// limit per endpoint, and bounded retries with backoff on transient failures.
// It also renders the prompt templates the study uses.
package sampling

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/reach-lab/reach/internal/metrics"
)

// Style is the API an endpoint is called through.
type Style string

const (
	// StyleCompletions posts the rendered prompt as is to /completions: the way
	// base models are evaluated with a raw prompt template.
	StyleCompletions Style = "completions"
	// StyleChat posts the rendered prompt as one user message to
	// /chat/completions; the server applies the model's chat template.
	StyleChat Style = "chat"
)

// Endpoint says where and how to reach one model.
type Endpoint struct {
	// BaseURL of the OpenAI-compatible API, e.g. "http://gpu1:8000/v1". A URL
	// with no path gets "/v1/" appended; any other path is kept and given a
	// trailing slash.
	BaseURL string
	Model   string // model name as the server knows it (vLLM: --served-model-name)
	APIKey  string // sent as a bearer token when not empty; never logged or put in errors
	Style   Style  // "" means StyleCompletions
	// MaxConcurrency caps the requests in flight to this endpoint through one
	// Client; 0 means 16.
	MaxConcurrency int
	// Timeout bounds one attempt (connect to last byte of the response); 0
	// means 10 minutes, enough for n = 64 long chains of thought on one GPU.
	Timeout time.Duration
	Retry   RetryPolicy
}

// Completion is one sampled text.
type Completion struct {
	Text         string
	FinishReason string // "stop", "length", ... as the server reported it
	// CompletionTokens is exact when the request asked for one completion.
	// OpenAI-compatible servers (vLLM included) report usage for the whole
	// request only, so with n > 1 the request's completion tokens are shared out
	// in proportion to each text's length in bytes (largest-remainder rounding,
	// so they sum to the reported total); 0 when the server reports no usage.
	CompletionTokens int
}

// Usage is the token count a server reported for one Sample call (summed
// over requests if it took more than one).
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

// Stats are a Client's cumulative counters since New, per attempt.
type Stats struct {
	Attempts int64            // HTTP requests sent
	InFlight int64            // requests under way now
	Retries  int64            // attempts that were followed by another
	Errors   map[string]int64 // failed attempts by ErrorKind, retried or not
}

var kinds = [...]string{KindRateLimit, KindServer, KindTimeout, KindConnection, KindBadRequest, KindAuth, KindOther}

// Client samples from one Endpoint. It is safe for concurrent use, and its
// concurrency limit holds across all callers: create one Client per endpoint
// and share it.
type Client struct {
	ep          Endpoint // with defaults filled in
	where       string   // base URL without credentials, for messages
	timeout     time.Duration
	retry       RetryPolicy
	sem         chan struct{}
	completions openai.CompletionService
	chat        openai.ChatService
	models      openai.ModelService

	attempts, inFlight, retries atomic.Int64
	errs                        [len(kinds)]atomic.Int64
	// unreachableSince (Unix ns) is when the current spell of attempts
	// that could not connect began, 0 when the last attempt got an answer;
	// unreachableTries counts that spell's attempts. Shared by all callers,
	// so the endpoint is judged down after DownAfter however many requests
	// wait on it.
	unreachableSince, unreachableTries atomic.Int64
}

// New checks ep and builds its Client. httpClient may be nil: then a client
// whose transport keeps MaxConcurrency idle connections to the host is used,
// so a saturated endpoint does not open a new TCP connection per request;
// it connects only to addresses the endpoint network policy allows (see
// SetNetPolicy), ignores HTTP(S)_PROXY, and follows no redirect. A
// caller-supplied httpClient should do the same and must not set a Timeout
// shorter than ep.Timeout.
//
// The openai-go SDK's own retries are turned off (this package retries), and
// none of the OPENAI_* environment variables are read, so a key meant for
// api.openai.com never reaches a self-hosted server.
func New(ep Endpoint, httpClient *http.Client) (*Client, error) {
	base, err := normalizeBaseURL(ep.BaseURL)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(ep.Model) == "" {
		return nil, errors.New("sampling: endpoint model name is empty")
	}
	switch ep.Style {
	case "":
		ep.Style = StyleCompletions
	case StyleCompletions, StyleChat:
	default:
		return nil, fmt.Errorf("sampling: endpoint style %q: want %q or %q", ep.Style, StyleCompletions, StyleChat)
	}
	if ep.MaxConcurrency <= 0 {
		ep.MaxConcurrency = 16
	}
	if ep.Timeout <= 0 {
		ep.Timeout = 10 * time.Minute
	}
	ep.BaseURL = base.String()
	if httpClient == nil {
		httpClient = guardedHTTPClient(ep.MaxConcurrency)
	}
	// Services are built from these options alone rather than through
	// openai.NewClient, whose defaults read OPENAI_API_KEY and friends.
	opts := []option.RequestOption{
		option.WithBaseURL(ep.BaseURL),
		option.WithAPIKey(ep.APIKey),
		option.WithHTTPClient(httpClient),
		option.WithMaxRetries(0),
	}
	return &Client{
		ep:          ep,
		where:       redactURL(base),
		timeout:     ep.Timeout,
		retry:       ep.Retry.withDefaults(),
		sem:         make(chan struct{}, ep.MaxConcurrency),
		completions: openai.NewCompletionService(opts...),
		chat:        openai.NewChatService(opts...),
		models:      openai.NewModelService(opts...),
	}, nil
}

// normalizeBaseURL accepts http(s) URLs with a host and gives them the
// trailing slash the SDK needs ("/v1/" when there is no path at all).
func normalizeBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sampling: base URL %q: want http(s)://host[:port]/v1", redactRaw(raw))
	}
	switch {
	case u.Path == "" || u.Path == "/":
		u.Path = "/v1/"
	case !strings.HasSuffix(u.Path, "/"):
		u.Path += "/"
	}
	u.RawPath = ""
	return u, nil
}

// redactRaw strips user info and query from a URL string that may not parse.
func redactRaw(raw string) string {
	raw, _, _ = strings.Cut(raw, "?")
	if i := strings.LastIndex(raw, "@"); i >= 0 {
		if j := strings.Index(raw, "://"); j >= 0 && j < i {
			return raw[:j+3] + "…" + raw[i:]
		}
	}
	return raw
}

// Endpoint returns the endpoint as used, defaults filled in.
func (c *Client) Endpoint() Endpoint { return c.ep }

// Stats returns a snapshot of the Client's counters.
func (c *Client) Stats() Stats {
	s := Stats{Attempts: c.attempts.Load(), InFlight: c.inFlight.Load(), Retries: c.retries.Load(), Errors: map[string]int64{}}
	for i, k := range kinds {
		if v := c.errs[i].Load(); v > 0 {
			s.Errors[k] = v
		}
	}
	return s
}

// Sample asks for p.N completions of prompt in one request (`n`). If the
// server returns fewer choices than asked (some servers ignore n), it asks for
// the rest in further requests, with the seed, if any, advanced by the number
// already received so they are not repeats. Completions come back in choice
// order.
//
// Each request is retried per the endpoint's RetryPolicy on 429, 5xx,
// timeouts and connection errors. The error is an *Error (see ErrorKind)
// unless ctx ended, in which case it wraps ctx.Err(). On error, the
// completions already received (from earlier requests of this call) are
// returned alongside it.
func (c *Client) Sample(ctx context.Context, prompt string, p Params) ([]Completion, Usage, error) {
	if err := p.Validate(); err != nil {
		return nil, Usage{}, &Error{Kind: KindBadRequest, Message: "invalid sampling parameters: " + err.Error()}
	}
	out := make([]Completion, 0, p.N)
	var usage Usage
	for len(out) < p.N {
		req := p
		req.N = p.N - len(out)
		if p.Seed != nil && len(out) > 0 {
			s := *p.Seed + int64(len(out))
			req.Seed = &s
		}
		got, u, err := c.withRetry(ctx, prompt, req)
		usage.PromptTokens += u.PromptTokens
		usage.CompletionTokens += u.CompletionTokens
		if err != nil {
			return out, usage, err
		}
		if len(got) == 0 {
			return out, usage, &Error{Kind: KindOther, Message: fmt.Sprintf("%s returned no choices for model %q", c.where, c.ep.Model)}
		}
		out = append(out, got[:min(len(got), req.N)]...)
	}
	return out, usage, nil
}

func (c *Client) withRetry(ctx context.Context, prompt string, p Params) ([]Completion, Usage, error) {
	var got []Completion
	var u Usage
	err := c.retrying(ctx, "sampling", func() *Error {
		var e *Error
		got, u, e = c.attempt(ctx, prompt, p)
		return e
	})
	if err != nil {
		return nil, Usage{}, err
	}
	return got, u, nil
}

// retrying calls try until it succeeds, fails for good (an error that is not
// Retryable, or the endpoint's RetryPolicy.MaxAttempts reached) or ctx ends,
// waiting the policy's backoff (or the server's Retry-After) in between. The
// error is try's *Error, or ctx.Err() wrapped with what (e.g. "sampling").
func (c *Client) retrying(ctx context.Context, what string, try func() *Error) error {
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s from %s: %w", what, c.where, ctx.Err())
		}
		err.Attempts = attempt
		var since, giveUp time.Time
		var tries int64
		if err.Unreachable && c.retry.MaxAttempts > 1 {
			// A server that is not there is retried for DownAfter from the
			// first failed connection, whatever MaxAttempts says, then
			// given up with a message that says so.
			since, tries = c.Unreachable()
			if !since.IsZero() {
				giveUp = since.Add(c.retry.DownAfter)
				if !time.Now().Before(giveUp) {
					err.Down = true
					err.Message = fmt.Sprintf("%s is unreachable: %s; %d attempts since %s (%s) could not connect, and an endpoint is given up after %s unreachable",
						c.where, strings.TrimSuffix(err.Message, " at "+c.where), tries, since.UTC().Format("15:04:05 UTC"),
						time.Since(since).Round(time.Second), c.retry.DownAfter)
					return err
				}
			}
		}
		if !giveUp.IsZero() && ctx.Value(rescheduleKey{}) != nil {
			return err
		}
		if !err.Retryable() || (attempt >= c.retry.MaxAttempts && giveUp.IsZero()) {
			return err
		}
		wait := c.retry.delay(attempt, err.retryAfter)
		if !giveUp.IsZero() {
			// Try once more right at the bound, so the endpoint is given up
			// on time.
			wait = max(0, min(wait, time.Until(giveUp)+10*time.Millisecond))
		}
		c.retries.Add(1)
		if fn, ok := ctx.Value(retryHookKey{}).(func(RetryNotice)); ok {
			fn(RetryNotice{Err: err, Attempt: attempt, Next: time.Now().Add(wait), UnreachableSince: since, Tries: tries, GiveUpAt: giveUp})
		}
		slog.Warn(what+": retrying", "endpoint", c.where, "model", c.ep.Model,
			"kind", err.Kind, "attempt", attempt, "wait", wait, "error", err.Message)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s from %s: %w", what, c.where, ctx.Err())
		case <-t.C:
		}
	}
}

// call sends one request through send, holding a concurrency slot for its
// duration only (never during backoff, so waiting retries do not starve other
// callers), with the endpoint's timeout; send gets the attempt's context and
// the options that capture an error response. A failure is classified into an
// *Error and counted by kind. api ("completion" or "logprobs") labels the
// request in the process's metrics.
func (c *Client) call(ctx context.Context, api string, send func(actx context.Context, opts []option.RequestOption) error) *Error {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return &Error{Kind: transportKind(ctx.Err()), Message: ctx.Err().Error()}
	}
	c.inFlight.Add(1)
	c.attempts.Add(1)
	defer func() {
		c.inFlight.Add(-1)
		<-c.sem
	}()
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var ec errorCapture
	start := time.Now()
	if err := send(actx, []option.RequestOption{option.WithMiddleware(ec.middleware)}); err != nil {
		e := c.classify(ctx, actx, err, &ec)
		c.errs[slices.Index(kinds[:], e.Kind)].Add(1)
		metrics.EndpointRequest(api, e.Kind, time.Since(start))
		switch {
		case e.Unreachable:
			c.unreachableSince.CompareAndSwap(0, start.UnixNano())
			c.unreachableTries.Add(1)
		case ec.status > 0:
			c.reached()
		}
		return e
	}
	metrics.EndpointRequest(api, "", time.Since(start))
	c.reached()
	return nil
}

// reached ends a spell of unreachability: the server answered.
func (c *Client) reached() {
	c.unreachableSince.Store(0)
	c.unreachableTries.Store(0)
}

// Unreachable returns since when every attempt to the endpoint has failed
// to connect and how many did (zero time when the last attempt got an
// answer).
func (c *Client) Unreachable() (since time.Time, tries int64) {
	ns := c.unreachableSince.Load()
	if ns == 0 {
		return time.Time{}, 0
	}
	return time.Unix(0, ns), c.unreachableTries.Load()
}

// RetryNotice describes an attempt that failed and is about to be retried.
type RetryNotice struct {
	Err     *Error
	Attempt int       // attempts of this request so far
	Next    time.Time // when the next attempt is sent
	// UnreachableSince and Tries: the endpoint's current spell of failed
	// connections (zero when the error is not one), and the time it is
	// given up at.
	UnreachableSince time.Time
	Tries            int64
	GiveUpAt         time.Time
}

type retryHookKey struct{}

type rescheduleKey struct{}

// WithReschedule returns a context whose Sample calls return an
// unreachable endpoint's error after one attempt instead of waiting for it
// in a retry loop (it is still given up as Down after DownAfter): for a
// caller that can try again later without holding anything meanwhile, as
// a queued job can, so a down endpoint does not hold every worker.
func WithReschedule(ctx context.Context) context.Context {
	return context.WithValue(ctx, rescheduleKey{}, true)
}

// DownAfter is how long the endpoint may stay unreachable before its
// requests fail for good (the policy's DownAfter, default filled in).
func (c *Client) DownAfter() time.Duration { return c.retry.DownAfter }

// WithRetryHook returns a context whose Sample calls report each retry
// to fn (e.g. to show it on a progress page) before waiting.
func WithRetryHook(ctx context.Context, fn func(RetryNotice)) context.Context {
	return context.WithValue(ctx, retryHookKey{}, fn)
}

// attempt sends one sampling request.
func (c *Client) attempt(ctx context.Context, prompt string, p Params) ([]Completion, Usage, *Error) {
	// The response is decoded into wireResponse with encoding/json instead of
	// the SDK's types: the SDK's decoder keeps every field's raw JSON and cost
	// about half of the client's CPU on n = 8 responses.
	var res wireResponse
	e := c.call(ctx, "completion", func(actx context.Context, opts []option.RequestOption) error {
		if p.TopK != 0 {
			opts = append(opts, option.WithJSONSet("top_k", p.TopK))
		}
		if p.MinP != 0 {
			opts = append(opts, option.WithJSONSet("min_p", p.MinP))
		}
		opts = append(opts, option.WithResponseBodyInto(&res))
		var err error
		if c.ep.Style == StyleChat {
			_, err = c.chat.Completions.New(actx, c.chatParams(prompt, p), opts...)
		} else {
			_, err = c.completions.New(actx, c.completionParams(prompt, p), opts...)
		}
		return err
	})
	if e != nil {
		return nil, Usage{}, e
	}
	got := res.completions()
	apportion(got, res.Usage.CompletionTokens)
	return got, Usage{PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens}, nil
}

// wireResponse is the part of a completions or chat completions response
// Reach reads.
type wireResponse struct {
	Choices []wireChoice `json:"choices"`
	Usage   struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

type wireChoice struct {
	Index        int      `json:"index"`
	Text         string   `json:"text"` // completions
	FinishReason string   `json:"finish_reason"`
	Message      struct { // chat
		Content string `json:"content"`
		// Reasoning split off the answer by vLLM's --reasoning-parser:
		// reasoning_content, or reasoning in newer versions.
		ReasoningContent string `json:"reasoning_content"`
		Reasoning        string `json:"reasoning"`
	} `json:"message"`
}

// completions returns the choices in index order. A chat answer whose
// reasoning the server split off gets it back in front inside <think> tags,
// so the stored sample is the whole chain of thought.
func (r *wireResponse) completions() []Completion {
	choices := slices.Clone(r.Choices)
	slices.SortStableFunc(choices, func(a, b wireChoice) int { return cmp.Compare(a.Index, b.Index) })
	out := make([]Completion, len(choices))
	for i, ch := range choices {
		text := ch.Text
		if m := ch.Message; m.Content != "" || m.ReasoningContent != "" || m.Reasoning != "" {
			text = m.Content
			if r := cmp.Or(m.ReasoningContent, m.Reasoning); r != "" {
				text = "<think>\n" + r + "\n</think>\n\n" + text
			}
		}
		out[i] = Completion{Text: text, FinishReason: ch.FinishReason}
	}
	return out
}

func (c *Client) completionParams(prompt string, p Params) openai.CompletionNewParams {
	q := openai.CompletionNewParams{
		Model:       openai.CompletionNewParamsModel(c.ep.Model),
		Prompt:      openai.CompletionNewParamsPromptUnion{OfString: openai.String(prompt)},
		N:           openai.Int(int64(p.N)),
		Temperature: openai.Float(p.Temperature),
		MaxTokens:   openai.Int(int64(p.MaxTokens)),
	}
	if p.TopP > 0 {
		q.TopP = openai.Float(p.TopP)
	}
	if len(p.Stop) > 0 {
		q.Stop = openai.CompletionNewParamsStopUnion{OfStringArray: p.Stop}
	}
	if p.Seed != nil {
		q.Seed = openai.Int(*p.Seed)
	}
	return q
}

// chatParams sends max_tokens rather than max_completion_tokens: it is the
// field vLLM, SGLang, TGI and Ollama all accept.
func (c *Client) chatParams(prompt string, p Params) openai.ChatCompletionNewParams {
	q := openai.ChatCompletionNewParams{
		Model:       c.ep.Model,
		Messages:    []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
		N:           openai.Int(int64(p.N)),
		Temperature: openai.Float(p.Temperature),
		MaxTokens:   openai.Int(int64(p.MaxTokens)),
	}
	if p.TopP > 0 {
		q.TopP = openai.Float(p.TopP)
	}
	if len(p.Stop) > 0 {
		q.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: p.Stop}
	}
	if p.Seed != nil {
		q.Seed = openai.Int(*p.Seed)
	}
	return q
}

// apportion shares total completion tokens among cs in proportion to text
// length (largest remainder), evenly when every text is empty.
func apportion(cs []Completion, total int) {
	if len(cs) == 0 || total <= 0 {
		return
	}
	weights := make([]int, len(cs))
	sum := 0
	for i, c := range cs {
		weights[i] = len(c.Text)
		sum += weights[i]
	}
	if sum == 0 {
		for i := range weights {
			weights[i] = 1
		}
		sum = len(cs)
	}
	type rem struct{ i, r int }
	rems := make([]rem, len(cs))
	given := 0
	for i, w := range weights {
		share := total * w
		cs[i].CompletionTokens = share / sum
		given += cs[i].CompletionTokens
		rems[i] = rem{i, share % sum}
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return cmp.Compare(b.r, a.r) })
	for k := 0; given < total; k++ {
		cs[rems[k].i].CompletionTokens++
		given++
	}
}

// errorCapture keeps the status, headers and (first 64 KiB of the) body of an
// error response, which the SDK's error type does not expose in a form that
// covers every server (vLLM has sent errors both at the top level and under
// "error").
type errorCapture struct {
	status int
	header http.Header
	body   []byte
	// tooLarge: the reply passed MaxReplyBytes and was cut off there.
	tooLarge atomic.Bool
}

// MaxReplyBytes bounds one reply's body (a completion, a judge's verdict,
// their logprobs): a server that sends more is refused, not read. Without
// it a reply streaming 1 GiB took a server from 134 MB to 4.9 GB of memory
// (a trial). 64 MiB, as an imported file's line (ingest's MaxLineBytes),
// holds 64 choices of 32,000 tokens each with 20 top logprobs.
const MaxReplyBytes = 64 << 20

// errReplyTooLarge ends the read of a reply past MaxReplyBytes.
var errReplyTooLarge = errors.New("reply too large")

// cappedBody reads a reply up to MaxReplyBytes, then fails (and says so
// in ec).
type cappedBody struct {
	io.ReadCloser
	left int64
	ec   *errorCapture
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errReplyTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		b.ec.tooLarge.Store(true)
		return n, errReplyTooLarge
	}
	return n, err
}

func (e *errorCapture) middleware(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	if res.StatusCode < 400 { // a reply came: its body is read by the caller, up to MaxReplyBytes
		e.status, e.header = res.StatusCode, res.Header
		if res.ContentLength > MaxReplyBytes {
			res.Body.Close()
			e.tooLarge.Store(true)
			return nil, errReplyTooLarge
		}
		res.Body = &cappedBody{ReadCloser: res.Body, left: MaxReplyBytes, ec: e}
		return res, nil
	}
	body, rerr := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	if rerr != nil {
		return nil, rerr
	}
	e.status, e.header, e.body = res.StatusCode, res.Header, body
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

// classify turns a failed attempt into an *Error. ctx is the caller's
// context, actx the attempt's (with the endpoint timeout).
func (c *Client) classify(ctx, actx context.Context, err error, ec *errorCapture) *Error {
	switch {
	case ec.tooLarge.Load():
		return &Error{Kind: KindBadRequest, Message: fmt.Sprintf("%s sent a reply of more than %d MiB, Reach's limit for one reply: "+
			"ask for fewer samples per request or fewer tokens (max_tokens, top logprobs), or check what the server sends", c.where, MaxReplyBytes>>20)}
	case ec.status >= 400:
		return &Error{
			Kind:       statusKind(ec.status),
			Status:     ec.status,
			Message:    c.statusMessage(ec.status, ec.body),
			retryAfter: parseRetryAfter(ec.header, time.Now()),
		}
	case ctx.Err() != nil:
		return &Error{Kind: transportKind(ctx.Err()), Message: ctx.Err().Error()}
	case errors.Is(actx.Err(), context.DeadlineExceeded):
		return &Error{Kind: KindTimeout, Message: fmt.Sprintf("no response within %s from %s", c.timeout, c.where)}
	}
	var blocked *BlockedError
	switch {
	case errors.As(err, &blocked):
		return &Error{Kind: KindBadRequest, Message: fmt.Sprintf("%s: %v", c.where, blocked)}
	case errors.Is(err, errRedirect):
		return &Error{Kind: KindBadRequest, Message: fmt.Sprintf("%s answered with a redirect, which Reach does not follow "+
			"(it would send the request and API key elsewhere): give the address it redirects to as the base URL", c.where)}
	}
	if ec.status >= 200 && ec.status < 300 {
		return c.badReply(err, ec)
	}
	kind := transportKind(err)
	if kind == KindOther {
		return &Error{Kind: KindOther, Message: scrub(fmt.Sprintf("bad response from %s: %v", c.where, err), c.ep.APIKey)}
	}
	return &Error{Kind: kind, Message: scrub(transportMessage(err, c.where), c.ep.APIKey), Unreachable: unreachable(err)}
}

// badReply classifies a successful status whose body could not be read as
// a completion: not JSON at all (an HTML page: a wrong base URL), JSON
// that ends too soon (cut short, or the connection dropped while it came:
// tried again), or JSON of another shape (not tried again).
func (c *Client) badReply(err error, ec *errorCapture) *Error {
	var opErr *net.OpError
	if errors.As(err, &opErr) || errors.Is(err, syscall.ECONNRESET) {
		return &Error{Kind: KindConnection, Message: scrub(transportMessage(err, c.where), c.ep.APIKey)}
	}
	if mt, _, _ := mime.ParseMediaType(ec.header.Get("Content-Type")); mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return &Error{Kind: KindBadRequest, Message: fmt.Sprintf("%s answered HTTP %d with %s, not JSON: check the base URL "+
			"(an OpenAI-compatible server's usually ends in /v1) and the API style", c.where, ec.status, mt)}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &Error{Kind: KindConnection, Message: fmt.Sprintf("the HTTP %d reply from %s ended before its JSON did (cut short, or the connection dropped)", ec.status, c.where)}
	}
	return &Error{Kind: KindOther, Message: scrub(fmt.Sprintf("the HTTP %d reply from %s is not an OpenAI-compatible completion: %v", ec.status, c.where, err), c.ep.APIKey)}
}

// statusMessage renders an HTTP error as "<code> <text>: <server message>",
// naming the model when the server says it does not know it.
func (c *Client) statusMessage(status int, body []byte) string {
	msg := scrub(serverMessage(body), c.ep.APIKey)
	head := fmt.Sprintf("%d %s", status, http.StatusText(status))
	if status >= 400 && status < 500 && modelMissing(msg, c.ep.Model) {
		return fmt.Sprintf("model '%s' not found at %s (%s: %s)", c.ep.Model, c.where, head, msg)
	}
	path := "completions"
	if c.ep.Style == StyleChat {
		path = "chat/completions"
	}
	if msg == "" {
		msg = "the reply is not an OpenAI-compatible error, so Reach does not show it"
	}
	if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
		return fmt.Sprintf("%s at %s%s: %s (check the base URL and the API style)", head, c.where, path, msg)
	}
	return head + ": " + msg
}

func modelMissing(msg, model string) bool {
	m := strings.ToLower(msg)
	if !strings.Contains(m, "not found") && !strings.Contains(m, "does not exist") && !strings.Contains(m, "not exist") {
		return false
	}
	return strings.Contains(msg, model) || strings.Contains(m, "model")
}
