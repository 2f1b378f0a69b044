package sampling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer is an OpenAI-compatible test server. reply decides each answer;
// every request body is kept.
type fakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	auth   []string
	paths  []string
}

func newFake(t *testing.T, reply func(w http.ResponseWriter, r *http.Request, body map[string]any, hit int)) *fakeServer {
	t.Helper()
	f := &fakeServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if r.Method == http.MethodPost {
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(w, "bad json", 400)
				return
			}
		}
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.paths = append(f.paths, r.URL.Path)
		hit := len(f.bodies)
		f.mu.Unlock()
		reply(w, r, body, hit)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeServer) hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

func (f *fakeServer) body(i int) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[i]
}

// okCompletions answers n choices "text-<i>" (listed in reverse index order,
// which the client must undo) with the given usage.
func okCompletions(w http.ResponseWriter, body map[string]any, prompt, completion int) {
	n := 1
	if v, ok := body["n"].(float64); ok {
		n = int(v)
	}
	choices := make([]map[string]any, 0, n)
	for i := n - 1; i >= 0; i-- {
		choices = append(choices, map[string]any{"index": i, "text": fmt.Sprintf("text-%d", i), "finish_reason": "stop", "logprobs": nil})
	}
	writeJSON(w, 200, map[string]any{
		"id": "cmpl-1", "object": "text_completion", "created": 1, "model": body["model"],
		"choices": choices,
		"usage":   map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func fastRetry(attempts int) RetryPolicy {
	return RetryPolicy{MaxAttempts: attempts, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}
}

func newClient(t *testing.T, ep Endpoint) *Client {
	t.Helper()
	c, err := New(ep, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSampleCompletionsAsksForNInOneRequest(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		okCompletions(w, body, 11, 80)
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "base-7b", APIKey: "k-123456"})
	p := DefaultParams()
	p.N = 8
	got, usage, err := c.Sample(context.Background(), "What is 2+2?", p)
	if err != nil {
		t.Fatal(err)
	}
	if f.hits() != 1 {
		t.Fatalf("requests = %d, want 1", f.hits())
	}
	if f.paths[0] != "/v1/completions" || f.auth[0] != "Bearer k-123456" {
		t.Fatalf("path %q auth %q", f.paths[0], f.auth[0])
	}
	b := f.body(0)
	want := map[string]any{"model": "base-7b", "prompt": "What is 2+2?", "n": 8.0, "temperature": 0.6, "top_p": 0.95, "max_tokens": 4096.0}
	for k, v := range want {
		if b[k] != v {
			t.Errorf("body[%q] = %v, want %v", k, b[k], v)
		}
	}
	for _, k := range []string{"top_k", "min_p", "seed", "stop"} {
		if _, ok := b[k]; ok {
			t.Errorf("body has %q though it is unset", k)
		}
	}
	if len(got) != 8 {
		t.Fatalf("got %d completions", len(got))
	}
	sum := 0
	for i, c := range got {
		if c.Text != fmt.Sprintf("text-%d", i) || c.FinishReason != "stop" {
			t.Errorf("completion %d = %+v", i, c)
		}
		sum += c.CompletionTokens
	}
	// Equal-length texts share 80 tokens evenly.
	if sum != 80 || got[0].CompletionTokens != 10 {
		t.Errorf("token shares sum %d, first %d; want 80, 10", sum, got[0].CompletionTokens)
	}
	if usage != (Usage{PromptTokens: 11, CompletionTokens: 80}) {
		t.Errorf("usage = %+v", usage)
	}
}

func TestSampleChatSendsOneUserMessageAndKeepsReasoning(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		writeJSON(w, 200, map[string]any{
			"id": "c", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{
				map[string]any{"index": 0, "finish_reason": "length", "message": map[string]any{"role": "assistant", "content": "answer \\boxed{4}", "reasoning_content": "2+2=4"}},
			},
			"usage": map[string]any{"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14},
		})
	})
	c := newClient(t, Endpoint{BaseURL: f.URL + "/v1", Model: "rl-7b", Style: StyleChat})
	got, _, err := c.Sample(context.Background(), "What is 2+2?", Params{N: 1, Temperature: 0, MaxTokens: 16})
	if err != nil {
		t.Fatal(err)
	}
	if f.paths[0] != "/v1/chat/completions" {
		t.Fatalf("path %q", f.paths[0])
	}
	b := f.body(0)
	msgs, _ := json.Marshal(b["messages"])
	if string(msgs) != `[{"content":"What is 2+2?","role":"user"}]` {
		t.Errorf("messages = %s", msgs)
	}
	if b["temperature"] != 0.0 {
		t.Errorf("temperature 0 not sent: %v", b["temperature"])
	}
	want := Completion{Text: "<think>\n2+2=4\n</think>\n\nanswer \\boxed{4}", FinishReason: "length", CompletionTokens: 9}
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestSampleSendsVLLMExtrasStopAndSeed(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		okCompletions(w, body, 1, 1)
	})
	for _, style := range []Style{StyleCompletions, StyleChat} {
		c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", Style: style})
		seed := int64(42)
		p := Params{N: 2, Temperature: 1, TopP: 0.9, TopK: 20, MinP: 0.05, MaxTokens: 100, Stop: []string{"</s>", "\n\nQuestion:"}, Seed: &seed}
		if style == StyleChat {
			// The fake answers in completions shape; only the request matters here.
			c.Sample(context.Background(), "p", p)
		} else if _, _, err := c.Sample(context.Background(), "p", p); err != nil {
			t.Fatal(err)
		}
		b := f.body(f.hits() - 1)
		stop := fmt.Sprintf("%q", b["stop"])
		if b["top_k"] != 20.0 || b["min_p"] != 0.05 || b["seed"] != 42.0 || b["top_p"] != 0.9 || stop != `["</s>" "\n\nQuestion:"]` {
			t.Errorf("%s body = %v", style, b)
		}
	}
}

func TestSampleFillsUpWhenServerIgnoresN(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, hit int) {
		writeJSON(w, 200, map[string]any{"id": "x", "object": "text_completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "text": fmt.Sprintf("only-%d", hit), "finish_reason": "stop"}}})
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m"})
	seed := int64(7)
	got, _, err := c.Sample(context.Background(), "p", Params{N: 3, Temperature: 1, MaxTokens: 5, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[2].Text != "only-3" {
		t.Fatalf("got %+v", got)
	}
	for i, wantN := range []float64{3, 2, 1} {
		b := f.body(i)
		if b["n"] != wantN || b["seed"] != float64(7+3-int(wantN)) {
			t.Errorf("request %d: n=%v seed=%v", i, b["n"], b["seed"])
		}
	}
}

func TestRetriesRateLimitAndServerErrorThenSucceeds(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, hit int) {
		switch hit {
		case 1:
			w.Header().Set("Retry-After-Ms", "150")
			writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "slow down"}})
		case 2:
			writeJSON(w, 500, map[string]any{"object": "error", "message": "engine crashed", "code": 500})
		default:
			okCompletions(w, body, 1, 2)
		}
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", Retry: fastRetry(5)})
	start := time.Now()
	got, _, err := c.Sample(context.Background(), "p", Params{N: 2, Temperature: 1, MaxTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || f.hits() != 3 {
		t.Fatalf("got %d completions after %d requests", len(got), f.hits())
	}
	// Retry-After-Ms (150 ms) overrides the 1 ms backoff, capped by MaxDelay
	// (5 ms): the wait is bounded by the policy, not the server.
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
	s := c.Stats()
	if s.Attempts != 3 || s.Retries != 2 || s.Errors[KindRateLimit] != 1 || s.Errors[KindServer] != 1 || s.InFlight != 0 {
		t.Errorf("stats = %+v", s)
	}
}

func TestRetryAfterIsHonouredUpToMaxDelay(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, hit int) {
		if hit == 1 {
			w.Header().Set("Retry-After", "1")
			writeJSON(w, 429, map[string]any{"error": map[string]any{"message": "slow down"}})
			return
		}
		okCompletions(w, body, 1, 1)
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", Retry: RetryPolicy{MaxAttempts: 2, BaseDelay: time.Millisecond, MaxDelay: 300 * time.Millisecond}})
	start := time.Now()
	if _, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1}); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("retried after %v, before the server's Retry-After (capped at 300ms)", d)
	}
}

func TestGivesUpAfterMaxAttempts(t *testing.T) {
	for _, tc := range []struct {
		status int
		kind   string
	}{{503, KindServer}, {429, KindRateLimit}} {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
			writeJSON(w, tc.status, map[string]any{"error": map[string]any{"message": "busy"}})
		})
		c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", Retry: fastRetry(3)})
		_, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1})
		if ErrorKind(err) != tc.kind || f.hits() != 3 {
			t.Fatalf("status %d: kind %q after %d requests (err %v)", tc.status, ErrorKind(err), f.hits(), err)
		}
		var e *Error
		if !errors.As(err, &e) || e.Attempts != 3 || e.Status != tc.status {
			t.Fatalf("err = %#v", err)
		}
		wantMsg := fmt.Sprintf("%d %s: busy (gave up after 3 attempts)", tc.status, http.StatusText(tc.status))
		if err.Error() != wantMsg {
			t.Errorf("message %q, want %q", err.Error(), wantMsg)
		}
	}
}

