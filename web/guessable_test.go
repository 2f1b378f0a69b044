package web_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// A comparison whose every problem is guessable offers no "Exclude
// guessable" button: it led to a 409 page with no figures (a trial with
// answers 4, 1 and 9). One with a problem left still offers it.
func TestExcludeGuessableOnlyWhenSomethingIsLeft(t *testing.T) {
	f := newFixture(t)
	// The fixture's references are 2 and 3: both guessable.
	code, body := f.page("viewer", fmt.Sprintf("/comparisons/%d", f.cid))
	if code != 200 {
		t.Fatalf("comparison page: %d", code)
	}
	if strings.Contains(body, `id="toggle-guessable"`) || !strings.Contains(body, "Every problem is guessable (2 problems)") {
		t.Errorf("every problem guessable: want no button and the note; the bar reads %q", section(body, `id="variant-bar"`))
	}
	mixed := storeReady(t, f.srv.st, "mixed", f.project, []store.Problem{
		{Idx: 0, Key: "p0", Statement: "What is 1+1?", Reference: "2"},
		{Idx: 1, Key: "p1", Statement: "Half of one?", Reference: `\frac{1}{2}`},
	}, []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}, 4, baseOnlyOnP0)
	code, body = f.page("viewer", fmt.Sprintf("/comparisons/%d", mixed.ID))
	if code != 200 || !strings.Contains(body, `id="toggle-guessable"`) || !strings.Contains(body, "1 guessable problem included") {
		t.Errorf("one of two guessable: %d, want the button; the bar reads %q", code, section(body, `id="variant-bar"`))
	}
}

// section is up to 600 bytes of body from marker, for messages.
func section(body, marker string) string {
	i := strings.Index(body, marker)
	if i < 0 {
		return "(no " + marker + ")"
	}
	return body[i:min(len(body), i+600)]
}

// A live share link's 404 for a problem its comparison does not have, or
// for texts it does not show, says the link works and links back to it;
// an unknown link is still "does not exist" (a trial read that its link
// was revoked when it asked for problem 600).
func TestSharedMissingIsNotGone(t *testing.T) {
	f := newFixture(t)
	texts, plain := f.w[worldA].texts, f.w[worldA].token
	for _, c := range []struct{ path, want string }{
		{fmt.Sprintf("/s/%s/problems/%d", texts, f.pid+100000), "has no such problem"},
		{fmt.Sprintf("/s/%s/problems/%d", plain, f.pid), "does not show problems and their completions"},
	} {
		code, body := f.page("anonymous", c.path)
		if code != 404 || !strings.Contains(body, c.want) || strings.Contains(body, "revoked") || !strings.Contains(body, `href="/s/`) {
			t.Errorf("%s: %d, want 404 saying %q and linking back; got %q", c.path, code, c.want, section(body, "<h1>"))
		}
	}
	if code, body := f.page("anonymous", fmt.Sprintf("/s/rsh_nosuchlink/problems/%d", f.pid)); code != 404 || !strings.Contains(body, "does not exist, was revoked or has expired") {
		t.Errorf("an unknown link: %d, %q", code, section(body, "<h1>"))
	}
}
