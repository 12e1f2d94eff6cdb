"""The loop's state between invocations: a record, one JSON file, written atomically.

:class:`LoopState` is what one call hands the next: the root, the task, the query the
last cycle proposed, every file's score so far, the caller's judgements, and the last
cycle's outcome (shown again once the loop is done). ``from_json`` owns every format
check: a hand-edited or foreign file fails with one line naming the field, never
half-loaded. ``to_json`` is its inverse.

On disk every write goes through :func:`atomic_write` (the cache beside the state uses
it too): a temporary file in the state's own directory, flushed and fsynced, moved into
place with ``os.replace``; a crash mid-write leaves the previous state intact. The
state file must be a regular file: a FIFO or a device at ``--state`` is refused, read
or reset. :func:`locked` serializes cycles on one state (an advisory lock on a file
beside it, with a bounded wait), so two processes never lose each other's update.
Names that are not UTF-8 (surrogate escapes) survive the round trip: the JSON is
written ASCII-only.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import stat
import tempfile
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from . import fsafe
from .forkmap import close_in_workers, keep_in_workers
from .fsafe import NotRegularError, read_regular
from .query import Keyword
from .records import CycleView, FormatError, get_bool, get_float, get_int, get_list, get_str, get_strs
from .request import UsageError, check_patterns
from .walk import MAX_FILE_BYTES, excluded_by

FORMAT_NAME = "agentic-search-state"
FORMAT_VERSION = 2
# A state file larger than this is not ours (a log, a disk image): refused unread.
MAX_STATE_BYTES = 64 * 1024 * 1024
# The lock beside the state file (FILE.lock) and how long a call waits for another
# process's cycle on the same state before it gives up with an error.
LOCK_SUFFIX = ".lock"
LOCK_WAIT_SECONDS = 60.0
LOCK_POLL_SECONDS = 0.05
# Keyword weights a state may carry (a hand edit beyond this is malformed).
MAX_KEYWORD_WEIGHT = 100.0


class StateError(Exception):
    """The state file cannot be used; the message says what and where."""


@dataclass(frozen=True)
class Query:
    """What one cycle searches: globs selecting files, keywords, globs or paths left out
    (the caller's), and the files the loop set aside (shown below 0.2 of an earlier
    cycle's best: read, ranked, never shown again)."""

    patterns: tuple[str, ...]
    keywords: tuple[Keyword, ...]
    excludes: tuple[str, ...] = ()
    set_aside: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"patterns": list(self.patterns), "keywords": [k.to_json() for k in self.keywords],
                "excludes": list(self.excludes), "set_aside": list(self.set_aside)}

    @classmethod
    def from_json(cls, data: Any) -> "Query":
        if not isinstance(data, dict):
            raise FormatError("next_query")
        # (A state written before set_aside existed holds the loop's files in excludes.)
        patterns, excludes = get_strs(data, "patterns"), get_strs(data, "excludes")
        try:
            check_patterns(patterns + excludes, most=None)  # as the flags are refused
        except UsageError:
            raise FormatError("next_query") from None
        return cls(patterns, tuple(_keyword(k) for k in get_list(data, "keywords")),
                   excludes, get_strs(data, "set_aside"))


def _keyword(item: Any) -> Keyword:
    """A stored keyword (Keyword.from_json, once its fields are checked); FormatError for
    an unknown kind or a bad field (never a guess)."""
    if not isinstance(item, dict) or not isinstance(item.get("group", ""), str):
        raise FormatError("keywords")
    try:
        get_str(item, "text"), get_str(item, "kind"), get_float(item, "weight", 0.0, MAX_KEYWORD_WEIGHT)
        kw = Keyword.from_json(item)
    except ValueError:
        raise FormatError("keywords") from None
    if kw is None or "\0" in kw.group:
        raise FormatError("keywords")
    return kw


