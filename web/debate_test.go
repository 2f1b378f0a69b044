package web_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web"
)

// The support figure at the ε of the query, on readyComparison's counts:
// p0 (base 1 of 4, RL 0 of 4) and p1 (both 4 of 4). At ε = 0 p0 is in the
// base model's support only (shrunk) and p1 in both (preserved); at ε = 0.5
// the base model's 1/4 is below ε, so p0 is outside both. ε outside [0, 1]
// is refused, and share links do not serve the debate charts' data.
func TestDebateSupportData(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cid, _, _ := readyComparison(t, srv.st, "support", 0, "What is 1+1?")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	base := fmt.Sprintf("%s/comparisons/%d", srv.url, cid)
	row := func(query string) []string {
		t.Helper()
		code, body := get(t, base+"/data/support.csv"+query, "Cookie", cookie)
		if code != 200 {
			t.Fatalf("support.csv%s: HTTP %d\n%.300s", query, code, body)
		}
		recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
		if err != nil || len(recs) != 2 {
			t.Fatalf("support.csv%s: %v, %d records\n%s", query, err, len(recs), body)
		}
		return recs[1]
	}
	// base, other, epsilon, preserved, shrunk, expanded, outside, retention, discovery, …, shrunk ids, expanded ids
	if r := row(""); strings.Join(r[:9], ",") != "base,rl,0,1,1,0,0,0.5,0" || r[11] != "p0" {
		t.Errorf("support at ε = 0: %q", r)
	}
	if r := row("?eps=0.5"); strings.Join(r[:9], ",") != "base,rl,0.5,1,0,0,1,1,0" || r[11] != "" {
		t.Errorf("support at ε = 0.5: %q", r)
	}
	if code, body := get(t, base+"/data/support.json?eps=2", "Cookie", cookie); code != 400 || !strings.Contains(body, "not a number from 0 to 1") {
		t.Errorf("support at ε = 2: HTTP %d %q, want 400 saying why", code, body)
	}
	code, body := get(t, fmt.Sprintf("%s/api/v1/comparisons/%d/report?eps=0.5", srv.url, cid), "Authorization", "Bearer "+admin.Token)
	var rep struct {
		Support struct {
			Eps   float64 `json:"epsilon"`
			Pairs []struct {
				Preserved, Shrunk, Expanded, Outside int
			} `json:"pairs"`
		} `json:"support"`
	}
	if err := json.Unmarshal([]byte(body), &rep); code != 200 || err != nil || rep.Support.Eps != 0.5 || len(rep.Support.Pairs) != 1 ||
		rep.Support.Pairs[0].Preserved != 1 || rep.Support.Pairs[0].Outside != 1 || rep.Support.Pairs[0].Shrunk != 0 {
		t.Errorf("report at ?eps=0.5: HTTP %d, %v, %+v", code, err, rep.Support)
	}
	if code, _ := get(t, fmt.Sprintf("%s/api/v1/comparisons/%d/report?eps=-1", srv.url, cid), "Authorization", "Bearer "+admin.Token); code != 400 {
		t.Errorf("report at ?eps=-1: HTTP %d, want 400", code)
	}
	code, page := get(t, base+"?eps=0.5", "Cookie", cookie)
	if code != 200 || !strings.Contains(page, "Empirical support at ε = 0.5") || !strings.Contains(page, `support.csv?eps=0.5`) {
		t.Errorf("page at ?eps=0.5: HTTP %d, want the support figure at 0.5 with its data link", code)
	}
	if _, page = get(t, base+"?eps=x", "Cookie", cookie); !strings.Contains(page, `id="eps-error"`) {
		t.Error("page at ?eps=x: no note that ε was not used")
	}
	_, token := shareToken(t, srv.st, store.ShareLink{ComparisonID: cid})
	for _, name := range []string{"support.csv", "cot.json", "perplexity.csv", "entropy.csv"} {
		if code, _ := get(t, srv.url+"/s/"+token+"/data/"+name); code != 404 {
			t.Errorf("shared %s: HTTP %d, want 404", name, code)
		}
	}
}

