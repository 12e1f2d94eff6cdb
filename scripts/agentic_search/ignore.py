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
  or more directories; any other ``**`` acts like ``*``.  A pattern git's
  wildmatch would abort on (an unclosed ``[``, an unknown ``[:class:]``, a
  trailing lone backslash) never matches anything.

Deliberately left out, with the reason:

* ``core.excludesFile`` (global config): reading git config means parsing
  include directives, ``~`` expansion and XDG defaults; a per-user file is also
  not part of the searched project, so results would differ between machines.
* ``core.ignoreCase``: matching is case-sensitive, git's default on Linux.
* A ``.gitignore`` that is itself a symlink is not read: git (since 2.32) opens
  in-tree ``.gitignore`` files without following symlinks.

Every pattern is translated to a Python regular expression once (no fnmatch),
and a match keeps the pattern that decided (file and line), so a skip can
explain itself.

Example::

    >>> from agentic_search.ignore import parse_ignore_file
    >>> f = parse_ignore_file("*.log\\n!keep.log\\n", source=".gitignore", base="")
    >>> f.last_match("logs/a.log", is_dir=False).describe()
    '.gitignore:1:*.log'
    >>> f.last_match("keep.log", is_dir=False).negated
    True
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

IGNORE_FILE_NAME = ".gitignore"  # the per-directory source git reads
GIT_DIR_NAME = ".git"  # marks a work-tree top; never descended into
_NEVER = r"(?!)"  # regex that matches nothing: what git's WM_ABORT_ALL amounts to

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
    try:
        return "".join(_translate_parts(pattern, git_prefix_quirk))
    except _Abort:
        return _NEVER


def _translate_parts(p: str, git_prefix_quirk: bool) -> List[str]:
    out: List[str] = []
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
                    out.append(".*")
                    i = j
                else:  # '**/' : zero or more whole directories
                    out.append("(?:.*/)?")
                    i = j + (1 if p[j] == "/" else 2)
                continue
            out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            rx, i = _translate_class(p, i)
            out.append(rx)
        elif c == "\\":
            if i + 1 >= n:
                raise _Abort(p)  # wildmatch compares the NUL after '\' and fails
            out.append(re.escape(p[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return out


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
    regex: str  # source of the translated glob, for re.fullmatch

    def describe(self) -> str:
        """``source:line:text``, the way ``git check-ignore -v`` shows it."""
        return f"{self.source}:{self.line}:{self.text}"

    def matches(self, sub: str, is_dir: bool) -> bool:
        """Whether this pattern matches ``sub`` (a path relative to its base)."""
        if self.dir_only and not is_dir:
            return False
        subject = sub if self.anchored else sub.rpartition("/")[2]
        return _compile(self.regex).fullmatch(subject) is not None


_REGEX_CACHE: Dict[str, "re.Pattern[str]"] = {}


def _compile(rx: str) -> "re.Pattern[str]":
    compiled = _REGEX_CACHE.get(rx)
    if compiled is None:
        compiled = _REGEX_CACHE[rx] = re.compile(rx, re.DOTALL)
    return compiled


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
    body = _trim_trailing_spaces(line)
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
                         translate_glob(body, git_prefix_quirk=anchored))


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


@dataclass(frozen=True)
class IgnoreFile:
    """The patterns of one source, relative to the directory ``base``.

    ``base`` is a POSIX path relative to the work-tree top ("" for the top).
    Matching is :class:`IgnoreRules`' job: it merges the patterns of every source
    in force into a few alternations, latest line first.
    """

    source: str
    base: str
    patterns: Tuple[IgnorePattern, ...]

    def last_match(self, rel: str, is_dir: bool) -> Optional[IgnorePattern]:
        """The last pattern matching ``rel`` (relative to the work-tree top), or None.

        ``rel`` must lie below ``base``; the caller guarantees it. One source alone
        is the simplest stack of rules, so this is :meth:`IgnoreRules.match` on it.
        """
        return IgnoreRules((self,)).match(rel, is_dir)


def parse_ignore_file(text: str, source: str, base: str) -> IgnoreFile:
    """Parse the text of an ignore file whose patterns are relative to ``base``."""
    if text.startswith("\ufeff"):
        text = text[1:]
    patterns = []
    for lineno, line in enumerate(text.split("\n"), 1):
        pat = parse_pattern(line, source, lineno)
        if pat is not None:
            patterns.append(pat)
    return IgnoreFile(source, base, tuple(patterns))


def read_ignore_file(path: str, source: str, base: str) -> Optional[IgnoreFile]:
    """Read and parse an ignore file; ``None`` if absent, a symlink or unreadable.

    Bytes are decoded as UTF-8 with ``surrogateescape``, the way Python decodes
    file names, so non-UTF-8 patterns still match the names they were written for.
    """
    try:
        if os.path.islink(path):
            return None
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return parse_ignore_file(data.decode("utf-8", "surrogateescape"), source, base)


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
    descends (:meth:`child`); info/exclude stays last, as in git.  All
    patterns of all sources are merged into two alternations per entry kind
    (basename patterns; anchored patterns prefixed with their base), ordered
    strongest first, so one lookup costs two ``fullmatch`` calls however deep
    the stack of .gitignore files is.
    """

    files: Tuple[IgnoreFile, ...] = ()
    _tables: Tuple[Tuple[Optional["re.Pattern[str]"], Tuple[IgnorePattern, ...]], ...] = field(
        default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        tables = []
        for anchored in (False, True):
            for is_dir in (False, True):
                alts: List[str] = []
                deciders: List[IgnorePattern] = []
                for ignore_file in self.files:  # strongest source first
                    prefix = re.escape(ignore_file.base + "/") if ignore_file.base else ""
                    for pat in reversed(ignore_file.patterns):  # last line first
                        if pat.anchored != anchored or pat.regex == _NEVER:
                            continue
                        if pat.dir_only and not is_dir:
                            continue
                        alts.append("(" + (prefix + pat.regex if anchored else pat.regex) + ")")
                        deciders.append(pat)
                rx = re.compile("|".join(alts), re.DOTALL) if alts else None
                tables.append((rx, tuple(deciders)))
        object.__setattr__(self, "_tables", tuple(tables))

    def child(self, ignore_file: Optional[IgnoreFile]) -> "IgnoreRules":
        """Rules for a subdirectory that has ``ignore_file`` (or none)."""
        if ignore_file is None or not ignore_file.patterns:
            return self
        return IgnoreRules((ignore_file,) + self.files)

    def match(self, rel: str, is_dir: bool) -> Optional[IgnorePattern]:
        """The deciding pattern for ``rel`` (relative to the work-tree top), or None.

        Does not look at ancestors: callers walk top-down and prune excluded
        directories (see :meth:`GitIgnore.check` for a standalone query).
        """
        tables = self._tables
        if not tables:
            return None
        d = 1 if is_dir else 0
        hit = -1
        rx, deciders = tables[d]
        if rx is not None:
            m = rx.fullmatch(rel.rpartition("/")[2])
            if m is not None:
                hit = m.lastindex - 1
        rx2, deciders2 = tables[2 + d]
        if rx2 is not None:
            m = rx2.fullmatch(rel)
            if m is not None:
                other = deciders2[m.lastindex - 1]
                if hit < 0 or self._rank(other) < self._rank(deciders[hit]):
                    return other
        return deciders[hit] if hit >= 0 else None

    def _rank(self, pat: IgnorePattern) -> Tuple[int, int]:
        """Strength of a pattern: (source position, -line); smaller is stronger."""
        for k, ignore_file in enumerate(self.files):
            if ignore_file.source == pat.source:
                return (k, -pat.line)
        return (len(self.files), 0)


def find_work_tree_top(root: str) -> Optional[str]:
    """The nearest directory at or above ``root`` that holds a ``.git`` entry."""
    cur = os.path.realpath(root)
    while True:
        if os.path.lexists(os.path.join(cur, GIT_DIR_NAME)):
            return cur
        parent = os.path.dirname(cur)
        if parent == cur:
            return None
        cur = parent


def _git_dir(top: str) -> Optional[str]:
    """The git directory of the work tree at ``top`` (a ``.git`` dir or ``gitdir:`` file)."""
    dot_git = os.path.join(top, GIT_DIR_NAME)
    if os.path.isdir(dot_git):
        return dot_git
    try:
        with open(dot_git, "r", encoding="utf-8", errors="replace") as fh:
            first = fh.readline().strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = os.path.join(top, first[len("gitdir:"):].strip())
    # A linked worktree keeps info/exclude in the common directory.
    try:
        with open(os.path.join(git_dir, "commondir"), "r", encoding="utf-8") as fh:
            return os.path.normpath(os.path.join(git_dir, fh.read().strip()))
    except OSError:
        return git_dir


def root_rules(root: str) -> Tuple[IgnoreRules, str]:
    """Rules in force at ``root`` before its own ``.gitignore``, and its prefix.

    When ``root`` lies inside a work tree (a ``.git`` at or above it), the
    work tree's ``info/exclude`` and the ``.gitignore`` files of the
    directories above ``root`` apply, as they would for git.  The prefix is
    ``root`` relative to the work-tree top ("" when root is the top or no work
    tree encloses it); paths given to :meth:`IgnoreRules.match` carry it.
    ``root`` itself is never treated as ignored: it was named explicitly.
    """
    real = os.path.realpath(root)
    top = find_work_tree_top(real)
    rules = IgnoreRules()
    if top is None:
        return rules, ""
    git_dir = _git_dir(top)
    if git_dir is not None:
        exclude = read_ignore_file(os.path.join(git_dir, "info", "exclude"),
                                   f"{GIT_DIR_NAME}/info/exclude", "")
        rules = rules.child(exclude)
    prefix = os.path.relpath(real, top).replace(os.sep, "/")
    if prefix == ".":
        return rules, ""
    parts = prefix.split("/")
    for depth in range(len(parts)):
        base = "/".join(parts[:depth])
        src = f"{base}/{IGNORE_FILE_NAME}" if base else IGNORE_FILE_NAME
        rules = rules.child(read_ignore_file(os.path.join(top, *parts[:depth], IGNORE_FILE_NAME), src, base))
    return rules, prefix


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
        pat = self._rules_in("/".join(parts[:-1])).match(self._top_rel(rel), is_dir)
        return IgnoreMatch(rel, pat) if pat is not None else None

    def is_ignored(self, rel: str, is_dir: Optional[bool] = None) -> bool:
        """True when git would ignore ``rel``."""
        found = self.check(rel, is_dir)
        return found is not None and found.ignored


def explain_rules(rules: IgnoreRules) -> Sequence[str]:
    """Every pattern in force, strongest source first (for debugging output)."""
    return tuple(p.describe() for f in rules.files for p in reversed(f.patterns))
