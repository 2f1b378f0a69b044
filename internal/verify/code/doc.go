// Package code grades code completions: each completion runs against its
// problem's tests in a bubblewrap sandbox, and passes when every test does.
//
// # What is graded
//
// ParseTests reads a problem's tests from its dataset fields: HumanEval
// (prompt, test defining check(candidate), entry_point), MBPP (test_list of
// asserts) or stdin/stdout tests (APPS input_output, CodeContests
// public/private/generated_tests, LiveCodeBench-style lists of {input,
// output}), with an optional time_limit. A harness (HarnessHumanEval by
// default) turns the completion into a program:
//
//   - HumanEval: prompt + completion + test + "check(entry_point)", run once
//     the way openai/human-eval's check_correctness runs it: exec() in a
//     fresh namespace, stdin unreadable, the functions its reliability_guard
//     disables set to None. Passing means the program ran to its end; the
//     harness reports that on a private pipe with a one-time token, so a
//     completion that exits early (sys.exit, os._exit) or prints "passed"
//     does not pass.
//   - MBPP: completion + test_setup_code + the asserts, run the same way.
//   - stdin/stdout: the completion alone, run once per test with the input
//     on stdin; stdout is compared line by line after trimming trailing
//     whitespace, then token by token (numbers by value, decimals within
//     1e-6); the first failing test stops the run.
//
// A chat reply's Markdown code block is taken out of the completion first.
// A verdict's Reason names the failing test and the error (the assertion, an
// exception with its message and line, a syntax error, a timeout, the memory
// limit, a crash signal); Detail keeps the first 2 KiB of stdout and the
// last 2 KiB of stderr (the traceback), and for stdin/stdout tests the
// first KiB of the input, the expected and the actual output.
//
// # Threat model
//
// Completions are hostile code: a model may write, by accident or after RL
// learned to, code that deletes files, reads secrets, opens connections,
// forks without end, fills memory or the disk, or tries to outlive its run.
// The sandbox must keep all of that from Reach, its database, its host and
// other samples. It does not try to stop a completion from cheating on its
// own tests by inspecting the interpreter (e.g. finding the harness's token
// in memory, or returning an object whose __eq__ is always true): every
// in-process harness (human-eval, EvalPlus, LiveCodeBench) shares that
// limit, and such samples show on the problem page for review.
//
// # What a sample sees
//
// Every run (one per sample, or per test for stdin/stdout) is a new
// process tree under bubblewrap (Debian's bubblewrap package, bwrap), started
// through util-linux prlimit so that the limits below hold from the first
// instruction:
//
//   - New user, PID, network, IPC, UTS and cgroup namespaces. Inside, the
//     process is uid 65534 with no capabilities and may not create further
//     user namespaces (--disable-userns). The network namespace holds only
//     a loopback interface that is down: no connection to anything,
//     127.0.0.1:5432 (Postgres) included; abstract Unix sockets are per
//     network namespace too.
//   - A root that is a read-only tmpfs holding only the interpreter: the
//     python3 binary, its standard library, its extension modules and the
//     shared libraries these need (found from their ELF headers at start-up),
//     mounted read-only; a minimal, read-only /dev (null, zero, full,
//     random, urandom, tty, pts);
//     no /proc, no /etc, no /home, no other program (not even /bin/sh), and
//     none of Reach's files. /sandbox/main.py is the program (read-only).
//     The working directory /tmp is an empty tmpfs of 64 MiB, gone with the
//     run.
//   - An environment of PATH, HOME, LC_ALL, LD_LIBRARY_PATH and Python's
//     fixed PYTHONHASHSEED=0 (so set order, and the verdict, repeat) only:
//     nothing of Reach's environment (DATABASE_URL, REACH_SECRET) reaches it,
//     not even bwrap itself, which starts with an empty environment. Only
//     stdin, stdout, stderr and the harness's pipe are open.
//   - --new-session (no terminal to inject into) and --die-with-parent:
//     if Reach dies, the sandbox dies.
//   - When Reach runs as root, each of the Parallel slots runs as its own
//     unprivileged uid (Config.UIDBase + slot), so a sandbox is never root
//     outside its namespace, and each slot's process limit is its own.
//
// # Limits (DefaultLimits; a problem's time_limit replaces the CPU time)
//
//   - CPU time, 3 s per process (RLIMIT_CPU; SIGXCPU, then SIGKILL a second
//     later): human-eval's 3 s limit, counted in CPU time so that a loaded
//     machine does not turn slow samples into timeouts.
//   - Wall clock, 2 x CPU + 1 s for the whole run (7 s by default): a
//     sample that sleeps or blocks is killed. The time the program waited
//     for a CPU because the machine was busy does not count (its run-queue
//     wait, /proc/PID/schedstat, credited while the program runs without
//     child processes), so load does not turn a slow sample into a timeout;
//     10 x the limit of plain wall-clock time stops any run. At the
//     limit Reach kills the
//     process group it started; bwrap's reaper dies with it (PDEATHSIG) and
//     the kernel kills every process of the PID namespace, daemons and
//     double-forked children included. A run that ends normally ends its PID
//     namespace the same way.
//   - Address space, 1 GiB per process (RLIMIT_AS): a memory bomb gets
//     MemoryError. Total memory is bounded by processes x address space.
//   - Processes and threads, 16 (RLIMIT_NPROC): a fork bomb stops there. As
//     root each slot has its own uid, so the count is per sandbox; as another
//     user the count is shared by all of that user's processes and the limit
//     is raised to what runs at start-up plus 16 per slot, which still bounds
//     a fork bomb but lets one sample take the others' share: run Reach as
//     root or as a dedicated user.
//   - Open files, 64 per process (RLIMIT_NOFILE); file size, 16 MiB
//     (RLIMIT_FSIZE); core dumps, none; the tmpfs, 64 MiB.
//   - Output: at most 16 MiB of stdout and of stderr are read (for
//     stdin/stdout tests, twice the expected output plus 64 KiB, at least 1
//     MiB); a run that writes more is killed and fails with "output limit".
//
// Not limited: CPU use across processes beyond processes x CPU time (the
// wall clock bounds it), and kernel attack surface beyond what namespaces
// and no capabilities remove (there is no seccomp filter). A kernel exploit
// from inside the sandbox is outside this model; keep the kernel patched.
//
// # When the sandbox cannot run
//
// NewSandbox probes the sandbox once (a program that must print a known
// line and see no /etc/passwd, no /proc and no network). If bwrap or prlimit
// is missing, user namespaces are disabled (kernel.unprivileged_userns_clone
// = 0, a container without them) or the interpreter does not start, Err says
// why, Reach logs it at start-up and shows it on the page, and every code
// sample gets verify.NotGraded: it stays pending and is never counted wrong.
// Nothing ever runs outside the sandbox.
//
// Speed: the sandbox costs about 10 ms per run on top of starting python3
// (BenchmarkSandboxOverhead prints both); see the README.
package code
