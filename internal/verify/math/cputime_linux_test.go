//go:build linux

package math

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is the CPU time consumed by the calling OS thread (Linux
// CLOCK_THREAD_CPUTIME_ID). Benchmarks lock their goroutine to its thread
// and use it to report per-core figures that do not depend on how busy the
// machine is.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	const clockThreadCPUTimeID = 3
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}
