""".gitignore semantics, as git itself applies them (the DISPATCH stage's filter).

What this module reproduces (each rule checked against ``git check-ignore`` in
tests/test_ignore.py):

* Sources, strongest first: the ``.gitignore`` of the path's own directory, then
  each parent's up to the work-tree top, then ``$GIT_DIR/info/exclude``.  Within
  one source the last matching line wins; the first source with any match decides.
* Blank lines do nothing; ``#`` starts a comment (``\\#`` is a literal ``#``);
  trailing spaces are trimmed unless escaped (``\\ ``); a trailing ``\\r`` is dropped
  (CRLF files) and so is a UTF-8 BOM.
* ``!`` negates (``\\!`` is a literal ``!``).  A path under an excluded directory
  can never be re-included: :meth:`GitIgnore.check` reports the directory's
  pattern, and the walker (walk.py) prunes excluded directories.
* A ``/`` at the start or in the middle anchors a pattern to its file's directory;
  otherwise it matches the basename at any depth.  A trailing ``/`` matches
  directories only.
* ``*`` and ``?`` never match ``/``; ``[a-z]``, ``[!a]``/``[^a]`` and POSIX
  ``[[:alpha:]]`` classes work and never match ``/``; ``\\x`` is a literal ``x``.
  ``**/x`` matches x at any depth, ``x/**`` everything inside x, ``a/**/b`` zero
  or more directories (``a/**\\/b``, its slash escaped, one or more); any other
  ``**`` acts like ``*``.  A pattern git's
  wildmatch would abort on (an unclosed ``[``, an unknown ``[:class:]``, a
  trailing lone backslash) never matches anything.

Deliberately left out, with the reason:

* ``core.excludesFile`` (global config): reading git config means parsing
  include directives, ``~`` expansion and XDG defaults; a per-user file is also
  not part of the searched project, so results would differ between machines.
* ``core.ignoreCase``: matching is case-sensitive, git's default on Linux.
* A ``.gitignore`` that is itself a symlink is not read: git (since 2.32) opens
  in-tree ``.gitignore`` files without following symlinks.

Matching is on bytes, as in git: a name and a pattern are compared as their
UTF-8 bytes (``surrogateescape`` for names that are not UTF-8), so ``?`` is one
byte and ``[é]`` a class of two bytes, exactly where git agrees.

Every pattern is compiled once, when its file is read (no fnmatch).  A pattern
with at most one unbounded wildcard becomes part of its file's regular
expressions; one with more (``a*b*c*``, ``**/a/**/b``) would make a
backtracking regex take exponential time, so it is matched by a set-of-positions
automaton (:class:`LinearGlob`) whose time is linear in the name, as git's
wildmatch is in practice.  Literal patterns are looked up in a table.  Each
ignore file builds its tables once; a directory's rules are its own file on top
of its parent's, so 300 nested ``.gitignore`` files cost 300 builds, not 45,000.
The walk asks per directory (:meth:`IgnoreRules.in_directory`): an anchored line
whose literal start names another first directory (``docs/_build`` below ``django/``)
is not tried there, and a basename's answer is cached per source by name.
A match keeps the pattern that decided (file and line), so a skip can explain
itself.

What is read: ``.gitignore`` files, ``info/exclude``, a ``.git`` file and
``commondir`` -- only regular files (never a FIFO, socket or device, never
through a symlink, none larger than MAX_IGNORE_BYTES).  Of an ignore file at most
MAX_IGNORE_READ_BYTES are read, and at most MAX_IGNORE_PATTERNS patterns kept
(MAX_IGNORE_WILDCARD with a wildcard, MAX_IGNORE_LEADING_WILDCARD of them
starting with one, MAX_IGNORE_LINEAR with several): the lines
past a cap are not applied, with one line on stderr naming the file, so the
matching cost per name stays bounded.  A ``.git`` above the root owned
by another user is not a work tree here (git's "dubious ownership").  A ``gitdir:``
pointer and a ``commondir`` are followed only when they resolve inside the searched
root, and the root's ``info/exclude`` must too: nothing outside the tree is read.

Example::

    >>> from agentic_search_skill.ignore import parse_ignore_file
    >>> f = parse_ignore_file("*.log\\n!keep.log\\n", source=".gitignore", base="")
    >>> f.last_match("logs/a.log", is_dir=False).describe()
    '.gitignore:1:*.log'
    >>> f.last_match("keep.log", is_dir=False).negated
    True
"""
from __future__ import annotations

import functools
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple, Union

from hints import _say as notice  # (hints.py's own: one diagnostic line, best effort)
from . import fsafe

IGNORE_FILE_NAME = ".gitignore"  # the per-directory source git reads
GIT_DIR_NAME = ".git"  # marks a work-tree top; never descended into
_NEVER = r"(?!)"  # regex that matches nothing: what git's WM_ABORT_ALL amounts to
# git (2.39+) ignores a .gitignore larger than this (dir.c PATTERN_MAX_FILE_SIZE).
MAX_IGNORE_BYTES = 100 * 1024 * 1024
# What is read of one ignore file at most; the rest is cut (one line on stderr). Real
# ignore files are far smaller: the largest of the 14 projects behind the dev splits
# (django, sympy, pytest, zstd, tokio, grpc-go, dayjs, ...; pip, caddy, vite too) holds
# 92 lines, 1.6 KB.
MAX_IGNORE_READ_BYTES = 1024 * 1024
# Patterns kept of one ignore file: past them each name would be tried against more
# alternatives than any hand-written file holds (lines after the cut are not applied).
MAX_IGNORE_PATTERNS = 20_000
# Patterns with a wildcard kept per file: a name is tried against each regex alternative
# in turn, about 1 us each (10,000: 9 ms a name, the most one file may cost).
MAX_IGNORE_WILDCARD = 10_000
# Of those, patterns starting with a wildcard (``*.log``, ``*123a``): real files hold a
# few dozen; a file of thousands is generated, not written.
MAX_IGNORE_LEADING_WILDCARD = 1000
# Patterns with several wildcards (``*a*b*``) kept per file: each is a Python-level
# automaton run on every name (20,000 of them: 16 s on 50 files), so few are allowed.
MAX_IGNORE_LINEAR = 100
# A .git file ("gitdir: ...") or commondir is one short line; more is not one.
MAX_GIT_FILE_BYTES = 64 * 1024
# Unbounded wildcards a backtracking regex may hold; more go to the linear matcher.
MAX_REGEX_WILDCARDS = 1
# Alternatives per compiled regex: compiling grows faster than linearly with its size
# (100,000 in one: 5.6 s; in blocks of 1,000: under 3 s), matching does not care.
MAX_ALTERNATIVES = 1000
# Remembered automaton steps per linear glob (cleared when full: memory stays bounded).
MAX_LINEAR_MEMO = 20_000

