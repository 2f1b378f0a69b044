package code

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/reach-lab/reach/internal/metrics"
)

// Limits bound one sandboxed run (one process tree). The zero value of a
// field means its default (DefaultLimits).
type Limits struct {
	// CPU is the CPU time of each process (RLIMIT_CPU, whole seconds,
	// rounded up): SIGXCPU at the limit, SIGKILL one second later.
	CPU time.Duration
	// Wall is the wall-clock time of the whole run; at the limit every
	// process of the sandbox is killed. Default 2*CPU + 1 s, so that a
	// sample that sleeps or blocks is stopped too.
	Wall time.Duration
	// Memory is the address space of each process (RLIMIT_AS), bytes.
	Memory int64
	// Procs is how many processes and threads the sandbox may have at
	// once (RLIMIT_NPROC; see the package doc for how it is counted).
	Procs int
	// Files is the open file descriptors of each process (RLIMIT_NOFILE).
	Files int
	// FileSize is the largest file a process may write (RLIMIT_FSIZE), bytes.
	FileSize int64
	// TmpSize is the size of the sandbox's writable tmpfs, bytes.
	TmpSize int64
	// Output is how many bytes of stdout, and separately of stderr, are
	// read; a run that writes more is killed and fails.
	Output int64
}

// DefaultLimits are Reach's limits for one sample (HumanEval's harness
// allows 3 s; see the package doc for why each value).
var DefaultLimits = Limits{
	CPU:      3 * time.Second,
	Memory:   1 << 30,
	Procs:    16,
	Files:    64,
	FileSize: 16 << 20,
	TmpSize:  64 << 20,
	Output:   16 << 20,
}

// or fills l's zero fields from d. Wall comes from d only together with
// d's CPU: a job's own CPU limit gets its own wall-clock limit.
func (l Limits) or(d Limits) Limits {
	if l.CPU <= 0 {
		l.CPU = d.CPU
		if l.Wall <= 0 {
			l.Wall = d.Wall
		}
	}
	if l.Memory <= 0 {
		l.Memory = d.Memory
	}
	if l.Procs <= 0 {
		l.Procs = d.Procs
	}
	if l.Files <= 0 {
		l.Files = d.Files
	}
	if l.FileSize <= 0 {
		l.FileSize = d.FileSize
	}
	if l.TmpSize <= 0 {
		l.TmpSize = d.TmpSize
	}
	if l.Output <= 0 {
		l.Output = d.Output
	}
	return l
}

// withDefaults fills l's zero fields from DefaultLimits, and Wall with
// 2 × CPU + 1 s.
func (l Limits) withDefaults() Limits {
	l = l.or(DefaultLimits)
	if l.Wall <= 0 {
		l.Wall = 2*l.CPU + time.Second
	}
	return l
}

// Config configures New. The zero value finds bwrap, prlimit and
// /usr/bin/python3 and runs as many sandboxes at once as there are cores.
type Config struct {
	// Python is the interpreter (default /usr/bin/python3, Debian's).
	Python string
	// Bwrap and Prlimit default to the first found in PATH, then /usr/bin.
	Bwrap, Prlimit string
	// Parallel is how many sandboxes run at once (default GOMAXPROCS).
	Parallel int
	// Limits are the defaults for one run; a problem's own time limit
	// replaces CPU.
	Limits Limits
	// UIDBase: when Reach runs as root, sandbox slot i runs as uid and gid
	// UIDBase+i, so that no sandbox is root outside and each has its own
	// process count. Default 0x70000000 + (pid mod 65536) x 64: unused uids,
	// a range per process.
	UIDBase int
}

// Sandbox runs programs under bubblewrap. It is safe for concurrent use:
// at most Parallel runs proceed at once, the others wait.
type Sandbox struct {
	bwrap, prlimit, python string
	root                   []string // bwrap arguments building the read-only root
	libPath                string
	limits                 Limits
	slots                  chan int
	uidBase                int   // > 0: run slot i as uidBase+i
	nprocShared            int   // > 0: not root; RLIMIT_NPROC counts every process of Reach's uid
	err                    error // why the sandbox does not work (nil: it does)
	info                   string
	version                string // python version inside
}

// Err reports why the sandbox cannot run code (nil when it can).
func (s *Sandbox) Err() error { return s.err }

// Info describes the sandbox for the start-up log line.
func (s *Sandbox) Info() string { return s.info }

// Limits returns the default limits of one run.
func (s *Sandbox) Limits() Limits { return s.limits }

