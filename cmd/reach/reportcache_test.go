package main

import (
	"context"
	"strings"
	"testing"
)

// A serve setting out of range, or its variable not a number, is refused
// before anything starts, naming the range: --report-cache-mib (a new
// user's -1 and 99999999999999, which overflowed to bytes, were taken) and
// --web-db-conns.
func TestServeRefusesBadSettings(t *testing.T) {
	for _, c := range []struct {
		flag, want  string
		bad         []string
		env, badEnv string
	}{
		{"--report-cache-mib", "want 1 to 1048576", []string{"-1", "0", "99999999999999"}, "REACH_REPORT_CACHE_MIB", "lots"},
		{"--web-db-conns", "want 1 to 1000", []string{"0", "-3", "1001"}, "REACH_WEB_DB_CONNS", "many"},
	} {
		t.Run(c.flag, func(t *testing.T) {
			for _, v := range c.bad {
				args := []string{c.flag, v}
				if err := runServe(context.Background(), args); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("serve %v: %v", args, err)
				}
			}
			t.Setenv(c.env, c.badEnv)
			if err := runServe(context.Background(), nil); err == nil || !strings.Contains(err.Error(), c.env) {
				t.Errorf("%s=%s: %v", c.env, c.badEnv, err)
			}
		})
	}
}
