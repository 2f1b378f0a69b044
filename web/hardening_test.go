package web_test

// Tests of issue 10 ("Hardening"): each fails on the code before the fix.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/web"
)

// After sign-in, ?next= may only name a clean path of this site: browsers
// drop tabs and newlines and read "\" as "/", so each of these would
// otherwise land on evil.example.
func TestLoginNextStaysOnSite(t *testing.T) {
	srv := newServer(t)
	createUser(t, srv.st, "u@reach.test", false, "")
	cookie := login(t, srv.url, "u@reach.test", testPassword)
	evil := []string{
		"/%09/evil.example/", "/%0a/evil.example/", "/%0d%0a/evil.example", "%2F%2Fevil.example", "//evil.example",
		"/%5Cevil.example", "%5C%5Cevil.example", "/%5C/evil.example", "https://evil.example/", "http:evil.example",
		"javascript:alert(1)", "/%20/evil.example", "%09//evil.example", "/%00/evil.example", "/%7F/evil.example",
		"https:/evil.example", "/%2F%2Fevil.example",
	}
	for _, raw := range evil {
		// Already signed in: /login redirects straight to next.
		code, loc := redirectOf(t, srv.url+"/login?next="+raw, cookie)
		if code != 303 || loc != "/" {
			t.Errorf("GET /login?next=%s signed in: HTTP %d to %q, want 303 to /", raw, code, loc)
		}
		next, err := url.QueryUnescape(raw)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("POST", srv.url+"/login", strings.NewReader(url.Values{"email": {"u@reach.test"},
			"password": {testPassword}, "next": {next}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		code, loc = roundTrip(t, req)
		if code != 303 || loc != "/" {
			t.Errorf("POST /login next=%q: HTTP %d to %q, want 303 to /", next, code, loc)
		}
	}
	for _, good := range []string{"/comparisons/3?pair=2", "/projects/1", "/comparisons/3/problems/7#review"} {
		code, loc := redirectOf(t, srv.url+"/login?next="+url.QueryEscape(good), cookie)
		if code != 303 || loc != strings.Split(good, "#")[0] && loc != good {
			t.Errorf("next=%q: HTTP %d to %q, want it kept", good, code, loc)
		}
	}
}

// redirectOf sends GET url with cookie c (if any) and returns the status
// and Location.
func redirectOf(t *testing.T, u string, c *http.Cookie) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		req.AddCookie(c)
	}
	return roundTrip(t, req)
}

// roundTrip sends req without any client logic (a client would refuse to
// parse a Location with a tab in it; a browser strips the tab and follows)
// and returns the status and the raw Location.
func roundTrip(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Location")
}

// postSetup posts the first-run form to base with the Host header host
// ("" keeps the URL's) and the Origin header origin ("" sends none).
func postSetup(t *testing.T, base, host, origin string, v url.Values) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/setup", strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if host != "" {
		req.Host = host
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// DNS rebinding: a page of evil.example whose name now resolves to
// 127.0.0.1 posts the first-run form with its own Host and Origin. The
// peer is loopback, so only the Host check stops it; a POST without any
// origin header is refused too.
func TestSetupRefusesForeignHost(t *testing.T) {
	srv := newServer(t)
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.url, "http://"), ":")
	v := func(email string) url.Values {
		return url.Values{"email": {email}, "password": {testPassword}, "confirm": {testPassword}}
	}
	for _, c := range []struct{ host, origin string }{
		{"evil.example:" + port, "http://evil.example:" + port},
		{"evil.example", "http://evil.example"},
		{"127.0.0.1.evil.example:" + port, "http://127.0.0.1.evil.example:" + port},
		{"localhost.evil.example:" + port, "http://localhost.evil.example:" + port},
		{"localhost:" + port, "http://evil.example"}, // right Host, foreign Origin
		{"localhost:" + port, ""},                    // no Origin, no Sec-Fetch-Site
	} {
		resp := postSetup(t, srv.url, c.host, c.origin, v("rebound@reach.test"))
		if resp.StatusCode == 303 {
			t.Errorf("first-run POST with Host %q, Origin %q: HTTP 303, want a refusal", c.host, c.origin)
		}
		if n, _ := srv.st.CountUsers(context.Background()); n != 0 {
			t.Fatalf("first-run POST with Host %q, Origin %q created an account", c.host, c.origin)
		}
	}
	req, _ := http.NewRequest("GET", srv.url+"/setup", nil)
	req.Host = "evil.example:" + port
	if resp, err := noRedirect.Do(req); err != nil || resp.StatusCode != 404 {
		t.Errorf("first-run page with a foreign Host: %v, want 404", resp.StatusCode)
	}
	for i, host := range []string{"localhost:" + port, "[::1]:" + port} {
		resp := postSetup(t, srv.url, host, "http://"+host, v(fmt.Sprintf("first%d@reach.test", i)))
		if i == 0 && resp.StatusCode != 303 {
			t.Errorf("first-run POST from localhost with its own Origin: HTTP %d, want 303", resp.StatusCode)
		}
	}
	if n, _ := srv.st.CountUsers(context.Background()); n != 1 {
		t.Errorf("%d accounts after one good first-run POST, want 1", n)
	}
}

