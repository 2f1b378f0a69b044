package web_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/bundle"
	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/web"
)

// bundledComparison stores a ready two-model comparison whose completions
// include a script tag and writes its bundle to a new folder.
func bundledComparison(t *testing.T, o web.BundleOptions) (dir string, c storedComparison, stats bundle.Stats) {
	t.Helper()
	st, _ := testdb.New(t)
	c = storeReady(t, st, "Bundle me", 0, twoProblems("p0", "What is $1+1$?"),
		[]store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}, 4, baseOnlyOnP0)
	ctx := context.Background()
	// One completion that would run if it were not escaped.
	if _, err := st.Pool().Exec(ctx, `UPDATE samples SET completion = '<script>alert(1)</script> The answer is 2.'
		WHERE run_id = $1 AND problem_id = $2 AND sample_index = 0`, c.Runs[0].ID, c.Ps[0].ID); err != nil {
		t.Fatal(err)
	}
	// And markdown links: one to a path of the server, one to another site.
	if _, err := st.Pool().Exec(ctx, `UPDATE samples SET completion = 'See [the admin](/admin/users) and [a site](https://example.com/x).'
		WHERE run_id = $1 AND problem_id = $2 AND sample_index = 1`, c.Runs[0].ID, c.Ps[0].ID); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	dir = t.TempDir()
	stats, err := bundle.Write(ctx, web.BundleHandler(st, web.Config{}, logger, c.ID, o), web.BundleToken, bundle.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	return dir, c, stats
}

// bundleFiles reads every file of dir by relative name.
func bundleFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestBundleIsSelfContained(t *testing.T) {
	dir, c, stats := bundledComparison(t, web.BundleOptions{MaxSamples: 2})
	files := bundleFiles(t, dir)
	p0 := "problems/" + itoa(c.Ps[0].ID) + ".html"
	for _, want := range []string{"index.html", p0, "problems/" + itoa(c.Ps[1].ID) + ".html", "static/echarts.min.js", "static/app.css",
		"static/katex/katex.min.js", "static/katex/fonts/KaTeX_Main-Regular.woff2", "data/crossover.csv", "data/crossover.json",
		"data/samples.jsonl", "charts/index-1.js"} {
		if _, ok := files[want]; !ok {
			t.Errorf("the bundle has no %s", want)
		}
	}
	if stats.Files != len(files) || stats.Pages != 3 || stats.Unlinked != 1 {
		t.Errorf("stats %+v, want %d files, 3 pages and 1 unlinked", stats, len(files))
	}
	absolute := regexp.MustCompile(`(href|src)="/`)
	remote := regexp.MustCompile(`(href|src)="[a-z]+:`)
	for name, body := range files {
		if !strings.HasSuffix(name, ".html") {
			continue
		}
		if m := absolute.FindString(body); m != "" {
			t.Errorf("%s has an absolute URL: %s", name, m)
		}
		// The model's own link is text it wrote, not a request of the page.
		if m := remote.FindString(strings.ReplaceAll(body, `href="https://example.com/x"`, "")); m != "" {
			t.Errorf("%s links out of the bundle: %s", name, m)
		}
		if !strings.Contains(body, `<meta http-equiv="Content-Security-Policy" content="`+bundle.CSP+`">`) {
			t.Errorf("%s has no policy", name)
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, "nonce=") {
			t.Errorf("%s has an inline script", name)
		}
		if strings.Contains(body, "/s/"+web.BundleToken) {
			t.Errorf("%s still names the bundle's server paths", name)
		}
	}
	index := files["index.html"]
	for _, want := range []string{`id="crossover-chart"`, `src="static/echarts.min.js"`, `src="charts/index-1.js"`, `href="` + p0 + `"`,
		`href="data/crossover.csv"`, `href="data/samples.jsonl"`, `id="all-problems"`, "Bundle me"} {
		if !strings.Contains(index, want) {
			t.Errorf("index.html has no %s", want)
		}
	}
	if strings.Contains(index, "embed-snippet") || strings.Contains(index, "og:url") {
		t.Error("index.html has the share page's embed snippet or address")
	}
	page := files[p0]
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("a completion's script tag is in the problem page unescaped")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the problem page does not show the completion's script tag as text")
	}
	for _, want := range []string{`href="../index.html"`, `src="../static/katex/katex.min.js"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the problem page has no %s", want)
		}
	}
	// The cap: 2 of each model's 4 samples on the page.
	if n := strings.Count(page, `<details class="sample `); n != 4 {
		t.Errorf("the problem page shows %d completions, want 2 per model (4)", n)
	}
}

func TestBundleCountsOnly(t *testing.T) {
	dir, _, stats := bundledComparison(t, web.BundleOptions{CountsOnly: true})
	files := bundleFiles(t, dir)
	if stats.Pages != 1 {
		t.Errorf("a counts-only bundle has %d pages, want the comparison's only", stats.Pages)
	}
	for name, body := range files {
		if strings.HasPrefix(name, "problems/") || strings.HasPrefix(name, "texts/") || name == "data/samples.jsonl" {
			t.Errorf("a counts-only bundle has %s", name)
		}
		if strings.Contains(body, "The answer is 2.") || strings.Contains(body, "What is $1+1$?") {
			t.Errorf("%s of a counts-only bundle holds a text", name)
		}
	}
	if !strings.Contains(files["index.html"], `id="all-problems"`) {
		t.Error("a counts-only bundle has no problem table")
	}
}

