package web_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// Requests that say two different things are refused, saying which: a
// share with both expires_in and expires_at.
func TestShareWithTwoExpiries(t *testing.T) {
	f := newFixture(t)
	body := `{"expires_in": "72h", "expires_at": "2099-01-01T00:00:00Z"}`
	resp := f.do("owner", "POST", fmt.Sprintf("/api/v1/comparisons/%d/shares", f.cid), "application/json", []byte(body))
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(b), "not both") {
		t.Errorf("HTTP %d %s", resp.StatusCode, b)
	}
}
