package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// The tokens endpoint through the API (scope kept, a bad scope refused,
// start refused before the servers are tested), and the token view, its
// JSON and the aggregates on token scores stored by hand: two tokens, "A"
// alike under both models, " B" at −2 (base) and −0.5 (RL), Δ = 1.5.
func TestTokenDataAndAPI(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cookie := admin.Cookie.Name + "=" + admin.Cookie.Value
	cid, pids := debateBrowserFixture(t, srv.st)
	ctx := context.Background()
	c, err := srv.st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	api := fmt.Sprintf("%s/api/v1/comparisons/%d/debate/tokens", srv.url, cid)
	send := func(u string, form url.Values) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer "+admin.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := send(api, url.Values{"base_url": {"http://127.0.0.1:9/v1"}, "model": {"rl"}, "scope": {"all"}, "max_per_problem": {"2"}})
	var d map[string]struct {
		Purpose string `json:"purpose"`
		Scope   string `json:"scope"`
		Style   string `json:"style"`
		Window  int    `json:"max_per_problem"`
	}
	if err := json.Unmarshal([]byte(body), &d); code != 200 || err != nil || d["tokens"].Scope != "all" || d["tokens"].Purpose != "tokens" ||
		d["tokens"].Style != "completions" || d["tokens"].Window != 2 || d["score"].Scope != "" {
		t.Fatalf("set up tokens: HTTP %d %v %+v\n%.400s", code, err, d, body)
	}
	if code, body := send(api, url.Values{"base_url": {"http://127.0.0.1:9/v1"}, "model": {"rl"}, "scope": {"some"}}); code != 400 || !strings.Contains(body, "neither split nor all") {
		t.Errorf("bad scope: HTTP %d %s", code, body)
	}
	if code, body := send(api+"/start", nil); code != 409 || !strings.Contains(body, "scoring endpoint (perplexity) first") {
		t.Errorf("start without the base scoring endpoint: HTTP %d %s", code, body)
	}

	rl := c.Runs[1].ID
	p3 := pids["p3"]
	for _, x := range []store.TokenScore{
		{RunID: rl, ProblemID: p3, SampleIndex: 0, Role: store.RoleBase, Model: "base-m", Tokens: []string{"A", " B"}, Logprobs: []float32{-1, -2},
			TopK: 2, TopTokens: []string{"A", "x", "y", " B"}, TopLogprobs: []float32{-1, -2, -1, -2}},
		{RunID: rl, ProblemID: p3, SampleIndex: 0, Role: store.RoleRL, Model: "rl-m", Tokens: []string{"A", " B"}, Logprobs: []float32{-1, -0.5},
			TopK: 2, TopTokens: []string{"A", "x", " B", "y"}, TopLogprobs: []float32{-1, -2, -0.5, -3}},
		{RunID: rl, ProblemID: p3, SampleIndex: 1, Role: store.RoleBase, Error: "HTTP 500"},
	} {
		if err := srv.st.SaveTokenScore(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	sample := fmt.Sprintf("%s/comparisons/%d/runs/%d/problems/%d/samples/0/tokens", srv.url, cid, rl, p3)
	code, body = get(t, sample+".json", "Cookie", cookie)
	var td struct {
		Tokens []string   `json:"tokens"`
		Delta  []float64  `json:"delta"`
		JS     []*float64 `json:"js"`
		Base   struct {
			TopTokens [][]string `json:"top_tokens"`
		} `json:"base"`
		RL struct {
			TopLogprobs [][]float64 `json:"top_logprobs"`
		} `json:"rl"`
	}
	if err := json.Unmarshal([]byte(body), &td); code != 200 || err != nil {
		t.Fatalf("tokens.json: HTTP %d %v", code, err)
	}
	// Position 1: RL (e^−0.5, e^−3, rest 0.343682), base (e^−2, e^−1, rest
	// 0.496785): JS 0.225592 bits. Position 0: both alike, 0.
	if strings.Join(td.Tokens, "|") != "A| B" || td.Delta[1] != 1.5 || td.JS[0] == nil || *td.JS[0] > 1e-6 ||
		td.JS[1] == nil || math.Abs(*td.JS[1]-0.225592) > 1e-5 || strings.Join(td.Base.TopTokens[1], ",") != "y, B" ||
		td.RL.TopLogprobs[1][0] != -0.5 {
		t.Errorf("tokens.json %s", body)
	}
	// Perplexities e^(3/2) = 4.482 and e^(1.5/2) = 2.117; 1 of 2 positions above ln 2.
	code, body = get(t, sample, "Cookie", cookie)
	for _, want := range []string{`<td id="ppl-base">4.482</td>`, `<td id="ppl-rl">2.117</td>`, `<td id="token-share">50.00%</td>`,
		`<span class="tk p4"> B</span>`, `0.226`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("token view lacks %q (HTTP %d)", want, code)
		}
	}
	code, body = get(t, fmt.Sprintf("%s/comparisons/%d/tokens", srv.url, cid), "Cookie", cookie)
	names := []string{fmt.Sprintf(`<span id="token-base-model"><bdi>%s</bdi></span>`, c.Runs[0].ModelName),
		fmt.Sprintf(`<span id="token-rl-model"><bdi>%s</bdi></span>`, c.Runs[1].ModelName)}
	for _, want := range append(names, "<strong>50.00%</strong>", "<code>B</code>", "1 samples are left out") {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("aggregates lack %q (HTTP %d)", want, code)
		}
	}
	// One row per position; the failed sample is left out.
	code, body = get(t, fmt.Sprintf("%s/comparisons/%d/data/tokens.csv", srv.url, cid), "Cookie", cookie)
	want := "model,problem,sample_index,correct,position,token,logprob_base,logprob_rl,delta,js_bits\n" +
		"rl,p3,0,true,0,A,-1,-1,0,0\n" +
		"rl,p3,0,true,1,\" B\",-2,-0.5,1.5,0.225592\n" // a leading space is quoted
	if code != 200 || body != want {
		t.Errorf("tokens.csv: HTTP %d\n%s\nwant\n%s", code, body, want)
	}
	_, token := shareToken(t, srv.st, store.ShareLink{ComparisonID: cid})
	if code, _ := get(t, srv.url+"/s/"+token+"/data/tokens.csv"); code != 404 {
		t.Errorf("shared tokens.csv: HTTP %d, want 404", code)
	}
	_, body = get(t, fmt.Sprintf("%s/comparisons/%d/runs/%d/problems/%d/samples/1/tokens", srv.url, cid, rl, p3), "Cookie", cookie)
	if !strings.Contains(body, "Scoring under the base model failed: HTTP 500") {
		t.Error("a failed sample's view does not say so")
	}
	// A sample not scored names both models all the same; one that does not
	// exist is not found (a new user saw "the RL model ()" and a 200).
	code, body = get(t, fmt.Sprintf("%s/comparisons/%d/runs/%d/problems/%d/samples/2/tokens", srv.url, cid, rl, p3), "Cookie", cookie)
	if code != 200 || !strings.Contains(body, "not scored token by token yet") || strings.Contains(body, "()") {
		t.Errorf("an unscored sample's view: HTTP %d, names empty: %v", code, strings.Contains(body, "()"))
	}
	if code, _ := get(t, fmt.Sprintf("%s/comparisons/%d/runs/%d/problems/%d/samples/99/tokens", srv.url, cid, rl, p3), "Cookie", cookie); code != 404 {
		t.Errorf("a sample that does not exist: HTTP %d, want 404", code)
	}
}
