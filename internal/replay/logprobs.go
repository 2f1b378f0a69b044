package replay

import (
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"regexp"
	"time"
	"unicode/utf8"
)

// Log-probability support the replay server claims (Options.Logprobs),
// so that tests can play a server that offers only one of vLLM's two ways.
const (
	LogprobsBoth   = ""                // echo + logprobs and prompt_logprobs
	LogprobsEcho   = "echo"            // echo + logprobs only; prompt_logprobs is ignored
	LogprobsPrompt = "prompt_logprobs" // prompt_logprobs only; echo is refused (400)
	LogprobsNone   = "none"            // accepts both requests but returns no log-probabilities
)

// Replay tokens are the runs of white space and the runs of anything else:
// "x = 42\n" is "x", " ", "=", " ", "42", "\n". A token's log-probability is
// −0.1 per character (code point) it holds, so a text's figures can be worked
// out by hand: "x = 42" has 5 tokens and 6 characters, log-probability
// sum −0.6, perplexity exp(0.6 / 5) = exp(0.12).
var tokenRE = regexp.MustCompile(`\s+|\S+`)

// Tokens splits text into replay tokens.
func Tokens(text string) []string { return tokenRE.FindAllString(text, -1) }

// TokenLogprob is a replay token's natural-log probability: −0.1 per character.
func TokenLogprob(tok string) float64 { return -0.1 * float64(utf8.RuneCountInString(tok)) }

// FavouredLogprob is the log-probability a server with Options.Favour gives
// a favoured token, whatever its length: a second replay server with
// --favour Wait plays an RL model that differs from the base model exactly
// at the "Wait" tokens.
const FavouredLogprob = -0.01

// ModelLogprob is a replay token's log-probability under a server favouring
// the tokens in favour (TokenLogprob otherwise).
func ModelLogprob(tok string, favour map[string]bool) float64 {
	if favour[tok] {
		return FavouredLogprob
	}
	return TokenLogprob(tok)
}

// Alternatives returns a replay position's top-k list for the token tok
// with log-probability lp: tok itself first, then k−1 made-up tokens
// "alt1", "alt2", … with probabilities (1 − e^lp)/2^j, so that a position's
// whole distribution is known and the Jensen–Shannon divergence between two
// servers can be worked out by hand. k ≤ 1 gives tok alone.
func Alternatives(tok string, lp float64, k int) []Alt {
	out := []Alt{{tok, lp}}
	rest := 1 - math.Exp(lp)
	for j := 1; j < k; j++ {
		out = append(out, Alt{fmt.Sprintf("alt%d", j), math.Log(rest / math.Pow(2, float64(j)))})
	}
	return out
}

// Alt is a token and its log-probability in a top-k list.
type Alt struct {
	Token   string
	Logprob float64
}

// maxTopK bounds the alternatives asked for, as vLLM's max_logprobs does.
const maxTopK = 20

// generated is the one token a scoring request gets after its prompt.
const generated = "."

type echoLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

type promptLogprob struct {
	Logprob      float64 `json:"logprob"`
	Rank         int     `json:"rank"`
	DecodedToken string  `json:"decoded_token"`
}

// wantsLogprobs reports whether a completions request asks for prompt
// log-probabilities (a scoring request rather than a sampling one).
func (req request) wantsLogprobs() bool {
	return (req.Echo && req.Logprobs != nil) || req.PromptLogprobs != nil
}

// logprobCompletion answers a scoring request: the prompt's replay tokens
// with their log-probabilities (null for the first, as vLLM sends), in the
// form asked for (echo's logprobs with text offsets, and/or vLLM's
// prompt_logprobs), plus one generated token unless max_tokens is 0.
func (s *server) logprobCompletion(w http.ResponseWriter, r *http.Request, req request, prompt string) {
	mode := s.opts.Logprobs
	if req.Echo && mode == LogprobsPrompt {
		writeError(w, http.StatusBadRequest, "echo is not supported by this server")
		return
	}
	if (req.Logprobs != nil && *req.Logprobs > maxTopK) || (req.PromptLogprobs != nil && *req.PromptLogprobs > maxTopK) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("at most %d log-probabilities per token", maxTopK))
		return
	}
	if !s.gate(w, r) {
		return
	}
	toks := Tokens(prompt)
	gen := 1
	if req.MaxTokens != nil && *req.MaxTokens == 0 {
		gen = 0
	}
	choice := completionChoice{Index: 0, FinishReason: "length"}
	if gen == 1 {
		choice.Text = generated
	}
	if req.Echo {
		choice.Text = prompt + choice.Text
	}
	if req.Echo && req.Logprobs != nil && mode != LogprobsNone {
		lp := echoLogprobs{}
		off := 0
		all := toks
		if gen == 1 {
			all = append(all[:len(all):len(all)], generated)
		}
		for i, t := range all {
			lp.Tokens = append(lp.Tokens, t)
			lp.TextOffset = append(lp.TextOffset, off)
			off += utf8.RuneCountInString(t)
			if i == 0 {
				lp.TokenLogprobs, lp.TopLogprobs = append(lp.TokenLogprobs, nil), append(lp.TopLogprobs, nil)
				continue
			}
			v := ModelLogprob(t, s.favour)
			lp.TokenLogprobs = append(lp.TokenLogprobs, &v)
			top := map[string]float64{}
			for _, a := range Alternatives(t, v, *req.Logprobs) {
				top[a.Token] = a.Logprob
			}
			lp.TopLogprobs = append(lp.TopLogprobs, top)
		}
		choice.Logprobs = lp
	}
	if req.PromptLogprobs != nil && (mode == LogprobsBoth || mode == LogprobsPrompt) {
		pl := make([]map[string]promptLogprob, len(toks))
		for i, t := range toks {
			if i == 0 {
				continue // null, as vLLM sends for the first prompt token
			}
			m := map[string]promptLogprob{}
			for r, a := range Alternatives(t, ModelLogprob(t, s.favour), *req.PromptLogprobs) {
				m[tokenID(a.Token)] = promptLogprob{Logprob: a.Logprob, Rank: r + 1, DecodedToken: a.Token}
			}
			pl[i] = m
		}
		choice.PromptLogprobs = pl
	}
	u := usage{PromptTokens: len(toks), CompletionTokens: gen}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	writeJSON(w, http.StatusOK, completionResponse{
		ID: fmt.Sprintf("cmpl-replay-%d", s.ids.Add(1)), Object: "text_completion",
		Created: time.Now().Unix(), Model: req.Model, Choices: []completionChoice{choice}, Usage: u,
	})
}

// tokenID is a stable made-up vocabulary id for a replay token.
func tokenID(t string) string {
	h := fnv.New32a()
	h.Write([]byte(t))
	return fmt.Sprint(h.Sum32() % 151_000)
}
