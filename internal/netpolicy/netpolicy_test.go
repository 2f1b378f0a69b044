package netpolicy

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/testdb"
)

// A policy saved by one process is applied by another that loads it (a
// worker); a bad policy is refused and nothing is stored.
func TestSaveApply(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	t.Cleanup(func() { sampling.SetNetPolicy(sampling.DefaultNetPolicy()) })
	if text, err := Text(ctx, st); err != nil || text != sampling.DefaultNetPolicyText {
		t.Fatalf("unset policy: %q, %v; want the default", text, err)
	}
	if err := Save(ctx, st, "allow 10.1.0.0/16\ndeny 10.0.0.0/8", 0); err != nil {
		t.Fatal(err)
	}
	sampling.SetNetPolicy(sampling.DefaultNetPolicy()) // another process, still on the default
	if err := Apply(ctx, st); err != nil {
		t.Fatal(err)
	}
	p := sampling.CurrentNetPolicy()
	if p.Check(netip.MustParseAddr("10.2.0.1")) == nil || p.Check(netip.MustParseAddr("10.1.0.1")) != nil {
		t.Errorf("applied policy %+v", p.Rules)
	}
	if err := Save(ctx, st, "deny nowhere", 0); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("bad policy: %v", err)
	}
	if err := Save(ctx, st, strings.Repeat("#", MaxTextBytes+1), 0); err == nil {
		t.Error("an oversized policy was saved")
	}
	if text, _ := Text(ctx, st); !strings.HasPrefix(text, "allow 10.1.0.0/16") {
		t.Errorf("a refused policy replaced the stored one: %q", text)
	}
}