// NewSandbox finds the tools, builds the sandbox's root and runs a probe
// program inside it. It never fails: when the sandbox does not work (no
// bubblewrap, no user namespaces, no interpreter) Err says why and every
// run is refused.
func NewSandbox(ctx context.Context, cfg Config) *Sandbox {
	s := &Sandbox{limits: cfg.Limits.withDefaults()}
	par := cfg.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	s.slots = make(chan int, par)
	for i := range par {
		s.slots <- i
	}
	s.err = s.setup(ctx, cfg, par)
	if s.err == nil {
		s.err = s.probe(ctx)
	}
	if s.err == nil {
		s.info = fmt.Sprintf("bubblewrap %s, Python %s, %d at once, CPU %s, memory %d MiB, %d processes per sample",
			bwrapVersion(s.bwrap), s.version, par, s.limits.CPU, s.limits.Memory>>20, s.limits.Procs)
	}
	return s
}

func lookTool(name, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := "/usr/bin/" + name
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not found (Debian package %s)", name, map[string]string{"bwrap": "bubblewrap", "prlimit": "util-linux"}[name])
	}
	return p, nil
}

func (s *Sandbox) setup(ctx context.Context, cfg Config, par int) error {
	var err error
	if s.bwrap, err = lookTool("bwrap", cfg.Bwrap); err != nil {
		return err
	}
	if s.prlimit, err = lookTool("prlimit", cfg.Prlimit); err != nil {
		return err
	}
	py := cfg.Python
	if py == "" {
		py = "/usr/bin/python3"
	}
	if s.python, err = filepath.EvalSymlinks(py); err != nil {
		return fmt.Errorf("python interpreter %s: %w", py, err)
	}
	// Ask the interpreter (a trusted program, on the host) where its
	// standard library and extension modules are.
	qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(qctx, s.python, "-P", "-s", "-c",
		"import sys, sysconfig; print(sysconfig.get_path('stdlib')); print(sysconfig.get_config_var('DESTSHARED') or ''); print(sys.version.split()[0])").Output()
	if err != nil {
		return fmt.Errorf("python interpreter %s does not run: %w", s.python, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 3 {
		return fmt.Errorf("python interpreter %s: unexpected answer %q", s.python, out)
	}
	stdlib, dynload := lines[0], lines[1]
	s.version = lines[2]
	fs := newFileSet()
	dirs := libSearchDirs()
	done := map[string]bool{}
	if err := fs.addELF(py, dirs, done); err != nil {
		return fmt.Errorf("python interpreter: %w", err)
	}
	if py != s.python {
		if err := fs.add(s.python); err != nil {
			return err
		}
	}
	if err := fs.add(stdlib); err != nil {
		return fmt.Errorf("python standard library: %w", err)
	}
	if dynload != "" {
		mods, _ := filepath.Glob(filepath.Join(dynload, "*.so"))
		for _, m := range mods {
			if err := fs.addELF(m, dirs, done); err != nil {
				return fmt.Errorf("python extension module: %w", err)
			}
		}
		if err := fs.add(dynload); err != nil {
			return err
		}
	}
	if err := fs.pack(packCache()); err != nil {
		// Not fatal: every file keeps its own bind (slower set-up).
		slog.Debug("code sandbox: cannot pack the shared libraries into one directory", "err", err)
	}
	s.root = fs.bwrapArgs()
	s.libPath = strings.Join(fs.libDirs, ":")
	if os.Geteuid() == 0 {
		s.uidBase = cfg.UIDBase
		if s.uidBase <= 0 {
			// A range of its own per process (serve and worker on one host,
			// parallel test binaries), so that their sandboxes' process
			// counts stay apart.
			s.uidBase = 0x70000000 + os.Getpid()%65536*max(64, par)
		}
	} else {
		// Not root: every sandbox runs as Reach's own uid, and RLIMIT_NPROC
		// counts all of that uid's processes and threads. Leave room for
		// what runs now plus every slot's share.
		s.nprocShared = tasksOfUID(os.Getuid()) + 256 + par*s.limits.Procs
	}
	return nil
}

// packCache is where packed library directories are kept: a directory
// every sandbox uid can traverse (bwrap binds it as that uid).
func packCache() string {
	if os.Geteuid() == 0 {
		return "/var/cache/reach/sandbox"
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "reach", "sandbox")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("reach-sandbox-%d", os.Getuid()))
}

// tasksOfUID counts the processes and threads owned by uid.
func tasksOfUID(uid int) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		fi, err := os.Stat(filepath.Join("/proc", e.Name()))
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			tasks, _ := os.ReadDir(filepath.Join("/proc", e.Name(), "task"))
			n += max(1, len(tasks))
		}
	}
	return n
}

