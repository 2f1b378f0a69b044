package web_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// TestLargeReportStreamed: a report of more problems than the API keeps
// encoded (20,000) is streamed to each request, gzip-compressed when asked,
// and the same document either way: every problem in it.
func TestLargeReportStreamed(t *testing.T) {
	f := newFixture(t)
	const probs = 20_001
	ps := make([]store.Problem, probs)
	for i := range ps {
		ps[i] = store.Problem{Idx: i, Key: fmt.Sprintf("q%05d", i), Statement: "What is 1+1?", Reference: "2"}
	}
	cid := storeReady(t, f.srv.st, "many problems", 0, ps, []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}, 2,
		func(run int, p store.Problem, i int) bool { return (p.Idx+run+i)%3 == 0 }).ID
	get := func(enc string) (*http.Response, []byte) {
		req, _ := http.NewRequest("GET", fmt.Sprintf("%s/api/v1/comparisons/%d/report", f.srv.url, cid), nil)
		req.Header.Set("Authorization", "Bearer "+f.acc["viewer"].Token)
		req.Header.Set("Accept-Encoding", enc) // set by hand: the client then leaves the body as sent
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r io.Reader = resp.Body
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	plain, pb := get("identity")
	zipped, zb := get("gzip")
	if plain.StatusCode != 200 || zipped.StatusCode != 200 {
		t.Fatalf("HTTP %d and %d", plain.StatusCode, zipped.StatusCode)
	}
	if zipped.Header.Get("Content-Encoding") != "gzip" || plain.Header.Get("Content-Encoding") != "" {
		t.Errorf("encodings %q and %q", plain.Header.Get("Content-Encoding"), zipped.Header.Get("Content-Encoding"))
	}
	if string(pb) != string(zb) {
		t.Fatalf("plain and gzip bodies differ (%d and %d bytes)", len(pb), len(zb))
	}
	var rep struct {
		Problems int `json:"problems"`
		Models   []struct {
			Counts []json.RawMessage `json:"counts"`
		} `json:"models"`
	}
	if err := json.Unmarshal(pb, &rep); err != nil {
		t.Fatalf("streamed report: %v", err)
	}
	if rep.Problems != probs || len(rep.Models) != 2 || len(rep.Models[1].Counts) != probs {
		t.Errorf("report of %d problems, %d models", rep.Problems, len(rep.Models))
	}
}
