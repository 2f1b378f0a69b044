package markdown

import (
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// liveMarkup parses rendered HTML and names the first element or
// attribute in it that could run, load or navigate somewhere unsafe ("" if
// none): only the elements Completion writes, no event handlers, links
// only to http(s) or relative addresses.
func liveMarkup(s string) string {
	allowed := map[string]bool{"p": true, "br": true, "em": true, "strong": true, "del": true, "code": true, "pre": true,
		"blockquote": true, "ul": true, "ol": true, "li": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true,
		"h6": true, "hr": true, "table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true, "span": true, "a": true, "mark": true}
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if z.Err() == io.EOF {
				return ""
			}
			return z.Err().Error()
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		tok := z.Token()
		if !allowed[tok.Data] {
			return "element <" + tok.Data + ">"
		}
		for _, a := range tok.Attr {
			v := strings.ToLower(strings.TrimSpace(a.Val))
			switch {
			case strings.HasPrefix(a.Key, "on") || a.Key == "src" || a.Key == "style":
				return "attribute " + a.Key
			case a.Key == "href" && strings.Contains(v, ":") && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://"):
				return "link to " + a.Val
			}
		}
	}
}

// Markdown is rendered; math keeps every character for KaTeX (markdown
// would read _ and * and drop the \ of \( and \[); prices stay text; the
// answer line is marked, after a list or heading marker.
func TestCompletionMathSurvives(t *testing.T) {
	got, err := Completion("# Plan\n\nWe use **bold** and $x_1 * y_2$, $$\\frac{a}{b}$$ and \\(a_b\\), \\[c*d*e\\].\nIt costs $5 and $7.\n",
		"So the answer is $\\boxed{2}$.", "\nDone.")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h1>Plan</h1>", "<strong>bold</strong>", `$x_1 * y_2$`, `$$\frac{a}{b}$$`, `\(a_b\)`, `\[c*d*e\]`,
		"It costs $5 and $7.", `<mark class="answer-line">So the answer is $\boxed{2}$.</mark>`, "Done."} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered completion lacks %q:\n%s", want, got)
		}
	}
	got, err = Completion("Steps:\n", "- So $\\boxed{3}$", "\n")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `<li><mark class="answer-line">So $\boxed{3}$</mark></li>`) {
		t.Errorf("answer line in a list item not marked inside it:\n%s", got)
	}
	// Math written with HTML-special characters stays math text, escaped once.
	if got, _ := Completion(`$a<b$ and $$x>y$$`, "", ""); !strings.Contains(got, `$a&lt;b$`) || !strings.Contains(got, `$$x&gt;y$$`) {
		t.Errorf("math with < and > rendered as %s", got)
	}
}

// Model output is not markup: raw HTML shows as the text written, images
// are never loaded, links keep only safe schemes, and the private-use
// characters Completion uses inside cannot be forged.
func TestCompletionHostile(t *testing.T) {
	for _, src := range []string{
		`<script>window.__xss=1</script>`,
		`<img src=x onerror="window.__xss=2">`,
		`<a href="javascript:window.__xss=3">click</a>`,
		`$\href{javascript:alert(1)}{x}$`,
		`[click](javascript:window.__xss=3)`,
		`[click](JaVaScRiPt:alert(1))`,
		`![x](https://tracker.example/pixel.png)`,
		`![x](javascript:alert(1))`,
		"![x](x \"t\" onerror=alert(1))",
		"<iframe src=\"https://example.org\"></iframe>",
		"<div onclick=\"alert(1)\">\n\nx\n\n</div>",
		`<svg onload=alert(1)>`,
		"[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
		"<style>body{display:none}</style>",
		"text <a href=\"https://ok.example\" onmouseover=\"alert(1)\">x</a>",
		"\uE0020\uE003 <b>\uE000forged\uE001</b>",
		"```html\n<script>alert(1)</script>\n```",
	} {
		got, err := Completion(src, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if bad := liveMarkup(got); bad != "" {
			t.Errorf("Completion(%q) = %q: %s", src, got, bad)
		}
		if strings.ContainsAny(got, "\uE000\uE001\uE002\uE003") {
			t.Errorf("Completion(%q) = %q: holds a private-use marker", src, got)
		}
	}
	// Raw HTML is shown, not dropped.
	if got, _ := Completion(`<script>window.__xss=1</script>`, "", ""); !strings.Contains(got, "&lt;script&gt;window.__xss=1&lt;/script&gt;") {
		t.Errorf("raw HTML not shown as text: %s", got)
	}
	// A safe link stays a link that opens elsewhere without referrer.
	if got, _ := Completion("[paper](https://arxiv.org/abs/2504.13837)", "", ""); !strings.Contains(got, `href="https://arxiv.org/abs/2504.13837"`) ||
		!strings.Contains(got, "noreferrer") || !strings.Contains(got, `target="_blank"`) {
		t.Errorf("link rendered as %s", got)
	}
}

// BenchmarkCompletion renders a typical 5 KB completion (not remembered);
// the problem page renders up to 32.
func BenchmarkCompletion(b *testing.B) {
	src := benchText()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := render(src, "So the answer is $\\boxed{2}$.", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompletionRemembered is the same completion shown again.
func BenchmarkCompletionRemembered(b *testing.B) {
	src := benchText()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := Completion(src, "So the answer is $\\boxed{2}$.", ""); err != nil {
			b.Fatal(err)
		}
	}
}

func benchText() string {
	para := "We compute $x_1 + x_2 = \\frac{3}{4}$ and **check** it: $$\\sum_{i=1}^n i = \\frac{n(n+1)}{2}$$\n\n"
	return strings.Repeat(para, 5000/len(para))
}

// A remembered render is the render of the same parts; the same text split
// at another answer line is a different render.
func TestCompletionRemembered(t *testing.T) {
	text := "Step one.\n\nSo the answer is $\\boxed{2}$.\n\nDone."
	for range 2 {
		got, err := Completion("Step one.\n\n", "So the answer is $\\boxed{2}$.", "\n\nDone.")
		if err != nil {
			t.Fatal(err)
		}
		want, _ := render("Step one.\n\n", "So the answer is $\\boxed{2}$.", "\n\nDone.")
		if got != want || !strings.Contains(got, "answer-line") {
			t.Fatalf("remembered %q, rendered %q", got, want)
		}
	}
	plain, err := Completion(text, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "answer-line") {
		t.Errorf("the text without an answer line came back marked (a remembered render of another split): %q", plain)
	}
}