// When the database fails, pages, the API and /healthz say so without the
// driver's message (it names the user, database, host and port): the page
// shows a request id, under which the server log has the cause.
func TestDatabaseErrorsNotShown(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	a := newAccount(t, srv.st, srv.url, "u@reach.test", false, "viewer")
	var dbName string
	if err := srv.st.Pool().QueryRow(ctx, "SELECT current_database()").Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, testdb.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+dbName+" ALLOW_CONNECTIONS false"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "ALTER DATABASE "+dbName+" ALLOW_CONNECTIONS true") })
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", dbName); err != nil {
		t.Fatal(err)
	}
	leaks := []string{dbName, "user=", "postgres", "5432", "127.0.0.1", "FATAL", "SQLSTATE"}
	for _, c := range []struct {
		name, path string
		hdr        []string
		want       int
	}{
		{"page", "/", []string{"Cookie", a.Cookie.String()}, 500},
		{"page again", "/projects", []string{"Cookie", a.Cookie.String()}, 500},
		{"API", "/api/v1/comparisons", []string{"Authorization", "Bearer " + a.Token}, 500},
		{"health", "/healthz", nil, 503},
	} {
		req, _ := http.NewRequest("GET", srv.url+c.path, nil)
		for i := 0; i+1 < len(c.hdr); i += 2 {
			req.Header.Set(c.hdr[i], c.hdr[i+1])
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s with the database down: HTTP %d, want %d\n%s", c.name, resp.StatusCode, c.want, body)
		}
		for _, leak := range leaks {
			if bytes.Contains(body, []byte(leak)) {
				t.Errorf("%s with the database down shows %q:\n%s", c.name, leak, body)
			}
		}
		id := resp.Header.Get("X-Request-Id")
		if id == "" || (c.want == 500 && !bytes.Contains(body, []byte(id))) {
			t.Errorf("%s: request id %q not on the error page:\n%s", c.name, id, body)
		}
	}
}

// Smaller holes: a crossover-only link's preview holds no solved-set
// counts; /static/ lists nothing; /riverui/ has a CSP; an untrusted
// X-Forwarded-Proto does not set the Secure flag; the create API returns
// the name.
func TestSmallLeaks(t *testing.T) {
	f := newFixture(t)
	_, cross := shareToken(t, f.srv.st, store.ShareLink{ComparisonID: f.cid, Chart: "crossover"})
	_, venn := shareToken(t, f.srv.st, store.ShareLink{ComparisonID: f.cid, Chart: "venn"})
	ogDescription := func(page string) string {
		_, rest, _ := strings.Cut(page, `property="og:description" content="`)
		d, _, _ := strings.Cut(rest, `"`)
		return d
	}
	_, page := get(t, f.srv.url+"/s/"+cross)
	if d := ogDescription(page); d == "" || strings.Contains(d, "only") || !strings.Contains(d, "pass@1") {
		t.Errorf("crossover-only link's preview %q: want pass@k figures and no solved-set counts", d)
	}
	if strings.Contains(page, "<th>solved</th>") {
		t.Error("crossover-only link's page shows the solved counts")
	}
	_, page = get(t, f.srv.url+"/s/"+venn)
	if d := ogDescription(page); !strings.Contains(d, "base-only 1") || strings.Contains(d, "pass@") {
		t.Errorf("Venn-only link's preview %q: want the solved-set counts only", d)
	}
	_, page = get(t, f.srv.url+"/s/"+f.token)
	if d := ogDescription(page); !strings.Contains(d, "base-only 1") || !strings.Contains(d, "pass@1") {
		t.Errorf("every-chart link's preview %q: want both", d)
	}

	for _, p := range []string{"/static/", "/static/katex/", "/static/katex", "/static/katex/fonts/"} {
		if code, body := get(t, f.srv.url+p); code != 404 || strings.Contains(body, "<a href=") && strings.Contains(body, ".js") {
			t.Errorf("GET %s: HTTP %d, want 404 without a listing", p, code)
		}
	}
	if code, _ := get(t, f.srv.url+"/static/app.css"); code != 200 {
		t.Errorf("a static file: HTTP %d", code)
	}

	req, _ := http.NewRequest("GET", f.srv.url+"/riverui/", nil)
	req.AddCookie(f.acc["admin"].Cookie)
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); resp.StatusCode != 200 || !strings.Contains(csp, "default-src 'self'") ||
		!strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("/riverui/: HTTP %d, CSP %q", resp.StatusCode, csp)
	}

	// The create API answers with the comparison's name.
	ctype, body := uploadBody(f)
	resp = f.do("editor", "POST", "/api/v1/comparisons", ctype, body)
	var out struct {
		ID   int64
		Name string
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if resp.StatusCode != 202 || !strings.HasPrefix(out.Name, "upload-") {
		t.Errorf("POST /api/v1/comparisons: HTTP %d, %+v: want the name", resp.StatusCode, out)
	}
}

