// Package migrations embeds Reach's SQL migrations (goose format) into the binary.
package migrations

import "embed"

// FS holds the *.sql migrations, applied in file-name order.
//
//go:embed *.sql
var FS embed.FS
