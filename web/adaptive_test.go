package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// post sends a form (url-encoded, or multipart when contentType says so)
// with a session cookie and returns the status, the Location and the body.
func post(t *testing.T, u, cookie, contentType string, body []byte) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", u, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Cookie", cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// tenProblems are p0 … p9, each asking for its own index.
func tenProblems() []store.Problem {
	var ps []store.Problem
	for i := range 10 {
		ps = append(ps, store.Problem{Idx: i, Key: fmt.Sprintf("p%d", i), Statement: fmt.Sprintf("What is %d+0?", i), Reference: fmt.Sprint(i)})
	}
	return ps
}

// The sampling form offers adaptive sampling with a budget and a hint of the
// uniform total; on a loaded dataset a budget outside [2, n] × models ×
// problems, or a budget without adaptive sampling, is refused in words, and
// an adaptive comparison stores both in its sampling config.
func TestAdaptiveSamplingForm(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	ctx := context.Background()
	ready := storeReady(t, srv.st, "ten", 0, tenProblems(),
		[]store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}, 2, func(int, store.Problem, int) bool { return true })
	c, err := srv.st.GetComparison(ctx, ready.ID)
	if err != nil {
		t.Fatal(err)
	}
	dataset := fmt.Sprint(*c.DatasetID)

	code, page := get(t, srv.url+"/comparisons/sample", "Cookie", cookie)
	for _, want := range []string{`name="adaptive"`, `name="budget"`, `id="budget-hint"`, `data-problems="10"`, `src="/static/sampling.js"`, "A uniform design draws n × models × problems samples"} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("sampling form (HTTP %d) lacks %s", code, want)
		}
	}
	if code, body := get(t, srv.url+"/static/sampling.js", "Cookie", cookie); code != 200 || !strings.Contains(body, "budget-hint") {
		t.Errorf("sampling.js: HTTP %d", code)
	}

	submit := func(fields ...string) (int, string, string) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		_ = mw.WriteField("name", "adaptive")
		_ = mw.WriteField("dataset_id", dataset)
		_ = mw.WriteField("n", "8")
		for i := 0; i+1 < len(fields); i += 2 {
			_ = mw.WriteField(fields[i], fields[i+1])
		}
		for _, role := range []string{"base", "rl"} {
			_ = mw.WriteField("model_role", role)
			_ = mw.WriteField("model_name", role)
			_ = mw.WriteField("model_url", "http://127.0.0.1:9/v1")
			_ = mw.WriteField("model_model", role)
		}
		_ = mw.WriteField("model_step", "")
		_ = mw.Close()
		return post(t, srv.url+"/comparisons/sample", cookie, mw.FormDataContentType(), buf.Bytes())
	}
	for _, tc := range []struct {
		fields []string
		want   string
	}{
		{[]string{"adaptive", "1", "budget", "161"}, "a budget of 161 samples is more than the uniform design draws (n = 8 × 2 models × 10 problems = 160): lower the budget or raise n"},
		{[]string{"adaptive", "1", "budget", "39"}, "a budget of 39 samples is too small: adaptive sampling draws at least 2 samples per model and problem, 40 for 2 models × 10 problems"},
		{[]string{"adaptive", "1"}, "adaptive sampling needs a budget"},
		{[]string{"budget", "100"}, "a budget (100 samples) applies only to adaptive sampling"},
		{[]string{"adaptive", "1", "budget", "many"}, `Budget (samples) &#34;many&#34; is not a positive whole number`},
	} {
		code, _, body := submit(tc.fields...)
		if code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("%q: HTTP %d, want 400 saying %q\n%.2000s", tc.fields, code, tc.want, body)
		}
	}
	code, loc, body := submit("adaptive", "1", "budget", "100")
	if code != 303 {
		t.Fatalf("budget 100: HTTP %d\n%.2000s", code, body)
	}
	var id int64
	if _, err := fmt.Sscanf(loc, "/comparisons/%d", &id); err != nil {
		t.Fatalf("redirect to %q", loc)
	}
	got, err := srv.st.GetComparison(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jobs.ParseSamplingConfig(got.Sampling)
	if err != nil || !cfg.Adaptive || cfg.Budget != 100 || cfg.N != 8 {
		t.Errorf("stored config %+v, %v; want adaptive, budget 100, n = 8", cfg, err)
	}
}

