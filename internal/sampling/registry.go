package sampling

import (
	"crypto/sha256"
	"fmt"
	"sync"
)

// Registry hands out one Client per distinct Endpoint, so every job of a
// worker process that samples from the same endpoint shares one concurrency
// limit. (The limit is per process: N worker processes may have N times
// MaxConcurrency requests in flight to one server.) The zero value is ready;
// it is safe for concurrent use.
type Registry struct {
	mu      sync.Mutex
	clients map[string]*Client
}

// Get returns the Client for ep, creating it with New(ep, nil) the first time.
// Endpoints differing in any field (a changed key or limit included) get
// different Clients.
func (r *Registry) Get(ep Endpoint) (*Client, error) {
	// The key holds a hash of the API key rather than the key itself, so the
	// map never holds secrets besides the ones inside the Clients.
	key := fmt.Sprintf("%s\x00%s\x00%x\x00%s\x00%d\x00%d\x00%+v",
		ep.BaseURL, ep.Model, sha256.Sum256([]byte(ep.APIKey)), ep.Style, ep.MaxConcurrency, ep.Timeout, ep.Retry)
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.clients[key]; ok {
		return c, nil
	}
	c, err := New(ep, nil)
	if err != nil {
		return nil, err
	}
	if r.clients == nil {
		r.clients = map[string]*Client{}
	}
	r.clients[key] = c
	return c, nil
}
