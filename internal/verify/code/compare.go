package code

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// sameOutput compares a program's stdout with a test's expected output the
// way competitive-programming judges without a special checker do:
//
//  1. Lines compared after "\r\n" -> "\n", trailing whitespace of each line
//     and trailing blank lines removed (LiveCodeBench strips each line too).
//  2. Otherwise whitespace-separated tokens: equal text, or both numbers of
//     equal value ("1.0" = "1"), or, when the expected token has a decimal
//     point, within 1e-6 absolute or relative (floating-point answers).
//
// diff describes the first difference for the verdict's reason.
func sameOutput(got, want string) (ok bool, diff string) {
	gl, wl := normLines(got), normLines(want)
	if equalLines(gl, wl) {
		return true, ""
	}
	gt, wt := strings.Fields(got), strings.Fields(want)
	if len(gt) == len(wt) {
		same := true
		for i := range gt {
			if !sameToken(gt[i], wt[i]) {
				same = false
				break
			}
		}
		if same {
			return true, ""
		}
	}
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			return false, fmt.Sprintf("line %d is %q, expected %q", i+1, clip(gl[i], 80), clip(wl[i], 80))
		}
	}
	if len(gl) == 0 {
		return false, "no output"
	}
	return false, fmt.Sprintf("%d lines of output, expected %d", len(gl), len(wl))
}

func normLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r\f\v")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.TrimSpace(a[i]) != strings.TrimSpace(b[i]) {
			return false
		}
	}
	return true
}

func sameToken(got, want string) bool {
	if got == want {
		return true
	}
	gr, ok1 := new(big.Rat).SetString(got)
	wr, ok2 := new(big.Rat).SetString(want)
	if !ok1 || !ok2 {
		return false
	}
	if gr.Cmp(wr) == 0 {
		return true
	}
	if !strings.Contains(want, ".") {
		return false
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	d := math.Abs(g - w)
	return d <= 1e-6 || d <= 1e-6*math.Abs(w)
}