func TestBadRequestIsNotRetried(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		writeJSON(w, 400, map[string]any{"object": "error", "message": "max_tokens is too large", "type": "BadRequestError", "code": 400})
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", Retry: fastRetry(5)})
	_, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1})
	if ErrorKind(err) != KindBadRequest || f.hits() != 1 || err.Error() != "400 Bad Request: max_tokens is too large" {
		t.Fatalf("kind %q hits %d err %v", ErrorKind(err), f.hits(), err)
	}
}

func TestConcurrencyLimitIsNeverExceeded(t *testing.T) {
	var inFlight, peak atomic.Int64
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(15 * time.Millisecond)
		inFlight.Add(-1)
		okCompletions(w, body, 1, 1)
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", MaxConcurrency: 3})
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for range 24 {
		wg.Go(func() {
			if _, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if peak.Load() != 3 {
		t.Errorf("peak in-flight = %d, want exactly the limit 3", peak.Load())
	}
}

func TestAttemptTimeoutIsRetriedThenReported(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", Timeout: 50 * time.Millisecond, Retry: fastRetry(2)})
	_, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1})
	if ErrorKind(err) != KindTimeout || f.hits() != 2 {
		t.Fatalf("kind %q after %d requests: %v", ErrorKind(err), f.hits(), err)
	}
	want := fmt.Sprintf("no response within 50ms from %s/v1/ (gave up after 2 attempts)", f.URL)
	if err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
}

func TestCallerCancelStopsRetrying(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		writeJSON(w, 500, map[string]any{"error": map[string]any{"message": "x"}})
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", Retry: RetryPolicy{MaxAttempts: 100, BaseDelay: 20 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, _, err := c.Sample(ctx, "p", Params{N: 1, MaxTokens: 1})
	if !errors.Is(err, context.DeadlineExceeded) || f.hits() >= 100 {
		t.Fatalf("err %v after %d requests", err, f.hits())
	}
}

func TestAuthErrorIsReadableAndKeyNeverLeaks(t *testing.T) {
	const key = "sk-live-SECRET-0123456789"
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		writeJSON(w, 401, map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + key + ".", "type": "invalid_request_error", "code": "invalid_api_key"}})
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", APIKey: key, Retry: fastRetry(3)})
	_, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1})
	if ErrorKind(err) != KindAuth || f.hits() != 1 {
		t.Fatalf("kind %q, %d requests", ErrorKind(err), f.hits())
	}
	if want := "401 Unauthorized: Incorrect API key provided: [redacted]."; err.Error() != want {
		t.Errorf("message %q, want %q", err.Error(), want)
	}
	if strings.Contains(fmt.Sprintf("%v %+v %#v", err, err, err), key) {
		t.Errorf("key leaked: %#v", err)
	}
}

