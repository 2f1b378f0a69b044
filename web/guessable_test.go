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