// adaptiveComparison stores an adaptive comparison of two endpoint models on
// tenProblems without jobs: n = 8, budget 120, 4 samples drawn on every
// model and problem (chunks [0, 4) done, base solves all, rl none), and the
// two plans an adaptive design would have recorded (the pilot, then a round).
func adaptiveComparison(t *testing.T, st *store.Store, status string) store.Comparison {
	t.Helper()
	ctx := context.Background()
	ready := storeReady(t, st, "adaptive", 0, tenProblems(), []store.NewRun{
		{ModelName: "base", Role: "base", Format: "endpoint", Endpoint: store.Endpoint{BaseURL: "http://127.0.0.1:9/v1", Model: "b", Style: "completions"}},
		{ModelName: "rl", Role: "rl", Format: "endpoint", Endpoint: store.Endpoint{BaseURL: "http://127.0.0.1:9/v1", Model: "r", Style: "completions"}},
	}, 4, func(run int, _ store.Problem, _ int) bool { return run == 0 })
	cfg := jobs.DefaultSamplingConfig()
	cfg.N, cfg.Adaptive, cfg.Budget, cfg.PerRequest = 8, true, 120, 4
	if err := st.SetSamplingConfig(ctx, ready.ID, cfg); err != nil {
		t.Fatal(err)
	}
	var chunks []store.Chunk
	for _, r := range ready.Runs {
		for _, p := range ready.Ps {
			chunks = append(chunks, store.Chunk{RunID: r.ID, ProblemID: p.ID, First: 0, Count: 4})
		}
	}
	if err := st.AddChunks(ctx, chunks); err != nil {
		t.Fatal(err)
	}
	for _, ch := range chunks {
		if err := st.FinishChunk(ctx, ch, "done", "", ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range []store.AdaptiveRound{
		{Drawn: 0, Planned: 40, Budget: 120},
		{Drawn: 40, Planned: 40, Budget: 120, Widest: map[int64]float64{ready.Runs[0].ID: 0.123, ready.Runs[1].ID: 0.0456}},
	} {
		if _, err := st.AddAdaptiveRound(ctx, ready.ID, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetComparisonStatus(ctx, ready.ID, status, ""); err != nil {
		t.Fatal(err)
	}
	c, err := st.GetComparison(ctx, ready.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The progress page of an adaptive comparison shows its round, the budget
// spent of the budget against the uniform total, and each model's widest
// interval. On the ready comparison the report offers to raise the budget;
// Extend refuses a budget not above the current one or above the uniform
// design at n in words, and with a higher budget and n stores both and
// plans the next round from each problem's extent (chunks from index 4).
func TestAdaptiveProgressAndExtend(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	ctx := context.Background()

	c := adaptiveComparison(t, srv.st, store.StatusSampling)
	code, page := get(t, fmt.Sprintf("%s/comparisons/%d/progress", srv.url, c.ID), "Cookie", cookie)
	for _, want := range []string{`id="adaptive-progress"`, ">round 2<", "80 of 120 samples of the budget", "(a uniform design draws 160)",
		"Widest 95% interval", "12.3 points", "4.6 points"} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("progress (HTTP %d) lacks %q\n%.3000s", code, want, page)
		}
	}

	c = adaptiveComparison(t, srv.st, store.StatusReady)
	base := fmt.Sprintf("%s/comparisons/%d", srv.url, c.ID)
	code, page = get(t, base, "Cookie", cookie)
	if code != 200 || !strings.Contains(page, `name="budget"`) || !strings.Contains(page, "Continue the adaptive design") {
		t.Errorf("report (HTTP %d) does not offer to raise the budget", code)
	}
	extend := func(v url.Values) (int, string) {
		code, _, body := post(t, base+"/extend", cookie, "application/x-www-form-urlencoded", []byte(v.Encode()))
		return code, body
	}
	for _, tc := range []struct {
		v    url.Values
		want string
	}{
		{url.Values{"budget": {"120"}}, "the new budget must be a whole number of samples above the current 120"},
		{url.Values{"budget": {"200"}, "n": {"4"}}, "the target n must be a whole number from the current n = 8 to 65,536"},
		{url.Values{"budget": {"200"}}, "a budget of 200 samples is more than the uniform design draws (n = 8 × 2 models × 10 problems = 160)"},
	} {
		if code, body := extend(tc.v); code != 400 || !strings.Contains(body, tc.want) {
			t.Errorf("extend %v: HTTP %d, want 400 saying %q\n%.2000s", tc.v, code, tc.want, body)
		}
	}
	if got, _ := srv.st.GetComparison(ctx, c.ID); got.Status != store.StatusReady || string(got.Sampling) != string(c.Sampling) {
		t.Fatalf("a refused extend changed the comparison: %s, %s", got.Status, got.Sampling)
	}
	if code, body := extend(url.Values{"budget": {"200"}, "n": {"16"}}); code != 303 {
		t.Fatalf("extend to budget 200, n = 16: HTTP %d\n%.2000s", code, body)
	}
	got, err := srv.st.GetComparison(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := jobs.ParseSamplingConfig(got.Sampling)
	if got.Status != store.StatusSampling || cfg.Budget != 200 || cfg.N != 16 {
		t.Errorf("after extend: %s, budget %d, n = %d; want sampling, 200, 16", got.Status, cfg.Budget, cfg.N)
	}
	rounds, last, err := srv.st.AdaptiveProgress(ctx, c.ID)
	if err != nil || rounds != 3 || last == nil || last.Planned == 0 || last.Drawn != 80 || last.Budget != 200 {
		t.Errorf("after extend: %d rounds, last %+v, %v; want a third round planned on 80 samples under budget 200", rounds, last, err)
	}
	var open, before int
	err = srv.st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE k.status = 'pending'), count(*) FILTER (WHERE k.status = 'pending' AND k.first_index < 4)
		FROM sample_chunks k JOIN runs r ON r.id = k.run_id WHERE r.comparison_id = $1`, c.ID).Scan(&open, &before)
	if err != nil || open == 0 || before != 0 {
		t.Errorf("after extend: %d open chunks, %d of them below index 4 (%v); want new chunks from index 4 up", open, before, err)
	}
}
