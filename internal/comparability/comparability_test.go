package comparability

import (
	"slices"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	base := Model{Name: "base", Settings: map[string]string{
		"temperature": "0.6", "top_p": "0.95", "max_gen_toks": "4096", "until": `["</s>", "Question:"]`,
		"template": "qwen-boxed", "grader": "Reach's verifier (strict)", "n": "8"}}
	rl := Model{Name: "rl", Settings: map[string]string{
		"generation_kwargs.temperature": "1.0", "top_p": "0.950", "max_new_tokens": "4096", "stop": `["</s>","Question:"]`,
		"prompt_template": `"chat"`, "grader": "Reach's verifier (strict)", "n": "8", "system_message": "You are helpful."}}
	r := Check([]Model{base, rl})
	if r.Alike {
		t.Fatal("different temperature and template called alike")
	}
	var keys []string
	for _, d := range r.Differences {
		keys = append(keys, d.Key)
	}
	if !slices.Equal(keys, []string{"temperature", "template"}) {
		t.Fatalf("differences %v, want temperature and template", keys)
	}
	if got := r.Differences[0].Text(); got != "temperature: base 0.6, rl 1" {
		t.Errorf("text %q", got)
	}
	if got := r.Differences[1].Text(); got != "prompt template: base qwen-boxed, rl chat" {
		t.Errorf("text %q", got)
	}
	// 0.95 = 0.950, 4096 under two names, stop lists with and without spaces, one grader, one n.
	for _, label := range []string{"top-p", "token budget (max new tokens)", "stop sequences", "grader", "samples per problem (n)"} {
		if !slices.Contains(r.Same, label) {
			t.Errorf("%s not in the same settings %v", label, r.Same)
		}
	}
	if len(r.Partial) != 1 || r.Partial[0].Key != "system_prompt" || r.Partial[0].Values[0].Value != "unknown" || r.Partial[0].Values[0].Known {
		t.Errorf("partial %+v, want the system prompt unknown for base", r.Partial)
	}
	if !slices.Contains(r.Unknown, "min-p") || !slices.Contains(r.Unknown, "dataset") {
		t.Errorf("unknown %v", r.Unknown)
	}
}

func TestCheckAlikeAndDeterministic(t *testing.T) {
	m := map[string]string{"temperature": "0.6", "TEMP": "0.7", "top_p": "1"}
	a := Check([]Model{{Name: "a", Settings: m}, {Name: "b", Settings: map[string]string{"temperature": "6e-1", "top_p": "1.0"}}})
	if !a.Alike || len(a.Differences) != 0 {
		t.Fatalf("alike settings reported as %+v", a.Differences)
	}
	// Two names for one setting: the first alias wins, every time.
	for range 20 {
		v, _ := lookup(Settings[0], m)
		if v != "0.6" {
			t.Fatalf("temperature read as %s", v)
		}
	}
	if r := Check([]Model{{Name: "only"}}); !r.Alike {
		t.Error("one model: want alike")
	}
	long := strings.Repeat("x", 200)
	d := Difference{Label: "system prompt", Values: []Value{{Model: "a", Value: long, Known: true}, {Model: "b", Value: "y", Known: true}}}
	if txt := d.Text(); len([]rune(txt)) > 120 || !strings.Contains(txt, "…") {
		t.Errorf("long value not clipped: %d runes", len([]rune(txt)))
	}
}
