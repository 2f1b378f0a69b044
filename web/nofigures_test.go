package web_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A ready comparison one of whose models has no samples (every request to
// its endpoint failed, or sampling was cancelled before any answer) has no
// figures: its page, report and chart data say why (409), not a server
// error, and a collection holding it still draws the others.
func TestReadyComparisonWithoutFigures(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	st := f.srv.st
	cid, _, _ := readyComparison(t, st, "no figures", f.project, "What is 2+2?")
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	rl := c.Runs[1].ID
	if _, err := st.Pool().Exec(ctx, `DELETE FROM samples WHERE run_id = $1`, rl); err != nil {
		t.Fatal(err)
	}
	if err := st.AggregateRun(ctx, rl); err != nil {
		t.Fatal(err)
	}
	const why = "no samples from" // then the model, quoted (HTML- or JSON-escaped)
	for _, path := range []string{fmt.Sprintf("/comparisons/%d", cid), fmt.Sprintf("/api/v1/comparisons/%d/report", cid),
		fmt.Sprintf("/comparisons/%d/data/crossover.csv", cid)} {
		if code, body := f.page("editor", path); code != 409 || !strings.Contains(body, why) {
			t.Errorf("GET %s: HTTP %d %.300s; want 409 saying %s", path, code, body, why)
		}
	}
	kid, err := st.CreateCollection(ctx, f.project, "with one empty", 0)
	if err == nil {
		err = st.AddToCollection(ctx, kid, f.cid)
	}
	if err == nil {
		err = st.AddToCollection(ctx, kid, cid)
	}
	if err != nil {
		t.Fatal(err)
	}
	code, body := f.page("editor", fmt.Sprintf("/collections/%d", kid))
	if code != 200 || !strings.Contains(body, "not drawn: no figures: "+why) || !strings.Contains(body, "echarts.init") {
		t.Errorf("collection: HTTP %d, want the other comparison drawn and this one not, saying why: %.500s", code, body)
	}
}