# Token kinds of a translated glob: (kind, regex fragment, literal character or None).
_ONE = 0  # one character: a literal, '?' or a bracket class
_STAR = 1  # '*': any run of characters inside one path component
_ANY = 2  # a final '**': anything, '/' included
_DIRS = 3  # '**/': zero or more whole directories
_Token = Tuple[int, str, Optional[str]]

_POSIX_CLASSES = {
    # [:name:] -> the characters git's wildmatch accepts for it (ASCII, via ctype).
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v",
    "upper": "A-Z",
    "xdigit": "0-9a-fA-F",
}


class _Abort(ValueError):
    """A pattern git's wildmatch gives up on (it then never matches)."""


# --------------------------------------------------------------------------- #
# Translation: one glob (git wildmatch with WM_PATHNAME) -> one regex string.
# --------------------------------------------------------------------------- #

def translate_glob(pattern: str, git_prefix_quirk: bool = False) -> str:
    """Translate a wildmatch glob to a regex source for ``re.fullmatch``.

    ``*``/``?``/classes never match ``/``; a run of two or more stars that is
    bounded by ``/`` (or the pattern's ends) spans directories: ``**/`` is
    ``(?:.*/)?`` (zero or more directories) and a final ``**`` is ``.*``.
    Returns a regex that matches nothing when git's wildmatch would abort
    (unclosed ``[``, unknown ``[:class:]``, trailing lone backslash).
    Compile with ``re.DOTALL`` so that ``.*`` also spans newlines in names.

    ``git_prefix_quirk`` reproduces an edge of git for anchored patterns: git
    compares the literal prefix (up to the first ``*?[\\``) separately and
    wildmatches the rest as a new pattern, so a ``**`` right after that prefix
    counts as "at the start": ``foo**/bar`` matches ``foox/y/bar`` in git.

    >>> translate_glob("a/**/b")
    'a/(?:.*/)?b'
    """
    tokens = _tokens(pattern, git_prefix_quirk)
    return _NEVER if tokens is None else "".join(t[1] for t in tokens)


def _tokens(pattern: str, git_prefix_quirk: bool) -> Optional[Tuple[_Token, ...]]:
    """The glob as tokens, or None when git's wildmatch would abort on it."""
    try:
        return tuple(_translate_parts(pattern, git_prefix_quirk))
    except _Abort:
        return None


def _translate_parts(p: str, git_prefix_quirk: bool) -> List[_Token]:
    out: List[_Token] = []
    i, n = 0, len(p)
    first_special = next((k for k, ch in enumerate(p) if ch in "*?[\\"), n)
    while i < n:
        c = p[i]
        if c == "*":
            j = i
            while j < n and p[j] == "*":
                j += 1
            at_start = i == 0 or p[i - 1] == "/" or (git_prefix_quirk and i == first_special)
            if j - i >= 2 and at_start and (j == n or p[j] == "/" or p[j:j + 2] == "\\/"):
                if j == n:
                    out.append((_ANY, ".*", None))
                    i = j
                elif p[j] == "/":  # '**/' : zero or more whole directories
                    out.append((_DIRS, "(?:.*/)?", None))
                    i = j + 1
                else:  # '**\/': git spans directories but skips none (its shortcut needs a bare '/')
                    out += [(_ANY, ".*", None), (_ONE, "/", "/")]
                    i = j + 2
                continue
            out.append((_STAR, "[^/]*", None))
            i = j
        elif c == "?":
            out.append((_ONE, "[^/]", None))
            i += 1
        elif c == "[":
            rx, i = _translate_class(p, i)
            out.append((_ONE, rx, None))
        elif c == "\\":
            if i + 1 >= n:
                raise _Abort(p)  # wildmatch compares the NUL after '\' and fails
            out.append((_ONE, re.escape(p[i + 1]), p[i + 1]))
            i += 2
        else:
            out.append((_ONE, re.escape(c), c))
            i += 1
    return out


# --------------------------------------------------------------------------- #
# Matchers: a regex where backtracking is harmless, else a linear automaton.
# --------------------------------------------------------------------------- #

