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
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/sampling"
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

// storedComparison is what storeReady makes: a ready comparison's problems
// and runs.
type storedComparison struct {
	ID   int64
	Runs []store.Run
	Ps   []store.Problem
}

// storeReady stores a ready comparison named name in a project (0: the
// default one) without any job: the problems, one run per model (the first
// the base model), n samples a problem and model, graded correct where
// correct says so.
func storeReady(t *testing.T, st *store.Store, name string, projectID int64, problems []store.Problem, runs []store.NewRun, n int,
	correct func(run int, p store.Problem, i int) bool) storedComparison {
	t.Helper()
	ctx := context.Background()
	did, err := st.CreateDataset(ctx, name, name+".jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsertProblems(ctx, did, problems); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		t.Fatal(err)
	}
	cid, err := st.CreateComparison(ctx, store.NewComparison{Name: name, DatasetID: did, Status: store.StatusReady, ProjectID: projectID, Runs: runs})
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
	for ri, run := range c.Runs {
		for _, p := range ps {
			for i := range n {
				status := store.SampleIncorrect
				if correct(ri, p, i) {
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
	return storedComparison{ID: cid, Runs: c.Runs, Ps: ps}
}

// twoProblems are readyComparison's problems, p0's key and statement given.
func twoProblems(key, statement string) []store.Problem {
	return []store.Problem{{Idx: 0, Key: key, Statement: statement, Reference: "2"}, {Idx: 1, Key: "p1", Statement: "What is 1+2?", Reference: "3"}}
}

// baseOnlyOnP0: the base model solves 1 of 4 on p0, the other model 0;
// both solve p1.
func baseOnlyOnP0(run int, p store.Problem, i int) bool { return p.Key == "p1" || (run == 0 && i == 0) }

// readyComparison stores a ready two-model comparison in a project (0: the
// default one) without any job: problems p0 (base solves 1 of 4, the other
// model 0: base-only) and p1 (solved by both). It returns the comparison,
// its base run and problem p0.
func readyComparison(t *testing.T, st *store.Store, name string, projectID int64, statement string) (cid, rid, pid int64) {
	t.Helper()
	c := storeReady(t, st, name, projectID, twoProblems("p0", statement),
		[]store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}, 4, baseOnlyOnP0)
	return c.ID, c.Runs[0].ID, c.Ps[0].ID
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

// The roles of the access matrix. holder has only share links (of both
// projects' comparisons); viewer, editor and owner are members of project
// A (the default project) only; outsider is in no role in A but owns
// project B; admin is an instance admin.
var roles = []string{"anonymous", "holder", "outsider", "viewer", "editor", "owner", "admin"}

// The two projects of the fixture.
const (
	worldA = iota
	worldB
)

// standing is how far role reaches in a project.
func standing(role string, world int) level {
	switch {
	case role == "admin":
		return admin
	case world == worldA:
		return map[string]level{"outsider": signedIn, "viewer": read, "editor": edit, "owner": manage}[role]
	case role == "outsider":
		return manage
	}
	return signedIn
}

// creatorWorld is the project a new comparison goes to when the request
// names none: the default project for its editors, else the first project
// the user edits (B for the outsider).
func creatorWorld(role string) int {
	if role == "outsider" {
		return worldB
	}
	return worldA
}

// secretA and secretB are the statements of problem p0 in the two
// projects: a response to someone who may not read a project never holds
// its statement.
const (
	secretA = "What is 1+1?"
	secretB = "Secret statement of project B"
)

// kind is what an id in a route stands for, and so how it is checked.
type kind int

const (
	fixed     kind = iota // not an access-carrying id ({idx}, {spare})
	primary               // decides the project: {cid}, {proj}, {sid}
	dependent             // must belong to the primary: {rid}, {pid}, {uid}
	readable              // a dataset to build on: the user must read its project
	target                // the project a new comparison goes to: the user must edit it
	self                  // the caller's own (API token {tid})
	token                 // a share link's token: the holder's, a guess for others
)

var slotKinds = map[string]kind{"cid": primary, "proj": primary, "sid": primary, "ksid": primary, "ktoken": token, "rid": dependent, "pid": dependent,
	"uid": dependent, "dataset": readable, "target": target, "tid": self, "token": token, "coll": primary, "cmp": dependent}

// world is one project's side of the fixture.
type world struct {
	project      int64
	cid, rid     int64 // a ready comparison every non-destructive route uses
	pid          int64 // its base-only problem p0
	dataset      int64
	token, texts string // share links of cid: charts only, and with texts
	ktoken       string // share link of a collection holding cid
}

type fixture struct {
	t     *testing.T
	srv   server
	acc   map[string]account
	w     [2]world
	spare store.User
	n     atomic.Int64
	// The default project's side, under the names the other tests use.
	project, cid, rid, pid, dataset int64
	token                           string
}

// comparisonIn is a ready comparison of a world: the fixture's, or a new
// one for routes that change or delete it.
func (f *fixture) comparisonIn(w int, fresh bool) (cid, rid, pid int64) {
	if !fresh {
		return f.w[w].cid, f.w[w].rid, f.w[w].pid
	}
	statement := map[int]string{worldA: secretA, worldB: secretB}[w]
	return readyComparison(f.t, f.srv.st, fmt.Sprintf("fresh-%d", f.n.Add(1)), f.w[w].project, statement)
}

func (f *fixture) freshShare(w int) int64 {
	id, _ := shareToken(f.t, f.srv.st, store.ShareLink{ComparisonID: f.w[w].cid})
	return id
}

// freshCollectionShare is a new share link of a new collection of a world.
func (f *fixture) freshCollectionShare(w int) int64 {
	id, _ := shareToken(f.t, f.srv.st, store.ShareLink{CollectionID: f.freshCollection(w)})
	return id
}

// freshDataset is a new dataset of a world's project (using a dataset in
// another project shares it there, so each request gets its own).
func (f *fixture) freshDataset(w int) int64 {
	ctx := context.Background()
	did, err := f.srv.st.CreateDataset(ctx, fmt.Sprintf("dataset-%d", f.n.Add(1)), "d.jsonl")
	if err == nil {
		err = f.srv.st.InsertProblems(ctx, did, []store.Problem{{Idx: 0, Key: "p0", Statement: "What is 2+2?", Reference: "4"},
			{Idx: 1, Key: "p1", Statement: "What is 1+2?", Reference: "3"}})
	}
	if err == nil {
		err = f.srv.st.FinishDataset(ctx, did)
	}
	if err == nil {
		err = f.srv.st.ShareDataset(ctx, did, f.w[w].project)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return did
}

// freshCollection is a new collection of a world's project holding its
// fixture comparison.
func (f *fixture) freshCollection(w int) int64 {
	ctx := context.Background()
	id, err := f.srv.st.CreateCollection(ctx, f.w[w].project, fmt.Sprintf("collection-%d", f.n.Add(1)), 0)
	if err == nil {
		err = f.srv.st.AddToCollection(ctx, id, f.w[w].cid)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

// freshInvite is a new invitation's token.
func (f *fixture) freshInvite() string {
	token, hash, err := auth.NewToken(auth.PrefixInvite)
	if err == nil {
		err = f.srv.st.CreateInvite(context.Background(), hash, store.Invite{Email: fmt.Sprintf("invited%d@reach.test", f.n.Add(1)),
			CreatedBy: f.acc["admin"].ID, ExpiresAt: time.Now().Add(time.Hour), Role: "viewer"})
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return token
}

// freshInviteID is a new invitation's id.
func (f *fixture) freshInviteID() int64 {
	f.freshInvite()
	is, err := f.srv.st.OpenInvites(context.Background())
	if err != nil || len(is) == 0 {
		f.t.Fatalf("open invites: %v (%d)", err, len(is))
	}
	return is[0].ID
}

// freshMember adds a new user to a world's project as a viewer.
func (f *fixture) freshMember(w int) int64 {
	u := createUser(f.t, f.srv.st, fmt.Sprintf("member%d@reach.test", f.n.Add(1)), false, "")
	if err := f.srv.st.SetMember(context.Background(), f.w[w].project, u.ID, "viewer"); err != nil {
		f.t.Fatal(err)
	}
	return u.ID
}

// freshToken is a new API token of the caller (worldA) or of somebody else
// (worldB), by id.
func (f *fixture) freshToken(role string, w int) int64 {
	uid := f.spare.ID
	if a, ok := f.acc[role]; ok && w == worldA {
		uid = a.ID
	}
	_, hash, err := auth.NewToken(auth.PrefixAPI)
	if err != nil {
		f.t.Fatal(err)
	}
	id, err := f.srv.st.CreateAPIToken(context.Background(), uid, "matrix", "reach_xxxx", hash)
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

// route is one route of the app. path holds {slot}s; body, if any, gets a
// resolver of slots (those it uses are in bodySlots).
type route struct {
	name      string
	need      level
	method    string
	path      string
	body      func(f *fixture, v func(string) string) (contentType string, body []byte)
	bodySlots []string
	ok        int  // status when allowed
	fresh     bool // changes or deletes its comparison: a new one per request
}

var slotRe = regexp.MustCompile(`\{(\w+)\}`)

// slots lists the ids a route carries, path first.
func (r route) slots() []string {
	var out []string
	for _, m := range slotRe.FindAllStringSubmatch(r.path, -1) {
		out = append(out, m[1])
	}
	return append(out, r.bodySlots...)
}

func form(v url.Values) func(*fixture, func(string) string) (string, []byte) {
	return func(*fixture, func(string) string) (string, []byte) {
		return "application/x-www-form-urlencoded", []byte(v.Encode())
	}
}

// uploadFor is the multipart "new comparison" submission on dataset (an
// id), into project target ("" for the default choice), of counts CSVs.
func uploadFor(f *fixture, dataset, target string) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	field := func(k, v string) { _ = mw.WriteField(k, v) }
	file := func(name, body string) {
		w, _ := mw.CreateFormFile("model_file", name)
		_, _ = io.WriteString(w, body)
	}
	field("name", fmt.Sprintf("upload-%d", f.n.Add(1)))
	field("dataset_id", dataset)
	if target != "" {
		field("project_id", target)
	}
	field("model_role", "base")
	field("model_name", "b")
	file("b.csv", "problem_id,n,correct\np0,4,1\np1,4,4\n")
	field("model_role", "rl")
	field("model_name", "r")
	file("r.csv", "problem_id,n,correct\np0,4,0\np1,4,4\n")
	_ = mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

// uploadBody is uploadFor on project A's dataset, into the default choice.
func uploadBody(f *fixture) (string, []byte) { return uploadFor(f, fmt.Sprint(f.dataset), "") }

// samplingFor is the "sample from endpoints" form on dataset, into target
// ("" for the default choice). Nothing is sent to the endpoints (a
// loopback port nobody listens on) before Start sampling.
func samplingFor(f *fixture, dataset, target string) (string, []byte) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	field := func(k, v string) { _ = mw.WriteField(k, v) }
	field("name", fmt.Sprintf("sampled-%d", f.n.Add(1)))
	field("dataset_id", dataset)
	if target != "" {
		field("project_id", target)
	}
	for i, role := range []string{"base", "rl"} {
		field("model_role", role)
		field("model_name", role)
		field("model_url", "http://127.0.0.1:9/v1")
		field("model_model", role)
		if i > 0 {
			field("model_step", "")
		}
	}
	_ = mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func uploadSlots(withTarget bool) func(*fixture, func(string) string) (string, []byte) {
	return func(f *fixture, v func(string) string) (string, []byte) {
		t := ""
		if withTarget {
			t = v("target")
		}
		return uploadFor(f, v("dataset"), t)
	}
}

func sampleSlots(withTarget bool) func(*fixture, func(string) string) (string, []byte) {
	return func(f *fixture, v func(string) string) (string, []byte) {
		t := ""
		if withTarget {
			t = v("target")
		}
		return samplingFor(f, v("dataset"), t)
	}
}

var (
	dataset       = []string{"dataset"}
	datasetTarget = []string{"dataset", "target"}
)

// routes is every route of the app with every id it carries.
var routes = []route{
	{name: "health", need: public, method: "GET", path: "/healthz", ok: 200},
	{name: "API description (OpenAPI)", need: public, method: "GET", path: "/api/v1/openapi.json", ok: 200},
	{name: "static file", need: public, method: "GET", path: "/static/app.css", ok: 200},
	{name: "icon", need: public, method: "GET", path: "/favicon.ico", ok: 301},
	{name: "first-run page (accounts exist)", need: public, method: "GET", path: "/setup", ok: 404},
	{name: "first-run form (accounts exist)", need: public, method: "POST", path: "/setup",
		body: form(url.Values{"email": {"late@reach.test"}, "password": {testPassword}, "confirm": {testPassword}}), ok: 404},
	// The matrix's server has no single sign-on: both answer 404 (TestOIDC*
	// test them with a provider).
	{name: "single sign-on start (not configured)", need: public, method: "GET", path: "/login/oidc", ok: 404},
	{name: "single sign-on callback (not configured)", need: public, method: "GET", path: "/login/oidc/callback", ok: 404},
	{name: "invitation", need: public, method: "GET", path: "/invite/{invite}", ok: 200},
	{name: "accept invitation", need: public, method: "POST", path: "/invite/{invite}",
		body: form(url.Values{"password": {testPassword}, "confirm": {testPassword}}), ok: 303},

	{name: "shared page", need: shared, method: "GET", path: "/s/{token}", ok: 200},
	{name: "shared embed", need: shared, method: "GET", path: "/s/{token}/embed", ok: 200},
	{name: "shared chart data", need: shared, method: "GET", path: "/s/{token}/data/crossover.csv", ok: 200},
	{name: "shared problem", need: shared, method: "GET", path: "/s/{token}/problems/{pid}", ok: 200},
	{name: "a model's samples on a shared problem", need: shared, method: "GET", path: "/s/{token}/problems/{pid}/models/1/samples", ok: 200},
	{name: "shared collection page", need: shared, method: "GET", path: "/s/{ktoken}", ok: 200},
	{name: "shared sample text", need: shared, method: "GET", path: "/s/{token}/runs/{rid}/problems/{pid}/samples/0/text", ok: 200},

	{name: "home", need: signedIn, method: "GET", path: "/", ok: 200},
	{name: "account", need: signedIn, method: "GET", path: "/account/password", ok: 200},
	{name: "change password (wrong current one)", need: signedIn, method: "POST", path: "/account/password",
		body: form(url.Values{"current": {"not it"}, "password": {"new password 123"}, "confirm": {"new password 123"}}), ok: 400},
	{name: "tokens", need: signedIn, method: "GET", path: "/account/tokens", ok: 200},
	{name: "create token", need: signedIn, method: "POST", path: "/account/tokens", body: form(url.Values{"name": {"ci"}}), ok: 200},
	{name: "revoke token", need: signedIn, method: "POST", path: "/account/tokens/{tid}/revoke", body: form(nil), ok: 303},
	{name: "projects", need: signedIn, method: "GET", path: "/projects", ok: 200},
	{name: "API list", need: signedIn, method: "GET", path: "/api/v1/comparisons", ok: 200},

	{name: "new comparison form", need: creator, method: "GET", path: "/comparisons/new", ok: 200},
	{name: "sampling form", need: creator, method: "GET", path: "/comparisons/sample", ok: 200},
	{name: "upload", need: creator, method: "POST", path: "/comparisons", body: uploadSlots(false), bodySlots: dataset, ok: 303},
	{name: "upload into a project", need: creator, method: "POST", path: "/comparisons", body: uploadSlots(true), bodySlots: datasetTarget, ok: 303},
	{name: "API upload", need: creator, method: "POST", path: "/api/v1/comparisons", body: uploadSlots(false), bodySlots: dataset, ok: 202},
	{name: "API upload into a project", need: creator, method: "POST", path: "/api/v1/comparisons", body: uploadSlots(true), bodySlots: datasetTarget, ok: 202},
	{name: "sample from endpoints", need: creator, method: "POST", path: "/comparisons/sample", body: sampleSlots(false), bodySlots: dataset, ok: 303},
	{name: "sample into a project", need: creator, method: "POST", path: "/comparisons/sample", body: sampleSlots(true), bodySlots: datasetTarget, ok: 303},

	{name: "comparison", need: read, method: "GET", path: "/comparisons/{cid}", ok: 200},
	{name: "progress", need: read, method: "GET", path: "/comparisons/{cid}/progress", ok: 200},
	{name: "mapping", need: read, method: "GET", path: "/comparisons/{cid}/mapping", ok: 303},
	{name: "problem", need: read, method: "GET", path: "/comparisons/{cid}/problems/{pid}", ok: 200},
	{name: "a model's samples on a problem", need: read, method: "GET", path: "/comparisons/{cid}/problems/{pid}/models/1/samples", ok: 200},
	{name: "sample text", need: read, method: "GET", path: "/comparisons/{cid}/runs/{rid}/problems/{pid}/samples/0/text", ok: 200},
	{name: "token view", need: read, method: "GET", path: "/comparisons/{cid}/runs/{rid}/problems/{pid}/samples/0/tokens", ok: 200},
	{name: "token data", need: read, method: "GET", path: "/comparisons/{cid}/runs/{rid}/problems/{pid}/samples/0/tokens.json", ok: 200},
	{name: "token aggregates", need: read, method: "GET", path: "/comparisons/{cid}/tokens", ok: 200},
	{name: "audit", need: read, method: "GET", path: "/comparisons/{cid}/audit", ok: 200},
	{name: "debate section", need: read, method: "GET", path: "/comparisons/{cid}/debate", ok: 200},
	{name: "verifier audit", need: read, method: "GET", path: "/comparisons/{cid}/verifier-audit", ok: 200},
	{name: "API debate endpoints", need: read, method: "GET", path: "/api/v1/comparisons/{cid}/debate", ok: 200},
	{name: "API verifier audit", need: read, method: "GET", path: "/api/v1/comparisons/{cid}/verifier-audit", ok: 200},
	{name: "chart CSV", need: read, method: "GET", path: "/comparisons/{cid}/data/crossover.csv", ok: 200},
	{name: "chart JSON", need: read, method: "GET", path: "/comparisons/{cid}/data/venn-1.json", ok: 200},
	{name: "API chart CSV", need: read, method: "GET", path: "/api/v1/comparisons/{cid}/data/crossover.csv", ok: 200},
	{name: "chart file", need: read, method: "GET", path: "/comparisons/{cid}/charts/00000000000000000000000000000000.js", ok: 200},
	{name: "API comparison", need: read, method: "GET", path: "/api/v1/comparisons/{cid}", ok: 200},
	{name: "API report", need: read, method: "GET", path: "/api/v1/comparisons/{cid}/report", ok: 200},
	{name: "API reviews", need: read, method: "GET", path: "/api/v1/comparisons/{cid}/reviews", ok: 200},
	{name: "API mapping", need: read, method: "GET", path: "/api/v1/comparisons/{cid}/mapping", ok: 200},
	{name: "export samples", need: read, method: "GET", path: "/comparisons/{cid}/samples.jsonl", ok: 200},
	{name: "API export samples", need: read, method: "GET", path: "/api/v1/comparisons/{cid}/samples.parquet", ok: 200},
	{name: "export difficulty", need: read, method: "GET", path: "/comparisons/{cid}/difficulty.csv", ok: 200},
	{name: "API export difficulty", need: read, method: "GET", path: "/api/v1/comparisons/{cid}/difficulty.parquet", ok: 200},
	{name: "project", need: read, method: "GET", path: "/projects/{proj}", ok: 200},

	{name: "confirm mapping", need: edit, method: "POST", path: "/comparisons/{cid}/mapping", body: form(nil), ok: 303},
	{name: "API confirm mapping", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/mapping",
		body: func(*fixture, func(string) string) (string, []byte) { return "application/json", []byte(`{}`) }, ok: 409},
	{name: "API confirm mapping", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/mapping",
		body: func(*fixture, func(string) string) (string, []byte) {
			return "application/json", []byte(`{"accept_guess": true}`)
		}, ok: 409},
	{name: "re-verify", need: edit, method: "POST", path: "/comparisons/{cid}/reverify", body: form(nil), ok: 303, fresh: true},
	{name: "re-verify confirmation", need: edit, method: "GET", path: "/comparisons/{cid}/reverify", ok: 200},
	{name: "restore file verdicts", need: edit, method: "POST", path: "/comparisons/{cid}/restore-verdicts", body: form(nil), ok: 409, fresh: true},
	{name: "grading policy", need: edit, method: "POST", path: "/comparisons/{cid}/policy", body: form(url.Values{"policy": {"lenient"}}), ok: 303, fresh: true},
	{name: "API delete", need: manage, method: "DELETE", path: "/api/v1/comparisons/{cid}", ok: 204, fresh: true},
	{name: "API grading policy", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/policy", body: form(url.Values{"policy": {"lenient"}}), ok: 202, fresh: true},
	{name: "API re-verify", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/reverify", body: form(nil), ok: 202, fresh: true},
	{name: "API restore file verdicts", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/restore-verdicts", body: form(nil), ok: 409, fresh: true},
	{name: "API retry import", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/retry", body: form(nil), ok: 409},
	{name: "API cancel import", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/cancel-import", body: form(nil), ok: 409},
	{name: "retry import", need: edit, method: "POST", path: "/comparisons/{cid}/retry", body: form(nil), ok: 409},
	{name: "cancel import", need: edit, method: "POST", path: "/comparisons/{cid}/cancel-import", body: form(nil), ok: 409},
	{name: "test connection", need: edit, method: "POST", path: "/comparisons/{cid}/runs/{rid}/test", body: form(nil), ok: 200},
	{name: "start sampling", need: edit, method: "POST", path: "/comparisons/{cid}/start", body: form(nil), ok: 409},
	{name: "pause sampling", need: edit, method: "POST", path: "/comparisons/{cid}/pause", body: form(nil), ok: 409},
	{name: "resume sampling", need: edit, method: "POST", path: "/comparisons/{cid}/resume", body: form(nil), ok: 409},
	{name: "cancel sampling", need: edit, method: "POST", path: "/comparisons/{cid}/cancel", body: form(nil), ok: 409},
	{name: "extend sampling", need: edit, method: "POST", path: "/comparisons/{cid}/extend", body: form(nil), ok: 409},
	{name: "set up the judge", need: edit, method: "POST", path: "/comparisons/{cid}/debate/judge",
		body: form(url.Values{"base_url": {"http://127.0.0.1:9/v1"}, "model": {"judge"}, "max_per_problem": {"4"}}), ok: 303},
	{name: "test the scoring endpoint (none set up)", need: edit, method: "POST", path: "/comparisons/{cid}/debate/score/test", body: form(nil), ok: 200, fresh: true},
	{name: "start scoring (none set up)", need: edit, method: "POST", path: "/comparisons/{cid}/debate/score/start", body: form(nil), ok: 409, fresh: true},
	{name: "score a problem's tokens (none set up)", need: edit, method: "POST", path: "/comparisons/{cid}/problems/{pid}/tokens", body: form(nil), ok: 409, fresh: true},
	{name: "start token scoring (none set up)", need: edit, method: "POST", path: "/comparisons/{cid}/debate/tokens/start", body: form(nil), ok: 409, fresh: true},
	{name: "pause judging (none set up)", need: edit, method: "POST", path: "/comparisons/{cid}/debate/judge/pause", body: form(nil), ok: 409, fresh: true},
	{name: "API set up the judge", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/debate/judge",
		body: form(url.Values{"base_url": {"http://127.0.0.1:9/v1"}, "model": {"judge"}}), ok: 200},
	{name: "API test the scoring endpoint (none set up)", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/debate/score/test", body: form(nil), ok: 200, fresh: true},
	{name: "API start scoring (none set up)", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/debate/score/start", body: form(nil), ok: 409, fresh: true},
	{name: "API pause judging (none set up)", need: edit, method: "POST", path: "/api/v1/comparisons/{cid}/debate/judge/pause", body: form(nil), ok: 409, fresh: true},
	{name: "start the verifier audit (no judge set up)", need: edit, method: "POST", path: "/comparisons/{cid}/verifier-audit/start",
		body: form(url.Values{"m": {"5"}, "fresh": {"1"}}), ok: 409, fresh: true},
	{name: "pause the verifier audit (none started)", need: edit, method: "POST", path: "/comparisons/{cid}/verifier-audit/pause", body: form(nil), ok: 409, fresh: true},
	{name: "resolve a verifier audit item (not a disagreement)", need: edit, method: "POST",
		path: "/comparisons/{cid}/verifier-audit/runs/{rid}/problems/{pid}/samples/0", body: form(url.Values{"resolution": {"judge"}}), ok: 409, fresh: true},
	{name: "review", need: edit, method: "POST", path: "/comparisons/{cid}/problems/{pid}/review",
		body: form(url.Values{"verdict": {"genuine"}}), ok: 303},
	{name: "override verdict", need: edit, method: "POST", path: "/comparisons/{cid}/runs/{rid}/problems/{pid}/samples/0/verdict",
		body: form(url.Values{"status": {"incorrect"}}), ok: 303, fresh: true},

	{name: "notes editor", need: edit, method: "GET", path: "/comparisons/{cid}/notes", ok: 200},
	{name: "follow a server folder", need: edit, method: "GET", path: "/comparisons/{cid}/follow", ok: 200},
	// No folders are allowed in the fixture: an editor is refused in words.
	{name: "start following", need: edit, method: "POST", path: "/comparisons/{cid}/follow", body: form(url.Values{"model": {"ppo"}, "path": {"/tmp"}}), ok: 400},
	{name: "stop following", need: edit, method: "POST", path: "/comparisons/{cid}/follow/stop", body: form(nil), ok: 303},
	{name: "save notes", need: edit, method: "POST", path: "/comparisons/{cid}/notes", body: form(url.Values{"body": {"# Findings"}}), ok: 303},
	{name: "label reasoning", need: edit, method: "POST", path: "/comparisons/{cid}/runs/{rid}/problems/{pid}/samples/0/reasoning",
		body: form(url.Values{"label": {"valid"}, "note": {"checked"}}), ok: 303},

	{name: "delete confirmation", need: manage, method: "GET", path: "/comparisons/{cid}/delete", ok: 200},
	{name: "delete", need: manage, method: "POST", path: "/comparisons/{cid}/delete", body: form(nil), ok: 303, fresh: true},
	{name: "share links", need: manage, method: "GET", path: "/comparisons/{cid}/shares", ok: 200},
	{name: "offline bundle page", need: manage, method: "GET", path: "/comparisons/{cid}/bundle", ok: 200},
	{name: "offline bundle zip", need: manage, method: "GET", path: "/comparisons/{cid}/bundle.zip", ok: 200},
	{name: "create share", need: manage, method: "POST", path: "/comparisons/{cid}/shares", body: form(url.Values{"chart": {""}}), ok: 200},
	{name: "revoke share", need: manage, method: "POST", path: "/shares/{sid}/revoke", body: form(nil), ok: 303},
	{name: "revoke share confirmation", need: manage, method: "GET", path: "/shares/{sid}/revoke", ok: 200},
	{name: "revoke collection share", need: manage, method: "POST", path: "/shares/{ksid}/revoke", body: form(nil), ok: 303},
	{name: "revoke collection share confirmation", need: manage, method: "GET", path: "/shares/{ksid}/revoke", ok: 200},
	{name: "API revoke collection share", need: manage, method: "DELETE", path: "/api/v1/shares/{ksid}", ok: 204},
	{name: "API create share", need: manage, method: "POST", path: "/api/v1/comparisons/{cid}/shares",
		body: func(*fixture, func(string) string) (string, []byte) { return "application/json", []byte(`{}`) }, ok: 201},
	{name: "API revoke share", need: manage, method: "DELETE", path: "/api/v1/shares/{sid}", ok: 204},
	{name: "add member", need: manage, method: "POST", path: "/projects/{proj}/members",
		body: func(f *fixture, _ func(string) string) (string, []byte) {
			return form(url.Values{"email": {f.spare.Email}, "role": {"viewer"}})(f, nil)
		}, ok: 303},
	{name: "remove member", need: manage, method: "POST", path: "/projects/{proj}/members/{uid}/remove", body: form(nil), ok: 303},

	{name: "collections", need: signedIn, method: "GET", path: "/collections", ok: 200},
	{name: "create collection", need: creator, method: "POST", path: "/collections", body: func(f *fixture, v func(string) string) (string, []byte) {
		return form(url.Values{"name": {"runs"}, "project_id": {v("target")}})(f, nil)
	}, bodySlots: []string{"target"}, ok: 303},
	{name: "collection", need: read, method: "GET", path: "/collections/{coll}", ok: 200},
	{name: "add to collection", need: edit, method: "POST", path: "/collections/{coll}/add", body: func(f *fixture, v func(string) string) (string, []byte) {
		return form(url.Values{"comparison_id": {v("cmp")}})(f, nil)
	}, bodySlots: []string{"cmp"}, ok: 303},
	{name: "remove from collection", need: edit, method: "POST", path: "/collections/{coll}/remove", body: func(f *fixture, v func(string) string) (string, []byte) {
		return form(url.Values{"comparison_id": {v("cmp")}})(f, nil)
	}, bodySlots: []string{"cmp"}, ok: 303},
	{name: "move in collection", need: edit, method: "POST", path: "/collections/{coll}/move", body: func(f *fixture, v func(string) string) (string, []byte) {
		return form(url.Values{"comparison_id": {v("cmp")}, "dir": {"down"}})(f, nil)
	}, bodySlots: []string{"cmp"}, ok: 303},
	{name: "rename collection", need: edit, method: "POST", path: "/collections/{coll}/rename", body: form(url.Values{"name": {"renamed"}}), ok: 303},
	{name: "delete collection confirmation", need: edit, method: "GET", path: "/collections/{coll}/delete", ok: 200},
	{name: "delete collection", need: edit, method: "POST", path: "/collections/{coll}/delete", body: form(nil), ok: 303},
	{name: "collection share links", need: manage, method: "GET", path: "/collections/{coll}/shares", ok: 200},
	{name: "share collection", need: manage, method: "POST", path: "/collections/{coll}/shares", body: form(url.Values{"label": {"workshop"}}), ok: 200},

	{name: "users", need: admin, method: "GET", path: "/admin/users", ok: 200},
	{name: "invite", need: admin, method: "POST", path: "/admin/invites", body: func(f *fixture, _ func(string) string) (string, []byte) {
		return form(url.Values{"email": {fmt.Sprintf("invitee%d@reach.test", f.n.Add(1))}})(f, nil)
	}, ok: 200},
	{name: "allow project creation", need: admin, method: "POST", path: "/admin/users/{spare}/project-creator",
		body: form(url.Values{"allowed": {"on"}}), ok: 303},
	{name: "disable account confirmation", need: admin, method: "GET", path: "/admin/users/{spare}/disable", ok: 200},
	{name: "disable account", need: admin, method: "POST", path: "/admin/users/{spare}/disable", body: form(nil), ok: 303},
	{name: "enable account", need: admin, method: "POST", path: "/admin/users/{spare}/enable", body: form(nil), ok: 303},
	{name: "reset password confirmation", need: admin, method: "GET", path: "/admin/users/{spare}/reset-password", ok: 200},
	{name: "reset password", need: admin, method: "POST", path: "/admin/users/{spare}/reset-password", body: form(nil), ok: 200},
	{name: "revoke invitation confirmation", need: admin, method: "GET", path: "/admin/invites/{inviteid}/revoke", ok: 200},
	{name: "revoke invitation", need: admin, method: "POST", path: "/admin/invites/{inviteid}/revoke", body: form(nil), ok: 303},
	{name: "jobs UI", need: admin, method: "GET", path: "/riverui/", ok: 200},
	{name: "jobs UI without slash", need: admin, method: "GET", path: "/riverui", ok: 301},
	{name: "endpoint networks", need: admin, method: "GET", path: "/admin/network", ok: 200},
	{name: "set endpoint networks", need: admin, method: "POST", path: "/admin/network",
		body: form(url.Values{"policy": {sampling.DefaultNetPolicyText}}), ok: 200},
	{name: "server folders", need: admin, method: "GET", path: "/admin/folders", ok: 200},
	{name: "set server folders", need: admin, method: "POST", path: "/admin/folders", body: form(url.Values{"roots": {""}}), ok: 200},
	{name: "create project", need: admin, method: "POST", path: "/projects", body: func(f *fixture, _ func(string) string) (string, []byte) {
		return form(url.Values{"name": {fmt.Sprintf("project %d", f.n.Add(1))}})(f, nil)
	}, ok: 303},
}

// expect is the status role gets from r with each id taken from the
// project worlds names: a refused request gets the right refusal, an id
// of the other project than the one deciding access is not found.
func expect(r route, role string, worlds map[string]int) int {
	switch r.need {
	case public:
		return r.ok
	case shared:
		w := -1
		for _, x := range worlds {
			if w >= 0 && x != w {
				return 404 // a problem of another comparison than the link's
			}
			w = x
		}
		if role != "holder" {
			return 404 // a guessed token
		}
		return r.ok
	}
	if role == "anonymous" || role == "holder" {
		if !strings.HasPrefix(r.path, "/api/") && r.method == "GET" {
			return 303 // to the sign-in page
		}
		return 401
	}
	switch r.need {
	case signedIn:
		for slot, w := range worlds {
			if slotKinds[slot] == self && w != worldA {
				return 404 // somebody else's token
			}
		}
		return r.ok
	case admin:
		if role != "admin" {
			return 403
		}
		return r.ok
	case creator:
		if standing(role, worldA) < edit && standing(role, worldB) < edit {
			return 403 // an editor of no project
		}
		for slot, w := range worlds {
			if slotKinds[slot] == readable && standing(role, w) < read {
				return 400 // "not among the datasets of your projects"
			}
		}
		tw, ok := worlds["target"]
		if !ok {
			tw = creatorWorld(role)
		}
		if standing(role, tw) < edit {
			return 403
		}
		return r.ok
	}
	pw := -1
	for slot, w := range worlds {
		if slotKinds[slot] == primary {
			pw = w
		}
	}
	switch st := standing(role, pw); {
	case st < read:
		return 404 // outside the caller's projects: as if it did not exist
	case st < r.need:
		return 403
	}
	for slot, w := range worlds {
		if slotKinds[slot] == dependent && w != pw {
			return 404 // a run, problem or member of another project's
		}
	}
	return r.ok
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
	def, err := srv.st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	projB, err := srv.st.CreateProject(ctx, "Project B", f.acc["outsider"].ID)
	if err != nil {
		t.Fatal(err)
	}
	for w, p := range map[int]int64{worldA: def, worldB: projB} {
		x := world{project: p}
		x.cid, x.rid, x.pid = readyComparison(t, srv.st, map[int]string{worldA: "fixture", worldB: "fixture B"}[w], p,
			map[int]string{worldA: secretA, worldB: secretB}[w])
		c, err := srv.st.GetComparison(ctx, x.cid)
		if err != nil {
			t.Fatal(err)
		}
		x.dataset = *c.DatasetID
		_, x.token = shareToken(t, srv.st, store.ShareLink{ComparisonID: x.cid})
		_, x.texts = shareToken(t, srv.st, store.ShareLink{ComparisonID: x.cid, ShowTexts: true})
		f.w[w] = x
		_, f.w[w].ktoken = shareToken(t, srv.st, store.ShareLink{CollectionID: f.freshCollection(w)})
	}
	a := f.w[worldA]
	f.project, f.cid, f.rid, f.pid, f.dataset, f.token = a.project, a.cid, a.rid, a.pid, a.dataset, a.token
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

// request builds r's path and body with each slot's id from the world
// worlds names (worldA when unnamed), as role sends it.
func (f *fixture) request(r route, role string, worlds map[string]int) (path, ctype string, body []byte) {
	var inst [2]*[3]int64
	comparison := func(w int) *[3]int64 {
		if inst[w] == nil {
			c, rn, p := f.comparisonIn(w, r.fresh)
			inst[w] = &[3]int64{c, rn, p}
		}
		return inst[w]
	}
	resolve := func(slot string) string {
		w := worlds[slot]
		switch slot {
		case "cid":
			return fmt.Sprint(comparison(w)[0])
		case "rid":
			return fmt.Sprint(comparison(w)[1])
		case "pid":
			if r.need == shared {
				return fmt.Sprint(f.w[w].pid)
			}
			return fmt.Sprint(comparison(w)[2])
		case "proj", "target":
			return fmt.Sprint(f.w[w].project)
		case "sid":
			return fmt.Sprint(f.freshShare(w))
		case "ksid":
			return fmt.Sprint(f.freshCollectionShare(w))
		case "uid":
			return fmt.Sprint(f.freshMember(w))
		case "dataset":
			return fmt.Sprint(f.freshDataset(w))
		case "tid":
			return fmt.Sprint(f.freshToken(role, w))
		case "coll":
			return fmt.Sprint(f.freshCollection(w))
		case "cmp":
			return fmt.Sprint(f.w[w].cid)
		case "spare":
			return fmt.Sprint(f.spare.ID)
		case "invite":
			return f.freshInvite()
		case "inviteid":
			return fmt.Sprint(f.freshInviteID())
		case "token":
			if role != "holder" {
				return auth.PrefixShare + strings.Repeat("A", 43) // a well-formed guess
			}
			if strings.Contains(r.path, "/problems/") {
				return f.w[w].texts
			}
			return f.w[w].token
		case "ktoken":
			if role != "holder" {
				return auth.PrefixShare + strings.Repeat("B", 43)
			}
			return f.w[w].ktoken
		}
		f.t.Fatalf("route %s: unknown slot {%s}", r.name, slot)
		return ""
	}
	path = slotRe.ReplaceAllStringFunc(r.path, func(m string) string { return resolve(m[1 : len(m)-1]) })
	if r.body != nil {
		ctype, body = r.body(f, resolve)
	}
	return path, ctype, body
}

// Every route × every id it carries taken from project A or project B ×
// {anonymous, share-link holder, outsider (owner of B), viewer, editor,
// owner (of A), admin}: allowed requests get the route's status, refused
// ones the right refusal, and no response shows a problem statement of a
// project the caller cannot read. The first pass takes every id from
// project A; then each id in turn comes from project B (a run, problem,
// dataset, share, member, token or target project of the other project
// than the one the request is checked against).
func TestAccessMatrix(t *testing.T) {
	f := newFixture(t)
	cases := 0
	for _, r := range routes {
		variants := []map[string]int{{}}
		for _, slot := range r.slots() {
			if slotKinds[slot] != fixed {
				variants = append(variants, map[string]int{slot: worldB})
			}
		}
		for _, worlds := range variants {
			for _, slot := range r.slots() {
				if _, ok := worlds[slot]; !ok {
					worlds[slot] = worldA
				}
			}
			for _, role := range roles {
				path, ctype, body := f.request(r, role, worlds)
				resp := f.do(role, r.method, path, ctype, body)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				cases++
				want := expect(r, role, worlds)
				what := fmt.Sprintf("%s (%s %s, ids %v) as %s", r.name, r.method, path, worlds, role)
				if resp.StatusCode != want {
					t.Errorf("%s: HTTP %d, want %d\n%.300s", what, resp.StatusCode, want, b)
					continue
				}
				if want == 303 && want != r.ok && !strings.HasPrefix(resp.Header.Get("Location"), "/login?next=") {
					t.Errorf("%s: redirected to %q, want the sign-in page", what, resp.Header.Get("Location"))
				}
				for w, secret := range map[int]string{worldA: secretA, worldB: secretB} {
					readsIt := role == "holder" && r.need == shared && want == 200 || standing(role, w) >= read
					if !readsIt && bytes.Contains(b, []byte(secret)) {
						t.Errorf("%s: the answer shows project %c's problem statement", what, 'A'+w)
					}
				}
			}
		}
	}
	t.Logf("%d requests", cases)
}

// The matrix lists every route the router has (but sign-in and sign-out,
// which TestLoginRateLimit, TestLoginNextStaysOnSite and
// TestPasswordsSessionsAndTokens cover): a route added without an entry
// fails here.
func TestAccessMatrixCoversEveryRoute(t *testing.T) {
	h := web.New(nil, nil, web.Config{JobsUI: http.NotFoundHandler()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	exempt := map[string]bool{"GET /login": true, "POST /login": true, "POST /logout": true}
	methods := map[string][]string{}
	err := chi.Walk(h.(chi.Routes), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		pattern = strings.ReplaceAll(pattern, "/*/", "/")
		methods[pattern] = append(methods[pattern], method)
		return nil
	})
	var missing []string
	n := 0
	for pattern, ms := range methods {
		if len(ms) > 5 { // Handle or Mount: every method goes to one handler
			ms = []string{"GET"}
		}
		p := slotRe.ReplaceAllString(strings.TrimSuffix(pattern, "/"), "\x00")
		p = regexp.QuoteMeta(strings.ReplaceAll(p, "*", "\x01"))
		re := regexp.MustCompile("^" + strings.NewReplacer("\x00", "[^/]+", "\x01", ".*").Replace(p) + "/?$")
	next:
		for _, method := range ms {
			if exempt[method+" "+pattern] {
				continue
			}
			n++
			for _, r := range routes {
				if r.method == method && re.MatchString(slotRe.ReplaceAllString(r.path, "x")) {
					continue next
				}
			}
			missing = append(missing, method+" "+pattern)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 || n < 50 {
		t.Errorf("%d routes walked; routes without an entry in the access matrix: %v", n, missing)
	}
}

// The dataset lists of the new-comparison and sampling forms hold the
// datasets of the caller's projects only: the owner of project B does not
// see project A's, A's editors do not see B's, admins see both.
func TestDatasetListsFollowProjects(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		role         string
		seesA, seesB bool
	}{{"outsider", false, true}, {"editor", true, false}, {"owner", true, false}, {"admin", true, true}} {
		for _, p := range []string{"/comparisons/new", "/comparisons/sample"} {
			resp := f.do(c.role, "GET", p, "", nil)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s as %s: HTTP %d", p, c.role, resp.StatusCode)
			}
			optA := fmt.Sprintf(`<option value="%d"`, f.w[worldA].dataset) // the sampling form adds data-problems
			optB := fmt.Sprintf(`<option value="%d"`, f.w[worldB].dataset)
			if bytes.Contains(b, []byte(optA)) != c.seesA || bytes.Contains(b, []byte(optB)) != c.seesB {
				t.Errorf("%s as %s: lists A's dataset %v, B's %v; want %v, %v", p, c.role,
					bytes.Contains(b, []byte(optA)), bytes.Contains(b, []byte(optB)), c.seesA, c.seesB)
			}
		}
	}
	// Once an admin builds a comparison of project B on A's dataset, it is
	// shared with B: B's owner sees it and may use it.
	ctype, body := uploadFor(f, fmt.Sprint(f.w[worldA].dataset), fmt.Sprint(f.w[worldB].project))
	resp := f.do("admin", "POST", "/api/v1/comparisons", ctype, body)
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Fatalf("admin uses A's dataset in B: HTTP %d", resp.StatusCode)
	}
	resp = f.do("outsider", "GET", "/comparisons/new", "", nil)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(b, []byte(fmt.Sprintf(`<option value="%d">`, f.w[worldA].dataset))) {
		t.Error("B's owner does not see the dataset an admin shared with B by using it there")
	}
	ctype, body = uploadFor(f, fmt.Sprint(f.w[worldA].dataset), "")
	resp = f.do("outsider", "POST", "/api/v1/comparisons", ctype, body)
	resp.Body.Close()
	if resp.StatusCode != 202 {
		t.Errorf("B's owner uses the dataset shared with B: HTTP %d, want 202", resp.StatusCode)
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
	// A link to one chart is titled by it.
	if _, one := get(t, f.srv.url+"/s/"+cross); !strings.Contains(one, `property="og:title" content="fixture — pass@k crossover"`) {
		t.Error("a crossover-only link's og:title does not name the crossover")
	}
	for _, want := range []string{`property="og:title" content="fixture — pass@k crossover, solved sets and histogram"`, `property="og:description" content="base vs rl on fixture`,
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
	all, _ := f.srv.st.Reviews(context.Background(), f.cid)
	var got string
	for k, rv := range all {
		if k.Problem == f.pid {
			got = rv.Verdict
		}
	}
	if len(all) != 1 || got != "lucky" {
		t.Errorf("verdict %q (%d reviews) after one same-origin and two cross-site reviews, want lucky", got, len(all))
	}
}

// signInFrom posts the sign-in form as a client at addr (the server trusts
// X-Forwarded-For) with the device cookie dev, if any; it returns the status
// and the device cookie the answer set, if any.
func signInFrom(t *testing.T, base, addr, email, password string, dev *http.Cookie) (int, *http.Cookie) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/login", strings.NewReader(url.Values{"email": {email}, "password": {password}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", addr)
	if dev != nil {
		req.AddCookie(dev)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == "reach_device" {
			return resp.StatusCode, c
		}
	}
	return resp.StatusCode, nil
}

// Sign-in limits without a lockout of the owner: a browser that signed in
// to the account before is limited on its own (5 failures), so guessing
// from elsewhere never keeps it out; other browsers get 5 failures per
// account and address and 20 per account; an address gets 20 failures
// over all accounts.
func TestLoginRateLimit(t *testing.T) {
	srv := newServerWith(t, web.Config{TrustProxyHeaders: true})
	createUser(t, srv.st, "target@reach.test", false, "")
	createUser(t, srv.st, "other@reach.test", false, "")
	const owner, attacker = "198.51.100.7", "203.0.113.66"
	code, dev := signInFrom(t, srv.url, owner, "target@reach.test", testPassword, nil)
	if code != 303 || dev == nil || !dev.HttpOnly {
		t.Fatalf("first sign-in: HTTP %d, device cookie %+v", code, dev)
	}
	for i := range 5 {
		if code, _ := signInFrom(t, srv.url, attacker, "target@reach.test", "wrong password!", nil); code != 401 {
			t.Fatalf("guess %d: HTTP %d, want 401", i+1, code)
		}
	}
	if code, _ := signInFrom(t, srv.url, attacker, "target@reach.test", testPassword, nil); code != 429 {
		t.Errorf("6th attempt from the guessing address, even with the right password: HTTP %d, want 429", code)
	}
	if code, _ := signInFrom(t, srv.url, owner, "target@reach.test", testPassword, dev); code != 303 {
		t.Errorf("the owner's browser during the guessing: HTTP %d, want 303", code)
	}
	if code, _ := signInFrom(t, srv.url, attacker, "target@reach.test", testPassword, dev); code != 303 {
		t.Errorf("the owner's browser from the guessing address: HTTP %d, want 303 (the browser is known)", code)
	}
	if code, _ := signInFrom(t, srv.url, "192.0.2.1", "target@reach.test", testPassword, nil); code != 303 {
		t.Errorf("a new browser of the owner at another address: HTTP %d, want 303", code)
	}
	// A device cookie is the account's: for another account it is no help.
	if code, _ := signInFrom(t, srv.url, attacker, "other@reach.test", testPassword, dev); code != 303 {
		t.Errorf("another account from the guessing address: HTTP %d, want 303", code)
	}
	// Guessing from many addresses: 20 failures per account hold back new browsers, not known ones.
	for i := range 15 {
		if code, _ := signInFrom(t, srv.url, fmt.Sprintf("203.0.113.%d", i+1), "target@reach.test", "wrong password!", nil); code != 401 {
			t.Fatalf("distributed guess %d: HTTP %d", i+1, code)
		}
	}
	if code, _ := signInFrom(t, srv.url, "192.0.2.2", "target@reach.test", testPassword, nil); code != 429 {
		t.Errorf("a new browser after 20 failures on the account: HTTP %d, want 429", code)
	}
	if code, _ := signInFrom(t, srv.url, owner, "target@reach.test", testPassword, dev); code != 303 {
		t.Errorf("the owner's browser after 20 failures on the account: HTTP %d, want 303", code)
	}
	// The known browser has a limit of its own.
	for i := range 5 {
		if code, _ := signInFrom(t, srv.url, owner, "target@reach.test", "wrong password!", dev); code != 401 {
			t.Fatalf("known browser's failure %d: HTTP %d", i+1, code)
		}
	}
	if code, _ := signInFrom(t, srv.url, owner, "target@reach.test", testPassword, dev); code != 429 {
		t.Errorf("a known browser after its own 5 failures: HTTP %d, want 429", code)
	}
	// Spraying many accounts from one address: 20 failures in all.
	const sprayer = "198.51.100.99"
	for i := range 20 {
		if code, _ := signInFrom(t, srv.url, sprayer, fmt.Sprintf("nobody%d@reach.test", i), "x", nil); code != 401 {
			t.Fatalf("spray %d: HTTP %d", i, code)
		}
	}
	if code, _ := signInFrom(t, srv.url, sprayer, "other@reach.test", testPassword, nil); code != 429 {
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

// The navigation offers uploading and sampling only to accounts that may
// create a comparison: a viewer of every project it is in would get 403.
func TestNavigationHidesCreateFromViewers(t *testing.T) {
	f := newFixture(t)
	for role, want := range map[string]bool{"viewer": false, "editor": true, "owner": true, "admin": true, "outsider": true} {
		resp := f.do(role, "GET", "/", "", nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("/ as %s: HTTP %d", role, resp.StatusCode)
		}
		for _, link := range []string{`href="/comparisons/new"`, `href="/comparisons/sample"`} {
			if got := bytes.Contains(b, []byte(link)); got != want {
				t.Errorf("/ as %s: %s shown %v, want %v", role, link, got, want)
			}
		}
	}
}
