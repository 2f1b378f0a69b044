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
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/web"
)

// server is Reach's handler on a fresh database with an insert-only River
// client: jobs are enqueued, never worked (no test here needs them done).
type server struct {
	st  *store.Store
	url string
}

func newServer(t *testing.T) server { return newServerWith(t, web.Config{}) }

// newServerWith is newServer with cfg (its JobsUI is set here).
func newServerWith(t *testing.T, cfg web.Config) server {
	t.Helper()
	st, _ := testdb.New(t)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	client, err := jobs.NewClient(st, jobs.Config{Workers: 0, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	jobsUI := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "river UI") })
	cfg.JobsUI = jobsUI
	srv := httptest.NewServer(web.New(st, client, cfg, logger))
	t.Cleanup(srv.Close)
	return server{st: st, url: srv.URL}
}

// readyComparison stores a ready two-model comparison in a project (0: the
// default one) without any job: problems p0 (base solves 1 of 4, the other
// model 0: base-only) and p1 (solved by both). It returns the comparison,
// its base run and problem p0.
func readyComparison(t *testing.T, st *store.Store, name string, projectID int64, statement string) (cid, rid, pid int64) {
	t.Helper()
	ctx := context.Background()
	did, err := st.CreateDataset(ctx, name, name+".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsertProblems(ctx, did, []store.Problem{{Idx: 0, Key: "p0", Statement: statement, Reference: "2"},
		{Idx: 1, Key: "p1", Statement: "What is 1+2?", Reference: "3"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		t.Fatal(err)
	}
	cid, err = st.CreateComparison(ctx, store.NewComparison{Name: name, DatasetID: did, Status: store.StatusReady, ProjectID: projectID,
		Runs: []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := st.Problems(ctx, did, false)
	if err != nil {
		t.Fatal(err)
	}
	var batch []store.Sample
	for _, run := range c.Runs {
		for _, p := range ps {
			for i := range 4 {
				status := store.SampleIncorrect
				if p.Key == "p1" || (run.Role == "base" && i == 0) {
					status = store.SampleCorrect
				}
				batch = append(batch, store.Sample{RunID: run.ID, ProblemID: p.ID, SampleIndex: i, Completion: "The answer is 2.", Status: status})
			}
		}
	}
	if err := st.InsertSamples(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, run := range c.Runs {
		if err := st.AggregateRun(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
		if err := st.SetRunImported(ctx, run.ID, "reach-jsonl", true, "file"); err != nil {
			t.Fatal(err)
		}
		if err := st.SetRunStatus(ctx, run.ID, store.StatusReady, ""); err != nil {
			t.Fatal(err)
		}
	}
	return cid, c.Runs[0].ID, ps[0].ID
}

// shareToken makes a share link in the store and returns its id and token.
func shareToken(t *testing.T, st *store.Store, l store.ShareLink) (int64, string) {
	t.Helper()
	token, hash, err := auth.NewToken(auth.PrefixShare)
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.CreateShare(context.Background(), l, hash)
	if err != nil {
		t.Fatal(err)
	}
	return id, token
}

// Levels a route needs.
type level int

const (
	public   level = iota
	shared         // a live share token in the path
	signedIn       // any account
	creator        // an editor of some project
	read           // viewer of the comparison's (or project's) project
	edit           // editor
	manage         // owner
	admin          // instance admin
)

// The roles of the access matrix. holder has only a share link (of the
// fixture comparison, without problem texts); outsider is signed in but in
// no project.
var roles = []string{"anonymous", "holder", "outsider", "viewer", "editor", "owner", "admin"}

// rank is how far each role reaches in the fixture's project.
var rank = map[string]level{"outsider": signedIn, "viewer": read, "editor": edit, "owner": manage, "admin": admin}

type fixture struct {
	t        *testing.T
	srv      server
	acc      map[string]account
	project  int64 // the default project: viewer, editor, owner are members
	cid, rid int64 // the ready comparison every non-destructive route uses
	pid      int64 // its base-only problem p0
	dataset  int64
	token    string // share link of cid: every chart, no texts
	spare    store.User
	n        atomic.Int64
}

// fresh is a new ready comparison for routes that change or delete one.
func (f *fixture) fresh() (cid, rid, pid int64) {
	return readyComparison(f.t, f.srv.st, fmt.Sprintf("fresh-%d", f.n.Add(1)), 0, "What is 1+1?")
}

func (f *fixture) freshShare() int64 {
	id, _ := shareToken(f.t, f.srv.st, store.ShareLink{ComparisonID: f.cid})
	return id
}

// req is one request of a route; path and body are built per attempt.
type route struct {
	name   string
	need   level
	method string
	path   func(f *fixture, role string) string
	body   func(f *fixture) (contentType string, body []byte)
	ok     int // status when allowed
}

func static(p string) func(*fixture, string) string {
	return func(*fixture, string) string { return p }
}

func form(v url.Values) func(*fixture) (string, []byte) {
	return func(*fixture) (string, []byte) { return "application/x-www-form-urlencoded", []byte(v.Encode()) }
}

// uploadBody is the multipart "new comparison" submission on the fixture's
// dataset (counts CSVs).
func uploadBody(f *fixture) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	field := func(k, v string) { _ = mw.WriteField(k, v) }
	file := func(name, body string) {
		w, _ := mw.CreateFormFile("model_file", name)
		_, _ = io.WriteString(w, body)
	}
	field("name", fmt.Sprintf("upload-%d", f.n.Add(1)))
	field("dataset_id", fmt.Sprint(f.dataset))
	field("model_role", "base")
	field("model_name", "b")
	file("b.csv", "problem_id,n,correct\np0,4,1\np1,4,4\n")
	field("model_role", "rl")
	field("model_name", "r")
	file("r.csv", "problem_id,n,correct\np0,4,0\np1,4,4\n")
	_ = mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func cpath(format string) func(*fixture, string) string {
	return func(f *fixture, _ string) string { return fmt.Sprintf(format, f.cid) }
}

// routes is every route of the app (POST /projects last: it makes the
// caller an owner, which would change what they may create).
var routes = []route{
	{"health", public, "GET", static("/healthz"), nil, 200},
	{"static file", public, "GET", static("/static/app.css"), nil, 200},

	{"shared page", shared, "GET", func(f *fixture, role string) string { return "/s/" + shareFor(f, role) }, nil, 200},
	{"shared embed", shared, "GET", func(f *fixture, role string) string { return "/s/" + shareFor(f, role) + "/embed" }, nil, 200},
	{"shared chart data", shared, "GET", func(f *fixture, role string) string { return "/s/" + shareFor(f, role) + "/data/crossover.csv" }, nil, 200},

	{"home", signedIn, "GET", static("/"), nil, 200},
	{"account", signedIn, "GET", static("/account/password"), nil, 200},
	{"tokens", signedIn, "GET", static("/account/tokens"), nil, 200},
	{"create token", signedIn, "POST", static("/account/tokens"), form(url.Values{"name": {"ci"}}), 200},
	{"projects", signedIn, "GET", static("/projects"), nil, 200},
	{"API list", signedIn, "GET", static("/api/v1/comparisons"), nil, 200},

	{"new comparison form", creator, "GET", static("/comparisons/new"), nil, 200},
	{"sampling form", creator, "GET", static("/comparisons/sample"), nil, 200},
	{"upload", creator, "POST", static("/comparisons"), uploadBody, 303},
	{"API upload", creator, "POST", static("/api/v1/comparisons"), uploadBody, 202},

	{"comparison", read, "GET", cpath("/comparisons/%d"), nil, 200},
	{"progress", read, "GET", cpath("/comparisons/%d/progress"), nil, 200},
	{"mapping", read, "GET", cpath("/comparisons/%d/mapping"), nil, 303},
	{"problem", read, "GET", func(f *fixture, _ string) string { return fmt.Sprintf("/comparisons/%d/problems/%d", f.cid, f.pid) }, nil, 200},
	{"audit", read, "GET", cpath("/comparisons/%d/audit"), nil, 200},
	{"chart CSV", read, "GET", cpath("/comparisons/%d/data/crossover.csv"), nil, 200},
	{"chart JSON", read, "GET", cpath("/comparisons/%d/data/venn-1.json"), nil, 200},
	{"API comparison", read, "GET", cpath("/api/v1/comparisons/%d"), nil, 200},
	{"API report", read, "GET", cpath("/api/v1/comparisons/%d/report"), nil, 200},
	{"API reviews", read, "GET", cpath("/api/v1/comparisons/%d/reviews"), nil, 200},
	{"project", read, "GET", func(f *fixture, _ string) string { return fmt.Sprintf("/projects/%d", f.project) }, nil, 200},

	{"confirm mapping", edit, "POST", cpath("/comparisons/%d/mapping"), form(nil), 303},
	{"re-verify", edit, "POST", func(f *fixture, _ string) string {
		c, _, _ := f.fresh()
		return fmt.Sprintf("/comparisons/%d/reverify", c)
	}, form(nil), 303},
	{"test connection", edit, "POST", func(f *fixture, _ string) string { return fmt.Sprintf("/comparisons/%d/runs/%d/test", f.cid, f.rid) }, form(nil), 200},
	{"start sampling", edit, "POST", cpath("/comparisons/%d/start"), form(nil), 409},
	{"pause sampling", edit, "POST", cpath("/comparisons/%d/pause"), form(nil), 409},
	{"resume sampling", edit, "POST", cpath("/comparisons/%d/resume"), form(nil), 409},
	{"cancel sampling", edit, "POST", cpath("/comparisons/%d/cancel"), form(nil), 409},
	{"extend sampling", edit, "POST", cpath("/comparisons/%d/extend"), form(nil), 409},
	{"review", edit, "POST", func(f *fixture, _ string) string {
		return fmt.Sprintf("/comparisons/%d/problems/%d/review", f.cid, f.pid)
	},
		form(url.Values{"verdict": {"genuine"}}), 303},
	{"override verdict", edit, "POST", func(f *fixture, _ string) string {
		c, r, p := f.fresh()
		return fmt.Sprintf("/comparisons/%d/runs/%d/problems/%d/samples/0/verdict", c, r, p)
	}, form(url.Values{"status": {"incorrect"}}), 303},

	{"delete", manage, "POST", func(f *fixture, _ string) string {
		c, _, _ := f.fresh()
		return fmt.Sprintf("/comparisons/%d/delete", c)
	}, form(nil), 303},
	{"share links", manage, "GET", cpath("/comparisons/%d/shares"), nil, 200},
	{"create share", manage, "POST", cpath("/comparisons/%d/shares"), form(url.Values{"chart": {""}}), 200},
	{"revoke share", manage, "POST", func(f *fixture, _ string) string { return fmt.Sprintf("/shares/%d/revoke", f.freshShare()) }, form(nil), 303},
	{"API create share", manage, "POST", cpath("/api/v1/comparisons/%d/shares"), func(*fixture) (string, []byte) { return "application/json", []byte(`{}`) }, 201},
	{"API revoke share", manage, "DELETE", func(f *fixture, _ string) string { return fmt.Sprintf("/api/v1/shares/%d", f.freshShare()) }, nil, 204},
	{"add member", manage, "POST", func(f *fixture, _ string) string { return fmt.Sprintf("/projects/%d/members", f.project) },
		func(f *fixture) (string, []byte) {
			return form(url.Values{"email": {f.spare.Email}, "role": {"viewer"}})(f)
		}, 303},
	{"remove member", manage, "POST", func(f *fixture, _ string) string {
		return fmt.Sprintf("/projects/%d/members/%d/remove", f.project, f.spare.ID)
	}, form(nil), 303},

	{"users", admin, "GET", static("/admin/users"), nil, 200},
	{"invite", admin, "POST", static("/admin/invites"), func(f *fixture) (string, []byte) {
		return form(url.Values{"email": {fmt.Sprintf("invitee%d@reach.test", f.n.Add(1))}})(f)
	}, 200},
	{"jobs UI", admin, "GET", static("/riverui/"), nil, 200},

	{"allow project creation", admin, "POST", func(f *fixture, _ string) string {
		return fmt.Sprintf("/admin/users/%d/project-creator", f.spare.ID)
	}, form(url.Values{"allowed": {"on"}}), 303},
	{"create project", admin, "POST", static("/projects"), func(f *fixture) (string, []byte) {
		return form(url.Values{"name": {fmt.Sprintf("project %d", f.n.Add(1))}})(f)
	}, 303},
}

// shareFor is the token a role puts in /s/ paths: the holder's real one,
// anyone else a well-formed guess.
func shareFor(f *fixture, role string) string {
	if role == "holder" {
		return f.token
	}
	return auth.PrefixShare + strings.Repeat("A", 43)
}

// allowed says whether role may use a route needing lvl.
func allowed(role string, lvl level) bool {
	switch lvl {
	case public:
		return true
	case shared:
		return role == "holder"
	case signedIn:
		return rank[role] >= signedIn
	case creator:
		return rank[role] >= edit
	case admin:
		return role == "admin"
	}
	return rank[role] >= lvl
}

// denial is the answer a refused role gets: anonymous callers are sent to
// sign in (pages) or get 401 (API, forms); a comparison or project outside
// the caller's projects does not exist (404); a role too low gets 403.
func denial(role string, r route, path string) int {
	switch {
	case r.need == shared:
		return 404
	case role == "anonymous" || role == "holder":
		if !strings.HasPrefix(path, "/api/") && r.method == "GET" {
			return 303
		}
		return 401
	case role == "outsider" && r.need >= read && r.need <= manage:
		return 404
	}
	return 403
}

func newFixture(t *testing.T) *fixture {
	srv := newServer(t)
	ctx := context.Background()
	f := &fixture{t: t, srv: srv, acc: map[string]account{}}
	// The admin comes first: the first admin owns the default project.
	f.acc["admin"] = newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	for _, r := range []string{"viewer", "editor", "owner"} {
		f.acc[r] = newAccount(t, srv.st, srv.url, r+"@reach.test", false, r)
	}
	f.acc["outsider"] = newAccount(t, srv.st, srv.url, "outsider@reach.test", false, "")
	f.spare = createUser(t, srv.st, "spare@reach.test", false, "")
	var err error
	if f.project, err = srv.st.DefaultProjectID(ctx); err != nil {
		t.Fatal(err)
	}
	f.cid, f.rid, f.pid = readyComparison(t, srv.st, "fixture", 0, "What is 1+1?")
	c, err := srv.st.GetComparison(ctx, f.cid)
	if err != nil {
		t.Fatal(err)
	}
	f.dataset = *c.DatasetID
	_, f.token = shareToken(t, srv.st, store.ShareLink{ComparisonID: f.cid})
	return f
}

// do sends one request as role: accounts use their session cookie on pages
// and their API token under /api/; the share holder sends its share token
// as a Bearer token to the API (which must not accept it).
func (f *fixture) do(role, method, path, ctype string, body []byte) *http.Response {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.url+path, bytes.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	api := strings.HasPrefix(path, "/api/")
	if a, ok := f.acc[role]; ok {
		if api {
			req.Header.Set("Authorization", "Bearer "+a.Token)
		} else {
			req.AddCookie(a.Cookie)
		}
	}
	if role == "holder" && api {
		req.Header.Set("Authorization", "Bearer "+f.token)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s as %s: %v", method, path, role, err)
	}
	return resp
}

// Every route × {anonymous, share-link holder, outsider, viewer, editor,
// owner, admin}: allowed requests get the route's status, refused ones the
// right refusal.
func TestAccessMatrix(t *testing.T) {
	f := newFixture(t)
	for _, r := range routes {
		for _, role := range roles {
			path := r.path(f, role)
			var ctype string
			var body []byte
			if r.body != nil {
				ctype, body = r.body(f)
			}
			resp := f.do(role, r.method, path, ctype, body)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want, verdict := r.ok, "allowed"
			if !allowed(role, r.need) {
				want, verdict = denial(role, r, path), "denied"
			}
			if resp.StatusCode != want {
				t.Errorf("%s (%s %s) as %s: HTTP %d, want %d (%s)\n%.300s", r.name, r.method, path, role, resp.StatusCode, want, verdict, b)
				continue
			}
			if want == 303 && verdict == "denied" && !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=") {
				t.Errorf("%s as %s: redirected to %q, want the sign-in page", r.name, role, resp.Header.Get("Location"))
			}
			if verdict == "denied" && bytes.Contains(b, []byte("What is 1+1?")) {
				t.Errorf("%s as %s: the refusal shows the problem statement", r.name, role)
			}
		}
	}
}

func get(t *testing.T, url string, hdr ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A share link reads its own comparison and nothing else: problem texts
// only when the sharer allowed them, never another comparison's problems,
// chart data only of the charts it covers; revoked and expired links are
// 404. The API makes and revokes links with a Bearer token.
func TestShareLinks(t *testing.T) {
	f := newFixture(t)
	st := f.srv.st
	ctx := context.Background()
	otherCID, _, otherPID := readyComparison(t, st, "secret comparison", 0, "The secret other statement")
	past, future := time.Now().Add(-time.Minute), time.Now().Add(time.Hour)
	_, texts := shareToken(t, st, store.ShareLink{ComparisonID: f.cid, ShowTexts: true, ExpiresAt: &future})
	_, cross := shareToken(t, st, store.ShareLink{ComparisonID: f.cid, Chart: "crossover"})
	_, expired := shareToken(t, st, store.ShareLink{ComparisonID: f.cid, ExpiresAt: &past})

	code, page := get(t, f.srv.url+"/s/"+f.token)
	if code != 200 {
		t.Fatalf("shared page: HTTP %d", code)
	}
	for _, want := range []string{`property="og:title" content="fixture — pass@k crossover"`, `property="og:description" content="base vs rl on fixture`,
		`id="crossover-chart"`, `id="headline"`, "/embed", "noindex"} {
		if !strings.Contains(page, want) {
			t.Errorf("shared page lacks %q", want)
		}
	}
	for _, leak := range []string{"What is 1+1?", "secret comparison", "/comparisons/", `href="/"`, "Sign out", "/problems/"} {
		if strings.Contains(page, leak) {
			t.Errorf("shared page without texts shows %q", leak)
		}
	}
	if code, _ := get(t, fmt.Sprintf("%s/s/%s/problems/%d", f.srv.url, f.token, f.pid)); code != 404 {
		t.Errorf("problem of a link without texts: HTTP %d, want 404", code)
	}
	code, prob := get(t, fmt.Sprintf("%s/s/%s/problems/%d", f.srv.url, texts, f.pid))
	if code != 200 || !strings.Contains(prob, "What is 1+1?") || !strings.Contains(prob, "The answer is 2.") {
		t.Errorf("problem of a link with texts: HTTP %d, statement/completion shown: %v", code, strings.Contains(prob, "What is 1+1?"))
	}
	if strings.Contains(prob, "/verdict") || strings.Contains(prob, "review-form") {
		t.Error("shared problem page offers review or override controls")
	}
	if _, page := get(t, f.srv.url+"/s/"+texts); !strings.Contains(page, fmt.Sprintf("/problems/%d", f.pid)) {
		t.Error("a link with texts does not list the base-only problem")
	}
	if code, body := get(t, fmt.Sprintf("%s/s/%s/problems/%d", f.srv.url, texts, otherPID)); code != 404 || strings.Contains(body, "secret") {
		t.Errorf("another comparison's problem through a share link: HTTP %d", code)
	}
	if code, _ := get(t, fmt.Sprintf("%s/s/%s/data/histogram.csv", f.srv.url, cross)); code != 404 {
		t.Errorf("histogram data through a crossover-only link: HTTP %d, want 404", code)
	}
	if code, csv := get(t, fmt.Sprintf("%s/s/%s/data/crossover.csv", f.srv.url, cross)); code != 200 || !strings.HasPrefix(csv, "k,base,rl\n1,0.625,0.5\n") {
		t.Errorf("crossover data: HTTP %d %q", code, csv)
	}
	if code, _ := get(t, f.srv.url+"/s/"+expired); code != 404 {
		t.Errorf("expired link: HTTP %d, want 404", code)
	}
	// A share token is no credential anywhere else.
	for _, p := range []string{fmt.Sprintf("/comparisons/%d", f.cid), fmt.Sprintf("/comparisons/%d", otherCID)} {
		if code, _ := get(t, f.srv.url+p+"?token="+f.token); code != 303 {
			t.Errorf("GET %s with a share token: HTTP %d, want 303 to sign-in", p, code)
		}
	}
	if code, _ := get(t, fmt.Sprintf("%s/api/v1/comparisons/%d/report", f.srv.url, f.cid), "Authorization", "Bearer "+f.token); code != 401 {
		t.Errorf("report with a share token as Bearer: HTTP %d, want 401", code)
	}
	// Views are counted.
	l, err := st.OpenShare(ctx, auth.HashToken(f.token), false)
	if err != nil || l.Views != 1 {
		t.Errorf("views of the fixture link: %d (%v), want 1", l.Views, err)
	}

	// The API: create (owner's token), open, revoke, gone.
	owner := f.acc["owner"]
	req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/comparisons/%d/shares", f.srv.url, f.cid), strings.NewReader(`{"chart": "crossover", "expires_in": "24h"}`))
	req.Header.Set("Authorization", "Bearer "+owner.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		ID  int64  `json:"id"`
		URL string `json:"url"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 201 || out.ID == 0 || !strings.HasPrefix(out.URL, f.srv.url+"/s/"+auth.PrefixShare) {
		t.Fatalf("POST shares: HTTP %d %+v (%v)", resp.StatusCode, out, err)
	}
	if len(strings.TrimPrefix(out.URL, f.srv.url+"/s/"+auth.PrefixShare)) < 22 { // 128 bits in base64url
		t.Errorf("share token in %s is shorter than 128 bits", out.URL)
	}
	if code, _ := get(t, out.URL); code != 200 {
		t.Errorf("new link: HTTP %d", code)
	}
	for _, who := range []string{"editor", "viewer"} {
		req, _ = http.NewRequest("DELETE", fmt.Sprintf("%s/api/v1/shares/%d", f.srv.url, out.ID), nil)
		req.Header.Set("Authorization", "Bearer "+f.acc[who].Token)
		if resp, err := noRedirect.Do(req); err != nil || resp.StatusCode != 403 {
			t.Errorf("DELETE share as %s: %v %v, want 403", who, resp.StatusCode, err)
		}
	}
	req, _ = http.NewRequest("DELETE", fmt.Sprintf("%s/api/v1/shares/%d", f.srv.url, out.ID), nil)
	req.Header.Set("Authorization", "Bearer "+owner.Token)
	if resp, err := noRedirect.Do(req); err != nil || resp.StatusCode != 204 {
		t.Fatalf("DELETE share: %v %v", resp.StatusCode, err)
	}
	if code, body := get(t, out.URL); code != 404 || strings.Contains(body, "fixture") {
		t.Errorf("revoked link: HTTP %d, want 404 that names nothing", code)
	}
	es, _ := st.Audit(ctx, f.cid, 0)
	if len(es) < 2 || es[0].Action != "share-revoke" || es[1].Action != "share" {
		t.Errorf("audit log does not record the share and its revocation: %+v", es)
	}
}

// State-changing requests from other sites are refused; the API with a
// Bearer token is exempt (no ambient credential to abuse).
func TestCSRF(t *testing.T) {
	f := newFixture(t)
	review := fmt.Sprintf("%s/comparisons/%d/problems/%d/review", f.srv.url, f.cid, f.pid)
	for _, c := range []struct {
		name   string
		hdr    []string
		bearer bool
		url    string
		want   int
	}{
		{"same origin", []string{"Sec-Fetch-Site", "same-origin"}, false, review, 303},
		{"cross-site fetch", []string{"Sec-Fetch-Site", "cross-site"}, false, review, 403},
		{"foreign Origin", []string{"Origin", "https://evil.example"}, false, review, 403},
		{"logout from another site", []string{"Sec-Fetch-Site", "cross-site"}, false, f.srv.url + "/logout", 403},
		{"API with a token", []string{"Sec-Fetch-Site", "cross-site"}, true, fmt.Sprintf("%s/api/v1/comparisons/%d/shares", f.srv.url, f.cid), 201},
	} {
		body := "verdict=lucky"
		if c.bearer {
			body = ""
		}
		req, _ := http.NewRequest("POST", c.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i < len(c.hdr); i += 2 {
			req.Header.Set(c.hdr[i], c.hdr[i+1])
		}
		if c.bearer {
			req.Header.Set("Authorization", "Bearer "+f.acc["owner"].Token)
		} else {
			req.AddCookie(f.acc["editor"].Cookie)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: HTTP %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	rs, _ := f.srv.st.Reviews(context.Background(), f.cid)
	if rs[f.pid].Verdict != "lucky" {
		t.Errorf("verdict %q after one same-origin and two cross-site reviews, want lucky", rs[f.pid].Verdict)
	}
}

// Sign-in is limited per account (5 failures in 15 minutes lock it, even
// for the right password) and per address (20 failures).
func TestLoginRateLimit(t *testing.T) {
	srv := newServer(t)
	createUser(t, srv.st, "target@reach.test", false, "")
	createUser(t, srv.st, "other@reach.test", false, "")
	try := func(email, pw string) int {
		resp, err := noRedirect.PostForm(srv.url+"/login", url.Values{"email": {email}, "password": {pw}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 5 {
		if code := try("target@reach.test", "wrong password!"); code != 401 {
			t.Fatalf("failure %d: HTTP %d, want 401", i+1, code)
		}
	}
	if code := try("target@reach.test", testPassword); code != 429 {
		t.Errorf("right password after 5 failures: HTTP %d, want 429", code)
	}
	if code := try("other@reach.test", testPassword); code != 303 {
		t.Errorf("another account from the same address: HTTP %d, want 303", code)
	}
	// Spraying many accounts from one address: 20 failures in all (5 so far).
	for i := range 15 {
		if code := try(fmt.Sprintf("nobody%d@reach.test", i), "x"); code != 401 {
			t.Fatalf("spray %d: HTTP %d", i, code)
		}
	}
	if code := try("other@reach.test", testPassword); code != 429 {
		t.Errorf("after 20 failures from one address: HTTP %d, want 429", code)
	}
}

// A fresh instance: every page needs a sign-in, the sign-in page says how
// to create the first admin, and the first-run page works from this
// machine only, once.
func TestFirstRun(t *testing.T) {
	srv := newServer(t)
	if code, _ := get(t, srv.url+"/"); code != 303 {
		t.Errorf("home without accounts: HTTP %d, want 303 to sign-in", code)
	}
	if _, page := get(t, srv.url+"/login"); !strings.Contains(page, "reach user create --admin") || !strings.Contains(page, `href="/setup"`) {
		t.Error("sign-in page of a fresh instance does not say how to create the first admin")
	}
	if code, _ := get(t, srv.url+"/setup", "X-Forwarded-For", "203.0.113.9"); code != 404 {
		t.Errorf("first-run page through a proxy: HTTP %d, want 404", code)
	}
	if code, _ := get(t, srv.url+"/setup"); code != 200 {
		t.Fatalf("first-run page from localhost: HTTP %d", code)
	}
	v := url.Values{"email": {"first@reach.test"}, "password": {testPassword}, "confirm": {testPassword}}
	resp := postSetup(t, srv.url, "", srv.url, v)
	if resp.StatusCode != 303 || len(resp.Cookies()) == 0 {
		t.Fatalf("first-run: HTTP %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	c := resp.Cookies()[0]
	if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Errorf("session cookie %+v: want HttpOnly, SameSite=Lax", c)
	}
	u, err := srv.st.UserByEmail(context.Background(), "first@reach.test")
	if err != nil || !u.IsAdmin {
		t.Errorf("first user %+v (%v): want an admin", u, err)
	}
	if code, _ := get(t, srv.url+"/setup"); code != 404 {
		t.Errorf("first-run page once an account exists: HTTP %d, want 404", code)
	}
	postSetup(t, srv.url, "", srv.url, url.Values{"email": {"second@reach.test"}, "password": {testPassword}, "confirm": {testPassword}})
	if _, err := srv.st.UserByEmail(context.Background(), "second@reach.test"); err == nil {
		t.Error("a second first-run admin was created")
	}
}

// A one-time password must be replaced before anything else; a password
// change ends the other sessions; logout ends this one; API tokens made in
// the browser work until revoked.
func TestPasswordsSessionsAndTokens(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	hash, _ := auth.HashPassword("one-time-pass-123", auth.DefaultParams)
	if _, err := srv.st.CreateUser(ctx, "new@reach.test", hash, false, true); err != nil {
		t.Fatal(err)
	}
	c1 := login(t, srv.url, "new@reach.test", "one-time-pass-123")
	c2 := login(t, srv.url, "new@reach.test", "one-time-pass-123")
	send := func(method, path string, c *http.Cookie, v url.Values) *http.Response {
		req, _ := http.NewRequest(method, srv.url+path, strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if c != nil {
			req.AddCookie(c)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := send("GET", "/", c1, nil)
	resp.Body.Close()
	if resp.StatusCode != 303 || resp.Header.Get("Location") != "/account/password" {
		t.Errorf("home with a one-time password: HTTP %d to %q, want the password page", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp = send("POST", "/account/password", c1, url.Values{"current": {"one-time-pass-123"}, "password": {testPassword}, "confirm": {testPassword}})
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("password change: HTTP %d", resp.StatusCode)
	}
	if resp := send("GET", "/", c1, nil); resp.StatusCode != 200 {
		t.Errorf("home after the change: HTTP %d", resp.StatusCode)
	}
	if resp := send("GET", "/", c2, nil); resp.StatusCode != 303 || !strings.HasPrefix(resp.Header.Get("Location"), "/login") {
		t.Errorf("the other session after a password change: HTTP %d, want sign-in", resp.StatusCode)
	}

	resp = send("POST", "/account/tokens", c1, url.Values{"name": {"script"}})
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	i := bytes.Index(page, []byte(auth.PrefixAPI))
	if resp.StatusCode != 200 || i < 0 || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("create token: HTTP %d, token shown %v", resp.StatusCode, i >= 0)
	}
	token := string(page[i : i+len(auth.PrefixAPI)+43])
	if code, _ := get(t, srv.url+"/api/v1/comparisons", "Authorization", "Bearer "+token); code != 200 {
		t.Errorf("API with the new token: HTTP %d", code)
	}
	if code, _ := get(t, srv.url+"/comparisons/new", "Authorization", "Bearer "+token); code != 303 {
		t.Errorf("a page with a Bearer token: HTTP %d, want 303 (tokens are for /api/v1 only)", code)
	}
	u, err := srv.st.UserByEmail(ctx, "new@reach.test")
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := srv.st.ListAPITokens(ctx, u.ID)
	if len(ts) != 1 {
		t.Fatalf("%d tokens", len(ts))
	}
	resp = send("POST", fmt.Sprintf("/account/tokens/%d/revoke", ts[0].ID), c1, nil)
	resp.Body.Close()
	if code, _ := get(t, srv.url+"/api/v1/comparisons", "Authorization", "Bearer "+token); code != 401 {
		t.Errorf("API with a revoked token: HTTP %d, want 401", code)
	}
	resp = send("POST", "/logout", c1, nil)
	resp.Body.Close()
	if resp := send("GET", "/", c1, nil); resp.StatusCode != 303 {
		t.Errorf("home after logout: HTTP %d, want 303", resp.StatusCode)
	}
}
