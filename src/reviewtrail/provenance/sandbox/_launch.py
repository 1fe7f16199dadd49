"""The programs that start inside the sandbox: the supervisor, the code launchers, the proxy bridge.

Every sandbox runs ``/usr/bin/python3 -c SUPERVISOR`` as its command (pid 2 of the sandbox's
pid namespace, under bubblewrap's init). The supervisor:

1. in ``--network allowlist`` mode, listens on ``127.0.0.1:<port>`` of the sandbox's own
   loopback and forks the *bridge*, which copies every connection to the host proxy's Unix
   socket bound at ``/run/rt-proxy/proxy.sock`` (the sandbox has no other way out);
2. sets the resource limits (``RLIMIT_DATA``, ``RLIMIT_FSIZE``, ``RLIMIT_CPU``,
   ``RLIMIT_NPROC``), inherited by everything the code starts;
3. forks the code: python code runs in that child itself (only ``os`` and ``sys`` are loaded;
   see :data:`_PY_CHILD`), anything else is ``exec``'d (bash, a kernel worker) with the signal
   dispositions Python changed (SIGPIPE, SIGXFSZ) restored;
4. every 10 ms counts the sandbox's processes and sums their private resident memory; past
   ``max procs`` or ``max memory`` it writes ``limit <name>`` to its control pipe and kills
   every process of the sandbox;
5. exits with the code's status (128 + N when signal N killed it); a death by SIGXCPU or
   SIGXFSZ is reported as ``limit time`` / ``limit file-size``.

The control pipe is only the supervisor's report; the python child keeps it open to report an
uncaught ``MemoryError`` (``limit memory``). Code can write to it too, but can only make its
own run look worse.

Arguments: ``<control fd> <memory> <procs> <file size> <cpu s> <bridge port or 0>
<fds to close in the supervisor, comma-separated> <mode> ...``; mode ``py <report fd>
<code fd>`` or ``exec <argv>...``.
"""

from __future__ import annotations

from collections.abc import Sequence

from reviewtrail.provenance.sandbox._limits import ResourceLimits

__all__ = [
    "BASH",
    "BASH_BOOTSTRAP",
    "BASH_LAUNCHER",
    "BRIDGE_PORT",
    "PROXY_DIR",
    "PROXY_SOCKET",
    "PYTHON",
    "PY_WORKER",
    "SUPERVISOR",
    "bash_command",
    "supervisor_command",
]

PYTHON = "/usr/bin/python3"
BASH = "/bin/bash"

PROXY_DIR = "/run/rt-proxy"
PROXY_SOCKET = PROXY_DIR + "/proxy.sock"
BRIDGE_PORT = 3128  # on the sandbox's own loopback; nothing else listens there

# Bash: ``bash -c BASH_LAUNCHER bash <report fd> <code fd> <control fd or -> [<supervisor> <memory KiB>
# <procs> <file size KiB> <cpu s> <memory bytes>]``: the code from <code fd>, then the report on <report
# fd>: the working directory, NUL, one NAME=value NUL per variable, a final NUL. With a control fd (network
# "none"), the launcher itself sets the limits (``ulimit``) and starts the supervisor in "watch" mode in the
# background (detached, so ``wait`` and ``$!`` never see it): a bash run does not wait for Python to start.
BASH_LAUNCHER = """\
IFS= read -r -d '' __rt_code <&"$2"
{ printf '%s\\0' "$(pwd -P)"
  for __rt_n in $(compgen -e); do [[ -n ${!__rt_n+x} ]] && printf '%s=%s\\0' "$__rt_n" "${!__rt_n}"; done
  printf '\\0'; } >&"$1"
eval "exec $1>&- $2<&-"
if [[ $3 != - ]]; then
  ( exec /usr/bin/python3 -S -c "$4" "$3" "$9" "$6" 0 0 0 "" watch </dev/null >/dev/null 2>&1 & )
  if [[ $5 == -* ]]; then ulimit -v "${5#-}"; else ulimit -d "$5"; fi && ulimit -f "$7" -u "$6" &&
    ulimit -S -t "$8" && ulimit -H -t $(($8 + 1)) || exit 126
  eval "exec $3>&-"
fi
unset __rt_n
set --
eval "unset __rt_code
$__rt_code"
"""