class LinearGlob:
    """A translated glob run as a set of token positions over the subject.

    Each character moves every live position at once (the way a Thompson NFA
    does), so a match costs one step per character whatever the stars: no
    backtracking, hence no exponential case.  Steps already taken are
    remembered (a lazily built DFA, bounded by MAX_LINEAR_MEMO).
    ``fullmatch`` answers like ``re.fullmatch`` of :func:`translate_glob`'s regex.
    """

    __slots__ = ("_kinds", "_preds", "_n", "_memo", "_start")

    def __init__(self, tokens: Sequence[_Token]) -> None:
        self._kinds = tuple(t[0] for t in tokens)
        self._preds = tuple(t[2] if t[2] is not None else re.compile(t[1], re.DOTALL) if t[0] == _ONE
                            else None for t in tokens)
        self._n = len(tokens)
        self._memo: Dict[Tuple[FrozenSet[int], str], FrozenSet[int]] = {}
        self._start = self._closure([0])

    def _closure(self, states: Sequence[int]) -> FrozenSet[int]:
        """The positions reachable without reading: past wildcards that may match nothing."""
        out = set()
        todo = list(states)
        kinds, n = self._kinds, self._n
        while todo:
            s = todo.pop()
            if s in out:
                continue
            out.add(s)
            if s < n and kinds[s] != _ONE:
                todo.append(s + 1)
        return frozenset(out)

    def _step(self, states: FrozenSet[int], ch: str) -> FrozenSet[int]:
        """The positions after reading ``ch``; position n + 1 + i is "inside the '**/' at i"."""
        nxt: List[int] = []
        kinds, preds, n = self._kinds, self._preds, self._n
        for s in states:
            if s == n:
                continue
            if s > n:
                nxt.append(s)
                if ch == "/":
                    nxt.append(s - n)  # (s - n - 1) + 1: past the '**/'
                continue
            kind = kinds[s]
            if kind == _ONE:
                pred = preds[s]
                if (ch == pred) if isinstance(pred, str) else pred.fullmatch(ch) is not None:  # type: ignore[union-attr]
                    nxt.append(s + 1)
            elif kind == _STAR:
                if ch != "/":
                    nxt.append(s)
            elif kind == _ANY:
                nxt.append(s)
            else:  # _DIRS: any characters, and a '/' may end the run
                nxt.append(n + 1 + s)
                if ch == "/":
                    nxt.append(s + 1)
        return self._closure(nxt)

    def fullmatch(self, subject: str) -> bool:
        """Whether the whole of ``subject`` matches."""
        states, memo = self._start, self._memo
        for ch in subject:
            key = (states, ch)
            nxt = memo.get(key)
            if nxt is None:
                if len(memo) >= MAX_LINEAR_MEMO:
                    memo.clear()
                nxt = memo[key] = self._step(states, ch)
            if not nxt:
                return False
            states = nxt
        return self._n in states


Matcher = Union["re.Pattern[str]", LinearGlob]  # both answer .fullmatch(subject)


def _risky(tokens: Sequence[_Token], basename: bool) -> bool:
    """More unbounded wildcards than a backtracking regex can afford.

    A final ``**`` matches the rest at once, and so does a final ``*`` on a
    basename (no ``/`` left to refuse): neither can make the regex backtrack.
    """
    wild = sum(1 for t in tokens if t[0] != _ONE)
    if tokens and (tokens[-1][0] == _ANY or (basename and tokens[-1][0] == _STAR)):
        wild -= 1
    return wild > MAX_REGEX_WILDCARDS


@functools.lru_cache(maxsize=4096)
def compile_glob(glob: str, git_prefix_quirk: bool = False, basename: bool = False) -> Matcher:
    """A matcher for a glob with ``.fullmatch(subject)``, as fast as is safe.

    ``basename``: the subject never holds a ``/`` (lets a final ``*`` stay a regex).
    The answer equals ``re.fullmatch(translate_glob(glob), subject, re.DOTALL)``.
    """
    tokens = _tokens(glob, git_prefix_quirk)
    if tokens is None:
        return re.compile(_NEVER)
    if _risky(tokens, basename):
        return LinearGlob(tokens)
    return re.compile("".join(t[1] for t in tokens), re.DOTALL)


def byte_view(text: str) -> str:
    """``text`` as its UTF-8 bytes, one character per byte (latin-1): git compares bytes.

    ASCII text is returned as is; names that are not UTF-8 (``surrogateescape``)
    turn back into their original bytes.
    """
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("latin-1")


def _translate_class(p: str, i: int) -> Tuple[str, int]:
    """Translate the bracket expression starting at ``p[i] == '['``.

    Mirrors wildmatch: ``!`` or ``^`` negates; the first member may be ``]``;
    ``\\`` escapes; ``a-z`` ranges (a reversed one matches only its first char);
    ``[:name:]`` POSIX classes; ``[:`` without ``:]`` is a literal ``[``.
    """
    n = len(p)
    i += 1
    negated = i < n and p[i] in "!^"
    if negated:
        i += 1
    items: List[str] = []
    has_slash = False
    prev: Optional[str] = None  # last single character, a possible range start
    first = True
    while True:
        if i >= n:
            raise _Abort(p)
        c = p[i]
        if c == "]" and not first:
            i += 1
            break
        first = False
        if c == "\\":
            if i + 1 >= n:
                raise _Abort(p)
            c = p[i + 1]
            i += 2
            items.append(re.escape(c))
            has_slash |= c == "/"
            prev = c
        elif c == "-" and prev is not None and i + 1 < n and p[i + 1] != "]":
            hi = p[i + 1]
            i += 2
            if hi == "\\":
                if i >= n:
                    raise _Abort(p)
                hi = p[i]
                i += 1
            # The range start stays in as a single char: git matches it even
            # when the range is reversed ('[z-a]' matches 'z').
            if prev <= hi:
                items.append(re.escape(prev) + "-" + re.escape(hi))
                has_slash |= prev <= "/" <= hi
            prev = None  # git resets prev_ch after a range
        elif c == "[" and i + 1 < n and p[i + 1] == ":":
            end = p.find("]", i + 2)
            if end < 0:
                raise _Abort(p)
            name = p[i + 2:end]
            if len(name) >= 1 and name.endswith(":"):
                cls = _POSIX_CLASSES.get(name[:-1])
                if cls is None:
                    raise _Abort(p)
                items.append(cls)
                has_slash |= name[:-1] in ("graph", "print", "punct")
                i = end + 1
                prev = None
            else:  # no ':]' before ']': a literal '['
                items.append(re.escape("["))
                prev = "["
                i += 1
        else:
            items.append(re.escape(c))
            has_slash |= c == "/"
            prev = c
            i += 1
    body = "".join(items)
    if negated:
        return "[^/" + body + "]", i
    if not body:
        return _NEVER, i
    if has_slash:  # a class never matches '/' under WM_PATHNAME
        return "(?!/)[" + body + "]", i
    return "[" + body + "]", i


