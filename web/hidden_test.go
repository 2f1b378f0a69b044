package web_test

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// hiddenComparison stores a ready comparison like readyComparison whose
// name, model names, dataset and problem keys hold hidden characters.
func hiddenComparison(t *testing.T, st *store.Store, name, base, other, key string) (cid, pid int64) {
	t.Helper()
	c := storeReady(t, st, name, 0, twoProblems(key, "What is 1+1?"),
		[]store.NewRun{{ModelName: base, Role: "base"}, {ModelName: other, Role: "rl"}}, 4, baseOnlyOnP0)
	return c.ID, c.Ps[0].ID
}

var renameValue = regexp.MustCompile(`<input type="text" name="name"[^>]*>`)

// Names holding a right-to-left override (U+202E) or a zero-width space
// (U+200B) are printed with the characters shown as markers, never raw, on
// the home, comparison, problem and share pages and the share list.
func TestHiddenCharactersShown(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cid, pid := hiddenComparison(t, srv.st, "report\u202Efdp.exe", "base\u200B-7b", "rl\u202E-zero", "p\u200B0")
	_, token := shareToken(t, srv.st, store.ShareLink{ComparisonID: cid, ShowTexts: true, Label: "for\u202Eyou", CreatedBy: admin.ID})
	def, err := srv.st.DefaultProjectID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	coll, err := srv.st.CreateCollection(context.Background(), def, "set\u202Eof", admin.ID)
	if err == nil {
		err = srv.st.AddToCollection(context.Background(), coll, cid)
	}
	if err != nil {
		t.Fatal(err)
	}
	// A review's audit entry names the pair's other model (the audit page
	// and the problem page's history printed it raw).
	if err := srv.st.SetReview(context.Background(), store.Review{ComparisonID: cid, ProblemID: pid, Verdict: store.VerdictGenuine, ReviewerID: admin.ID}); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{
		"home":              "/",
		"comparison":        fmt.Sprintf("/comparisons/%d", cid),
		"problem":           fmt.Sprintf("/comparisons/%d/problems/%d", cid, pid),
		"shares":            fmt.Sprintf("/comparisons/%d/shares", cid),
		"share":             "/s/" + token,
		"shared problem":    fmt.Sprintf("/s/%s/problems/%d", token, pid),
		"shared embed":      "/s/" + token + "/embed",
		"debate":            fmt.Sprintf("/comparisons/%d/debate", cid),
		"audit":             fmt.Sprintf("/comparisons/%d/audit", cid),
		"delete":            fmt.Sprintf("/comparisons/%d/delete", cid),
		"notes":             fmt.Sprintf("/comparisons/%d/notes", cid),
		"reverify":          fmt.Sprintf("/comparisons/%d/reverify", cid),
		"collection":        fmt.Sprintf("/collections/%d", coll),
		"collections":       "/collections",
		"delete collection": fmt.Sprintf("/collections/%d/delete", coll),
	}
	for name, path := range pages {
		var c = admin.Cookie
		if strings.HasPrefix(path, "/s/") {
			c = nil
		}
		code, _, page := send(t, "GET", srv.url+path, c, nil)
		if code != 200 {
			t.Errorf("%s page: HTTP %d", name, code)
			continue
		}
		// A rename form's field holds the name as it is, so that saving
		// it does not change it.
		page = renameValue.ReplaceAllString(page, "")
		for _, r := range []rune{0x202E, 0x200B} {
			if n := strings.Count(page, string(r)); n > 0 {
				i := strings.IndexRune(page, r)
				t.Errorf("%s page: %d raw U+%04X, first in …%s…", name, n, r, page[max(0, i-120):min(len(page), i+60)])
			}
		}
		// A templ component call written where templ reads text (after a quotation mark) is
		// printed as its source: the delete pages said Delete “@Name(v.C.Name)”?
		if strings.Contains(page, "@Name(") {
			i := strings.Index(page, "@Name(")
			t.Errorf("%s page prints a component call as text: …%s…", name, page[max(0, i-60):min(len(page), i+40)])
		}
		if name != "debate" && !strings.Contains(page, "⟨U+202E⟩") { // debate: a fragment without names
			t.Errorf("%s page: no ⟨U+202E⟩ marker", name)
		}
		if (name == "comparison" || name == "problem" || name == "shared problem") && !strings.Contains(page, "⟨U+200B⟩") {
			t.Errorf("%s page: no ⟨U+200B⟩ marker", name)
		}
	}
}

// An image in a comparison's notes is shown as a link to it, not as <img>
// (the CSP blocked it and it showed broken), on the comparison page and a
// share page with notes.
func TestNoteImagesAreLinks(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cid, _, _ := readyComparison(t, srv.st, "noted", 0, "What is 1+1?")
	note := "Curve: ![the curve](https://images.example/curve.png)"
	if err := srv.st.SetNote(context.Background(), cid, note, admin.ID); err != nil {
		t.Fatal(err)
	}
	_, token := shareToken(t, srv.st, store.ShareLink{ComparisonID: cid, ShowNotes: true})
	for name, p := range map[string]struct {
		path string
		c    bool
	}{"comparison": {fmt.Sprintf("/comparisons/%d", cid), true}, "share": {"/s/" + token, false}} {
		c := admin.Cookie
		if !p.c {
			c = nil
		}
		code, _, page := send(t, "GET", srv.url+p.path, c, nil)
		if code != 200 {
			t.Errorf("%s page: HTTP %d", name, code)
			continue
		}
		if strings.Contains(page, "<img") {
			t.Errorf("%s page: the note's image is an <img>", name)
		}
		if !strings.Contains(page, `href="https://images.example/curve.png"`) || !strings.Contains(page, "image: the curve</a>") {
			t.Errorf("%s page: no link to the note's image", name)
		}
	}
}

// Names go through a templ component; what follows one on the same line
// must still show (templ reads "@Name(x) { … }" as children and dropped
// them: a test list's count, a sorted column's arrow).
func TestTextAroundNamesStays(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	cid, _, _ := readyComparison(t, srv.st, "plain", 0, "What is 1+1?")
	code, _, page := send(t, "GET", srv.url+fmt.Sprintf("/comparisons/%d?sort=p&dir=asc", cid), admin.Cookie, nil)
	if code != 200 {
		t.Fatalf("comparison page: HTTP %d", code)
	}
	text := html.UnescapeString(regexp.MustCompile(`(?s)<script.*?</script>|<[^>]*>`).ReplaceAllString(page, ""))
	text = regexp.MustCompile(`\s+`).ReplaceAllString(text, " ")
	for _, want := range []string{"Base-only 1 (0 with p < 0.05, unadjusted)", "rl-only 0 (0 with p < 0.05, unadjusted)", "p (Fisher) ▲",
		"base base model", "base vs rl: base-only 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("the comparison page's text lacks %q", want)
		}
	}
}