@dataclass(frozen=True)
class ScoreEntry:
    """A file's score in the loop's memory: the cycle that gave it, and why.

    ``score`` is on the rubric (what the output shows); ``standing`` is the scorer's
    own relevance of the file against the best file of that cycle, which orders the
    loop's ranking across cycles (see cycle.merge_scores). A judged file has both at
    the caller's score."""

    score: float
    cycle: int
    reason: str
    judged: bool = False
    standing: Optional[float] = None   # None: the same as ``score``
    stamp: str = ""  # what the file was when scored (cycle._stamps; "": unknown): a changed file is scored again

    @property
    def rank_key(self) -> float:
        return self.score if self.standing is None else self.standing

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"score": self.score, "cycle": self.cycle, "reason": self.reason}
        if self.judged:
            out["judged"] = True
        if self.standing is not None and self.standing != self.score:
            out["standing"] = self.standing
        if self.stamp:
            out["stamp"] = self.stamp
        return out

    @classmethod
    def from_json(cls, data: Any) -> "ScoreEntry":
        if not isinstance(data, dict):
            raise FormatError("scores")
        standing = get_float(data, "standing") if "standing" in data else None
        stamp = get_str(data, "stamp") if "stamp" in data else ""
        return cls(get_float(data, "score"), get_int(data, "cycle"), get_str(data, "reason"),
                   data.get("judged") is True, standing, stamp)


def shown_scores(scores: Mapping[str, ScoreEntry],
                 left_out: Optional[Callable[[str], bool]]) -> Mapping[str, ScoreEntry]:
    """The scores the answer shows: less the files the caller's ``--exclude`` covers
    (``left_out``: walk.excluded_by, as the cycle applied them: a bare ``tokens.py``
    names that path, not every file so named). The loop still remembers them, but an
    excluded file neither stands in the ranking (a review's ``--exclude
    batch_semaphore.rs`` on a finished loop) nor caps the scores shown below it, nor is
    it the file a decision counts or names."""
    if left_out is None:
        return scores
    return {rel: e for rel, e in scores.items() if not left_out(rel)}


def shown_of(state: "LoopState", scores: Optional[Mapping[str, ScoreEntry]] = None) -> Mapping[str, ScoreEntry]:
    """:func:`shown_scores` of ``scores`` (the state's own by default) under the excludes
    the loop's answer stands under (its last proposal's)."""
    excludes = state.proposal.excludes if state.proposal is not None else ()
    return shown_scores(state.scores if scores is None else scores, excluded_by(state.root, excludes))


def ranked_scores(scores: Mapping[str, ScoreEntry]) -> list[tuple[str, float, ScoreEntry]]:
    """Files best first, each with the score to show, and the shown scores read downward.

    The tool's files go by standing, then the earlier cycle, then path, each showing its
    rubric score but never more than a file ranked before it. A judged file shows the
    caller's score and stands where that score puts it among them: before the first of
    the tool's files that shows less (standing and a caller's score are different scales,
    so a judged 0.9 must not fall behind a file shown at 0.3 that leads on standing)."""
    tool = sorted(((rel, e) for rel, e in scores.items() if not e.judged),
                  key=lambda kv: (-kv[1].rank_key, kv[1].cycle, kv[0]))
    judged = sorted(((rel, e) for rel, e in scores.items() if e.judged),
                    key=lambda kv: (-kv[1].score, kv[1].cycle, kv[0]))
    out: list[tuple[str, float, ScoreEntry]] = []
    ceiling = 1.0
    j = 0
    for rel, e in tool:
        ceiling = min(ceiling, e.score)
        while j < len(judged) and judged[j][1].score > ceiling:
            out.append((judged[j][0], judged[j][1].score, judged[j][1]))
            j += 1
        out.append((rel, ceiling, e))
    out += [(rel, e.score, e) for rel, e in judged[j:]]
    return out


@dataclass(frozen=True)
class HistoryEntry:
    """One finished cycle, in brief."""

    cycle: int
    keywords: tuple[str, ...]
    files_read: int
    new_ids: int
    max_score: float

    def to_json(self) -> dict[str, Any]:
        return {"cycle": self.cycle, "keywords": list(self.keywords), "files_read": self.files_read,
                "new_ids": self.new_ids, "max_score": self.max_score}

    @classmethod
    def from_json(cls, data: Any) -> "HistoryEntry":
        if not isinstance(data, dict):
            raise FormatError("history")
        return cls(get_int(data, "cycle"), get_strs(data, "keywords"), get_int(data, "files_read"),
                   get_int(data, "new_ids"), get_float(data, "max_score"))


