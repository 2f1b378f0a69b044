package charts

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/charts/chartstest"
)

// A title wider than the chart breaks onto lines and pushes every grid down, the chart growing
// by as much: at 340 px the UpSet chart's second title line no longer runs over the tallest
// bar's count, nor the crossover chart's over its k* label (issue 22.3).
func TestWrappedTitlePushesThePlot(t *testing.T) {
	up, err := UpSet("u", UpSetInput{Title: "Solved sets: problems solved by exactly these models",
		Models: []string{"SFT", "PPO step 100", "PPO step 300"},
		Sets:   []UpSetBar{{Members: []int{0}, Count: 25}, {Members: []int{0, 1}, Count: 3}, {Members: []int{0, 1, 2}, Count: 240}}})
	if err != nil {
		t.Fatal(err)
	}
	cross, err := Crossover("c", CrossoverInput{Title: "pass@k of every checkpoint of the PPO run, with 95% bands",
		CrossoverK: 6, CrossoverLabel: "k* ≈ 6.0",
		Series: []CurveSeries{{Name: "base", Ks: []int{1, 4, 16}, Values: []float64{.3, .6, .9}},
			{Name: "rl", Ks: []int{1, 4, 16}, Values: []float64{.5, .65, .8}}}})
	if err != nil {
		t.Fatal(err)
	}
	short, err := UpSet("s", UpSetInput{Title: "Solved sets", Models: []string{"a", "b"}, Sets: []UpSetBar{{Members: []int{0}, Count: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := chartPage(t, 420, []layoutBox{{up, 340}, {cross, 340}, {short, 340}})
	time.Sleep(300 * time.Millisecond) // the fit runs in the next animation frame after a resize
	for _, tc := range []struct {
		id    string
		moved bool
	}{{up.ID, true}, {cross.ID, true}, {short.ID, false}} {
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](fmt.Sprintf(`(function () {
			const div = document.getElementById(%q);
			const inst = echarts.getInstanceByDom(div);
			return {overlaps: (%s)(div), extra: Number(div.dataset.titleExtra || 0)};
		})()`, tc.id, chartstest.TextOverlapsJS)))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Overlaps []string
			Extra    int
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		for _, o := range got.Overlaps {
			t.Errorf("%s: %s", tc.id, o)
		}
		if (got.Extra > 0) != tc.moved {
			t.Errorf("%s: title pushed the plot by %d px; want a push: %v", tc.id, got.Extra, tc.moved)
		}
	}
}
