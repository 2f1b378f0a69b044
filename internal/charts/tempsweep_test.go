package charts

import (
	"strings"
	"testing"
)

func TestKStarByTemperature(t *testing.T) {
	s, err := KStarByTemperature("c1", KStarInput{Title: "k*", KMax: 64, Series: []KStarSeries{
		{Name: "rl vs base", Temps: []float64{0.6, 1, 1.2}, K: []float64{12, 20, 64}, Lo: []float64{8, 10, 30}, Hi: []float64{16, 40, 64}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "kstar_temp_c1" || !strings.Contains(string(s.HTML), "temperature") || !strings.Contains(string(s.HTML), BandsLegend) {
		t.Errorf("snippet %s: %.200s", s.ID, s.HTML)
	}
	for name, in := range map[string]KStarInput{
		"no series":      {KMax: 64},
		"k above k max":  {KMax: 8, Series: []KStarSeries{{Name: "a", Temps: []float64{1}, K: []float64{9}}}},
		"not increasing": {KMax: 8, Series: []KStarSeries{{Name: "a", Temps: []float64{1, 0.6}, K: []float64{2, 3}}}},
		"k max below 1":  {KMax: 0, Series: []KStarSeries{{Name: "a", Temps: []float64{1}, K: []float64{1}}}},
	} {
		if _, err := KStarByTemperature("c", in); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
