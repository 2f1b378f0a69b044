package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// freeAddr returns a loopback address no one listens on (a moment ago).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// scrapeMetrics reads a /metrics page into series ("name{labels}") and
// values, and returns the page too.
func scrapeMetrics(t *testing.T, url string) (map[string]float64, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("scrape %s: HTTP %d, %s: %s", url, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
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
	return out, string(b)
}

// metricsPair is a three-problem math comparison: the dataset and two
// models' samples (four completions a problem, without verdicts, so Reach
// grades every one), with names only a user would type.
func metricsPair() (dataset, base, rl string) {
	var d, b, r strings.Builder
	for i, sum := range []int{2, 3, 4} {
		fmt.Fprintf(&d, `{"id": "usertext-p%d", "problem": "What is 1+%d?", "answer": "%d"}`+"\n", i, sum-1, sum)
		fmt.Fprintf(&b, `{"problem_id": "usertext-p%d", "completions": ["The answer is \\boxed{%d}.", "The answer is \\boxed{%d}.", "\\boxed{7}", "\\boxed{8}"]}`+"\n", i, sum, sum)
		fmt.Fprintf(&r, `{"problem_id": "usertext-p%d", "completions": ["The answer is \\boxed{%d}.", "\\boxed{%d}", "\\boxed{%d}", "\\boxed{9}"]}`+"\n", i, sum, sum, sum)
	}
	return d.String(), b.String(), r.String()
}

const metricsPairSamples = 2 * 3 * 4

// reach serve --metrics-addr serves /metrics on that address only: after a
// comparison is imported through the API and its report read twice, the
// scrape counts every imported and graded sample, the report route by its
// pattern, the import jobs, the report cache's memory hit and River's
// queues, and no label holds a name a user typed. reach worker serves its
// own counters on its own address.
func TestMetricsServeAndWorker(t *testing.T) {
	st, dbURL := testdb.New(t)
	ctx := context.Background()
	hash, err := auth.HashPassword("correct horse battery staple", auth.DefaultParams)
	if err != nil {
		t.Fatal(err)
	}
	u, err := st.CreateUser(ctx, "metrics@example.org", hash, true, false)
	if err != nil {
		t.Fatal(err)
	}
	token, thash, err := auth.NewToken(auth.PrefixAPI)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateAPIToken(ctx, u.ID, "test", token[:10], thash); err != nil {
		t.Fatal(err)
	}

	addr, maddr := freeAddr(t), freeAddr(t)
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() {
		served <- runServe(sctx, []string{"--addr", addr, "--metrics-addr", maddr, "--workers", "2", "--example=false", "--database-url", dbURL})
	}()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("reach serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("reach serve did not stop")
		}
	})
	base, murl := "http://"+addr, "http://"+maddr+"/metrics"
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-served:
			t.Fatalf("reach serve stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("reach serve not up after a minute: %v", err)
		}
	}
	before, _ := scrapeMetrics(t, murl)

	api := func(method, path, contentType string, body io.Reader) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	dataset, baseFile, rlFile := metricsPair()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	file := func(field, name, body string) {
		w, _ := mw.CreateFormFile(field, name)
		_, _ = io.WriteString(w, body)
	}
	_ = mw.WriteField("name", "usertext-pair")
	file("dataset_file", "usertext-dataset.jsonl", dataset)
	for _, m := range [][3]string{{"base", "usertext-base-model", baseFile}, {"rl", "usertext-rl-model", rlFile}} {
		_ = mw.WriteField("model_role", m[0])
		_ = mw.WriteField("model_name", m[1])
		file("model_file", m[1]+".jsonl", m[2])
	}
	_ = mw.Close()
	code, body := api("POST", "/api/v1/comparisons", mw.FormDataContentType(), &buf)
	var created struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	if code != http.StatusAccepted || json.Unmarshal(body, &created) != nil || created.ID == 0 {
		t.Fatalf("create comparison: HTTP %d: %s", code, body)
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		c, err := st.GetComparison(ctx, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.Status == store.StatusReady {
			break
		}
		if c.Status == store.StatusFailed || time.Now().After(deadline) {
			t.Fatalf("comparison %s: %s", c.Status, c.Error)
		}
	}
	// The statistics jobs end a moment after the comparison is ready, and
	// change its report: wait (on the queue gauges) until no job is left
	// to run, so that the second read of the report finds it in memory.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		m, _ := scrapeMetrics(t, murl)
		waiting := 0.0
		for series, v := range m {
			if strings.HasPrefix(series, "reach_river_jobs{") && !strings.Contains(series, `state="scheduled"`) {
				waiting += v
			}
		}
		if waiting == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v River jobs still to run after a minute", waiting)
		}
	}
	report := fmt.Sprintf("/api/v1/comparisons/%d/report", created.ID)
	for range 2 {
		if code, body := api("GET", report, "", nil); code != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d: %s", report, code, body)
		}
	}
	after, page := scrapeMetrics(t, murl)
	delta := func(series string) float64 { return after[series] - before[series] }
	for series, want := range map[string]float64{
		`reach_samples_imported_total`: metricsPairSamples,
		`reach_samples_verified_total`: metricsPairSamples,
		`reach_samples_sampled_total`:  0,
		`reach_http_requests_total{code="200",method="GET",route="/api/v1/comparisons/{id}/report"}`: 2,
		`reach_http_requests_total{code="202",method="POST",route="/api/v1/comparisons"}`:            1,
		`reach_river_jobs_finished_total{kind="import",outcome="completed"}`:                         1,
		`reach_river_jobs_finished_total{kind="import-run",outcome="completed"}`:                     2,
	} {
		if got := delta(series); got != want {
			t.Errorf("%s went up by %v, want %v", series, got, want)
		}
	}
	for series, least := range map[string]float64{
		`reach_report_cache_lookups_total{result="memory"}`:                             1,
		`reach_river_job_duration_seconds_count{kind="import-run",outcome="completed"}`: 2,
	} {
		if got := delta(series); got < least {
			t.Errorf("%s went up by %v, want at least %v", series, got, least)
		}
	}
	for _, series := range []string{`reach_river_jobs_up`, `reach_river_queue_depth{queue="default"}`, `reach_river_queue_depth{queue="sampling"}`,
		`reach_river_jobs{kind="sample",state="available"}`, `go_goroutines`} {
		if _, ok := after[series]; !ok {
			t.Errorf("no series %s", series)
		}
	}
	if after[`reach_http_requests_total{code="200",method="GET",route="/healthz"}`] < 1 {
		t.Error("the health checks before the import are not counted")
	}
	if after[`reach_river_jobs_up`] != 1 {
		t.Errorf("reach_river_jobs_up = %v: the server could not count River's jobs", after[`reach_river_jobs_up`])
	}
	if strings.Contains(page, "usertext") {
		var lines []string
		for _, l := range strings.Split(page, "\n") {
			if strings.Contains(l, "usertext") {
				lines = append(lines, l)
			}
		}
		t.Errorf("labels hold names a user typed:\n%s", strings.Join(lines, "\n"))
	}
	// Not on the dashboard's address.
	if code, body := api("GET", "/metrics", "", nil); code == http.StatusOK || bytes.Contains(body, []byte("reach_http_requests_total")) {
		t.Errorf("GET /metrics on the dashboard's address: HTTP %d", code)
	}

	// A worker serves its own counters, not the server's view of the queues.
	waddr := freeAddr(t)
	wctx, wstop := context.WithCancel(ctx)
	worked := make(chan error, 1)
	go func() {
		worked <- runWorker(wctx, []string{"--workers", "1", "--metrics-addr", waddr, "--database-url", dbURL})
	}()
	defer func() {
		wstop()
		if err := <-worked; err != nil {
			t.Errorf("reach worker: %v", err)
		}
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + waddr + "/metrics"); err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("reach worker --metrics-addr: nothing listens after 30 s")
		}
	}
	wm, _ := scrapeMetrics(t, "http://"+waddr+"/metrics")
	if _, ok := wm[`reach_samples_imported_total`]; !ok {
		t.Error("the worker's metrics have no reach_samples_imported_total")
	}
	if _, ok := wm[`reach_river_jobs_up`]; ok {
		t.Error("the worker's metrics count River's queues too: only the server should")
	}
}