func bwrapVersion(bwrap string) string {
	out, err := exec.Command(bwrap, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap"))
}

// probe runs a program that must print a known line, and checks from the
// inside that the sandbox has no network and no host files.
func (s *Sandbox) probe(ctx context.Context) error {
	const prog = `import os, socket
ok = not os.path.exists("/etc/passwd") and not os.path.exists("/proc/1")
try:
    socket.create_connection(("127.0.0.1", 5432), timeout=1)
    ok = False
except OSError:
    pass
print("probe", 6 * 7, ok)
`
	res := s.Run(ctx, Job{Program: []byte(prog), Limits: Limits{CPU: 5 * time.Second, Wall: 20 * time.Second}})
	if res.SetupErr != nil {
		return fmt.Errorf("bubblewrap sandbox does not start: %w", res.SetupErr)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != "probe 42 True" {
		return fmt.Errorf("sandbox probe printed %q (exit %d, stderr %q), want %q", got, res.ExitCode, lastLines(res.Stderr, 3), "probe 42 True")
	}
	return nil
}

// Job is one program run in the sandbox.
type Job struct {
	// Program is the Python source, mounted read-only at /sandbox/main.py.
	Program []byte
	// Boot is the Python bootstrap run with -c (default: run Program as
	// __main__). It must write "S" to fd 3 first: that is how a run that
	// started is told from a sandbox that failed to start.
	Boot string
	// Stdin is the program's standard input (nil: empty).
	Stdin []byte
	// Limits for this run; zero fields take the sandbox's defaults.
	Limits Limits
	// EndOnReport ends the run as soon as the bootstrap has written a
	// line after its start mark: what the program left running (threads,
	// children, a stopped init) cannot keep the run alive.
	EndOnReport bool
}

// Result is how a run ended.
type Result struct {
	// SetupErr: the sandbox or the interpreter did not start (an
	// infrastructure failure, not the program's); nothing else is set.
	SetupErr error
	ExitCode int            // the program's exit status (-1 when killed by a signal)
	Signal   syscall.Signal // the signal that ended it, if any
	// TimedOut is "cpu" (RLIMIT_CPU), "wall" (the wall-clock limit) or "".
	TimedOut string
	// OutputLimit: stdout or stderr passed Limits.Output and the run was killed.
	OutputLimit string
	// Stdout and Stderr are what was read (at most Limits.Output bytes
	// each); StdoutBytes/StderrBytes count everything written.
	Stdout, Stderr           []byte
	StdoutBytes, StderrBytes int64
	// Report is what the bootstrap wrote to fd 3 after its start mark.
	Report []byte
	// Ended: Reach ended the run after the report line (Job.EndOnReport);
	// the exit status is then Reach's kill, not the program's.
	Ended  bool
	Wall   time.Duration
	Limits Limits // the limits the run had
}

// bootMain runs /sandbox/main.py as the main module, as `python3 main.py`
// would (an uncaught exception prints its traceback and exits 1;
// SystemExit sets the status). The interpreter starts without the site
// module (-S), so exit() and quit(), which site defines and competitive
// programs call, are defined here.
const bootMain = `import os, sys, builtins
os.write(3, b"S"); os.close(3)
def _exit(code=None):
    raise SystemExit(code)
builtins.exit = builtins.quit = _exit
sys.argv = ["/sandbox/main.py"]
with open("/sandbox/main.py", "rb") as f:
    _src = f.read()
del f
exec(compile(_src, "/sandbox/main.py", "exec"), {"__name__": "__main__", "__file__": "/sandbox/main.py", "__builtins__": builtins})
`

// ErrUnavailable is returned (wrapped) for runs on a sandbox that does not work.
var ErrUnavailable = errors.New("code sandbox unavailable")

// Run runs one job and waits for it. It never runs anything outside
// bubblewrap: on a sandbox that failed its probe it returns SetupErr at
// once. ctx cancels the run (reported as SetupErr, not as the program's
// failure).
func (s *Sandbox) Run(ctx context.Context, job Job) (res Result) {
	defer func() { metrics.SandboxRun(res.outcome(), res.Wall) }()
	lim := job.Limits.or(s.limits).withDefaults()
	if s.bwrap == "" || s.python == "" {
		return Result{SetupErr: fmt.Errorf("%w: %v", ErrUnavailable, s.err), Limits: lim}
	}
	var slot int
	select {
	case slot = <-s.slots:
	case <-ctx.Done():
		return Result{SetupErr: ctx.Err(), Limits: lim}
	}
	defer func() { s.slots <- slot }()
	// PR_SET_PDEATHSIG fires when the thread that forked the child exits;
	// keep this goroutine on one thread until the sandbox is gone.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	res = s.run(ctx, job, lim, slot)
	if s.uidBase > 0 && res.SetupErr != nil && bytes.Contains(res.Stderr, []byte("Resource temporarily unavailable")) {
		// The slot's uid is at its process limit: a sandbox killed from
		// outside (Reach's own restart, a race with bwrap) left processes
		// that the host's init has not reaped yet. They go within seconds.
		deadline := time.Now().Add(5 * time.Second)
		for tasksOfUID(s.uidBase+slot) > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
		}
		res = s.run(ctx, job, lim, slot)
	}
	return res
}

// outcome names how a run ended, for metrics (one of a fixed set).
func (r Result) outcome() string {
	switch {
	case errors.Is(r.SetupErr, ErrUnavailable):
		return "unavailable"
	case r.SetupErr != nil:
		return "setup_error"
	case r.TimedOut == "cpu":
		return "cpu_timeout"
	case r.TimedOut != "":
		return "wall_timeout"
	case r.OutputLimit != "":
		return "output_limit"
	case r.Ended:
		return "reported"
	case r.Signal != 0:
		return "signal"
	case r.ExitCode == 0:
		return "exit_ok"
	}
	return "exit_error"
}

func (s *Sandbox) args(job Job, lim Limits, slot int) []string {
	cpu := int64((lim.CPU + time.Second - 1) / time.Second)
	nproc := lim.Procs
	if s.nprocShared > 0 {
		nproc = s.nprocShared
	}
	a := []string{
		fmt.Sprintf("--cpu=%d:%d", cpu, cpu+1),
		fmt.Sprintf("--as=%d:%d", lim.Memory, lim.Memory),
		fmt.Sprintf("--nproc=%d:%d", nproc, nproc),
		fmt.Sprintf("--nofile=%d:%d", lim.Files, lim.Files),
		fmt.Sprintf("--fsize=%d:%d", lim.FileSize, lim.FileSize),
		"--core=0:0",
		"--", s.bwrap,
		"--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--disable-userns", "--cap-drop", "ALL",
		"--uid", "65534", "--gid", "65534", "--hostname", "sandbox",
		"--die-with-parent", "--new-session", "--clearenv",
		"--setenv", "PATH", "/usr/bin:/bin",
		"--setenv", "HOME", "/tmp",
		"--setenv", "LC_ALL", "C.UTF-8",
		"--setenv", "PYTHONHASHSEED", "0",
		"--setenv", "PYTHONIOENCODING", "utf-8",
		"--setenv", "PYTHONDONTWRITEBYTECODE", "1",
	}
	if s.libPath != "" {
		a = append(a, "--setenv", "LD_LIBRARY_PATH", s.libPath)
	}
	a = append(a, s.root...)
	// --dev is a tmpfs without a size limit: read-only, so that no sample
	// fills memory through /dev/shm (device nodes still work).
	a = append(a, "--dev", "/dev", "--remount-ro", "/dev",
		"--size", strconv.FormatInt(lim.TmpSize, 10), "--tmpfs", "/tmp",
		"--dir", "/sandbox",
		"--ro-bind-data", "4", "/sandbox/main.py",
		"--remount-ro", "/",
		"--chdir", "/tmp",
		"--", s.python, "-S", "-P", "-s", "-B", "-c", cmpOr(job.Boot, bootMain))
	return a
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Sandbox) run(ctx context.Context, job Job, lim Limits, slot int) Result {
	res := Result{ExitCode: -1, Limits: lim}
	start := time.Now()
	cmd := exec.Command(s.prlimit, s.args(job, lim, slot)...)
	// Nothing of Reach's environment (database URL, secrets) reaches the
	// sandbox, not even bwrap itself: an empty, non-nil environment.
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.uidBase > 0 {
		id := uint32(s.uidBase + slot)
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: id, Gid: id, Groups: []uint32{}}
	}
	// fd 3: the bootstrap's start mark and report; fd 4: the program,
	// which bwrap copies into /sandbox/main.py before the program starts.
	repR, repW, err := os.Pipe()
	if err != nil {
		res.SetupErr = err
		return res
	}
	progR, progW, err := os.Pipe()
	if err != nil {
		repR.Close()
		repW.Close()
		res.SetupErr = err
		return res
	}
	cmd.ExtraFiles = []*os.File{repW, progR}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		res.SetupErr = err
		return res
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		res.SetupErr = err
		return res
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		res.SetupErr = err
		return res
	}
	// Descriptors Reach inherited without close-on-exec (from a shell, a
	// service manager, a test harness) would pass through prlimit and bwrap
	// into the sandbox: mark every one close-on-exec first.
	if err := closeOnExecFrom(3); err != nil {
		res.SetupErr = err
		return res
	}
	if err := cmd.Start(); err != nil {
		repR.Close()
		repW.Close()
		progR.Close()
		progW.Close()
		res.SetupErr = fmt.Errorf("start bubblewrap: %w", err)
		return res
	}
	repW.Close()
	progR.Close()
	pgid := cmd.Process.Pid
	var killOnce sync.Once
	var reaped atomic.Bool
	kill := func() { killOnce.Do(func() { stopSandbox(pgid, &reaped) }) }

	var wg sync.WaitGroup
	var mu sync.Mutex
	over := func(stream string) {
		mu.Lock()
		if res.OutputLimit == "" {
			res.OutputLimit = stream
		}
		mu.Unlock()
		kill()
	}
	wg.Add(5)
	go func() {
		defer wg.Done()
		_, _ = progW.Write(job.Program)
		progW.Close()
	}()
	go func() {
		defer wg.Done()
		if len(job.Stdin) > 0 {
			_, _ = stdin.Write(job.Stdin)
		}
		stdin.Close()
	}()
	go func() {
		defer wg.Done()
		res.Stdout, res.StdoutBytes = readCapped(stdout, lim.Output, func() { over("stdout") })
	}()
	go func() {
		defer wg.Done()
		res.Stderr, res.StderrBytes = readCapped(stderr, lim.Output, func() { over("stderr") })
	}()
	go func() {
		defer wg.Done()
		res.Report = readReport(repR, 64<<10, job.EndOnReport, func() {
			mu.Lock()
			res.Ended = true
			mu.Unlock()
			kill()
		})
		repR.Close()
	}()

	done := make(chan struct{})
	var cancelled bool
	go func() {
		// The wall-clock limit counts the time the program was not kept
		// waiting for a CPU by other work on the machine (the main
		// process's run-queue wait, from /proc/PID/schedstat): a sleeping
		// or blocked sample is stopped at lim.Wall however busy the
		// machine is, and a CPU-bound one is not made a timeout by load
		// (RLIMIT_CPU bounds its CPU time). Only a program running alone
		// gets this credit. Past 10 x lim.Wall of plain
		// wall-clock time the run is stopped whatever it waited.
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		main := 0
		var waited time.Duration
		for {
			select {
			case <-tick.C:
				el := time.Since(start)
				if main == 0 {
					main = sandboxMain(pgid)
				}
				// Credit only a lone process's wait: a sample with children
				// of its own competes with itself, and keeps the last credit.
				if main > 0 && len(childPIDs(main)) == 0 {
					if w, ok := runqueueWait(main); ok {
						waited = w
					}
				}
				if el-waited >= lim.Wall || el >= 10*lim.Wall {
					mu.Lock()
					res.TimedOut = "wall"
					mu.Unlock()
					kill()
					return
				}
			case <-ctx.Done():
				mu.Lock()
				cancelled = true
				mu.Unlock()
				kill()
				return
			case <-done:
				return
			}
		}
	}()
	wg.Wait()
	werr := cmd.Wait()
	reaped.Store(true)
	close(done)
	kill() // nothing of the group outlives the run
	res.Wall = time.Since(start)
	mu.Lock()
	defer mu.Unlock()
	if cancelled {
		return Result{SetupErr: fmt.Errorf("cancelled: %w", ctx.Err()), Limits: lim}
	}
	var ee *exec.ExitError
	switch {
	case res.Ended && res.TimedOut == "" && res.OutputLimit == "":
	case werr == nil:
		res.ExitCode = 0
	case errors.As(werr, &ee):
		ws, _ := ee.Sys().(syscall.WaitStatus)
		switch {
		case ws.Signaled():
			res.Signal = ws.Signal()
		case ws.Exited():
			res.ExitCode = ws.ExitStatus()
			// bwrap reports a child killed by signal N as exit status 128+N.
			if res.ExitCode > 128 && res.ExitCode < 128+65 {
				res.Signal = syscall.Signal(res.ExitCode - 128)
				res.ExitCode = -1
			}
		}
	default:
		res.SetupErr = werr
		return res
	}
	if !bytes.HasPrefix(res.Report, []byte("S")) {
		// The program never started (bwrap or the interpreter failed):
		// whatever the limits say, this is not the program's doing.
		res.SetupErr = fmt.Errorf("the sandbox did not start: %s", setupMessage(res))
		return res
	}
	res.Report = res.Report[1:]
	if res.TimedOut == "" && res.Signal == syscall.SIGXCPU {
		res.TimedOut = "cpu"
	}
	return res
}