@dataclass(frozen=True)
class LoopState:
    """Everything one invocation hands the next."""

    root: str
    task: str = ""
    max_cycles: int = 3
    max_file_bytes: int = MAX_FILE_BYTES
    limit: Optional[int] = None                 # the last --limit given (None: the default)
    cycle: int = 0
    done: bool = False
    proposal: Optional[Query] = None            # the query the last cycle proposed
    scores: Mapping[str, ScoreEntry] = field(default_factory=dict)
    judgements: Mapping[str, float] = field(default_factory=dict)
    seen_ids: tuple[str, ...] = ()              # files in view so far (cycle.EXCLUDE_WINDOW best)
    pending_related: tuple[str, ...] = ()       # related files the next cycle follows (expand)
    history: tuple[HistoryEntry, ...] = ()
    last: Optional[CycleView] = None            # the last cycle's outcome
    # The root resolved when the loop began (links followed): a later call whose root
    # resolves elsewhere (a link repointed, the directory swapped for a link) would search
    # another tree under the same name. None: a state written before this field.
    root_real: Optional[str] = None

    @property
    def stop_reason(self) -> Optional[str]:
        return self.last.decision.reason if self.last is not None else None

    def with_(self, **changes: Any) -> "LoopState":
        """A copy with ``changes`` (the record is frozen)."""
        return replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT_NAME, "version": FORMAT_VERSION,
            "root": self.root, "task": self.task, "max_cycles": self.max_cycles,
            "max_file_bytes": self.max_file_bytes, "cycle": self.cycle, "done": self.done,
            "next_query": self.proposal.to_json() if self.proposal is not None else None,
            "scores": {rel: e.to_json() for rel, e in self.scores.items()},
            "judgements": dict(self.judgements),
            "seen_ids": list(self.seen_ids), "pending_related": list(self.pending_related),
            "history": [h.to_json() for h in self.history],
            "last": self.last.to_json() if self.last is not None else None,
            **({"root_real": self.root_real} if self.root_real is not None else {}),
            **({"limit": self.limit} if self.limit is not None else {}),
        }

    @classmethod
    def from_json(cls, data: Any) -> "LoopState":
        """The state in ``data``; FormatError naming the first malformed field."""
        if not isinstance(data, dict):
            raise FormatError("format")
        scores = data.get("scores", {})
        judgements = data.get("judgements", {})
        if not isinstance(scores, dict):
            raise FormatError("scores")
        if not isinstance(judgements, dict):
            raise FormatError("judgements")
        judged = {}
        for rel, value in judgements.items():
            judged[rel] = get_float({"judgements": value}, "judgements")
        nq = data.get("next_query")
        last = data.get("last")
        seen, pending = get_strs(data, "seen_ids"), get_strs(data, "pending_related")
        for key, rels in (("scores", scores), ("judgements", judgements), ("seen_ids", seen),
                          ("pending_related", pending)):
            if not all(_tree_path(rel) for rel in rels):
                raise FormatError(key)
        view = _within("last", lambda: CycleView.from_json(last) if last is not None else None)
        if view is not None and not all(_tree_path(r.id) and all(_tree_path(x) for x in r.related)
                                        for r in view.results):
            raise FormatError("last.results")
        if view is not None and not all(_tree_path(x) for x in view.related):
            raise FormatError("last.related")
        root = get_str(data, "root")
        # (The tool writes the root resolved: one relative to wherever the next call runs
        # names another tree; and no path holds a NUL.)
        if not os.path.isabs(root) or "\0" in root:
            raise FormatError("root")
        root_real = get_str(data, "root_real") if "root_real" in data else None
        if root_real is not None and (not os.path.isabs(root_real) or "\0" in root_real):
            raise FormatError("root_real")
        return cls(
            root=root, task=get_str(data, "task"),
            max_cycles=get_int(data, "max_cycles", 1), max_file_bytes=get_int(data, "max_file_bytes", 1),
            cycle=get_int(data, "cycle"), done=get_bool(data, "done"),
            proposal=_within("next_query", lambda: Query.from_json(nq) if nq is not None else None),
            scores=_within("scores", lambda: {rel: ScoreEntry.from_json(v) for rel, v in scores.items()}),
            judgements=judged,
            seen_ids=seen, pending_related=pending,
            history=_within("history", lambda: tuple(HistoryEntry.from_json(h) for h in get_list(data, "history"))),
            last=view, root_real=root_real,
            limit=get_int(data, "limit", 1) if "limit" in data else None,
        )


