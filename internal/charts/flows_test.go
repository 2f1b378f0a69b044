package charts

import (
	"strings"
	"testing"
)

func TestFlows(t *testing.T) {
	s, err := Flows("cmp_1", FlowsInput{Title: "flows", Steps: []FlowStep{
		{Label: "step 100", Gained: 1, Lost: 2, URLs: map[string]string{"gained": "#flow-100-gained", "lost": "#flow-100-lost"}},
		{Label: "step 300", Gained: 2, Regained: 2, Lost: 0, URLs: map[string]string{"gained": "#flow-300-gained", "regained": "#flow-300-gained"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	opt := string(s.Option)
	// Newly solved 1, 0; regained 0, 2; lost drawn below zero; a bar of 0 takes no click.
	for _, want := range []string{`"data":[{"url":"#flow-100-gained","value":1},{"value":0}]`, `{"url":"#flow-300-gained","value":2}`,
		`{"url":"#flow-100-lost","value":-2}`, `"stack":"flow"`} {
		if !strings.Contains(opt, want) {
			t.Errorf("option lacks %s:\n%s", want, opt)
		}
	}
	if !strings.Contains(string(s.HTML), "window.location.assign(p.data.url)") {
		t.Error("no click handler")
	}
	for _, bad := range []FlowsInput{{}, {Steps: []FlowStep{{Label: ""}}}, {Steps: []FlowStep{{Label: "s", Gained: 1, Regained: 2}}}, {Steps: []FlowStep{{Label: "s", Lost: -1}}}} {
		if _, err := Flows("x", bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
