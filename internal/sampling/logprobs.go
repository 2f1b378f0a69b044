package sampling

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Ways a completions endpoint can give the log-probabilities of a text it is
// sent (rather than one it generates), for perplexity under a model
// (Yue et al. 2025, arXiv 2504.13837, Fig. 6).
const (
	// MethodEcho: "echo": true with "logprobs": 1 (the OpenAI legacy
	// completions API, served by vLLM): the response's logprobs cover the
	// prompt's tokens too, with their character offsets.
	MethodEcho = "echo"
	// MethodPromptLogprobs: vLLM's extra field "prompt_logprobs": 0, which
	// returns, per choice, one {token_id: {logprob, rank, decoded_token}}
	// per prompt token (null for the first).
	MethodPromptLogprobs = "prompt_logprobs"
)

// logprobResponse is the part of a completions response with prompt
// log-probabilities that Reach reads. It is decoded from the raw JSON: the
// SDK drops the null log-probability vLLM gives the first prompt token, which
// would shift every token after it.
type logprobResponse struct {
	Choices []struct {
		Text     string `json:"text"`
		Logprobs *struct {
			Tokens        []string             `json:"tokens"`
			TokenLogprobs []*float64           `json:"token_logprobs"`
			TextOffset    []int                `json:"text_offset"`
			TopLogprobs   []map[string]float64 `json:"top_logprobs"`
		} `json:"logprobs"`
		PromptLogprobs []map[string]promptLogprob `json:"prompt_logprobs"`
	} `json:"choices"`
	// Some vLLM versions put prompt_logprobs next to choices.
	PromptLogprobs []map[string]promptLogprob `json:"prompt_logprobs"`
	Usage          struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

type promptLogprob struct {
	Logprob      float64 `json:"logprob"`
	Rank         *int    `json:"rank"`
	DecodedToken string  `json:"decoded_token"`
}

// promptTokens returns the per-token log-probabilities of the prompt the
// server was sent (nil for a token without one, e.g. the first), with each
// token's character offset when the server gives offsets (echo), and how the
// server gave them; ok is false when the response holds no prompt
// log-probabilities at all.
//
// full is the text sent; with prompt_logprobs the offsets are derived from
// the tokens' decoded texts when they spell its end (decodedOffsets).
func (r *logprobResponse) promptTokens(method, full string) (lps []*float64, offsets []int, ok bool) {
	if len(r.Choices) == 0 {
		return nil, nil, false
	}
	ch := r.Choices[0]
	switch method {
	case MethodEcho:
		if ch.Logprobs == nil || len(ch.Logprobs.TokenLogprobs) == 0 {
			return nil, nil, false
		}
		lps = ch.Logprobs.TokenLogprobs
		if len(ch.Logprobs.TextOffset) == len(lps) {
			offsets = ch.Logprobs.TextOffset
		}
		return lps, offsets, true
	case MethodPromptLogprobs:
		pl := ch.PromptLogprobs
		if pl == nil {
			pl = r.PromptLogprobs
		}
		if len(pl) == 0 {
			return nil, nil, false
		}
		lps = make([]*float64, len(pl))
		decoded := make([]string, len(pl))
		for i, m := range pl {
			if len(m) == 0 {
				continue
			}
			// prompt_logprobs: 0 asks for the prompt token alone. With more
			// entries (top alternatives), which one is the prompt's token
			// cannot be told without token ids: refuse rather than guess.
			if len(m) != 1 {
				return nil, nil, false
			}
			for _, v := range m {
				lp := v.Logprob
				lps[i] = &lp
				decoded[i] = v.DecodedToken
			}
		}
		return lps, decodedOffsets(decoded, full), true
	}
	return nil, nil, false
}

// decodedOffsets gives prompt_logprobs' tokens character offsets from their
// decoded texts, counted back from the end of full (the first token, which
// has no entry, may be a BOS that is not in the text): nil unless tokens
// 1… decode to exactly the end of full, as byte-level tokens that decode to
// replacement characters do not.
func decodedOffsets(decoded []string, full string) []int {
	if len(decoded) < 2 || full == "" {
		return nil
	}
	rest := []rune(full)
	offsets := make([]int, len(decoded))
	end := len(rest)
	for i := len(decoded) - 1; i >= 1; i-- {
		t := []rune(decoded[i])
		if len(t) == 0 || len(t) > end || string(rest[end-len(t):end]) != decoded[i] {
			return nil
		}
		end -= len(t)
		offsets[i] = end
	}
	offsets[0] = 0 // what the first token holds is before offsets[1]
	return offsets
}

// LogprobResult is the log-probability of a completion's tokens given its
// prompt, under the endpoint's model.
type LogprobResult struct {
	Tokens     int     // completion tokens scored
	SumLogprob float64 // natural log, <= 0
	Perplexity float64 // exp(−SumLogprob / Tokens)
	// Boundary says how the completion's first token was found: "offsets"
	// (character offsets, the server's with echo or the decoded tokens'
	// with prompt_logprobs; a token that merges the prompt's end with the
	// completion's start is counted with the completion, whose first
	// characters it holds) or "token count" (the prompt's own token count,
	// when no offsets can be had; such a merged token then goes with the
	// prompt).
	Boundary string
}

// logprobRequest sends prompt to the completions endpoint asking for its
// prompt log-probabilities by method, generating one token (some servers
// refuse max_tokens 0).
func (c *Client) logprobRequest(ctx context.Context, method, prompt string) (*logprobResponse, Usage, error) {
	return c.logprobRequestK(ctx, method, prompt, 0)
}

// logprobRequestK is logprobRequest asking for the top k alternatives of
// each token too (k = 0: the token alone).
func (c *Client) logprobRequestK(ctx context.Context, method, prompt string, k int) (*logprobResponse, Usage, error) {
	var res logprobResponse
	err := c.retrying(ctx, "scoring", func() *Error {
		res = logprobResponse{}
		return c.call(ctx, "logprobs", func(actx context.Context, opts []option.RequestOption) error {
			q := openai.CompletionNewParams{
				Model:       openai.CompletionNewParamsModel(c.ep.Model),
				Prompt:      openai.CompletionNewParamsPromptUnion{OfString: openai.String(prompt)},
				MaxTokens:   openai.Int(1),
				Temperature: openai.Float(0),
			}
			if method == MethodEcho {
				q.Echo, q.Logprobs = openai.Bool(true), openai.Int(int64(max(k, 1)))
			} else {
				opts = append(opts, option.WithJSONSet("prompt_logprobs", k))
			}
			opts = append(opts, option.WithResponseBodyInto(&res))
			_, err := c.completions.New(actx, q, opts...)
			return err
		})
	})
	u := Usage{PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens}
	if err != nil {
		return nil, u, err
	}
	return &res, u, nil
}

// DetectLogprobs finds out how the endpoint gives prompt log-probabilities:
// it sends a short probe text first with echo + logprobs, then with vLLM's
// prompt_logprobs, and returns the first method whose reply covers the
// probe's tokens, with a note saying what it found. The endpoint must use the
// completions API (chat endpoints cannot score a given text). Errors: a
// failed request (an *Error) or neither method working (the note says what
// came back).
func (c *Client) DetectLogprobs(ctx context.Context) (method, note string, err error) {
	if c.ep.Style == StyleChat {
		return "", "", &Error{Kind: KindBadRequest, Message: "scoring needs the completions API: a chat endpoint cannot return the log-probabilities of a given text"}
	}
	const probe = "The capital of France is Paris. Two plus two is four."
	var notes []string
	for _, m := range []string{MethodEcho, MethodPromptLogprobs} {
		res, _, err := c.logprobRequest(ctx, m, probe)
		if err != nil {
			var e *Error
			if errors.As(err, &e) && e.Kind == KindBadRequest {
				notes = append(notes, fmt.Sprintf("%s refused (%s)", m, e.Message))
				continue
			}
			return "", "", err
		}
		lps, _, ok := res.promptTokens(m, probe)
		known := 0
		for _, lp := range lps {
			if lp != nil {
				known++
			}
		}
		if ok && known >= 2 {
			return m, fmt.Sprintf("the server returns prompt log-probabilities with %s (%d of %d probe tokens scored)",
				describeMethod(m), known, len(lps)), nil
		}
		notes = append(notes, fmt.Sprintf("%s accepted but returned no prompt log-probabilities", m))
	}
	return "", "", &Error{Kind: KindBadRequest, Message: "the server gives no prompt log-probabilities: " + strings.Join(notes, "; ") +
		" (vLLM serves both; check that this is a completions endpoint of a model server, not a proxy that drops them)"}
}

func describeMethod(m string) string {
	if m == MethodEcho {
		return `"echo": true and "logprobs": 1`
	}
	return `vLLM's "prompt_logprobs"`
}

// PromptTokenCount asks the server how many tokens prompt has (its usage's
// prompt_tokens for a one-token request): ScoreCompletion's boundary when
// the server gives no offsets.
func (c *Client) PromptTokenCount(ctx context.Context, method, prompt string) (int, Usage, error) {
	res, u, err := c.logprobRequest(ctx, method, prompt)
	if err != nil {
		return 0, u, err
	}
	n := res.Usage.PromptTokens
	if n == 0 {
		if lps, _, ok := res.promptTokens(method, prompt); ok {
			n = len(lps)
			if method == MethodEcho {
				n-- // the echo holds the generated token too
			}
		}
	}
	if n <= 0 {
		return 0, u, &Error{Kind: KindOther, Message: "the server reported no prompt token count"}
	}
	return n, u, nil
}

// ScoreCompletion returns the log-probability of completion's tokens when
// it follows prompt, under the endpoint's model, by method (DetectLogprobs).
// promptTokens is the prompt's own token count (PromptTokenCount), used when
// the server gives no character offsets; with offsets (echo), the completion
// is the tokens starting at or after the prompt's length in characters, and
// promptTokens is ignored. Errors: a failed request, a response without
// prompt log-probabilities, a completion with no token after the boundary, or
// a token of the completion without a log-probability.
func (c *Client) ScoreCompletion(ctx context.Context, method, prompt, completion string, promptTokens int) (LogprobResult, Usage, error) {
	full := prompt + completion
	res, u, err := c.logprobRequest(ctx, method, full)
	if err != nil {
		return LogprobResult{}, u, err
	}
	lps, offsets, ok := res.promptTokens(method, full)
	if !ok {
		return LogprobResult{}, u, &Error{Kind: KindOther, Message: fmt.Sprintf("the response has no prompt log-probabilities (%s)", method)}
	}
	var from, to int
	out := LogprobResult{}
	if offsets != nil {
		// Offsets count characters (code points, as vLLM's Python strings do).
		// A token belongs to the completion when it ends past the prompt:
		// the first completion token may start inside the prompt's last
		// characters (":" and " " merged, say) and must not be dropped.
		start, end := utf8.RuneCountInString(prompt), utf8.RuneCountInString(full)
		from, to = len(offsets), len(offsets)
		for i, off := range offsets {
			if off >= end {
				to = i
				break
			}
			tokEnd := end
			if i+1 < len(offsets) {
				tokEnd = offsets[i+1]
			}
			if tokEnd > start && from == len(offsets) {
				from = i
			}
		}
		out.Boundary = "offsets"
	} else {
		n := len(lps)
		if res.Usage.PromptTokens > 0 && res.Usage.PromptTokens <= n {
			n = res.Usage.PromptTokens // drop the generated token, if listed
		}
		from, to = promptTokens, n
		out.Boundary = "token count"
	}
	if from >= to {
		return LogprobResult{}, u, &Error{Kind: KindOther, Message: "no completion token after the prompt in the server's tokens"}
	}
	for i := from; i < to; i++ {
		if lps[i] == nil || math.IsNaN(*lps[i]) || *lps[i] > 1e-6 {
			return LogprobResult{}, u, &Error{Kind: KindOther, Message: fmt.Sprintf("completion token %d has no valid log-probability", i-from)}
		}
		out.SumLogprob += min(*lps[i], 0)
	}
	out.Tokens = to - from
	out.Perplexity = math.Exp(-out.SumLogprob / float64(out.Tokens))
	return out, u, nil
}