def _tree_path(rel: str) -> bool:
    """Whether ``rel`` can name a file of the tree as the walk spells it: relative, POSIX,
    no ``..``, ``.`` or empty part, no NUL. Files the state names are shown to the agent to read: a state edited
    to name ``../secret`` or ``/etc/passwd`` is refused, not served."""
    return bool(rel) and "\0" not in rel and not rel.startswith("/") \
        and all(part not in ("", ".", "..") for part in rel.split("/"))


def _within(key: str, parse: Any) -> Any:
    """Run ``parse``; a FormatError inside names the top-level field first (``last.results``)."""
    try:
        return parse()
    except FormatError as exc:
        inner = str(exc)
        raise FormatError(inner if inner == key or inner.startswith(key + ".") else f"{key}.{inner}") from None


def _regular_or_absent(path: str, shown: str) -> bool:
    """True when ``path`` is a regular file, False when absent; StateError otherwise.

    A state reached under two names - a symbolic link, or a file with a second hard
    link - is refused: each save replaces the name it was given, and the other name
    would keep an older state (and take its own lock)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        raise StateError(f"{shown}: a part of its directory is a file, not a directory; "
                         "choose another --state") from None
    except OSError as exc:
        raise StateError(f"{shown}: cannot read state file: {exc.strerror or exc}") from None
    if stat.S_ISLNK(st.st_mode):
        raise StateError(f"{shown}: is a symbolic link; name the state file itself (a save replaces the "
                         "link, and its target would keep the older state)")
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise StateError(f"{shown}: has {st.st_nlink} names (hard links); use a state file of one name "
                         "(a save replaces this name only)")
    if stat.S_ISDIR(st.st_mode):
        raise StateError(f"{shown}: is a directory, not a state file")
    if not stat.S_ISREG(st.st_mode):
        raise StateError(f"{shown}: is not a regular file (a FIFO, socket or device); choose another --state")
    return True


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_state(path: str, shown: Optional[str] = None) -> Optional[LoopState]:
    """The state at ``path``, or None when there is no file yet.

    Raises StateError for an unreadable, corrupt, foreign or malformed file (left untouched).
    """
    shown = shown or path
    if not _regular_or_absent(path, shown):
        return None
    try:
        raw = read_regular(path, MAX_STATE_BYTES + 1)
    except FileNotFoundError:
        return None
    except (NotRegularError, IsADirectoryError):  # (replaced since the look above)
        raise StateError(f"{shown}: is not a regular file; choose another --state") from None
    except OSError as exc:
        raise StateError(f"{shown}: cannot read state file: {exc.strerror or exc}") from None
    if len(raw) > MAX_STATE_BYTES:
        raise StateError(f"{shown}: larger than any state file; left untouched, choose another --state")
    if not raw.strip():  # an empty file (``mktemp``'s): no state yet, as --reset takes it
        return None
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        if raw.strip() and not _names_format(raw):
            raise StateError(f"{shown}: not an agentic-search state file; left untouched, "
                             "choose another --state") from None
        raise StateError(
            f"{shown}: state file is corrupt ({exc.__class__.__name__}); "
            "left untouched, pass --reset to start over"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise StateError(f"{shown}: not an agentic-search state file; left untouched, choose another --state")
    if data.get("version") != FORMAT_VERSION:
        raise StateError(
            f"{shown}: state format version {data.get('version')!r} is not supported "
            f"(this tool writes version {FORMAT_VERSION}); pass --reset to start over"
        )
    try:
        return LoopState.from_json(data)
    except FormatError as exc:
        raise StateError(f"{shown}: state file field {str(exc)!r} is missing or malformed; pass --reset") from None


# A state file opens with its format, the first key of its object (the writer puts it
# first); --reset replaces only a file that does (a corrupt state keeps it) or an empty
# one: not a source file or a note that merely quotes the format's name.
STATE_MARK_BYTES = 4096
_STATE_MARK_RE = re.compile(rb'\A(?:\xef\xbb\xbf)?[ \t\r\n]*\{[ \t\r\n]*"format"[ \t\r\n]*:[ \t\r\n]*"%s"'
                            % FORMAT_NAME.encode("ascii"))


def _names_format(data: bytes) -> bool:
    """Whether a state file's bytes open with its format (the first key of its object)."""
    return _STATE_MARK_RE.match(data[:STATE_MARK_BYTES]) is not None


