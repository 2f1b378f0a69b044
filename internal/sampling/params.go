package sampling

import (
	"errors"
	"fmt"
)

// Params are the sampling settings of one request. Every field is sent as is to
// the server, except where a zero value is documented as "unset".
type Params struct {
	N           int     // completions wanted, >= 1; asked for in one request (`n`)
	Temperature float64 // >= 0; always sent, so 0 means greedy
	TopP        float64 // in (0, 1]; 0 = unset (server default, 1.0 on vLLM)
	TopK        int     // vLLM/SGLang extra body field `top_k`; 0 = unset, -1 = all tokens
	MinP        float64 // vLLM/SGLang extra body field `min_p`, in [0, 1]; 0 = unset
	MaxTokens   int     // completion token budget per sample, >= 1
	Stop        []string
	Seed        *int64 // nil = unset
}

// DefaultParams returns temperature 0.6 and top-p 0.95, the sampling settings
// of Yue et al. 2025 (arXiv 2504.13837), with at most 4096 new tokens and one
// completion per request. The token budget is Reach's default, not the paper's:
// raise MaxTokens for long chain-of-thought models, whose answers otherwise end
// with finish reason "length".
func DefaultParams() Params {
	return Params{N: 1, Temperature: 0.6, TopP: 0.95, MaxTokens: 4096}
}

// Validate reports the first setting a server would reject, so a bad config
// fails before any request is sent.
func (p Params) Validate() error {
	var errs []error
	if p.N < 1 {
		errs = append(errs, fmt.Errorf("n must be >= 1, got %d", p.N))
	}
	if p.Temperature < 0 {
		errs = append(errs, fmt.Errorf("temperature must be >= 0, got %g", p.Temperature))
	}
	if p.TopP < 0 || p.TopP > 1 {
		errs = append(errs, fmt.Errorf("top_p must be in (0, 1], got %g", p.TopP))
	}
	if p.TopK < -1 {
		errs = append(errs, fmt.Errorf("top_k must be -1, 0 (unset) or positive, got %d", p.TopK))
	}
	if p.MinP < 0 || p.MinP > 1 {
		errs = append(errs, fmt.Errorf("min_p must be in [0, 1], got %g", p.MinP))
	}
	if p.MaxTokens < 1 {
		errs = append(errs, fmt.Errorf("max_tokens must be >= 1, got %d", p.MaxTokens))
	}
	return errors.Join(errs...)
}
