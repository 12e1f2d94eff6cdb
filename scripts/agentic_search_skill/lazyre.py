"""Regular expressions compiled on first use, not at import.

Every cycle is a new process, and compiling a large pattern (the CJK classes, the issue
templates' phrase lists) costs milliseconds at each start; a pattern only some cycles
need (a task text is parsed on the first call only) is compiled by the cycles that use it.
"""

from __future__ import annotations

import re
from typing import Any, Optional


class LazyPattern:
    """``re.compile(pattern, flags)`` made when first used; its methods and attributes are
    the compiled pattern's (``pattern`` and ``flags`` as given are there before that)."""

    __slots__ = ("pattern", "_flags", "_compiled")

    def __init__(self, pattern: Any, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags
        self._compiled: Optional[re.Pattern] = None

    def compiled(self) -> re.Pattern:
        """The compiled pattern (compiled once)."""
        c = self._compiled
        if c is None:
            c = self._compiled = re.compile(self.pattern, self._flags)
        return c

    def __getattr__(self, name: str) -> Any:
        return getattr(self.compiled(), name)


def compile_later(pattern: Any, flags: int = 0) -> LazyPattern:
    """A pattern compiled on first use (see :class:`LazyPattern`)."""
    return LazyPattern(pattern, flags)
