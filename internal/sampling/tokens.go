package sampling

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// Per-token scoring with top-k alternatives (issue 26): the log-probability
// of each token of a completion, and the model's k most likely tokens at
// each position, so that internal/tokendiv can show where an RL model and
// its base part ways (Meng et al. 2026, "Sparse but Critical", arXiv
// 2603.22446).

// TopK is how many alternatives per position token scoring asks for.
const TopK = 5

// Alt is one alternative token at a position and its natural-log
// probability.
type Alt struct {
	Token   string
	Logprob float64
}

// TokenScores is a completion's tokens scored under one model.
type TokenScores struct {
	Tokens   []string  // the completion's tokens as the server splits them (the first may hold the prompt's last characters)
	Logprobs []float64 // natural log, <= 0
	Top      [][]Alt   // each position's alternatives, most likely first (the token itself included)
	Boundary string    // as LogprobResult.Boundary
}

// DetectTopLogprobs finds out how the endpoint gives prompt log-probabilities
// with top-k alternatives: echo + logprobs k, then vLLM's prompt_logprobs k;
// it returns the first that lists more than one alternative per position.
// Errors name what the server did (a server giving log-probabilities
// without alternatives is refused: the JS divergence needs them).
func (c *Client) DetectTopLogprobs(ctx context.Context) (method, note string, err error) {
	if c.ep.Style == StyleChat {
		return "", "", &Error{Kind: KindBadRequest, Message: "token scoring needs the completions API: a chat endpoint cannot return the log-probabilities of a given text"}
	}
	const probe, probeEnd = "The capital of France is Paris.", " Two plus two is four."
	var notes []string
	for _, m := range []string{MethodEcho, MethodPromptLogprobs} {
		n, _, err := c.PromptTokenCount(ctx, m, probe)
		var ts TokenScores
		if err == nil {
			ts, _, err = c.ScoreTokens(ctx, m, probe, probeEnd, n)
		}
		if err != nil {
			var e *Error
			if errors.As(err, &e) && (e.Kind == KindBadRequest || e.Kind == KindOther) {
				notes = append(notes, fmt.Sprintf("%s: %s", m, e.Message))
				continue
			}
			return "", "", err
		}
		alts := 0
		for _, t := range ts.Top {
			alts = max(alts, len(t))
		}
		if alts > 1 {
			how := fmt.Sprintf(`"echo": true and "logprobs": %d`, TopK)
			if m != MethodEcho {
				how = fmt.Sprintf(`vLLM's "prompt_logprobs": %d`, TopK)
			}
			return m, fmt.Sprintf("the server returns per-token log-probabilities with top-%d alternatives through %s (%d probe tokens)",
				alts, how, len(ts.Tokens)), nil
		}
		notes = append(notes, fmt.Sprintf("%s gave log-probabilities but no alternatives", m))
	}
	return "", "", &Error{Kind: KindBadRequest, Message: "the server gives no per-token log-probabilities with alternatives: " + strings.Join(notes, "; ") +
		" (vLLM serves both echo + logprobs and prompt_logprobs; check --max-logprobs is at least 5)"}
}

