package web_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// A comparison imported as per-problem counts has no samples: its export is
// refused with 409 and a reason (as `reach export` refuses), not sent as an
// empty file that reads as "nothing was correct".
func TestExportCountsOnlyRefused(t *testing.T) {
	s := newServer(t)
	cid, _, _ := readyComparison(t, s.st, "counts", 0, "What is 1+1?")
	c, err := s.st.GetComparison(context.Background(), cid)
	if err != nil {
		t.Fatal(err)
	}
	for _, run := range c.Runs {
		if err := s.st.SetRunImported(context.Background(), run.ID, "counts", false, "file"); err != nil {
			t.Fatal(err)
		}
	}
	acct := newAccount(t, s.st, s.url, "owner@example.org", true, "")
	for _, path := range []string{"/comparisons/" + strconv.FormatInt(cid, 10) + "/samples.jsonl", "/api/v1/comparisons/" + strconv.FormatInt(cid, 10) + "/samples.parquet"} {
		req, _ := http.NewRequest("GET", s.url+path, nil)
		if strings.HasPrefix(path, "/api/") {
			req.Header.Set("Authorization", "Bearer "+acct.Token)
		} else {
			req.AddCookie(acct.Cookie)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusConflict || !strings.Contains(string(body), "per-problem counts") {
			t.Errorf("GET %s: HTTP %d %q, want 409 saying it was imported as counts", path, resp.StatusCode, body)
		}
	}
}