# The persistent kernels' workers (see ``kernels._kernels``).
PY_WORKER = """\
import json, os, sys, traceback, types

def _status(exc):
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1

def _serve(requests, replies):
    os.set_inheritable(requests, False)
    os.set_inheritable(replies, False)
    out, err = os.dup(1), os.dup(2)
    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    sys.argv = ["-c"]
    requests, replies = os.fdopen(requests, "rb"), os.fdopen(replies, "wb")
    while len(head := requests.read(4)) == 4:
        req = json.loads(requests.read(int.from_bytes(head, "big")))
        status, limit = 0, None
        try:
            exec(compile(req["code"], "<sandbox>", "exec"), main.__dict__)
        except SystemExit as exc:
            status = _status(exc)
        except BaseException as exc:
            traceback.print_exception(type(exc), exc, exc.__traceback__.tb_next if exc.__traceback__ else None)
            status = 1
            limit = "memory" if isinstance(exc, MemoryError) else None
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:
                pass
        mark = req["sentinel"].encode()
        os.write(out, mark)
        os.write(err, mark)
        try:
            cwd = os.getcwd()
        except OSError:
            cwd = "unavailable"
        body = json.dumps({"exit_code": status, "cwd": cwd, "env": dict(os.environ), "limit": limit}).encode()
        replies.write(len(body).to_bytes(4, "big") + body)
        replies.flush()

_serve(int(sys.argv[1]), int(sys.argv[2]))
"""

# The first text bash reads from its script pipe; {req}/{resp} are the passed fd numbers.
BASH_BOOTSTRAP = """\
exec {{__rt_out}}>&1 {{__rt_err}}>&2 {{__rt_resp}}>&{resp} {resp}>&- {req}<&-
__rt_end() {{
  local __rt_s=$1 __rt_n IFS=$' \\t\\n'
  printf '%s' "$2" >&$__rt_out
  printf '%s' "$2" >&$__rt_err
  {{ printf '%s\\0%s\\0' "$__rt_s" "$(pwd -P 2>/dev/null || echo unavailable)"
    for __rt_n in $(compgen -e); do [[ -n ${{!__rt_n+x}} ]] && printf '%s=%s\\0' "$__rt_n" "${{!__rt_n}}"; done
    printf '\\0'; }} >&$__rt_resp
  return "$__rt_s"
}}
"""


_BRIDGE = """\
def _bridge(lsock, control, closing):
    import socket, threading
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    for fd in (control, *closing):
        try:
            os.close(fd)
        except OSError:
            pass
    def pump(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (dst, src):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    def serve(conn):
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(%(socket)r)
        except OSError:
            conn.close()
            up.close()
            return
        threading.Thread(target=pump, args=(up, conn), daemon=True).start()
        pump(conn, up)
    while True:
        conn, _ = lsock.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""

# The python code's own process (a fork of the supervisor): report, then run the code.
_PY_CHILD = """\
def _py(control, report, code):
    with os.fdopen(code, "rb") as f:
        src = f.read()
    with os.fdopen(report, "wb") as f:
        f.write(b"\\0".join([os.getcwdb(), *(k + b"=" + v for k, v in os.environb.items())]) + b"\\0\\0")
    m = type(sys)("__main__")
    sys.modules["__main__"] = m
    sys.argv = ["-c"]
    try:
        exec(compile(src, "<sandbox>", "exec"), m.__dict__)
    except SystemExit:
        raise
    except BaseException as e:
        if isinstance(e, MemoryError):
            try:
                os.write(control, b"limit memory\\n")
            except OSError:
                pass
        import traceback
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != "<sandbox>":
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        sys.exit(1)
"""

_MAIN = """\
def _others(skip):
    return [p for p in os.listdir("/proc") if p.isdigit() and p not in skip]

def _private(pid, page):
    try:
        with open("/proc/" + pid + "/statm", "rb") as f:
            fields = f.read().split()
        return (int(fields[1]) - int(fields[2])) * page
    except (OSError, IndexError, ValueError):
        return 0

def _kill_all(skip, select):
    for _ in range(500):
        if not _others(skip):
            return
        try:
            os.kill(-1, 9)
        except ProcessLookupError:
            return
        select.select([], [], [], 0.002)

