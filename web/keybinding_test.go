package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/reach-lab/reach/web"
)

// keySink is an OpenAI-compatible stand-in that records every Authorization
// header it receives.
type keySink struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func newKeySink(t *testing.T) *keySink {
	k := &keySink{}
	k.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.mu.Lock()
		k.auth = append(k.auth, r.Header.Get("Authorization"))
		k.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","object":"chat.completion","model":"judge","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"VALID: fine"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	}))
	t.Cleanup(k.Close)
	return k
}

func (k *keySink) sawKey(key string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, a := range k.auth {
		if strings.Contains(a, key) {
			return true
		}
	}
	return false
}

// TestStoredKeyStaysWithItsEndpoint: the owner stores the judge and scoring
// endpoints with a key; an editor re-saves each with another base URL and the
// key field empty, then presses Test. The owner's key never reaches the
// editor's URL, the stored key is dropped, and re-saving the same endpoint
// (spelled differently) keeps it.
func TestStoredKeyStaysWithItsEndpoint(t *testing.T) {
	srv := newServerWith(t, web.Config{Secret: testBox(t)})
	owner := newAccount(t, srv.st, srv.url, "owner@reach.test", false, "owner")
	editor := newAccount(t, srv.st, srv.url, "editor@reach.test", false, "editor")
	cid, _, _ := readyComparison(t, srv.st, "keys", 0, "What is 1+1?")
	const key = "sk-owner-secret-77"
	for _, purpose := range []string{"judge", "score"} {
		t.Run(purpose, func(t *testing.T) {
			good, evil := newKeySink(t), newKeySink(t)
			call := func(who account, path string, v url.Values) map[string]any {
				t.Helper()
				req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/comparisons/%d/debate/%s%s", srv.url, cid, purpose, path), strings.NewReader(v.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Authorization", "Bearer "+who.Token)
				resp, err := noRedirect.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				out := map[string]any{}
				_ = json.NewDecoder(resp.Body).Decode(&out)
				if resp.StatusCode != 200 {
					t.Fatalf("POST %s as %s: HTTP %d %v", path, who.Email, resp.StatusCode, out)
				}
				if strings.Contains(fmt.Sprint(out), key) {
					t.Fatalf("an API answer holds the key: %v", out)
				}
				return out
			}
			hasKey := func(out map[string]any) bool { return out[purpose].(map[string]any)["has_api_key"] == true }
			if out := call(owner, "", url.Values{"base_url": {good.URL + "/v1"}, "model": {"judge"}, "api_key": {key}}); !hasKey(out) {
				t.Fatalf("owner's key not stored: %v", out)
			}
			// The same endpoint spelled another way keeps the key.
			if out := call(editor, "", url.Values{"base_url": {strings.Replace(good.URL, "http://", "HTTP://", 1) + "/v1/"}, "model": {"judge"}}); !hasKey(out) {
				t.Fatalf("re-saving the same endpoint dropped the key: %v", out)
			}
			// Another URL, key field empty: the key goes.
			if out := call(editor, "", url.Values{"base_url": {evil.URL + "/v1"}, "model": {"judge"}}); hasKey(out) {
				t.Errorf("the key was kept for another endpoint: %v", out)
			}
			call(editor, "/test", nil)
			if evil.sawKey(key) {
				t.Fatalf("the owner's key reached the editor's URL")
			}
			// Back to the owner's URL: the key was dropped, not hidden.
			if out := call(editor, "", url.Values{"base_url": {good.URL + "/v1"}, "model": {"judge"}}); hasKey(out) {
				t.Errorf("a dropped key came back: %v", out)
			}
		})
	}
}
