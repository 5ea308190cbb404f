"""Jupyter kernels forked from a warm process, for the theory notebooks (Linux).

A clean build executes the five theory notebooks, each in a new kernel
(``python -m ipykernel_launcher``). Before its first cell had run, every one
of those processes had imported ipykernel, numpy, matplotlib's figure
machinery and the course kernel: about a second of CPU each, on a build that
keeps both cores busy throughout. Here each build worker (``hooks/pool.py``)
starts one *template* process instead: a new Python, with the environment a
kernel gets, that imports those modules (``PRELOAD``) and nothing else, runs
no code of a notebook, and waits. Each kernel is then a fork of it that does
what ``ipykernel_launcher`` does. So every notebook still runs in a process
of its own, in the notebook's folder, with jupyter_client's environment and
connection file, and nothing one notebook does reaches another.

What a fork shares with its template, and why a notebook cannot tell:

- the environment. The template runs in exactly the one jupyter_client gives
  the kernel (with ``JPY_PARENT_PID``, which ipykernel reads as it is
  imported); a kernel asked for with another starts another template.
  Before importing anything it sets ``MPLBACKEND`` as ipykernel does before
  any cell runs (``IPKernelApp.init_gui_pylab``), so matplotlib reads the
  same settings in the template as in a new kernel's first cell.
- the modules of ``PRELOAD``, in ``sys.modules`` already. matplotlib's
  inline backend and ``pyplot`` are not among them: they hook into the
  running IPython when first imported.
- numpy's global random state (for ``np.random.random`` and the like),
  which each fork reseeds from the OS, as a new process has it. Python's
  ``random`` reseeds itself in a fork.
- ``sys.path``: the template leaves out the current folder, as
  ``ipykernel_launcher`` does; the kernel adds the notebook's folder back
  (IPython's ``init_path``) after the fork has moved there. matplotlib also
  reads a ``matplotlibrc`` in the current folder when imported, so a
  notebook beside one gets a new kernel (``ForkingProvisioner``).

``tests/test_warmkernel.py`` runs a notebook in a forked kernel and in a new
one and compares every output; a clean build's site is byte-identical either
way. Where ``os.fork`` or ``os.pidfd_open`` (Linux) is missing, or the kernel
command is not this Python's ipykernel launcher, the kernel is started as
jupyter_client starts it.

Protocol: the worker writes one JSON line per kernel to the template's stdin
(``{"launcher", "argv", "env", "cwd"}``) and reads the kernel's pid from a
pipe, once the kernel leads its own session. The
template ignores ``SIGCHLD``, so the system reaps its kernels; the worker
watches each through a pidfd. A template ends when its worker does (its stdin
closes).
"""

from __future__ import annotations

import functools
import json
import os
import select
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning import LocalProvisioner

# What every theory notebook's kernel imports before its first cell runs, or
# in it: loaded once by the template. (pyplot and matplotlib_inline must stay
# out; see above.)
PRELOAD = ("ipykernel.kernelapp", "numpy", "matplotlib.figure", "llmmath")

LAUNCHER = "ipykernel_launcher"
HERE = Path(__file__).resolve().parent

# The template's source, run with ``python -c``. It reads requests until its
# stdin closes, writing each kernel's pid to the file descriptor it is given.
TEMPLATE = r"""
import sys
if sys.path and sys.path[0] == "":
    del sys.path[0]  # as ipykernel_launcher does, before its imports
import importlib, json, os, signal
REPLY = int(sys.argv[1])
# ipykernel sets this before any notebook code runs (IPKernelApp.init_gui_pylab),
# so a kernel's first import of matplotlib reads it; the template's does too.
if not os.environ.get("MPLBACKEND"):
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
for name in sys.argv[2:]:
    importlib.import_module(name)
# What the kernels inherit is theirs for life: their collector need not walk it
# again and again (half a second of CPU over the five notebooks).
import gc
gc.freeze()
signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the system reaps the kernels
for line in sys.stdin:
    request = json.loads(line)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(ready_r)
            os.close(REPLY)
            os.setsid()  # as jupyter_client's launch_kernel (start_new_session)
            os.close(ready_w)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            if "numpy.random" in sys.modules:
                sys.modules["numpy.random"].seed()
            sys.argv = [request["launcher"], *request["argv"]]
            from ipykernel import kernelapp
            kernelapp.launch_new_instance()
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            import atexit
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(ready_w)
    os.read(ready_r, 1)  # returns when the kernel has its own session
    os.close(ready_r)
    os.write(REPLY, b"%d\n" % pid)
"""


