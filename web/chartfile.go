package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"math"
	"net/http"
	"regexp"
	"strings"

	"github.com/maypok86/otter/v2"
)

// The comparison page's chart scripts (two thirds of its bytes: the
// curves, bands and tables of every chart) go out as one script file named
// by its content, /comparisons/{id}/charts/{name}.js. The page itself is
// then a third of the size to compress on every view, and the browser keeps
// the file for as long as the charts stay the same: their data changes
// only with the report, which changes the name.

// chartFile is a comparison page's chart scripts, joined.
type chartFile struct {
	comparison int64
	js         body // compressed once
}

// chartFiles keeps chart files by name (the first 128 bits of the SHA-256
// of the script, in hex).
var chartFiles = otter.Must(&otter.Options[string, chartFile]{
	MaximumWeight: 64 << 20,
	Weigher: func(name string, f chartFile) uint32 {
		return uint32(min(len(name)+len(f.js.raw)+len(f.js.gz)+64, math.MaxUint32))
	},
})

// chartSpans finds the chart scripts of a page: each from chartScript to
// the end of its "</script>" (their JSON never holds "</script>": the chart
// package escapes it). Nil when the page has none or one is not closed.
func chartSpans(page []byte) [][2]int {
	var spans [][2]int
	for at := 0; ; {
		i := bytes.Index(page[at:], chartScript)
		if i < 0 {
			return spans
		}
		start := at + i
		j := bytes.Index(page[start:], []byte("</script>"))
		if j < 0 {
			return nil
		}
		end := start + j + len("</script>")
		spans = append(spans, [2]int{start, end})
		at = end
	}
}

// scriptOf is the code of the chart script at span sp of page.
func scriptOf(page []byte, sp [2]int) []byte {
	return page[sp[0]+len("<script>") : sp[1]-len("</script>")]
}

// chartFileFor names the chart file of the page's chart scripts (spans),
// keeping it in chartFiles for comparison id when it is new.
func chartFileFor(id int64, page []byte, spans [][2]int) string {
	// Most views draw charts already named: a keyed hash with this
	// process's secret seed (several times SHA-256's speed: the training
	// view's scripts are about 1 MB) finds their name; SHA-256, which
	// names them the same on every server, runs for new ones only.
	var mh maphash.Hash
	mh.SetSeed(chartSeed)
	n := 0
	for _, sp := range spans {
		b := scriptOf(page, sp)
		mh.Write(b)
		n += len(b)
	}
	seen := chartSeen{comparison: id, hash: mh.Sum64(), size: n}
	if name, ok := chartNamesSeen.GetIfPresent(seen); ok {
		if f, ok := chartFiles.GetIfPresent(name); ok && f.comparison == id {
			return name
		}
	}
	name := chartFileNamed(id, page, spans)
	chartNamesSeen.Set(seen, name)
	return name
}

// chartSeen is what chartNamesSeen knows a page's chart scripts by.
type chartSeen struct {
	comparison int64
	hash       uint64 // maphash with chartSeed
	size       int
}

var (
	chartSeed      = maphash.MakeSeed()
	chartNamesSeen = otter.Must(&otter.Options[chartSeen, string]{MaximumSize: 4096})
)

// chartFileNamed is chartFileFor without the memo: the scripts' SHA-256.
func chartFileNamed(id int64, page []byte, spans [][2]int) string {
	h := sha256.New()
	for _, sp := range spans {
		h.Write(scriptOf(page, sp))
	}
	var sum [sha256.Size]byte
	name := hex.EncodeToString(h.Sum(sum[:0])[:16])
	if f, ok := chartFiles.GetIfPresent(name); ok && f.comparison == id {
		return name
	}
	var js bytes.Buffer
	for _, sp := range spans {
		js.Write(scriptOf(page, sp))
	}
	b, err := newBody(js.Bytes())
	if err != nil { // writing to memory does not fail; serve it uncompressed then
		b = body{raw: js.Bytes()}
	}
	chartFiles.Set(name, chartFile{comparison: id, js: b})
	return name
}

// chartFileURL is where the page finds its chart file: the page's query
// comes along, so that a server that does not have the file (restarted,
// or another one behind the same address) can draw that page again.
func chartFileURL(id int64, name, rawQuery string) string {
	u := fmt.Sprintf("/comparisons/%d/charts/%s.js", id, name)
	if rawQuery != "" {
		u += "?" + rawQuery
	}
	return u
}

// chartsJS serves a comparison page's chart file. One this server does not
// have is made again by drawing the page of the file's query; when the
// charts have changed since (a new report), it sends the current ones,
// not to be kept, and the page's next view names them.
func (s *Server) chartsJS(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.dataFail(w, r, err)
		return
	}
	name := strings.TrimSuffix(chiParam(r, "file"), ".js")
	f, ok := chartFiles.GetIfPresent(name)
	fresh := ok && f.comparison == id
	if !fresh {
		page := &pageRecorder{header: http.Header{}}
		s.comparison(page, r) // keeps the page's chart file in chartFiles
		m := chartFileTag.FindSubmatch(page.body.Bytes())
		if m == nil {
			http.Error(w, "no charts: the comparison has no report (yet)", http.StatusNotFound)
			return
		}
		if f, ok = chartFiles.GetIfPresent(string(m[1])); !ok || f.comparison != id {
			http.Error(w, "no charts", http.StatusNotFound)
			return
		}
		fresh = string(m[1]) == name
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	if fresh {
		w.Header().Set("Cache-Control", "private, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-store")
	}
	f.js.write(w, r)
}

// chartFileTag finds the name of a page's chart file in it.
var chartFileTag = regexp.MustCompile(`<script src="/comparisons/[0-9]+/charts/([0-9a-f]{32})\.js`)

// pageRecorder keeps what a page handler writes (chartsJS draws the page
// to find its charts).
type pageRecorder struct {
	header http.Header
	body   bytes.Buffer
}

func (p *pageRecorder) Header() http.Header         { return p.header }
func (p *pageRecorder) Write(b []byte) (int, error) { return p.body.Write(b) }
func (p *pageRecorder) WriteHeader(int)             {}