// A person labels a sample's reasoning on the problem page; the note is
// shown as text. With labels and no judge, CoT-pass@k counts the problems
// whose answer-correct samples are all labelled: p0 (the base model's one
// correct sample, labelled valid; the RL model has none) enters, p1 (four
// unlabelled correct samples per model) is left out and named. RL-only
// review verdicts are accepted, unknown ones refused.
func TestReasoningLabelsAndRLOnlyReview(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cid, rid, pid := readyComparison(t, srv.st, "labels", 0, "What is 1+1?")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	post := func(path string, v url.Values) int {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.url+path, strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Cookie", cookie)
		req.Header.Set("Origin", srv.url)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	label := fmt.Sprintf("/comparisons/%d/runs/%d/problems/%d/samples/0/reasoning", cid, rid, pid)
	if code := post(label, url.Values{"label": {"valid"}, "note": {`<script>alert("x")</script> fine`}}); code != 303 {
		t.Fatalf("label: HTTP %d", code)
	}
	if code := post(label, url.Values{"label": {"brilliant"}}); code != 400 {
		t.Errorf("unknown label: HTTP %d, want 400", code)
	}
	_, page := get(t, fmt.Sprintf("%s/comparisons/%d/problems/%d", srv.url, cid, pid), "Cookie", cookie)
	if !strings.Contains(page, `data-label="valid"`) || !strings.Contains(page, `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; fine`) ||
		strings.Contains(page, `<script>alert`) {
		t.Error("problem page: want the label with its note escaped")
	}
	code, body := get(t, fmt.Sprintf("%s/api/v1/comparisons/%d/report", srv.url, cid), "Authorization", "Bearer "+admin.Token)
	var rep struct {
		CoT struct {
			Problems   int      `json:"problems"`
			LeftOutIDs []string `json:"problems_left_out_ids"`
			Models     []struct {
				Name  string `json:"name"`
				Valid int    `json:"valid"`
				Human int    `json:"human_labels"`
			} `json:"models"`
		} `json:"cot_pass_at_k"`
	}
	if err := json.Unmarshal([]byte(body), &rep); code != 200 || err != nil {
		t.Fatalf("report: HTTP %d, %v", code, err)
	}
	if _, page := get(t, fmt.Sprintf("%s/comparisons/%d", srv.url, cid), "Cookie", cookie); !strings.Contains(page, `id="cot-left-out"`) ||
		!strings.Contains(page, "<code><bdi>p1</bdi></code>") {
		t.Error("comparison page: want the problem left out of CoT-pass@k named")
	}
	if c := rep.CoT; c.Problems != 1 || strings.Join(c.LeftOutIDs, ",") != "p1" || len(c.Models) != 2 || c.Models[0].Valid != 1 || c.Models[0].Human != 1 {
		t.Errorf("CoT-pass@k with one label: %+v", c)
	}

	review := fmt.Sprintf("/comparisons/%d/problems/%d/review", cid, pid)
	for verdict, want := range map[string]int{"format-fix": 303, "new-solution": 303, "genuine": 303, "bogus": 400} {
		if code := post(review, url.Values{"verdict": {verdict}}); code != want {
			t.Errorf("review %q: HTTP %d, want %d", verdict, code, want)
		}
	}
}

// The judge through the API: set up (form fields, as the page sends them),
// test against a replay judge, start (no workers run here: the jobs wait),
// read the state and pause. The API key is stored, never given back.
func TestDebateAPI(t *testing.T) {
	srv := newServerWith(t, web.Config{Secret: testBox(t)})
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cid, _, _ := readyComparison(t, srv.st, "api", 0, "What is 1+1?")
	judge := httptest.NewServer(replay.New(nil, replay.Options{Judge: []replay.JudgeLabel{{Completion: "The answer is 2.", Verdict: "valid", Reason: "checks out"}}}))
	t.Cleanup(judge.Close)
	base := fmt.Sprintf("%s/api/v1/comparisons/%d/debate", srv.url, cid)
	call := func(method, path string, v url.Values) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(v.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer "+admin.Token)
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out := map[string]any{}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	state := func(out map[string]any, purpose string) string {
		e, _ := out[purpose].(map[string]any)
		s, _ := e["state"].(string)
		return s
	}
	if code, out := call("POST", "/judge", url.Values{"base_url": {"not a url"}, "model": {"judge"}}); code != 400 || out["error"] == nil {
		t.Errorf("bad base URL: HTTP %d %v, want 400 with the error", code, out)
	}
	code, out := call("POST", "/judge", url.Values{"base_url": {judge.URL + "/v1"}, "model": {"judge"}, "api_key": {"sk-secret-42"},
		"max_per_problem": {"2"}})
	if code != 200 || state(out, "judge") != "idle" || state(out, "score") != "not set up" {
		t.Fatalf("set up: HTTP %d %v", code, out)
	}
	if j := out["judge"].(map[string]any); j["has_api_key"] != true || j["max_per_problem"] != 2.0 || strings.Contains(fmt.Sprint(out), "sk-secret-42") {
		t.Errorf("judge settings %v: want the key stored and not shown", j)
	}
	if code, out := call("POST", "/judge/test", nil); code != 200 || out["ok"] != true || !strings.Contains(fmt.Sprint(out["message"]), "The judge answered VALID") {
		t.Errorf("test: HTTP %d %v", code, out)
	}
	// Window 2: base p0 #0 and p1 #0 #1, RL p1 #0 #1 are answer-correct: 5 samples.
	if code, out := call("POST", "/judge/start", nil); code != 202 || state(out, "judge") != "running" ||
		out["judge"].(map[string]any)["samples_total"] != 5.0 {
		t.Errorf("start: HTTP %d %v", code, out)
	}
	if code, out := call("POST", "/judge/pause", nil); code != 202 || state(out, "judge") != "paused" {
		t.Errorf("pause: HTTP %d %v", code, out)
	}
	if code, out := call("POST", "/score/start", nil); code != 409 || !strings.Contains(fmt.Sprint(out["error"]), "Set up the score endpoint first") {
		t.Errorf("start scoring without an endpoint: HTTP %d %v", code, out)
	}
	if code, _ := call("GET", "", nil); code != 200 {
		t.Errorf("GET: HTTP %d", code)
	}
}

func testBox(t *testing.T) *secret.Box {
	t.Helper()
	b, err := secret.New("reach-web-test-secret")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