@functools.cache
def available() -> bool:
    """Whether kernels can be forked here: POSIX fork, and Linux pidfds to watch
    them (Linux 5.3 and later; an older kernel's Python has the call but not the
    system call)."""
    if not (hasattr(os, "fork") and hasattr(os, "pidfd_open") and sys.platform == "linux"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


class ForkedKernel:
    """The part of ``subprocess.Popen`` that jupyter_client uses, for a kernel that
    is the template's child, not ours: watched through a pidfd. Its exit status
    is not ours to collect, so a kernel that has ended reports 0."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        try:
            self._fd: int | None = os.pidfd_open(pid)
        except ProcessLookupError:  # already ended, and reaped
            self._fd, self.returncode = None, 0

    def _readable(self, timeout: float | None) -> bool:
        # poll, not select: a process with many files open (the tests, with
        # PyTorch loaded) gets descriptors past select's limit of 1024
        watch = select.poll()
        watch.register(self._fd, select.POLLIN)
        return bool(watch.poll(None if timeout is None else 1000 * timeout))

    def poll(self) -> int | None:
        if self.returncode is None and self._readable(0):
            self._ended()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not self._readable(timeout):
                raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout)
            self._ended()
        return 0

    def _ended(self) -> None:
        os.close(self._fd)
        self._fd, self.returncode = None, 0

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            signal.pidfd_send_signal(self._fd, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Template:
    """One warm process that forks kernels: started on first use, one per worker."""

    _instance: Template | None = None

    def __init__(self, env: dict[str, str]) -> None:
        reply_r, reply_w = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-c", TEMPLATE, str(reply_w), *PRELOAD],
            stdin=subprocess.PIPE,
            pass_fds=(reply_w,),
            env=env,
            cwd=HERE,  # holds no matplotlibrc (see ``ForkingProvisioner``)
            start_new_session=True,
        )
        os.close(reply_w)
        self.replies = os.fdopen(reply_r, "rb")
        self.env = env

    @classmethod
    def get(cls, env: dict[str, str]) -> Template:
        """This process's template for kernels with environment ``env``: the
        running one, or a new one if that has ended or has another environment."""
        current = cls._instance
        if current is None or current.process.poll() is not None or current.env != env:
            if current is not None:
                current.close()
            cls._instance = cls(env)
        return cls._instance

    def fork(self, argv: list[str], env: dict[str, str], cwd: str) -> ForkedKernel:
        import ipykernel_launcher

        request = {"launcher": ipykernel_launcher.__file__, "argv": argv, "env": env, "cwd": cwd}
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()
        line = self.replies.readline()
        if not line:
            raise RuntimeError(f"the kernel template (pid {self.process.pid}) has ended")
        return ForkedKernel(int(line))

    def close(self) -> None:
        self.process.stdin.close()
        self.replies.close()
        self.process.wait()


class ForkingProvisioner(LocalProvisioner):
    """jupyter_client's local provisioner, launching this Python's ipykernel by a
    fork of the worker's template (``Template``)."""

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:
        cwd = os.path.abspath(kwargs.get("cwd") or os.getcwd())  # the template has its own
        # matplotlib reads a matplotlibrc in the current folder when it is
        # imported: by the template in HERE, by a new kernel in the notebook's.
        # An independent kernel (no parent to watch) is left to jupyter_client.
        forkable = (
            cmd[:3] == [sys.executable, "-m", LAUNCHER]
            and not kwargs.get("independent")
            and not any((Path(folder) / "matplotlibrc").exists() for folder in (cwd, HERE))
        )
        if not forkable:
            return await super().launch_kernel(cmd, **kwargs)
        env = kernel_env(kwargs.get("env"))
        # The template imports in the kernel's environment (ipykernel reads
        # JPY_PARENT_PID as it is imported), so a different one starts another.
        self.process = Template.get(env).fork(cmd[3:], env, cwd)
        self.pid = self.pgid = self.process.pid  # the fork leads its own session
        self.cwd = cwd
        return self.connection_info


def kernel_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment jupyter_client's launch_kernel gives a kernel this process
    starts: ``base`` (by default ours), and our pid as the kernel's parent."""
    return {**(os.environ if base is None else base), "JPY_PARENT_PID": str(os.getpid())}


def warm_up() -> None:
    """Start this process's template now, if kernels can be forked here."""
    if available():
        Template.get(kernel_env())


class WarmKernelManager(AsyncKernelManager):
    """``AsyncKernelManager`` whose kernels are forked (``ForkingProvisioner``)
    where that is ``available()``."""

    async def _async_pre_start_kernel(self, **kw: Any):
        if self.provisioner is None and available():
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
            self.provisioner = ForkingProvisioner(
                kernel_id=self.kernel_id,
                kernel_spec=self.kernel_spec,
                parent=self,
            )
        return await super()._async_pre_start_kernel(**kw)
