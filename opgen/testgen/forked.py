"""Independent computations of one process, run side by side in forked children.

The test-case search of an op is one search per product view, each a pure function of the model and the
generated reference (no randomness, no state shared between products), and the slowest stage of a build.
:func:`run_all` forks a child per item after the first, which computes its item and pickles the result back
through a pipe; the parent computes the first item meanwhile.  A fork shares the loaded model and reference
without reloading them.  A child that fails in any way (an exception, an unpicklable result, a crash) counts as
not run: the parent computes that item itself, so errors are raised, with their tracebacks, exactly as without
children, and the results are the same objects a serial run gives, in item order.

Forking is off where it cannot pay or is unsafe: no ``os.fork`` (or not Linux, where forking a process with a
runtime's threads is not safe), a single usable core, or :data:`enabled` set False.  The worker processes of
``opgen build -j`` fork too: while they keep every core busy the children only share the cores, and the build's
last spec, which would run alone, gets them all.
"""
from __future__ import annotations

import os
import pickle
import signal
import sys
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")
R = TypeVar("R")

enabled = True


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def available() -> bool:
    return enabled and hasattr(os, "fork") and sys.platform.startswith("linux") and _cores() > 1


def run_all(fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``[fn(item) for item in items]``, the items after the first computed in forked children when
    :func:`available`."""
    if len(items) < 2 or not available():
        return [fn(item) for item in items]
    for stream in (sys.stdout, sys.stderr):  # a child leaves by os._exit: nothing buffered is written twice
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    children: list[list | None] = []  # [pid, read end, reaped] per item after the first; None: not forked
    try:
        for item in items[1:]:
            children.append(_fork(fn, item))
        results = [fn(items[0])]
        for item, child in zip(items[1:], children):
            got = _collect(child) if child is not None else None
            results.append(got[0] if got is not None else fn(item))
        return results
    finally:
        for child in children:
            if child is not None:
                _reap(child)


def _fork(fn, item) -> list | None:
    try:
        r, w = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return None
    if pid == 0:  # the child: compute, send, leave without running the parent's cleanups
        code = 1
        try:
            os.close(r)
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # an interrupted build stops its children too
            data = pickle.dumps(fn(item), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(w, "wb") as out:
                out.write(data)
            code = 0
        except BaseException:  # noqa: BLE001 - the parent computes the item itself and raises what it raises
            pass
        finally:
            os._exit(code)
    os.close(w)
    return [pid, r, False]


def _collect(child: list) -> tuple[object] | None:
    """(the child's result,), or None when it did not deliver one."""
    pid, r, _ = child
    try:
        with os.fdopen(r, "rb", closefd=False) as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
    except OSError:
        return None
    child[2] = True
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    try:
        return (pickle.loads(data),)
    except Exception:  # noqa: BLE001 - a torn result: computed again here
        return None


def _reap(child: list) -> None:
    """Close the pipe and make sure the child is gone (killed when the parent leaves before collecting it)."""
    pid, r, reaped = child
    try:
        os.close(r)
    except OSError:
        pass
    if reaped:
        return  # its pid may already be another process's
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