func TestConnectionRefusedMessageHasNoCredentials(t *testing.T) {
	addr := closedAddr(t)
	const key = "sk-never-shown-42"
	retry := fastRetry(2)
	retry.DownAfter = 20 * time.Millisecond
	c := newClient(t, Endpoint{BaseURL: "http://user:" + key + "@" + addr + "/v1?api_key=" + key, Model: "m", APIKey: key, Retry: retry})
	_, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1})
	if ErrorKind(err) != KindConnection {
		t.Fatalf("kind %q: %v", ErrorKind(err), err)
	}
	want := "http://" + addr + "/v1/ is unreachable: connect: connection refused; "
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("message %q, want it to start %q", err.Error(), want)
	}
	if strings.Contains(fmt.Sprintf("%v %#v", err, err), key) {
		t.Error("key leaked")
	}
}

// An endpoint nothing listens on is retried past MaxAttempts for
// DownAfter from its first refused connection, then given up for good
// with a message naming the address, the cause, the attempts and the bound.
func TestUnreachableEndpointGivenUpAfterDownAfter(t *testing.T) {
	addr := closedAddr(t)
	c := newClient(t, Endpoint{BaseURL: "http://" + addr + "/v1", Model: "m",
		Retry: RetryPolicy{MaxAttempts: 2, BaseDelay: 5 * time.Millisecond, MaxDelay: 40 * time.Millisecond, DownAfter: 400 * time.Millisecond}})
	var notices []RetryNotice
	ctx := WithRetryHook(context.Background(), func(n RetryNotice) { notices = append(notices, n) })
	start := time.Now()
	_, _, err := c.Sample(ctx, "p", Params{N: 1, MaxTokens: 1})
	took := time.Since(start)
	var e *Error
	if !errors.As(err, &e) || !e.Down || !e.Unreachable || e.Retryable() {
		t.Fatalf("got %#v (%v); want a Down, unreachable, not retryable *Error", err, err)
	}
	if took < 400*time.Millisecond || took > 2*time.Second {
		t.Errorf("given up after %s; want just after DownAfter (400ms)", took)
	}
	for _, want := range []string{"http://" + addr + "/v1/ is unreachable", "connection refused", "given up after 400ms unreachable"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err.Error(), want)
		}
	}
	if _, tries := c.Unreachable(); tries <= 2 || len(notices) < 2 {
		t.Errorf("%d attempts, %d retry notices; want more than MaxAttempts (2)", tries, len(notices))
	}
	if n := notices[len(notices)-1]; n.UnreachableSince.IsZero() || n.GiveUpAt.Sub(n.UnreachableSince) != 400*time.Millisecond || n.Next.IsZero() {
		t.Errorf("last notice %+v: want the spell's start, the give-up time and the next try", n)
	}
	// The next request does not wait for a new spell: the endpoint is down.
	start = time.Now()
	if _, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1}); !errors.As(err, &e) || !e.Down {
		t.Fatalf("second request: %v; want Down at once", err)
	}
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("second request took %s; want the first attempt to give up", d)
	}
}

