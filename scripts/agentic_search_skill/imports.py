"""imports: resolve the imports of a file into files of the searched tree.

The loop's `related` field and its `expand` step need, for a result file, the
files of the tree it imports (and, reversed, the files that import it).  This
module answers that from two inputs only: the set of candidate paths (built
once per cycle into a `ModuleIndex`) and the raw bytes of one file.  It never
touches the disk and never runs the code it reads.

Languages, chosen by file extension:

1. Python  -- ``import a.b``, ``import a.b as c``, ``from a.b import c, d``
   (``c`` may be the submodule ``a/b/c.py``), relative ``from . import x`` and
   ``from ..pkg import y``, and ``importlib.import_module("a.b")`` literals.
   ``a.b`` resolves to ``a/b.py`` or ``a/b/__init__.py`` under any directory
   that could be a source root (the tree root, ``src/``, ``lib/``, ... -- any
   directory that is not itself a package), nearest ancestor of the importer
   first, then the shallowest.
2. JavaScript / TypeScript -- ``import ... from './x'``, ``import './x'``,
   ``export ... from``, ``require('./x')``, ``import('./x')``; relative
   specifiers with extension and ``/index.*`` resolution; ``@/`` and ``~/``
   aliases, and bare specifiers with a ``/`` in them (``src/x``), only when
   they name a tree path; package names (``react``) never; and a file loaded
   by a path built from the script's own directory (``join(__dirname,
   'worker.js')``, ``new URL('./worker.js', import.meta.url)``).
3. Go -- ``import "x/y/pkg"`` and import blocks: the directory of the tree
   that matches the longest suffix of the import path, then every non-test
   ``.go`` file in it.
4. Rust -- ``mod foo;`` and ``use crate::/self::/super::`` paths, including
   brace trees, resolved to ``foo.rs`` or ``foo/mod.rs``; ``use other_crate::``
   paths to another crate of the workspace (``other-crate/src/``), its module
   or else its ``lib.rs``.
5. Java / Kotlin -- ``import a.b.C;``, ``import static a.b.C.m;`` and
   ``import a.b.*;`` by path suffix anywhere in the tree.
6. C / C++ / Objective-C -- ``#include "x.h"`` relative to the file first,
   then by path suffix; ``<x.h>`` only by path suffix.
7. Scala / Groovy -- as Java, their own files too.
8. Ruby, PHP, Lua, Dart -- a quoted path (``require_relative 'x'``, ``require
   'a/b'``, ``include __DIR__ . '/x.php'``, ``require("a.b")``, ``import
   'x.dart'``, ``package:name/x.dart``) beside the file first, then by path suffix;
   PHP's ``use A\\B\\C;`` by the longest suffix of ``A/B/C.php`` that one file ends in.

Unresolvable imports (the standard library, third-party packages) yield
nothing.  Parsing is linear in the file: a bracket that is never closed (a
Go ``import (`` or Python ``from x import (`` block) is looked for once, not
once per opening, and Rust use trees nested deeper than MAX_USE_TREE_DEPTH are
dropped.  Imports are found with regular expressions over bytes, so an import
written inside a string or comment may count; that is the price of speed.

Example::

    >>> from agentic_search_skill.imports import build_index, imports_of
    >>> index = build_index(["pkg/__init__.py", "pkg/a.py", "pkg/b.py"])
    >>> imports_of("pkg/a.py", b"from . import b\\nimport os\\n", index)
    ('pkg/b.py',)
"""
from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate
from types import MappingProxyType
from typing import Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, Set, Tuple

from .lang import C, DART, GO, GROOVY, JS, JVM, LUA, PHP, PYTHON, RUBY, RUST, SCALA, language_of
from .lazyre import compile_later

# --- Tunables ---------------------------------------------------------------
MAX_USE_TREE_CHARS = 2000  # a Rust `use` tree longer than this is not code we can trust
MAX_USE_TREE_DEPTH = 16  # `use a::{b::{c::{...}}}` deeper than this is not hand-written code
MAX_SPEC_CHARS = 300  # a quoted "module specifier" longer than this is prose, not a path
JS_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".d.ts", ".json")
# why: a TypeScript file means `./x` as x.ts before x.js (compiled output may sit alongside)
JS_FIRST_FOR_JS = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".d.ts", ".json")
JS_ALIAS_ROOTS = ("src/", "")  # where `@/x` and `~/x` usually point (bundler aliases)
JS_BASE_ROOTS = ("", "src/")  # where a bare `dir/x` may point (tsconfig baseUrl)
RUST_ROOT_FILES = ("lib.rs", "main.rs", "mod.rs")  # files whose `mod foo;` children sit beside them
# The crates every Rust program has: ``use core::fmt`` is never a workspace's ``core/`` crate
# (whose package is named otherwise: ``app-core``).
RUST_BUILTIN_CRATES = frozenset(("std", "core", "alloc", "proc_macro", "test"))
# A crate under a directory of these names is a test's or an example's, not the workspace's
# (``tests/fixtures/log/`` must not stand for the crates.io ``log``).
RUST_NOT_MEMBER_DIRS = frozenset(("test", "tests", "testdata", "fixtures", "examples", "benches", "vendor", "third_party"))
# A `use` path's modules looked at, at most (after its ``self``/``super``s): module trees are
# a few levels deep, and the lookup stays linear on a crafted path of hundreds
# (`use c::a::a::a::...;`). A path keeps twice as many parts when read, for the ``super``s.
MAX_USE_PATH_PARTS = 16
MAX_USE_PARTS_KEPT = 2 * MAX_USE_PATH_PARTS
# A file's distinct `use` paths resolved, at most: hand-written code has a few hundred; a
# crafted megabyte of distinct ones must not cost seconds.
MAX_USE_PATHS = 4096
JVM_EXTENSIONS = (".java", ".kt", ".scala", ".groovy")
GO_TEST_SUFFIX = "_test.go"  # test files are never part of an imported package


