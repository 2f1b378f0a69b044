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