# --------------------------------------------------------------------------- #
# Patterns and files of patterns.
# --------------------------------------------------------------------------- #

@dataclass(frozen=True)
class IgnorePattern:
    """One effective line of an ignore file.

    ``anchored`` patterns (a ``/`` at the start or middle) match the path
    relative to ``base``; the others match the basename at any depth.
    """

    source: str  # the ignore file, POSIX path relative to the work-tree top
    line: int  # 1-based line number in ``source``
    text: str  # the line as written (CR removed, trailing spaces kept)
    negated: bool  # '!' prefix: a match re-includes
    dir_only: bool  # trailing '/': matches directories only
    anchored: bool  # matched against the path below base, not the basename
    regex: str  # source of the translated glob (on the UTF-8 byte view), for re.fullmatch
    glob: str = ""  # the glob body as matched (byte view, no '!', '/' ends or base)

    def describe(self) -> str:
        """``source:line:text``, the way ``git check-ignore -v`` shows it."""
        return f"{self.source}:{self.line}:{self.text}"

    def matches(self, sub: str, is_dir: bool) -> bool:
        """Whether this pattern matches ``sub`` (a path relative to its base)."""
        if self.dir_only and not is_dir:
            return False
        sub = byte_view(sub)
        subject = sub if self.anchored else sub.rpartition("/")[2]
        return bool(self._matcher().fullmatch(subject))

    def _matcher(self) -> Matcher:
        return compile_glob(self.glob, self.anchored, not self.anchored)


def parse_pattern(line: str, source: str = "", lineno: int = 0) -> Optional[IgnorePattern]:
    """Parse one line of an ignore file; ``None`` for blanks and comments.

    >>> parse_pattern("/build/").anchored, parse_pattern("/build/").dir_only
    (True, True)
    """
    if line.endswith("\r"):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    text = line
    body = _trim_trailing_spaces(byte_view(line))
    negated = body.startswith("!")
    if negated:
        body = body[1:]
    dir_only = body.endswith("/")
    if dir_only:
        body = body[:-1]
    if not body:
        return None  # '!' or '/' alone: git keeps it, but it can never match
    anchored = "/" in body
    if body.startswith("/"):
        body = body[1:]
    return IgnorePattern(source, lineno, text, negated, dir_only, anchored,
                         translate_glob(body, git_prefix_quirk=anchored), body)


def _trim_trailing_spaces(line: str) -> str:
    """Drop trailing spaces (not tabs) unless escaped, like git's dir.c."""
    last_space = None
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == " ":
            if last_space is None:
                last_space = i
        elif c == "\\":
            i += 1
            if i >= n:
                return line
            last_space = None
        else:
            last_space = None
        i += 1
    return line if last_space is None else line[:last_space]


class _Table:
    """One source's patterns of one kind (basename or anchored; file or directory).

    Literal patterns sit in a dict, the others with at most one unbounded
    wildcard in alternations of up to MAX_ALTERNATIVES (latest line first, so the
    first alternative that matches is the deciding line), the rest in a list of
    linear matchers.
    """

    __slots__ = ("literals", "regex", "deciders", "more", "linear", "only_regex", "only_literals", "heads")

    def __init__(self, patterns: Sequence[IgnorePattern], basename: bool) -> None:
        self.literals: Dict[str, IgnorePattern] = {}
        alts: List[str] = []
        deciders: List[IgnorePattern] = []
        linear: List[Tuple[Matcher, IgnorePattern]] = []
        heads: List[str] = []
        for pat in reversed(patterns):  # last line first
            tokens = _tokens(pat.glob, pat.anchored)
            if tokens is None:
                continue
            head = ""
            for t in tokens:
                if t[2] is None:
                    break
                head += t[2]
            heads.append(head)
            if all(t[2] is not None for t in tokens):
                self.literals.setdefault("".join(t[2] for t in tokens), pat)  # type: ignore[misc]
            elif _risky(tokens, basename):
                linear.append((compile_glob(pat.glob, pat.anchored, basename), pat))
            else:
                alts.append("(" + "".join(t[1] for t in tokens) + ")")
                deciders.append(pat)
        blocks = [(re.compile("|".join(alts[k:k + MAX_ALTERNATIVES]), re.DOTALL),
                   tuple(deciders[k:k + MAX_ALTERNATIVES])) for k in range(0, len(alts), MAX_ALTERNATIVES)]
        self.regex, self.deciders = blocks[0] if blocks else (None, ())
        self.more = tuple(blocks[1:])  # older lines, in blocks, latest first
        self.linear = tuple(linear)
        self.only_regex = self.regex is not None and not self.literals and not self.linear and not self.more
        self.only_literals = self.regex is None and not self.linear
        # What a subject must begin with, by each line's literal start: the first
        # directories those starts name (``docs`` of ``docs/_build``) and the starts
        # within a first name (``do`` of ``do*/x``); None when a line starts with a
        # wildcard (it may match anywhere).
        self.heads: Optional[Tuple[FrozenSet[str], Tuple[str, ...]]] = None
        if all(heads):
            self.heads = (frozenset(h.partition("/")[0] for h in heads if "/" in h),
                          tuple(h for h in heads if "/" not in h))

    def may_match_below(self, sub_dir: str) -> bool:
        """False only when no line can match ``sub_dir`` (a directory's path below the
        table's base, ending in ``/``) + a name: a subject begins with its line's
        literal start, so the two agree up to the shorter one's end."""
        if self.heads is None or not sub_dir:
            return True
        first = sub_dir.partition("/")[0]
        dirs, stems = self.heads
        return first in dirs or any(first.startswith(h) for h in stems)

    def find(self, subject: str) -> Optional[IgnorePattern]:
        """The last line of this table matching ``subject``, or None."""
        if self.only_regex:  # the common case, one C call
            m = self.regex.fullmatch(subject)  # type: ignore[union-attr]
            return None if m is None else self.deciders[m.lastindex - 1]  # type: ignore[operator]
        best = self.literals.get(subject) if self.literals else None
        if self.regex is not None:
            for rx, deciders in ((self.regex, self.deciders),) + self.more:
                m = rx.fullmatch(subject)
                if m is not None:
                    pat = deciders[m.lastindex - 1]  # type: ignore[operator]
                    if best is None or pat.line > best.line:
                        best = pat
                    break  # the first block with a match holds the latest matching line
        for matcher, pat in self.linear:  # latest line first: the first hit is the last line
            if best is not None and pat.line < best.line:
                break
            if matcher.fullmatch(subject):
                return pat
        return best


