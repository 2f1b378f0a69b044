package sampling

import (
	"strings"
	"testing"
)

func TestRenderPresets(t *testing.T) {
	problem := `Let $f(x) = \frac{1}{x}$. Find {{f(2)}}.`
	want := map[string]string{
		"qwen-boxed": "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" +
			"<|im_start|>user\nLet $f(x) = \\frac{1}{x}$. Find {{f(2)}}.\nPlease reason step by step, and put your final answer within \\boxed{}.<|im_end|>\n" +
			"<|im_start|>assistant\n",
		"qwen25-math-cot": "<|im_start|>system\nPlease reason step by step, and put your final answer within \\boxed{}.<|im_end|>\n" +
			"<|im_start|>user\nLet $f(x) = \\frac{1}{x}$. Find {{f(2)}}.<|im_end|>\n" +
			"<|im_start|>assistant\n",
		"chat":  "Let $f(x) = \\frac{1}{x}$. Find {{f(2)}}.\nPlease reason step by step, and put your final answer within \\boxed{}.",
		"gsm8k": "Question: Let $f(x) = \\frac{1}{x}$. Find {{f(2)}}.\nAnswer:",
		"raw":   problem,
	}
	for _, name := range PresetNames() {
		tmpl, err := Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Render(tmpl, PromptData{Problem: problem})
		if err != nil {
			t.Fatal(err)
		}
		if got != want[name] {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want[name])
		}
	}
	if c, _ := Preset("chat"); !c.Chat {
		t.Error("chat preset is not marked Chat")
	}
}

func TestRenderUsesSubjectLevelAndRejectsUnknownFields(t *testing.T) {
	got, err := Render(Template{Name: "t", Text: "[{{.Subject}} / {{.Level}}] {{.Problem}}"}, PromptData{Problem: "p", Subject: "Algebra", Level: "Level 5"})
	if err != nil || got != "[Algebra / Level 5] p" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := Render(Template{Name: "bad", Text: "{{.Question}}"}, PromptData{}); err == nil || !strings.Contains(err.Error(), `prompt template "bad"`) {
		t.Errorf("unknown field: %v", err)
	}
	if _, err := Render(Template{Name: "bad", Text: "{{.Problem"}, PromptData{}); err == nil {
		t.Error("syntax error accepted")
	}
	if _, err := Preset("nope"); err == nil {
		t.Error("unknown preset accepted")
	}
}

// Templates are a restricted language that renders in time linear in its
// size: what could loop, recurse or build huge strings is refused with the
// reason, and a prompt over MaxPromptBytes is an error, not a 100 MB string.
func TestTemplateBudget(t *testing.T) {
	for text, why := range map[string]string{
		"{{range 1000000}}Think step by step. {{end}}{{.Problem}}":                  "range is not allowed",
		"{{range 1000}}{{range 1000}}{{range 1000}}{{end}}{{end}}{{end}}":           "range is not allowed",
		`{{printf "%0999999999d" 1}}`:                                               "function printf is not allowed",
		`{{define "x"}}{{template "x"}}{{end}}{{template "x"}}`:                     "not allowed",
		"{{$p := .Problem}}{{$p}}":                                                  "variables are not allowed",
		"{{call .Problem}}":                                                         "function call is not allowed",
		"{{index .Problem 0}}":                                                      "function index is not allowed",
		"{{.Problem.Foo}}":                                                          "field .Problem.Foo",
		"{{$.Problem}}":                                                             "not allowed",
		strings.Repeat("x", MaxTemplateBytes+1):                                     "at most 65536",
		strings.Repeat("{{.Problem}}", 300):                                         "the prompt is over 256 KiB",
		"{{if true}}" + strings.Repeat("{{.Problem}}{{.Problem}}", 200) + "{{end}}": "the prompt is over 256 KiB",
	} {
		got, err := Render(Template{Name: "custom", Text: text}, PromptData{Problem: strings.Repeat("p", 1000)})
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%.60q: %v (%d bytes), want an error containing %q", text, err, len(got), why)
		}
	}
	// What a prompt needs still works.
	got, err := Render(Template{Name: "custom", Text: `{{/* few-shot */}}Q: {{.Problem}}{{if eq .Subject "Geometry"}} Draw a figure.{{else if .Subject}} ({{.Subject}}){{end}}{{with .Level}} [{{.}}]{{end}}{{if gt (len .Problem) 3}}!{{end}}`},
		PromptData{Problem: "1+1?", Subject: "Geometry", Level: "Level 2"})
	if err != nil || got != "Q: 1+1? Draw a figure. [Level 2]!" {
		t.Errorf("allowed template: %q, %v", got, err)
	}
}

// BenchmarkRenderPreset is the cost of one prompt (qwen-boxed, a 1 KB
// problem), which every SampleJob pays.
func BenchmarkRenderPreset(b *testing.B) {
	tmpl, _ := Preset("qwen-boxed")
	d := PromptData{Problem: strings.Repeat("What is 2+2? ", 80)}
	for b.Loop() {
		if _, err := Render(tmpl, d); err != nil {
			b.Fatal(err)
		}
	}
}
