package code

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// A harness turns a completion into the program that is run. Harnesses
// differ in how they treat the model's text, and the same completion can
// pass under one and fail under another; a samples file's labels are only
// reproduced with the harness that made them.
const (
	// HarnessHumanEval is openai/human-eval's check_correctness: the
	// program is prompt + completion + "\n" + test + "\n" +
	// "check(entry_point)". A completion holding a Markdown code fence (a
	// chat reply) is replaced by the fenced code first (rule
	// "fenced-block"); human-eval itself would fail it as a syntax error.
	HarnessHumanEval = "human-eval"
	// HarnessStripDocstrings is the harness of the human-eval fork that
	// graded the shipped Mistral/Zephyr samples
	// (bdytx5/humanEval_mistral_vs_zephyr, human_eval/execution.py): before
	// assembling the human-eval program it deletes every triple-quoted
	// string of the completion, replaces "END CODE" with a newline, and
	// indents a completion that starts with a word character by one tab.
	HarnessStripDocstrings = "strip-docstrings"
)

// Harnesses lists the harness names with a one-line description each.
var Harnesses = []struct{ Name, Description string }{
	{HarnessHumanEval, "openai/human-eval: prompt + completion + test + check(entry_point); fenced code of chat replies is taken out first"},
	{HarnessStripDocstrings, "the human-eval fork of the shipped Mistral/Zephyr samples: triple-quoted strings removed, a flush-left first line indented by a tab"},
}

// HarnessNames lists the harness names, comma-separated, for messages.
func HarnessNames() string {
	names := make([]string, len(Harnesses))
	for i, h := range Harnesses {
		names[i] = h.Name
	}
	return strings.Join(names, ", ")
}

// ValidHarness reports whether name is a known harness ("" is the default).
func ValidHarness(name string) bool {
	if name == "" {
		return true
	}
	for _, h := range Harnesses {
		if h.Name == name {
			return true
		}
	}
	return false
}

// program is an assembled program with the line ranges of its parts
// (1-based, inclusive), so that an error's line can be told to be in the
// completion or in the tests.
type program struct {
	src      string
	rule     string
	parts    []part
	testPart string // the name of the tests' part
}

type part struct {
	name       string // "prompt", "completion", "tests", "check"
	start, end int
}

func (p *program) add(name, text string) {
	start := strings.Count(p.src, "\n") + 1
	p.src += text
	end := strings.Count(p.src, "\n") + 1
	if strings.HasSuffix(text, "\n") {
		end--
	}
	if end < start {
		end = start
	}
	if name != "" { // a separator owns no line
		p.parts = append(p.parts, part{name: name, start: start, end: end})
	}
}

// partOf returns the part holding line and the line's number inside it.
func (p *program) partOf(line int) (string, int) {
	for i := len(p.parts) - 1; i >= 0; i-- {
		x := p.parts[i]
		if line >= x.start && line <= x.end {
			return x.name, line - x.start + 1
		}
	}
	return "", 0
}

// statement returns the statement starting at line n (1-based): the line
// and, while brackets stay open, the lines after it (at most 12), joined.
func (p *program) statement(n int) string {
	lines := strings.Split(p.src, "\n")
	if n < 1 || n > len(lines) {
		return ""
	}
	var out []string
	depth := 0
	for i := n - 1; i < len(lines) && i < n-1+12; i++ {
		l := strings.TrimSpace(lines[i])
		out = append(out, l)
		depth += bracketBalance(l)
		if depth <= 0 {
			break
		}
	}
	return strings.Join(out, " ")
}

// bracketBalance counts opening minus closing brackets outside string
// literals on one line (a rough count: enough to join a multi-line test).
func bracketBalance(line string) int {
	d := 0
	var quote rune
	escaped := false
	for _, r := range line {
		switch {
		case escaped:
			escaped = false
		case quote != 0:
			if r == '\\' {
				escaped = true
			} else if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#':
			return d
		case r == '(' || r == '[' || r == '{':
			d++
		case r == ')' || r == ']' || r == '}':
			d--
		}
	}
	return d
}