_MISS = object()  # not in a cache (None is an answer: no line matches)


def _lookup(table: _Table, subject: str) -> Optional[IgnorePattern]:
    """``table.find(subject)``, its two common cases without the call."""
    if table.only_regex:
        m = table.regex.fullmatch(subject)  # type: ignore[union-attr]
        return None if m is None else table.deciders[m.lastindex - 1]  # type: ignore[operator]
    if table.only_literals:
        return table.literals.get(subject)
    return table.find(subject)


@dataclass(frozen=True)
class IgnoreFile:
    """The patterns of one source, relative to the directory ``base``.

    ``base`` is a POSIX path relative to the work-tree top ("" for the top).
    The matching tables are built once, here; :class:`IgnoreRules` asks each
    source in force in turn, strongest first.
    """

    source: str
    base: str
    patterns: Tuple[IgnorePattern, ...]
    # [basename, basename dir-only, anchored, anchored dir-only]: None when empty.  A
    # directory is asked of both tables of a kind, a file of the first: no pattern is
    # compiled twice.
    _tables: Tuple[Optional[_Table], ...] = field(default=(), repr=False, compare=False)
    _prefix: str = field(default="", repr=False, compare=False)  # byte view of base + "/"
    # [files, directories]: name -> the latest basename line matching it. A basename's
    # answer is the same in every directory, and trees repeat names (__init__.py,
    # LC_MESSAGES, mod.rs).
    _names: Tuple[Dict[str, Optional[IgnorePattern]], ...] = field(
        default_factory=lambda: ({}, {}), repr=False, compare=False)
    _below: Dict[str, Optional[Tuple[Tuple[_Table, ...], Tuple[_Table, ...]]]] = field(
        default_factory=dict, repr=False, compare=False)  # anchored_below's answers
    _has_anchored: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        tables: List[Optional[_Table]] = []
        for anchored in (False, True):
            for dir_only in (False, True):
                chosen = [p for p in self.patterns if p.anchored == anchored and p.dir_only == dir_only]
                tables.append(_Table(chosen, not anchored) if chosen else None)
        object.__setattr__(self, "_tables", tuple(tables))
        object.__setattr__(self, "_has_anchored", tables[2] is not None or tables[3] is not None)
        object.__setattr__(self, "_prefix", byte_view(self.base) + "/" if self.base else "")

    def basename_match(self, name: str, is_dir: bool) -> Optional[IgnorePattern]:
        """The latest basename line matching ``name`` (byte view), or None; cached."""
        cache = self._names[is_dir]
        best = cache.get(name, _MISS)
        if best is not _MISS:
            return best  # type: ignore[return-value]
        best = None
        for k in ((0, 1) if is_dir else (0,)):
            table = self._tables[k]
            if table is not None:
                found = _lookup(table, name)
                if found is not None and (best is None or found.line > best.line):
                    best = found
        cache[name] = best
        return best

    def anchored_below(self, first: str) -> Optional[Tuple[Tuple[_Table, ...], Tuple[_Table, ...]]]:
        """The anchored tables (for a file, for a directory) that may match below a
        directory whose path under ``base`` begins with the name ``first`` (``""``: base
        itself), None when neither may; cached by that name."""
        try:
            return self._below[first]
        except KeyError:
            pass
        sub_dir = first + "/" if first else ""
        tables = self._tables
        for_file = tuple(t for t in (tables[2],) if t is not None and t.may_match_below(sub_dir))
        for_dir = for_file + tuple(t for t in (tables[3],) if t is not None and t.may_match_below(sub_dir))
        found = (for_file, for_dir) if for_dir else None
        self._below[first] = found
        return found

    def last_match(self, rel: str, is_dir: bool) -> Optional[IgnorePattern]:
        """The last pattern matching ``rel`` (relative to the work-tree top), or None.

        ``rel`` must lie below ``base``; the caller guarantees it. One source alone
        is the simplest stack of rules, so this is :meth:`IgnoreRules.match` on it.
        """
        return IgnoreRules((self,)).match(rel, is_dir)


def parse_ignore_file(text: str, source: str, base: str) -> IgnoreFile:
    """Parse the text of an ignore file whose patterns are relative to ``base``
    (bounded: see :func:`parse_bounded`)."""
    return parse_bounded(text, source, base)[0]


def parse_bounded(text: str, source: str, base: str) -> Tuple[IgnoreFile, Optional[str]]:
    """The ignore file, and where and why it was cut (None when whole): the lines from the
    one that would exceed MAX_IGNORE_PATTERNS, MAX_IGNORE_WILDCARD (of which
    MAX_IGNORE_LEADING_WILDCARD start with one) or MAX_IGNORE_LINEAR on are dropped, so the matching cost per name stays bounded."""
    if text.startswith("\ufeff"):
        text = text[1:]
    patterns = []
    linear = wild = leading = 0
    for lineno, line in enumerate(text.split("\n"), 1):
        pat = parse_pattern(line, source, lineno)
        if pat is None:
            continue
        if len(patterns) >= MAX_IGNORE_PATTERNS:
            return IgnoreFile(source, base, tuple(patterns)), f"cut at line {lineno}: more than {MAX_IGNORE_PATTERNS} patterns"
        tokens = _tokens(pat.glob, pat.anchored)
        if tokens is not None and _risky(tokens, not pat.anchored):
            linear += 1
            if linear > MAX_IGNORE_LINEAR:
                return IgnoreFile(source, base, tuple(patterns)), (
                    f"cut at line {lineno}: more than {MAX_IGNORE_LINEAR} patterns with several wildcards")
        elif tokens is not None and any(t[2] is None for t in tokens):
            wild += 1
            leading += tokens[0][2] is None
            if wild > MAX_IGNORE_WILDCARD or leading > MAX_IGNORE_LEADING_WILDCARD:
                what = "with a wildcard" if wild > MAX_IGNORE_WILDCARD else "starting with a wildcard"
                cap = MAX_IGNORE_WILDCARD if wild > MAX_IGNORE_WILDCARD else MAX_IGNORE_LEADING_WILDCARD
                return IgnoreFile(source, base, tuple(patterns)), f"cut at line {lineno}: more than {cap} patterns {what}"
        patterns.append(pat)
    return IgnoreFile(source, base, tuple(patterns)), None


