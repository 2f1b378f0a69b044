package metrics_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/reach-lab/reach/internal/metrics"
)

// scrape reads h's text exposition into series ("name{labels}") and values,
// and returns the body too.
func scrape(t *testing.T, h http.Handler) (map[string]float64, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("scrape: HTTP %d: %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out, body
}

// The middleware labels a request with the route pattern it matched, not
// its path; a request no route matched is "unmatched"; an unknown method
// is "other". Nothing the client sent reaches a label.
func TestMetricsMiddlewareLabels(t *testing.T) {
	r := chi.NewRouter()
	r.Use(metrics.Middleware)
	r.Get("/comparisons/{id}", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	r.Route("/s/{token}", func(r chi.Router) {
		r.Get("/", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusGone) })
	})
	h := metrics.Handler()
	before, _ := scrape(t, h)
	srv := httptest.NewServer(r)
	defer srv.Close()
	send := func(method, path string) {
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	send("GET", "/comparisons/usertext-one")
	send("GET", "/comparisons/usertext-two")
	send("GET", "/s/usertext-token/")
	send("GET", "/usertext-nowhere")
	send("GET", "/s/usertext-token/usertext-deeper")
	send("USERTEXTMETHOD", "/comparisons/3")
	after, body := scrape(t, h)
	for series, want := range map[string]float64{
		`reach_http_requests_total{code="200",method="GET",route="/comparisons/{id}"}`:      2,
		`reach_http_requests_total{code="410",method="GET",route="/s/{token}"}`:             1,
		`reach_http_requests_total{code="404",method="GET",route="unmatched"}`:              1,
		`reach_http_requests_total{code="404",method="GET",route="/s/{token}/*"}`:           1,
		`reach_http_requests_total{code="405",method="other",route="unmatched"}`:            1,
		`reach_http_request_duration_seconds_count{method="GET",route="/comparisons/{id}"}`: 2,
	} {
		if got := after[series] - before[series]; got != want {
			t.Errorf("%s went up by %v, want %v", series, got, want)
		}
	}
	if strings.Contains(body, "usertext") || strings.Contains(strings.ToLower(body), "usertextmethod") {
		t.Errorf("a label holds what the client sent:\n%s", grep(body, "usertext"))
	}
}

func grep(body, s string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(strings.ToLower(l), s) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// Counters of work and outcomes take only their fixed label values.
func TestMetricsFixedLabels(t *testing.T) {
	h := metrics.Handler()
	before, _ := scrape(t, h)
	metrics.SandboxRun("exit_ok", 10*time.Millisecond)
	metrics.SandboxRun("usertext outcome", time.Millisecond)
	metrics.EndpointRequest("completion", "", time.Second)
	metrics.EndpointRequest("completion", "rate_limit", time.Second)
	metrics.EndpointRequest("logprobs", "usertext kind", time.Second)
	metrics.ReportLookup("memory")
	metrics.ReportLookup("computed")
	metrics.ReportComputed(1500 * time.Millisecond)
	metrics.JobFinished("import", "completed", 2*time.Second)
	metrics.JobFinished("import", "usertext", time.Second)
	metrics.SamplesImported(5)
	metrics.SamplesVerified(4)
	metrics.SamplesSampled(3)
	after, body := scrape(t, h)
	for series, want := range map[string]float64{
		`reach_sandbox_runs_total{outcome="exit_ok"}`:                        1,
		`reach_sandbox_runs_total{outcome="other"}`:                          1,
		`reach_sandbox_run_duration_seconds_count`:                           2,
		`reach_endpoint_requests_total{call="completion"}`:                   2,
		`reach_endpoint_requests_total{call="logprobs"}`:                     1,
		`reach_endpoint_errors_total{call="completion",kind="rate_limit"}`:   1,
		`reach_endpoint_errors_total{call="logprobs",kind="other"}`:          1,
		`reach_report_cache_lookups_total{result="memory"}`:                  1,
		`reach_report_cache_lookups_total{result="computed"}`:                1,
		`reach_report_compute_seconds_count`:                                 1,
		`reach_report_compute_seconds_sum`:                                   1.5,
		`reach_river_jobs_finished_total{kind="import",outcome="completed"}`: 1,
		`reach_river_jobs_finished_total{kind="import",outcome="other"}`:     1,
		`reach_samples_imported_total`:                                       5,
		`reach_samples_verified_total`:                                       4,
		`reach_samples_sampled_total`:                                        3,
	} {
		if got := after[series] - before[series]; got != want {
			t.Errorf("%s went up by %v, want %v", series, got, want)
		}
	}
	if strings.Contains(body, "usertext") {
		t.Errorf("a label holds a value outside its set:\n%s", grep(body, "usertext"))
	}
	if _, ok := after["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
}

// The queue collector reports unfinished jobs by kind and state, the
// depth of each queue (a `reach import` process's private queue as
// "local"), and says when Postgres could not be asked.
func TestMetricsQueueCollector(t *testing.T) {
	counts := []metrics.JobCount{
		{Kind: "import", Queue: "default", State: "available", Count: 2, OldestSeconds: 7},
		{Kind: "sample", Queue: "sampling", State: "running", Count: 5},
		{Kind: "import-local", Queue: "local_0123456789abcdef", State: "available", Count: 1, OldestSeconds: 3},
		{Kind: "usertext-kind", Queue: "default", State: "available", Count: 1, OldestSeconds: 9},
	}
	var fail error
	c := metrics.NewQueueCollector(func(context.Context) ([]metrics.JobCount, error) { return counts, fail },
		[]string{"import", "import-local", "sample"}, time.Second, nil)
	got, body := scrape(t, metrics.Handler(c))
	for series, want := range map[string]float64{
		`reach_river_jobs{kind="import",state="available"}`: 2,
		`reach_river_jobs{kind="import",state="running"}`:   0,
		`reach_river_jobs{kind="sample",state="running"}`:   5,
		`reach_river_jobs{kind="other",state="available"}`:  1,
		`reach_river_queue_depth{queue="default"}`:          3,
		`reach_river_queue_depth{queue="sampling"}`:         0,
		`reach_river_queue_depth{queue="local"}`:            1,
		`reach_river_queue_oldest_seconds{queue="default"}`: 9,
		`reach_river_queue_oldest_seconds{queue="local"}`:   3,
		`reach_river_jobs_up`:                               1,
	} {
		if v, ok := got[series]; !ok || v != want {
			t.Errorf("%s = %v (present %t), want %v", series, v, ok, want)
		}
	}
	if strings.Contains(body, "usertext") || strings.Contains(body, "local_0123") {
		t.Errorf("a label holds a value outside its set:\n%s", grep(body, "usertext"))
	}
	fail = errors.New("database down")
	got, _ = scrape(t, metrics.Handler(c))
	if got["reach_river_jobs_up"] != 0 {
		t.Errorf("reach_river_jobs_up = %v after a failed count, want 0", got["reach_river_jobs_up"])
	}
}