// A server that refuses connections for a while (restarting) and then
// comes up within DownAfter is waited for, past MaxAttempts, and the
// answer ends the spell.
func TestEndpointComingUpWithinDownAfterIsWaitedFor(t *testing.T) {
	addr := closedAddr(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		okCompletions(w, body, 1, 1)
	})}
	t.Cleanup(func() { srv.Close() })
	go func() {
		time.Sleep(700 * time.Millisecond)
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		_ = srv.Serve(ln)
	}()
	c := newClient(t, Endpoint{BaseURL: "http://" + addr + "/v1", Model: "m",
		Retry: RetryPolicy{MaxAttempts: 2, BaseDelay: 20 * time.Millisecond, MaxDelay: 100 * time.Millisecond, DownAfter: 20 * time.Second}})
	got, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("got %d completions, err %v; want the server that came up to be waited for", len(got), err)
	}
	if since, _ := c.Unreachable(); !since.IsZero() {
		t.Errorf("unreachable since %s after an answer; want the spell ended", since)
	}
	if c.Stats().Errors[KindConnection] < 2 {
		t.Errorf("errors %v: want the refused attempts counted", c.Stats().Errors)
	}
}

func TestEnvironmentKeyIsNotSent(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		okCompletions(w, body, 1, 1)
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m"})
	if _, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1}); err != nil {
		t.Fatal(err)
	}
	if f.auth[0] != "" {
		t.Errorf("Authorization %q sent to a keyless endpoint", f.auth[0])
	}
}

