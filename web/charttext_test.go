package web_test

import "github.com/reach-lab/reach/internal/charts/chartstest"

// textOverlapsJS lists the texts a chart drew over each other (chartstest.TextOverlapsJS).
const textOverlapsJS = chartstest.TextOverlapsJS
