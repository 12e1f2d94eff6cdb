"""forkmap.py: work over forked workers, and what happens when a worker dies."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from agentic_search.forkmap import fork_map

needs_fork = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="forks only here")


def _square(n: int) -> int:
    return n * n


def _die_on_three(n: int) -> int:
    if n == 3:
        os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer or a user would
    return n


def _interrupted_on_two(n: int) -> int:
    if n == 2:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C reaches every process of the group
    return n


@needs_fork
def test_results_come_back_in_order():
    assert fork_map(_square, list(range(7)), workers=3) == [n * n for n in range(7)]


@needs_fork
def test_a_killed_worker_gives_none_instead_of_a_wait_forever():
    # multiprocessing.Pool.map waited forever for the lost part, holding the state's lock
    assert fork_map(_die_on_three, [1, 2, 3, 4], workers=2) is None


@needs_fork
def test_an_interrupted_worker_ends_without_a_traceback(capfd):
    assert fork_map(_interrupted_on_two, [1, 2, 3], workers=2) is None
    assert "Traceback" not in capfd.readouterr().err