// The owners' download: the bundle page states the size, the zip holds the
// same folder under reach-comparison-{id}/, and the comparison page links
// to it for owners only.
func TestBundleDownload(t *testing.T) {
	f := newFixture(t)
	code, body := f.page("owner", fmt.Sprintf("/comparisons/%d/bundle?max=3", f.cid))
	if code != 200 {
		t.Fatalf("bundle page: HTTP %d\n%.500s", code, body)
	}
	size := regexp.MustCompile(`id="bundle-size">([0-9]+) pages, ([0-9]+) files: <b>([^<]+)</b>`).FindStringSubmatch(body)
	if size == nil {
		t.Fatalf("the bundle page states no size:\n%.2000s", body)
	}
	if !strings.Contains(body, html.EscapeString(fmt.Sprintf("/comparisons/%d/bundle.zip?max=3", f.cid))) {
		t.Error("the download link does not carry the options")
	}
	resp := f.do("owner", "GET", fmt.Sprintf("/comparisons/%d/bundle.zip?max=3", f.cid), "", nil)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/zip" {
		t.Fatalf("bundle.zip: HTTP %d %s %v", resp.StatusCode, resp.Header.Get("Content-Type"), err)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	top := fmt.Sprintf("reach-comparison-%d/", f.cid)
	names := map[string]bool{}
	for _, zf := range zr.File {
		names[zf.Name] = true
		if !strings.HasPrefix(zf.Name, top) {
			t.Errorf("zip entry %s is not under %s", zf.Name, top)
		}
	}
	if fmt.Sprint(len(zr.File)) != size[2] || !names[top+"index.html"] || !names[top+"static/echarts.min.js"] {
		t.Errorf("the zip has %d files (the page said %s); index.html %v", len(zr.File), size[2], names[top+"index.html"])
	}
	_, page := f.page("owner", fmt.Sprintf("/comparisons/%d", f.cid))
	if !strings.Contains(page, `id="bundle-button"`) {
		t.Error("the comparison page has no bundle button for its owner")
	}
	_, page = f.page("viewer", fmt.Sprintf("/comparisons/%d", f.cid))
	if strings.Contains(page, `id="bundle-button"`) {
		t.Error("a viewer sees the bundle button")
	}
}

// The shipped examples bundle: HumanEval (completions, code) and MATH500
// (counts only were published: problem pages without completions), each
// problem with its page, no absolute link in any.
func TestBundleExamples(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	ids, err := examples.SeedIfEmpty(ctx, a.st, a.client)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	absolute := regexp.MustCompile(`(href|src)="/`)
	for _, id := range ids {
		a.waitReady(t, id, time.Minute)
		c, err := a.st.GetComparison(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		stats, err := bundle.Write(ctx, web.BundleHandler(a.st, web.Config{}, logger, id, web.BundleOptions{}), web.BundleToken, bundle.Dir(dir))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		t.Logf("%s: %d pages, %d files, %s", c.Name, stats.Pages, stats.Files, bundle.Size(stats.Bytes))
		files := bundleFiles(t, dir)
		pages := 0
		for name, body := range files {
			if strings.HasPrefix(name, "problems/") {
				pages++
			}
			if strings.HasSuffix(name, ".html") && absolute.MatchString(body) {
				t.Errorf("%s: %s has an absolute link: %s", c.Name, name, absolute.FindString(body))
			}
		}
		ps, err := a.st.Problems(ctx, *c.DatasetID, false)
		if err != nil {
			t.Fatal(err)
		}
		if pages != len(ps) {
			t.Errorf("%s: %d problem pages, want %d", c.Name, pages, len(ps))
		}
	}
}

// A collection's bundle is its page: every model's curve on one chart and
// the figures table, with no link out of it.
func TestBundleCollection(t *testing.T) {
	st, _ := testdb.New(t)
	c := storeReady(t, st, "In a set", 0, twoProblems("p0", "What is 1+1?"),
		[]store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}, 4, baseOnlyOnP0)
	ctx := context.Background()
	cmp, err := st.GetComparison(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	kid, err := st.CreateCollection(ctx, cmp.ProjectID, "The set", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AddToCollection(ctx, kid, c.ID); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	dir := t.TempDir()
	if _, err := bundle.Write(ctx, web.BundleCollectionHandler(st, web.Config{}, logger, kid), web.BundleToken, bundle.Dir(dir)); err != nil {
		t.Fatal(err)
	}
	files := bundleFiles(t, dir)
	index := files["index.html"]
	for _, want := range []string{"The set", `src="static/echarts.min.js"`, `src="charts/index-1.js"`, bundle.CSP} {
		if !strings.Contains(index, want) {
			t.Errorf("the collection's index.html has no %s", want)
		}
	}
	if m := regexp.MustCompile(`(href|src)="(/|[a-z]+:)`).FindString(index); m != "" {
		t.Errorf("the collection's page links out: %s", m)
	}
}
