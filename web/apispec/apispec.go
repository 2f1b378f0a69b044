// Package apispec holds the OpenAPI 3.1 description of Reach's JSON API
// (/api/v1/), written by hand in openapi.json and embedded in the binary,
// which serves it at /api/v1/openapi.json. The web package's tests check
// it against the router and validate real responses against it.
package apispec

import _ "embed"

// MediaType is the document's registered media type (IANA:
// application/vnd.oai.openapi+json), with the OpenAPI version.
const MediaType = "application/vnd.oai.openapi+json;version=3.1"

//go:embed openapi.json
var document []byte

// JSON returns the document. Callers must not modify it.
func JSON() []byte { return document }
