// Package static holds Reach's front-end files (vendored JS/CSS/fonts with their licences, see
// VENDOR.md, plus Reach's own app.css/app.js when present) embedded into the binary.
//
// Serve with e.g. http.StripPrefix("/static/", http.FileServerFS(static.FS)) so that
// /static/echarts.min.js maps to echarts.min.js here.
package static

import "embed"

// FS holds every *.js, *.css and *.svg (the icon) at the top level, the katex/ tree, licenses/ and VENDOR.md;
// the Go source is not included.
//
//go:embed *.js *.css *.svg katex licenses VENDOR.md
var FS embed.FS
