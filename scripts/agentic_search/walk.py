"""DISPATCH: the candidate files of a tree, each skip counted with its reason.

The walk decides about every directory entry in this order (the first step
that applies wins, and names the reason counted in ``WalkResult.skipped``):

1. ``skip_path``  -- the tool's own files (state file, cache dir), given as
   absolute paths; compared by real path, so they are skipped even when
   reached through a symlink.
2. ``hidden``     -- a name starting with ``.`` (this covers ``.git``).  The
   directory's ``.gitignore`` is still read.
3. ``ignored``    -- .gitignore / info/exclude say so (ignore.py); an ignored
   directory is pruned, so nothing below it can be re-included, as in git.
4. ``excluded``   -- an ``excludes`` glob matches the entry; a matching
   directory is pruned.
5. symlinks are followed only when their real path stays inside the root:
   ``symlink_outside_root``, ``symlink_broken``, and ``symlink_loop`` (a
   directory that is one of its own ancestors, by real path).
6. ``not_regular`` -- FIFOs, sockets, devices: reading one could block.
7. ``unmatched``  -- no ``patterns`` glob selects the file (or, for a
   directory that no pattern can reach, the whole directory: counted once).
8. ``too_large``  -- over ``max_bytes``.
9. ``unreadable`` -- a directory that cannot be listed or an entry that
   cannot be stat'ed.

File contents are never read here (only ``.gitignore`` files): binary
detection belongs to the match stage, which reads each file once anyway.

Glob semantics of ``patterns`` and ``excludes`` (see :func:`glob_match`): a
glob with a ``/`` matches the whole relative path (``src/**/*.ts``); one
without matches the basename at any depth (``*.py``); ``**`` spans zero or more
directories, ``*`` and ``?`` stay inside one; ``{a,b}`` alternatives expand.

Example::

    >>> from agentic_search.walk import walk
    >>> result = walk("/path/to/repo", ["src/**/*.py"], ["migrations"])  # doctest: +SKIP
    >>> [f.rel for f in result.files][:2], result.skipped  # doctest: +SKIP
    (['src/app/__init__.py', 'src/app/models.py'], (('hidden', 3), ('unmatched', 41)))
"""
from __future__ import annotations

import functools
import operator
import os
import re
from stat import S_ISREG
from dataclasses import dataclass
from typing import Dict, FrozenSet, List, Optional, Sequence, Tuple

from .ignore import IGNORE_FILE_NAME, IgnoreRules, read_ignore_file, root_rules, translate_glob

MAX_FILE_BYTES = 2 * 1024 * 1024  # bigger files are data, bundles or logs, not code to read
SKIP_EXAMPLES_PER_REASON = 5  # bounded "why" samples kept per reason; output stays small
_GLOB_META = frozenset("*?[\\{")


@dataclass(frozen=True)
class FileEntry:
    """One candidate file."""

    __slots__ = ("rel", "path", "size", "mtime_ns")  # 100,000 of these must stay small

    rel: str  # POSIX path relative to root
    path: str  # absolute OS path (through any followed symlink)
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Skip:
    """One skipped entry with the cause, e.g. the .gitignore line that decided."""

    reason: str
    rel: str
    detail: str


@dataclass(frozen=True)
class WalkResult:
    """What DISPATCH found: files sorted by rel, skip counts sorted by reason."""

    files: Tuple[FileEntry, ...]
    skipped: Tuple[Tuple[str, int], ...]
    examples: Tuple[Skip, ...] = ()  # the first few skips per reason, in walk order


# --------------------------------------------------------------------------- #
# Globs for patterns and excludes.
# --------------------------------------------------------------------------- #

def expand_braces(pattern: str) -> Tuple[str, ...]:
    """Expand ``{a,b}`` alternatives (nesting allowed); unbalanced braces stay literal.

    >>> expand_braces("*.{ts,tsx}")
    ('*.ts', '*.tsx')
    """
    depth, start = 0, -1
    commas: List[int] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            if depth == 0:
                start, commas = i, []
            depth += 1
        elif c == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                if not commas:
                    start = -1
                    i += 1
                    continue
                head, tail = pattern[:start], pattern[i + 1:]
                bounds = [start] + commas + [i]
                out: List[str] = []
                for a, b in zip(bounds, bounds[1:]):
                    for alt in expand_braces(head + pattern[a + 1:b] + tail):
                        if alt not in out:
                            out.append(alt)
                return tuple(out)
        elif c == "," and depth == 1:
            commas.append(i)
        i += 1
    return (pattern,)