def _looks_like_state(path: str) -> bool:
    """Whether the regular file at ``path`` is empty, a JSON object of the state format
    (its keys in any order: one a tool re-saved), or opens as a state does (a truncated
    one): what --reset may replace; False when it cannot be read."""
    try:
        raw = read_regular(path, MAX_STATE_BYTES + 1)
    except OSError:
        return False
    if not raw.strip() or _names_format(raw):
        return True
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT_NAME


def check_writable_target(path: str, shown: str, replacing: bool = True) -> None:
    """A state may be written at ``path``: it is absent or a regular file - and when the
    call replaces what is there (--reset), a state file or an empty file, never another
    file (a source file, a note named by mistake); never a FIFO, device or directory."""
    if _regular_or_absent(path, shown) and replacing and not _looks_like_state(path):
        raise StateError(f"{shown}: exists and is not an agentic-search state file; left untouched "
                         "(--reset replaces only a state file): choose another --state")


# The longest file name most file systems take (bytes).
NAME_MAX = 255


def lock_path_of(path: str) -> str:
    """The lock beside the state ``path``: FILE.lock, or, when that name would be too long
    for the file system (a state named at its limit), the name cut and a hash of it."""
    head, name = os.path.split(path)
    raw = os.fsencode(name)
    if len(raw) + len(LOCK_SUFFIX) <= NAME_MAX:
        return path + LOCK_SUFFIX
    digest = hashlib.sha256(raw).hexdigest()[:16]
    cut = raw[:NAME_MAX - len(LOCK_SUFFIX) - len(digest) - 1].decode("utf-8", "ignore")
    return os.path.join(head, f"{cut}-{digest}{LOCK_SUFFIX}")


