package markdown

import (
	"strings"
	"testing"
)

func TestRenderFormats(t *testing.T) {
	got, err := Render("# Findings\n\n**RL** narrows *coverage*: see [the paper](https://arxiv.org/abs/2504.13837).\n\n| k | base |\n|---|---|\n| 1 | 61% |\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h1>Findings</h1>", "<strong>RL</strong>", "<em>coverage</em>",
		`href="https://arxiv.org/abs/2504.13837"`, `rel="nofollow noreferrer noopener"`, `target="_blank"`, "<td>61%</td>"} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered note lacks %q:\n%s", want, got)
		}
	}
}

// Hostile input: nothing that runs survives, and raw HTML is not passed
// through.
func TestRenderHostile(t *testing.T) {
	for _, src := range []string{
		`<script>window.__xss=1</script>`,
		`<img src=x onerror="window.__xss=2">`,
		`<a href="javascript:window.__xss=3">click</a>`,
		`[click](javascript:window.__xss=3)`,
		`[click](JaVaScRiPt:alert(1))`,
		`![x](javascript:alert(1))`,
		"<iframe src=\"https://example.org\"></iframe>",
		`<div onclick="alert(1)">x</div>`,
		`<svg onload=alert(1)>`,
		"[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
		"<style>body{display:none}</style>",
		"text <a href=\"https://ok.example\" onmouseover=\"alert(1)\">x</a>",
	} {
		got, err := Render(src)
		if err != nil {
			t.Fatal(err)
		}
		low := strings.ToLower(got)
		for _, bad := range []string{"<script", "javascript:", "onerror", "onclick", "onload", "onmouseover", "<iframe", "<svg", "<style", "data:text/html", "<img src=\"x\""} {
			if strings.Contains(low, bad) {
				t.Errorf("Render(%q) = %q: holds %q", src, got, bad)
			}
		}
	}
}

// Images become links: the CSP blocks images from elsewhere (they showed
// broken), and a note must not make readers' browsers fetch a URL.
func TestRenderImagesAsLinks(t *testing.T) {
	got, err := Render("See ![the curve](https://example.org/curve.png \"t\") and ![](https://example.org/b.png) and ![x](javascript:alert(1)).")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.ToLower(got), "<img") {
		t.Errorf("rendered note holds an image: %s", got)
	}
	for _, want := range []string{`<a href="https://example.org/curve.png"`, `image: the curve</a>`, `<a href="https://example.org/b.png"`,
		`image: https://example.org/b.png</a>`} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered note lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(strings.ToLower(got), "javascript:") {
		t.Errorf("a javascript: image became a link: %s", got)
	}
}