// ScoreTokens returns the log-probability and the top-k alternatives of each
// token of completion after prompt, by method (DetectTopLogprobs). The
// prompt/completion boundary is found as in ScoreCompletion (character
// offsets, else promptTokens). With prompt_logprobs, the prompt's token at
// a position is the alternative whose decoded text ends the remaining text
// (walking back from the end); when more than one could, a second request
// with prompt_logprobs 0 names it by token id. Errors: as ScoreCompletion's.
func (c *Client) ScoreTokens(ctx context.Context, method, prompt, completion string, promptTokens int) (TokenScores, Usage, error) {
	full := prompt + completion
	res, u, err := c.logprobRequestK(ctx, method, full, TopK)
	if err != nil {
		return TokenScores{}, u, err
	}
	if len(res.Choices) == 0 {
		return TokenScores{}, u, &Error{Kind: KindOther, Message: "the response has no choices"}
	}
	var toks []string
	var lps []*float64
	var tops [][]Alt
	var offsets []int
	ch := res.Choices[0]
	switch method {
	case MethodEcho:
		if ch.Logprobs == nil || len(ch.Logprobs.TokenLogprobs) == 0 || len(ch.Logprobs.Tokens) != len(ch.Logprobs.TokenLogprobs) {
			return TokenScores{}, u, &Error{Kind: KindOther, Message: "the response has no prompt log-probabilities (echo)"}
		}
		toks, lps = ch.Logprobs.Tokens, ch.Logprobs.TokenLogprobs
		if len(ch.Logprobs.TextOffset) == len(lps) {
			offsets = ch.Logprobs.TextOffset
		}
		tops = make([][]Alt, len(lps))
		for i := range tops {
			if i < len(ch.Logprobs.TopLogprobs) {
				for t, v := range ch.Logprobs.TopLogprobs[i] {
					tops[i] = append(tops[i], Alt{t, v})
				}
			}
		}
	case MethodPromptLogprobs:
		pl := ch.PromptLogprobs
		if pl == nil {
			pl = res.PromptLogprobs
		}
		if len(pl) == 0 {
			return TokenScores{}, u, &Error{Kind: KindOther, Message: "the response has no prompt log-probabilities (prompt_logprobs)"}
		}
		ids, ok := pickPromptTokens(pl, full)
		if !ok { // ambiguous: ask for the prompt's tokens alone, by id
			res0, u0, err := c.logprobRequestK(ctx, method, full, 0)
			u.PromptTokens += u0.PromptTokens
			u.CompletionTokens += u0.CompletionTokens
			if err != nil {
				return TokenScores{}, u, err
			}
			pl0 := res0.Choices[0].PromptLogprobs
			if pl0 == nil {
				pl0 = res0.PromptLogprobs
			}
			if len(pl0) != len(pl) {
				return TokenScores{}, u, &Error{Kind: KindOther, Message: "the server's two tokenizations of the text differ"}
			}
			ids = make([]string, len(pl0))
			for i, m := range pl0 {
				for id := range m {
					ids[i] = id
				}
			}
		}
		toks, lps, tops = make([]string, len(pl)), make([]*float64, len(pl)), make([][]Alt, len(pl))
		for i, m := range pl {
			for id, v := range m {
				tops[i] = append(tops[i], Alt{v.DecodedToken, v.Logprob})
				if id == ids[i] {
					lp := v.Logprob
					toks[i], lps[i] = v.DecodedToken, &lp
				}
			}
		}
		offsets = decodedOffsets(toks, full)
	default:
		return TokenScores{}, u, &Error{Kind: KindOther, Message: fmt.Sprintf("unknown scoring method %q", method)}
	}
	for _, t := range tops {
		slices.SortFunc(t, func(a, b Alt) int {
			return cmp.Or(cmp.Compare(b.Logprob, a.Logprob), strings.Compare(a.Token, b.Token))
		})
	}
	from, to, boundary := completionRange(offsets, len(lps), res.Usage.PromptTokens, prompt, full, promptTokens)
	if from >= to {
		return TokenScores{}, u, &Error{Kind: KindOther, Message: "no completion token after the prompt in the server's tokens"}
	}
	out := TokenScores{Boundary: boundary}
	for i := from; i < to; i++ {
		if lps[i] == nil || math.IsNaN(*lps[i]) || *lps[i] > 1e-6 {
			return TokenScores{}, u, &Error{Kind: KindOther, Message: fmt.Sprintf("completion token %d has no valid log-probability", i-from)}
		}
		out.Tokens = append(out.Tokens, toks[i])
		out.Logprobs = append(out.Logprobs, min(*lps[i], 0))
		out.Top = append(out.Top, tops[i])
	}
	return out, u, nil
}

// pickPromptTokens names, per position of a prompt_logprobs reply with
// alternatives, the token id of the prompt's own token: the one entry whose
// decoded text ends what is left of full, walking back from its end (the
// first position, without an entry, gets ""). ok is false when a position
// has none or more than one such entry.
func pickPromptTokens(pl []map[string]promptLogprob, full string) (ids []string, ok bool) {
	ids = make([]string, len(pl))
	rest := full
	for i := len(pl) - 1; i >= 1; i-- {
		var hit string
		n := 0
		for id, v := range pl[i] {
			if v.DecodedToken != "" && strings.HasSuffix(rest, v.DecodedToken) {
				hit, n = id, n+1
			}
		}
		if n != 1 {
			return nil, false
		}
		ids[i] = hit
		rest = strings.TrimSuffix(rest, pl[i][hit].DecodedToken)
	}
	return ids, true
}

// completionRange returns the positions [from, to) of the completion's
// tokens: by character offsets when there are any (a token counts with the
// completion when it ends past the prompt), else from the prompt's token
// count to the reported prompt tokens (dropping a generated token).
func completionRange(offsets []int, n, usagePrompt int, prompt, full string, promptTokens int) (from, to int, boundary string) {
	if offsets != nil {
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
		return from, to, "offsets"
	}
	if usagePrompt > 0 && usagePrompt <= n {
		n = usagePrompt
	}
	return promptTokens, n, "token count"
}
