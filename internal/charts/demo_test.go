package charts

import (
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/testfiles"
)

// TestRenderDemo writes an HTML page with every chart, drawn from the real MATH500 counts pair
// (Qwen2.5-7B base vs SimpleRL-Zoo, n = 128), to the file named by REACH_CHART_DEMO, loading
// ECharts from this checkout's static/ by file:// URL. It is a looking aid, skipped otherwise:
//
//	REACH_CHART_DEMO=/tmp/demo.html go test ./internal/charts -run TestRenderDemo
//	chromium --headless --no-sandbox --disable-gpu --screenshot=/tmp/charts.png \
//	  --window-size=1200,2000 file:///tmp/demo.html
func TestRenderDemo(t *testing.T) {
	out := os.Getenv("REACH_CHART_DEMO")
	if out == "" {
		t.Skip("set REACH_CHART_DEMO=/path/demo.html to write the demo page")
	}
	data := testfiles.Data(t, "generations/math500-qwen25-7b-base-vs-simplerl-counts")
	base := readCounts(t, filepath.Join(data, "qwen2.5-7b-base.csv"))
	rl := readCounts(t, filepath.Join(data, "qwen2.5-7b-simplerl-zoo.csv"))
	const n = 128
	names := []string{"Qwen2.5-7B (base)", "SimpleRL-Zoo-7B"}
	models := [][]int{base, rl}

	var ks []int
	for k := 1; k <= n; k++ {
		ks = append(ks, k)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	boots := bootstrapIdx(rng, len(base), 200)
	// per[m][k-1][i] is model m's pass@k on problem i.
	per := make([][][]float64, len(models))
	for m, cs := range models {
		for _, k := range ks {
			per[m] = append(per[m], passKEach(cs, n, k))
		}
	}
	var curves []CurveSeries
	for m := range models {
		s := CurveSeries{Name: names[m], Ks: ks}
		for _, k := range ks {
			p := per[m][k-1]
			s.Values = append(s.Values, mean(p, nil))
			lo, hi := bootBand(boots, func(idx []int) float64 { return mean(p, idx) })
			s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
		}
		curves = append(curves, s)
	}
	diff := CurveSeries{Name: "SimpleRL − base", Ks: ks}
	for _, k := range ks {
		pb, pr := per[0][k-1], per[1][k-1]
		diff.Values = append(diff.Values, mean(pr, nil)-mean(pb, nil))
		lo, hi := bootBand(boots, func(idx []int) float64 { return mean(pr, idx) - mean(pb, idx) })
		diff.Lo, diff.Hi = append(diff.Lo, lo), append(diff.Hi, hi)
	}
	kStar := 0.0
	for i := 1; i < len(ks); i++ {
		d0, d1 := diff.Values[i-1], diff.Values[i]
		if d0 > 0 && d1 <= 0 {
			l0, l1 := math.Log2(float64(ks[i-1])), math.Log2(float64(ks[i]))
			kStar = math.Exp2(l0 + (l1-l0)*d0/(d0-d1))
			break
		}
	}
	var both, aOnly, bOnly, neither int
	for i := range base {
		switch {
		case base[i] > 0 && rl[i] > 0:
			both++
		case base[i] > 0:
			aOnly++
		case rl[i] > 0:
			bOnly++
		default:
			neither++
		}
	}
	labels := []string{"0"}
	for b := 0; b < 10; b++ {
		labels = append(labels, fmt.Sprintf("(%.1f,%.1f]", float64(b)/10, float64(b+1)/10))
	}
	labels[10] = "(0.9,1)"
	labels = append(labels, "1")
	var hist []HistSeries
	for m, cs := range models {
		h := HistSeries{Name: names[m], Counts: make([]int, len(labels))}
		for _, c := range cs {
			switch {
			case c == 0:
				h.Counts[0]++
			case c == n:
				h.Counts[11]++
			default:
				h.Counts[1+min(9, int(math.Ceil(float64(c)/n*10))-1)]++
			}
		}
		hist = append(hist, h)
	}
	var cover []CoverSeries
	for m, cs := range models {
		s := CoverSeries{Name: names[m]}
		for i := 0; i <= 20; i++ {
			tau := float64(i) / 20
			k := 0
			for _, c := range cs {
				if float64(c)/n >= tau {
					k++
				}
			}
			s.Taus, s.Values = append(s.Taus, tau), append(s.Values, float64(k)/float64(len(cs)))
		}
		cover = append(cover, s)
	}

	var snippets []Snippet
	add := func(s Snippet, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		snippets = append(snippets, s)
	}
	powers := []int{}
	for k := 1; k <= n; k *= 2 {
		powers = append(powers, k)
	}
	add(Crossover("demo", CrossoverInput{Title: "MATH500 pass@k (real counts, n = 128)", Series: curves,
		CrossoverK: kStar, CrossoverLabel: fmt.Sprintf("k* ≈ %.0f", kStar)}))
	add(Venn("demo", VennInput{A: names[0], B: names[1], Both: both, AOnly: aOnly, BOnly: bOnly,
		Neither: neither, RegionURL: "/problems?region={region}"}))
	add(Histogram("demo", HistogramInput{Title: "Per-problem accuracy c/n", Labels: labels, Series: hist}))
	add(DiffCurve("demo", DiffInput{Title: "pass@k(RL) − pass@k(base)", Series: []CurveSeries{diff}}))
	add(Cover("demo", CoverInput{Title: "Cover@τ", Series: cover}))
	add(Trajectory("demo", TrajectoryInput{Title: "Checkpoints (synthetic numbers)", Steps: []int{0, 100, 200, 300, 400},
		Lines: []TrajectoryLine{
			{Name: "pass@1", Values: []float64{.61, .68, .73, .76, .78}, Lo: []float64{.59, .66, .71, .74, .76}, Hi: []float64{.63, .70, .75, .78, .80}},
			{Name: "pass@128", Values: []float64{.962, .955, .948, .940, .930}},
		}}))
	add(UpSet("demo", UpSetInput{Title: "Solved sets, four models (synthetic split)",
		Models: []string{names[0], names[1], "distilled (synthetic)", "checkpoint 200 (synthetic)"},
		Sets: []UpSetBar{{Members: []int{0, 1, 2, 3}, Count: 430}, {Members: []int{0}, Count: 9},
			{Members: []int{0, 2}, Count: 7}, {Members: []int{1, 3}, Count: 3}, {Members: []int{0, 1, 3}, Count: 22},
			{Members: nil, Count: 16}, {Members: []int{2}, Count: 5}, {Members: []int{0, 3}, Count: 8}}}))
	// Degenerate Venns and a hostile name, small.
	small := Options{Height: 260}
	add(Venn("inside", VennInput{Title: "B inside A", A: "A", B: "B", Both: 40, AOnly: 60, Neither: 5, Options: small}))
	add(Venn("apart", VennInput{Title: "no overlap", A: "A", B: "B", AOnly: 30, BOnly: 12, Neither: 5, Options: small}))
	add(Venn("same", VennInput{Title: "identical", A: "A", B: "B", Both: 50, Neither: 5, Options: small}))
	add(Venn("partial", VennInput{Title: "partial overlap", A: "A", B: "B", Both: 30, AOnly: 70, BOnly: 30, Neither: 5, Options: small}))
	add(Venn("thin", VennInput{Title: "thin lens", A: "A", B: "B", Both: 1, AOnly: 100, BOnly: 100, Neither: 5, Options: small}))
	ten := []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	add(Crossover("n10", CrossoverInput{Title: "n = 10 (HumanEval-like, synthetic)", Options: Options{Height: 300},
		Series: []CurveSeries{{Name: "base", Ks: ten, Values: []float64{.30, .40, .46, .50, .53, .55, .57, .58, .59, .60}},
			{Name: "rl", Ks: ten, Values: []float64{.42, .47, .50, .52, .535, .545, .55, .555, .56, .565}}},
		CrossoverK: 5.2, CrossoverLabel: "k* ≈ 5.2"}))
	add(Venn("empty", VennInput{Title: "A empty", A: "A", B: "</script><script>alert(1)</script>", BOnly: 20, Neither: 5, Options: small}))
	add(Crossover("xss", CrossoverInput{Title: "</script><script>document.title='pwned'</script>",
		Series:  []CurveSeries{{Name: "<img src=x onerror=alert(1)>", Ks: powers, Values: curves[0].Values[:len(powers)]}},
		Options: Options{Renderer: SVG, Height: 300}}))

	var b strings.Builder
	_, here, _, _ := runtime.Caller(0)
	src := "file://" + filepath.Join(filepath.Dir(here), "../../static/echarts.min.js")
	fmt.Fprintf(&b, "<!doctype html><html><head><meta charset=utf-8><title>charts demo</title><script src=%q></script>"+
		"<style>body{font-family:sans-serif;margin:12px;display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:12px}"+
		".container{border:1px solid #ddd}</style></head><body>\n", src)
	for _, s := range snippets {
		b.WriteString(string(s.HTML) + "\n")
	}
	b.WriteString("</body></html>\n")
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (k* = %.2f, both %d, base-only %d, rl-only %d, neither %d)", out, kStar, both, aOnly, bOnly, neither)
}

func readCounts(t *testing.T, path string) []int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, r := range rows[1:] {
		c, err := strconv.Atoi(r[2])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// passKEach is the unbiased pass@k of each problem (Chen et al. 2021), in product form.
func passKEach(cs []int, n, k int) []float64 {
	out := make([]float64, len(cs))
	for j, c := range cs {
		if n-c < k {
			out[j] = 1
			continue
		}
		p := 1.0
		for i := n - c + 1; i <= n; i++ {
			p *= 1 - float64(k)/float64(i)
		}
		out[j] = 1 - p
	}
	return out
}

// mean averages v over idx (all of v when idx is nil).
func mean(v []float64, idx []int) float64 {
	s := 0.0
	if idx == nil {
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	for _, i := range idx {
		s += v[i]
	}
	return s / float64(len(idx))
}

func bootstrapIdx(rng *rand.Rand, n, b int) [][]int {
	out := make([][]int, b)
	for i := range out {
		out[i] = make([]int, n)
		for j := range out[i] {
			out[i][j] = rng.IntN(n)
		}
	}
	return out
}

func bootBand(boots [][]int, stat func([]int) float64) (lo, hi float64) {
	v := make([]float64, len(boots))
	for i, idx := range boots {
		v[i] = stat(idx)
	}
	slices.Sort(v)
	return v[int(0.025*float64(len(v)))], v[int(0.975*float64(len(v)))-1]
}
