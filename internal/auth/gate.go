package auth

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"
)

// ErrBusy is returned by Gate.Enter when no slot freed up in time.
var ErrBusy = errors.New("too many password checks at once")

// Gate caps how many argon2 computations run at once. Each takes
// Params.MemoryKiB of memory (19 MiB by default) and a core for tens of
// milliseconds, so without a cap 100 parallel sign-ins need 1.9 GB; with
// one slot per core memory stays near cores × 19 MiB and the excess waits,
// or is refused.
type Gate struct {
	slots chan struct{}
	wait  time.Duration

	in, peak atomic.Int64
}

// NewGate allows n computations at once (n <= 0: one per core,
// runtime.GOMAXPROCS) and lets a caller wait up to wait for a slot.
func NewGate(n int, wait time.Duration) *Gate {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return &Gate{slots: make(chan struct{}, n), wait: wait}
}

// Do runs fn in a slot. It returns ErrBusy without running fn when no slot
// freed up within the gate's wait, and ctx.Err() when ctx ends first.
func (g *Gate) Do(ctx context.Context, fn func()) error {
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
	case <-t.C:
		return ErrBusy
	case <-ctx.Done():
		return ctx.Err()
	}
	n := g.in.Add(1)
	for p := g.peak.Load(); n > p && !g.peak.CompareAndSwap(p, n); p = g.peak.Load() {
	}
	defer func() {
		g.in.Add(-1)
		<-g.slots
	}()
	fn()
	return nil
}

// Peak is the most computations that ran at once so far.
func (g *Gate) Peak() int { return int(g.peak.Load()) }
