package main

import "testing"

// Every path a page's load asks for is new: a repeated view or query is
// served from what the page keeps, and would time the cache instead (the
// 200 warm-up requests once took most of the 500 new views and queries).
func TestFreshPathsDistinct(t *testing.T) {
	for _, n := range []int{1, pageRequests(20, 400), pageRequests(200, 5000)} {
		views, searches, whole, common := freshPaths("/comparisons/1", n)
		for name, list := range map[string][]string{"views": views, "searches": searches, "whole": whole, "common": common} {
			if len(list) < n {
				t.Fatalf("n=%d: %d %s", n, len(list), name)
			}
			seen := map[string]bool{}
			for _, p := range list[:n] {
				if seen[p] {
					t.Fatalf("n=%d: %s asks for %s twice", n, name, p)
				}
				seen[p] = true
			}
		}
	}
}
