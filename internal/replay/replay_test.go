package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

var toy = map[string][]string{
	"Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.": {"a0", "a1", "a2"},
	// Contains the statement above: the longer one must win when both occur.
	"Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many in all?": {"b0", "b1"},
	"What is 1+1?": {"c0"}, // shorter than anchorLen: found by the linear pass
}

func post(t *testing.T, h http.Handler, path string, body any) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(b)))
	var out map[string]any
	json.Unmarshal(rec.Body.Bytes(), &out)
	return rec, out
}

func texts(t *testing.T, resp map[string]any, chat bool) []string {
	t.Helper()
	choices, _ := resp["choices"].([]any)
	var out []string
	for i, c := range choices {
		m := c.(map[string]any)
		if m["index"] != float64(i) || m["finish_reason"] != "stop" {
			t.Errorf("choice %d: %v", i, m)
		}
		if chat {
			out = append(out, m["message"].(map[string]any)["content"].(string))
		} else {
			out = append(out, m["text"].(string))
		}
	}
	return out
}

func TestMatchesStatementInsideTemplateLongestFirst(t *testing.T) {
	h := New(toy, Options{})
	prompt := "<|im_start|>user\nNatalia sold clips to 48 of her friends in April,\n and then she   sold half as many clips in May. How many in all?\nPlease reason step by step<|im_end|>"
	rec, resp := post(t, h, "/v1/completions", map[string]any{"model": "m", "prompt": prompt, "n": 2})
	if rec.Code != 200 {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
	if got := texts(t, resp, false); fmt.Sprint(got) != "[b0 b1]" {
		t.Errorf("got %v, want the longer statement's [b0 b1]", got)
	}
	_, resp = post(t, h, "/v1/completions", map[string]any{"model": "m", "prompt": "Q: Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May.\nA:"})
	if got := texts(t, resp, false); fmt.Sprint(got) != "[a0]" {
		t.Errorf("got %v, want [a0]", got)
	}
	_, resp = post(t, h, "/v1/chat/completions", map[string]any{"model": "m", "messages": []any{
		map[string]any{"role": "system", "content": "Be brief."},
		map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "What is 1+1?"}}},
	}})
	if got := texts(t, resp, true); fmt.Sprint(got) != "[c0]" {
		t.Errorf("got %v, want [c0]", got)
	}
	if resp["object"] != "chat.completion" {
		t.Errorf("object %v", resp["object"])
	}
}

func TestCyclesInOrderAndCountsWords(t *testing.T) {
	h := New(map[string][]string{"Compute the sum of two and two.": {"two plus two", "is four", "four"}}, Options{})
	var all []string
	for _, n := range []int{2, 5} {
		_, resp := post(t, h, "/v1/completions", map[string]any{"model": "m", "prompt": "Compute the sum of two and two.", "n": n})
		all = append(all, texts(t, resp, false)...)
		if n == 5 {
			// texts 2..6 of the cycle: "four", "two plus two", "is four", "four", "two plus two" = 1+3+2+1+3 words
			u := resp["usage"].(map[string]any)
			if u["completion_tokens"] != 10.0 || u["prompt_tokens"] != 7.0 || u["total_tokens"] != 17.0 {
				t.Errorf("usage %v", u)
			}
		}
	}
	want := "[two plus two is four four two plus two is four four two plus two]"
	if fmt.Sprint(all) != want {
		t.Errorf("got %v, want %v", all, want)
	}
}