func TestTestConnection(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		if r.URL.Path == "/v1/models" {
			writeJSON(w, 200, map[string]any{"object": "list", "data": []any{map[string]any{"id": "Qwen/Qwen2.5-7B", "object": "model", "created": 0, "owned_by": "vllm"}}})
			return
		}
		if body["model"] != "Qwen/Qwen2.5-7B" {
			// vLLM's shape: the error at the top level.
			writeJSON(w, 404, map[string]any{"object": "error", "message": fmt.Sprintf("The model `%s` does not exist.", body["model"]), "type": "NotFoundError", "param": nil, "code": 404})
			return
		}
		if mt := body["max_tokens"].(float64); mt < 1 || mt > 8 {
			t.Errorf("max_tokens %v", mt)
		}
		okCompletions(w, body, 3, 1)
	})
	got, err := TestConnection(context.Background(), Endpoint{BaseURL: f.URL, Model: "Qwen/Qwen2.5-7B"}, "")
	if err != nil || got != "text-0" {
		t.Fatalf("reply %q, err %v", got, err)
	}

	_, err = TestConnection(context.Background(), Endpoint{BaseURL: f.URL, Model: "qwen"}, "")
	want := fmt.Sprintf("model 'qwen' not found at %s/v1/ (404 Not Found: The model `qwen` does not exist.); the server serves: Qwen/Qwen2.5-7B", f.URL)
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}

	addr := closedAddr(t)
	_, err = TestConnection(context.Background(), Endpoint{BaseURL: "http://" + addr, Model: "m"}, "")
	if want := "connect: connection refused at http://" + addr + "/v1/"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}

	wrongPath := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		http.NotFound(w, r)
	})
	_, err = TestConnection(context.Background(), Endpoint{BaseURL: wrongPath.URL + "/api", Model: "m"}, "")
	if want := "404 Not Found at " + wrongPath.URL + "/api/completions: the reply is not an OpenAI-compatible error, so Reach does not show it (check the base URL and the API style)"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestNewRejectsBadEndpoints(t *testing.T) {
	for _, ep := range []Endpoint{
		{BaseURL: "gpu1:8000", Model: "m"},
		{BaseURL: "ftp://gpu1/v1", Model: "m"},
		{BaseURL: "http://gpu1:8000/v1", Model: " "},
		{BaseURL: "http://gpu1:8000/v1", Model: "m", Style: "responses"},
	} {
		if _, err := New(ep, nil); err == nil {
			t.Errorf("New(%+v) accepted", ep)
		}
	}
	c := newClient(t, Endpoint{BaseURL: "http://gpu1:8000/openai/v1", Model: "m"})
	if c.Endpoint().BaseURL != "http://gpu1:8000/openai/v1/" || c.Endpoint().Style != StyleCompletions || c.Endpoint().MaxConcurrency != 16 {
		t.Errorf("endpoint = %+v", c.Endpoint())
	}
}

