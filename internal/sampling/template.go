package sampling

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"
	"time"
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

// Template limits: a template's text, and the prompt it renders (about
// 64k tokens, far above any study's prompt, far below what would make a
// page or a request absurd).
const (
	MaxTemplateBytes = 64 << 10
	MaxPromptBytes   = 256 << 10
	renderBudget     = 250 * time.Millisecond
)

// templateFuncs are the functions a template may call, besides the fields
// of PromptData: comparisons and logic for conditional instructions
// ({{if eq .Subject "Geometry"}}…{{end}}) and len. printf is not among
// them ({{printf "%0999999999d" 1}} builds a gigabyte before writing it),
// nor call, index, slice, print or the escapers.
var templateFuncs = []string{"and", "or", "not", "eq", "ne", "lt", "le", "gt", "ge", "len"}

var promptFields = []string{"Problem", "Subject", "Level"}

// Parse checks a template and returns it parsed. Beyond Go's syntax it
// enforces a restricted language whose rendering is linear in the
// template's size plus what its fields insert: text, {{.Problem}},
// {{.Subject}}, {{.Level}}, if/else/with over them, comments and the
// functions in templateFuncs. range, template, define and block, variables
// and any other function are refused with the reason; so is a text over
// MaxTemplateBytes.
func Parse(t Template) (*template.Template, error) { return parseWith(t, promptFields) }

// parseWith is Parse with the fields a template may name.
func parseWith(t Template, fields []string) (*template.Template, error) {
	fail := func(format string, args ...any) (*template.Template, error) {
		return nil, fmt.Errorf("prompt template %q: %s", t.Name, fmt.Sprintf(format, args...))
	}
	if len(t.Text) > MaxTemplateBytes {
		return fail("%d bytes; at most %d", len(t.Text), MaxTemplateBytes)
	}
	// Every builtin is overridden: what is not allowed fails to parse below.
	funcs := template.FuncMap{}
	for _, f := range []string{"call", "html", "index", "slice", "js", "print", "printf", "println", "urlquery"} {
		funcs[f] = func(...any) (string, error) { return "", errors.New("not allowed") }
	}
	tmpl, err := template.New(t.Name).Option("missingkey=error").Funcs(funcs).Parse(t.Text)
	if err != nil {
		return nil, fmt.Errorf("prompt template %q: %w", t.Name, err)
	}
	if len(tmpl.Templates()) > 1 {
		return fail("define and block are not allowed")
	}
	if tmpl.Tree == nil || tmpl.Tree.Root == nil {
		return tmpl, nil
	}
	if err := (checker{fields}).node(tmpl.Tree.Root); err != nil {
		return fail("%v", err)
	}
	return tmpl, nil
}

// checker walks a parse tree and refuses what Parse does not allow; fields
// are the data fields a template may name.
type checker struct{ fields []string }

func (c checker) node(n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, x := range n.Nodes {
			if err := c.node(x); err != nil {
				return err
			}
		}
	case *parse.TextNode, *parse.CommentNode:
	case *parse.ActionNode:
		return c.pipe(n.Pipe)
	case *parse.IfNode:
		return c.branch(&n.BranchNode)
	case *parse.WithNode:
		return c.branch(&n.BranchNode)
	case *parse.RangeNode:
		return errors.New("range is not allowed (a prompt needs no loop)")
	case *parse.TemplateNode:
		return errors.New("template is not allowed")
	case *parse.BreakNode, *parse.ContinueNode:
		return errors.New("break and continue are not allowed")
	default:
		return fmt.Errorf("%s is not allowed", n)
	}
	return nil
}

func (c checker) branch(b *parse.BranchNode) error {
	if err := c.pipe(b.Pipe); err != nil {
		return err
	}
	if err := c.node(b.List); err != nil {
		return err
	}
	if b.ElseList != nil {
		return c.node(b.ElseList)
	}
	return nil
}

func (c checker) pipe(p *parse.PipeNode) error {
	if p == nil {
		return nil
	}
	if len(p.Decl) > 0 {
		return errors.New("variables are not allowed")
	}
	for _, cmd := range p.Cmds {
		for _, a := range cmd.Args {
			if err := c.arg(a); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c checker) arg(a parse.Node) error {
	switch a := a.(type) {
	case *parse.FieldNode:
		if len(a.Ident) != 1 || !slices.Contains(c.fields, a.Ident[0]) {
			return fmt.Errorf("field %s: use .%s", a, strings.Join(c.fields, ", ."))
		}
	case *parse.IdentifierNode:
		if !slices.Contains(templateFuncs, a.Ident) {
			return fmt.Errorf("function %s is not allowed (allowed: %s)", a.Ident, strings.Join(templateFuncs, ", "))
		}
	case *parse.StringNode, *parse.NumberNode, *parse.BoolNode, *parse.DotNode:
	case *parse.PipeNode:
		return c.pipe(a)
	default:
		return fmt.Errorf("%s is not allowed", a)
	}
	return nil
}

// Render fills t with d. Unknown fields ({{.Foo}}), syntax errors and what
// Parse refuses are errors naming the template; so is a prompt over
// MaxPromptBytes (rendering stops there) or one that takes longer than a
// quarter second. The problem text is inserted verbatim (no escaping, and
// braces in it are not template syntax).
func Render(t Template, d PromptData) (string, error) {
	tmpl, err := Parse(t)
	if err != nil {
		return "", err
	}
	w := &budgetWriter{max: MaxPromptBytes, deadline: time.Now().Add(renderBudget)}
	if err := tmpl.Execute(w, d); err != nil {
		if errors.Is(err, errPromptTooLong) {
			return "", fmt.Errorf("prompt template %q: the prompt is over %d KiB; at most %d KiB", t.Name, MaxPromptBytes>>10, MaxPromptBytes>>10)
		}
		return "", fmt.Errorf("prompt template %q: %w", t.Name, err)
	}
	return w.b.String(), nil
}

var (
	errPromptTooLong = errors.New("prompt too long")
	errPromptSlow    = errors.New("rendering took too long")
)

// budgetWriter stops a rendering at max bytes or after its deadline.
type budgetWriter struct {
	b        strings.Builder
	max      int
	deadline time.Time
}

func (w *budgetWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.max {
		return 0, errPromptTooLong
	}
	if time.Now().After(w.deadline) {
		return 0, errPromptSlow
	}
	return w.b.Write(p)
}