@dataclass(frozen=True)
class _Glob:
    """One brace-free user glob, normalised."""

    regex: "re.Pattern[str]"
    anchored: bool  # has a '/': matched against the whole rel path
    dir_only: bool  # written with a trailing '/'


@functools.lru_cache(maxsize=1024)
def _compile_glob(pattern: str) -> Tuple[_Glob, ...]:
    globs = []
    for alt in expand_braces(pattern):
        while alt.startswith("./"):
            alt = alt[2:]
        alt = alt.lstrip("/")
        dir_only = alt.endswith("/") and len(alt) > 1
        body = alt.rstrip("/") if dir_only else alt
        if not body:
            continue
        globs.append(_Glob(re.compile(translate_glob(body), re.DOTALL), "/" in body, dir_only))
    return tuple(globs)


def _glob_hits(globs: Tuple[_Glob, ...], rel: str, is_dir: bool) -> bool:
    base = rel.rpartition("/")[2]
    for g in globs:
        if g.dir_only and not is_dir:
            continue
        if g.regex.fullmatch(rel if g.anchored else base) is not None:
            return True
    return False


def glob_match(pattern: str, rel: str, is_dir: bool = False) -> bool:
    """Whether ``pattern`` matches the POSIX relative path ``rel`` itself.

    A pattern with ``/`` matches the whole path (``src/**/*.ts``, ``tests/**``);
    without, it matches the basename at any depth (``*.test.ts``).  ``**`` spans
    zero or more directories; ``*`` and ``?`` never cross ``/``; ``{a,b}`` expands;
    a trailing ``/`` matches directories only (``is_dir``).  A leading ``/`` or
    ``./`` is dropped.  Matching is case-sensitive.

    >>> glob_match("src/**/*.ts", "src/a/b/c.ts"), glob_match("*.py", "a/b/c.py")
    (True, True)
    """
    return _glob_hits(_compile_glob(pattern), rel, is_dir)


def glob_covers(pattern: str, rel: str) -> bool:
    """Whether ``pattern`` matches the file ``rel`` or any directory above it.

    This is how an exclude acts: ``node_modules`` or ``build/`` removes all
    below such a directory; ``x/**`` everything below ``x``.
    """
    globs = _compile_glob(pattern)
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        if _glob_hits(globs, "/".join(parts[:depth]), True):
            return True
    return _glob_hits(globs, rel, False)


