// Package netpolicy keeps this process's endpoint network policy (which
// addresses inference endpoints may have: sampling.SetNetPolicy) in step
// with the one admins set in the browser, stored as an instance setting.
// The web server and every worker apply it at start and reload it
// periodically, so a change reaches workers on other machines too.
package netpolicy

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/store"
)

// MaxTextBytes caps the policy's text.
const MaxTextBytes = 64 << 10

// Text returns the stored policy text, or sampling.DefaultNetPolicyText
// when an admin never set one.
func Text(ctx context.Context, st *store.Store) (string, error) {
	v, ok, err := st.Setting(ctx, store.SettingEndpointNetworks)
	if err != nil || !ok {
		return sampling.DefaultNetPolicyText, err
	}
	return v, nil
}

// Apply loads the stored policy and makes it this process's.
func Apply(ctx context.Context, st *store.Store) error {
	text, err := Text(ctx, st)
	if err != nil {
		return err
	}
	p, err := sampling.ParseNetPolicy(text)
	if err != nil {
		return fmt.Errorf("stored endpoint network policy: %w", err)
	}
	sampling.SetNetPolicy(p)
	return nil
}

// Save checks text, stores it as the policy (recording userID) and applies
// it in this process. A parse error names the line; nothing is stored then.
func Save(ctx context.Context, st *store.Store, text string, userID int64) error {
	if len(text) > MaxTextBytes {
		return fmt.Errorf("the policy is %d bytes; at most %d", len(text), MaxTextBytes)
	}
	p, err := sampling.ParseNetPolicy(text)
	if err != nil {
		return err
	}
	if err := st.SetSetting(ctx, store.SettingEndpointNetworks, text, userID); err != nil {
		return err
	}
	sampling.SetNetPolicy(p)
	return nil
}

// Watch applies the stored policy every interval until ctx ends; errors are
// logged and the last good policy stays in force.
func Watch(ctx context.Context, st *store.Store, every time.Duration, log *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := Apply(ctx, st); err != nil && ctx.Err() == nil {
			log.Warn("reload the endpoint network policy", "err", err)
		}
	}
}