// The session cookie is Secure over TLS; behind a proxy, X-Forwarded-Proto
// counts only with --trust-proxy (any client can send the header).
func TestSecureCookieTrustsProxyOnlyWhenTold(t *testing.T) {
	for _, trust := range []bool{false, true} {
		srv := newServerWith(t, web.Config{TrustProxyHeaders: trust})
		createUser(t, srv.st, "u@reach.test", false, "")
		req, _ := http.NewRequest("POST", srv.url+"/login", strings.NewReader(url.Values{"email": {"u@reach.test"}, "password": {testPassword}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-Proto", "https")
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(resp.Cookies()) == 0 {
			t.Fatalf("trust-proxy %v: no cookie (HTTP %d)", trust, resp.StatusCode)
		}
		if c := resp.Cookies()[0]; c.Secure != trust {
			t.Errorf("trust-proxy %v, X-Forwarded-Proto https: cookie Secure = %v", trust, c.Secure)
		}
	}
}

// Creating a project makes its creator an owner (uploads, sampling, Test
// connection): only admins may, and the users an admin allows to.
func TestProjectCreationNeedsAdminGrant(t *testing.T) {
	f := newFixture(t)
	create := func(role, name string) int {
		resp := f.do(role, "POST", "/projects", "application/x-www-form-urlencoded", []byte(url.Values{"name": {name}}.Encode()))
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, role := range []string{"outsider", "viewer", "editor", "owner"} {
		if code := create(role, "mine-"+role); code != 403 {
			t.Errorf("%s creates a project: HTTP %d, want 403", role, code)
		}
	}
	_, page := getAs(t, f, "viewer", "/projects")
	if strings.Contains(page, `id="project-form"`) {
		t.Error("the projects page offers a viewer the new-project form")
	}
	grant := func(uid int64, allowed string) {
		resp := f.do("admin", "POST", fmt.Sprintf("/admin/users/%d/project-creator", uid), "application/x-www-form-urlencoded",
			[]byte(url.Values{"allowed": {allowed}}.Encode()))
		resp.Body.Close()
		if resp.StatusCode != 303 {
			t.Fatalf("admin sets project creation of user %d: HTTP %d", uid, resp.StatusCode)
		}
	}
	viewer := f.acc["viewer"].ID
	grant(viewer, "on")
	if code := create("viewer", "granted"); code != 303 {
		t.Errorf("viewer allowed by an admin creates a project: HTTP %d, want 303", code)
	}
	if _, page := getAs(t, f, "viewer", "/projects"); !strings.Contains(page, `id="project-form"`) {
		t.Error("the projects page does not offer the form to a user allowed to create projects")
	}
	grant(viewer, "")
	if code := create("viewer", "again"); code != 403 {
		t.Errorf("viewer after the admin withdrew the grant: HTTP %d, want 403", code)
	}
	if code := create("admin", "by admin"); code != 303 {
		t.Errorf("admin creates a project: HTTP %d", code)
	}
	// Only admins grant it.
	resp := f.do("owner", "POST", fmt.Sprintf("/admin/users/%d/project-creator", f.acc["owner"].ID), "application/x-www-form-urlencoded",
		[]byte("allowed=on"))
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("an owner grants themself project creation: HTTP %d, want 403", resp.StatusCode)
	}
}

// getAs GETs path as role (a page, with its session cookie).
func getAs(t *testing.T, f *fixture, role, path string) (int, string) {
	t.Helper()
	resp := f.do(role, "GET", path, "", nil)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A flood of parallel sign-ins: attempts are counted before the password
// is checked, so 60 parallel guesses at one account get 5 checks (the
// limit) and 55 answers 429; and argon2id (19 MiB per check) runs in at
// most one slot per core, so 60 parallel sign-ins of different accounts
// from different addresses keep the heap near cores × 19 MiB instead of
// 60 × 19 MiB (before: 40 parallel guesses took the server from 27 MB to
// 754 MB). Measured: peak heap growth over the flood, printed with -v.
func TestSignInFlood(t *testing.T) {
	srv := newServerWith(t, web.Config{TrustProxyHeaders: true})
	createUser(t, srv.st, "target@reach.test", false, "")
	const n = 60
	flood := func(attempt func(i int) int) map[int]int {
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				code := attempt(i)
				mu.Lock()
				codes[code]++
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
		return codes
	}
	codes := flood(func(int) int {
		code, _ := signInFrom(t, srv.url, "203.0.113.5", "target@reach.test", "wrong password!", nil)
		return code
	})
	if codes[401] != 5 || codes[429] != n-5 {
		t.Errorf("%d parallel guesses at one account: %v; want 5 × 401 (checked) and %d × 429", n, codes, n-5)
	}

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	codes = flood(func(i int) int {
		code, _ := signInFrom(t, srv.url, fmt.Sprintf("198.51.100.%d", i+1), fmt.Sprintf("user%d@reach.test", i), "wrong password!", nil)
		return code
	})
	close(stop)
	<-sampled
	grew := int64(peak.Load()) - int64(base)
	t.Logf("%d parallel sign-ins of different accounts: %v; heap grew by %.0f MiB at most (%d cores)", n, codes, float64(grew)/(1<<20), runtime.GOMAXPROCS(0))
	if codes[401]+codes[429] != n {
		t.Errorf("answers %v: want only 401 (checked) and 429 (server busy)", codes)
	}
	// One slot per core, 19 MiB each, and garbage until the next GC (which
	// comes by the time the heap doubles): far below 60 × 19 MiB = 1140 MiB.
	if limit := int64(runtime.GOMAXPROCS(0)*19+200) << 20; grew > limit {
		t.Errorf("the heap grew by %d MiB during %d parallel sign-ins, want under %d MiB", grew>>20, n, limit>>20)
	}
}

// endpointComparison stores a configured comparison whose base model's
// endpoint is baseURL, and returns it and that run.
func endpointComparison(t *testing.T, st *store.Store, baseURL string, sampling ...any) (cid, rid int64) {
	t.Helper()
	ctx := context.Background()
	did, err := st.CreateDataset(ctx, "d", "d.jsonl")
	if err == nil {
		err = st.InsertProblems(ctx, did, []store.Problem{{Idx: 0, Key: "p0", Statement: "What is 1+1?", Reference: "2"}})
	}
	if err == nil {
		err = st.FinishDataset(ctx, did)
	}
	if err != nil {
		t.Fatal(err)
	}
	nc := store.NewComparison{Name: "sampled", DatasetID: did, Status: store.StatusConfigured,
		Runs: []store.NewRun{
			{ModelName: "base", Role: "base", Format: "endpoint", Endpoint: store.Endpoint{BaseURL: baseURL, Model: "m", Style: "completions"}},
			{ModelName: "rl", Role: "rl", Format: "endpoint", Endpoint: store.Endpoint{BaseURL: baseURL, Model: "m", Style: "completions"}}}}
	nc.Sampling = map[string]any{"n": 4, "temperature": 0.6, "top_p": 0.95, "max_tokens": 16, "template": "raw"}
	if len(sampling) > 0 {
		nc.Sampling = sampling[0]
	}
	cid, err = st.CreateComparison(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	return cid, c.Runs[0].ID
}

// Admins set which networks endpoints may be in (Users → Endpoint
// networks); Test connection obeys it at once, and the denied server never
// sees a request. A policy with a bad line is refused naming the line.
func TestEndpointNetworkPolicy(t *testing.T) {
	f := newFixture(t)
	var hits atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" 2","finish_reason":"stop"}]}`)
	}))
	defer fake.Close()
	cid, rid := endpointComparison(t, f.srv.st, fake.URL+"/v1")
	t.Cleanup(func() { sampling.SetNetPolicy(sampling.DefaultNetPolicy()) })
	post := func(role, path string, v url.Values) (int, string) {
		resp := f.do(role, "POST", path, "application/x-www-form-urlencoded", []byte(v.Encode()))
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	testConn := func() string {
		code, page := post("editor", fmt.Sprintf("/comparisons/%d/runs/%d/test", cid, rid), nil)
		if code != 200 {
			t.Fatalf("test connection: HTTP %d", code)
		}
		return page
	}
	if _, page := getAs(t, f, "admin", "/admin/network"); !strings.Contains(page, "deny 169.254.0.0/16") {
		t.Error("the policy page does not show the default policy")
	}
	if page := testConn(); hits.Load() != 1 || !strings.Contains(page, " 2") {
		t.Fatalf("loopback under the default policy: %d requests\n%.500s", hits.Load(), page)
	}
	if code, page := post("admin", "/admin/network", url.Values{"policy": {"deny 127.0.0.0/8\nblock ::1"}}); code != 400 || !strings.Contains(page, "line 2") {
		t.Errorf("a policy with a bad line 2: HTTP %d, error naming the line: %v", code, strings.Contains(page, "line 2"))
	}
	if code, _ := post("owner", "/admin/network", url.Values{"policy": {"allow 0.0.0.0/0"}}); code != 403 {
		t.Errorf("a project owner sets the policy: HTTP %d, want 403", code)
	}
	if code, _ := post("admin", "/admin/network", url.Values{"policy": {"deny 127.0.0.0/8 # no local endpoints\ndeny ::1/128"}}); code != 200 {
		t.Fatalf("save a policy: HTTP %d", code)
	}
	if text, _, _ := f.srv.st.Setting(context.Background(), store.SettingEndpointNetworks); !strings.HasPrefix(text, "deny 127.0.0.0/8") {
		t.Errorf("stored policy %q", text)
	}
	if page := testConn(); hits.Load() != 1 || !strings.Contains(page, "not allowed by the endpoint network policy") {
		t.Errorf("loopback denied by the admin: %d requests in all, page:\n%.800s", hits.Load(), page)
	}
}

// A custom prompt template is a restricted language with a size budget:
// {{range 1000000}} is refused on the form; a template stored before (or
// a prompt of problem 1 over 256 KiB) gives a short error on the setup
// page, Start refuses, and Test connection sends nothing.
func TestPromptTemplateBudget(t *testing.T) {
	f := newFixture(t)
	var hits atomic.Int64
	var biggest atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		n, _ := io.Copy(io.Discard, r.Body)
		if n > biggest.Load() {
			biggest.Store(n)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"text_completion","created":1,"model":"m","choices":[{"index":0,"text":" 2","finish_reason":"stop"}]}`)
	}))
	defer fake.Close()
	const bomb = "{{range 1000000}}Think step by step. {{end}}{{.Problem}}"

	// The form refuses the template.
	body := func(dataset int64, tmpl string) (string, []byte) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for _, kv := range [][2]string{{"name", "bomb"}, {"dataset_id", fmt.Sprint(dataset)}, {"template", "custom"}, {"template_text", tmpl},
			{"model_role", "base"}, {"model_name", "base"}, {"model_url", fake.URL + "/v1"}, {"model_model", "m"},
			{"model_role", "rl"}, {"model_name", "rl"}, {"model_url", fake.URL + "/v1"}, {"model_model", "m"}, {"model_step", ""}} {
			_ = mw.WriteField(kv[0], kv[1])
		}
		_ = mw.Close()
		return mw.FormDataContentType(), buf.Bytes()
	}
	ctype, b := body(f.dataset, bomb)
	resp := f.do("editor", "POST", "/comparisons/sample", ctype, b)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !bytes.Contains(page, []byte("range is not allowed")) || len(page) > 200<<10 {
		t.Errorf("form with a range template: HTTP %d, %d bytes, says range is refused: %v", resp.StatusCode, len(page),
			bytes.Contains(page, []byte("range is not allowed")))
	}
	// Problem 1 of a loaded dataset rendered over the limit.
	ctx := context.Background()
	did, err := f.srv.st.CreateDataset(ctx, "long", "long.jsonl")
	if err == nil {
		err = f.srv.st.InsertProblems(ctx, did, []store.Problem{{Idx: 0, Key: "long-1", Statement: strings.Repeat("x", 200<<10), Reference: "1"}})
	}
	if err == nil {
		err = f.srv.st.FinishDataset(ctx, did)
	}
	if err == nil {
		err = f.srv.st.ShareDataset(ctx, did, f.project)
	}
	if err != nil {
		t.Fatal(err)
	}
	ctype, b = body(did, "{{.Problem}}\n\n{{.Problem}}")
	resp = f.do("editor", "POST", "/comparisons/sample", ctype, b)
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !bytes.Contains(page, []byte("problem 1 (long-1)")) || !bytes.Contains(page, []byte("256 KiB")) {
		t.Errorf("a template whose problem-1 prompt is 400 KiB: HTTP %d, names problem 1 and the limit: %v", resp.StatusCode,
			bytes.Contains(page, []byte("problem 1 (long-1)")))
	}

	// A comparison stored with the bomb (made before templates were checked).
	cfg := map[string]any{"n": 4, "temperature": 0.6, "top_p": 0.95, "max_tokens": 16, "template": "custom", "template_text": bomb}
	cid, rid := endpointComparison(t, f.srv.st, fake.URL+"/v1", cfg)
	code, setup := getAs(t, f, "editor", fmt.Sprintf("/comparisons/%d", cid))
	if code != 200 || len(setup) > 100<<10 || !strings.Contains(setup, "range is not allowed") {
		t.Errorf("setup page of a stored range template: HTTP %d, %d bytes, shows the reason: %v", code, len(setup),
			strings.Contains(setup, "range is not allowed"))
	}
	resp = f.do("editor", "POST", fmt.Sprintf("/comparisons/%d/start", cid), "application/x-www-form-urlencoded", nil)
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("start with a template that cannot render: HTTP %d, want 400", resp.StatusCode)
	}
	resp = f.do("editor", "POST", fmt.Sprintf("/comparisons/%d/runs/%d/test", cid, rid), "application/x-www-form-urlencoded", nil)
	page, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if hits.Load() != 0 || !bytes.Contains(page, []byte("cannot be rendered")) {
		t.Errorf("test connection with a template that cannot render: %d requests (largest %d bytes)\n%.300s", hits.Load(), biggest.Load(), page)
	}
}