# --- Patterns, compiled once ---------------------------------------------------
_PY_IMPORT = re.compile(rb"^[ \t]*import[ \t]+([\w. \t,]+)", re.M)
# `from M import` ... then a bracketed clause (its `)` found by _Closer) or one line.
_PY_FROM_HEAD = re.compile(rb"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]*import\b[ \t]*", re.M)
_PY_FROM_LINE = re.compile(rb"[^\n;#\\]*(?:\\\r?\n[^\n;#\\]*)*")
# A script's own block, ``if __name__ == "__main__":`` at the top level, runs only when
# the file is run: what it imports (a demo's console, a test runner) is no dependency.
_PY_MAIN_BLOCK = re.compile(rb"""^if[ \t]+(?:__name__[ \t]*==[ \t]*(['"])__main__\1|(['"])__main__\2[ \t]*==[ \t]*__name__)[ \t]*:""", re.M)
# The first top-level line after it (not blank, not a comment) ends the block.
_PY_TOP_LEVEL = re.compile(rb"^[^ \t\r\n#]", re.M)
_PY_IMPORT_MODULE = re.compile(rb"""\bimport_module\(\s*['"]([\w.]+)['"]""")
_JS_SPEC = compile_later(
    rb"""(?:\b(?:from|import)\s*|\b(?:require|import)\s*\(\s*)(['"])([^'"\\\n]{1,%d})\1""" % MAX_SPEC_CHARS
)
# A file a script loads by a path built from its own directory, at run time: a worker, a
# child process, a plugin (``join(__dirname, 'worker.js')``, ``path.resolve(__dirname, '..',
# 'lib', 'x.js')``, ``__dirname + '/worker.js'``, ``new URL('./worker.js', import.meta.url)``):
# group 1 the string arguments after ``__dirname``, group 4 the URL's path, group 6 the
# added one's. A trial's transport module started its worker so (``join(__dirname,
# 'worker.js')``), the fix's second file, with no import line. A directory of the tree names
# no file (``join(__dirname, 'public')`` serves it: no ``public/index.js``, no ``public.js``).
_JS_DIRNAME_PATH = compile_later(
    rb"""\b(?:join|resolve)\(\s*__dirname\s*((?:,\s*(['"])[^'"\\\n]{1,200}\2\s*){1,8})(?:,\s*)?\)"""
    rb"""|\bnew\s+URL\(\s*(['"])(\.{1,2}/[^'"\\\n]{1,%d})\3\s*,\s*import\.meta\.url"""
    rb"""|\b__dirname\s*\+\s*(['"])(/[^'"\\\n]{1,%d})\5""" % (MAX_SPEC_CHARS, MAX_SPEC_CHARS)
)
_JS_PATH_PART = re.compile(rb"""(['"])([^'"\\\n]*)\1""")
_GO_SINGLE = compile_later(rb'^[ \t]*import[ \t]+(?:[\w.]+[ \t]+)?"([^"\n]+)"', re.M)
_GO_BLOCK_HEAD = compile_later(rb"^[ \t]*import[ \t]*\(", re.M)  # the block runs to the next `)`
_GO_BLOCK_PATH = compile_later(rb'"([^"\n]+)"')
_RS_MOD = compile_later(rb"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?mod[ \t]+(\w+)[ \t]*;", re.M)
_RS_USE_HEAD = compile_later(rb"^[ \t]*(?:pub(?:\([^)\n]*\))?[ \t]+)?use[ \t]+", re.M)  # tree up to `;`
_JVM_IMPORT = compile_later(rb"^[ \t]*import[ \t]+(?:static[ \t]+)?([\w.]+?)(\.\*)?[ \t]*(?:;|\bas\b|//|$)", re.M)
_C_INCLUDE = compile_later(rb'^[ \t]*#[ \t]*(?:include|import|include_next)[ \t]*([<"])([^>"\n]+)[>"]', re.M)
# A quoted path a Ruby, PHP, Lua or Dart file loads (group 1: the word, group 2: the path).
_RB_REQUIRE = compile_later(rb"^[ \t]*(require_relative|require|load)[ \t(]*['\"]([^'\"\n]{1,300})['\"]", re.M)
_PHP_INCLUDE = compile_later(
    rb"^[ \t]*(?:require|include)(?:_once)?[ \t(]*(__DIR__[ \t]*\.[ \t]*)?['\"]([^'\"\n]{1,300})['\"]", re.M)
_PHP_USE = compile_later(rb"^[ \t]*use[ \t]+(?:function[ \t]+|const[ \t]+)?\\?([\w\\]{1,300})[ \t]*(?:as[ \t]+\w+[ \t]*)?;", re.M)
_LUA_REQUIRE = compile_later(rb"\brequire[ \t]*\(?[ \t]*['\"]([\w.\-/]{1,300})['\"]")
_DART_IMPORT = compile_later(rb"^[ \t]*(import|export|part)[ \t]+['\"]([^'\"\n]{1,300})['\"]", re.M)
_IDENT = re.compile(r"[A-Za-z_]\w*\Z")


def _line_matches(pattern: "re.Pattern[bytes]", data: bytes, word: bytes) -> List["re.Match[bytes]"]:
    """``list(pattern.finditer(data))`` for a pattern that is ``^[ \t]*`` + ``word`` + ...
    (``re.M``) and never crosses a line's end: tried only at the starts of lines where
    ``word`` follows blanks, found with ``bytes.find`` (a tenth of the regex's scan)."""
    out = []
    pos = data.find(word)
    while pos >= 0:
        start = data.rfind(b"\n", 0, pos) + 1
        if not data[start:pos].strip(b" \t"):
            m = pattern.match(data, start)
            if m is not None:
                out.append(m)
        pos = data.find(word, pos + 1)
    return out


class _Closer:
    """The next occurrence of one closing byte at or after a position, remembered.

    Openings that are never closed all share one answer, so finding the closers of
    every opening in a file costs one pass over it, not one per opening.
    """

    __slots__ = ("data", "char", "_from", "_at")

    def __init__(self, data: bytes, char: bytes) -> None:
        self.data, self.char = data, char
        self._from, self._at = len(data) + 1, -1  # nothing searched yet

    def after(self, pos: int) -> int:
        """Index of the first ``char`` at or after ``pos``, or -1."""
        if not (self._from <= pos and (self._at < 0 or pos <= self._at)):
            self._from, self._at = pos, self.data.find(self.char, pos)
        return self._at