def read_ignore_file(path: str, source: str, base: str) -> Optional[IgnoreFile]:
    """Read and parse an ignore file; ``None`` if absent, a symlink, not a regular
    file, too large or unreadable (see :func:`load_ignore_file`)."""
    return load_ignore_file(path, source, base)[0]


def load_ignore_file(path: str, source: str, base: str,
                     expect: Optional[Tuple[int, int]] = None) -> Tuple[Optional[IgnoreFile], Optional[str]]:
    """Read and parse an ignore file: (the file or None, why it was refused or None).

    Absent, unreadable and symlinked files are silently absent (git does not
    follow an in-tree .gitignore symlink); a FIFO, socket or device is never
    opened for reading and one larger than MAX_IGNORE_BYTES is never read --
    those two come back with a reason, for the walk to count.  A file cut at a cap
    (:func:`parse_bounded`, MAX_IGNORE_READ_BYTES) comes back with what was kept and
    the reason, said once on stderr.
    Bytes are decoded as UTF-8 with ``surrogateescape``, the way Python decodes
    file names, so non-UTF-8 patterns still match the names they were written for.
    ``expect``: the (device, inode) the walk listed; another file at the path now (a
    folder above it swapped for a link) is not read.
    """
    try:
        st = os.lstat(path)
    except OSError:
        return None, None
    if stat.S_ISLNK(st.st_mode):
        return None, None
    if expect is not None and fsafe.identity(st) != expect:
        return None, "not the file the walk listed (replaced meanwhile): not read"
    if not stat.S_ISREG(st.st_mode):
        return None, "not a regular file (fifo, socket or device): not read"
    if st.st_size > MAX_IGNORE_BYTES:
        return None, f"{st.st_size} bytes > {MAX_IGNORE_BYTES}: not read (as git)"
    try:
        data, _ = fsafe.read_checked(path, expect=fsafe.identity(st), max_bytes=MAX_IGNORE_READ_BYTES, head=True)
    except fsafe.UnsafeFile as exc:
        return None, f"{exc.strerror}: not read"
    except OSError:
        return None, None
    cut = None
    if len(data) > MAX_IGNORE_READ_BYTES:  # keep whole lines only
        data = data[:data.rfind(b"\n", 0, MAX_IGNORE_READ_BYTES) + 1]
        cut = f"cut after {MAX_IGNORE_READ_BYTES} bytes"
    found, cut_lines = parse_bounded(data.decode("utf-8", "surrogateescape"), source, base)
    cut = cut_lines or cut
    if cut is not None:
        _warn_cut(path, cut)
    return found, cut


_cut_warned: set = set()  # ignore files already reported as cut (one line per file and process)


def _warn_cut(path: str, why: str) -> None:
    """One line on stderr: an ignore file was cut, the lines after the cut are not applied."""
    if path in _cut_warned:
        return
    _cut_warned.add(path)
    notice(f"retrieve_loop.py: ignore file {path}: {why}; the rest is not applied")


# --------------------------------------------------------------------------- #
# A stack of sources, and the lookup that git does.
# --------------------------------------------------------------------------- #

@dataclass(frozen=True)
class IgnoreMatch:
    """The pattern that decided about ``path``; ``ignored`` is False for a ``!`` line."""

    path: str
    pattern: IgnorePattern

    @property
    def ignored(self) -> bool:
        """True when the deciding pattern excludes (is not a negation)."""
        return not self.pattern.negated

    def explain(self) -> str:
        """One line: which file and line decided, as ``check-ignore -v`` prints it."""
        return f"{self.pattern.describe()}\t{self.path}"


