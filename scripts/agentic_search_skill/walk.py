"""DISPATCH: the candidate files of a tree, each skip counted with its reason.

The walk decides about every directory entry in this order (the first step
that applies wins, and names the reason counted in ``WalkResult.skipped``):

1. ``skip_path``  -- the tool's own files (state file, cache dir), given as
   absolute paths; compared by real path, so they are skipped even when
   reached through a symlink, and a file by device and inode too, so they are
   skipped when reached through a bind mount or another alias.
2. ``hidden``     -- a name starting with ``.`` (this covers ``.git``).  The
   directory's ``.gitignore`` is still read.  As in ripgrep, a hidden entry that a
   ``.gitignore`` negation re-includes (``!.github/``) is not hidden; ``.git`` always is.
3. ``ignored``    -- .gitignore / info/exclude say so (ignore.py), and git does not
   track it (its index, gitindex.py: ``git add -f`` puts a file back, as in git); an
   ignored directory is pruned, so nothing below it can be re-included, as in git -
   unless git tracks files in it: then the walk enters it for those alone. A directory
   holding a ``.git`` is a work tree of its own (a submodule, a nested clone): its own
   rules and index apply below it, none of the enclosing tree's.
4. ``excluded``   -- an ``excludes`` glob matches the entry; a matching
   directory is pruned.
5. symlinks are followed only when their real path stays inside the root:
   ``symlink_outside_root``, ``symlink_broken``, and ``symlink_loop`` (a
   directory that is one of its own ancestors).  Every real directory is walked
   once, by device and inode: symlinked directories wait until the tree has been
   walked by real paths, and one whose target was walked already is
   ``duplicate_directory`` (so is a bind mount seen twice).  Links fanning out
   to the same directories thus cost one walk of each, not one per path.  A
   file listed under two paths (a link to a file of the tree) keeps its own
   path: the other is ``duplicate_file``.
6. ``not_regular`` -- FIFOs, sockets, devices: reading one could block.
7. ``unmatched``  -- no ``patterns`` glob selects the file (or, for a
   directory that no pattern can reach, the whole directory: counted once).
8. ``too_large``  -- over ``max_bytes``.
9. ``unreadable`` -- a directory that cannot be listed or an entry that
   cannot be stat'ed.

A directory's ``.gitignore`` that is a FIFO, socket, device or larger than
ignore.MAX_IGNORE_BYTES is not read (``bad_ignore_file``); a symlinked one is
not read either, as in git.  One cut at ignore.py's caps (bytes read, patterns kept)
applies its first lines and is counted as ``bad_ignore_file`` too.  Names that are not UTF-8 are kept losslessly
(``surrogateescape``, the way ``os`` decodes them).

Each file found carries the device, inode and ctime the walk saw: match.py
reads exactly that file (fsafe.py) and the cache compares what git compares.

A pattern that names a file exactly (no wildcard: ``a.log``, ``.env``) bypasses the
hidden and ignore filters, as a path named on ripgrep's command line does: the file is
a candidate if it exists, is regular, stays inside the root and is not the tool's own.

File contents are never read here (only ``.gitignore`` files): binary
detection belongs to the match stage, which reads each file once anyway.

Glob semantics of ``patterns`` and ``excludes`` (see :func:`glob_match`): a
glob with a ``/`` matches the whole relative path (``src/**/*.ts``); one
without matches the basename at any depth (``*.py``); ``**`` spans zero or more
directories, ``*`` and ``?`` stay inside one; ``{a,b}`` alternatives expand.

Example::

    >>> from agentic_search_skill.walk import walk
    >>> result = walk("/path/to/repo", ["src/**/*.py"], ["migrations"])  # doctest: +SKIP
    >>> [f.rel for f in result.files][:2], result.skipped  # doctest: +SKIP
    (['src/app/__init__.py', 'src/app/models.py'], (('hidden', 3), ('unmatched', 41)))
"""
from __future__ import annotations

import functools
import operator
import os
import posixpath
import re
from stat import S_ISREG
from dataclasses import dataclass, replace
from typing import Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from . import fsafe
from .gitindex import NOTHING, Tracked, read_tracked
from .ignore import GIT_DIR_NAME, IGNORE_FILE_NAME, IgnoreRules, Matcher, compile_glob, load_ignore_file, \
    nested_rules, root_scope

