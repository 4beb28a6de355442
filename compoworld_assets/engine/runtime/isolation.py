"""The operating-system boundary around a sandbox child: bubblewrap namespaces and a seccomp filter.

Service modules may be written by an LLM, so the process that runs them is treated as hostile.
Two kernel mechanisms confine it; Python-level guards in the worker only make errors readable.

* **bubblewrap** (Debian ``bubblewrap``) starts the child in new user, PID, mount, network, IPC,
  UTS and cgroup namespaces, as an unprivileged uid with every capability dropped, with
  ``--die-with-parent`` and ``--new-session``. Its root is an empty tmpfs holding read-only binds
  of ``/usr`` (and the interpreter's prefix when it lies elsewhere, e.g. a pyenv build), the worker
  script, its own ``/proc`` (the sandbox's PID namespace only, so no host process is visible),
  a minimal read-only ``/dev``, and two size-capped tmpfs: ``/tmp`` and the scratch directory
  (the only places a module can write; the root is remounted read-only). The
  environment is cleared: no secret of the parent reaches the child. Killing the bubblewrap process
  kills the PID namespace's init and with it every process inside.
* **seccomp** (compiled here with libseccomp through ``pyseccomp``; installed by the worker itself
  after start-up and before any service code runs, so it holds whether or not bubblewrap runs):
  no new processes or threads (``clone``/``fork``/``vfork``), no ``execve``, no sockets at all
  (the control channel is a pair of pipes), no signals to any process (``kill``, ``tgkill``,
  ``pidfd_*``), no ``ptrace`` or cross-process memory access, no ``mount``/``unshare``/``setns``,
  no ``io_uring`` (it would bypass the filter), no kernel keyrings, BPF, perf or module loading,
  no terminal injection (``ioctl(TIOCSTI)``). Denied calls fail with ``EPERM``.

Where bubblewrap cannot run (not installed, or user namespaces disabled), :func:`bubblewrap_support`
says why; the executor then refuses untrusted (LLM-written) modules unless the user opts in.
"""

from __future__ import annotations

import errno
import functools
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

from compoworld_assets.engine.runtime.scratch import ScratchFolder

BWRAP = "bwrap"
SANDBOX_UID = 65534
TMP_MB = 16
PROBE_TIMEOUT_S = 20.0

# Every syscall the filter denies (EPERM). Names unknown to the running libseccomp are skipped.
DENIED_SYSCALLS = (
    # new processes, threads and programs
    "clone", "clone3", "fork", "vfork", "execve", "execveat",
    # the network and local sockets
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    # signals to other processes and process handles
    "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
    "pidfd_open", "pidfd_send_signal", "pidfd_getfd",
    # other processes' memory
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "kcmp",
    # namespaces and the filesystem tree
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr", "name_to_handle_at", "open_by_handle_at",
    # interfaces that bypass or widen the filter, and kernel state
    "io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "perf_event_open", "userfaultfd",
    "keyctl", "add_key", "request_key", "personality", "seccomp",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "iopl", "ioperm", "syslog", "vhangup",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "fanotify_init",
)
TIOCSTI = 0x5412


@dataclass(frozen=True)
class IsolationSupport:
    """Whether bubblewrap can isolate a child here, and if not, why."""

    available: bool
    reason: str


def interpreter() -> str:
    """The real interpreter binary (a venv's ``python`` is a symlink to it)."""
    return os.path.realpath(sys.executable)


def _readonly_roots(python: str, extra: Sequence[str]) -> list[str]:
    """Directories bound read-only: /usr, the interpreter's prefix (``<prefix>/bin/python``), the paths given."""
    roots = ["/usr"]
    prefix = os.path.dirname(os.path.dirname(python))
    for path in (prefix, *extra):
        if not any(path == root or path.startswith(root + os.sep) for root in roots):
            roots.append(path)
    return roots


def bubblewrap_argv(python: str, worker: str, scratch: str, *, scratch_mb: int = 64,
                    readonly: Sequence[str] = ()) -> list[str]:
    """The bwrap command line that runs ``python -S -s -P -B worker`` confined to ``scratch``.

    Every writable place inside is a size-capped tmpfs (the scratch directory, at the same path as
    the host's, and ``/tmp``); the root and ``/dev`` are remounted read-only, so a module cannot fill
    the host's disk or memory by writing files.
    """
    argv = [
        BWRAP,
        "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try",
        "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
        "--cap-drop", "ALL",
        "--die-with-parent", "--new-session",
        "--hostname", "sandbox",
        "--clearenv",
        "--setenv", "PYTHONHASHSEED", "0",
        "--setenv", "LC_ALL", "C.UTF-8",
        "--setenv", "HOME", scratch,
    ]
    # first: later binds may lie below /tmp
    argv += ["--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev", "--size", str(TMP_MB << 20), "--tmpfs", "/tmp"]
    for root in _readonly_roots(python, [worker, *readonly]):
        argv += ["--ro-bind", root, root]
    for name in ("lib", "lib64", "bin", "sbin"):
        top = f"/{name}"
        if os.path.islink(top):
            argv += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            argv += ["--ro-bind", top, top]
    argv += ["--size", str(scratch_mb << 20), "--tmpfs", scratch, "--chdir", scratch, "--remount-ro", "/"]
    argv += [python, "-S", "-s", "-P", "-B", worker]
    return argv


@functools.cache
def bubblewrap_support() -> IsolationSupport:
    """Probe once per process: can bwrap start this interpreter in fresh namespaces?

    The probe's folder is a scratch folder like a service's, so a process killed mid-probe leaves one that the
    next process's sweep removes."""
    python = interpreter()
    folder = ScratchFolder("probe", None)
    try:
        probe = folder.folder / "probe.py"
        probe.write_text("import os\nprint(os.getpid(), os.getuid(), len(os.environ))\n")
        argv = bubblewrap_argv(python, str(probe), str(folder.path))
        try:
            done = subprocess.run(argv, capture_output=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL,
                                  check=False)
        except FileNotFoundError:
            return IsolationSupport(False, "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install "
                                           "bubblewrap)")
        except subprocess.TimeoutExpired:
            return IsolationSupport(False, f"bubblewrap did not start within {PROBE_TIMEOUT_S:g}s")
    finally:
        folder.remove()
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return IsolationSupport(False, f"bubblewrap cannot create namespaces here: {detail[-1] if detail else ''}"
                                       " (user namespaces disabled?)")
    pid, uid, env = (int(x) for x in done.stdout.split())
    if pid > 3 or uid != SANDBOX_UID or env > 4:
        return IsolationSupport(False, f"bubblewrap ran but did not isolate (pid {pid}, uid {uid}, {env} env vars)")
    return IsolationSupport(True, "bubblewrap: user, pid, mount, network, ipc and uts namespaces")


@functools.cache
def seccomp_program() -> bytes:
    """The BPF program of the filter, compiled once; the worker loads it with ``prctl``.

    Raises ``RuntimeError`` when libseccomp is missing: the filter is not optional.
    """
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # OSError: the libseccomp shared library is missing
        raise RuntimeError(f"libseccomp is not available ({exc}); install libseccomp2 and pyseccomp") from exc
    denied = seccomp.ERRNO(errno.EPERM)
    syscall_filter = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED_SYSCALLS:
        try:
            syscall_filter.add_rule(denied, name)
        except (OSError, ValueError, RuntimeError):
            continue  # a syscall this architecture or libseccomp does not know
    syscall_filter.add_rule(denied, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, TIOCSTI))
    with tempfile.TemporaryFile() as out:
        syscall_filter.export_bpf(out)
        out.seek(0)
        return out.read()
