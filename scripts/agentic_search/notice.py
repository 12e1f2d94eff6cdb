"""notice: one line of diagnostics on stderr, best effort.

A notice never decides how a call ends. When stderr is closed, full or a pipe nobody
reads, the line is dropped, stderr is pointed at the null device (so that neither a later
notice nor the interpreter's last flush fails again), and the call goes on: its answer is
on stdout and its state is saved, exactly as with a working stderr.
"""

from __future__ import annotations

import os
import sys


def notice(line: str) -> None:
    """Write ``line`` and a newline to stderr; on failure, silence stderr and go on."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(line + "\n")
        stream.flush()
    except (OSError, ValueError):
        _silence_stderr()


def _silence_stderr() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        sys.stderr = None
        return
    try:
        os.dup2(devnull, 2)
    except OSError:
        pass
    finally:
        os.close(devnull)
    try:
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115 (the process's stderr, kept open)
    except OSError:
        sys.stderr = None