MAX_FILE_BYTES = 2 * 1024 * 1024  # bigger files are data, bundles or logs, not code to read
# A file modified this close to the moment it was walked may change again without a new
# mtime (2 s covers the coarsest common timestamps, FAT's): its stat alone does not say
# it is unchanged (git's "racily clean" entries; the index and the loop's memory).
RACY_WINDOW_NS = 2_000_000_000
SKIP_EXAMPLES_PER_REASON = 5  # bounded "why" samples kept per reason; output stays small
_GLOB_META = frozenset("*?[\\{")
# Brace expansion bounds: a glob is a few alternatives, not a program.
MAX_BRACE_ALTERNATIVES = 1024  # '{a,b}' sixteen times would be 65,536 globs
MAX_BRACE_DEPTH = 32  # nesting deeper than this is not a hand-written glob
# The globs of one loop in all (a call's are capped by request.MAX_GLOB_ALTERNATIVES;
# excludes add up over its calls): each file walked is matched against every one.
MAX_LOOP_GLOBS = 256
# Characters escape_glob protects: what glob_match, expand_braces and gitignore treat as special.
_ESCAPED_IN_GLOBS = frozenset("\\*?[]{},!#")


class GlobError(ValueError):
    """A ``patterns``/``excludes`` glob that cannot be used (its message says which and why)."""


@dataclass(frozen=True)
class FileEntry:
    """One candidate file, with the stat the walk saw (what a read and a cache compare)."""

    __slots__ = ("rel", "path", "size", "mtime_ns", "ctime_ns", "dev", "ino")  # 100,000 must stay small

    rel: str  # POSIX path relative to root
    path: str  # absolute OS path to open (a symlink's resolved target)
    size: int
    mtime_ns: int
    ctime_ns: int  # default 0: unknown
    dev: int  # default 0 (with ino 0: unknown)
    ino: int  # default 0: unknown (no file has inode 0)


# __slots__ and class-level defaults cannot be combined before Python 3.10's
# dataclass(slots=True): give the generated __init__ its defaults instead.
FileEntry.__init__.__defaults__ = (0, 0, 0)  # type: ignore[misc]


def _entry_maker() -> "Callable[..., FileEntry]":
    """A FileEntry constructor for the hot loop: the slots' own setters, not the frozen
    __init__'s seven object.__setattr__ calls (2 us an entry, 13 ms a django walk)."""
    setters = tuple(FileEntry.__dict__[name].__set__ for name in FileEntry.__slots__)
    s_rel, s_path, s_size, s_mtime, s_ctime, s_dev, s_ino = setters
    new = object.__new__

    def make(rel: str, path: str, size: int, mtime_ns: int, ctime_ns: int, dev: int, ino: int) -> FileEntry:
        entry = new(FileEntry)
        s_rel(entry, rel)
        s_path(entry, path)
        s_size(entry, size)
        s_mtime(entry, mtime_ns)
        s_ctime(entry, ctime_ns)
        s_dev(entry, dev)
        s_ino(entry, ino)
        return entry

    return make


_file_entry = _entry_maker()


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

def escape_glob(name: str) -> str:
    """A name written so that every glob here matches it literally.

    For globs built from names found on disk (refine's ``dir/**``): a directory
    called ``{a,b}`` or ``*`` must select itself, not expand or match anything.
    A whole POSIX path may be given: ``/`` is left as it is.

    >>> escape_glob("{a,b}") + "/**"
    '\\{a\\,b\\}/**'
    """
    if not _ESCAPED_IN_GLOBS.intersection(name):
        return name
    return "".join("\\" + c if c in _ESCAPED_IN_GLOBS else c for c in name)


def expand_braces(pattern: str) -> Tuple[str, ...]:
    """Expand ``{a,b}`` alternatives (nesting allowed); unbalanced braces stay literal.

    Iterative and bounded: more than MAX_BRACE_ALTERNATIVES alternatives or braces
    nested deeper than MAX_BRACE_DEPTH raise :class:`GlobError`.

    >>> expand_braces("*.{ts,tsx}")
    ('*.ts', '*.tsx')
    """
    if "{" not in pattern:
        return (pattern,)
    out: Dict[str, None] = {}
    work = [pattern]
    while work:
        p = work.pop()
        split = _first_brace_group(p, pattern)
        if split is None:
            out[p] = None
        else:
            head, alts, tail = split
            work.extend(head + alt + tail for alt in reversed(alts))
        if len(out) + len(work) > MAX_BRACE_ALTERNATIVES:
            raise GlobError(f"glob {_shown(pattern)}: braces expand to more than "
                            f"{MAX_BRACE_ALTERNATIVES} alternatives")
    return tuple(out)