@dataclass(frozen=True)
class IgnoreRules:
    """The sources in force inside one directory, strongest first.

    The walker extends the rules with each directory's ``.gitignore`` as it
    descends (:meth:`child`, which costs a tuple, not a rebuild: each source
    compiled its own tables when read); info/exclude stays last, as in git.  A
    lookup asks each source in turn and the first one with a match decides.
    """

    files: Tuple[IgnoreFile, ...] = ()
    # Set inside an ignored directory the walk entered because git tracks files in it:
    # the pattern that ignores the directory, which ignores every untracked path below
    # (no ``!`` line re-includes a path whose directory is excluded).
    below: Optional[IgnorePattern] = None

    def child(self, ignore_file: Optional[IgnoreFile]) -> "IgnoreRules":
        """Rules for a subdirectory that has ``ignore_file`` (or none)."""
        if ignore_file is None or not ignore_file.patterns:
            return self
        return IgnoreRules((ignore_file,) + self.files, self.below)

    def inside(self, pattern: IgnorePattern) -> "IgnoreRules":
        """Rules below a directory ``pattern`` ignores (see ``below``)."""
        return IgnoreRules(self.files, pattern)

    def match(self, rel: str, is_dir: bool) -> Optional[IgnorePattern]:
        """The deciding pattern for ``rel`` (relative to the work-tree top), or None.

        Does not look at ancestors: callers walk top-down and prune excluded
        directories (see :meth:`GitIgnore.check` for a standalone query).
        """
        if not rel.isascii():
            rel = byte_view(rel)
        name = rel.rpartition("/")[2]
        for ignore_file in self.files:  # inlined: this runs for every entry of the walk
            tables = ignore_file._tables
            prefix = ignore_file._prefix
            sub = rel if not prefix else rel[len(prefix):] if rel.startswith(prefix) else None
            best = None
            for k in ((0, 1) if is_dir else (0,)):
                for table, subject in ((tables[k], name), (tables[2 + k], sub)):
                    if table is None or subject is None:
                        continue
                    if table.only_regex:  # _Table.find's two common cases, without the call
                        m = table.regex.fullmatch(subject)
                        found = None if m is None else table.deciders[m.lastindex - 1]
                    elif table.only_literals:
                        found = table.literals.get(subject)
                    else:
                        found = table.find(subject)
                    if found is not None and (best is None or found.line > best.line):
                        best = found
            if best is not None:
                return best
        return None


    def in_directory(self, dir_prefix: str) -> Callable[[str, bool], Optional[IgnorePattern]]:
        """``lambda name, is_dir: self.match(dir_prefix + name, is_dir)`` for the entries
        of one directory (``dir_prefix`` is its path from the work-tree top and ``/``,
        or ``""``), with the work that is the same for every entry done once: each
        source's part of the directory's path and the anchored tables that may match
        below it; basename answers come from each source's cache by name."""
        d = byte_view(dir_prefix)
        anchored = {}
        for f in self.files:
            if not f._has_anchored:
                continue
            # A name holds no '/', so an entry lies below a source's base exactly when
            # its directory does.
            if f._prefix and not d.startswith(f._prefix):
                continue
            sub_dir = d[len(f._prefix):]
            tables = f.anchored_below(sub_dir.partition("/")[0])
            if tables is not None:
                anchored[id(f)] = (sub_dir,) + tables
        if not anchored:
            return self._by_name
        plan = tuple((f, anchored.get(id(f))) for f in self.files)

        def match(name: str, is_dir: bool) -> Optional[IgnorePattern]:
            if not name.isascii():
                name = byte_view(name)
            for f, here in plan:
                best = f.basename_match(name, is_dir)
                if here is not None:
                    sub = here[0] + name
                    for table in here[2] if is_dir else here[1]:
                        found = _lookup(table, sub)
                        if found is not None and (best is None or found.line > best.line):
                            best = found
                if best is not None:
                    return best
            return None

        return match

    def _by_name(self, name: str, is_dir: bool) -> Optional[IgnorePattern]:
        """:meth:`match` in a directory where no anchored line can match."""
        if not name.isascii():
            name = byte_view(name)
        for f in self.files:
            best = f.basename_match(name, is_dir)
            if best is not None:
                return best
        return None


def _later(a: Optional[IgnorePattern], b: Optional[IgnorePattern]) -> Optional[IgnorePattern]:
    """The later line of two of one source (either may be None)."""
    if a is None:
        return b
    if b is None or b.line < a.line:
        return a
    return b


def find_work_tree_top(root: str) -> Optional[str]:
    """The nearest directory at or above ``root`` that holds a trusted ``.git`` entry.

    The search stops at the first ``.git`` found, as git's does.  Like git
    ("detected dubious ownership") it refuses a repository that belongs to
    someone else: a ``.git`` (and the git directory a ``gitdir:`` file names)
    must be owned by the caller -- or, for the root's own ``.git``, by root.
    A refused one means no work tree: only the tree's own .gitignore files apply.
    """
    real = cur = fsafe.resolved(root)
    while True:
        dot_git = os.path.join(cur, GIT_DIR_NAME)
        if os.path.lexists(dot_git):
            return cur if _owned_well(dot_git, at_root=cur == real) else None
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def _owned_well(dot_git: str, at_root: bool) -> bool:
    """Whether a ``.git`` entry (and a gitfile's git directory) belongs to the caller."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:  # no owners to compare (Windows)
        return True
    allowed = {geteuid(), 0} if at_root else {geteuid()}
    try:
        if os.lstat(dot_git).st_uid not in allowed:
            return False
    except OSError:
        return False
    top = os.path.dirname(dot_git)
    git_dir = _git_dir(top, top if at_root else None, common=False)
    if git_dir is None or git_dir == dot_git:
        return True
    try:
        return os.stat(git_dir).st_uid in allowed
    except OSError:
        return True  # a gitfile pointing nowhere: nothing of it is read


def _small_text(path: str) -> Optional[str]:
    """A short regular file's text (a .git file, commondir), or None: never a FIFO or device."""
    try:
        data, _ = fsafe.read_checked(path, max_bytes=MAX_GIT_FILE_BYTES, pre_lstat=True)
    except OSError:
        return None
    return data.decode("utf-8", "replace")


def _within(path: str, root_real: str) -> bool:
    """Whether ``path``, resolved, is ``root_real`` or below it."""
    real = fsafe.resolve(path)
    return real is not None and fsafe.inside(real, root_real)


def _git_dir(top: str, root_real: Optional[str], common: bool = True) -> Optional[str]:
    """The git directory of the work tree at ``top`` (a ``.git`` dir or ``gitdir:`` file).

    With ``common``, a linked worktree's common directory (where info/exclude is).
    A ``gitdir:`` pointer (and a ``commondir``) is followed only when it resolves inside
    ``root_real`` (the searched root; None: never): nothing outside the tree is read.
    """
    dot_git = os.path.join(top, GIT_DIR_NAME)
    try:
        st = os.lstat(dot_git)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return dot_git
    text = _small_text(dot_git)
    first = text.split("\n", 1)[0].strip() if text is not None else ""
    if not first.startswith("gitdir:") or root_real is None:
        return None
    git_dir = os.path.join(top, first[len("gitdir:"):].strip())
    if not _within(git_dir, root_real):
        return None
    if not common:
        return git_dir
    # A linked worktree keeps info/exclude in the common directory.
    shared = _small_text(os.path.join(git_dir, "commondir"))
    if shared is None:
        return git_dir
    common_dir = os.path.normpath(os.path.join(git_dir, shared.strip()))
    return common_dir if _within(common_dir, root_real) else None