class _GlobSet:
    """Several user globs compiled once; answers for files and directories."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.globs: Tuple[_Glob, ...] = tuple(g for p in patterns for g in _compile_glob(p))
        # 'x/**' selects everything below x: a directory named x can be pruned whole.
        self.dir_globs: Tuple[_Glob, ...] = self.globs + tuple(
            g for p in patterns for alt in expand_braces(p) if alt.rstrip("/").endswith("/**")
            for g in _compile_glob(alt.rstrip("/")[:-3]))
        self.everything = any(p in ("**", "*", "**/*", "/**") for p in patterns)
        # A directory glob ('tests/') selects or removes every file below such a directory.
        self.has_dir_only = any(g.dir_only for g in self.globs)

    def file_hit(self, rel: str) -> bool:
        if self.everything or _glob_hits(self.globs, rel, False):
            return True
        if self.has_dir_only:
            parts = rel.split("/")
            return any(_glob_hits(self.globs, "/".join(parts[:k]), True) for k in range(1, len(parts)))
        return False

    def dir_hit(self, rel: str) -> bool:
        return _glob_hits(self.dir_globs, rel, True)


def _literal_dirs(patterns: Sequence[str]) -> Optional[Tuple[str, ...]]:
    """Leading literal directories of each pattern, or None when any may match anywhere.

    ``src/**/*.ts`` -> ``src``; ``*.py`` -> None (every directory may hold one).
    """
    out: List[str] = []
    for pattern in patterns:
        for alt in expand_braces(pattern):
            while alt.startswith("./"):
                alt = alt[2:]
            alt = alt.strip("/")
            if "/" not in alt:
                return None
            parts = alt.split("/")[:-1]
            lead: List[str] = []
            for part in parts:
                if _GLOB_META.intersection(part):
                    break
                lead.append(part)
            out.append("/".join(lead))
    return tuple(out)


def _may_hold_matches(dir_rel: str, prefixes: Optional[Tuple[str, ...]]) -> bool:
    if prefixes is None:
        return True
    for p in prefixes:
        if not p or p == dir_rel or p.startswith(dir_rel + "/") or dir_rel.startswith(p + "/"):
            return True
    return False


# --------------------------------------------------------------------------- #
# The walk.
# --------------------------------------------------------------------------- #

# A directory waiting to be listed: (OS path as reached, rel ("" for root), real
# path, ignore rules in force before its own .gitignore, real paths of the
# directories above it).  A plain tuple: thousands are made per walk.
_Dir = Tuple[str, str, str, IgnoreRules, Tuple[str, ...]]
_by_name = operator.attrgetter("name")
_by_rel = operator.attrgetter("rel")


class _Tally:
    """Skip counts and the first few examples per reason."""

    def __init__(self) -> None:
        self.counts: Dict[str, int] = {}
        self.examples: List[Skip] = []

    def skip(self, reason: str, rel: str, detail: str) -> None:
        n = self.counts.get(reason, 0) + 1
        self.counts[reason] = n
        if n <= SKIP_EXAMPLES_PER_REASON:
            self.examples.append(Skip(reason, rel, detail))


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def walk(root: str, patterns: Sequence[str] = ("**",), excludes: Sequence[str] = (), *,
         skip_paths: Sequence[str] = (), max_bytes: int = MAX_FILE_BYTES,
         use_gitignore: bool = True) -> WalkResult:
    """List the candidate files under ``root`` (DISPATCH), deterministically.

    ``patterns`` select files (default: all); ``excludes`` remove files and
    prune directories; ``skip_paths`` are absolute paths never returned (the
    tool's state file and cache); files over ``max_bytes`` are skipped.  See the
    module docstring for the order of the checks and the skip reasons.

    Raises FileNotFoundError / NotADirectoryError for a bad root and
    PermissionError when the root itself cannot be listed.
    """
    root_abs = os.path.abspath(root)
    if not os.path.exists(root_abs):
        raise FileNotFoundError(f"root does not exist: {root}")
    if not os.path.isdir(root_abs):
        raise NotADirectoryError(f"root is not a directory: {root}")
    root_real = os.path.realpath(root_abs)
    skip_real = frozenset(os.path.realpath(os.path.abspath(p)) for p in skip_paths)
    selected = _GlobSet(tuple(patterns) or ("**",))
    prefixes = None if selected.everything else _literal_dirs(tuple(patterns))
    excluded = _GlobSet(tuple(excludes))
    if use_gitignore:
        rules, top_prefix = root_rules(root_abs)
    else:
        rules, top_prefix = IgnoreRules(), ""
    tally = _Tally()
    files: List[FileEntry] = []
    stack: List[_Dir] = [(root_abs, "", root_real, rules, ())]
    while stack:
        subdirs = _scan(stack.pop(), root_real, skip_real, selected, prefixes, excluded,
                        use_gitignore, top_prefix, max_bytes, files, tally)
        stack.extend(reversed(subdirs))
    files.sort(key=_by_rel)
    return WalkResult(tuple(files), tuple(sorted(tally.counts.items())), tuple(tally.examples))


def _scan(d: _Dir, root_real: str, skip_real: FrozenSet[str],
          selected: _GlobSet, prefixes: Optional[Tuple[str, ...]], excluded: _GlobSet,
          use_gitignore: bool, top_prefix: str, max_bytes: int,
          files: List[FileEntry], tally: _Tally) -> List[_Dir]:
    """List one directory: append its files, return its subdirectories to walk.

    The hot loop of DISPATCH: one ``scandir`` per directory, one ``stat`` per
    file, no per-entry work that the common case does not need.
    """
    d_path, d_rel, d_real, rules, d_ancestors = d
    try:
        with os.scandir(d_path) as it:
            entries = sorted(it, key=_by_name)
    except OSError as exc:
        if not d_rel:
            raise
        tally.skip("unreadable", d_rel, f"cannot list directory: {exc.strerror or exc}")
        return []
    if use_gitignore:
        rules = _with_own_gitignore(rules, entries, d_rel, top_prefix)
    ancestors = d_ancestors + (d_real,)
    subdirs: List[_Dir] = []
    rel_prefix = d_rel + "/" if d_rel else ""
    top_rel_prefix = f"{top_prefix}/{rel_prefix}" if top_prefix else rel_prefix
    real_prefix = d_real.rstrip(os.sep) + os.sep
    check_ignore = bool(rules.files)
    check_exclude = bool(excluded.globs)
    check_select = not selected.everything
    for e in entries:
        name = e.name
        rel = rel_prefix + name
        if skip_real and real_prefix + name in skip_real:
            tally.skip("skip_path", rel, "the tool's own state or cache")
            continue
        if name[0] == ".":
            tally.skip("hidden", rel, "name starts with '.'")
            continue
        try:
            is_link = e.is_symlink()
            is_dir = e.is_dir()  # follows a symlink; a broken one is not a dir
        except OSError as exc:
            tally.skip("unreadable", rel, f"cannot stat: {exc.strerror or exc}")
            continue
        if check_ignore:
            pat = rules.match(top_rel_prefix + name, is_dir)
            if pat is not None and not pat.negated:
                tally.skip("ignored", rel, pat.describe())
                continue
        if check_exclude and (excluded.dir_hit(rel) if is_dir else excluded.file_hit(rel)):
            tally.skip("excluded", rel, "matches an exclude glob")
            continue
        real = ""
        if is_link:
            real, why = _follow(e.path, root_real, skip_real, ancestors, is_dir)
            if why is not None:
                tally.skip(why[0], rel, why[1])
                continue
        if is_dir:
            if prefixes is not None and not _may_hold_matches(rel, prefixes):
                tally.skip("unmatched", rel, "no pattern can match below this directory")
                continue
            subdirs.append((e.path, rel, real or real_prefix + name, rules, ancestors))
            continue
        try:
            st = e.stat()  # follows a symlink already vetted by _follow
        except OSError as exc:
            tally.skip("unreadable", rel, f"cannot stat: {exc.strerror or exc}")
            continue
        if not S_ISREG(st.st_mode):
            tally.skip("not_regular", rel, "not a regular file (fifo, socket or device)")
        elif check_select and not selected.file_hit(rel):
            tally.skip("unmatched", rel, "no pattern selects this file")
        elif st.st_size > max_bytes:
            tally.skip("too_large", rel, f"{st.st_size} bytes > max_bytes {max_bytes}")
        else:
            files.append(FileEntry(rel, e.path, st.st_size, st.st_mtime_ns))
    return subdirs


def _with_own_gitignore(rules: IgnoreRules, entries: List["os.DirEntry[str]"], d_rel: str,
                        top_prefix: str) -> IgnoreRules:
    """Rules for a directory's entries: the inherited ones plus its own .gitignore."""
    for e in entries:
        if e.name == IGNORE_FILE_NAME:
            base = f"{top_prefix}/{d_rel}" if top_prefix and d_rel else (top_prefix or d_rel)
            src = f"{base}/{IGNORE_FILE_NAME}" if base else IGNORE_FILE_NAME
            return rules.child(read_ignore_file(e.path, src, base))
    return rules


def _follow(path: str, root_real: str, skip_real: FrozenSet[str], ancestors: Tuple[str, ...],
            is_dir: bool) -> Tuple[str, Optional[Tuple[str, str]]]:
    """Resolve a symlink: its real path, or (reason, detail) when it must be skipped."""
    real = os.path.realpath(path)
    if not os.path.exists(real):
        return real, ("symlink_broken", "target does not exist")
    if not _inside(real, root_real):
        return real, ("symlink_outside_root", "points outside the root")
    if real in skip_real:
        return real, ("skip_path", "the tool's own state or cache")
    if is_dir and real in ancestors:
        return real, ("symlink_loop", "points at one of its own parent directories")
    return real, None