def _shown(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 60 else pattern[:57] + "...")


def _first_brace_group(pattern: str, original: str) -> Optional[Tuple[str, List[str], str]]:
    """(head, alternatives, tail) of the first top-level ``{..,..}``, or None if there is none."""
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
            if depth > MAX_BRACE_DEPTH:
                raise GlobError(f"glob {_shown(original)}: braces nested deeper than {MAX_BRACE_DEPTH}")
        elif c == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                if not commas:
                    start = -1
                    i += 1
                    continue
                bounds = [start] + commas + [i]
                return (pattern[:start], [pattern[a + 1:b] for a, b in zip(bounds, bounds[1:])],
                        pattern[i + 1:])
        elif c == "," and depth == 1:
            commas.append(i)
        i += 1
    return None


@dataclass(frozen=True)
class _Glob:
    """One brace-free user glob, normalised."""

    regex: "Matcher"  # a compiled regex, or ignore.py's linear matcher for risky globs
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
        globs.append(_Glob(compile_glob(body), "/" in body, dir_only))
    return tuple(globs)


def _glob_hits(globs: Tuple[_Glob, ...], rel: str, is_dir: bool) -> bool:
    base = rel.rpartition("/")[2]
    for g in globs:
        if g.dir_only and not is_dir:
            continue
        if g.regex.fullmatch(rel if g.anchored else base):
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


_GLOB_MAGIC_RE = re.compile(r"([*?\[\]{}\\])")
_ESCAPED_RE = re.compile(r"\\(.)", re.S)
GLOB_CHARS = "*?[{"


def literal_paths(root: str, patterns: Sequence[str]) -> Tuple[str, ...]:
    """``patterns`` with each one that names an existing path of ``root`` exactly, and
    holds a glob's special characters, escaped: ``pages/[id].tsx`` copied from a ranking
    is that file, not ``pages/i.tsx`` and ``pages/d.tsx`` (a Next.js route). The
    patterns that select every file (EVERY_FILE) stay what they say."""
    out = []
    for p in patterns:
        if p not in EVERY_FILE and any(c in p for c in GLOB_CHARS) and os.path.lexists(os.path.join(root, p)):
            p = _GLOB_MAGIC_RE.sub(r"\\\1", p)
        out.append(p)
    return tuple(out)


def has_magic(pattern: str) -> bool:
    """Whether ``pattern`` is a glob: a special character that no backslash escapes."""
    return any(c in GLOB_CHARS for c in _ESCAPED_RE.sub("", pattern))


def prunes(root: str, pattern: str) -> bool:
    """Whether an exclude prunes the walk (a glob, or a path naming a directory now) rather
    than naming one file, which is read and searched but never shown."""
    return has_magic(pattern) or os.path.isdir(os.path.join(root, *unescaped(pattern).split("/")))


def exclude_covers(root: str, pattern: str) -> Callable[[str], bool]:
    """Whether the exclude ``pattern`` covers a file (its tree path), as a cycle applies it:
    one that :func:`prunes` covers what :func:`glob_covers` says; another names one file."""
    if prunes(root, pattern):
        return lambda rel: glob_covers(pattern, rel)
    path = unescaped(pattern)
    return lambda rel: rel == path


def excluded_by(root: str, excludes: Sequence[str]) -> Optional[Callable[[str], bool]]:
    """One test of a file's tree path: whether any of ``excludes`` covers it
    (:func:`exclude_covers`, each looked at on disk once); None when there are none."""
    if not excludes:
        return None
    covers = [exclude_covers(root, x) for x in excludes]
    return lambda rel: any(c(rel) for c in covers)


def unescaped(pattern: str) -> str:
    """The path an escaped literal pattern names (``pages/\\[id\\].tsx`` -> ``pages/[id].tsx``)."""
    return _ESCAPED_RE.sub(r"\1", pattern)


# Patterns that select every file (the first is the query's default).
EVERY_FILE = ("**", "*", "**/*", "/**")