func setupMessage(res Result) string {
	msg := strings.TrimSpace(string(lastLines(res.Stderr, 3)))
	if msg == "" {
		msg = fmt.Sprintf("exit status %d", res.ExitCode)
		if res.Signal != 0 {
			msg = "killed by " + res.Signal.String()
		}
	}
	return msg
}

// readCapped reads r to the end, keeping at most limit bytes; past the
// limit it calls over once and keeps draining until r closes.
func readCapped(r io.Reader, limit int64, over func()) ([]byte, int64) {
	var buf bytes.Buffer
	var total int64
	chunk := make([]byte, 32<<10)
	fired := false
	for {
		n, err := r.Read(chunk)
		if n > 0 {
			if room := limit - int64(buf.Len()); room > 0 {
				buf.Write(chunk[:min(int64(n), room)])
			}
			total += int64(n)
			if total > limit && !fired {
				fired = true
				over()
			}
		}
		if err != nil {
			return buf.Bytes(), total
		}
	}
}

// sandboxMain returns the host pid of the program bwrap started: the child
// of bwrap's reaper (pid 1 of the sandbox), itself bwrap's child; 0 while
// it does not exist yet or /proc does not list children.
// stopSandbox kills a sandbox from the inside out: first its pid
// namespace's init (bwrap's child; the kernel then kills every process in
// the namespace), so that bwrap reaps it and exits by itself; bwrap's
// process group a moment later, or at once when there is no init yet.
// Killing bwrap first would orphan its child to the host's init, which
// may reap it only seconds later: those zombies count against the slot
// uid's RLIMIT_NPROC, and the next run in that slot could not fork.
// Once reaped is set, bwrap is gone and its pgid may be another's.
func stopSandbox(pgid int, reaped *atomic.Bool) {
	inits := childPIDs(pgid)
	for _, pid := range inits {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(inits) == 0 {
		if !reaped.Load() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		return
	}
	time.AfterFunc(time.Second, func() {
		if !reaped.Load() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
}

func sandboxMain(bwrapPID int) int {
	for _, init := range childPIDs(bwrapPID) {
		if kids := childPIDs(init); len(kids) > 0 {
			return kids[0]
		}
	}
	return 0
}

func childPIDs(pid int) []int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// runqueueWait is how long pid has been runnable but waiting for a CPU
// (the second field of /proc/PID/schedstat, nanoseconds).
func runqueueWait(pid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return time.Duration(ns), true
}

// readReport reads the bootstrap's pipe (at most limit bytes). With
// endOnLine it calls end once a full line follows the start mark.
func readReport(r io.Reader, limit int64, endOnLine bool, end func()) []byte {
	var buf bytes.Buffer
	chunk := make([]byte, 4096)
	ended := false
	for {
		n, err := r.Read(chunk)
		if n > 0 && int64(buf.Len()) < limit {
			buf.Write(chunk[:min(int64(n), limit-int64(buf.Len()))])
			if endOnLine && !ended && buf.Len() > 1 && bytes.IndexByte(buf.Bytes()[1:], '\n') >= 0 {
				ended = true
				end()
			}
		}
		if err != nil {
			return buf.Bytes()
		}
	}
}

// closeOnExecFrom sets close-on-exec on every descriptor >= from.
func closeOnExecFrom(from int) error {
	if err := unix.CloseRange(uint(from), ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	// Kernels before 5.11: one descriptor at a time.
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list open descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < from {
			continue
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return fmt.Errorf("close-on-exec on descriptor %d: %w", fd, err)
		}
	}
	return nil
}

// lastLines returns the last n non-empty lines of b.
func lastLines(b []byte, n int) []byte {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return []byte(strings.Join(lines, "\n"))
}
