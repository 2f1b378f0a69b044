// Package replay is an OpenAI-compatible inference server that answers from a
// real samples file instead of a model: each prompt gets the recorded
// completions of the problem whose statement it contains, in recorded order,
// with optional latency and injected 429/500 errors. Tests and demos sample a
// whole comparison through it (issue 4's `reach replay-server`).
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options tune a replay server. The zero value answers at once, never fails,
// and accepts any model name.
type Options struct {
	Latency   time.Duration // added to every request that is not rejected with 429
	ErrorRate float64       // in [0, 1]: share of requests answered 429 (half) or 500 (half)
	Seed      int64         // seeds the error draws, so a run's error pattern repeats
	// ModelName is the one model /v1/models lists and requests must name
	// (others get 404 as from vLLM); "" accepts any name and lists "replay".
	ModelName string
	// Logprobs is which ways of asking for prompt log-probabilities the
	// server supports (LogprobsBoth, LogprobsEcho, LogprobsPrompt,
	// LogprobsNone); see logprobCompletion for what it answers.
	Logprobs string
	// Judge, when set, makes the server a judge model: every completions
	// and chat request is answered with the verdict of the longest labelled
	// completion its prompt contains ("REASON: …" and "VERDICT: …" lines),
	// else with JudgeDefault ("unsure" when empty; JudgeNoVerdict for a
	// reply without a verdict line).
	Judge        []JudgeLabel
	JudgeDefault string
	// FinishReasons, optional, gives the recorded finish_reason of each
	// completion: FinishReasons[statement][i] is that of samples[statement][i]
	// (as LoadRecordings builds it); "" or a missing entry is "stop".
	FinishReasons map[string][]string
	// IgnoreSeed hands out the recorded completions in order also to
	// requests with a seed (a seeded request normally gets SeededPick's
	// picks, drawn with replacement). With a recording in random order, any
	// number of samples drawn is then a sample without replacement of it,
	// and drawing all of them gives the recording back: what a test of a
	// sampling design against the full recording needs.
	IgnoreSeed bool
	// Favour lists tokens this server gives log-probability FavouredLogprob
	// (see ModelLogprob): two servers, one with Favour, play a base and an
	// RL model that differ at known positions.
	Favour []string
}

// maxN bounds `n` per request, as a real server bounds its batch.
const maxN = 4096

// server is the http.Handler New returns.
type server struct {
	opts  Options
	index *index
	judge *judge // nil unless Options.Judge
	mux   *http.ServeMux
	ids   atomic.Int64
	// favour is Options.Favour as a set.
	favour map[string]bool

	mu  sync.Mutex // guards rng
	rng *rand.Rand
}

// New returns the replay handler for samples (problem statement -> recorded
// completion texts, as Load builds it). It serves:
//
//   - POST /v1/completions: the prompt (one string) is matched to a problem;
//   - POST /v1/chat/completions: the messages' texts, joined by newlines, are;
//   - GET /v1/models and GET /health.
//
// Matching: the problem whose statement (whitespace runs collapsed to one
// space) is the longest one contained in the prompt (same collapsing), so any
// prompt template works. A prompt containing no statement gets 400.
//
// Each problem hands out its completions in order from a cursor shared by all
// requests, wrapping to the first after the last, so asking for more than were
// recorded cycles; `n` (default 1) completions per request. Only answered
// requests move the cursor: injected errors and requests abandoned by the
// client during the latency take nothing. A request with a "seed" takes no
// turn: its choice j is the recorded completion SeededPick(seed, j, count)
// picks, so the same seed gets the same texts and chunks asked with one seed
// repeat each other, as they do on vLLM (with Options.IgnoreSeed it takes
// its turn like any other). Every choice has the recorded
// finish_reason (Options.FinishReasons; "stop" when none was recorded), so a
// completion cut by the length limit replays as "length"; max_tokens,
// temperature and the like are ignored. Usage counts
// tokens as whitespace-separated words, an approximation good enough for the
// progress page's tokens in/out.
//
// A completions request with "echo": true and "logprobs", or with vLLM's
// "prompt_logprobs", is a scoring request: it is answered with the prompt's
// log-probabilities (see Tokens and TokenLogprob for the deterministic rule,
// and Options.Logprobs), whatever the prompt. With Options.Judge the server
// is a judge model instead (see Options.Judge). samples may then be nil: a
// sampling request gets 400.
//
// Streaming requests get 400.
func New(samples map[string][]string, opts Options) http.Handler {
	s := &server{
		opts:  opts,
		index: newIndex(samples, opts.FinishReasons),
		mux:   http.NewServeMux(),
		rng:   rand.New(rand.NewPCG(uint64(opts.Seed), 0x9e3779b97f4a7c15)),
	}
	s.favour = map[string]bool{}
	for _, t := range opts.Favour {
		s.favour[t] = true
	}
	if len(opts.Judge) > 0 {
		s.judge = newJudge(opts.Judge, opts.JudgeDefault)
	}
	s.mux.HandleFunc("POST /v1/completions", s.completions)
	s.mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	s.mux.HandleFunc("GET /v1/models", s.models)
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	return s
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *server) modelName() string {
	if s.opts.ModelName == "" {
		return "replay"
	}
	return s.opts.ModelName
}

