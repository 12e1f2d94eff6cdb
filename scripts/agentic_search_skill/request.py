"""What the caller asked for on one invocation, validated once.

:func:`from_args` turns parsed command-line arguments into a frozen :class:`Request`;
every check of a flag's value lives here, so the rest of the loop never sees a bad
value. Checks that need the tree (a ``--judge`` path must name a file inside the root
and must not be the loop's own state file) are in :func:`resolve_judgements`, which
the cycle calls once the root is known.

How each flag combines with the loop's own proposal on a later call:

- ``--task`` adds its text (and keywords) to the loop's task;
- ``--keywords`` are added first, as ``given`` keywords (the strongest kind);
- ``--patterns`` *replace* the query's patterns (narrowing works on any call);
- ``--exclude`` adds to the query's excludes;
- ``--judge`` records the caller's relevance for files it read (kept for later calls);
- ``--max-cycles``, ``--max-file-kb`` and ``--limit`` are kept for later calls; ``--full``
  and ``--text`` apply to this call's output only.

Example::

    >>> parse_judge("src/auth.py=0.9")
    Judgement(path='src/auth.py', score=0.9)
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat as stat_mod
import sys
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from hints import _read_stdin  # (hints.py's own: standard input read to its end)

from . import fsafe
from .fsafe import NotRegularError, read_regular
from .query import MAX_KEYWORD_CHARS
from .walk import GlobError, expand_braces, has_magic

# Entries in results, ranking and context unless --limit says otherwise.
DEFAULT_LIMIT = 20
# The seed's loop limit.
DEFAULT_MAX_CYCLES = 3
# A task file longer than this is not an issue text (a log, a binary): refused.
MAX_TASK_BYTES = 4 * 1024 * 1024
# A loop is a few cycles, one call each: a limit beyond this is a typo (the state
# keeps a history entry per cycle, and its integers must stay exact in JSON).
MAX_MAX_CYCLES = 1000
# A file beyond 1 GiB is not source to search (a disk image, a dump), and each file
# read is held in memory whole: the largest --max-file-kb accepted.
MAX_MAX_FILE_KB = 1024 * 1024
# The most entries --limit shows: any more than a tree holds shows them all, and the state
# keeps the limit, whose integers must stay exact in JSON (a larger one was kept, then
# refused by every later call).
MAX_LIMIT = 1_000_000
# The most --keywords one call takes (a task gives about 40).
MAX_KEYWORDS = 100
# The brace alternatives one flag's globs may expand to in all: every file walked is
# matched against each of them (``{a,b}`` ten times over is 1,024 globs; a glob a person
# writes, ``{src,lib}/**/*.{ts,tsx}``, is four).
MAX_GLOB_ALTERNATIVES = 64
# A --patterns glob names files inside the root: these split it into the parts that
# must not climb out of it (directory separators, brace alternatives).
_PATTERN_PARTS = re.compile(r"[/{},]")
# How ``--text`` shows a character a terminal must not get (output._safe): a control
# character as ``\x0a``, a byte that is not UTF-8 as ``\udcff``.
_SHOWN_ESCAPE_RE = re.compile(r"\\(x[0-9a-f]{2}|u[0-9a-f]{4})")


class RequestError(Exception):
    """One line for stderr: a flag's value is bad (exit 1)."""


class UsageError(RequestError):
    """The call's flags do not make sense together (exit 2)."""


@dataclass(frozen=True)
class Judgement:
    """The caller's relevance for one file it read (``--judge PATH=SCORE``)."""

    path: str
    score: float


@dataclass(frozen=True)
class Request:
    """Everything one invocation asked for; built by :func:`from_args`."""

    state_path: str                   # absolute
    state_shown: str                  # as the caller spelled it, for messages
    root: Optional[str] = None        # absolute; None: take it from the state
    task: str = ""
    keywords: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    judgements: tuple[Judgement, ...] = ()
    max_cycles: Optional[int] = None
    limit: Optional[int] = None       # None: the loop's own (the last one given), else DEFAULT_LIMIT
    max_file_kb: Optional[int] = None
    reset: bool = False
    text: bool = False
    full: bool = False
    show: bool = False                # print the last cycle's answer again; run none
    use_cache: bool = True
    index_dir: Optional[str] = None   # where the tree's index lives (index.base_dir)

    @property
    def steers_query(self) -> bool:
        """True when the caller changed the query (not only judged files)."""
        return bool(self.task or self.keywords or self.patterns or self.excludes)