// Every text field has a size limit, refused with an error that names the
// field (before: 5 MiB override notes and token names were stored); a form
// body over 1 MiB is refused as a whole.
func TestFieldSizeLimits(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	long := func(n int) string { return strings.Repeat("é", n) } // characters, not bytes
	urlencoded := "application/x-www-form-urlencoded"
	send := func(role, method, path, ctype string, body []byte) (int, string) {
		resp := f.do(role, method, path, ctype, body)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	formOf := func(kv ...string) []byte {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return []byte(v.Encode())
	}
	cid, rid, pid := f.comparisonIn(worldA, true)
	coll := f.freshCollection(worldA)
	for _, c := range []struct {
		name, role, path string
		body             []byte
		want             int
		says             string
	}{
		{"review note", "editor", fmt.Sprintf("/comparisons/%d/problems/%d/review", cid, pid), formOf("verdict", "genuine", "note", long(4001)), 400, "Note: at most 4000 characters"},
		{"override note", "editor", fmt.Sprintf("/comparisons/%d/runs/%d/problems/%d/samples/0/verdict", cid, rid, pid), formOf("status", "incorrect", "note", long(4001)), 400, "Note: at most 4000 characters"},
		{"5 MiB override note", "editor", fmt.Sprintf("/comparisons/%d/runs/%d/problems/%d/samples/0/verdict", cid, rid, pid), formOf("status", "incorrect", "note", strings.Repeat("x", 5<<20)), 413, "over 1 MiB"},
		{"token name", "viewer", "/account/tokens", formOf("name", long(201)), 400, "Token name: at most 200 characters"},
		{"project name", "admin", "/projects", formOf("name", long(201)), 400, "Project name: at most 200 characters"},
		{"invitation email", "admin", "/admin/invites", formOf("email", strings.Repeat("a", 250)+"@x.org"), 400, "Email: at most 254 characters"},
		{"member email", "owner", fmt.Sprintf("/projects/%d/members", f.project), formOf("email", strings.Repeat("a", 250)+"@x.org", "role", "viewer"), 400, "Email: at most 254"},
		{"share label", "owner", fmt.Sprintf("/comparisons/%d/shares", cid), formOf("label", long(201)), 400, "Label: at most 200 characters"},
		{"collection share label", "owner", fmt.Sprintf("/collections/%d/shares", coll), formOf("label", long(201)), 400, "Label: at most 200 characters"},
		{"collection name", "editor", fmt.Sprintf("/collections/%d/rename", coll), formOf("name", long(201)), 400, "Collection name: at most 200 characters"},
		{"notes", "editor", fmt.Sprintf("/comparisons/%d/notes", cid), formOf("body", long(32<<10)+"x"), 400, "notes are at most 64 KiB"},
	} {
		code, page := send(c.role, "POST", c.path, urlencoded, c.body)
		if code != c.want || !strings.Contains(page, c.says) || len(page) > 100<<10 {
			t.Errorf("%s: HTTP %d (%d bytes), says %q: %v", c.name, code, len(page), c.says, strings.Contains(page, c.says))
		}
	}
	if rs, _ := f.srv.st.Reviews(ctx, cid); len(rs) != 0 {
		t.Error("a review with an over-long note was stored")
	}
	ss, _ := f.srv.st.SamplesForProblem(ctx, rid, pid, 1)
	if len(ss) == 1 && ss[0].Override != nil {
		t.Error("an override with an over-long note was stored")
	}
	ts, _ := f.srv.st.ListAPITokens(ctx, f.acc["viewer"].ID)
	for _, tok := range ts {
		if len(tok.Name) > 200 {
			t.Errorf("an API token with a %d-byte name was stored", len(tok.Name))
		}
	}

	// Multipart: the upload API and the sampling form.
	multi := func(kv ...string) (string, []byte) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i] == "model_file" {
				w, _ := mw.CreateFormFile("model_file", "m.csv")
				_, _ = io.WriteString(w, kv[i+1])
				continue
			}
			_ = mw.WriteField(kv[i], kv[i+1])
		}
		_ = mw.Close()
		return mw.FormDataContentType(), buf.Bytes()
	}
	csv := "problem_id,n,correct\np0,4,1\np1,4,4\n"
	ds := fmt.Sprint(f.dataset)
	model := func(name, url, served, key, stop string) (string, []byte) {
		return multi("name", "s", "dataset_id", ds, "stop", stop,
			"model_role", "base", "model_name", name, "model_url", url, "model_model", served, "model_key", key,
			"model_role", "rl", "model_name", "rl", "model_url", "http://127.0.0.1:9/v1", "model_model", "m", "model_key", "", "model_step", "")
	}
	for _, c := range []struct {
		name, path string
		ctype      string
		body       []byte
		says       string
	}{
		{"comparison name", "/api/v1/comparisons", "", nil, "Comparison name: at most 200 characters"},
		{"model name", "/api/v1/comparisons", "", nil, "Model 1's name: at most 200 characters"},
		{"a 1 MiB field", "/api/v1/comparisons", "", nil, "field name is over 64 KiB"},
		{"endpoint model name", "/comparisons/sample", "", nil, "s name: at most 200"},
		{"base URL", "/comparisons/sample", "", nil, "s base URL: at most 2048"},
		{"served model", "/comparisons/sample", "", nil, "s served model: at most 256"},
		{"API key", "/comparisons/sample", "", nil, "s API key: at most 4096"},
		{"stop string", "/comparisons/sample", "", nil, "Stop string 1: at most 256"},
		{"stop strings", "/comparisons/sample", "", nil, "Stop strings: at most 32"},
	} {
		switch c.name {
		case "comparison name":
			c.ctype, c.body = multi("name", long(201), "dataset_id", ds, "model_role", "base", "model_name", "b", "model_file", csv,
				"model_role", "rl", "model_name", "r", "model_file", csv)
		case "model name":
			c.ctype, c.body = multi("name", "n", "dataset_id", ds, "model_role", "base", "model_name", long(201), "model_file", csv,
				"model_role", "rl", "model_name", "r", "model_file", csv)
		case "a 1 MiB field":
			c.ctype, c.body = multi("name", strings.Repeat("x", 1<<20), "dataset_id", ds)
		case "endpoint model name":
			c.ctype, c.body = model(long(201), "http://127.0.0.1:9/v1", "m", "", "")
		case "base URL":
			c.ctype, c.body = model("b", "http://127.0.0.1:9/v1?"+strings.Repeat("x", 2048), "m", "", "")
		case "served model":
			c.ctype, c.body = model("b", "http://127.0.0.1:9/v1", long(257), "", "")
		case "API key":
			c.ctype, c.body = model("b", "http://127.0.0.1:9/v1", "m", strings.Repeat("k", 4097), "")
		case "stop string":
			c.ctype, c.body = model("b", "http://127.0.0.1:9/v1", "m", "", long(257))
		case "stop strings":
			c.ctype, c.body = model("b", "http://127.0.0.1:9/v1", "m", "", strings.Repeat("stop\n", 33))
		}
		code, page := send("editor", "POST", c.path, c.ctype, c.body)
		if code != 400 || !strings.Contains(page, c.says) || len(page) > 100<<10 {
			t.Errorf("%s: HTTP %d (%d bytes), says %q: %v\n%.300s", c.name, code, len(page), c.says, strings.Contains(page, c.says), page)
		}
	}
	cs, _ := f.srv.st.ListComparisonsFor(ctx, f.acc["admin"].ID, true)
	for _, c := range cs {
		if len(c.Name) > 200 {
			t.Errorf("comparison with a %d-byte name stored", len(c.Name))
		}
	}
}