class _GlobSet:
    """Several user globs compiled once; answers for files and directories."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self.globs: Tuple[_Glob, ...] = tuple(g for p in patterns for g in _compile_glob(p))
        if len(self.globs) > MAX_LOOP_GLOBS:  # (excludes add up over a loop's calls)
            raise GlobError(f"the loop's globs expand to more than {MAX_LOOP_GLOBS} alternatives "
                            "in all; start over with --reset")
        # 'x/**' selects everything below x: a directory named x can be pruned whole.
        self.dir_globs: Tuple[_Glob, ...] = self.globs + tuple(
            g for p in patterns for alt in expand_braces(p) if alt.rstrip("/").endswith("/**")
            for g in _compile_glob(alt.rstrip("/")[:-3]))
        self.everything = any(p in EVERY_FILE for p in patterns)
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

@dataclass(frozen=True)
class _Scope:
    """The ignore rules in force in a directory before its own .gitignore, and the work
    tree they belong to: the walk root's path from that tree's top (``top_prefix``),
    how many characters of a walk-relative path lie above that tree's top (``strip``:
    0, or a nested repository's path and ``/``), and what the tree tracks."""

    rules: IgnoreRules
    top_prefix: str
    strip: int
    tracked: "_TrackedLater"

    def top_rel(self, rel: str) -> str:
        """``rel`` (from the walk root) as a path from the work tree's top."""
        rel = rel[self.strip:]
        return f"{self.top_prefix}/{rel}" if self.top_prefix and rel else (self.top_prefix or rel)


# A directory waiting to be listed: (OS path as reached, rel ("" for root), real
# path, its scope (the ignore rules in force before its own .gitignore), (device,
# inode) of the directories above it, whether it was reached through a symlink, its own
# (device, inode) or None when it must still be stat'ed).  A plain tuple:
# thousands are made per walk.
_Dir = Tuple[str, str, str, _Scope, Tuple[Tuple[int, int], ...], bool, Optional[Tuple[int, int]]]
_by_name = operator.attrgetter("name")
_by_rel = operator.attrgetter("rel")
# A directory is listed through a descriptor of its own, opened without following a
# link: a directory swapped for a link (to outside the tree) between the listing of its
# parent and its own is then never listed, and each entry's stat is of the directory
# that was checked. (Where scandir takes no descriptor, by path as before.)
_DIR_FLAGS = (os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
              | getattr(os, "O_CLOEXEC", 0))
_SCAN_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY") and hasattr(os, "O_NOFOLLOW")


class _Moved(OSError):
    """The directory at a path is no longer the one the walk listed there."""


class _TrackedLater:
    """What git tracks in a work tree, read from the index in ``git_dir`` on the first
    ignored path the walk meets there (a tracked file is never ignored), once."""

    def __init__(self, git_dir: Optional[str]) -> None:
        self.git_dir = git_dir
        self.value: Optional[Tracked] = None

    def get(self) -> Tracked:
        if self.value is None:
            self.value = read_tracked(self.git_dir) if self.git_dir is not None else NOTHING
        return self.value


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
    root_real = fsafe.resolved(root_abs)
    skip_real = frozenset(fsafe.resolved(p) for p in skip_paths)
    skip_ids = _identities(skip_paths)
    selected = _GlobSet(tuple(patterns) or ("**",))
    prefixes = None if selected.everything else _literal_dirs(tuple(patterns))
    excluded = _GlobSet(tuple(excludes))
    rules, top_prefix, index_dir = root_scope(root_abs) if use_gitignore else (IgnoreRules(), "", None)
    scope = _Scope(rules, top_prefix, 0, _TrackedLater(index_dir))
    tally = _Tally()
    files: List[FileEntry] = []
    visited: set = set()  # (device, inode) of every directory listed
    stack: List[_Dir] = [(root_abs, "", root_real, scope, (), False, None)]
    deferred: List[_Dir] = []  # reached through a symlink: walked after the real tree
    while stack or deferred:
        d = stack.pop() if stack else deferred.pop()
        key = d[6] or _dir_key(d, tally)
        if key is None:
            continue
        if key in visited:
            loop = key in d[4]
            tally.skip("symlink_loop" if loop else "duplicate_directory", d[1],
                       "points at one of its own parent directories" if loop
                       else "a directory already walked under another path")
            continue
        visited.add(key)
        subdirs = _scan(d, key, root_real, skip_real, skip_ids, selected, prefixes, excluded,
                        use_gitignore, max_bytes, files, tally)
        for sub in reversed(subdirs):
            (deferred if sub[5] else stack).append(sub)
    _add_named_files(root_abs, root_real, patterns, skip_real, skip_ids, max_bytes, files)
    files = _without_aliases(files, root_real, tally)
    files.sort(key=_by_rel)
    return WalkResult(tuple(files), tuple(sorted(tally.counts.items())), tuple(tally.examples))