func TestInvalidParamsFailBeforeAnyRequest(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
		okCompletions(w, body, 1, 1)
	})
	c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m"})
	_, _, err := c.Sample(context.Background(), "p", Params{N: 0, TopP: 1.5, MaxTokens: 0})
	if ErrorKind(err) != KindBadRequest || f.hits() != 0 {
		t.Fatalf("kind %q, %d requests", ErrorKind(err), f.hits())
	}
	for _, frag := range []string{"n must be >= 1", "top_p must be in (0, 1]", "max_tokens must be >= 1"} {
		if !strings.Contains(err.Error(), frag) {
			t.Errorf("%q missing from %q", frag, err)
		}
	}
}

func TestApportion(t *testing.T) {
	cs := []Completion{{Text: "aaaa"}, {Text: "aa"}, {Text: "a"}}
	apportion(cs, 10) // shares 40/7, 20/7, 10/7 = 5.71, 2.86, 1.43 -> 5, 2, 1 + remainders to the two largest (.86, .71)
	if cs[0].CompletionTokens != 6 || cs[1].CompletionTokens != 3 || cs[2].CompletionTokens != 1 {
		t.Errorf("got %d %d %d, want 6 3 1", cs[0].CompletionTokens, cs[1].CompletionTokens, cs[2].CompletionTokens)
	}
	empty := []Completion{{}, {}, {}}
	apportion(empty, 4)
	if empty[0].CompletionTokens != 2 || empty[1].CompletionTokens != 1 || empty[2].CompletionTokens != 1 {
		t.Errorf("even split got %+v", empty)
	}
}

func TestRetryDelay(t *testing.T) {
	p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.withDefaults()
	for attempt, cap := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 4: 800 * time.Millisecond, 9: time.Second} {
		for range 50 {
			if d := p.delay(attempt, 0); d < cap/2 || d > cap {
				t.Fatalf("attempt %d: delay %v outside [%v, %v]", attempt, d, cap/2, cap)
			}
		}
	}
	if d := p.delay(1, 700*time.Millisecond); d != 700*time.Millisecond {
		t.Errorf("Retry-After 700ms gave %v", d)
	}
	if d := p.delay(1, time.Minute); d != time.Second {
		t.Errorf("Retry-After 1m gave %v, want the 1s cap", d)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"Retry-After: 3":                             3 * time.Second,
		"Retry-After-Ms: 250":                        250 * time.Millisecond,
		"Retry-After: Thu, 01 Jan 2026 00:00:10 GMT": 10 * time.Second,
		"Retry-After: soon":                          0,
	} {
		k, v, _ := strings.Cut(h, ": ")
		if got := parseRetryAfter(http.Header{k: {v}}, now); got != want {
			t.Errorf("%s: got %v, want %v", h, got, want)
		}
	}
}