// A long completion is sent cut on the problem page (the first 65,536
// characters) with a link to the whole text, served as sandboxed plain
// text; model output stays text (no markup runs).
func TestLongCompletionsCut(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cid, rid, pid := f.comparisonIn(worldA, true)
	whole := "<script>alert(1)</script>" + strings.Repeat("Let me think again. ", 100_000) + "The answer is 2."
	st := f.srv.st
	if _, err := st.Pool().Exec(ctx, `UPDATE samples SET completion = $1 WHERE run_id = $2 AND problem_id = $3 AND sample_index = 0`,
		whole, rid, pid); err != nil {
		t.Fatal(err)
	}
	code, page := getAs(t, f, "viewer", fmt.Sprintf("/comparisons/%d/problems/%d", cid, pid))
	if code != 200 || len(page) > 512<<10 {
		t.Fatalf("problem page with a 2 MB completion: HTTP %d, %d bytes", code, len(page))
	}
	link := fmt.Sprintf("/comparisons/%d/runs/%d/problems/%d/samples/0/text", cid, rid, pid)
	if !strings.Contains(page, "Cut: the first 65536 of") || !strings.Contains(page, `href="`+link+`"`) {
		t.Errorf("the page does not say the completion is cut, or lacks the link %s", link)
	}
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("model output put a script tag on the page")
	}
	resp := f.do("viewer", "GET", link, "", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h := resp.Header
	if resp.StatusCode != 200 || string(body) != whole || h.Get("Content-Type") != "text/plain; charset=utf-8" ||
		h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") ||
		!strings.Contains(h.Get("Content-Disposition"), `filename="sample-`) {
		t.Errorf("whole text: HTTP %d, %d of %d bytes, headers %v", resp.StatusCode, len(body), len(whole), h)
	}
	// Through share links: with texts cut and linked, without texts 404.
	_, texts := shareToken(t, st, store.ShareLink{ComparisonID: cid, ShowTexts: true})
	_, charts := shareToken(t, st, store.ShareLink{ComparisonID: cid})
	code, page = get(t, fmt.Sprintf("%s/s/%s/problems/%d", f.srv.url, texts, pid))
	shared := fmt.Sprintf("/s/%s/runs/%d/problems/%d/samples/0/text", texts, rid, pid)
	if code != 200 || len(page) > 512<<10 || !strings.Contains(page, shared) {
		t.Errorf("shared problem page: HTTP %d, %d bytes, links the whole text: %v", code, len(page), strings.Contains(page, shared))
	}
	if code, body := get(t, f.srv.url+shared); code != 200 || body != whole {
		t.Errorf("whole text through a link with texts: HTTP %d, %d bytes", code, len(body))
	}
	if code, _ := get(t, fmt.Sprintf("%s/s/%s/runs/%d/problems/%d/samples/0/text", f.srv.url, charts, rid, pid)); code != 404 {
		t.Errorf("whole text through a link without texts: HTTP %d, want 404", code)
	}
}

// Issue 9 case 2: the problem page shows the seed a sample was requested
// with, and nothing for a sample without one.
func TestProblemPageShowsSampleSeed(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cid, rid, pid := f.comparisonIn(worldA, true)
	if _, err := f.srv.st.Pool().Exec(ctx, `UPDATE samples SET seed = 1473035070 WHERE run_id = $1 AND problem_id = $2 AND sample_index = 0`,
		rid, pid); err != nil {
		t.Fatal(err)
	}
	code, page := getAs(t, f, "viewer", fmt.Sprintf("/comparisons/%d/problems/%d", cid, pid))
	if code != 200 || !strings.Contains(page, ">seed 1473035070</span>") {
		t.Fatalf("problem page: HTTP %d, shows the seed: %v", code, strings.Contains(page, "1473035070"))
	}
	if n := strings.Count(page, `class="seed"`); n != 1 {
		t.Errorf("%d seeds shown; want the one sample's", n)
	}
}