def _without_aliases(files: List[FileEntry], root_real: str, tally: _Tally) -> List[FileEntry]:
    """The files less those reached again through a link: one file listed under two
    paths (``tok_alias.py -> src/auth/token.py``) keeps the path that is its own, so it
    has one id and one score. Only files sharing a device and inode are resolved; hard
    links (each path its own) all stay, and so does a link whose target the walk did not
    list (hidden, ignored: the link is the one way to it), the first by path."""
    by_id: Dict[Tuple[int, int], List[FileEntry]] = {}
    for f in files:
        if f.ino:
            by_id.setdefault((f.dev, f.ino), []).append(f)
    drop: set = set()
    for group in by_id.values():
        if len(group) < 2:
            continue
        own = []
        for f in group:
            real = fsafe.resolve(f.path)
            if real is not None and os.path.relpath(real, root_real).replace(os.sep, "/") == f.rel:
                own.append(f)
        keep = {id(f) for f in own} or {id(min(group, key=_by_rel))}
        first = min((f for f in group if id(f) in keep), key=_by_rel)
        for f in group:
            if id(f) not in keep:
                drop.add(id(f))
                tally.skip("duplicate_file", f.rel, f"the same file as {first.rel}, reached through a link")
    return [f for f in files if id(f) not in drop] if drop else files


def _reincluded(rules: IgnoreRules, rel: str, e: "os.DirEntry[str]") -> bool:
    """A hidden entry that a .gitignore negation re-includes (``!.github/``)."""
    try:
        is_dir = e.is_dir()
    except OSError:
        return False
    pat = rules.match(rel, is_dir)
    return pat is not None and pat.negated


def _add_named_files(root_abs: str, root_real: str, patterns: Sequence[str], skip_real: FrozenSet[str],
                     skip_ids: FrozenSet[Tuple[int, int]], max_bytes: int, files: List[FileEntry]) -> None:
    """Files that a pattern names exactly, whatever the hidden and ignore filters said."""
    have = {f.rel for f in files}
    for pat in patterns:
        rel = posixpath.normpath(pat).strip("/")
        if rel in ("", ".") or rel in have or _GLOB_META.intersection(pat) or ".." in rel.split("/"):
            continue
        path = os.path.join(root_abs, *rel.split("/"))
        real = fsafe.resolve(path)
        if real is None or not fsafe.inside(real, root_real) or real in skip_real:
            continue
        try:
            st = os.stat(real)
        except (OSError, ValueError):
            continue
        if S_ISREG(st.st_mode) and st.st_size <= max_bytes and (st.st_dev, st.st_ino) not in skip_ids:
            files.append(_file_entry(rel, real, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino))
            have.add(rel)


def _dir_key(d: _Dir, tally: _Tally) -> Optional[Tuple[int, int]]:
    """(device, inode) of a directory reached through a symlink (or the root), by
    ``stat``; None (counted) when it cannot be stat'ed."""
    try:
        st = os.stat(d[0])
    except OSError as exc:
        if not d[1]:
            raise
        tally.skip("unreadable", d[1], f"cannot stat: {exc.strerror or exc}")
        return None
    return (st.st_dev, st.st_ino)


def _identities(paths: Sequence[str]) -> FrozenSet[Tuple[int, int]]:
    """(device, inode) of each of ``paths`` that exists now."""
    out = set()
    for p in paths:
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            continue
        out.add((st.st_dev, st.st_ino))
    return frozenset(out)


