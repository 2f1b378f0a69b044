// Package bundle writes an offline copy of one comparison: it reads the
// pages of a share-shaped handler in-process (web.BundleHandler: no
// network, no stored link), follows their links within it, and writes
// every page, script, stylesheet, font and data file with its links made
// relative, so that the folder opens from the file system or any static
// host. Each page carries a Content-Security-Policy that lets it load
// only the bundle's own files: no request can leave it.
package bundle

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// CSP is every bundled page's policy: scripts, styles, images and fonts of
// the bundle only (inline styles: ECharts and KaTeX set them), nothing
// fetched at runtime, no forms, no base element.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; " +
	"font-src 'self' data:; connect-src 'none'; base-uri 'none'; form-action 'none'"

// Sink receives a bundle's files by slash-separated relative name.
type Sink interface {
	Create(name string) (io.Writer, error)
}

// Dir is a Sink writing into a folder (created as needed).
type Dir string

// Create creates file name under d; any file open before is done.
func (d Dir) Create(name string) (io.Writer, error) {
	p := filepath.Join(string(d), filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	return &lazyFile{path: p}, nil
}

// lazyFile writes a whole file at once: Write is called once per file.
type lazyFile struct{ path string }

func (f *lazyFile) Write(b []byte) (int, error) {
	if err := os.WriteFile(f.path, b, 0o644); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Zip is a Sink writing a zip archive under a top folder (its name: the
// folder the archive unpacks into).
type Zip struct {
	W   *zip.Writer
	Top string
}

// Create adds file name to the archive.
func (z Zip) Create(name string) (io.Writer, error) { return z.W.Create(path.Join(z.Top, name)) }

// Stats is what Write wrote.
type Stats struct {
	Files, Pages int
	Bytes        int64
	// Unlinked counts links to this server's paths outside the bundle
	// (in completions' markdown) that now lead nowhere.
	Unlinked int
}

// Write copies the comparison h serves under /s/{token}/ into sink:
// index.html, problems/{id}.html, data/..., texts/..., charts/... and
// static/.... h answers in-process; a link it answers other than 200 is an
// error, as is a src outside the bundle's paths; an href outside them
// becomes "#". Links to other sites that pages hold as text (a model's
// markdown link) stay: following one is the reader's navigation, not a
// request of the bundle.
func Write(ctx context.Context, h http.Handler, token string, sink Sink) (Stats, error) {
	w := &writer{ctx: ctx, h: h, root: "/s/" + token, sink: sink, seen: map[string]bool{}, optional: map[string]bool{}}
	w.enqueue(w.root + "/")
	for len(w.queue) > 0 {
		u := w.queue[0]
		w.queue = w.queue[1:]
		if err := w.copy(u); err != nil {
			return w.st, err
		}
	}
	return w.st, nil
}

type writer struct {
	ctx  context.Context
	h    http.Handler
	root string // /s/{token}
	sink Sink
	seen map[string]bool // URL paths queued
	// optional are URL paths only a stylesheet names: a font format Reach
	// does not ship (KaTeX's CSS lists woff and ttf after woff2) is left out.
	optional map[string]bool
	queue    []string
	st       Stats
}

// fileOf names the bundle's file of URL path u ("" when u is not one of
// the bundle's).
func (w *writer) fileOf(u string) string {
	switch {
	case u == w.root || u == w.root+"/":
		return "index.html"
	case strings.HasPrefix(u, "/static/"):
		return clean("static/" + strings.TrimPrefix(u, "/static/"))
	case !strings.HasPrefix(u, w.root+"/"):
		return ""
	}
	rest := strings.TrimPrefix(u, w.root+"/")
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 2 && parts[0] == "problems":
		return clean("problems/" + parts[1] + ".html")
	case len(parts) == 2 && parts[0] == "data":
		return clean("data/" + parts[1])
	case len(parts) == 1 && strings.HasPrefix(parts[0], "samples."):
		return clean("data/" + parts[0])
	case len(parts) == 7 && parts[0] == "runs" && parts[2] == "problems" && parts[4] == "samples" && parts[6] == "text":
		return clean(fmt.Sprintf("texts/%s-%s-%s.txt", parts[1], parts[3], parts[5]))
	}
	return ""
}

// clean keeps a file name within the bundle ("" for one that is not).
func clean(name string) string {
	c := path.Clean(name)
	if c != name || strings.HasPrefix(c, "../") || strings.ContainsAny(c, "\\?#") {
		return ""
	}
	return c
}

// copy fetches u and writes its file, HTML and CSS with their links
// rewritten (and queued).
func (w *writer) copy(u string) error {
	name := w.fileOf(u)
	if name == "" {
		return fmt.Errorf("bundle: %s is not a file of the bundle", u)
	}
	req := httptest.NewRequestWithContext(w.ctx, http.MethodGet, u, nil)
	rec := httptest.NewRecorder()
	w.h.ServeHTTP(rec, req)
	if rec.Code == http.StatusNotFound && w.optional[u] {
		return nil
	}
	if rec.Code != http.StatusOK {
		return fmt.Errorf("bundle: %s answered %d: %s", u, rec.Code, brief(rec.Body.Bytes()))
	}
	body := rec.Body.Bytes()
	var err error
	switch {
	case strings.HasSuffix(name, ".html"):
		body, err = w.page(name, body)
		w.st.Pages++
	case strings.HasSuffix(name, ".css"):
		w.stylesheet(u, body)
	}
	if err != nil {
		return err
	}
	return w.put(name, body)
}

// put writes one file to the sink.
func (w *writer) put(name string, b []byte) error {
	f, err := w.sink.Create(name)
	if err != nil {
		return fmt.Errorf("bundle: create %s: %w", name, err)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("bundle: write %s: %w", name, err)
	}
	w.st.Files++
	w.st.Bytes += int64(len(b))
	return nil
}

// enqueue queues URL path u once per file ("/s/T" and "/s/T/" are one).
func (w *writer) enqueue(u string) {
	if f := w.fileOf(u); !w.seen[f] {
		w.seen[f] = true
		w.queue = append(w.queue, u)
	}
}

var (
	attrURL      = regexp.MustCompile(`\b(href|src)="([^"]*)"`)
	inlineScript = regexp.MustCompile(`(?s)<script nonce="[^"]*">(.*?)</script>`)
	cssURL       = regexp.MustCompile(`url\(([^)"']+)\)`)
	metaCharset  = regexp.MustCompile(`<meta charset="utf-8"\s*/?>`)
)

// page rewrites the HTML of file name: links to the bundle's files become
// relative (and are queued), inline scripts (the charts) become script
// files, and the CSP goes in as a meta tag.
func (w *writer) page(name string, b []byte) ([]byte, error) {
	up := strings.Repeat("../", strings.Count(name, "/"))
	var failed error
	b = attrURL.ReplaceAllFunc(b, func(m []byte) []byte {
		sm := attrURL.FindSubmatch(m)
		raw := html.UnescapeString(string(sm[2]))
		if !strings.HasPrefix(raw, "/") || strings.HasPrefix(raw, "//") {
			return m // relative, a fragment, or another site's (text: "noopener" links of notes)
		}
		p, frag, _ := strings.Cut(raw, "#")
		p, _, _ = strings.Cut(p, "?")
		f := w.fileOf(p)
		if f == "" && string(sm[1]) == "href" {
			// A link a completion's markdown made ("[see](/x)"): it
			// leads nowhere in the bundle, so it goes nowhere.
			w.st.Unlinked++
			return []byte(`href="#"`)
		}
		if f == "" {
			failed = fmt.Errorf("bundle: page %s loads %s, which is not in the bundle", name, raw)
			return m
		}
		w.enqueue(p)
		if frag != "" {
			f += "#" + frag
		}
		return []byte(string(sm[1]) + `="` + html.EscapeString(up+f) + `"`)
	})
	if failed != nil {
		return nil, failed
	}
	n := 0
	b = inlineScript.ReplaceAllFunc(b, func(m []byte) []byte {
		n++
		js := inlineScript.FindSubmatch(m)[1]
		f := fmt.Sprintf("charts/%s-%d.js", strings.ReplaceAll(strings.TrimSuffix(name, ".html"), "/", "-"), n)
		if err := w.put(f, js); err != nil && failed == nil {
			failed = err
		}
		return []byte(`<script src="` + up + f + `"></script>`)
	})
	if failed != nil {
		return nil, failed
	}
	if bytes.Contains(b, []byte("<script>")) {
		return nil, fmt.Errorf("bundle: page %s has an inline script the policy would block", name)
	}
	loc := metaCharset.FindIndex(b)
	if loc == nil {
		return nil, fmt.Errorf("bundle: page %s has no charset meta tag to put the policy after", name)
	}
	i := loc[1]
	meta := `<meta http-equiv="Content-Security-Policy" content="` + CSP + `">`
	return append(b[:i:i], append([]byte(meta), b[i:]...)...), nil
}

// stylesheet queues the files stylesheet u refers to (KaTeX's fonts),
// relative to it: they keep their places under static/.
func (w *writer) stylesheet(u string, css []byte) {
	for _, m := range cssURL.FindAllSubmatch(css, -1) {
		ref := strings.TrimSpace(string(m[1]))
		if strings.HasPrefix(ref, "data:") || strings.Contains(ref, ":") || strings.HasPrefix(ref, "/") {
			continue
		}
		ref, _, _ = strings.Cut(ref, "?")
		ref, _, _ = strings.Cut(ref, "#")
		ref = path.Join(path.Dir(u), ref)
		if !w.seen[w.fileOf(ref)] {
			w.optional[ref] = true
		}
		w.enqueue(ref)
	}
}

func brief(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return strings.TrimSpace(string(b))
}

// Size says n bytes for people: "3.2 MB".
func Size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Discard is a Sink that keeps nothing: Write to it counts a bundle's size.
type Discard struct{}

// Create returns io.Discard.
func (Discard) Create(string) (io.Writer, error) { return io.Discard, nil }
