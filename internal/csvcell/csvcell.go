// Package csvcell makes text safe to put in a CSV cell that a spreadsheet
// may open: names of models, problem ids and other text from uploaded files
// are untrusted, and a cell starting with =, +, -, @, tab or carriage
// return is run as a formula by Excel, LibreOffice and Google Sheets
// (OWASP, "CSV Injection").
package csvcell

// Safe returns s with a leading apostrophe when its first byte would start
// a formula; other text is returned unchanged. Spreadsheets show the
// apostrophe-prefixed cell as the text; CSV readers see the apostrophe.
func Safe(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}
