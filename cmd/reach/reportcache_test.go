package main

import (
	"context"
	"strings"
	"testing"
)

// --report-cache-mib out of range (or its variable not a number) is refused
// before anything starts, naming the range (a new user's -1 and
// 99999999999999, which overflowed to bytes, were taken).
func TestServeRefusesBadReportCache(t *testing.T) {
	for _, args := range [][]string{{"--report-cache-mib", "-1"}, {"--report-cache-mib", "0"}, {"--report-cache-mib", "99999999999999"}} {
		err := runServe(context.Background(), args)
		if err == nil || !strings.Contains(err.Error(), "want 1 to 1048576") {
			t.Errorf("serve %v: %v", args, err)
		}
	}
	t.Setenv("REACH_REPORT_CACHE_MIB", "lots")
	if err := runServe(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "REACH_REPORT_CACHE_MIB") {
		t.Errorf("REACH_REPORT_CACHE_MIB=lots: %v", err)
	}
}

// --web-db-conns out of range, or its variable not a number, is refused
// before anything starts.
func TestServeRefusesBadWebConns(t *testing.T) {
	for _, args := range [][]string{{"--web-db-conns", "0"}, {"--web-db-conns", "-3"}, {"--web-db-conns", "1001"}} {
		err := runServe(context.Background(), args)
		if err == nil || !strings.Contains(err.Error(), "want 1 to 1000") {
			t.Errorf("serve %v: %v", args, err)
		}
	}
	t.Setenv("REACH_WEB_DB_CONNS", "many")
	if err := runServe(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "REACH_WEB_DB_CONNS") {
		t.Errorf("REACH_WEB_DB_CONNS=many: %v", err)
	}
}
