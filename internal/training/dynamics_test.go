package training

import "testing"

func TestTwoStage(t *testing.T) {
	steps := []int{0, 100, 200, 300}
	for _, tc := range []struct {
		name           string
		v, lo, hi      []float64
		label          string
		lowest, tf, tt int
	}{
		// Falls to step 200 (band apart from the start), back up at 300 (apart from 200).
		{"two stages", []float64{0.9, 0.8, 0.7, 0.85}, []float64{0.85, 0.74, 0.64, 0.8}, []float64{0.95, 0.86, 0.76, 0.9}, "shrinks-then-expands", 200, 100, 200},
		// Falls and stays down.
		{"still", []float64{0.9, 0.8, 0.7, 0.71}, []float64{0.85, 0.77, 0.66, 0.67}, []float64{0.95, 0.83, 0.74, 0.75}, "still-shrinking", 200, 200, 300},
		// Falls, but every band overlaps the start's: no claim.
		{"overlap", []float64{0.9, 0.85, 0.84, 0.9}, []float64{0.8, 0.75, 0.74, 0.8}, []float64{1, 0.95, 0.94, 1}, "no-shrinkage", 200, 0, 0},
		{"pending", []float64{0.9, 0.8, 0.7, 0.85}, nil, nil, "pending", 200, 0, 0},
	} {
		d, err := TwoStage(256, steps, tc.v, tc.lo, tc.hi)
		if err != nil {
			t.Fatal(err)
		}
		if d.Label != tc.label || d.Lowest != tc.lowest || d.TurnFrom != tc.tf || d.TurnTo != tc.tt || d.Text == "" {
			t.Errorf("%s: %+v; want %s lowest %d turn %d–%d", tc.name, d, tc.label, tc.lowest, tc.tf, tc.tt)
		}
	}
	if _, err := TwoStage(4, []int{0}, []float64{1}, nil, nil); err == nil {
		t.Error("one point accepted")
	}
}
