package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/go-chi/chi/v5"

	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web"
	"github.com/reach-lab/reach/web/apispec"
)

// loadSpec parses and validates the API's OpenAPI document with kin-openapi.
func loadSpec(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(apispec.JSON())
	if err != nil {
		t.Fatalf("load openapi.json: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() || doc.IsOpenAPI32OrLater() {
		t.Fatalf("openapi.json is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	return doc
}

// The document is valid OpenAPI 3.1 and describes exactly the router's
// /api/v1 routes: every route the router has is documented with its
// method, and every documented operation is a route.
func TestOpenAPIMatchesRouter(t *testing.T) {
	doc := loadSpec(t)
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "/api/v1" {
		t.Fatalf("servers: want one, /api/v1 (paths are relative to it)")
	}
	h := web.New(nil, nil, web.Config{JobsUI: http.NotFoundHandler()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	routed := map[string]bool{}
	err := chi.Walk(h.(chi.Routes), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		pattern = strings.ReplaceAll(pattern, "/*/", "/")
		if p, ok := strings.CutPrefix(pattern, "/api/v1/"); ok {
			routed[method+" /"+p] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	var undocumented, unrouted []string
	for r := range routed {
		if !documented[r] {
			undocumented = append(undocumented, r)
		}
	}
	for d := range documented {
		if !routed[d] {
			unrouted = append(unrouted, d)
		}
	}
	slices.Sort(undocumented)
	slices.Sort(unrouted)
	if len(undocumented) > 0 {
		t.Errorf("API routes missing from web/apispec/openapi.json: %v", undocumented)
	}
	if len(unrouted) > 0 {
		t.Errorf("operations in web/apispec/openapi.json the router does not have: %v", unrouted)
	}
	if len(routed) < 20 {
		t.Errorf("only %d API routes walked: %v", len(routed), routed)
	}
}

// specClient calls the API of a running app and validates every answer
// (status, content type, body) against the document with kin-openapi's
// openapi3filter, recording which operations answered with success.
type specClient struct {
	t      *testing.T
	doc    *openapi3.T
	router routers.Router
	base   string // the app's URL
	token  string
	ok     map[string]bool // operation ids answered with a 2xx
}

func newSpecClient(t *testing.T, base, token string) *specClient {
	t.Helper()
	doc := loadSpec(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("kin-openapi router: %v", err)
	}
	return &specClient{t: t, doc: doc, router: router, base: base, token: token, ok: map[string]bool{}}
}

// do sends method path (under /api/v1) with the token (unless anonymous),
// checks the status is want and the answer validates; it returns the body.
func (c *specClient) do(method, path, ctype string, body []byte, anonymous bool, want int) []byte {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+"/api/v1"+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if !anonymous {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	what := method + " " + path
	if resp.StatusCode != want {
		c.t.Errorf("%s: HTTP %d, want %d: %.300s", what, resp.StatusCode, want, b)
		return b
	}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		c.t.Errorf("%s: not in the document: %v", what, err)
		return b
	}
	if want < 400 {
		// An accepted request is one the document describes: its parameters
		// and body validate too (refused ones may break the document on purpose).
		req.Body = io.NopCloser(bytes.NewReader(body))
		opts := &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
		if err := openapi3filter.ValidateRequest(context.Background(),
			&openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}); err != nil {
			c.t.Errorf("%s: the request (answered %d) does not match the document: %v", what, resp.StatusCode, err)
		}
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(b)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		c.t.Errorf("%s (HTTP %d): the answer does not match the document: %v", what, resp.StatusCode, err)
	} else if resp.StatusCode < 300 {
		c.ok[route.Operation.OperationID] = true
	}
	return b
}

func (c *specClient) get(path string, want int) []byte {
	return c.do("GET", path, "", nil, false, want)
}

// Real answers of the API validate against the document: a comparison
// uploaded through the API from the shipped MATH500 counts (three models,
// one a checkpoint with a step, so the report has a trajectory) once its
// bootstrap statistics are attached, a stored comparison with completion
// texts and a review, every GET operation, the actions, refusals (400, 401,
// 404, 409) and deletion. Accepted requests are validated against the
// document too.
func TestOpenAPIResponsesValidate(t *testing.T) {
	a := startApp(t)
	admin := newAccount(t, a.st, a.url, "spec@reach.test", true, "")
	c := newSpecClient(t, a.url, admin.Token)

	// The document itself, without a token.
	c.do("GET", "/openapi.json", "", nil, true, 200)

	// Upload: the shipped MATH500 pair and the RL model's counts again as
	// a checkpoint at step 100.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	field := func(k, v string) {
		if err := mw.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	file := func(field, name string) {
		w, err := mw.CreateFormFile(field, name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := examples.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if _, err := io.Copy(w, r); err != nil {
			t.Fatal(err)
		}
	}
	field("name", "MATH500 spec check")
	file("dataset_file", "math500.jsonl")
	for _, m := range []struct{ role, name, step, file string }{
		{"base", "Qwen2.5-7B", "", "qwen2.5-7b-base.csv"},
		{"checkpoint", "SimpleRL step 100", "100", "qwen2.5-7b-simplerl-zoo.csv"},
		{"rl", "SimpleRL-Zoo", "", "qwen2.5-7b-simplerl-zoo.csv"},
	} {
		field("model_role", m.role)
		field("model_name", m.name)
		if m.step != "" {
			field("model_step", m.step)
		}
		file("model_file", m.file)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	var created struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(c.do("POST", "/comparisons", mw.FormDataContentType(), buf.Bytes(), false, 202), &created); err != nil || created.ID == 0 {
		t.Fatalf("upload: %v (id %d)", err, created.ID)
	}
	id := fmt.Sprintf("/comparisons/%d", created.ID)
	c.get(id, 200) // while importing
	a.waitReady(t, created.ID, 3*time.Minute)

	// The report before and after the statistics job attached its intervals.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var rep struct {
			Stats struct {
				Status string `json:"status"`
			} `json:"stats"`
			Models []struct {
				CI *struct{} `json:"pass_at_1_ci"`
			} `json:"models"`
			Trajectory []struct{} `json:"trajectory"`
		}
		if err := json.Unmarshal(c.get(id+"/report", 200), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Stats.Status == "ready" {
			if len(rep.Models) != 3 || rep.Models[0].CI == nil || len(rep.Trajectory) == 0 {
				t.Fatalf("the report checked lacks models, intervals or a trajectory: %+v", rep)
			}
			break
		}
		if rep.Stats.Status == "failed" || time.Now().After(deadline) {
			t.Fatalf("statistics %s", rep.Stats.Status)
		}
		time.Sleep(time.Second)
	}
	for _, q := range []string{"?exclude=guessable", "?estimator=biased", "?without=grading-errors", "?eps=0.05", "?min_n=2"} {
		c.get(id+"/report"+q, 200)
	}
	c.get("/comparisons", 200)
	c.get(id, 200)
	c.get(id+"/reviews", 200)
	c.get(id+"/mapping", 200)
	c.get(id+"/debate", 200)
	c.get(id+"/verifier-audit", 200) // counts only: no plan
	for _, f := range []string{"csv", "jsonl", "parquet"} {
		c.get(id+"/difficulty."+f, 200)
	}
	c.get(id+"/samples.jsonl", 409) // counts only: no samples
	c.get(id+"/report?eps=2", 400)
	for _, chart := range []string{"crossover.csv", "crossover.json", "venn-1.csv", "histogram.json"} {
		c.get(id+"/data/"+chart, 200)
	}
	c.get(id+"/data/crossover.csv?min_n=abc", 400)
	c.get(id+"/data/nothing.csv", 404)

	// A comparison with completion texts and a review.
	texts := storeReady(t, a.st, "texts", 0, tenProblems(), []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}, 4,
		func(run int, p store.Problem, i int) bool { return (p.Idx+run)%3 != 0 && i <= p.Idx%4 })
	if err := a.st.SetReview(context.Background(), store.Review{ComparisonID: texts.ID, ProblemID: texts.Ps[0].ID, Verdict: "genuine",
		Note: "checked", ReviewerID: admin.ID}); err != nil {
		t.Fatal(err)
	}
	tid := fmt.Sprintf("/comparisons/%d", texts.ID)
	c.get(tid+"/report", 200)
	c.get(tid+"/reviews", 200)
	c.get(tid+"/samples.jsonl", 200)
	c.get(tid+"/samples.parquet", 200)
	c.get(tid+"/verifier-audit?m=3", 200)

	// Actions and refusals.
	form := "application/x-www-form-urlencoded"
	c.do("POST", id+"/mapping", "application/json", []byte(`{"accept_guess": true}`), false, 409)
	c.do("POST", id+"/retry", form, nil, false, 409)
	c.do("POST", id+"/cancel-import", form, nil, false, 409)
	c.do("POST", id+"/restore-verdicts", form, nil, false, 409)
	c.do("POST", tid+"/policy", form, []byte("policy=sloppy"), false, 409)
	c.do("POST", tid+"/reverify", form, nil, false, 202)
	c.do("POST", tid+"/reverify", form, nil, false, 409) // verifying
	c.do("POST", id+"/policy", form, []byte("policy=lenient"), false, 202)
	c.do("POST", id+"/debate/judge/test", form, nil, false, 200)
	c.do("POST", id+"/debate/judge/start", form, nil, false, 409)
	c.do("POST", id+"/debate/score/pause", form, nil, false, 409)
	c.do("POST", id+"/debate/judge", form, []byte("base_url=http%3A%2F%2F127.0.0.1%3A9%2Fv1&model=judge&max_per_problem=4"), false, 200)
	c.do("POST", id+"/debate/judge", form, []byte("model=judge"), false, 400)
	c.do("POST", id+"/debate/judge/pause", form, nil, false, 202)
	var share struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(c.do("POST", id+"/shares", "application/json", []byte(`{"chart": "crossover", "expires_in": "24h"}`), false, 201), &share); err != nil {
		t.Fatal(err)
	}
	c.do("POST", id+"/shares", "application/json", []byte(`{"chart": "pie"}`), false, 400)
	c.do("DELETE", fmt.Sprintf("/shares/%d", share.ID), "", nil, false, 204)
	c.do("DELETE", "/shares/999999999", "", nil, false, 404)
	c.do("GET", id+"/report", "", nil, true, 401)
	newSpecClient(t, a.url, "reach_not-a-token").get(id+"/report", 401)
	noName := &bytes.Buffer{}
	nw := multipart.NewWriter(noName)
	if err := nw.WriteField("model_role", "base"); err != nil {
		t.Fatal(err)
	}
	if err := nw.Close(); err != nil {
		t.Fatal(err)
	}
	c.do("POST", "/comparisons", nw.FormDataContentType(), noName.Bytes(), false, 400)
	c.get("/comparisons/999999999", 404)
	c.do("DELETE", tid, "", nil, false, 204)
	c.get(tid, 404)

	// Every GET operation answered with success at least once.
	for path, item := range c.doc.Paths.Map() {
		if op := item.Get; op != nil && !c.ok[op.OperationID] {
			t.Errorf("GET %s (%s) was not called with success", path, op.OperationID)
		}
	}
}