def _py_from_clauses(data: bytes) -> Iterable[Tuple[bytes, bytes, bytes]]:
    """(dots, module, imported clause) of every ``from M import ...`` statement: the
    clause is a bracketed ``(...)`` up to the first ``)``, else one (continued) line."""
    closer = _Closer(data, b")")
    pos = 0
    while True:
        head = _PY_FROM_HEAD.search(data, pos)
        if head is None:
            return
        end = head.end()
        close = closer.after(end) if data[end:end + 1] == b"(" else -1
        if close >= 0:
            clause, pos = data[end:close + 1], close + 1
        else:
            line = _PY_FROM_LINE.match(data, end)
            clause, pos = line.group(0), line.end()  # type: ignore[union-attr]  # the head is never empty
        yield head.group(1), head.group(2), clause


def _bracketed(data: bytes, head_re: "re.Pattern[bytes]", closing: bytes,
               max_len: int = 0) -> Iterable[bytes]:
    """What follows each match of ``head_re`` up to the next ``closing`` byte (found
    once per file: linear on unclosed brackets); with ``max_len``, only bodies of 1 to
    ``max_len`` bytes."""
    closer = _Closer(data, closing)
    pos = 0
    while True:
        head = head_re.search(data, pos)
        if head is None:
            return
        end = head.end()
        close = closer.after(end)
        if close < 0 or (max_len and not 1 <= close - end <= max_len):
            pos = end
            continue
        yield data[end:close]
        pos = close + 1


def _go_blocks(data: bytes) -> Iterable[bytes]:
    """The insides of every closed ``import ( ... )`` block."""
    return _bracketed(data, _GO_BLOCK_HEAD, b")")


def _rust_use_trees(data: bytes) -> Iterable[bytes]:
    """The tree of every ``use ...;`` whose ``;`` comes within MAX_USE_TREE_CHARS."""
    return _bracketed(data, _RS_USE_HEAD, b";", MAX_USE_TREE_CHARS)


@dataclass(frozen=True)
class ModuleIndex:
    """Lookup tables over the candidate paths of one cycle; immutable once built.

    All paths are POSIX and relative to the searched root; directories are
    written without a trailing slash and the root directory is ``""``.  Tuples
    keep the input order; no lookup depends on it.
    """

    files: FrozenSet[str]
    dir_files: Mapping[str, Tuple[str, ...]]  # directory -> files directly inside
    files_by_name: Mapping[str, Tuple[str, ...]]  # file name -> files
    py_modules: Mapping[str, str]  # module path "a/b" -> "a/b.py" or "a/b/__init__.py"
    py_by_tail: Mapping[str, Tuple[str, ...]]  # last component -> module paths
    py_packages: FrozenSet[str]  # directories holding an __init__.py
    go_dirs: FrozenSet[str]  # directories holding a non-test .go file

    @cached_property
    def dirs_by_name(self) -> Mapping[str, Tuple[str, ...]]:
        """Last component -> every directory holding a file, directly or below. Made on
        first use: only Go and JVM package imports, and a JavaScript path built from
        ``__dirname``, ask for it (a third of the build on a large tree)."""
        return _freeze(_dirs_by_name(self.dir_files))

    @cached_property
    def rust_crates(self) -> Mapping[str, str]:
        """A workspace's library crates: crate name -> its ``src`` directory, for every
        ``NAME/src/lib.rs`` beside a ``NAME/Cargo.toml`` when the paths hold manifests at
        all (Cargo's layout; the name is the directory's, ``-`` read as ``_`` as Cargo
        does), not under a test's, an example's or a vendored directory
        (RUST_NOT_MEMBER_DIRS). A name two directories give is left out: which one a
        ``use`` means is not known. Made on first use: only Rust imports ask for it."""
        found: Dict[str, List[str]] = defaultdict(list)
        # (A search of ``**/*.rs`` walks no manifest: then a ``src/lib.rs`` is enough.)
        manifests = "Cargo.toml" in self.files_by_name
        for path in self.files_by_name.get("lib.rs", ()):
            src, _, _ = path.rpartition("/")
            crate_dir, _, last = src.rpartition("/")
            if last == "src" and crate_dir and (not manifests or _join(crate_dir, "Cargo.toml") in self.files) \
                    and not RUST_NOT_MEMBER_DIRS.intersection(crate_dir.split("/")):
                found[crate_dir.rpartition("/")[2].replace("-", "_")].append(src)
        return MappingProxyType({name: dirs[0] for name, dirs in found.items() if len(dirs) == 1})


def build_index(rels: Iterable[str]) -> ModuleIndex:
    """Build the lookup tables for `rels` (POSIX paths relative to the root).

    One pass over the paths, in the order given; nothing is sorted here because
    every lookup below breaks ties by a total key, so answers do not depend on
    the order of the tables (sorting 100k paths would cost more than the rest).
    """
    unique = dict.fromkeys(rels)
    dir_files: Dict[str, List[str]] = defaultdict(list)
    files_by_name: Dict[str, List[str]] = defaultdict(list)
    for rel in unique:
        folder, _, name = rel.rpartition("/")
        dir_files[folder].append(rel)
        files_by_name[name].append(rel)
    py_modules = _python_modules(files_by_name)
    go_dirs = frozenset(
        path.rpartition("/")[0]
        for name, paths in files_by_name.items()
        if name.endswith(".go") and not name.endswith(GO_TEST_SUFFIX)
        for path in paths
    )
    py_by_tail: Dict[str, List[str]] = defaultdict(list)
    for module in py_modules:
        py_by_tail[module.rpartition("/")[2]].append(module)
    return ModuleIndex(
        files=frozenset(unique),
        dir_files=_freeze(dir_files),
        files_by_name=_freeze(files_by_name),
        py_modules=MappingProxyType(py_modules),
        py_by_tail=_freeze(py_by_tail),
        py_packages=frozenset(m for m, r in py_modules.items() if r.endswith("__init__.py")),
        go_dirs=go_dirs,
    )


