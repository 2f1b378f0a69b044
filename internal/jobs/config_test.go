package jobs

import (
	"encoding/json"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

func TestSamplingConfigForRun(t *testing.T) {
	base := DefaultSamplingConfig() // qwen-boxed: chat markup written out
	cases := []struct {
		name     string
		run      store.Run
		template string
		stop     bool // the template's stop strings are set
	}{
		{"completions endpoint keeps the comparison's template",
			store.Run{Endpoint: store.Endpoint{Style: "completions"}}, "qwen-boxed", false},
		{"chat endpoint gets the chat preset instead of written-out markup",
			store.Run{Endpoint: store.Endpoint{Style: "chat"}}, "chat", false},
		{"a model's own template wins",
			store.Run{Endpoint: store.Endpoint{Style: "completions"}, SamplingOverride: mustJSON(t, ModelOverride{Template: "gsm8k"})}, "gsm8k", true},
		{"a chat template override stays on a chat endpoint",
			store.Run{Endpoint: store.Endpoint{Style: "chat"}, SamplingOverride: mustJSON(t, ModelOverride{Template: "chat"})}, "chat", false},
	}
	for _, tc := range cases {
		got, err := base.ForRun(tc.run)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Template != tc.template || (len(got.Stop) > 0) != tc.stop {
			t.Errorf("%s: template %q stop %q; want %q (stop set: %v)", tc.name, got.Template, got.Stop, tc.template, tc.stop)
		}
		if got.N != base.N || got.Temperature != base.Temperature {
			t.Errorf("%s: the override changed n or temperature", tc.name)
		}
	}
	bad := store.Run{SamplingOverride: json.RawMessage(`{"template": 3}`)}
	if _, err := base.ForRun(bad); err == nil {
		t.Error("a malformed override was accepted")
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