func TestServerMessageShapes(t *testing.T) {
	for body, want := range map[string]string{
		`{"error":{"message":"a"}}`:                 "a",
		`{"object":"error","message":"b","code":1}`: "b",
		`{"error":"c","error_type":"validation"}`:   "c",
		`{"detail":"Not Found"}`:                    "Not Found",
		`{"detail":"  two\n  lines  "}`:             "two lines",
		"<html>\n  bad   gateway </html>":           "", // not an OpenAI-shaped error: not shown
		`{"user":"root","password":"x"}`:            "",
		"404 page not found":                        "",
	} {
		if got := serverMessage([]byte(body)); got != want {
			t.Errorf("%s: got %q, want %q", body, got, want)
		}
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestRegistrySharesOneClientPerEndpoint(t *testing.T) {
	var r Registry
	ep := Endpoint{BaseURL: "http://gpu1:8000/v1", Model: "m", APIKey: "k1", MaxConcurrency: 4}
	a, err := r.Get(ep)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := r.Get(ep)
	ep.APIKey = "k2"
	c, _ := r.Get(ep)
	if a != b || a == c {
		t.Errorf("same endpoint shared: %v, changed key separate: %v", a == b, a != c)
	}
	if _, err := r.Get(Endpoint{BaseURL: "nope", Model: "m"}); err == nil {
		t.Error("bad endpoint accepted")
	}
}

func TestNewErrorHidesCredentials(t *testing.T) {
	_, err := New(Endpoint{BaseURL: "gpu1://user:sk-abcdef@host:x/v1?key=sk-abcdef", Model: "m"}, nil)
	if err == nil || strings.Contains(err.Error(), "sk-abcdef") {
		t.Errorf("err = %v", err)
	}
}

// A 200 whose body is not a completion says what came back: an HTML page
// (a base URL that is not the API's) or JSON of another shape is not tried
// again; JSON cut short is, and is not called a closed connection.
func TestBadSuccessfulReplies(t *testing.T) {
	for _, tc := range []struct {
		name, ctype, body string
		kind, msg         string
		hits              int
	}{
		{"html page", "text/html; charset=utf-8", "<!doctype html><p>Welcome</p>", KindBadRequest, "answered HTTP 200 with text/html, not JSON: check the base URL", 1},
		{"json of another shape", "application/json", `{"choices": "nope"}`, KindOther, "is not an OpenAI-compatible completion", 1},
		{"json cut short", "application/json", `{"choices": "nope"`, KindConnection, "ended before its JSON did", 3},
	} {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
			w.Header().Set("Content-Type", tc.ctype)
			_, _ = io.WriteString(w, tc.body)
		})
		c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", Retry: fastRetry(3)})
		_, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1})
		if ErrorKind(err) != tc.kind || f.hits() != tc.hits || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: kind %q after %d requests, err %v; want %q after %d saying %q", tc.name, ErrorKind(err), f.hits(), err, tc.kind, tc.hits, tc.msg)
		}
	}
}

// A reply past MaxReplyBytes is refused once, not read to its end and not
// tried again, whether it says its length or streams without one (a
// trial's 1 GiB reply took the server to 4.9 GB); one just under is read.
func TestReplyOverTheLimitIsRefused(t *testing.T) {
	text := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name   string
		length bool // send Content-Length
		size   int  // bytes of the completion's text
		ok     bool
	}{
		{"streamed, over", false, MaxReplyBytes + 1, false},
		{"with its length, over", true, MaxReplyBytes + 1, false},
		{"just under", false, MaxReplyBytes - 4096, true},
	} {
		f := newFake(t, func(w http.ResponseWriter, r *http.Request, body map[string]any, _ int) {
			b, _ := json.Marshal(map[string]any{"id": "c", "object": "text_completion", "created": 1, "model": "m",
				"choices": []map[string]any{{"index": 0, "text": text(tc.size), "finish_reason": "stop"}}})
			w.Header().Set("Content-Type", "application/json")
			if tc.length {
				w.Header().Set("Content-Length", strconv.Itoa(len(b)))
			}
			for i := 0; i < len(b); i += 1 << 20 {
				if _, err := w.Write(b[i:min(len(b), i+1<<20)]); err != nil {
					return
				}
			}
		})
		c := newClient(t, Endpoint{BaseURL: f.URL, Model: "m", Retry: fastRetry(3)})
		got, _, err := c.Sample(context.Background(), "p", Params{N: 1, MaxTokens: 1})
		if tc.ok {
			if err != nil || len(got) != 1 || len(got[0].Text) != tc.size {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if ErrorKind(err) != KindBadRequest || f.hits() != 1 || err == nil || !strings.Contains(err.Error(), "more than 64 MiB") {
			t.Errorf("%s: kind %q after %d requests, err %v; want a refusal after one", tc.name, ErrorKind(err), f.hits(), err)
		}
	}
}
