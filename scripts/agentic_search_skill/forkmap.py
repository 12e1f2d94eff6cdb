"""Work split over forked worker processes: the one place the tool runs more than one
process (``match.match_many`` on a large tree, the index's first build).

A worker that dies - killed by a user or the kernel's out-of-memory killer - breaks the
map, which then answers None and the caller does the work itself: with
``multiprocessing.Pool`` the lost task was waited for forever, and the loop's state stayed
locked. Ctrl-C reaches every process of the terminal's group: a worker ends at once
without a word (the default action of SIGINT), and only the parent's KeyboardInterrupt
goes on, instead of a traceback per worker.

A parent that dies alone (SIGKILL from a harness's timeout) takes its workers with it:
they exit once they see it gone (on Linux the kernel kills them at once), and meanwhile
hold nothing of the caller's - not its stdout and stderr (a reader waiting for their end
would wait for the workers too), not the state's lock (:func:`close_in_workers`: a lock
held through a worker's copy of its descriptor kept every later call out).

Example::

    >>> fork_map(len, ["ab", "c"], workers=2) in (None, [2, 1])   # doctest: +SKIP
    True
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Optional, Sequence

# How often a worker looks whether its parent is still there (where the kernel cannot
# be asked to end it with its parent).
PARENT_POLL_SECONDS = 0.5
# Linux's prctl option: the signal a process gets when its parent dies.
_PR_SET_PDEATHSIG = 1

# Descriptors a worker closes at once: what the parent holds for itself (the state's lock).
_CLOSE_IN_WORKERS: set = set()


def close_in_workers(fd: int) -> None:
    """Have workers forked from now on close ``fd`` at once (a lock the parent holds)."""
    _CLOSE_IN_WORKERS.add(fd)


def keep_in_workers(fd: int) -> None:
    """Undo :func:`close_in_workers` (the parent closed ``fd``)."""
    _CLOSE_IN_WORKERS.discard(fd)


def _watch_parent(parent: int) -> None:
    while True:
        time.sleep(PARENT_POLL_SECONDS)
        if os.getppid() != parent:
            os._exit(1)


def _die_with(parent: int) -> None:
    """End this worker when ``parent`` dies: the kernel's death signal where there is one
    (Linux), and in any case a thread that looks for the parent."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError, ImportError):
            pass
    if os.getppid() != parent:  # gone before the death signal was asked for
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _worker_setup(parent: int, close: tuple) -> None:
    """A worker's initializer: SIGINT and SIGTERM end it by the default action, silently;
    it holds none of the parent's own descriptors nor its stdio, and it ends with its parent."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for fd in close:
        try:
            os.close(fd)
        except OSError:
            pass
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        if null > 2:
            os.close(null)
    except OSError:
        pass
    _die_with(parent)


def fork_map(func: Callable[[Any], Any], parts: Sequence[Any], workers: int) -> Optional[list[Any]]:
    """``[func(p) for p in parts]``, computed in at most ``workers`` forked processes, in
    order; None when it cannot be done that way: the platform does not fork, this process
    is a daemonic worker itself, a worker could not start, died or failed. ``func`` must be
    a module-level function (what it needs is inherited through the fork)."""
    import multiprocessing  # only here: importing them costs start-up time
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # no fork on this platform
        return None
    if multiprocessing.current_process().daemon:  # a daemonic process may not start children
        return None
    try:
        with ProcessPoolExecutor(max_workers=max(1, min(workers, len(parts))), mp_context=ctx,
                                 initializer=_worker_setup,
                                 initargs=(os.getpid(), tuple(sorted(_CLOSE_IN_WORKERS)))) as pool:
            return list(pool.map(func, parts))
    except (BrokenProcessPool, OSError, EOFError, RuntimeError, AssertionError):
        return None