type request struct {
	Model    string          `json:"model"`
	Prompt   json.RawMessage `json:"prompt"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	N      *int   `json:"n"`
	Seed   *int64 `json:"seed"`
	Stream bool   `json:"stream"`
	// Scoring requests (see New).
	Echo           bool `json:"echo"`
	Logprobs       *int `json:"logprobs"`
	PromptLogprobs *int `json:"prompt_logprobs"`
	MaxTokens      *int `json:"max_tokens"`
}

func (s *server) completions(w http.ResponseWriter, r *http.Request) {
	req, ok := s.decode(w, r)
	if !ok {
		return
	}
	prompt, err := promptText(req.Prompt)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	switch {
	case s.judge != nil:
		s.judgeAnswer(w, r, req, prompt, false)
		return
	case req.wantsLogprobs():
		s.logprobCompletion(w, r, req, prompt)
		return
	}
	texts, finish, usage, ok := s.answer(w, r, req, prompt)
	if !ok {
		return
	}
	choices := make([]completionChoice, len(texts))
	for i, t := range texts {
		choices[i] = completionChoice{Index: i, Text: t, FinishReason: finish[i]}
	}
	writeJSON(w, http.StatusOK, completionResponse{
		ID: fmt.Sprintf("cmpl-replay-%d", s.ids.Add(1)), Object: "text_completion",
		Created: time.Now().Unix(), Model: req.Model, Choices: choices, Usage: usage,
	})
}

func (s *server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	req, ok := s.decode(w, r)
	if !ok {
		return
	}
	if len(req.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "messages is empty")
		return
	}
	parts := make([]string, 0, len(req.Messages))
	for i, m := range req.Messages {
		t, err := contentText(m.Content)
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("messages[%d].content: %v", i, err))
			return
		}
		parts = append(parts, t)
	}
	if s.judge != nil {
		s.judgeAnswer(w, r, req, strings.Join(parts, "\n"), true)
		return
	}
	texts, finish, usage, ok := s.answer(w, r, req, strings.Join(parts, "\n"))
	if !ok {
		return
	}
	choices := make([]chatChoice, len(texts))
	for i, t := range texts {
		choices[i] = chatChoice{Index: i, Message: chatMessage{Role: "assistant", Content: t}, FinishReason: finish[i]}
	}
	writeJSON(w, http.StatusOK, chatResponse{
		ID: fmt.Sprintf("chatcmpl-replay-%d", s.ids.Add(1)), Object: "chat.completion",
		Created: time.Now().Unix(), Model: req.Model, Choices: choices, Usage: usage,
	})
}

// decode reads and checks the parts of a request common to both endpoints;
// on failure it has written the error response.
func (s *server) decode(w http.ResponseWriter, r *http.Request) (request, bool) {
	var req request
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 16<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: "+err.Error())
		return req, false
	}
	switch {
	case req.Model == "":
		writeError(w, http.StatusBadRequest, "model is required")
		return req, false
	case s.opts.ModelName != "" && req.Model != s.opts.ModelName:
		writeErrorType(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return req, false
	case req.Stream:
		writeError(w, http.StatusBadRequest, "the replay server does not stream; send stream: false")
		return req, false
	case req.N != nil && (*req.N < 1 || *req.N > maxN):
		writeError(w, http.StatusBadRequest, fmt.Sprintf("n must be in [1, %d], got %d", maxN, *req.N))
		return req, false
	}
	return req, true
}

// answer matches prompt, applies injected errors and latency, and takes n
// completions; on failure (or a client gone) it has written the response.
// finish holds the texts' recorded finish reasons.
func (s *server) answer(w http.ResponseWriter, r *http.Request, req request, prompt string) (texts, finish []string, _ usage, _ bool) {
	if len(s.index.exact) == 0 {
		writeError(w, http.StatusBadRequest, errNoSamples.Error())
		return nil, nil, usage{}, false
	}
	p := s.index.lookup(prompt)
	if p == nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("replay: no recorded problem's statement occurs in the prompt (prompt starts %q)", head(prompt, 80)))
		return nil, nil, usage{}, false
	}
	if !s.gate(w, r) {
		return nil, nil, usage{}, false
	}
	n := 1
	if req.N != nil {
		n = *req.N
	}
	var picked []int
	if req.Seed != nil && !s.opts.IgnoreSeed {
		picked = p.takeSeeded(*req.Seed, n)
	} else {
		picked = p.take(n)
	}
	texts, finish = make([]string, n), make([]string, n)
	u := usage{PromptTokens: words(prompt)}
	for j, i := range picked {
		texts[j], finish[j] = p.texts[i], p.finishReason(i)
		u.CompletionTokens += words(texts[j])
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return texts, finish, u, true
}

// gate applies the injected errors and the latency to a request; false
// means it has answered with an error (or the client is gone).
func (s *server) gate(w http.ResponseWriter, r *http.Request) bool {
	fail := s.drawError()
	if fail == http.StatusTooManyRequests {
		writeErrorType(w, fail, "RateLimitError", "replay: injected rate limit")
		return false
	}
	if s.opts.Latency > 0 {
		t := time.NewTimer(s.opts.Latency)
		select {
		case <-r.Context().Done():
			t.Stop()
			return false
		case <-t.C:
		}
	}
	if fail == http.StatusInternalServerError {
		writeErrorType(w, fail, "InternalServerError", "replay: injected server error")
		return false
	}
	return true
}

// drawError returns 429, 500 or 0 (no error) for the next request.
func (s *server) drawError() int {
	if s.opts.ErrorRate <= 0 {
		return 0
	}
	s.mu.Lock()
	x := s.rng.Float64()
	s.mu.Unlock()
	switch {
	case x < s.opts.ErrorRate/2:
		return http.StatusTooManyRequests
	case x < s.opts.ErrorRate:
		return http.StatusInternalServerError
	}
	return 0
}

func (s *server) models(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data":   []any{map[string]any{"id": s.modelName(), "object": "model", "created": 0, "owned_by": "reach-replay"}},
	})
}

// promptText accepts a string or a one-element array of strings.
func promptText(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil && len(list) == 1 {
		return list[0], nil
	}
	return "", errors.New("prompt must be one string (the replay server takes one prompt per request)")
}

// contentText accepts a string or a list of parts, keeping the text parts.
func contentText(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("want a string or a list of content parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}

func words(s string) int { return len(strings.Fields(s)) }

func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type completionChoice struct {
	Index          int    `json:"index"`
	Text           string `json:"text"`
	Logprobs       any    `json:"logprobs"`
	PromptLogprobs any    `json:"prompt_logprobs,omitempty"`
	FinishReason   string `json:"finish_reason"`
}

type completionResponse struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []completionChoice `json:"choices"`
	Usage   usage              `json:"usage"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatChoice struct {
	Index        int         `json:"index"`
	Message      chatMessage `json:"message"`
	Logprobs     any         `json:"logprobs"`
	FinishReason string      `json:"finish_reason"`
}

type chatResponse struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []chatChoice `json:"choices"`
	Usage   usage        `json:"usage"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeErrorType(w, status, "BadRequestError", msg)
}

// writeErrorType answers in OpenAI's error shape, which vLLM also uses.
func writeErrorType(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": status}})
}

// ListenAndServe serves h on addr until ctx ends, then shuts down gracefully
// (in-flight requests get up to 5 s). It returns nil after a shutdown caused by
// ctx, or the error that stopped the server.
func ListenAndServe(ctx context.Context, addr string, h http.Handler) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("replay: listen on %s: %w", addr, err)
	}
	return Serve(ctx, ln, h)
}

// Serve is ListenAndServe on an existing listener (e.g. one on port 0 whose
// address the caller wants to print first). It closes ln.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	slog.Info("replay server listening", "addr", ln.Addr().String())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("replay: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("replay: shutdown: %w", err)
	}
	<-done
	return nil
}
