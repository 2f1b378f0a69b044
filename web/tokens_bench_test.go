package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// syntheticTokenPair is a 32k-token completion scored under two models with
// top-5 alternatives, RL diverging at every 50th token.
func syntheticTokenPair(n int) store.TokenPair {
	mk := func(role string, shift float32) *store.TokenScore {
		x := &store.TokenScore{Role: role, Model: role, TopK: 5}
		for i := range n {
			tok := fmt.Sprintf(" w%d", i%997)
			lp := float32(-0.1 * float64(1+i%7))
			if i%50 == 0 {
				lp += shift
			}
			x.Tokens = append(x.Tokens, tok)
			x.Logprobs = append(x.Logprobs, lp)
			x.TopTokens = append(x.TopTokens, tok, " a", " b", " c", " d")
			x.TopLogprobs = append(x.TopLogprobs, lp, -2, -3, -4, -5)
		}
		return x
	}
	return store.TokenPair{Base: mk(store.RoleBase, -2), RL: mk(store.RoleRL, 0)}
}

// BenchmarkTokenView32k builds and renders the token view of a 32,768-token
// completion (what GET …/tokens does after reading the two rows):
// go test ./web -run '^$' -bench TokenView32k -benchmem
func BenchmarkTokenView32k(b *testing.B) {
	pair := syntheticTokenPair(32768)
	c := store.Comparison{ID: 1, Name: "bench", Runs: []store.Run{{ID: 1, ModelName: "base"}, {ID: 2, ModelName: "rl"}}}
	p := store.Problem{ID: 1, Key: "p1"}
	ctx := context.Background()
	var size int
	for b.Loop() {
		v := buildTokenView(c, p, 2, 0, pair)
		w := &countWriter{}
		if err := views.TokenPage(v).Render(ctx, w); err != nil {
			b.Fatal(err)
		}
		size = w.n
	}
	b.ReportMetric(float64(size)/1e6, "MB/page")
}

// BenchmarkTokenJSON32k encodes the hover data of the same completion
// (GET …/tokens.json).
func BenchmarkTokenJSON32k(b *testing.B) {
	pair := syntheticTokenPair(32768)
	var size int
	for b.Loop() {
		base, rl, _ := scoredPair(pair)
		d := tokenData{Tokens: base.Tokens, Base: modelData("base", base), RL: modelData("rl", rl)}
		out, err := json.Marshal(d)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size)/1e6, "MB/json")
}

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