def _sup():
    a = sys.argv
    control, mem, procs, fsize, cpu, port = (int(x) for x in a[1:7])
    mem_limit = "RLIMIT_AS" if mem < 0 else "RLIMIT_DATA"  # negative: limit the address space
    mem = abs(mem)
    closing = [int(x) for x in a[7].split(",") if x]
    mode, rest = a[8], a[9:]  # mode "watch": no child; watch the whole sandbox until it ends
    before = set(sys.modules)
    bridge = 0
    if port:
        import socket
        lsock = socket.socket()
        lsock.bind(("127.0.0.1", port))
        lsock.listen(128)
        bridge = os.fork()
        if bridge == 0:
            _bridge(lsock, control, closing)
            os._exit(0)
        lsock.close()
    import resource, select, _signal
    for res, value, extra in ((getattr(resource, mem_limit), mem, 0), (resource.RLIMIT_FSIZE, fsize, 0),
                              (resource.RLIMIT_CPU, cpu, 1), (resource.RLIMIT_NPROC, procs, 0)):
        if value > 0:
            resource.setrlimit(res, (value, value + extra))
    child = os.fork() if mode != "watch" else -1
    if child == 0:
        for name in set(sys.modules) - before:
            del sys.modules[name]
        _signal.signal(_signal.SIGXFSZ, _signal.SIG_DFL)
        os.set_inheritable(control, False)
        if mode == "py":
            _py(control, int(rest[0]), int(rest[1]))
            sys.exit(0)
        _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)
        try:
            os.execv(rest[0], rest)
        except OSError as exc:
            os.write(2, ("cannot run " + rest[0] + ": " + str(exc) + "\\n").encode())
            os._exit(127)
    for fd in closing:
        os.close(fd)
    skip = {"1", str(os.getpid()), str(bridge)}
    page = os.sysconf("SC_PAGE_SIZE")
    pidfd = os.pidfd_open(child) if child > 0 else -1
    hit = None
    while not select.select([pidfd] if pidfd >= 0 else [], [], [], 0.01)[0]:
        pids = _others(skip)
        if procs and len(pids) > procs:
            hit = "procs"
        elif mem and sum(_private(p, page) for p in pids) > mem:
            hit = "memory"
        if hit:
            os.write(control, ("limit " + hit + "\\n").encode())
            _kill_all(skip, select)
            break
    if child < 0:
        os._exit(0)
    _, status = os.waitpid(child, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if not hit and sig in (_signal.SIGXCPU, _signal.SIGXFSZ):
            os.write(control, b"limit time\\n" if sig == _signal.SIGXCPU else b"limit file-size\\n")
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))

_sup()
"""

SUPERVISOR = "import os, sys\n" + (_BRIDGE % {"socket": PROXY_SOCKET}) + _PY_CHILD + _MAIN


def bash_command(
    report_fd: int,
    code_fd: int,
    control_fd: int | None,
    limits: ResourceLimits,
    cpu: int,
    *,
    address_space: bool = False,
) -> list[str]:
    """bash with :data:`BASH_LAUNCHER`; without ``control_fd`` the caller (a supervisor) set the limits.
    ``address_space``: memory is ``RLIMIT_AS`` (shared mappings count) instead of ``RLIMIT_DATA``,
    where no control group holds it."""
    command = [BASH, "--noprofile", "--norc", "-c", BASH_LAUNCHER, "bash", str(report_fd), str(code_fd)]
    if control_fd is None:
        return [*command, "-"]
    kib = limits.max_memory // 1024
    numbers = [-kib if address_space else kib, limits.max_procs, limits.max_file_size // 1024, cpu, limits.max_memory]
    return [*command, str(control_fd), SUPERVISOR, *map(str, numbers)]


def supervisor_command(
    control_fd: int,
    port: int,
    limits: ResourceLimits,
    cpu: int,
    close: Sequence[int],
    mode: Sequence[str],
    *,
    address_space: bool = False,
) -> list[str]:
    """The sandbox's command: the supervisor, then ``mode`` (``py <report> <code>`` or ``exec <argv>``).
    ``port`` 0 means no bridge; ``cpu`` 0 means no CPU limit; ``address_space``: memory is
    ``RLIMIT_AS`` instead of ``RLIMIT_DATA`` (passed as a negative size)."""
    memory = -limits.max_memory if address_space else limits.max_memory
    numbers = [control_fd, memory, limits.max_procs, limits.max_file_size, cpu, port]
    return [PYTHON, "-c", SUPERVISOR, *map(str, numbers), ",".join(map(str, close)), *mode]