func TestConcurrentRequestsGetDisjointRuns(t *testing.T) {
	const recorded, requests = 64, 32
	rec := make([]string, recorded)
	for i := range rec {
		rec[i] = fmt.Sprint(i)
	}
	h := New(map[string][]string{"A problem statement long enough.": rec}, Options{})
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range requests {
		wg.Go(func() {
			_, resp := post(t, h, "/v1/completions", map[string]any{"model": "m", "prompt": "A problem statement long enough.", "n": 4})
			mu.Lock()
			for _, s := range texts(t, resp, false) {
				seen[s]++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	// 32 × 4 = 128 = two full cycles: every recorded text exactly twice.
	for _, s := range rec {
		if seen[s] != 2 {
			t.Fatalf("text %s handed out %d times, want 2", s, seen[s])
		}
	}
}

func TestRejections(t *testing.T) {
	h := New(toy, Options{ModelName: "sft"})
	for _, tc := range []struct {
		path   string
		body   any
		status int
		msg    string
	}{
		{"/v1/completions", map[string]any{"model": "sft", "prompt": "Something else entirely, nowhere recorded."}, 400, "no recorded problem's statement occurs in the prompt"},
		{"/v1/completions", map[string]any{"model": "rl", "prompt": "What is 1+1?"}, 404, "The model `rl` does not exist."},
		{"/v1/completions", map[string]any{"model": "sft", "prompt": "What is 1+1?", "stream": true}, 400, "does not stream"},
		{"/v1/completions", map[string]any{"model": "sft", "prompt": "What is 1+1?", "n": 0}, 400, "n must be in [1, 4096]"},
		{"/v1/completions", map[string]any{"model": "sft", "prompt": []string{"What is 1+1?", "What is 1+1?"}}, 400, "one prompt per request"},
		{"/v1/chat/completions", map[string]any{"model": "sft", "messages": []any{}}, 400, "messages is empty"},
	} {
		rec, resp := post(t, h, tc.path, tc.body)
		msg, _ := resp["error"].(map[string]any)["message"].(string)
		if rec.Code != tc.status || !strings.Contains(msg, tc.msg) {
			t.Errorf("%v: %d %q, want %d containing %q", tc.body, rec.Code, msg, tc.status, tc.msg)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/models", nil))
	if !strings.Contains(rec.Body.String(), `"id":"sft"`) {
		t.Errorf("models: %s", rec.Body)
	}
}

func TestInjectedErrorsAreSeededAndTakeNothing(t *testing.T) {
	run := func() (codes []int, got []string) {
		h := New(map[string][]string{"What is 1+1?": {"x0", "x1", "x2"}}, Options{ErrorRate: 0.5, Seed: 3})
		for range 40 {
			rec, resp := post(t, h, "/v1/completions", map[string]any{"model": "m", "prompt": "What is 1+1?"})
			codes = append(codes, rec.Code)
			if rec.Code == 200 {
				got = append(got, texts(t, resp, false)...)
			}
		}
		return
	}
	codes, got := run()
	count := map[int]int{}
	for _, c := range codes {
		count[c]++
	}
	if count[429] == 0 || count[500] == 0 || count[200] == 0 || count[200]+count[429]+count[500] != 40 {
		t.Fatalf("status counts %v", count)
	}
	// Successful answers continue the cycle as if the failures never happened.
	for i, s := range got {
		if want := fmt.Sprintf("x%d", i%3); s != want {
			t.Fatalf("answer %d = %s, want %s", i, s, want)
		}
	}
	again, _ := run()
	if fmt.Sprint(again) != fmt.Sprint(codes) {
		t.Error("same seed, different error pattern")
	}
}

func TestLatencyAndClientCancel(t *testing.T) {
	h := New(map[string][]string{"What is 1+1?": {"x0", "x1"}}, Options{Latency: 80 * time.Millisecond})
	start := time.Now()
	post(t, h, "/v1/completions", map[string]any{"model": "m", "prompt": "What is 1+1?"}) // takes x0
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Errorf("answered in %v, latency is 80ms", d)
	}
	// A client that gives up during the latency takes no completion.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	b, _ := json.Marshal(map[string]any{"model": "m", "prompt": "What is 1+1?"})
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/v1/completions", bytes.NewReader(b)).WithContext(ctx))
	_, resp := post(t, h, "/v1/completions", map[string]any{"model": "m", "prompt": "What is 1+1?"})
	if got := texts(t, resp, false); fmt.Sprint(got) != "[x1]" {
		t.Errorf("after a cancelled request got %v, want [x1]", got)
	}
}

func TestServeShutsDownOnCancel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, New(toy, Options{})) }()
	res, err := http.Get("http://" + ln.Addr().String() + "/health")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("health: %v %v", res, err)
	}
	res.Body.Close()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if err := ListenAndServe(context.Background(), "127.0.0.1:-1", nil); err == nil {
		t.Error("bad address accepted")
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"  a\n\tb  c ":   "a b c",
		"x\u00a0\u3000y": "x y",
		"":               "",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// A seeded request takes no turn of the cursor: the same seed gets the same
// texts (choice j from seed + j, as on vLLM, so a request with seed s+1
// repeats choices 1.. of seed s), different seeds get independent picks,
// and unseeded requests still hand out the recording in order.
func TestSeededRequests(t *testing.T) {
	pool := make([]string, 1000)
	for i := range pool {
		pool[i] = fmt.Sprintf("t%d", i)
	}
	h := New(map[string][]string{"What is 1+1?": pool}, Options{})
	ask := func(body map[string]any) []string {
		body["model"], body["prompt"] = "m", "Q: What is 1+1?"
		rec, resp := post(t, h, "/v1/completions", body)
		if rec.Code != 200 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
		return texts(t, resp, false)
	}
	a := ask(map[string]any{"seed": 42, "n": 4})
	if b := ask(map[string]any{"seed": 42, "n": 4}); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("seed 42 gave %v, then %v", a, b)
	}
	if b := ask(map[string]any{"seed": 43, "n": 3}); fmt.Sprint(a[1:]) != fmt.Sprint(b) {
		t.Errorf("seed 43 gave %v; want choices 1.. of seed 42 %v", b, a[1:])
	}
	for j, txt := range a {
		if want := fmt.Sprintf("t%d", SeededPick(42, j, len(pool))); txt != want {
			t.Errorf("choice %d: %s; want %s", j, txt, want)
		}
	}
	distinct := map[string]bool{}
	for s := range 64 {
		distinct[ask(map[string]any{"seed": s * 1000})[0]] = true
	}
	if len(distinct) < 55 { // 64 picks of 1000: about 2 collisions expected
		t.Errorf("64 seeds gave %d distinct texts of 1,000", len(distinct))
	}
	if got := ask(map[string]any{"n": 2}); fmt.Sprint(got) != "[t0 t1]" {
		t.Errorf("unseeded request after seeded ones got %v; want the first recordings [t0 t1]", got)
	}
}
