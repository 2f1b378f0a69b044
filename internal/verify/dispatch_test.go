package verify_test

import (
	"context"
	"errors"
	"testing"

	"github.com/reach-lab/reach/internal/verify"
)

type fake struct {
	name string
	down error
}

func (f fake) Name() string { return f.name }
func (f fake) Verify(context.Context, verify.Problem, string) verify.Verdict {
	return verify.Verdict{Status: verify.Correct, Rule: f.name}
}
func (f fake) Unavailable() error { return f.down }

func TestDispatch(t *testing.T) {
	ctx := context.Background()
	d := verify.Dispatch{Math: fake{name: "m/1"}, Code: fake{name: "c/1"}}
	for kind, want := range map[string]string{"": "m/1", "math": "m/1", "choice": "m/1", "code": "c/1"} {
		if got := d.Verify(ctx, verify.Problem{Kind: kind}, "x").Rule; got != want {
			t.Errorf("kind %q graded by %s, want %s", kind, got, want)
		}
		if got := verify.SourceName(d, verify.Problem{Kind: kind}); got != want {
			t.Errorf("kind %q: source %s, want %s", kind, got, want)
		}
	}
	if d.Name() != "m/1+c/1" {
		t.Errorf("name %q", d.Name())
	}
	if !verify.Supports(d, "code") || verify.Inline(d, "code") || !verify.Inline(d, "math") {
		t.Error("code is supported but not inline; math inline")
	}
	// A code verifier whose sandbox is down: code is not supported, and
	// the reason is told.
	down := verify.Dispatch{Math: fake{name: "m/1"}, Code: fake{name: "c/1", down: errors.New("no bwrap")}}
	if verify.Supports(down, "code") || verify.Unavailable(down, "code") == nil || verify.Unavailable(down, "math") != nil {
		t.Error("a code verifier that is down is supported")
	}
	// Without a code verifier, code is never graded wrong: not graded.
	none := verify.Dispatch{Math: fake{name: "m/1"}}
	if v := none.Verify(ctx, verify.Problem{Kind: "code"}, "x"); v.Status != verify.NotGraded {
		t.Errorf("code without a code verifier: %s", v.Status)
	}
	if verify.Supports(none, "code") || none.Name() != "m/1" {
		t.Error("code supported without a code verifier")
	}
}