def _python_modules(files_by_name: Mapping[str, List[str]]) -> Dict[str, str]:
    """Module path -> file; a package (``a/b/__init__.py``) wins over ``a/b.py``, as in Python."""
    modules: Dict[str, str] = {}
    packages = files_by_name.get("__init__.py", ())
    for name, paths in files_by_name.items():
        if name.endswith(".py") and name != "__init__.py":
            for path in paths:
                modules[path[:-3]] = path
    for path in packages:
        modules[path.rpartition("/")[0]] = path
    return modules


def _dirs_by_name(dir_files: Mapping[str, Sequence[str]]) -> Dict[str, List[str]]:
    """Every directory that holds a file, directly or below, keyed by its last component."""
    seen: Set[str] = set()
    by_name: Dict[str, List[str]] = defaultdict(list)
    for folder in dir_files:
        while folder and folder not in seen:
            seen.add(folder)
            parent, _, last = folder.rpartition("/")
            by_name[last].append(folder)
            folder = parent
    return by_name


def _freeze(table: Mapping[str, List[str]]) -> Mapping[str, Tuple[str, ...]]:
    """A read-only copy with tuple values."""
    return MappingProxyType({key: tuple(values) for key, values in table.items()})


def imports_of(rel: str, data: bytes, index: ModuleIndex) -> Tuple[str, ...]:
    """Paths of tree files that `data` (the raw bytes of file `rel`) imports.

    Sorted, unique, never `rel` itself; ``()`` for a language this module
    does not know or a file that imports nothing of the tree.
    """
    parser = _PARSERS.get(language_of(rel).name)
    if parser is None:
        return ()
    found = parser(rel, data, index)
    found.discard(rel)
    return tuple(sorted(found))


