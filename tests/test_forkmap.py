"""forkmap.py: work over forked workers, and what happens when a worker dies."""

from __future__ import annotations

import os
import signal
import sys

import pytest

from agentic_search_skill.forkmap import fork_map

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


_ORPHAN_SCRIPT = r"""
import fcntl, os, sys, time
sys.path.insert(0, sys.argv[1])
from agentic_search_skill.forkmap import close_in_workers, fork_map
lock = os.open(sys.argv[2], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(lock, fcntl.LOCK_EX)
close_in_workers(lock)

def slow(n):
    with open(os.path.join(sys.argv[3], str(os.getpid())), "w"):
        pass
    time.sleep(60)
    return n

print("started", flush=True)
fork_map(slow, [1, 2], workers=2)
"""


@needs_fork
def test_workers_end_with_a_killed_parent_and_hold_neither_its_pipes_nor_its_lock(tmp_path):
    # A harness's timeout kills the tool alone (SIGKILL): its workers lived on, holding
    # the caller's stdout (a reader waited for its end forever) and the state's lock
    # (every later call on the state waited 60 s and failed).
    import fcntl
    import subprocess
    import time

    scripts = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
    pids, lock = tmp_path / "pids", str(tmp_path / "state.json.lock")
    pids.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", _ORPHAN_SCRIPT, scripts, lock, str(pids)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout.readline() == b"started\n"
        deadline = time.monotonic() + 20
        while len(os.listdir(pids)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = [int(p) for p in os.listdir(pids)]
        assert len(workers) == 2
        proc.kill()
        proc.communicate(timeout=10)  # the pipes close: no worker holds them
        fd = os.open(lock, os.O_RDWR)
        try:
            deadline = time.monotonic() + 5
            while True:  # the lock is free at once, or within the workers' poll
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    assert time.monotonic() < deadline, "the state's lock stayed held"
                    time.sleep(0.05)
        finally:
            os.close(fd)
        deadline = time.monotonic() + 5
        while any(_alive(pid) for pid in workers):
            assert time.monotonic() < deadline, "a worker outlived its parent"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in os.listdir(pids):
            try:
                os.kill(int(p), signal.SIGKILL)
            except OSError:
                pass


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