def _work_tree_rules(top: str, root_real: str, bounded: bool) -> Tuple[IgnoreRules, Optional[str]]:
    """The rules a work tree's git directory adds at its ``top`` (its ``info/exclude``)
    and the git directory whose ``index`` lists what it tracks (a linked worktree's own,
    not the common one). With ``bounded`` (the tree's top is the searched root, or lies
    inside it) each is read only when it resolves inside ``root_real``: a symlinked
    ``.git/info`` is not followed out."""
    rules = IgnoreRules()
    common = _git_dir(top, root_real)
    exclude = None if common is None else os.path.join(common, "info", "exclude")
    if exclude is not None and (not bounded or _within(exclude, root_real)):
        rules = rules.child(read_ignore_file(exclude, f"{GIT_DIR_NAME}/info/exclude", ""))
    own = _git_dir(top, root_real, common=False)
    if own is not None and bounded and not _within(os.path.join(own, "index"), root_real):
        own = None
    return rules, own


def nested_rules(top: str, root_real: str) -> Tuple[IgnoreRules, Optional[str]]:
    """A work tree of its own inside the searched root (a submodule, a nested clone):
    the rules in force at its top (its ``info/exclude``, none of the enclosing tree's) and
    the git directory whose index lists what it tracks, each read only from inside
    ``root_real``."""
    return _work_tree_rules(top, root_real, bounded=True)


def root_rules(root: str) -> Tuple[IgnoreRules, str]:
    """Rules in force at ``root`` before its own ``.gitignore``, and its prefix
    (:func:`root_scope` without the index)."""
    rules, prefix, _index = root_scope(root)
    return rules, prefix


def root_scope(root: str) -> Tuple[IgnoreRules, str, Optional[str]]:
    """Rules in force at ``root`` before its own ``.gitignore``, its prefix, and the git
    directory whose index lists what the enclosing work tree tracks (None: none).

    When ``root`` lies inside a work tree (a ``.git`` at or above it), the
    work tree's ``info/exclude`` and the ``.gitignore`` files of the
    directories above ``root`` apply, as they would for git.  The prefix is
    ``root`` relative to the work-tree top ("" when root is the top or no work
    tree encloses it); paths given to :meth:`IgnoreRules.match` carry it.
    ``root`` itself is never treated as ignored: it was named explicitly.
    """
    real = fsafe.resolved(root)
    top = find_work_tree_top(real)
    if top is None:
        return IgnoreRules(), "", None
    # (At the root, info/exclude and the index must resolve inside it.)
    rules, index_dir = _work_tree_rules(top, real, bounded=top == real)
    prefix = os.path.relpath(real, top).replace(os.sep, "/")
    if prefix == ".":
        return rules, "", index_dir
    parts = prefix.split("/")
    for depth in range(len(parts)):
        base = "/".join(parts[:depth])
        src = f"{base}/{IGNORE_FILE_NAME}" if base else IGNORE_FILE_NAME
        rules = rules.child(read_ignore_file(os.path.join(top, *parts[:depth], IGNORE_FILE_NAME), src, base))
    return rules, prefix, index_dir


class GitIgnore:
    """Standalone ``check-ignore`` for paths under a root (reads files lazily).

    >>> GitIgnore("/some/repo").check("build/out.o")  # doctest: +SKIP
    IgnoreMatch(path='build/out.o', pattern=IgnorePattern(source='.gitignore', ...))
    """

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root)
        self._base_rules, self._prefix = root_rules(self.root)
        self._dir_rules: Dict[str, IgnoreRules] = {}

    def _rules_in(self, dir_rel: str) -> IgnoreRules:
        """Rules that apply to entries of ``dir_rel`` (relative to root)."""
        cached = self._dir_rules.get(dir_rel)
        if cached is not None:
            return cached
        if dir_rel:
            parent = dir_rel.rpartition("/")[0]
            rules = self._rules_in(parent)
        else:
            rules = self._base_rules
        base = self._top_rel(dir_rel)
        src = f"{base}/{IGNORE_FILE_NAME}" if base else IGNORE_FILE_NAME
        path = os.path.join(self.root, *([p for p in dir_rel.split("/")] if dir_rel else []), IGNORE_FILE_NAME)
        rules = rules.child(read_ignore_file(path, src, base))
        self._dir_rules[dir_rel] = rules
        return rules

    def _top_rel(self, rel: str) -> str:
        if not self._prefix:
            return rel
        return f"{self._prefix}/{rel}" if rel else self._prefix

    def check(self, rel: str, is_dir: Optional[bool] = None) -> Optional[IgnoreMatch]:
        """The match deciding about ``rel`` (POSIX, relative to root), or None.

        An excluded ancestor directory decides for everything below it (git
        never re-includes there).  ``is_dir`` defaults to what is on disk.
        A returned match with ``ignored == False`` came from a ``!`` line.
        """
        rel = rel.strip("/")
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            dir_rel = "/".join(parts[:depth])
            pat = self._rules_in("/".join(parts[:depth - 1])).match(self._top_rel(dir_rel), True)
            if pat is not None and not pat.negated:
                return IgnoreMatch(rel, pat)
        if is_dir is None:
            is_dir = os.path.isdir(os.path.join(self.root, *parts)) and not os.path.islink(
                os.path.join(self.root, *parts))
        parent = self._top_rel("/".join(parts[:-1]))
        pat = self._rules_in("/".join(parts[:-1])).in_directory(parent + "/" if parent else "")(parts[-1], is_dir)
        return IgnoreMatch(rel, pat) if pat is not None else None

    def is_ignored(self, rel: str, is_dir: Optional[bool] = None) -> bool:
        """True when git would ignore ``rel``."""
        found = self.check(rel, is_dir)
        return found is not None and found.ignored