def parse_judge(value: str) -> Judgement:
    """``PATH=SCORE`` with a finite score in 0..1; a UsageError (exit 2) otherwise, as for
    any flag whose value is malformed or out of its range (``--max-cycles 0``). What the
    path names (missing, outside the tree) is bad input, exit 1 (:func:`resolve_judgements`)."""
    path, sep, raw = value.rpartition("=")
    if not sep or not path:
        raise UsageError(f"--judge {value!r}: expected PATH=SCORE, e.g. src/auth.py=0.9")
    try:
        if not raw.isascii() or "_" in raw:  # (float() takes "٠.٥" and "0_5")
            raise ValueError(raw)
        score = float(raw)
    except ValueError:
        raise UsageError(f"--judge {value!r}: score {raw!r} is not a number") from None
    if not 0.0 <= score <= 1.0:  # also false for nan
        raise UsageError(f"--judge {value!r}: score must be between 0 and 1")
    return Judgement(path, score + 0.0)  # (-0 is 0: the same judgement, the same bytes)


def _at_least_one(flag: str, value: Optional[int], most: Optional[int] = None) -> Optional[int]:
    """``value`` when in 1..most; a UsageError outside (exit 2, as for a value that is no
    number at all: the flag is misused, whichever side it misses)."""
    if value is not None and value < 1:
        raise UsageError(f"{flag} {value}: must be at least 1")
    if value is not None and most is not None and value > most:
        raise UsageError(f"{flag} {value}: must be at most {most}")
    return value


def check_patterns(patterns: tuple[str, ...], flag: str = "--patterns",
                   most: Optional[int] = MAX_GLOB_ALTERNATIVES) -> tuple[str, ...]:
    """--patterns (or --exclude) globs, each relative to the root, as the walk reads them
    (``./`` in front, doubled and trailing ``/`` taken off). An absolute one or one with
    a ``..`` part would name files outside the tree, which the walk never visits, and an
    empty one names nothing: each a UsageError, never a flag that silently does nothing.
    So is one flag's globs expanding to more than ``most`` alternatives in all (None: a
    loop's stored globs, which add up over its calls, are bounded when they are walked)."""
    out = []
    alternatives = 0
    for pattern in patterns:
        try:
            if has_magic(pattern):  # (a plain path is looked up, not matched against each file)
                alternatives += len(expand_braces(pattern))
        except GlobError as exc:
            raise UsageError(f"{flag} {exc}") from None
        if most is not None and alternatives > most:
            raise UsageError(f"{flag}: the globs expand to more than {most} alternatives in all "
                             "(each file is matched against every one)")
        if pattern.startswith("/") or os.path.isabs(pattern):
            raise UsageError(f"{flag} {pattern!r}: is absolute; paths and globs are relative to --root")
        if ".." in _PATTERN_PARTS.split(pattern):
            raise UsageError(f"{flag} {pattern!r}: has a '..' part; paths and globs name files inside --root")
        clean = _tidy(pattern)
        if not clean:
            raise UsageError(f"{flag} {pattern!r}: names no file (an empty path or the root itself)")
        out.append(clean)
    return tuple(out)