def _scan(d: _Dir, key: Tuple[int, int], root_real: str, skip_real: FrozenSet[str],
          skip_ids: FrozenSet[Tuple[int, int]], selected: _GlobSet, prefixes: Optional[Tuple[str, ...]], excluded: _GlobSet,
          use_gitignore: bool, max_bytes: int, files: List[FileEntry], tally: _Tally) -> List[_Dir]:
    """List one directory: append its files, return its subdirectories to walk.

    The hot loop of DISPATCH: one ``scandir`` per directory, one ``stat`` per
    file, no per-entry work that the common case does not need.
    """
    d_path, d_rel, d_real, rules, d_ancestors, via_link, _ = d
    fd = -1
    try:
        if _SCAN_BY_FD:
            # (Its own device and inode from here on: below a mount point they are the
            # mounted file system's, not those its parent's listing gave.)
            fd, key = _open_dir(d_real, key, d_ancestors[-1] if d_ancestors and d_rel else None)
        with os.scandir(fd if fd >= 0 else d_path) as it:
            entries = sorted(it, key=_by_name)
    except OSError as exc:
        if fd >= 0:
            os.close(fd)
        if not d_rel:
            raise
        tally.skip("unreadable", d_rel, f"cannot list directory: {exc.strerror or exc}")
        return []
    try:
        return _scan_entries(d, key, entries, root_real, skip_real, skip_ids, selected, prefixes, excluded,
                             use_gitignore, max_bytes, files, tally)
    finally:
        if fd >= 0:
            os.close(fd)  # (only now: each entry's stat is taken through it)


def _open_dir(real: str, key: Tuple[int, int], parent: Optional[Tuple[int, int]]) -> Tuple[int, Tuple[int, int]]:
    """(a descriptor, its device and inode) of the directory at ``real``, when it is the one listed as ``key``
    (device, inode): a link there is refused (ELOOP), and so is another directory
    (:class:`_Moved`). A mount point's own device and inode differ from what its parent's
    listing gave: it passes when its ``..`` is that ``parent`` (a directory swapped in
    from elsewhere has another parent)."""
    fd = os.open(real, _DIR_FLAGS)
    try:
        st = os.fstat(fd)
        if fsafe.left_tree(fd, real):
            raise _Moved(0, "moved out of the tree while the walk listed it", real)
        if (st.st_dev, st.st_ino) != key:
            up = os.stat("..", dir_fd=fd) if parent is not None else None
            if up is None or (up.st_dev, up.st_ino) != parent:
                raise _Moved(0, "replaced while the walk listed it", real)
    except BaseException:
        os.close(fd)
        raise
    return fd, (st.st_dev, st.st_ino)


def _scan_entries(d: _Dir, key: Tuple[int, int], entries: List["os.DirEntry[str]"], root_real: str,
                  skip_real: FrozenSet[str], skip_ids: FrozenSet[Tuple[int, int]], selected: _GlobSet,
                  prefixes: Optional[Tuple[str, ...]], excluded: _GlobSet, use_gitignore: bool,
                  max_bytes: int, files: List[FileEntry], tally: _Tally) -> List[_Dir]:
    """:func:`_scan` past the listing: sort out one directory's entries."""
    d_path, d_rel, d_real, scope, d_ancestors, via_link, _ = d
    # (An entry listed through a descriptor has its bare name as its path.)
    path_prefix = os.path.join(d_path, "")
    if use_gitignore and d_rel and any(e.name == GIT_DIR_NAME for e in entries):
        scope = _nested_scope(d_path, d_rel, root_real)  # (a repository of its own: its rules alone, as in git)
    rules = scope.rules
    d_top = scope.top_rel(d_rel)
    if use_gitignore:
        rules = _with_own_gitignore(rules, entries, path_prefix, d_rel, d_top, tally)
    ancestors = d_ancestors + (key,)
    subdirs: List[_Dir] = []
    rel_prefix = d_rel + "/" if d_rel else ""
    top_rel_prefix = d_top + "/" if d_top else ""
    tracked = scope.tracked
    here = scope if rules is scope.rules else replace(scope, rules=rules)
    real_prefix = d_real.rstrip(os.sep) + os.sep
    check_ignore = bool(rules.files)
    ignored_here = rules.in_directory(top_rel_prefix) if check_ignore else None
    check_exclude = bool(excluded.globs)
    check_select = not selected.everything
    for e in entries:
        name = e.name
        rel = rel_prefix + name
        if skip_real and real_prefix + name in skip_real:
            tally.skip("skip_path", rel, "the tool's own state or cache")
            continue
        if name[0] == "." and not (check_ignore and name != GIT_DIR_NAME
                                   and _reincluded(rules, top_rel_prefix + name, e)):
            tally.skip("hidden", rel, "name starts with '.'")
            continue
        try:
            is_link = e.is_symlink()
            is_dir = e.is_dir()  # follows a symlink; a broken one is not a dir
        except OSError as exc:
            tally.skip("unreadable", rel, f"cannot stat: {exc.strerror or exc}")
            continue
        sub_rules = rules
        if check_ignore:
            pat = rules.below or ignored_here(name, is_dir)  # type: ignore[misc]
            if pat is not None and not pat.negated:
                if not tracked.get().holds(top_rel_prefix + name, is_dir):
                    tally.skip("ignored", rel, pat.describe())
                    continue
                if is_dir and rules.below is None:
                    sub_rules = rules.inside(pat)  # (its untracked paths stay ignored)
        if check_exclude and (excluded.dir_hit(rel) if is_dir else excluded.file_hit(rel)):
            tally.skip("excluded", rel, "matches an exclude glob")
            continue
        real = ""
        if is_link:
            real, why = _follow(path_prefix + name, root_real, skip_real)
            if why is not None:
                tally.skip(why[0], rel, why[1])
                continue
        if is_dir:
            if prefixes is not None and not _may_hold_matches(rel, prefixes):
                tally.skip("unmatched", rel, "no pattern can match below this directory")
                continue
            # A plain subdirectory is its parent's device and the inode the listing gave
            # (no stat); one behind a symlink is stat'ed when its turn comes.
            subdirs.append((path_prefix + name, rel, real or real_prefix + name,
                            here if sub_rules is rules else replace(here, rules=sub_rules), ancestors, via_link or is_link,
                            None if is_link else (key[0], e.inode())))
            continue
        try:
            st = e.stat()  # follows a symlink already vetted by _follow
        except OSError as exc:
            tally.skip("unreadable", rel, f"cannot stat: {exc.strerror or exc}")
            continue
        if skip_ids and (st.st_dev, st.st_ino) in skip_ids:
            tally.skip("skip_path", rel, "the tool's own state or cache (the same file under another path)")
        elif not S_ISREG(st.st_mode):
            tally.skip("not_regular", rel, "not a regular file (fifo, socket or device)")
        elif check_select and not selected.file_hit(rel):
            tally.skip("unmatched", rel, "no pattern selects this file")
        elif st.st_size > max_bytes:
            tally.skip("too_large", rel, f"{st.st_size} bytes > max_bytes {max_bytes}")
        else:
            # A vetted symlink is opened at its target: the read never follows a link.
            files.append(_file_entry(rel, real or path_prefix + name, st.st_size, st.st_mtime_ns,
                                     st.st_ctime_ns, st.st_dev, st.st_ino))
    return subdirs