def save_state(path: str, state: LoopState) -> None:
    """Write ``state`` to ``path`` atomically (temp file in the same directory, then
    rename), never inside the tree it searches (:class:`InsideTree`), even when the
    state's directory was swapped for a link into it during the cycle."""
    payload = json.dumps(state.to_json(), ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    if len(payload) > MAX_STATE_BYTES:
        # (A state no later call would read is not written: the one before it stays.)
        raise StateError(f"this cycle's state would be {len(payload) // 2**20} MiB, larger than any state "
                         f"file ({MAX_STATE_BYTES // 2**20} MiB); not saved, the file left as it was")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic_write(path, (payload.encode("ascii"),), fsync=True, outside=fsafe.resolved(state.root))
    _sweep_stale_temps(os.path.dirname(os.path.abspath(path)))


# A save killed between writing its temporary file and renaming it leaves that file: one
# of ours this old is no save in progress (a cycle takes seconds), and goes.
STALE_TEMP_SECONDS = 3600
_TEMP_NAME_RE = re.compile(r"\.agentic-search-[0-9a-z_]{6,16}\.tmp")


def _sweep_stale_temps(directory: str) -> None:
    """Remove the temporary files of saves killed in ``directory`` (best effort)."""
    geteuid = getattr(os, "geteuid", None)
    now = time.time()
    try:
        with os.scandir(directory) as entries:
            names = [e.name for e in entries if _TEMP_NAME_RE.fullmatch(e.name)]
    except OSError:
        return
    for name in names:
        where = os.path.join(directory, name)
        try:
            st = os.lstat(where)
            if stat.S_ISREG(st.st_mode) and now - st.st_mtime > STALE_TEMP_SECONDS \
                    and (geteuid is None or st.st_uid == geteuid()):
                os.unlink(where)
        except OSError:
            pass


@contextlib.contextmanager
def locked(path: str, shown: str, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
    """Hold the advisory lock beside the state ``path`` (FILE.lock) for one cycle.

    A second process on the same state waits up to ``wait`` seconds, then gets a
    StateError; without ``fcntl`` (not POSIX) there is no lock. The lock file is
    opened without following a link and must be a regular file. A call that leaves no
    state behind (refused before one was written), or fails, removes the lock file and
    the directories it created for them, never one that was there before.
    """
    try:
        import fcntl
    except ImportError:  # not POSIX: no advisory locks
        yield
        return
    lock_path = lock_path_of(path)
    made = make_parents(path, shown)
    fd, created, failed = -1, False, False
    try:
        fd, created = _acquire(fcntl, lock_path, shown, wait, made)
        close_in_workers(fd)  # a forked worker's copy would hold the lock past this process
        yield
    except BaseException:
        failed = True
        raise
    finally:
        nothing_saved = not os.path.lexists(path)
        if fd >= 0:
            # (Only the file this call locked: a folder swapped for a link meanwhile puts
            # another file of that name at the path, maybe one of the tree's.)
            if created and (failed or nothing_saved) and _is_at(fd, lock_path):
                _unlink_quietly(lock_path)  # still held: a waiter sees it gone and takes a new one
            keep_in_workers(fd)
            os.close(fd)  # closing releases the lock
        if nothing_saved:
            _remove_made(made)


# Walks up a state's missing directories at most this many times: another call on the
# same new directory may remove, when it fails, a directory this one was about to use.
MAKE_PARENTS_TRIES = 5


class _ParentVanished(Exception):
    """A directory made by another call went before this call could make one inside it."""


def make_parents(path: str, shown: str) -> list[tuple[str, tuple[int, int]]]:
    """Create the missing directories above ``path``; returns them, outermost first.
    StateError when one cannot be made (a regular file where a directory must be).
    A directory another call made and removed again meanwhile (its own call failed) is
    made anew: the walk starts over."""
    for _ in range(MAKE_PARENTS_TRIES):
        try:
            return _make_parents_once(path, shown)
        except _ParentVanished:
            continue
    raise StateError(f"{shown}: cannot create the state's directory {os.path.dirname(os.path.abspath(path))}: "
                     "other processes keep removing it")


def _make_parents_once(path: str, shown: str) -> list[tuple[str, tuple[int, int]]]:
    directory = os.path.dirname(os.path.abspath(path))
    missing: list[str] = []
    while not os.path.lexists(directory):
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    if not os.path.isdir(directory):
        raise StateError(f"{shown}: cannot create the state's directory: {directory} is not a directory")
    made: list[tuple[str, tuple[int, int]]] = []
    for new in reversed(missing):
        try:
            os.mkdir(new)
        except FileExistsError:  # another process made it: not ours to remove
            if os.path.isdir(new):
                continue
            _remove_made(made)
            raise StateError(f"{shown}: cannot create the state's directory: {new} is not a directory") from None
        except FileNotFoundError:  # its parent, another call's, was removed meanwhile
            _remove_made(made)
            raise _ParentVanished() from None
        except OSError as exc:
            _remove_made(made)
            raise StateError(f"{shown}: cannot create the state's directory {new}: {exc.strerror or exc}") from None
        try:
            st = os.lstat(new)
        except OSError:  # gone at once: another call's clean-up
            _remove_made(made)
            raise _ParentVanished() from None
        made.append((new, (st.st_dev, st.st_ino)))
    return made


def _remove_made(made: list[tuple[str, tuple[int, int]]]) -> None:
    """Remove the directories this call created, innermost first, each only if empty and
    still the directory made (a folder swapped for a link meanwhile leads elsewhere,
    maybe into the tree: nothing there is removed)."""
    for directory, made_id in reversed(made):
        try:
            st = os.lstat(directory)
            if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) != made_id:
                return
            os.rmdir(directory)
        except OSError:  # another process put something there: keep it
            return


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


_LOCK_FLAGS = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def _open_lock(lock_path: str, shown: str) -> tuple[int, bool]:
    """(descriptor, created by this call) of the lock file, or (-1, False) when it
    vanished between two looks (its creator removed it: look again), or its folder did
    (a refused call's clean-up removed the folders it made: make them again)."""
    try:
        return os.open(lock_path, _LOCK_FLAGS | os.O_CREAT | os.O_EXCL, 0o600), True
    except FileExistsError:
        pass
    except FileNotFoundError:
        if os.path.isdir(os.path.dirname(os.path.abspath(lock_path))):
            # (A folder that takes no new file and says ENOENT: /proc. Looking again would
            # spin until the wait ran out.)
            raise StateError(f"{shown}{LOCK_SUFFIX}: cannot create the state's lock in its folder") from None
        return -1, False
    except OSError as exc:
        raise StateError(f"{shown}{LOCK_SUFFIX}: cannot open the state's lock: {exc.strerror or exc}") from None
    try:
        return os.open(lock_path, _LOCK_FLAGS), False
    except FileNotFoundError:
        return -1, False
    except OSError as exc:
        raise StateError(f"{shown}{LOCK_SUFFIX}: cannot open the state's lock: {exc.strerror or exc}") from None


def _acquire(fcntl: Any, lock_path: str, shown: str, wait: float,
             made: list[tuple[str, tuple[int, int]]]) -> tuple[int, bool]:
    """Open and lock the lock file, waiting up to ``wait`` seconds; (descriptor, created).
    A lock file removed by its creator while this call waited is opened anew."""
    deadline = time.monotonic() + wait
    while True:
        if not os.path.isdir(os.path.dirname(os.path.abspath(lock_path))):
            made += make_parents(lock_path, shown)  # removed by a refused call's clean-up
        fd, created = _open_lock(lock_path, shown)
        if fd < 0:
            if time.monotonic() >= deadline:
                raise StateError(f"{shown}{LOCK_SUFFIX}: the state's lock keeps vanishing; try again")
            continue
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise StateError(f"{shown}{LOCK_SUFFIX}: the state's lock is not a regular file")
            if st.st_nlink > 1:
                # (A lock with another name - a file of the tree - would hide that file
                # from the walk as the tool's own, as a state file of two names would.)
                raise StateError(f"{shown}{LOCK_SUFFIX}: the state's lock has {st.st_nlink} names (hard "
                                 "links); remove this name and call again")
            _flock_until(fcntl, fd, deadline, shown, wait)
            if _is_at(fd, lock_path):
                return fd, created
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


def _flock_until(fcntl: Any, fd: int, deadline: float, shown: str, wait: float) -> None:
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError:
            if time.monotonic() >= deadline:
                raise StateError(
                    f"{shown}: another process has been running a cycle on this state for "
                    f"{wait:g} s; try again, or use another --state") from None
            time.sleep(LOCK_POLL_SECONDS)


def _is_at(fd: int, path: str) -> bool:
    """True when the locked file is still the one at ``path`` (not removed meanwhile)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


# Writes name their directory by a descriptor (openat, renameat) where the system can.
_WRITE_BY_FD = hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd and os.rename in os.supports_dir_fd


class InsideTree(PermissionError):
    """A write that would land inside the tree the tool searches."""


def atomic_write(path: str, pieces: Sequence[bytes], *, fsync: bool, prefix: str = ".agentic-search-",
                 outside: Optional[str] = None) -> None:
    """Write ``pieces`` to a temporary file beside ``path``, then rename it into place.

    A crash at any point leaves either the old file or the new one, never a mix; the
    temporary file is removed on failure. ``fsync`` makes the new content durable
    before the rename (the state needs it; a cache, which is rebuilt, does not).

    The directory is held by a descriptor from first to last (where the system can): the
    file lands in the directory checked, even when the path is swapped for a link
    meanwhile. With ``outside`` (a tree's real path) that directory must not be in that
    tree, under any name (:func:`fsafe.inside_any_name`): else :class:`InsideTree` and
    nothing is written.
    """
    directory = os.path.dirname(os.path.abspath(path))
    dfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)) if _WRITE_BY_FD else None
    try:
        if outside is not None and _inside(directory, dfd, outside):
            raise InsideTree(errno.EPERM, "inside the tree it searches", directory)
        fd, tmp = _temp_file(directory, dfd, prefix)
        try:
            with os.fdopen(fd, "wb") as fh:
                for piece in pieces:
                    fh.write(piece)
                if fsync:
                    fh.flush()
                    os.fsync(fh.fileno())
            os.replace(tmp, path if dfd is None else os.path.basename(path), src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=dfd)
            except OSError:
                pass
            raise
    finally:
        if dfd is not None:
            os.close(dfd)


def _inside(directory: str, dfd: Optional[int], outside: str) -> bool:
    """Whether ``directory`` (held as ``dfd``, when there is one) lies in the tree
    ``outside``; a folder at that path other than the one held counts as inside."""
    real = fsafe.resolved(directory)
    if dfd is not None:
        here, there = os.fstat(dfd), os.stat(real)
        if (here.st_dev, here.st_ino) != (there.st_dev, there.st_ino):
            return True
    return fsafe.inside_any_name(real, outside)


def _temp_file(directory: str, dfd: Optional[int], prefix: str) -> tuple[int, str]:
    """(descriptor, name) of a new temporary file in ``directory``: named relative to
    ``dfd`` when there is one, else a path."""
    if dfd is None:
        return tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    for _ in range(100):
        tmp = f"{prefix}{os.urandom(6).hex()}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                           | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=dfd), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", directory)