def _tidy(pattern: str) -> str:
    """A root-relative glob without ``./`` parts, doubled ``/`` or a trailing ``/``."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    return "/".join(parts)


def _argv_text(value: str) -> str:
    """Text given on the command line as the task's words: bytes that are not UTF-8 (which
    Python hands over as surrogate escapes) become U+FFFD, as in a --task-file."""
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a lone surrogate that is no escape (not from a POSIX argv)
        return value.encode("utf-8", "replace").decode("utf-8")


def line_ends(text: str) -> str:
    """``text`` with Windows' and old Macs' line ends (``\\r\\n``, ``\\r``) as ``\\n``: a task
    is read line by line (headings, a traceback's frames, a command on its own line), and
    an issue saved on Windows, or a third of the dev issues as GitHub keeps them, ends its
    lines in ``\\r\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _read_task(task: str, task_file: Optional[str]) -> str:
    """--task and --task-file joined (the file's text after the flag's)."""
    if not task_file:
        return task
    try:
        if task_file == "-":
            if sys.stdin is None or sys.stdin.closed:
                raise RequestError("--task-file -: standard input is closed")
            if sys.stdin.isatty():
                raise UsageError("--task-file -: standard input is a terminal; pipe the task in "
                                 "or pass --task-file FILE")
            extra = _read_stdin(MAX_TASK_BYTES + 1)  # (to its end, a pipe left non-blocking too)
        else:
            extra = read_regular(task_file, MAX_TASK_BYTES + 1)
    except BlockingIOError:
        raise RequestError(f"--task-file {task_file}: would block (a kernel or device file); "
                           "pass the issue's text") from None
    except NotRegularError:
        raise RequestError(f"--task-file {task_file}: not a regular file (a FIFO or device); "
                           "pass a file, or '-' for standard input") from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise RequestError(f"--task-file {task_file}: cannot read: {reason}") from None
    if len(extra) > MAX_TASK_BYTES:
        raise RequestError(f"--task-file {task_file}: larger than {MAX_TASK_BYTES // (1024 * 1024)} MiB")
    text = _decode_task(extra)
    if _looks_binary(text):
        raise RequestError(f"--task-file {task_file}: looks binary (more than "
                           f"{int(BINARY_SHARE * 100)}% of it is no text); pass the issue's text")
    return (task + "\n" + text).strip() if task else text


# A task file that is more than this share of undecodable bytes and control characters
# (tab, line ends and form feed aside) is a binary file given by mistake: its "keywords"
# would be noise (an adversarial check's 4 KB of random bytes gave ``MER``, ``f9u``). A
# pasted terminal's colour codes are a few percent.
BINARY_SHARE = 0.3
_NOT_TEXT_RE = re.compile("[\ufffd\x00-\x08\x0b\x0e-\x1f\x7f]")


def _looks_binary(text: str) -> bool:
    return len(text) >= 64 and len(_NOT_TEXT_RE.findall(text)) > BINARY_SHARE * len(text)


def _no_text(task_file: str) -> RequestError:
    """The error for a task file of nothing but space, given without another query."""
    where = "standard input" if task_file == "-" else "the file"
    return RequestError(f"--task-file {task_file}: {where} holds no text; pass the task there, "
                        "or --task TEXT")


# A task file's byte-order mark and the encoding it announces (an editor on Windows saves
# "Unicode" as UTF-16 with one); without one the file is read as UTF-8.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _decode_task(data: bytes) -> str:
    """A task file's text: in the encoding its byte-order mark names, else UTF-8; bytes
    that do not decode become U+FFFD."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return data.decode(encoding, errors="replace")
    return data.decode("utf-8", errors="replace")


def _absolute(path: str, flag: str) -> str:
    """``path`` made absolute as the system reads it (:func:`fsafe.absolute`); a
    RequestError when it is relative and the current directory no longer exists, or when
    a ``..`` follows what the system cannot enter (its error said)."""
    try:
        return fsafe.absolute(path)
    except OSError as e:
        if e.filename:
            raise RequestError(f"{flag} {path}: the '..' after {e.filename} leads nowhere "
                               f"({e.strerror})") from None
        raise RequestError(f"{flag} {path}: a relative path, and the current directory no longer "
                           "exists; cd to an existing directory or pass an absolute path") from None


def _names_a_folder(path: str) -> bool:
    """Whether ``path`` as spelled can only be a folder: it ends in a separator, or its last
    part is ``.`` or ``..`` (``tasks/`` would otherwise be written as a file ``tasks``)."""
    return os.path.basename(path) in ("", ".", "..")


def from_args(args: Any) -> Request:
    """The request for parsed arguments (an argparse Namespace); RequestError if a value is bad."""
    state = args.state
    if state is None:
        raise UsageError("--state FILE is required")
    if not state or state == "-":
        raise UsageError(f"--state {state!r}: not a file name; name the state file "
                         "(e.g. ~/.cache/agentic-search/tasks/NAME.json)")
    if _names_a_folder(state):
        raise UsageError(f"--state {state}: names a folder (it ends in '{state[-1]}'); name the state "
                         "file itself (e.g. ~/.cache/agentic-search/tasks/NAME.json)")
    state_path = _absolute(state, "--state")
    if state_path.endswith(".lock"):  # (an empty lock file read as an empty state: taken over)
        raise UsageError(f"--state {state}: the name of a lock (FILE.lock locks the state FILE); "
                         "name the state file itself")
    if os.path.isdir(state_path):
        raise RequestError(f"--state {state}: is a directory, not a state file")
    show = bool(getattr(args, "show", False))
    if show:
        # (--show reads the state and runs nothing: a flag that would change the loop
        # would be silently ignored, so it is refused.)
        extra = [flag for flag, on in (
            ("--reset", args.reset), ("--task", args.task), ("--task-file", args.task_file),
            ("--keywords", args.keywords), ("--patterns", args.patterns), ("--exclude", args.exclude),
            ("--judge", args.judge), ("--max-cycles", args.max_cycles is not None),
            ("--max-file-kb", args.max_file_kb is not None)) if on]
        if extra:
            raise UsageError(f"--show runs no cycle and changes nothing: drop {', '.join(extra)} "
                             "(it takes --text, --full and --limit)")
    if args.root is not None and not args.root:
        raise UsageError("--root '': empty; pass the directory to search (. for the current one)")
    task = line_ends(_read_task(_argv_text(args.task or ""), args.task_file))
    keywords = _check_keywords(tuple(_argv_text(k) for k in args.keywords))
    if args.task_file and not task.strip() and not keywords:
        raise _no_text(args.task_file)
    return Request(
        state_path=state_path,
        state_shown=state,
        root=_absolute(args.root, "--root") if args.root is not None else None,
        task=task,
        keywords=keywords,
        patterns=check_patterns(tuple(args.patterns)),
        excludes=check_patterns(tuple(args.exclude), "--exclude"),
        judgements=tuple(parse_judge(v) for v in args.judge),
        max_cycles=_at_least_one("--max-cycles", args.max_cycles, MAX_MAX_CYCLES),
        limit=_at_least_one("--limit", args.limit, MAX_LIMIT),
        max_file_kb=_at_least_one("--max-file-kb", args.max_file_kb, MAX_MAX_FILE_KB),
        reset=bool(args.reset),
        text=bool(args.text),
        full=bool(args.full),
        show=show,
        use_cache=not args.no_cache,
        index_dir=_absolute(args.index_dir, "--index-dir") if getattr(args, "index_dir", None) else None,
    )


def _check_keywords(keywords: tuple[str, ...]) -> tuple[str, ...]:
    """At most MAX_KEYWORDS: each is counted in every file, and a list of every name of
    a module (``--keywords $(cat names)``) costs minutes where a task's words cost a
    second. A blank one is none (it steered the round as if a word were given); one
    longer than a name can be (MAX_KEYWORD_CHARS) is bad input, never dropped unsaid."""
    keywords = tuple(k for k in keywords if k.strip())
    if len(keywords) > MAX_KEYWORDS:
        raise RequestError(f"--keywords: {len(keywords)} given, at most {MAX_KEYWORDS}: pass the code's own "
                           "words for what you look for (a task's text goes to --task)")
    for k in keywords:
        if len(k.strip()) > MAX_KEYWORD_CHARS:
            raise RequestError(f"--keywords: a word of {len(k.strip()):,} characters, at most {MAX_KEYWORD_CHARS} "
                               f"({k.strip()[:40]}...): pass a name of the code (a task's text goes to --task)")
    return keywords


def check_root(root: str, shown: str) -> None:
    """The tree to search must be an existing directory this process may list."""
    if not os.path.exists(root):
        raise RequestError(f"--root {shown}: no such directory")
    if not os.path.isdir(root):
        raise RequestError(f"--root {shown}: not a directory")
    if not os.access(root, os.R_OK | os.X_OK):
        raise RequestError(f"--root {shown}: cannot be read (permission denied)")


def check_state_outside(state_path: str, shown: str, root: str) -> None:
    """The state (and its lock beside it) is never written inside the tree it searches:
    the tool writes nothing into a tree, whatever it is asked (a state there would also
    stand in the tree's listing and in ``git status``)."""
    folder = fsafe.resolved(os.path.dirname(state_path) or ".")
    if fsafe.inside_any_name(folder, fsafe.resolved(root)):
        raise RequestError(f"--state {shown}: inside the tree it searches ({root}); the tool writes "
                           "nothing into a tree: keep the state outside it, e.g. "
                           "~/.cache/agentic-search/tasks/NAME.json")


def _not_a_file(real: str) -> str:
    """Why ``real`` (resolved, inside the root) is no file to judge: a directory, another
    kind of file, missing, or what the system said (a folder it may not enter, a path
    longer than it takes) - not "no such file" for a file that exists."""
    try:
        st = os.stat(real)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):  # (ENOTDIR: a file where a folder is named)
            return "no such file under the root"
        return f"cannot be read ({exc.strerror or exc})"
    return "is a directory; judge the files in it" if stat_mod.S_ISDIR(st.st_mode) else "is not a regular file"


def resolve_judgements(root: str, judgements: tuple[Judgement, ...],
                       own_files: tuple[str, ...] = (), ranked: Optional[Sequence[str]] = ()) -> dict[str, float]:
    """Judged paths as POSIX paths relative to the root, each checked: inside the root
    (after following links), an existing regular file, not one of the tool's own files.

    A relative path no file of the tree has is read as the end of the one file of
    ``ranked`` (the files the loop has scored) whose path ends so (``event.rs`` for
    ``alacritty/src/event.rs``, as an agent writes what it read); two or more such files
    are refused with their paths. With ``ranked`` None (the check made before the state
    is read) such a path is left for the check that has it; with none ranked, refused."""
    root_real = fsafe.resolved(root)
    own = {_identity(p) for p in own_files} - {None}
    out: dict[str, float] = {}
    for j in judgements:
        full = j.path if os.path.isabs(j.path) else os.path.join(root, j.path)
        tail = _ranked_tail(j.path, full, ranked)
        if tail == "":
            continue  # (checked again once the state's files are known)
        if tail is not None:
            full = os.path.join(root, *tail.split("/"))
        if "\ufffd" in j.path and not os.path.lexists(full):
            full = _by_decoded_names(full) or full
        elif "\\" in j.path and not os.path.lexists(full):
            # (a name as ``--text`` showed it, copied back: ``bad\udcff.py``, ``new\x0aline.py``)
            shown = _SHOWN_ESCAPE_RE.sub(lambda m: chr(int(m.group(1)[1:], 16)), full)
            full = shown if os.path.lexists(shown) else full
        real = fsafe.resolve(full)
        if real is None:
            raise RequestError(f"--judge {j.path}: cannot be resolved (a link that cannot be read)")
        if not fsafe.inside(real, root_real):
            raise RequestError(f"--judge {j.path}: path is outside the root {root}")
        ident = _identity(real)
        if ident is not None and ident in own:
            raise RequestError(f"--judge {j.path}: is the loop's own state file, not a file of the tree")
        if not os.path.isfile(real):
            raise RequestError(f"--judge {j.path}: {_not_a_file(real)}")
        # The file by its own path in the tree, not by a link's: a file judged through an
        # alias (``authdir/x.py`` for ``src/auth/x.py``, ``./loop/src/x.py``) is the one
        # file the ranking names, with one score.
        rel = os.path.relpath(real, root_real).replace(os.sep, "/")
        if rel in out and out[rel] != j.score:
            raise RequestError(f"--judge {j.path}: {rel} is judged twice, {out[rel]:g} and {j.score:g}; "
                               "give one score per file")
        out[rel] = j.score
    return out


# Files a judged path's ending may name before it is refused as ambiguous (listed).
AMBIGUOUS_SHOWN = 4


def _ranked_tail(path: str, full: str, ranked: Optional[Sequence[str]]) -> Optional[str]:
    """The ranked file a judged ``path`` names by its ending (:func:`resolve_judgements`):
    its path, None when ``path`` is to be read as written, "" to leave it for later."""
    if os.path.isabs(path) or os.path.lexists(full):
        return None
    parts = path.split("/")
    if not parts[-1] or any(p in (".", "..") for p in parts):
        return None
    parts = [p for p in parts if p]  # (``src//x.rs`` is ``src/x.rs``, as for the system)
    if ranked is None:
        return ""
    ending = "/".join(parts)
    found = sorted(r for r in ranked if r.endswith("/" + ending))
    if len(found) > 1:
        shown = ", ".join(found[:AMBIGUOUS_SHOWN]) + (", ..." if len(found) > AMBIGUOUS_SHOWN else "")
        raise RequestError(f"--judge {path}: no such file under the root, and {len(found)} ranked files end so "
                           f"({shown}); give the path from the root")
    return found[0] if found else None


def _by_decoded_names(path: str) -> Optional[str]:
    """``path`` with each part holding U+FFFD taken as the one name in its directory that
    reads so once its bytes that are not UTF-8 are replaced: a file name that is not
    UTF-8 is shown in JSON as lone surrogates (``\\udcff``), which most JSON readers
    (jq, JavaScript) turn into U+FFFD; the id they pass back still names the file.
    None when a part matches no name, or more than one."""
    head, parts = path, []
    while True:
        head, tail = os.path.split(head)
        if not tail:
            break
        parts.append(tail)
    out = head
    for part in reversed(parts):
        if "\ufffd" in part:
            try:
                names = [n for n in os.listdir(out)
                         if n.encode("utf-8", "surrogateescape").decode("utf-8", "replace") == part]
            except (OSError, UnicodeError):
                return None
            if len(names) != 1:
                return None
            part = names[0]
        out = os.path.join(out, part)
    return out


def _identity(path: str) -> Optional[tuple[int, int]]:
    """(device, inode) of a path, or None when it does not exist: the same file under
    any name, bind mount or link."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


