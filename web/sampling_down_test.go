package web_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// A sampled comparison failed because a model's endpoint was down shows
// the cause, the retry note naming the URL, Retry and Delete; Retry puts
// it back to sampling, and refuses (409) when nothing is left to sample.
func TestFailedSampledComparisonOffersRetry(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	st := f.srv.st
	cid, baseRun, pid := readyComparison(t, st, "down endpoint", f.project, "What is 2+2?")
	cfg := jobs.DefaultSamplingConfig()
	cfg.N = 4
	if err := st.SetSamplingConfig(ctx, cid, cfg); err != nil {
		t.Fatal(err)
	}
	const where = "http://127.0.0.1:18099/v1/"
	note := "cannot connect to " + where + ": connect: connection refused at " + where + " · 7 attempts failed since 04:00:00 UTC · next try at 04:00:09 UTC · given up at 04:02:00 UTC unless it answers"
	msg := `model "base": ` + where + ` is unreachable: connect: connection refused; 41 attempts since 04:00:00 UTC (2m0s) could not connect`
	for _, q := range []string{
		`UPDATE runs SET endpoint_url = 'http://127.0.0.1:18099/v1', endpoint_model = 'base' WHERE id = $1`,
		`INSERT INTO sample_chunks (run_id, problem_id, first_index, count, status, error, error_kind) VALUES ($1, $2, 0, 4, 'pending', $3, 'connection')`,
	} {
		args := []any{baseRun}
		if strings.HasPrefix(q, "INSERT") {
			args = append(args, pid, note)
		}
		if _, err := st.Pool().Exec(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.SetRunStatus(ctx, baseRun, store.StatusFailed, msg); err != nil {
		t.Fatal(err)
	}
	if err := st.SetComparisonStatus(ctx, cid, store.StatusFailed, msg); err != nil {
		t.Fatal(err)
	}
	path := fmt.Sprintf("/comparisons/%d", cid)
	code, body := f.page("owner", path)
	for _, want := range []string{where + " is unreachable: connect: connection refused", `id="retry-sampling"`, `id="delete-button"`,
		"cannot connect to " + where, "The samples drawn so far are kept"} {
		if !strings.Contains(body, want) {
			t.Errorf("GET %s: HTTP %d, page lacks %q", path, code, want)
		}
	}
	// The list says why too.
	if code, body := f.page("owner", "/"); !strings.Contains(body, where+" is unreachable") {
		t.Errorf("GET /: HTTP %d, the list does not say why the comparison failed", code)
	}
	if code, loc, body := f.send("editor", path+"/resume", url.Values{}); code != 303 || loc != path {
		t.Fatalf("Retry: HTTP %d %s %.300s; want 303 to %s", code, loc, body, path)
	}
	if c, err := st.GetComparison(ctx, cid); err != nil || c.Status != store.StatusSampling || c.Error != "" {
		t.Fatalf("after Retry: %s %q %v; want sampling", c.Status, c.Error, err)
	}

	// A failed comparison with nothing left to sample: Retry says so.
	// (This server works no jobs: the ones Retry queued are dropped.)
	if code, _, body := f.send("editor", path+"/pause", url.Values{}); code != 303 {
		t.Fatalf("pause: HTTP %d %.300s", code, body)
	}
	if _, err := st.Pool().Exec(ctx, `DELETE FROM river_job WHERE kind = 'sample'`); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Pool().Exec(ctx, `UPDATE sample_chunks SET status = 'done' WHERE run_id = $1`, baseRun); err != nil {
		t.Fatal(err)
	}
	if err := st.SetComparisonStatus(ctx, cid, store.StatusFailed, "verification failed"); err != nil {
		t.Fatal(err)
	}
	if code, _, body := f.send("editor", path+"/resume", url.Values{}); code != 409 || !strings.Contains(body, "Cannot retry") {
		t.Errorf("Retry with nothing to sample: HTTP %d %.300s; want 409", code, body)
	}
}
