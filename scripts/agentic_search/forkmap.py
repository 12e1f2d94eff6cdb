"""Work split over forked worker processes: the one place the tool runs more than one
process (``match.match_many`` on a large tree, the index's first build).

A worker that dies - killed by a user or the kernel's out-of-memory killer - breaks the
map, which then answers None and the caller does the work itself: with
``multiprocessing.Pool`` the lost task was waited for forever, and the loop's state stayed
locked. Ctrl-C reaches every process of the terminal's group: a worker ends at once
without a word (the default action of SIGINT), and only the parent's KeyboardInterrupt
goes on, instead of a traceback per worker.

Example::

    >>> fork_map(len, ["ab", "c"], workers=2) in (None, [2, 1])   # doctest: +SKIP
    True
"""

from __future__ import annotations

import signal
from typing import Any, Callable, Optional, Sequence


def _quiet_interrupt() -> None:
    """A worker's initializer: SIGINT ends it by the default action, silently."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


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
                                 initializer=_quiet_interrupt) as pool:
            return list(pool.map(func, parts))
    except (BrokenProcessPool, OSError, EOFError, RuntimeError, AssertionError):
        return None