def _nested_scope(d_path: str, d_rel: str, root_real: str) -> _Scope:
    """The scope of a directory that is a work tree of its own (a submodule, a nested
    clone): its own info/exclude and index, none of the enclosing tree's rules."""
    rules, git_dir = nested_rules(d_path, root_real)
    return _Scope(rules, "", len(d_rel) + 1, _TrackedLater(git_dir))


def _with_own_gitignore(rules: IgnoreRules, entries: List["os.DirEntry[str]"], path_prefix: str, d_rel: str,
                        base: str, tally: _Tally) -> IgnoreRules:
    """Rules for a directory's entries: the inherited ones plus its own .gitignore
    (``base``: the directory's path from its work tree's top)."""
    for e in entries:
        if e.name == IGNORE_FILE_NAME:
            src = f"{base}/{IGNORE_FILE_NAME}" if base else IGNORE_FILE_NAME
            try:
                listed = e.stat(follow_symlinks=False)  # (through the listing's descriptor)
            except OSError:
                return rules
            found, problem = load_ignore_file(path_prefix + e.name, src, base,
                                              expect=(listed.st_dev, listed.st_ino))
            if problem is not None:
                tally.skip("bad_ignore_file", f"{d_rel}/{e.name}" if d_rel else e.name, problem)
            return rules.child(found)
    return rules


def _follow(path: str, root_real: str, skip_real: FrozenSet[str]) -> Tuple[str, Optional[Tuple[str, str]]]:
    """Resolve a symlink: its real path, or (reason, detail) when it must be skipped.

    Loops and directories reached twice are caught by device and inode when listed.
    """
    real = fsafe.resolve(path)
    if real is None:
        return path, ("symlink_broken", "the link cannot be read")
    if not os.path.exists(real):
        return real, ("symlink_broken", "target does not exist")
    if not fsafe.inside(real, root_real):
        return real, ("symlink_outside_root", "points outside the root")
    if real in skip_real:
        return real, ("skip_path", "the tool's own state or cache")
    return real, None