@dataclass(frozen=True)
class TreeImports:
    """One cycle's import graph, shared by every reader of it (the related files, the
    lifts of feedback): the `ModuleIndex` of the cycle's paths is built on first use and
    each file's imports are parsed once. A file's imports depend only on its path, its
    bytes and the paths of the tree, so answers equal `imports_of` over `build_index`."""

    rels: Sequence[str]
    _of: Dict[str, Tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def index(self) -> ModuleIndex:
        return build_index(self.rels)

    def of(self, rel: str, data: bytes) -> Tuple[str, ...]:
        """`imports_of(rel, data, index)`, parsed once: `data` must be what every caller
        hands for `rel` in this cycle (its document's head)."""
        found = self._of.get(rel)
        if found is None:
            found = self._of[rel] = imports_of(rel, data, self.index)
        return found


# The file that stands for a package or a directory's module (its re-exports).
PACKAGE_INDEX_NAMES = frozenset(("__init__.py", "mod.rs", "index.js", "index.mjs", "index.cjs", "index.jsx",
                                 "index.ts", "index.tsx", "index.mts"))


def own_package_index(rel: str, module: str) -> bool:
    """Whether ``rel`` is the index of a package ``module`` lives in (``src/flask/__init__.py``
    for ``src/flask/cli.py``): the edge between them is the package's layout (the module
    imports its package, the index re-exports the module), no dependency of a fix: not
    a file to expand to, nor one an unsure loop's lead lifts (cycle._with_leaders)."""
    folder, _, name = rel.rpartition("/")
    return name in PACKAGE_INDEX_NAMES and (not folder or module.startswith(folder + "/"))


def importers_of(targets: Iterable[str], graph: Mapping[str, Sequence[str]]) -> Dict[str, Tuple[str, ...]]:
    """Reverse edges: for each of `targets`, the sorted files of `graph` that import it.

    `graph` maps a file to its imports (as returned by `imports_of`).  Every
    target gets an entry, empty when nothing imports it; keys come out sorted.
    """
    reverse: Dict[str, List[str]] = {target: [] for target in sorted(set(targets))}
    for source in sorted(graph):
        for target in graph[source]:
            importers = reverse.get(target)
            if importers is not None and target != source:
                importers.append(source)
    return {target: tuple(sorted(set(importers))) for target, importers in reverse.items()}


def _text(raw: bytes) -> str:
    """Decode a small matched part; bad bytes become U+FFFD and fail identifier checks."""
    return raw.decode("utf-8", "replace")


def _parent(folder: str) -> str:
    return folder.rpartition("/")[0]


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _common_depth(folder: str, path: str) -> int:
    """How many leading directory components `path` shares with `folder`."""
    depth = 0
    for mine, theirs in zip(folder.split("/"), path.split("/")[:-1]):
        if not mine or mine != theirs:
            break
        depth += 1
    return depth


def _nearest(candidates: Sequence[str], folder: str) -> List[str]:
    """The candidates sharing the most leading directories with `folder` (all tied ones, sorted)."""
    if len(candidates) <= 1:
        return list(candidates)
    depths = [_common_depth(folder, path) for path in candidates]
    best = max(depths)
    return sorted(path for path, depth in zip(candidates, depths) if depth == best)


def _by_suffix(suffix: str, index: ModuleIndex) -> List[str]:
    """Files whose path is `suffix` or ends with ``/`` + `suffix`."""
    tail = "/" + suffix
    named = index.files_by_name.get(suffix.rpartition("/")[2], ())
    return [path for path in named if path == suffix or path.endswith(tail)]


# --- Python -----------------------------------------------------------------------
def _without_main_blocks(data: bytes) -> bytes:
    """``data`` less its top-level ``if __name__ == "__main__":`` blocks."""
    if b"__main__" not in data:
        return data
    kept, pos = [], 0
    for m in _PY_MAIN_BLOCK.finditer(data):
        if m.start() < pos:
            continue
        kept.append(data[pos:m.start()])
        end = _PY_TOP_LEVEL.search(data, m.end())
        pos = end.start() if end is not None else len(data)
    kept.append(data[pos:])
    return b"".join(kept)


def _python_imports(rel: str, data: bytes, index: ModuleIndex) -> Set[str]:
    """``import``, ``from ... import`` and ``import_module("...")`` targets, less those
    of the file's ``__main__`` block."""
    here = _parent(rel)
    data = _without_main_blocks(data)
    found: Set[str] = set()
    for match in _line_matches(_PY_IMPORT, data, b"import"):
        for dotted in _plain_import_names(_text(match.group(1))):
            found.update(_py_file(_py_resolve(dotted, here, index), index))
    for dots, module_raw, clause in _py_from_clauses(data):
        level = len(dots)
        module = _text(module_raw)
        names = _from_import_names(_text(clause))
        found.update(_py_from(level, module, names, here, index))
    # why: a substring test is ~10x cheaper than scanning with an unanchored pattern
    matches = _PY_IMPORT_MODULE.finditer(data) if b"import_module" in data else ()
    for match in matches:
        dotted = _text(match.group(1))
        if _valid_dotted(dotted):
            found.update(_py_file(_py_resolve(dotted, here, index), index))
    return found


def _valid_dotted(dotted: str) -> bool:
    """True for ``a.b.c`` made of identifiers (so prose after ``import`` is dropped)."""
    return all(_IDENT.match(part) for part in dotted.split("."))


def _plain_import_names(clause: str) -> List[str]:
    """``a.b as c, d`` -> ["a.b", "d"]; anything that is not that shape (prose) -> []."""
    names = []
    for item in clause.split(","):
        words = item.split()
        if len(words) == 1 or (len(words) == 3 and words[1] == "as"):
            if _valid_dotted(words[0]):
                names.append(words[0])
                continue
        return []
    return names


def _from_import_names(clause: str) -> List[str]:
    """The imported names of a ``from M import ...`` clause, ``*`` included."""
    lines = [line.split("#", 1)[0] for line in clause.replace("\\\n", " ").splitlines()]
    body = " ".join(lines).strip().strip("()")
    names = []
    for item in body.split(","):
        words = item.split()
        if words and (words[0] == "*" or _IDENT.match(words[0])):
            names.append(words[0])
    return names


def _py_file(module: Optional[str], index: ModuleIndex) -> List[str]:
    """The file of module path `module` as a 0- or 1-item list."""
    if module is None:
        return []
    path = index.py_modules.get(module)
    return [path] if path else []


def _py_from(level: int, module: str, names: List[str], here: str, index: ModuleIndex) -> Set[str]:
    """Files for ``from [dots]module import names``: the submodules named, and the
    module itself when some name is defined in it rather than being a submodule."""
    if module and not _valid_dotted(module):
        return set()
    if level:
        base = _py_relative_base(level, here)
        if base is None:
            return set()
        target: Optional[str] = _join(base, module.replace(".", "/")) if module else base
    else:
        target = _py_resolve(module, here, index)
    found: Set[str] = set()
    from_module = False
    for name in names:
        sub = _py_submodule(target, module, level, name, here, index)
        if sub:
            found.add(sub)
        else:
            from_module = True
    if from_module and target is not None:
        found.update(_py_file(target, index))
    return found


def _py_submodule(
    target: Optional[str], module: str, level: int, name: str, here: str, index: ModuleIndex
) -> Optional[str]:
    """The file of submodule `name` of `target`, or None when `name` is not one."""
    if name == "*":
        return None
    if target is not None:
        return index.py_modules.get(_join(target, name))
    if level:
        return None
    # why: a namespace package (no __init__.py) has no file of its own to resolve
    found = _py_file(_py_resolve(f"{module}.{name}", here, index), index)
    return found[0] if found else None


def _py_relative_base(level: int, here: str) -> Optional[str]:
    """The package directory `level` dots refer to from a file in `here`."""
    base = here
    for _ in range(level - 1):
        if not base:
            return None
        base = _parent(base)
    return base


def _py_resolve(dotted: str, here: str, index: ModuleIndex) -> Optional[str]:
    """Module path (e.g. ``src/a/b``) of absolute module `dotted`, or None.

    A source root is any directory that is not itself a package: that rules out
    `import json` landing on ``pkg/serializers/json.py``.  Among roots, the
    nearest ancestor of the importer wins, then the shallowest directory.
    """
    want = dotted.replace(".", "/")
    tail = "/" + want
    best: Optional[Tuple[Tuple[int, int, str], str]] = None
    for module in index.py_by_tail.get(want.rpartition("/")[2], ()):
        if module == want:
            root = ""
        elif module.endswith(tail):
            root = module[: -len(tail)]
            if root in index.py_packages:
                continue
        else:
            continue
        rank = _root_rank(root, here)
        if best is None or rank < best[0]:
            best = (rank, module)
    return best[1] if best else None


def _root_rank(root: str, here: str) -> Tuple[int, int, str]:
    """Sort key of a source root: ancestors of the importer (nearest first), then others (shallowest first)."""
    depth = root.count("/") + 1 if root else 0
    if not root or here == root or here.startswith(root + "/"):
        return (0, -depth, root)
    return (1, depth, root)


# --- JavaScript / TypeScript ----------------------------------------------------------
def _js_imports(rel: str, data: bytes, index: ModuleIndex) -> Set[str]:
    """Targets of ``import``/``export ... from``, ``require()`` and ``import()``."""
    here = _parent(rel)
    order = JS_FIRST_FOR_JS if rel.rpartition(".")[2] in ("js", "jsx", "mjs", "cjs") else JS_EXTENSIONS
    found: Set[str] = set()
    for match in _JS_SPEC.finditer(data):
        target = _js_resolve(_text(match.group(2)), here, order, index)
        if target:
            found.add(target)
    for match in _JS_DIRNAME_PATH.finditer(data):
        if match.group(1) is not None:
            parts = [_text(m.group(2)) for m in _JS_PATH_PART.finditer(match.group(1))]
            spec = posixpath.join(here, *parts) if all(parts) and not any(p.startswith("/") for p in parts) else ""
        elif match.group(4) is not None:
            spec = posixpath.join(here, _text(match.group(4)))
        else:
            spec = _join(here, _text(match.group(6)).lstrip("/"))
        base = posixpath.normpath(spec) if spec else ""
        if base and base != "." and not (base == ".." or base.startswith("../")) \
                and base not in index.dirs_by_name.get(base.rpartition("/")[2], ()):
            target = _js_file(base, order, index, directory_index=False)
            if target:
                found.add(target)
    return found


def _js_bases(spec: str, here: str) -> List[str]:
    """Tree paths (without extension resolution) a specifier may name."""
    spec = spec.split("?", 1)[0].split("#", 1)[0]
    if spec in (".", "..") or spec.startswith(("./", "../")):
        return [posixpath.normpath(posixpath.join(here, spec))]
    if spec.startswith(("@/", "~/")):
        return [root + spec[2:] for root in JS_ALIAS_ROOTS]
    if spec.startswith("/"):
        return [spec.lstrip("/")]
    if ":" in spec or "/" not in spec:
        return []  # node:fs, https://... and bare package names ('react') are never tree files
    return [posixpath.normpath(root + spec) for root in JS_BASE_ROOTS]


def _js_resolve(spec: str, here: str, order: Sequence[str], index: ModuleIndex) -> Optional[str]:
    for base in _js_bases(spec, here):
        if base == ".":
            base = ""
        if base == ".." or base.startswith("../"):
            continue
        found = _js_file(base, order, index)
        if found:
            return found
    return None


def _js_source_of(base: str, index: ModuleIndex) -> Optional[str]:
    """The TypeScript source of a ``.js`` path (``x.ts`` for ``x.js``), when the tree has it."""
    stem, dot, ext = base.rpartition(".")
    if dot and "/" not in ext and ext in ("js", "jsx", "mjs", "cjs"):
        for swap in (".ts", ".tsx", ".mts", ".cts"):
            if stem + swap in index.files:
                return stem + swap
    return None


def _js_file(base: str, order: Sequence[str], index: ModuleIndex, directory_index: bool = True) -> Optional[str]:
    """The file a specifier's path names: itself, its TypeScript source, itself with an
    extension, or (``directory_index``) its ``index.*``."""
    files = index.files
    if base in files:
        return base
    source = _js_source_of(base, index)  # why: ESM TypeScript writes `./x.js` for the source file x.ts
    if source:
        return source
    for ext_ in order:
        if base + ext_ in files:
            return base + ext_
    if not directory_index:
        return None
    index_base = _join(base, "index")
    for ext_ in order:
        if index_base + ext_ in files:
            return index_base + ext_
    return None


# --- Go ---------------------------------------------------------------------------
def _go_imports(rel: str, data: bytes, index: ModuleIndex) -> Set[str]:
    """Non-test files of every imported package found in the tree."""
    paths = [_text(m.group(1)) for m in _line_matches(_GO_SINGLE, data, b"import")]
    for block in _go_blocks(data):
        paths.extend(_text(m.group(1)) for m in _GO_BLOCK_PATH.finditer(block))
    found: Set[str] = set()
    module_prefixes: Set[str] = set()
    unresolved = []
    for path in sorted(set(paths)):
        folder = _go_dir(path, index)
        if folder is None:
            unresolved.append(path)
            continue
        found.update(_go_files(folder, index))
        if path.endswith("/" + folder):
            module_prefixes.add(path[: -len(folder) - 1])
    # why: the module's root package has no suffix in the tree; other imports of
    # this file reveal the module path ("github.com/x/y/util" -> "util").
    for path in unresolved:
        if path in module_prefixes:
            found.update(_go_files("", index))
    return found


def _go_files(folder: str, index: ModuleIndex) -> List[str]:
    return [
        path
        for path in index.dir_files.get(folder, ())
        if path.endswith(".go") and not path.endswith(GO_TEST_SUFFIX)
    ]


def _go_dir(import_path: str, index: ModuleIndex) -> Optional[str]:
    """The tree directory an import path names, by the longest matching suffix.

    A directory equal to a suffix of the path, from the root or from a
    top-level ``src/`` (GOPATH layouts, the Go tree itself), always counts.  A
    deeper directory ending with the suffix (vendor/, a module kept in a
    subdirectory) counts only when the suffix has two components or more and
    the path is a module path (a dot in its first element): so the standard
    library's "encoding/json" never lands on internal/encoding/json, while
    "github.com/a/b/pkg/log" finds go/pkg/log.
    """
    parts = import_path.strip("/").split("/")
    if not parts[-1]:
        return None
    module_like = "." in parts[0]
    best: Optional[Tuple[Tuple[int, int, int, str], str]] = None
    for folder in index.dirs_by_name.get(parts[-1], ()):
        if folder not in index.go_dirs:
            continue
        mine = folder.split("/")
        shared = _shared_tail(mine, parts)
        anchored = shared == len(mine) or (shared == len(mine) - 1 and mine[0] == "src")
        if not anchored and (shared < 2 or not module_like):
            continue
        rank = (-shared, 0 if anchored else 1, len(mine), folder)
        if best is None or rank < best[0]:
            best = (rank, folder)
    return best[1] if best else None


def _shared_tail(mine: List[str], theirs: List[str]) -> int:
    """How many trailing components two paths share."""
    shared = 0
    for a, b in zip(reversed(mine), reversed(theirs)):
        if a != b:
            break
        shared += 1
    return shared


# --- Rust -------------------------------------------------------------------------
def _rust_imports(rel: str, data: bytes, index: ModuleIndex) -> Set[str]:
    """Files of ``mod foo;`` declarations and of the modules ``use`` paths name."""
    here, _, name = rel.rpartition("/")
    found: Set[str] = set()
    child_dir = here if name in RUST_ROOT_FILES else _join(here, name[:-3])
    for match in _RS_MOD.finditer(data):
        module = _text(match.group(1))
        target = _rust_module_file(_join(child_dir, module), index)
        if target is None and child_dir != here:
            target = _rust_module_file(_join(here, module), index)  # other crate roots: bins, tests
        if target:
            found.add(target)
    crate_root = _rust_crate_root(here, index)
    current = _rust_module_path(rel, crate_root)
    # A binary (``src/main.rs``, ``src/bin/x.rs``) is a crate of its own beside the library
    # in the same ``src``: it names that library as any other crate does.
    binary = rel == _join(crate_root, "main.rs") or rel.startswith(_join(crate_root, "bin") + "/")
    seen: Set[Tuple[str, ...]] = set()
    for tree in _rust_use_trees(data):
        for path in _expand_use_tree(_text(tree)):
            if tuple(path) in seen:
                continue  # (a path the file imports twice resolves as it did)
            if len(seen) >= MAX_USE_PATHS:
                return found
            seen.add(tuple(path))
            target = _rust_use(path, crate_root, current, index, binary)
            if target:
                found.add(target)
    return found


def _rust_module_file(base: str, index: ModuleIndex) -> Optional[str]:
    for candidate in (base + ".rs", base + "/mod.rs"):
        if candidate in index.files:
            return candidate
    return None


def _rust_crate_root(here: str, index: ModuleIndex) -> str:
    """The nearest directory above `here` holding lib.rs or main.rs, else the nearest `src`."""
    folder: Optional[str] = here
    fallback = None
    while folder is not None:
        if _join(folder, "lib.rs") in index.files or _join(folder, "main.rs") in index.files:
            return folder
        if fallback is None and folder.rpartition("/")[2] == "src":
            fallback = folder
        folder = _parent(folder) if folder else None
    return fallback if fallback is not None else here


def _rust_module_path(rel: str, crate_root: str) -> List[str]:
    """``src/a/b.rs`` -> ["a", "b"]; ``src/a/mod.rs`` -> ["a"]; ``src/lib.rs`` -> []."""
    if crate_root and not rel.startswith(crate_root + "/"):
        return []
    inner = rel[len(crate_root) + 1 :] if crate_root else rel
    parts = inner[:-3].split("/") if inner.endswith(".rs") else inner.split("/")
    if parts and parts[-1] == "mod":
        parts.pop()
    if len(parts) == 1 and parts[0] in ("lib", "main"):
        return []
    return parts


def _split_top(text: str) -> List[str]:
    """Split on commas that are not inside braces."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def _expand_use_tree(tree: str, depth: int = 0, prefix: Tuple[str, ...] = ()) -> List[List[str]]:
    """``crate::a::{b::C, d as e, self}`` -> [[crate,a,b,C], [crate,a,d], [crate,a]].

    Braces nested deeper than MAX_USE_TREE_DEPTH give nothing; a path keeps its first
    MAX_USE_PARTS_KEPT parts, and an item a brace repeats is read once: the work stays
    linear in the tree (a crafted megabyte of ``use c::a::a::...::{a, a, ...};`` took minutes).
    """
    if depth > MAX_USE_TREE_DEPTH:
        return []
    tree = " ".join(tree.split())
    brace = tree.find("{")
    if brace < 0:
        head = tree.split(" as ")[0].strip()
        parts = list(prefix) + [part for part in (p.strip() for p in head.split("::")) if part]
        if parts and parts[-1] in ("self", "*"):  # (an empty part: a leading `::`, an extern crate)
            parts.pop()
        parts = parts[:MAX_USE_PARTS_KEPT]
        return [parts] if parts and all(_IDENT.match(part) for part in parts) else []
    if not tree.endswith("}"):
        return []
    head = tuple(part for part in (p.strip() for p in tree[:brace].rstrip(": ").split("::")) if part)
    joined = (prefix + head)[:MAX_USE_PARTS_KEPT]
    paths: List[List[str]] = []
    for item in dict.fromkeys(_split_top(tree[brace + 1 : -1])):
        paths.extend(_expand_use_tree(item, depth + 1, joined))
    return paths


def _rust_use(path: List[str], crate_root: str, current: List[str], index: ModuleIndex,
              binary: bool = False) -> Optional[str]:
    """The file of the deepest module named by a `use` path, or None. ``binary``: the
    importing file is a binary crate's, which names its package's library by name."""
    head = path[0]
    other_root: Optional[str] = None
    if head == "crate":
        bases = [(crate_root, path[1:])]
    elif head in ("self", "super"):
        module = list(current)
        rest = path
        while rest and rest[0] in ("self", "super"):
            if rest[0] == "super":
                if not module:
                    return None
                module.pop()
            rest = rest[1:]
        bases = [(_join(crate_root, "/".join(module)) if module else crate_root, rest)]
    else:
        here_dir = _join(crate_root, "/".join(current)) if current else crate_root
        # why: 2018 paths start at the current module; 2015 paths at the crate root
        bases = [(here_dir, path), (crate_root, path)]
        other = index.rust_crates.get(head) if head not in RUST_BUILTIN_CRATES else None
        if other is not None and (other != crate_root or binary):
            # Another crate of the workspace (ModuleIndex.rust_crates): the module its path
            # names, else its root, which defines or re-exports the name imported. In a
            # submodule a 2018 path names that crate, not a module at the crate's root: it
            # comes before that one, its root included.
            other_root = _join(other, "lib.rs")
            if current:
                bases = [(here_dir, path), (other, path[1:])]
            else:
                bases.append((other, path[1:]))
    for base, rest in bases:
        # Every prefix of the path under ``base``, built once (deepest looked at first).
        prefixes = list(accumulate(rest[:MAX_USE_PATH_PARTS], lambda a, b: a + "/" + b))
        for module in reversed(prefixes):
            target = _rust_module_file(_join(base, module), index)
            if target:
                return target
    return other_root


# --- Java / Kotlin ---------------------------------------------------------------------
def _jvm_imports(rel: str, data: bytes, index: ModuleIndex) -> Set[str]:
    """Class files of ``import`` lines; a package's files for ``.*``."""
    here = _parent(rel)
    found: Set[str] = set()
    for match in _line_matches(_JVM_IMPORT, data, b"import"):
        parts = _text(match.group(1)).strip(".").split(".")
        if len(parts) < 2:
            continue
        if match.group(2):
            folder_files = _jvm_package(parts, here, index)
            if folder_files:
                found.update(folder_files)
                continue
        found.update(_jvm_class(parts, here, index))
    return found


def _jvm_class(parts: List[str], here: str, index: ModuleIndex) -> List[str]:
    """``a.b.C`` -> the nearest ``a/b/C.java``; drops trailing parts for nested
    classes and static members, but keeps a package plus a class (two parts)."""
    for length in range(len(parts), 1, -1):
        stem = "/".join(parts[:length])
        candidates = [path for ext in JVM_EXTENSIONS for path in _by_suffix(stem + ext, index)]
        if candidates:
            return _nearest(candidates, here)
    return []


def _jvm_package(parts: List[str], here: str, index: ModuleIndex) -> List[str]:
    """``a.b.*`` -> the source files of the nearest directory ending in ``a/b``."""
    want = "/".join(parts)
    folders = [
        folder
        for folder in index.dirs_by_name.get(parts[-1], ())
        if folder == want or folder.endswith("/" + want)
    ]
    # _nearest compares the directories of paths, so give each folder a file name
    for probe in _nearest([folder + "/_" for folder in folders], here):
        folder = probe[:-2]
        return [path for path in index.dir_files.get(folder, ()) if path.endswith(JVM_EXTENSIONS)]
    return []


# --- C / C++, and the quoted paths other languages load too ------------------------
def _quoted_path(spec: str, here: str, ext: str, index: ModuleIndex, beside: bool = True) -> Set[str]:
    """A loaded path (an ``#include``, a ``require``): beside the file first (when
    ``beside``), then the one file nearest to it that ends in it (a ``../x.h`` the file's
    directory could not resolve: its tail); ``ext`` added when the path has none."""
    spec = spec.strip()
    if not spec or spec.startswith("/"):
        return set()
    name = spec if posixpath.splitext(spec)[1] else spec + ext
    if beside:
        local = posixpath.normpath(posixpath.join(here, name))
        if local in index.files:
            return {local}
    tail = posixpath.normpath(name)
    while tail.startswith("../"):
        tail = tail[3:]
    nearest = _nearest(_by_suffix(tail, index), here)
    # why: a name two files end in is no evidence of either
    return {nearest[0]} if len(nearest) == 1 else set()


def _c_imports(rel: str, data: bytes, index: ModuleIndex) -> Set[str]:
    """``#include``/``#import`` targets: beside the file first (quotes only), then by suffix."""
    here = _parent(rel)
    found: Set[str] = set()
    for match in _line_matches(_C_INCLUDE, data, b"#"):
        found |= _quoted_path(_text(match.group(2)), here, "", index, beside=match.group(1) == b'"')
    return found


# --- Ruby, PHP, Lua, Dart -------------------------------------------------------------
def _ruby_imports(rel: str, data: bytes, index: ModuleIndex) -> Set[str]:
    """``require_relative 'x'`` beside the file; ``require 'a/b'`` / ``load`` by suffix."""
    here = _parent(rel)
    found: Set[str] = set()
    for match in _RB_REQUIRE.finditer(data):
        relative = match.group(1) == b"require_relative"
        found |= _quoted_path(_text(match.group(2)), here, ".rb", index, beside=relative)
    return found


def _php_imports(rel: str, data: bytes, index: ModuleIndex) -> Set[str]:
    """``require``/``include`` paths; ``use A\\B\\C;`` by the longest suffix of ``A/B/C.php``
    one file ends in (a PSR-4 tree maps the namespace's root to ``src/``)."""
    here = _parent(rel)
    found: Set[str] = set()
    for match in _PHP_INCLUDE.finditer(data):
        spec = _text(match.group(2))
        found |= _quoted_path(spec.lstrip("/") if match.group(1) else spec, here, ".php", index)
    for match in _PHP_USE.finditer(data):
        parts = [p for p in _text(match.group(1)).split("\\") if p]
        for start in range(len(parts) - 1):
            hits = _nearest(_by_suffix("/".join(parts[start:]) + ".php", index), here)
            if hits:
                if len(hits) == 1:
                    found.add(hits[0])
                break
    return found


def _lua_imports(rel: str, data: bytes, index: ModuleIndex) -> Set[str]:
    """``require("a.b")``: ``a/b.lua`` or ``a/b/init.lua`` by suffix."""
    here = _parent(rel)
    found: Set[str] = set()
    for match in _LUA_REQUIRE.finditer(data):
        base = _text(match.group(1)).replace(".", "/")
        found |= (_quoted_path(base + ".lua", here, "", index, beside=False)
                  or _quoted_path(base + "/init.lua", here, "", index, beside=False))
    return found


def _dart_imports(rel: str, data: bytes, index: ModuleIndex) -> Set[str]:
    """``import 'x.dart'`` beside the file; ``package:name/x.dart`` by suffix (``lib/x.dart``)."""
    here = _parent(rel)
    found: Set[str] = set()
    for match in _DART_IMPORT.finditer(data):
        spec = _text(match.group(2))
        if spec.startswith("dart:"):
            continue
        if spec.startswith("package:"):
            found |= _quoted_path(spec.partition("/")[2], here, ".dart", index, beside=False)
        else:
            found |= _quoted_path(spec, here, ".dart", index)
    return found


# The parser for each language of lang.language_of (which owns the extension table).
_PARSERS: Mapping[str, Callable[[str, bytes, ModuleIndex], Set[str]]] = MappingProxyType(
    {
        PYTHON.name: _python_imports,
        JS.name: _js_imports,
        GO.name: _go_imports,
        RUST.name: _rust_imports,
        JVM.name: _jvm_imports,
        SCALA.name: _jvm_imports,
        GROOVY.name: _jvm_imports,
        C.name: _c_imports,
        RUBY.name: _ruby_imports,
        PHP.name: _php_imports,
        LUA.name: _lua_imports,
        DART.name: _dart_imports,
    }
)
