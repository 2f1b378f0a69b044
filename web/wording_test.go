package web_test

import (
	"context"
	"fmt"
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/examples"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
)

// "Significant" has one meaning on every page: after Holm's adjustment.
// Unadjusted counts say "p < 0.05", and a lead whose bootstrap band
// excludes zero is "clearly ahead" (issue 22.5: the headline counted
// unadjusted p < 0.05 as significant while the support panel counted after
// Holm). Checked on the MATH500 example's page and its debate panel.
func TestSignificantMeansAfterHolm(t *testing.T) {
	a := startApp(t)
	ctx := context.Background()
	id, _, err := intake.Create(ctx, a.st, a.client, examples.Specs()[1])
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 2*time.Minute)
	if err := jobs.ComputeStats(ctx, a.st, id, 200); err != nil {
		t.Fatal(err)
	}
	acct := newAccount(t, a.st, a.url, "reader@lab.org", true, "")
	tags := regexp.MustCompile(`(?s)<script.*?</script>|<style.*?</style>|<[^>]*>`)
	space := regexp.MustCompile(`\s+`)
	checked := 0
	for _, path := range []string{fmt.Sprintf("/comparisons/%d", id), fmt.Sprintf("/comparisons/%d/debate", id)} {
		text := space.ReplaceAllString(html.UnescapeString(tags.ReplaceAllString(getPage(t, a, acct, path), " ")), " ")
		for i := strings.Index(text, "significant"); i >= 0; {
			checked++
			if !strings.HasPrefix(text[i:], "significant after Holm") {
				t.Errorf("%s: %q uses significant without \"after Holm\"", path, text[max(0, i-60):min(len(text), i+60)])
			}
			next := strings.Index(text[i+1:], "significant")
			if next < 0 {
				break
			}
			i += 1 + next
		}
		if strings.Contains(text, "significantly") {
			t.Errorf("%s says significantly", path)
		}
	}
	if checked == 0 {
		t.Fatal("no page said significant at all: the check checked nothing")
	}
}
