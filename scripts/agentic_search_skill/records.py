"""The records a cycle hands to the JSON boundary, and their JSON codec.

A cycle's outcome, as the output shows it and as the state keeps it to show the final
answer again, is a :class:`CycleView`: the query that ran, what the walk read, the
results, the decision and what the next cycle changes. Every record is frozen and
has ``to_json`` / ``from_json``; ``from_json`` checks every field and raises
:class:`FormatError` naming the first bad one, so a hand-edited state fails cleanly.

Example::

    >>> Decision("synthesize", True, "sufficient", "one clear answer", 0.9).to_json()["next_action"]
    'synthesize'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

# The loop's moves (the seed's next_action values).
ACTIONS = ("synthesize", "refine", "expand", "broaden")
# Why a loop stopped: enough evidence; a cycle found nothing new; the cycle limit;
# nothing left to try (no match and no other spelling to search).
STOP_REASONS = ("sufficient", "saturated", "max_cycles", "exhausted")


class FormatError(ValueError):
    """A stored record is malformed; the message names the field."""


def _fail(field: str) -> FormatError:
    return FormatError(field)


def get_str(data: Mapping, key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise _fail(key)
    return value


def get_opt_str(data: Mapping, key: str) -> Optional[str]:
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise _fail(key)
    return value


def get_int(data: Mapping, key: str, minimum: int = 0) -> int:
    value = data.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum or value > 2 ** 53:
        raise _fail(key)
    return value


def get_float(data: Mapping, key: str, low: float = 0.0, high: float = 1.0) -> float:
    value = data.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise _fail(key)
    value = float(value)
    if not math.isfinite(value) or not low <= value <= high:
        raise _fail(key)
    return value


def get_bool(data: Mapping, key: str) -> bool:
    value = data.get(key)
    if not isinstance(value, bool):
        raise _fail(key)
    return value


def get_strs(data: Mapping, key: str) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(key)
    return tuple(value)


def get_dict(data: Mapping, key: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise _fail(key)
    return value


def get_list(data: Mapping, key: str) -> list:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise _fail(key)
    return value


@dataclass(frozen=True)
class ResultView:
    """One file of a cycle's results, as the output shows it (the seed's result
    contract: id, title, summary, tags, score, related; plus reason, missing, matched)."""

    id: str
    score: float
    reason: str
    lines: tuple[str, ...] = ()      # the best matching lines, "L12: text"
    title: str = ""
    tags: tuple[str, ...] = ()       # names the file defines that are not keywords yet
    related: tuple[str, ...] = ()    # files of the tree it imports or that import it
    missing: tuple[str, ...] = ()    # named keywords it does not hold
    matched: tuple[str, ...] = ()    # keywords it holds

    def with_score(self, score: float, reason: str) -> "ResultView":
        """The same result with the caller's score and reason (a judgement)."""
        return ResultView(self.id, score, reason, self.lines, self.title, self.tags, self.related,
                          self.missing, self.matched)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "score": self.score, "reason": self.reason, "lines": list(self.lines),
                "title": self.title, "tags": list(self.tags), "related": list(self.related),
                "missing": list(self.missing), "matched": list(self.matched)}

    @classmethod
    def from_json(cls, data: Any) -> "ResultView":
        if not isinstance(data, dict):
            raise _fail("results")
        return cls(get_str(data, "id"), get_float(data, "score"), get_str(data, "reason"),
                   get_strs(data, "lines"), get_str(data, "title"), get_strs(data, "tags"),
                   get_strs(data, "related"), get_strs(data, "missing"), get_strs(data, "matched"))


@dataclass(frozen=True)
class Stats:
    """What the walk and the read saw: counts, and the walk's skips by reason."""

    files_considered: int = 0
    files_read: int = 0
    files_matched: int = 0
    binary_skipped: int = 0
    unreadable_skipped: int = 0
    walk_skipped: tuple[tuple[str, int], ...] = ()
    skip_examples: tuple[str, ...] = ()   # the first few skips per reason: "reason: path (why)"

    def to_json(self) -> dict[str, Any]:
        return {"files_considered": self.files_considered, "files_read": self.files_read,
                "files_matched": self.files_matched, "binary_skipped": self.binary_skipped,
                "unreadable_skipped": self.unreadable_skipped, "walk_skipped": dict(self.walk_skipped),
                "skip_examples": list(self.skip_examples)}

    @classmethod
    def from_json(cls, data: Any) -> "Stats":
        if not isinstance(data, dict):
            raise _fail("stats")
        skipped = get_dict(data, "walk_skipped")
        pairs = []
        for reason, n in sorted(skipped.items()):
            if not isinstance(n, int) or isinstance(n, bool) or n < 0:
                raise _fail("walk_skipped")
            pairs.append((reason, n))
        return cls(get_int(data, "files_considered"), get_int(data, "files_read"),
                   get_int(data, "files_matched"), get_int(data, "binary_skipped"),
                   get_int(data, "unreadable_skipped"), tuple(pairs), get_strs(data, "skip_examples"))


