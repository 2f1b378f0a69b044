package sampling

import (
	"fmt"
	"slices"
	"strings"
	"text/template"
)

// Template is a prompt template in Go text/template syntax over PromptData:
// {{.Problem}}, {{.Subject}}, {{.Level}}. Chat says the rendered text is meant
// as a chat user message (Endpoint.Style "chat"); otherwise it is a raw
// completions prompt that already contains any chat markup. Stop lists stop
// strings that suit the template (for the sampling config's default), if any.
type Template struct {
	Name string
	Text string
	Chat bool
	Stop []string
}

// PromptData is what a template sees of one problem.
type PromptData struct {
	Problem string // the statement, as in the dataset
	Subject string // e.g. "Algebra"; may be empty
	Level   string // e.g. "Level 5" or "3"; may be empty
}

const boxedInstruction = `Please reason step by step, and put your final answer within \boxed{}.`

// presets are the built-in templates; Preset documents each.
var presets = map[string]Template{
	"qwen-boxed": {
		Name: "qwen-boxed",
		Text: "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n" +
			"<|im_start|>user\n{{.Problem}}\n" + boxedInstruction + "<|im_end|>\n" +
			"<|im_start|>assistant\n",
		Stop: []string{"<|im_end|>", "<|endoftext|>"},
	},
	"qwen25-math-cot": {
		Name: "qwen25-math-cot",
		Text: "<|im_start|>system\n" + boxedInstruction + "<|im_end|>\n" +
			"<|im_start|>user\n{{.Problem}}<|im_end|>\n" +
			"<|im_start|>assistant\n",
		Stop: []string{"<|im_end|>", "<|endoftext|>"},
	},
	"chat": {
		Name: "chat",
		Text: "{{.Problem}}\n" + boxedInstruction,
		Chat: true,
	},
	"gsm8k": {
		Name: "gsm8k",
		Text: "Question: {{.Problem}}\nAnswer:",
		Stop: []string{"\n\nQuestion:"},
	},
	"raw": {
		Name: "raw",
		Text: "{{.Problem}}",
	},
}

// PresetNames lists the built-in templates, the default (qwen-boxed) first.
func PresetNames() []string {
	return []string{"qwen-boxed", "qwen25-math-cot", "chat", "gsm8k", "raw"}
}

// Preset returns the built-in template called name (see PresetNames):
//
//   - qwen-boxed: the zero-shot "qwen-boxed" prompt of the Qwen2.5-Math
//     evaluation harness (QwenLM/Qwen2.5-Math evaluation/utils.py
//     PROMPT_TEMPLATES, reused by limit-of-RLVR and SimpleRL), Qwen chat markup
//     for a completions endpoint; system "You are a helpful assistant.", the
//     boxed instruction after the problem.
//   - qwen25-math-cot: the same harness's "qwen25-math-cot": the boxed
//     instruction as the system message, the bare problem as the user turn.
//   - chat: one user message, the problem then the boxed instruction, for a
//     chat endpoint that applies the model's own chat template.
//   - gsm8k: "Question: …\nAnswer:" zero-shot, the harness's "cot" prompt
//     (also lm-evaluation-harness's GSM8K format), stopping at the next question.
//   - raw: the problem alone.
func Preset(name string) (Template, error) {
	t, ok := presets[name]
	if !ok {
		return Template{}, fmt.Errorf("sampling: no prompt template preset %q (have %s)", name, strings.Join(PresetNames(), ", "))
	}
	t.Stop = slices.Clone(t.Stop)
	return t, nil
}

// Render fills t with d. Unknown fields ({{.Foo}}) and syntax errors are
// errors naming the template; the problem text is inserted verbatim (no
// escaping, and braces in it are not template syntax).
func Render(t Template, d PromptData) (string, error) {
	tmpl, err := template.New(t.Name).Option("missingkey=error").Parse(t.Text)
	if err != nil {
		return "", fmt.Errorf("prompt template %q: %w", t.Name, err)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, d); err != nil {
		return "", fmt.Errorf("prompt template %q: %w", t.Name, err)
	}
	return b.String(), nil
}
