package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"regexp"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/store"
)

var chartFileRe = regexp.MustCompile(`/comparisons/\d+/charts/[^"?]+`)

// nModels stores a ready comparison of models models (problems p0 and p1,
// 2 samples each; model i solves p0 when i is even) without any job.
func nModels(t *testing.T, st *store.Store, models int) int64 {
	t.Helper()
	runs := []store.NewRun{{ModelName: "base", Role: "base"}}
	for i := 1; i < models; i++ {
		runs = append(runs, store.NewRun{ModelName: fmt.Sprintf("step-%d", i*10), Role: "checkpoint", Step: new(i * 10)})
	}
	return storeReady(t, st, fmt.Sprintf("%d models", models), 0, twoProblems("p0", "1+1?"), runs, 2,
		func(run int, p store.Problem, i int) bool { return p.Key == "p1" || (run%2 == 0 && i == 0) }).ID
}

// TestModelLimit: a comparison has at most intake.MaxModels models. The
// upload form with one more is refused before any file is stored; every page
// of a comparison at the limit answers (the UpSet chart included), and so do
// those of a comparison stored with more before the limit existed (without
// an UpSet chart: 10,000 models answered 500).
func TestModelLimit(t *testing.T) {
	f := newFixture(t)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("name", "too many")
	_ = mw.WriteField("dataset_id", fmt.Sprint(f.dataset))
	for i := range intake.MaxModels + 1 {
		_ = mw.WriteField("model_role", map[bool]string{true: "base", false: "rl"}[i == 0])
		_ = mw.WriteField("model_name", fmt.Sprintf("m%d", i))
		w, _ := mw.CreateFormFile("model_file", fmt.Sprintf("m%d.csv", i))
		_, _ = io.WriteString(w, "problem_id,n,correct\np0,4,1\np1,4,4\n")
	}
	_ = mw.Close()
	resp := f.do("owner", "POST", "/comparisons", mw.FormDataContentType(), buf.Bytes())
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(body), "at most 64 models") {
		t.Errorf("upload of %d models: HTTP %d, want 400 naming the limit\n%.400s", intake.MaxModels+1, resp.StatusCode, body)
	}
	var uploads int
	if err := f.srv.st.Pool().QueryRow(context.Background(), "SELECT count(*) FROM uploads").Scan(&uploads); err != nil {
		t.Fatal(err)
	}
	if uploads != 0 {
		t.Errorf("%d uploads stored for a refused form", uploads)
	}

	for _, n := range []int{intake.MaxModels, 80} {
		cid := nModels(t, f.srv.st, n)
		code, page := f.page("owner", fmt.Sprintf("/comparisons/%d", cid))
		if code != 200 {
			t.Fatalf("%d models: comparison page HTTP %d\n%.300s", n, code, page)
		}
		paths := []string{fmt.Sprintf("/api/v1/comparisons/%d/report", cid), fmt.Sprintf("/comparisons/%d/data/crossover.json", cid)}
		paths = append(paths, chartFileRe.FindAllString(page, -1)...)
		if len(paths) < 3 {
			t.Errorf("%d models: no chart file named on the page", n)
		}
		var charts string
		for _, p := range paths {
			code, body := f.page("owner", p)
			if code != 200 {
				t.Errorf("%d models, GET %s: HTTP %d\n%.300s", n, p, code, body)
			}
			charts += body
		}
		if hasUpSet := strings.Contains(charts, "upset"); hasUpSet != (n <= intake.MaxModels) {
			t.Errorf("%d models: UpSet chart drawn = %v", n, hasUpSet)
		}
	}
}
