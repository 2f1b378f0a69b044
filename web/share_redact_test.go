package web_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web"
)

// TestSharedPagesShowOnlyWhatTheLinkNames: an editor overrides a sample's
// verdict with a note and writes the comparison's notes. Every GET route
// under /s/{token} (walked from the router, so a new one is covered) is
// fetched through links with and without "notes": no account's email is on
// any of them, and the override note and the comparison notes appear only
// through a link with "notes".
func TestSharedPagesShowOnlyWhatTheLinkNames(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const overrideNote, comparisonNote = "private-override-note-731", "private-comparison-note-913"
	if _, err := f.srv.st.OverrideSample(ctx, store.SampleOverride{ComparisonID: f.cid, RunID: f.rid, ProblemID: f.pid,
		SampleIndex: 1, Status: store.SampleCorrect, UserID: f.acc["editor"].ID, Note: overrideNote}); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.st.SetNote(ctx, f.cid, comparisonNote, f.acc["editor"].ID); err != nil {
		t.Fatal(err)
	}
	// (Sample 1 made correct: p0 stays base-only, so the link shows it.)
	// The audit log names the sample by its model, not "run 6".
	if es, err := f.srv.st.Audit(ctx, f.cid, f.pid); err != nil || len(es) != 1 || es[0].Target != "model base sample #1" {
		t.Errorf("audit of the override %+v (%v): want the target \"model base sample #1\"", es, err)
	}
	var patterns []string
	h := web.New(nil, nil, web.Config{JobsUI: http.NotFoundHandler()}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err := chi.Walk(h.(chi.Routes), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if method == "GET" && strings.HasPrefix(pattern, "/s/") {
			patterns = append(patterns, strings.ReplaceAll(pattern, "/*/", "/"))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(patterns) < 5 {
		t.Fatalf("walked %d share routes: %v", len(patterns), patterns)
	}
	// A collection's link shows no email either.
	if code, body := get(t, f.srv.url+"/s/"+f.w[worldA].ktoken+"/"); code != 200 || strings.Contains(body, "@reach.test") {
		t.Errorf("collection link: HTTP %d, email shown = %v", code, strings.Contains(body, "@reach.test"))
	}
	fill := strings.NewReplacer("{pid}", fmt.Sprint(f.pid), "{rid}", fmt.Sprint(f.rid), "{idx}", "0", "{chart}", "crossover.json", "{model}", "0")
	for _, notes := range []bool{false, true} {
		_, token := shareToken(t, f.srv.st, store.ShareLink{ComparisonID: f.cid, ShowTexts: true, ShowNotes: notes})
		sawNote := map[string]bool{}
		for _, p := range patterns {
			path := fill.Replace(strings.Replace(p, "{token}", token, 1))
			code, body := get(t, f.srv.url+path)
			if code != 200 {
				t.Errorf("notes=%v GET %s: HTTP %d", notes, p, code)
			}
			if resp, err := http.Head(f.srv.url + path); err != nil || resp.StatusCode != 200 {
				t.Errorf("HEAD %s: %v %v, want 200 as for GET", p, resp.StatusCode, err)
			} else {
				resp.Body.Close()
			}
			if strings.Contains(body, "@reach.test") {
				t.Errorf("notes=%v GET %s shows an account's email", notes, p)
			}
			sawNote[overrideNote] = sawNote[overrideNote] || strings.Contains(body, overrideNote)
			sawNote[comparisonNote] = sawNote[comparisonNote] || strings.Contains(body, comparisonNote)
			if strings.Contains(p, "/problems/{pid}") && !strings.Contains(p, "/text") && !strings.Contains(body, "overridden") {
				t.Errorf("notes=%v: the shared problem page does not say the verdict was overridden", notes)
			}
		}
		for note, seen := range sawNote {
			if seen != notes {
				t.Errorf("link with notes=%v: %q shown = %v", notes, note, seen)
			}
		}
	}
}