// assemble builds the program that grades completion on t.
func assemble(t Tests, harness, completion string) (program, error) {
	var p program
	switch t.Style {
	case StyleHumanEval:
		code, rule := completion, HarnessHumanEval
		switch harness {
		case "", HarnessHumanEval:
			if fenced, ok := extractFenced(completion, t.EntryPoint); ok {
				code, rule = fenced, "fenced-block"
				// A fenced block holds a whole function (or just its
				// body); after the prompt's complete stub either works.
				if !strings.HasPrefix(code, " ") && !strings.HasPrefix(code, "\t") {
					code = "\n" + code
				}
			}
		case HarnessStripDocstrings:
			code, rule = stripDocstrings(completion), HarnessStripDocstrings
		default:
			return p, fmt.Errorf("unknown harness %q", harness)
		}
		p.rule = rule
		p.add("prompt", t.Prompt)
		p.add("completion", code)
		p.add("", "\n")
		p.add("tests", t.Test)
		p.add("", "\n")
		p.add("check", "check("+t.EntryPoint+")\n")
		p.testPart = "tests"
	case StyleAsserts:
		code, rule := completion, "mbpp"
		if fenced, ok := extractFenced(completion, ""); ok {
			code, rule = fenced, "mbpp+fenced-block"
		}
		p.rule = rule
		p.add("completion", strings.TrimRight(code, "\n")+"\n")
		if strings.TrimSpace(t.Setup) != "" {
			p.add("setup", strings.TrimRight(t.Setup, "\n")+"\n")
		}
		p.add("tests", strings.Join(t.Asserts, "\n")+"\n")
		p.testPart = "tests"
	case StyleStdio:
		code, rule := completion, "stdio"
		if fenced, ok := extractFenced(completion, ""); ok {
			code, rule = fenced, "stdio+fenced-block"
		}
		p.rule = rule
		p.add("completion", code)
	default:
		return p, fmt.Errorf("unknown test style %q", t.Style)
	}
	return p, nil
}

var (
	tripleDouble = regexp.MustCompile(`(?s)""".*?"""`)
	tripleSingle = regexp.MustCompile(`(?s)'''.*?'''`)
)

// stripDocstrings applies HarnessStripDocstrings' rewriting. The fork's
// second pattern, (”'|""").*?(?=\1)\1, pairs either quote with itself;
// after the first pass no """ pair is left, so it removes ”' pairs only.
func stripDocstrings(c string) string {
	c = tripleDouble.ReplaceAllString(c, "")
	c = tripleSingle.ReplaceAllString(c, "")
	c = strings.ReplaceAll(c, "END CODE", "\n")
	if r := []rune(c); len(r) > 0 && (unicode.IsLetter(r[0]) || unicode.IsDigit(r[0]) || r[0] == '_') {
		c = "\t" + c
	}
	return c
}

// fence is one Markdown code block of a completion.
type fence struct {
	lang string
	code string
}

// extractFenced returns the code of a completion's Markdown code block: of
// the blocks labelled Python (or, if none is, of all blocks) the last one
// that defines entryPoint, else the last one. A block cut off by the
// length limit runs to the end of the text. ok is false without a fence.
func extractFenced(completion, entryPoint string) (string, bool) {
	var blocks []fence
	var cur *fence
	var body []string
	for _, line := range strings.Split(completion, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			if cur == nil {
				cur = &fence{lang: strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, "`")))}
				body = body[:0]
				continue
			}
			cur.code = strings.Join(body, "\n") + "\n"
			blocks = append(blocks, *cur)
			cur = nil
			continue
		}
		if cur != nil {
			body = append(body, line)
		}
	}
	if cur != nil && len(body) > 0 {
		cur.code = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, *cur)
	}
	if len(blocks) == 0 {
		return "", false
	}
	var py []fence
	for _, b := range blocks {
		switch b.lang {
		case "python", "py", "python3", "pycon", "python 3":
			py = append(py, b)
		}
	}
	if len(py) == 0 {
		py = blocks
	}
	if entryPoint != "" {
		def := regexp.MustCompile(`(?m)^\s*def\s+` + regexp.QuoteMeta(entryPoint) + `\s*\(`)
		for i := len(py) - 1; i >= 0; i-- {
			if def.MatchString(py[i].code) {
				return py[i].code, true
			}
		}
	}
	return py[len(py)-1].code, true
}
