package web_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// A mistyped seed or random-sample size is refused, on the form (400) and
// on the page that counts requests (a message), never replaced by a
// default: the same m and seed must give the same samples. (A new user's
// seed of -3 started an audit with seed 1.)
func TestVerifierAuditRefusesBadSeedAndM(t *testing.T) {
	f := newFixture(t)
	for _, bad := range []url.Values{
		{"m": {"5"}, "seed": {"-3"}, "fresh": {"1"}},
		{"m": {"5"}, "seed": {"99999999999999999999999"}, "fresh": {"1"}},
		{"m": {"5"}, "seed": {"0"}, "fresh": {"1"}},
		{"m": {"100001"}, "seed": {"1"}, "fresh": {"1"}},
	} {
		resp := f.do("editor", "POST", fmt.Sprintf("/comparisons/%d/verifier-audit/start", f.cid), "application/x-www-form-urlencoded",
			[]byte(bad.Encode()))
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("start with %v: %d, want 400", bad, resp.StatusCode)
		}
	}
	for _, q := range []string{"m=100001", "m=abc", "seed=-3", "seed=x"} {
		code, body := f.page("editor", fmt.Sprintf("/comparisons/%d/verifier-audit?%s", f.cid, q))
		if code != 200 || !strings.Contains(body, `id="audit-error"`) {
			t.Errorf("page with %s: %d, error shown %v", q, code, strings.Contains(body, `id="audit-error"`))
		}
	}
}
