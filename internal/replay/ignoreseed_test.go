package replay_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/reach-lab/reach/internal/replay"
)

// With IgnoreSeed, requests with a seed take the recorded completions in
// order like any other (each text once until all were handed out); without
// it, the same seed gets the same SeededPick texts every time.
func TestIgnoreSeedHandsOutInOrder(t *testing.T) {
	const q = "What is 6 times 7?"
	texts := map[string][]string{q: {"a", "b", "c", "d"}}
	ask := func(h http.Handler, seed int64) string {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"model": "m", "prompt": "Q: " + q, "n": 1, "seed": seed})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/completions", bytes.NewReader(b)))
		var resp struct{ Choices []struct{ Text string } }
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Code != 200 || len(resp.Choices) != 1 {
			t.Fatalf("HTTP %d %s", rec.Code, rec.Body.String())
		}
		return resp.Choices[0].Text
	}
	in := replay.New(texts, replay.Options{IgnoreSeed: true})
	var got []string
	for seed := range int64(5) {
		got = append(got, ask(in, 100+seed))
	}
	if want := []string{"a", "b", "c", "d", "a"}; !slices.Equal(got, want) {
		t.Errorf("IgnoreSeed: %q; want %q", got, want)
	}
	seeded := replay.New(texts, replay.Options{})
	if first, again := ask(seeded, 7), ask(seeded, 7); first != again || first != texts[q][replay.SeededPick(7, 0, 4)] {
		t.Errorf("seed 7: %q then %q; want SeededPick's text twice", first, again)
	}
}
