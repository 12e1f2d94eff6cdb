"""Progress on stderr for long cycles, only when a person is watching.

A cycle on a large tree can take seconds. When stderr is a terminal and the cycle has
run for more than PROGRESS_AFTER seconds, a single self-overwriting line says which
stage it is in and how far it got; it is erased when the cycle ends. When stderr is a
pipe or a file (an agent, CI) nothing is ever printed, so JSON consumers see no change.
"""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

# Quiet for this long: a short cycle never shows progress.
PROGRESS_AFTER = 2.0
# At most one update this often: printing must not slow the loop it reports on.
PROGRESS_EVERY = 0.25


class Progress:
    """Reports ``stage done/total`` on a terminal; does nothing otherwise."""

    def __init__(self, stream: Optional[TextIO] = None, enabled: Optional[bool] = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        if enabled is None:
            isatty = getattr(self._stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self._start = time.monotonic()
        self._last = 0.0
        self._shown = False

    def tick(self, stage: str, done: int, total: int) -> None:
        """Note progress; print only past PROGRESS_AFTER and every PROGRESS_EVERY."""
        if not self.enabled or done % 64:
            return
        now = time.monotonic()
        if now - self._start < PROGRESS_AFTER or now - self._last < PROGRESS_EVERY:
            return
        self._last = now
        self._shown = True
        self._write(f"\ragentic-search: {stage} {done}/{total} files")

    def finish(self) -> None:
        """Erase the progress line if one was shown."""
        if self._shown:
            self._write("\r\x1b[2K")
            self._shown = False

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            self.enabled = False


QUIET = Progress(enabled=False)