@dataclass(frozen=True)
class Decision:
    """The loop's one decision for a cycle: the next move, whether the loop is done and
    why, in a word (``reason``, one of STOP_REASONS when done) and in a sentence
    (``why``), and how sure the tool is of its best file (``confidence``, 0..1)."""

    action: str
    done: bool
    reason: Optional[str]
    why: str
    confidence: float

    def to_json(self) -> dict[str, Any]:
        return {"next_action": self.action, "done": self.done, "stop_reason": self.reason,
                "why": self.why, "confidence": self.confidence}

    @classmethod
    def from_json(cls, data: Any) -> "Decision":
        if not isinstance(data, dict):
            raise _fail("decision")
        action = get_str(data, "next_action")
        reason = get_opt_str(data, "stop_reason")
        if action not in ACTIONS:
            raise _fail("next_action")
        if reason is not None and reason not in STOP_REASONS:
            raise _fail("stop_reason")
        return cls(action, get_bool(data, "done"), reason, get_str(data, "why"),
                   get_float(data, "confidence"))


@dataclass(frozen=True)
class Change:
    """What the next cycle searches differently: keywords added (with where they come
    from) and dropped, files excluded, focus areas (the gaps)."""

    adds: tuple[str, ...] = ()        # "throttle (learned)", "throttle (synonym of rate limit)"
    drops: tuple[str, ...] = ()       # keywords that matched nothing and are replaced or dropped
    excludes: tuple[str, ...] = ()    # files newly excluded (shown below the rubric's 0.2)
    focus: tuple[str, ...] = ()       # gaps: what nothing matched, related files not yet read

    def to_json(self) -> dict[str, Any]:
        return {"adds": list(self.adds), "drops": list(self.drops), "excludes": list(self.excludes),
                "focus": list(self.focus)}

    @classmethod
    def from_json(cls, data: Any) -> "Change":
        if not isinstance(data, dict):
            raise _fail("change")
        return cls(get_strs(data, "adds"), get_strs(data, "drops"), get_strs(data, "excludes"),
                   get_strs(data, "focus"))


@dataclass(frozen=True)
class CycleView:
    """One cycle's outcome as the output shows it; the state keeps the last one so a
    call on a finished loop shows the final answer again."""

    cycle: int
    max_cycles: int
    patterns: tuple[str, ...]
    keywords: tuple[str, ...]
    excludes: tuple[str, ...]
    stats: Stats
    results: tuple[ResultView, ...]
    decision: Decision
    change: Change
    gaps: tuple[str, ...] = ()        # keywords that matched no file (every file searched)
    related: tuple[str, ...] = ()     # files worth following (expand)
    hints: Mapping[str, Any] = None   # hints.py's contract for these results (advisory)
    translated: tuple[str, ...] = ()  # "token (from 令牌)": keywords the CJK glossary gave
    set_aside: tuple[str, ...] = ()   # files the loop stops showing in results (refine.py), apart from excludes
    prose_gaps: int = 0               # the last this many gaps are plain words of the task's body (--full lists them)

    def to_json(self) -> dict[str, Any]:
        return {"cycle": self.cycle, "max_cycles": self.max_cycles, "patterns": list(self.patterns),
                "keywords": list(self.keywords), "excludes": list(self.excludes),
                "stats": self.stats.to_json(), "results": [r.to_json() for r in self.results],
                "decision": self.decision.to_json(), "change": self.change.to_json(),
                "gaps": list(self.gaps), "related": list(self.related), "hints": dict(self.hints or {}),
                "translated": list(self.translated), "set_aside": list(self.set_aside),
                "prose_gaps": self.prose_gaps}

    @classmethod
    def from_json(cls, data: Any) -> "CycleView":
        if not isinstance(data, dict):
            raise _fail("last")
        gaps = get_strs(data, "gaps")
        return cls(
            get_int(data, "cycle", 1), get_int(data, "max_cycles", 1), get_strs(data, "patterns"),
            get_strs(data, "keywords"), get_strs(data, "excludes"), Stats.from_json(data.get("stats")),
            tuple(ResultView.from_json(r) for r in get_list(data, "results")),
            Decision.from_json(data.get("decision")), Change.from_json(data.get("change")),
            gaps, get_strs(data, "related"), get_dict(data, "hints"),
            get_strs(data, "translated"), get_strs(data, "set_aside"),
            min(get_int(data, "prose_gaps"), len(gaps)) if "prose_gaps" in data else 0,
        )
