package replay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/reach-lab/reach/internal/replay"
)

// A completion recorded with finish_reason "length" replays as "length" (a
// truncation the strict grading policy must see), on both endpoints and with
// or without a seed; one recorded without a reason replays as "stop".
func TestReplaysRecordedFinishReason(t *testing.T) {
	dir := t.TempDir()
	const q = "Natalia sold clips to 48 of her friends in April. How many in all?"
	dataset := filepath.Join(dir, "data.jsonl")
	samples := filepath.Join(dir, "samples.jsonl")
	os.WriteFile(dataset, []byte(`{"id":"p1","question":"`+q+`","answer":"72"}`+"\n"), 0o600)
	os.WriteFile(samples, []byte(
		`{"problem_id":"p1","sample_index":0,"completion":"so 72","finish_reason":"stop"}`+"\n"+
			`{"problem_id":"p1","sample_index":1,"completion":"so 48 plus","finish_reason":"length"}`+"\n"+
			`{"problem_id":"p1","sample_index":2,"completion":"72"}`+"\n"), 0o600)
	texts, finish, err := replay.LoadRecordings(context.Background(), samples, dataset)
	if err != nil {
		t.Fatal(err)
	}
	h := replay.New(texts, replay.Options{FinishReasons: finish})

	want := map[string]string{"so 72": "stop", "so 48 plus": "length", "72": "stop"}
	check := func(path string, body map[string]any) {
		t.Helper()
		b, _ := json.Marshal(body)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(b)))
		var resp struct {
			Choices []struct {
				Text         string `json:"text"`
				Message      struct{ Content string }
				FinishReason string `json:"finish_reason"`
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
		lengths := 0
		for _, c := range resp.Choices {
			text := c.Text + c.Message.Content
			if want[text] != c.FinishReason {
				t.Errorf("%s: %q replayed with finish_reason %q, want %q", path, text, c.FinishReason, want[text])
			}
			if c.FinishReason == "length" {
				lengths++
			}
		}
		if lengths == 0 {
			t.Errorf("%s: no choice replayed the recorded length", path)
		}
	}
	check("/v1/completions", map[string]any{"model": "m", "prompt": "Q: " + q, "n": 3})
	check("/v1/chat/completions", map[string]any{"model": "m", "messages": []map[string]any{{"role": "user", "content": q}}, "n": 3})
	check("/v1/completions", map[string]any{"model": "m", "prompt": q, "n": 64, "seed": 7})
}
