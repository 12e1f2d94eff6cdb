"""The index of a tree: one per resolved root, shared by every task and cycle, always fresh.

A cycle must know, for every candidate file and keyword, how often the keyword's needles
occur, whether the path names it and whether the file defines it. Counting every needle
over every byte is what made a cycle slow; the index keeps, per file, what answers those
questions without reading the file again:

- its identity when indexed: size, ``mtime_ns``, ``ctime_ns``, device and inode (what
  git's index compares), or that it is binary;
- its lower-cased text (for the few files a definition check or a summary needs);
- its distinct *tokens* (maximal runs of ``[a-z0-9_]`` in the lower-cased text), each
  with how often the file holds it, inverted per segment into a sorted vocabulary and a
  posting list per token. A needle made of those bytes only occurs inside tokens, so its
  count in a file is the sum over the tokens containing it of (its non-overlapping count
  in the token) x (the token's count in the file): exactly ``bytes.count``, found by
  ``bytes.find`` over the vocabulary (about a MB for django) instead of the tree's bytes.
  Other needles (``rate limit``, ``a/b.py``) are counted in the text of the files holding
  a token that contains each of their identifier runs.
- its distinct *definition-site tokens*: after a definition word of its language
  (``def ``, ``class ``, ...), at a line's start, after ``) `` (Go), before ``(``, ``:``,
  ``=`` or a statement's end (languages with ``calls``/``exports``), on a Rust ``impl``
  line. ``match.defines`` can find a definition of a needle only at the start of such a
  token, so a file with none starting with the needle defines nothing by it and is not
  read; the others are checked by ``match.defines`` itself, on the indexed text.

Every count, path match and definition is therefore what ``match.match_document`` gives:
results are identical with and without the index.

Storage (``references/index.md`` says why): a directory per tree under the user's cache
directory (``$AGENTIC_SEARCH_INDEX_DIR``, ``--index-dir``, else
``$XDG_CACHE_HOME/agentic-search`` or ``~/.cache/agentic-search``), never inside the tree,
holding immutable *segment* files (``seg-*.idx``: a file table, postings and texts) and a
``manifest.json`` naming the live segments, oldest first. A segment is written to a
temporary file and renamed into place, then the manifest is replaced the same way, under a
non-blocking lock: readers never lock, a crash leaves the previous manifest and its
segments, two writers never corrupt anything (the later one's manifest keeps the other's
segments). For a path the newest segment holding it is the one consulted. Beside them,
two stores of answers keyed by segment (true while the segment lives): ``needles.idx``,
each needle's count and definitions per file (:class:`NeedleStore`), and ``facts.idx``,
what a cycle derived from a file's bytes besides matching -- its tags' candidates and its
imports (:class:`FactStore`) -- so that later cycles and tasks read them back.

Freshness, each cycle: the walk's stat of every candidate is compared with the newest
entry for its path; only an equal one is served. Changed, added and replaced files are read
from disk and indexed into a new segment (vanished ones are simply never asked for); a
file whose mtime or ctime lay within :data:`RACY_WINDOW_NS` of its read is not recorded
(git's racy-clean rule: a second write in the same tick could keep the stat), so a later
cycle indexes it. When there are more than :data:`MAX_SEGMENTS` segments they are merged
into one. A file that is not ours (owner, mode, symlink), of another format, version,
root or matcher (a hash of match.py, lang.py and this file), or damaged is not used and is
rebuilt, with one line on stderr; the two stores carry a CRC-32 of their contents (each
answer's, the fact file's), so that damage inside them is caught too. A segment file
carries a CRC-32 of each table (checked when it is loaded) and of each file's text
(checked when the text is read: a damaged text is read from the file instead).

Example::

    >>> index = open_index("/path/to/repo")                   # doctest: +SKIP
    >>> docs, _, _ = load_documents(candidates, index)         # engine.py  # doctest: +SKIP
    >>> rank_documents(docs, keywords, words, cache=index)     # doctest: +SKIP
    >>> index.save()                                           # doctest: +SKIP
"""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import re
import stat as stat_mod
import sys
import time
import zlib
from array import array
from bisect import bisect_right
from collections import Counter
from functools import partial
from itertools import accumulate, chain, count, repeat
from operator import add
from typing import Any, Callable, Iterable, Optional, Sequence

from hints import _say as notice  # (hints.py's own: one diagnostic line, best effort)
from . import fsafe, lang
from . import match as match_mod
from . import walk as walk_mod
from . import score as score_mod
from .forkmap import fork_map
from .lazyre import compile_later
from .match import Document, FileMatch, compile_keywords, defines, match_many, path_match
from .paths import member_module, outside_tails
from .progress import QUIET, Progress
from .query import Keyword
from .state import atomic_write

FORMAT_NAME = "agentic-search-index"
FORMAT_VERSION = 8  # 2: each file's role (lang.file_role) recorded; 3: CRC-32 of tables and texts;
# 4: the role read from the file's opening comments too (lang.content_role); 5: a mark
# quoted there no longer counts, one may span lines, a Go doc.go of comments is docs;
# 6: Flow's .js.flow stubs are declarations, Gradle's and Maven's wrappers build files,
# a short needle counts where a word starts; 7: a help text with no extension and a citation
# or code-owners file are docs, a Go method's result type is not defined there (the needle
# store keeps definitions); 8: a .txt file in a templates folder is data, a program named
# example.<ext> at the root or in src/ an example
SEGMENT_MAGIC = b"agentic-search-segment"
STORE_MAGIC = b"agentic-search-needles"
# Where the indexes live: this variable, else the XDG cache directory.
ENV_DIR = "AGENTIC_SEARCH_INDEX_DIR"
# The most text (MiB) one tree's index covers; beyond it files are counted as without it.
ENV_MAX_MB = "AGENTIC_SEARCH_INDEX_MAX_MB"
DEFAULT_MAX_MB = 1024  # a large monorepo's source; more is rarely worth the disk
# All trees' indexes together (MiB): the least recently used trees are dropped beyond it.
TOTAL_MAX_MB = 8192
# Text (MiB) indexed in one cycle at most: a larger tree is indexed over several cycles
# (the rest is counted as without the index meanwhile), so no cycle stalls for minutes.
BUILD_STEP_BYTES = 512 << 20
DIR_NAME = "agentic-search"
MANIFEST = "manifest.json"
STORE_NAME = "needles.idx"
# Answers kept per tree: a task has a few dozen needles; many tasks' worth are kept, and
# their common words (``name``, ``field``, ``user``) recur from task to task.
STORE_MAX_ENTRIES = 4000
STORE_MAX_MB = 32
FACTS_NAME = "facts.idx"
FACTS_MAGIC = b"agentic-search-facts"
# Files whose facts are kept per tree: several tasks' worth of results and import graphs
# (a few hundred files a cycle), small enough to read back in a few milliseconds.
FACTS_MAX_ENTRIES = 6000
LOCK_NAME = "lock"
SEG_PREFIX = "seg-"
SEG_SUFFIX = ".idx"
TMP_PREFIX = ".tmp-"
# A file modified this close to the moment it was read may change again without a new
# mtime: not recorded (walk.RACY_WINDOW_NS).
RACY_WINDOW_NS = walk_mod.RACY_WINDOW_NS
# Segments at most before they are merged into one (each adds a lookup per needle).
MAX_SEGMENTS = 8
# Unreferenced segment files younger than this are left alone: a reader that has just
# read an older manifest may be opening them.
GC_GRACE_S = 120
# How long a save waits for another process's save before giving up (it is only an index).
LOCK_WAIT_S = 1.0
LOCK_POLL_S = 0.02
# Bytes of a segment's first line we look at.
_HEAD_MAX = 128
# Mode bits that let someone else rewrite an index file: such a file is not trusted.
_FOREIGN_WRITE = stat_mod.S_IWGRP | stat_mod.S_IWOTH

_IDENT = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_")
# Lower-cased text -> tokens separated by spaces (bytes.translate + split run in C).
_TOKEN_TABLE = bytes(c if c in _IDENT else 0x20 for c in range(256))
_TOKEN_RE = re.compile(rb"[a-z0-9_]+")
_LINE_START_RE = re.compile(rb"\n([a-z0-9_]+)")
_GO_RECEIVER = b") "
# File names are stored as the OS spells them (undecodable bytes survive).
_FS_ENCODING = sys.getfilesystemencoding()
_FS_ERRORS = sys.getfilesystemencodeerrors()

# (size, mtime_ns, ctime_ns, device, inode) of a file: what must be unchanged to serve it.
Stat = tuple


def stat_key(cand: Any) -> Optional[Stat]:
    """The stat of a walked file to compare with the recorded one: the walk's own
    (walk.FileEntry carries it); for a candidate without an inode, an ``lstat`` now."""
    if getattr(cand, "ino", 0):
        return (cand.size, cand.mtime_ns, cand.ctime_ns, cand.dev, cand.ino)
    try:
        st = os.lstat(cand.path)
    except (OSError, TypeError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino)


# The modules besides match.py, lang.py and this file whose answers the index keeps: the
# facts a cycle stores (report.ranked_names' tags, imports.imports_of's imports). An
# update of either would otherwise be served the older version's facts.
_FACT_MODULES = ("report.py", "imports.py")


def matcher_fingerprint() -> Optional[str]:
    """A hash of the code whose answers the index stands for: match.py, lang.py, this
    file, and the modules whose facts it keeps (:data:`_FACT_MODULES`)."""
    h = hashlib.sha256()
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        paths = [mod.__file__ for mod in (match_mod, lang, sys.modules[__name__])]
        for path in paths + [os.path.join(here, name) for name in _FACT_MODULES]:
            with open(path, "rb") as fh:
                h.update(fh.read())
    except (OSError, TypeError, AttributeError):
        return None
    return h.hexdigest()[:16]


def base_dir(override: Optional[str] = None) -> str:
    """Where indexes live: ``override`` (--index-dir), $AGENTIC_SEARCH_INDEX_DIR, else the
    user's cache directory ($XDG_CACHE_HOME or ~/.cache) + ``agentic-search``."""
    if override:
        return fsafe.absolute(override)
    env = os.environ.get(ENV_DIR)
    if env:
        try:
            return fsafe.absolute(env)
        except OSError as exc:
            # (relative, and the current directory is gone: the default instead; a '..' the
            # system cannot go through says so, once)
            if exc.filename:
                _said_once(f"retrieve_loop.py: ${ENV_DIR} {env}: the '..' after {exc.filename} leads nowhere "
                           f"({exc.strerror}); the default directory is used")
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(xdg, DIR_NAME)
    return os.path.join(fsafe.home_dir(), ".cache", DIR_NAME)


def _max_bytes() -> int:
    raw = os.environ.get(ENV_MAX_MB, "")
    try:
        mb = int(raw) if raw else DEFAULT_MAX_MB
    except ValueError:
        mb = DEFAULT_MAX_MB
    return max(mb, 0) << 20


@functools.lru_cache(maxsize=None)
def _said_once(line: str) -> None:
    """One line on stderr, once per process however often the same thing is found."""
    notice(line)


def _warn(what: str, why: str) -> None:
    """One line on stderr for an index that is not used as it is."""
    notice(f"retrieve_loop.py: index {what}: {why}")


def _kind_of(st: os.stat_result) -> tuple[str, str]:
    """(why, what becomes of it) for an index file that is no regular file: a directory in
    its place cannot be replaced, so nothing is rebuilt while it stays (a FIFO or a link
    is: the save renames a file over it)."""
    if stat_mod.S_ISDIR(st.st_mode):
        return "a directory", "not used (remove it to let the index be saved)"
    return "not a regular file", "rebuilt"


def _untrusted(st: os.stat_result) -> Optional[str]:
    """Why an index file or directory must not be believed, or None: it must be ours."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is not None and st.st_uid != geteuid():
        return f"owned by uid {st.st_uid}, not by you"
    if st.st_mode & _FOREIGN_WRITE:
        return "writable by group or others"
    return None


# A tree's index directory is named by this many hex digits of its root's hash; eviction
# touches nothing else in the base directory (a user's state files or folders kept there).
KEY_DIGITS = 24
_KEY_RE = re.compile(r"[0-9a-f]{%d}" % KEY_DIGITS)


_KEY_RE = re.compile(r"[0-9a-f]{%d}" % KEY_DIGITS)


def holds_indexes(base: str) -> bool:
    """Whether the directory ``base`` holds an index this tool made (a directory named as
    :func:`index_path` names one, with its MANIFEST): the tool's own cache, never searched
    should it lie in a tree. A folder of the tree given as the index directory
    (``--index-dir src``) is refused for the index (:func:`open_index`) and searched as
    any other, a folder of 24-hex-digit names (object ids, hashes) included."""
    try:
        with os.scandir(base) as entries:
            return any(_KEY_RE.fullmatch(e.name) is not None and e.is_dir(follow_symlinks=False)
                       and _is_file(os.path.join(e.path, MANIFEST)) for e in entries)
    except OSError:
        return False


def _is_file(path: str) -> bool:
    """A regular file, not through a link."""
    try:
        return stat_mod.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def index_path(root: str, override: Optional[str] = None) -> str:
    """The directory of the tree's index: under :func:`base_dir`, named by a hash of the
    resolved root."""
    key = hashlib.sha256(os.fsencode(fsafe.resolved(root))).hexdigest()[:KEY_DIGITS]
    return os.path.join(fsafe.resolved(base_dir(override)), key)


# Open files an indexed call may need at once: a descriptor per segment (a few, merged
# past MAX_SEGMENTS), its stores, the state, its lock and the walk's directories. Below
# this many the index is not used: the call reads the files, as --no-cache does.
MIN_OPEN_FILES = 64


def _open_files_allowed() -> Optional[int]:
    """The soft limit on open files, raised toward the hard one when it is below
    MIN_OPEN_FILES (as a shell's ``ulimit -n`` may); None where it is not known."""
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != resource.RLIM_INFINITY and soft < MIN_OPEN_FILES and (hard == resource.RLIM_INFINITY or hard > soft):
            wanted = MIN_OPEN_FILES if hard == resource.RLIM_INFINITY else min(hard, MIN_OPEN_FILES)
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
    except (ImportError, OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY else soft


def open_index(root: str, override: Optional[str] = None) -> Optional["Index"]:
    """The index of the tree at ``root``, or None when there can be none (one line on
    stderr says why: its directory is inside the tree, not a directory, not yours)."""
    root_real = fsafe.resolved(root)
    fingerprint = matcher_fingerprint()
    if fingerprint is None:
        return None
    path = index_path(root_real, override)
    allowed = _open_files_allowed()
    if allowed is not None and allowed < MIN_OPEN_FILES:
        _warn(path, f"not used: {allowed} open files allowed (ulimit -n), the index needs {MIN_OPEN_FILES}")
        return None
    base = os.path.dirname(path)
    if fsafe.inside_any_name(base, root_real):
        _warn(base, "inside --root; not used (the tool writes nothing in the tree)")
        return None
    try:
        os.makedirs(base, mode=0o700, exist_ok=True)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
        st = os.lstat(path)
    except FileExistsError:
        _warn(base, "is not a directory (a file or a link that leads nowhere); not used")
        return None
    except OSError as exc:
        _warn(path, f"cannot be created ({exc.strerror or exc}); not used")
        return None
    if not stat_mod.S_ISDIR(st.st_mode):
        _warn(path, "not a directory; not used")
        return None
    why = _untrusted(st)
    if why is not None:
        _warn(path, f"{why}; not used")
        return None
    return Index(path, root_real, fingerprint)


# ---------------------------------------------------------------------- segments

class Segment:
    """One immutable set of indexed files: file table, tokens per file, texts.

    The distinct tokens of all its files, sorted and joined by newlines (``vocab``; token j
    begins at ``vstarts[j]``), and per token the files holding it with how often
    (``post_file``/``post_cnt`` from ``post_off[j]`` to ``post_off[j + 1]``); and per file
    its distinct definition-site tokens (``dtokens``, file f's from byte ``dstart[f]``). A
    needle is found in the vocabulary with ``bytes.find`` (C speed, about a MB for django
    instead of its 29 MB), each hit naming a token, hence files and counts.
    Built in memory (:func:`build_segment`) or read from a segment file (:meth:`load`);
    texts are read from the file on demand (``os.pread``), or held in memory when built.
    """

    def __init__(self, name: str, rels: list, stats: array, text_off: array, text_len: array,
                 vocab: bytes, vstarts: array, post_off: array, post_file: array, post_cnt: array,
                 dtokens: bytes, dstart: array, roles: array, role_table: list,
                 texts: Optional[list] = None, fd: int = -1, text_base: int = 0,
                 text_crc: Optional[array] = None) -> None:
        self.name = name
        self.rels = rels
        self._stats = stats  # 5 values per file: Stat
        self.text_off = text_off
        self.text_len = text_len
        self.vocab, self.vstarts = vocab, vstarts
        self.post_off, self.post_file, self.post_cnt = post_off, post_file, post_cnt
        self.dtokens, self.dstart = dtokens, dstart
        self.roles, self.role_table = roles, role_table  # file i's role: role_table[roles[i]]
        self._texts = texts
        self._fd = fd
        self._base = text_base
        self._text_crc = text_crc  # each file's text's CRC-32, when read from a file

    def stat(self, i: int) -> Stat:
        """The recorded stat of file ``i``."""
        return tuple(self._stats[5 * i:5 * i + 5])

    def role(self, i: int) -> tuple:
        """What ``lang.file_role`` gave for file ``i``'s path when it was indexed."""
        return self.role_table[self.roles[i]]

    @property
    def size(self) -> int:
        """Bytes of text the segment covers."""
        return sum(n for n in self.text_len if n > 0)

    def text(self, i: int) -> bytes:
        """The lower-cased text of file ``i``; OSError when the segment file lost it."""
        if self._texts is not None:
            return self._texts[i]
        n = self.text_len[i]
        data = os.pread(self._fd, n, self._base + self.text_off[i])
        if len(data) != n:
            raise OSError(errno.EIO, "index segment truncated")
        if self._text_crc is not None and zlib.crc32(data) != self._text_crc[i]:
            raise OSError(errno.EIO, "index segment damaged")
        return data

    def close(self) -> None:
        """Release the segment file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    # -------------------------------------------------------------- queries

    def containing(self, needle: bytes, starts: bool = False) -> list[tuple[int, int]]:
        """(token number, non-overlapping count of ``needle`` in it) for every token that
        contains ``needle`` (made of token bytes); with ``starts``, counted only where a
        word starts (at the token's start or after a ``_``: match.count_in)."""
        vocab, vstarts = self.vocab, self.vstarts
        out = []
        if starts:
            for m in match_mod.start_re(needle).finditer(vocab):
                j = bisect_right(vstarts, m.start()) - 1
                if out and out[-1][0] == j:
                    out[-1] = (j, out[-1][1] + 1)
                else:
                    out.append((j, 1))
            return out
        p = vocab.find(needle)
        while p >= 0:
            j = bisect_right(vstarts, p) - 1
            end = vstarts[j + 1] - 1
            out.append((j, vocab.count(needle, vstarts[j], end)))
            p = vocab.find(needle, end + 1)
        return out

    def count(self, needle: bytes) -> dict[int, int]:
        """Occurrences of ``needle`` (token bytes only) per file: each non-overlapping hit
        in a token counts as often as the file holds the token -- which is
        ``match.count_in`` over the file's text."""
        off, pf, pc = self.post_off, self.post_file, self.post_cnt
        acc: dict[int, int] = {}
        get = acc.get
        for j, mult in self.containing(needle, match_mod.starts_only(needle)):
            a, b = off[j], off[j + 1]
            if not acc and mult == 1:
                acc = dict(zip(pf[a:b], pc[a:b]))
                get = acc.get
                continue
            for f, c in zip(pf[a:b], pc[a:b]):
                acc[f] = get(f, 0) + c * mult
        return acc

    def holders(self, run: bytes) -> set[int]:
        """Files holding a token that contains ``run``."""
        off, pf = self.post_off, self.post_file
        out: set[int] = set()
        for j, _ in self.containing(run):
            out.update(pf[off[j]:off[j + 1]])
        return out

    def def_holders(self, needle: bytes) -> set[int]:
        """Files with a definition-site token that starts with ``needle``."""
        dtokens, dstart = self.dtokens, self.dstart
        out: set[int] = set()
        probe = b"\n" + needle
        p = dtokens.find(probe)
        while p >= 0:
            f = bisect_right(dstart, p) - 1
            out.add(f)
            p = dtokens.find(probe, dstart[f + 1] if f + 1 < len(dstart) else len(dtokens))
        return out

    # -------------------------------------------------------------- file format

    def pieces(self, root: str, fingerprint: str) -> list:
        """The segment file's bytes, as pieces to write."""
        rel_bytes = "\0".join(self.rels).encode(_FS_ENCODING, _FS_ERRORS)
        texts = self._texts if self._texts is not None else [self.text(i) for i in range(len(self.rels))]
        text_crc = array("I", (zlib.crc32(t) if n > 0 else 0 for t, n in zip(texts, self.text_len)))
        body = [
            ("rels", rel_bytes), ("stats", self._stats.tobytes()), ("text_off", self.text_off.tobytes()),
            ("text_len", self.text_len.tobytes()), ("vocab", self.vocab), ("vstarts", self.vstarts.tobytes()),
            ("post_off", self.post_off.tobytes()), ("post_file", self.post_file.tobytes()),
            ("post_cnt", self.post_cnt.tobytes()),
            ("dtokens", self.dtokens), ("dstart", self.dstart.tobytes()), ("roles", self.roles.tobytes()),
            ("text_crc", text_crc.tobytes()),
        ]
        sections = {}
        pos = 0
        for name, data in body:
            sections[name] = [pos, len(data)]
            pos += len(data)
        text_total = sum(n for n in self.text_len if n > 0)
        sections["text"] = [pos, text_total]
        head = json.dumps({"root": root, "matcher": fingerprint, "files": len(self.rels),
                           "itemsize": [array("q").itemsize, array("I").itemsize],
                           "role_table": [list(r) for r in self.role_table],
                           "sections": sections, "crc": {name: zlib.crc32(data) for name, data in body}},
                          separators=(",", ":")).encode("ascii")
        first = b"%s %d %d\n" % (SEGMENT_MAGIC, FORMAT_VERSION, len(head))
        out = [first, head] + [data for _, data in body]
        out.extend(t for t, n in zip(texts, self.text_len) if n > 0)
        return out

    @classmethod
    def load(cls, path: str, root: str, fingerprint: str) -> "Segment":
        """Read a segment file's tables (texts stay on disk). ValueError when it is not a
        sound segment of this root and matcher; OSError when it cannot be read."""
        fd = os.open(path, fsafe.OPEN_FLAGS)
        try:
            st = os.fstat(fd)
            if not stat_mod.S_ISREG(st.st_mode):
                raise ValueError("not a regular file")
            why = _untrusted(st)
            if why is not None:
                raise ValueError(why)
            first = os.pread(fd, _HEAD_MAX, 0)
            nl = first.find(b"\n")
            parts = first[:nl].split(b" ") if nl > 0 else []
            if len(parts) != 3 or parts[0] != SEGMENT_MAGIC or not parts[2].isdigit():
                raise ValueError("not an index segment")
            if parts[1] != str(FORMAT_VERSION).encode():
                raise ValueError("another version")
            hlen = int(parts[2])
            if hlen > st.st_size:
                raise ValueError("truncated")
            head = json.loads(os.pread(fd, hlen, nl + 1).decode("ascii"))
            if not isinstance(head, dict) or not isinstance(head.get("sections"), dict) \
                    or not isinstance(head.get("crc"), dict):
                raise ValueError("malformed")
            if head.get("root") != root or head.get("matcher") != fingerprint:
                raise ValueError("another root or matcher")
            if head.get("itemsize") != [array("q").itemsize, array("I").itemsize]:
                raise ValueError("another machine's layout")
            base = nl + 1 + hlen
            secs = head["sections"]
            end = max(o + n for o, n in secs.values())
            if base + end != st.st_size:
                raise ValueError("truncated")

            def raw(name: str) -> bytes:
                o, n = secs[name]
                data = os.pread(fd, n, base + o)
                if len(data) != n:
                    raise ValueError("truncated")
                if zlib.crc32(data) != head["crc"][name]:
                    raise ValueError("damaged (fails its checksum)")
                return data

            def arr(name: str, code: str) -> array:
                a = array(code)
                a.frombytes(raw(name))
                return a

            n = head["files"]
            rels = raw("rels").decode(_FS_ENCODING, _FS_ERRORS).split("\0") if n else []
            flat = arr("stats", "q")
            text_off, text_len = arr("text_off", "q"), arr("text_len", "q")
            vocab, vstarts = raw("vocab"), arr("vstarts", "I")
            post_off, post_file, post_cnt = arr("post_off", "I"), arr("post_file", "I"), arr("post_cnt", "I")
            dtokens, dstart = raw("dtokens"), arr("dstart", "I")
            roles = arr("roles", "H")
            text_crc = arr("text_crc", "I")
            role_table = [(r[0], r[1]) for r in head["role_table"]
                          if isinstance(r[0], str) and isinstance(r[1], (int, float)) and len(r) == 2]
            if not (len(rels) == n and len(flat) == 5 * n and len(text_off) == n == len(text_len)
                    and len(dstart) == n and len(roles) == n and len(text_crc) == n
                    and len(role_table) == len(head["role_table"])
                    and (not roles or max(roles) < len(role_table))):
                raise ValueError("bad file table")
            if len(vstarts) != len(post_off) or len(post_file) != len(post_cnt) or not vstarts \
                    or vstarts[-1] != len(vocab) or post_off[-1] != len(post_file) or post_off[0] != 0:
                raise ValueError("bad token table")
            tsize = secs["text"][1]
            if any(n_ > 0 and (o < 0 or o + n_ > tsize) for o, n_ in zip(text_off, text_len)):
                raise ValueError("bad text table")
            text_base = base + secs["text"][0]
        except (KeyError, TypeError, IndexError, AttributeError, UnicodeDecodeError, json.JSONDecodeError,
                RecursionError) as exc:
            os.close(fd)
            raise ValueError("malformed") from exc
        except BaseException:
            os.close(fd)
            raise
        return cls(os.path.basename(path), rels, flat, text_off, text_len, vocab, vstarts, post_off, post_file,
                   post_cnt, dtokens, dstart, roles, role_table, fd=fd, text_base=text_base, text_crc=text_crc)


# A name followed by what may make it a definition without a keyword before it: ``(``
# (C, Java and JS functions), ``:`` / ``=`` / ``?:`` / ``!:`` (JS object literals, exports,
# class fields), or the end of a statement (``module.exports = name``);
# lang.call_definition / export_definition / field_definition.
_CALL_OR_EXPORT_RE = compile_later(rb"(?<![a-z0-9_])([a-z0-9_]+)[ \t]*(?:[(:=;?!\r\n]|\Z)")
# ... and before a generic method's own parameters (``from<T>(``: lang.call_definition);
# the parameters are looked for first, the name before them then (a pattern that starts
# at every name would cost a third of an index build).
_GENERIC_PARAMS_RE = compile_later(lang.GENERIC_ARGS + rb"[ \t]*\(")
# The names that start the lines of Go's ``type (`` / ``const (`` / ``var (`` blocks
# (lang.group_definition).
_GROUP_LINE_RE = compile_later(rb"\n\t([a-z0-9_]+)")
# A name before ``{``: a C# property's (lang.property_definition; its ``=>`` and a ``{``
# on the next line are the ``=`` and line end above).
_PROPERTY_NAME_RE = compile_later(rb"(?<![a-z0-9_])([a-z0-9_]+)[ \t]*\{")
# A Rust ``impl`` line: every name on it may be implemented there (lang.impl_definition).
_IMPL_LINE_RE = compile_later(rb"^[ \t]*(?:unsafe )?impl[ <][^\n]*", re.M)


def _name_before(low: bytes, end: int) -> bytes:
    """The token that ends at ``end``, blanks before ``end`` skipped (b"" when none)."""
    while end > 0 and low[end - 1] in b" \t":
        end -= 1
    start = end
    while start > 0 and low[start - 1] in _IDENT:
        start -= 1
    return low[start:end]


def def_sites(low: bytes, language: lang.Language) -> Iterable[bytes]:
    """Every token at whose start ``match.defines`` may find a definition of a name
    (a superset): after a definition word, at a line's start, after ``) `` (Go methods),
    before ``(``, ``:``, ``=`` or a statement's end (languages with ``calls`` or
    ``exports``), on an ``impl`` line (Rust). Empty for a language without definitions."""
    if not language.words:
        return ()
    found: set[bytes] = set()
    m = _TOKEN_RE.match(low)
    if m:
        found.add(m.group())
    found.update(_LINE_START_RE.findall(low))
    match_at = _TOKEN_RE.match
    chain_at = lang.RECEIVER_CHAIN_RE.match if language.receivers else None  # (``self.name``, ``m:name``)
    for word in language.words + ((_GO_RECEIVER,) if language.go_methods else ()):
        step = len(word)
        p = low.find(word)
        while p >= 0:
            m = match_at(low, p + step)
            if m:
                found.add(m.group())
            if chain_at is not None:
                chain = chain_at(low, p + step)
                if chain:
                    found.update(_TOKEN_RE.findall(chain.group()))
            p = low.find(word, p + 1)
    if language.calls or language.exports:
        found.update(_CALL_OR_EXPORT_RE.findall(low))
    if language.calls:
        for m in _GENERIC_PARAMS_RE.finditer(low):
            name = _name_before(low, m.start())
            if name:
                found.add(name)
    if language.properties:
        found.update(_PROPERTY_NAME_RE.findall(low))
    if language.groups:
        for start, end in lang.group_spans(low):
            found.update(_GROUP_LINE_RE.findall(low, start, end))
    if language.impls:
        for line in _IMPL_LINE_RE.findall(low):
            found.update(_TOKEN_RE.findall(line))
    return found


def build_segment(name: str, entries: Sequence[tuple[str, Stat, Optional[bytes]]],
                  progress: Progress = QUIET) -> Segment:
    """Index ``entries`` (path, stat, lower-cased text or None for binary) into a segment.

    Everything per token runs in C (translate, split, Counter, set, sorted, map over
    arrays): the Python loops are per file, not per token or occurrence."""
    rels, texts = [], []
    stats = array("q")
    text_off, text_len = array("q"), array("q")
    keys: list[list[bytes]] = []
    counts, file_of = array("I"), array("I")
    dparts: list[bytes] = []
    dstart = array("I")
    roles = array("H")
    role_codes: dict[tuple, int] = {}
    pos = dpos = 0
    table = _TOKEN_TABLE
    for fi, (rel, st, low) in enumerate(entries):
        progress.tick("indexing", fi, len(entries))
        rels.append(rel)
        stats.extend(st)
        dstart.append(dpos)
        role = lang.content_role(rel, low)
        code = role_codes.get(role)
        if code is None:
            code = role_codes[role] = len(role_codes)
        roles.append(code)
        if low is None:
            text_off.append(0)
            text_len.append(-1)
            texts.append(b"")
            continue
        text_off.append(pos)
        text_len.append(len(low))
        texts.append(low)
        pos += len(low)
        tally = Counter(low.translate(table).split())
        if tally:
            keys.append(list(tally))
            counts.extend(tally.values())
            file_of.extend(repeat(fi, len(tally)))
        sites = def_sites(low, lang.language_of(rel))
        if sites:
            joined = b"\n".join(sorted(sites))
            dparts.append(b"\n")
            dparts.append(joined)
            dpos += len(joined) + 1
    dparts.append(b"\n")
    # Invert: sort the (token, file) pairs by token (stable: files stay ascending).
    tokens = sorted(set(chain.from_iterable(keys)))
    ids = dict(zip(tokens, count()))
    tids = list(map(ids.__getitem__, chain.from_iterable(keys)))
    del keys, ids
    order = sorted(range(len(tids)), key=tids.__getitem__)
    post_file = array("I", map(file_of.__getitem__, order))
    post_cnt = array("I", map(counts.__getitem__, order))
    df = Counter(tids)
    del order, tids
    post_off = array("I", [0])
    post_off.extend(accumulate(map(df.__getitem__, range(len(tokens)))))
    vocab = b"\n" + b"\n".join(tokens) + b"\n" if tokens else b"\n"
    # Token j starts after j + 1 newlines and the lengths of the tokens before it; the
    # last entry marks the end.
    vstarts = array("I", map(add, accumulate(map(len, tokens), initial=0), count(1)))
    vstarts[-1] = len(vocab)
    return Segment(name, rels, stats, text_off, text_len, vocab, vstarts, post_off, post_file, post_cnt,
                   b"".join(dparts), dstart, roles, list(role_codes), texts=texts)


class _Rewritten:
    """A store beside the segments that a save rewrites whole when the cycle added to it."""

    _new: dict
    _loaded: bool

    def _load(self) -> None:  # each store reads its own file
        raise NotImplementedError

    def _to_save(self, live: Sequence[str]) -> Optional[set[str]]:
        """None when this cycle added nothing; else the live segments, the store loaded."""
        if not self._new:
            return None
        if not self._loaded:
            self._load()
        return set(live)


class NeedleStore(_Rewritten):
    """Answers of earlier cycles and tasks, per (segment, needle): the files the needle
    occurs in, how often, and (when asked for) what each defines of it.

    One file, ``needles.idx``, beside the segments: a first line (magic, version, header
    length), a JSON header mapping each segment to its needles, where their arrays sit
    and their CRC-32, then the arrays. An answer whose bytes fail their CRC means the
    file is damaged: it is dropped whole (one line on stderr) and rebuilt. A segment never changes, so an answer stays true as long as its
    segment lives; answers of merged-away segments are dropped, and the least recently
    used beyond :data:`STORE_MAX_ENTRIES` or :data:`STORE_MAX_MB` too. Rewritten whole
    (temporary file, rename) by a save that added answers, under the index's lock.
    """

    def __init__(self, path: str, root: str, fingerprint: str) -> None:
        self.path = path
        self._root, self._fingerprint = root, fingerprint
        self._entries: dict[tuple[str, str], list] = {}  # (segment, needle hex) -> [offset, n, m]
        self._data_base = 0
        self._fd = -1
        self._new: dict[tuple[str, str], tuple[dict[int, int], Optional[dict[int, float]]]] = {}
        self._used: list[tuple[str, str]] = []
        self._loaded = False
        self.disabled = False  # the index's manifest was refused: start afresh

    def _load(self) -> None:
        self._loaded = True
        if self.disabled:
            return
        try:
            fd = os.open(self.path, fsafe.OPEN_FLAGS)
        except FileNotFoundError:
            return
        except OSError as exc:
            _warn(self.path, f"{exc.strerror or exc}; rebuilt")
            return
        outcome = "rebuilt"
        try:
            st = os.fstat(fd)
            why, outcome = _kind_of(st) if not stat_mod.S_ISREG(st.st_mode) else (_untrusted(st), outcome)
            if why is None:
                first = os.pread(fd, _HEAD_MAX, 0)
                nl = first.find(b"\n")
                parts = first[:nl].split(b" ") if nl > 0 else []
                if len(parts) != 3 or parts[0] != STORE_MAGIC or parts[1] != str(FORMAT_VERSION).encode() \
                        or not parts[2].isdigit():
                    raise ValueError("not a needle store of this version")
                if int(parts[2]) > st.st_size:
                    raise ValueError("truncated")
                head = json.loads(os.pread(fd, int(parts[2]), nl + 1).decode("ascii"))
                if head.get("root") != self._root or head.get("matcher") != self._fingerprint:
                    raise ValueError("of another tree or version")
                base = nl + 1 + int(parts[2])
                size = st.st_size - base
                entries = {}
                for seg, needles in head["segments"].items():
                    for hexed, entry in needles.items():
                        if not (isinstance(entry, list) and len(entry) == 4
                                and all(isinstance(v, int) for v in entry)):
                            raise ValueError("malformed entry")
                        off, n, m, _crc = entry
                        if off < 0 or n < 0 or m < -1 or off + _entry_bytes(n, m) > size:
                            raise ValueError("entry outside the data")
                        entries[(seg, hexed)] = entry
                self._entries, self._data_base, self._fd = entries, base, fd
                return
        except (OSError, ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError,
                RecursionError, OverflowError, MemoryError) as exc:
            why = str(exc) if isinstance(exc, ValueError) and str(exc) else "malformed"
        os.close(fd)
        _warn(self.path, f"{why}; {outcome}")

    def get(self, seg: str, needle: bytes) -> Optional[tuple[dict[int, int], Optional[dict[int, float]]]]:
        """The stored answer for ``needle`` in segment ``seg``, or None."""
        key = (seg, needle.hex())
        if key in self._new:
            return self._new[key]
        if not self._loaded:
            self._load()
        e = self._entries.get(key)
        if e is None:
            return None
        data = self._blob(e)
        if data is None:
            return None
        n, m = e[1], e[2]
        files, counts = array("I"), array("I")
        files.frombytes(data[:4 * n])
        counts.frombytes(data[4 * n:8 * n])
        defined = None
        if m >= 0:
            dfiles, dvals = array("I"), array("d")
            dfiles.frombytes(data[8 * n:8 * n + 4 * m])
            dvals.frombytes(data[8 * n + 4 * m:])
            defined = dict(zip(dfiles, dvals))
        self._used.append(key)
        return dict(zip(files, counts)), defined

    def _blob(self, e: list) -> Optional[bytes]:
        """An entry's bytes when they are whole and pass their CRC; else None (a failed CRC
        drops every stored answer: the file is damaged, it is rebuilt)."""
        off, n, m, crc = e
        data = os.pread(self._fd, _entry_bytes(n, m), self._data_base + off)
        if len(data) != _entry_bytes(n, m):
            return None
        if zlib.crc32(data) != crc:
            _warn(self.path, "damaged (an answer fails its checksum); rebuilt")
            self._entries, self._used = {}, []
            self.close()
            return None
        return data

    def put(self, seg: str, needle: bytes, found: dict[int, int], defined: Optional[dict[int, float]]) -> None:
        """Keep an answer for the next save."""
        self._new[(seg, needle.hex())] = (found, defined)

    def save(self, live: Sequence[str]) -> None:
        """Rewrite the store: this cycle's answers first, then earlier ones still live.
        Called under the index's lock. OSError propagates."""
        live_set = self._to_save(live)
        if live_set is None:
            return
        pieces: list[bytes] = []
        heads: dict[str, dict[str, list]] = {}
        pos = 0
        kept = 0
        budget = STORE_MAX_MB << 20

        def add(key: tuple[str, str], blob: bytes, n: int, m: int, crc: Optional[int] = None) -> None:
            nonlocal pos, kept, budget
            heads.setdefault(key[0], {})[key[1]] = [pos, n, m, zlib.crc32(blob) if crc is None else crc]
            pieces.append(blob)
            pos += len(blob)
            kept += 1
            budget -= len(blob)

        for key, (found, defined) in self._new.items():
            if key[0] not in live_set or kept >= STORE_MAX_ENTRIES or budget <= 0:
                continue
            files = array("I", found.keys())
            blob = files.tobytes() + array("I", found.values()).tobytes()
            m = -1
            if defined is not None:
                m = len(defined)
                blob += array("I", defined.keys()).tobytes() + array("d", defined.values()).tobytes()
            add(key, blob, len(files), m)
        order = list(dict.fromkeys(reversed(self._used)))
        used = set(order)
        order += [k for k in self._entries if k not in used][::-1]
        for key in order:
            if key in self._new or key[0] not in live_set or kept >= STORE_MAX_ENTRIES or budget <= 0:
                continue
            e = self._entries.get(key)
            blob = None if e is None else self._blob(e)
            if blob is not None:
                add(key, blob, e[1], e[2], e[3])  # (its CRC just checked)
        head = json.dumps({"root": self._root, "matcher": self._fingerprint, "segments": heads},
                          separators=(",", ":")).encode("ascii")
        first = b"%s %d %d\n" % (STORE_MAGIC, FORMAT_VERSION, len(head))
        atomic_write(self.path, [first, head] + pieces, fsync=False, prefix=TMP_PREFIX, outside=self._root)

    @property
    def dirty(self) -> bool:
        """Whether this cycle computed answers the store lacks."""
        return bool(self._new)

    def close(self) -> None:
        """Release the store file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _entry_bytes(n: int, m: int) -> int:
    """Bytes of one stored answer: n (file, count) pairs and m (file, definition) pairs."""
    return 8 * n + (12 * m if m > 0 else 0)


# ---------------------------------------------------------------------- facts

# The modules whose code makes a fact, besides the matcher's (match, lang, this file):
# report.ranked_names and imports.imports_of, and cycle.py, which decides what they are
# given and keeps them; lazyre compiles imports' patterns. The data files lang reads are
# added by name. A change anywhere else (scoring, the decision, the output) leaves the
# facts true, so an update that only touches those keeps every tree's fact store.
FACT_MODULES = ("cycle.py", "imports.py", "lazyre.py", "report.py")
FACT_DATA = ("languages.json",)


def facts_fingerprint(matcher: str, package: Optional[str] = None) -> Optional[str]:
    """A hash of the code and data whose answers the fact store keeps (FACT_MODULES and
    FACT_DATA of ``package``, by default this one), with the matcher's."""
    h = hashlib.sha256(matcher.encode("ascii"))
    here = package or os.path.dirname(os.path.abspath(__file__))
    try:
        for name in FACT_MODULES + tuple("data/" + d for d in FACT_DATA):
            h.update(name.encode("utf-8"))
            with open(os.path.join(here, name), "rb") as fh:
                h.update(fh.read())
    except OSError:
        return None
    return h.hexdigest()[:16]


class FactStore(_Rewritten):
    """What a cycle derives from an indexed file's bytes besides matching, kept for later
    cycles and tasks: per (segment, file number, kind, qualifier) a JSON value -- the files
    it imports (``imports``, for one set of tree paths: the qualifier is their hash) and
    the names it defines, most used first (``names``). A segment never changes, so a fact
    stays true while its segment lives.

    One text file, ``facts.idx``: a first line (magic, version, fingerprint, the CRC-32 of
    the rest: a damaged file is dropped with one line on stderr), then a line per fact, ``segment TAB file TAB kind TAB qualifier TAB json`` (ASCII JSON holds no
    tab or newline). Rewritten whole (temporary file, rename) by a save that added facts,
    under the index's lock: the facts used or made this cycle first, then the others, at
    most :data:`FACTS_MAX_ENTRIES`; facts of segments no longer live are dropped."""

    def __init__(self, path: str, matcher: str, root: str) -> None:
        self.path = path
        self._matcher = matcher
        self._root = root  # the tree's real path: never written inside it
        self._fingerprint: Optional[str] = None  # made on first use (it reads the package)
        self._entries: dict[tuple[str, int, str, str], bytes] = {}
        self._new: dict[tuple[str, int, str, str], bytes] = {}
        self._used: list[tuple[str, int, str, str]] = []
        self._loaded = False
        self.disabled = False  # the index's manifest was refused: start afresh

    def _head(self) -> Optional[bytes]:
        """The first line of this version's file, the CRC left out (``magic version
        fingerprint`` and a newline); None when the code cannot be hashed."""
        if self._fingerprint is None:
            self._fingerprint = facts_fingerprint(self._matcher) or ""
        if not self._fingerprint:
            return None
        return b"%s %d %s\n" % (FACTS_MAGIC, FORMAT_VERSION, self._fingerprint.encode("ascii"))

    def _load(self) -> None:
        self._loaded = True
        head = self._head()
        if self.disabled or head is None:
            return
        try:
            fd = os.open(self.path, fsafe.OPEN_FLAGS)
        except OSError:
            return
        try:
            st = os.fstat(fd)
            if not stat_mod.S_ISREG(st.st_mode) or _untrusted(st):
                return
            data = fsafe.read_fd(fd, st.st_size, st.st_size + 1)
        except OSError:
            return
        except MemoryError:  # (a sparse file of many gigabytes: no fact store is that big)
            _warn(self.path, "damaged (too large to read); rebuilt")
            return
        finally:
            os.close(fd)
        first, _, body = data.partition(b"\n")
        if not first.startswith(head[:-1] + b" "):
            if not first.startswith(FACTS_MAGIC + b" "):
                _warn(self.path, "not a fact store; rebuilt")
            return  # (another version's facts are simply made again)
        if first[len(head):] != _crc_hex(body):
            _warn(self.path, "damaged (fails its checksum); rebuilt")
            return
        entries = {}
        for line in body.split(b"\n"):
            parts = line.split(b"\t", 4)
            if len(parts) == 5 and parts[1].isdigit():
                try:
                    key = (parts[0].decode("ascii"), int(parts[1]), parts[2].decode("ascii"),
                           parts[3].decode("ascii"))
                except UnicodeDecodeError:
                    continue
                entries[key] = parts[4]
        self._entries = entries

    def get(self, seg: str, fi: int, kind: str, qualifier: str = "") -> Any:
        """The fact kept for file ``fi`` of segment ``seg``, or None."""
        key = (seg, fi, kind, qualifier)
        raw = self._new.get(key)
        if raw is None:
            if not self._loaded:
                self._load()
            raw = self._entries.get(key)
            if raw is None:
                return None
            self._used.append(key)
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return None

    def put(self, seg: str, fi: int, kind: str, qualifier: str, value: Any) -> None:
        """Keep a fact for the next save (a JSON value)."""
        if self._head() is not None:
            self._new[(seg, fi, kind, qualifier)] = json.dumps(value, separators=(",", ":")).encode("ascii")

    @property
    def dirty(self) -> bool:
        """Whether this cycle derived facts to keep."""
        return bool(self._new)

    def close(self) -> None:
        """Nothing stays open (the file is read whole)."""

    def save(self, live: Sequence[str]) -> None:
        """Rewrite the file: this cycle's facts first, then earlier ones still live.
        Called under the index's lock. OSError propagates."""
        live_set = self._to_save(live)
        if live_set is None:
            return
        order = list(self._new) + [k for k in dict.fromkeys(reversed(self._used)) if k not in self._new]
        used = set(self._used)
        order += [k for k in self._entries if k not in self._new and k not in used]
        head = self._head()
        if head is None:
            return
        pieces = []
        kept = 0
        for key in order:
            if kept >= FACTS_MAX_ENTRIES:
                break
            if key[0] not in live_set:
                continue
            raw = self._new.get(key) or self._entries.get(key)
            if raw is None:
                continue
            pieces.append(b"%s\t%d\t%s\t%s\t%s\n" % (key[0].encode("ascii"), key[1], key[2].encode("ascii"),
                                                     key[3].encode("ascii"), raw))
            kept += 1
        body = b"".join(pieces)
        atomic_write(self.path, [head[:-1] + b" " + _crc_hex(body) + b"\n", body], fsync=False, prefix=TMP_PREFIX,
                     outside=self._root)


def _crc_hex(data: bytes) -> bytes:
    """The CRC-32 of ``data`` as 8 hex digits: what a fact store's first line ends with."""
    return b"%08x" % zlib.crc32(data)


# ---------------------------------------------------------------------- the index

_IDENT_NEEDLE = re.compile(rb"[a-z0-9_]+\Z")


class Index:
    """The index of one tree as one cycle uses it: load lazily, serve, match, save once."""

    def __init__(self, path: str, root_real: str, fingerprint: str) -> None:
        self.path = path
        self.root = root_real
        self._fingerprint = fingerprint
        self._loaded = False
        self._segments: list[Segment] = []
        self._where: dict[str, tuple[int, int]] = {}   # rel -> (segment, file) newest first
        self._dirty = False                           # the manifest must be rewritten
        # What this cycle saw.
        self._served: dict[str, tuple[int, int]] = {}
        self._fresh: dict[str, tuple[Stat, Optional[Document]]] = {}  # trusted reads to index
        self._new: list[Segment] = []                  # this cycle's segments
        self._written: set[str] = set()               # ... of them already on disk
        self._new_pos: dict[str, tuple[int, int]] = {}  # rel -> (new segment, file)
        self._indexed = False
        self._bad: set[str] = set()                   # segments found damaged
        self._store = NeedleStore(os.path.join(path, STORE_NAME), root_real, fingerprint)
        self._facts = FactStore(os.path.join(path, FACTS_NAME), fingerprint, root_real)
        self.progress: Progress = QUIET

    @property
    def paths(self) -> tuple[str, ...]:
        """Files of the tool's own that the walk must skip: none (never inside the tree)."""
        return ()

    # ------------------------------------------------------------------ loading

    def _load(self) -> None:
        """Read the manifest and its segments; what is wrong is dropped (one line)."""
        self._loaded = True
        names = self._manifest_names()
        if self._dirty:  # no sound manifest: nothing beside it is believed either
            self._store.disabled = True
            self._facts.disabled = True
        for name in names:
            try:
                seg = Segment.load(os.path.join(self.path, name), self.root, self._fingerprint)
            except FileNotFoundError:
                self._dirty = True
                continue
            except (OSError, ValueError, OverflowError, MemoryError) as exc:
                _warn(os.path.join(self.path, name), f"{exc or type(exc).__name__}; rebuilt")
                self._dirty = True
                self._bad.add(name)
                continue
            self._segments.append(seg)
        for si, seg in enumerate(self._segments):
            self._where.update(zip(seg.rels, zip(repeat(si), range(len(seg.rels)))))

    def close(self) -> None:
        """Release the index's open files (the cycle's documents are read by then)."""
        for seg in self._segments + self._new:
            seg.close()
        self._store.close()
        self._facts.close()

    def _manifest_names(self, quiet: bool = False) -> list[str]:
        """The live segments' names, oldest first ([] when there is no sound manifest)."""
        mpath = os.path.join(self.path, MANIFEST)
        try:
            fd = os.open(mpath, fsafe.OPEN_FLAGS)
        except FileNotFoundError:
            return []
        except OSError as exc:
            if not quiet:
                _warn(mpath, f"{exc.strerror or exc}; rebuilt")
            self._dirty = True
            return []
        outcome = "rebuilt"
        try:
            st = os.fstat(fd)
            why, outcome = _kind_of(st) if not stat_mod.S_ISREG(st.st_mode) else (_untrusted(st), outcome)
            if why is None:
                raw = fsafe.read_fd(fd, st.st_size, 1 << 20)
                man = json.loads(raw.decode("utf-8"))
                names = man.get("segments") if isinstance(man, dict) else None
                if not isinstance(man, dict) or man.get("format") != FORMAT_NAME:
                    why = "not an index manifest"
                elif man.get("version") != FORMAT_VERSION or man.get("matcher") != self._fingerprint:
                    # (Rebuilt without a word: once after an update, the results the same;
                    # agents of the trials read the line as something gone wrong.)
                    why, quiet = "written by another version of the tool", True
                elif man.get("root") != self.root:
                    why = "of another tree"
                elif not isinstance(names, list) or not all(
                        isinstance(n, str) and n.startswith(SEG_PREFIX) and n.endswith(SEG_SUFFIX)
                        and os.sep not in n for n in names):
                    why = "malformed"
                else:
                    return list(dict.fromkeys(names))
        except (OSError, ValueError, UnicodeDecodeError, RecursionError, OverflowError, MemoryError) as exc:
            why = f"unreadable ({exc})" if isinstance(exc, OSError) else "malformed"
        finally:
            os.close(fd)
        if not quiet:
            _warn(mpath, f"{why}; {outcome}")
        self._dirty = True
        return []

    # ------------------------------------------------------------------ reading

    def read(self, cand: Any, reader: Callable[..., Optional[Document]]) -> Optional[Document]:
        """The document of a walked file (None when binary): from the index when its stat
        (:func:`stat_key`) equals the newest entry's, else through ``reader(rel, path)``
        (OSError propagates); a document whose (device, inode) is not the walk's is refused."""
        if not self._loaded:
            self._load()
        key = stat_key(cand)
        ident = (key[3], key[4]) if key is not None else None
        where = self._where.get(cand.rel)
        if where is not None and key is not None:
            seg = self._segments[where[0]]
            if key == seg.stat(where[1]):
                self._served[cand.rel] = where
                score_mod.KNOWN_ROLES[cand.rel] = seg.role(where[1])
                n = seg.text_len[where[1]]
                if n < 0:
                    return None
                return _served_document(seg, where[1], cand.rel, cand.path, n, ident)
        started = time.time_ns()
        doc = reader(cand.rel, cand.path)
        if doc is not None and ident is not None and doc.identity not in (None, ident):
            # Another file than the walk saw (swapped meanwhile): its bytes go no further.
            raise fsafe.UnsafeFile(errno.ESTALE, "not the file the walk saw (replaced meanwhile)", cand.path)
        # Racy entries (git's "racily clean" ones): a write in the same timestamp tick as
        # the read could keep the whole stat, so such a file is indexed by a later cycle.
        horizon = started - RACY_WINDOW_NS
        if key is not None and all(isinstance(v, int) for v in key) and key[1] < horizon \
                and key[2] < horizon and (doc is None or doc.size == key[0]):
            self._fresh[cand.rel] = (key, doc)
        return doc

    def read_all(self, cands: Sequence[Any], reader: Callable[..., Optional[Document]],
                 progress: Progress = QUIET) -> tuple[list[Document], int, int]:
        """:meth:`read` for every walked file: (documents, binary files, unreadable files).
        The files the index serves are answered in one tight loop (a few microseconds
        each); the rest go through :meth:`read`."""
        if not self._loaded:
            self._load()
        tally = match_mod.ReadTally()
        docs = tally.docs
        where_get, segs, served, roles = self._where.get, self._segments, self._served, score_mod.KNOWN_ROLES
        read = partial(self.read, reader=reader)
        total = len(cands)
        for n, cand in enumerate(cands):
            if not n % 64:
                progress.tick("reading", n, total)
            rel = cand.rel
            where = where_get(rel)
            if where is not None and cand.ino:
                seg = segs[where[0]]
                fi = where[1]
                b = 5 * fi
                st = seg._stats
                if st[b + 4] == cand.ino and st[b] == cand.size and st[b + 1] == cand.mtime_ns \
                        and st[b + 2] == cand.ctime_ns and st[b + 3] == cand.dev:
                    served[rel] = where
                    roles[rel] = seg.role_table[seg.roles[fi]]
                    size = seg.text_len[fi]
                    if size < 0:
                        tally.binary += 1
                    else:
                        docs.append(_served_document(seg, fi, rel, cand.path, size, (cand.dev, cand.ino)))
                    continue
            tally.read(read, cand)
        return tally.result()

    # ------------------------------------------------------------------ matching

    def match(self, docs: Sequence[Document], keywords: Sequence[Keyword]) -> list[Optional[FileMatch]]:
        """What :func:`match.match_document` gives for each document (None where no
        keyword hit its content or path): indexed files from postings, the rest counted."""
        if not self._loaded:
            self._load()
        self._index_fresh()
        try:
            return self._match(docs, keywords)
        except (IndexError, ValueError, OSError, OverflowError, MemoryError) as exc:  # a segment damaged in a way load cannot see
            _warn(self.path, f"damaged ({exc or type(exc).__name__}); rebuilt")
            self._bad.update(s.name for s in self._segments)
            self._segments, self._served, self._dirty = [], {}, True
            return match_many(docs, compile_keywords(keywords))

    def _slot(self, rel: str) -> Optional[tuple[str, int]]:
        """(segment name, file number) answering for ``rel`` this cycle, or None."""
        if not self._loaded:
            return None
        w = self._serving(rel, len(self._segments))
        if w is None:
            return None
        segs = self._segments + self._new
        return segs[w[0]].name, w[1]

    def fact(self, rel: str, kind: str, qualifier: str = "") -> Any:
        """What an earlier cycle or task derived from ``rel``'s bytes (:class:`FactStore`),
        when the index serves ``rel`` this cycle from the segment it was derived from."""
        slot = self._slot(rel)
        return None if slot is None else self._facts.get(slot[0], slot[1], kind, qualifier)

    def keep_fact(self, rel: str, kind: str, qualifier: str, value: Any) -> None:
        """Keep a fact derived from ``rel``'s bytes for later cycles (only for a file the
        index serves: its segment is what the fact stays true with)."""
        slot = self._slot(rel)
        if slot is not None:
            self._facts.put(slot[0], slot[1], kind, qualifier, value)

    def _serving(self, rel: str, new_si: int) -> Optional[tuple[int, int]]:
        """(segment number, file number) of the segment answering for ``rel``: a stored one,
        else one written this cycle (numbered after the stored ``new_si``); None: read it."""
        w = self._served.get(rel)
        if w is None and self._new:
            at = self._new_pos.get(rel)
            w = (new_si + at[0], at[1]) if at is not None else None
        return w

    def _match(self, docs: Sequence[Document], keywords: Sequence[Keyword]) -> list[Optional[FileMatch]]:
        segs = self._segments + self._new
        new_si = len(self._segments)
        # Which documents each segment answers for: segment -> {file number: doc position}.
        wanted: list[dict[int, int]] = [{} for _ in segs]
        direct: list[int] = []
        serving = self._served.get if not self._new else partial(self._serving, new_si=new_si)
        for pos, doc in enumerate(docs):
            w = serving(doc.rel)
            if w is None:
                direct.append(pos)
            else:
                wanted[w[0]][w[1]] = pos
        ck = compile_keywords(keywords)
        n = len(keywords)
        # Rows only for the documents a keyword hits (most of a large tree's hit none).
        counts: dict[int, list[int]] = {}
        in_path: dict[int, list[float]] = {}
        defs: dict[int, list[float]] = {}
        hit = [False] * len(docs)
        for i, kw in enumerate(keywords):
            col: dict[int, int] = {}  # doc position -> keyword i's count
            for needle, can_define in zip(kw.needles, ck.definable[i]):
                for si, seg in enumerate(segs):
                    w = wanted[si]
                    if not w:
                        continue
                    found, defined = self._result(seg, needle, can_define)
                    if found:
                        get = found.__getitem__
                        if col:
                            cget = col.get
                            for fi in w.keys() & found.keys():
                                pos = w[fi]
                                col[pos] = cget(pos, 0) + get(fi)
                        else:
                            col = {w[fi]: get(fi) for fi in w.keys() & found.keys()}
                    for fi, d in defined.items():
                        pos = w.get(fi)
                        if pos is not None:
                            row = defs.get(pos) or defs.setdefault(pos, [0.0] * n)
                            if d > row[i]:
                                row[i] = d
            for pos, c in col.items():
                (counts.get(pos) or counts.setdefault(pos, [0] * n))[i] = c
                hit[pos] = True
        self._paths(docs, keywords, in_path, hit, direct)
        out: list[Optional[FileMatch]] = [None] * len(docs)
        zeros, none = (0,) * n, (0.0,) * n
        for pos in set(counts) | set(in_path):
            if hit[pos]:
                doc = docs[pos]
                c, p, d = counts.get(pos), in_path.get(pos), defs.get(pos)
                out[pos] = FileMatch(rel=doc.rel, size=doc.size, counts=tuple(c) if c else zeros,
                                     in_path=tuple(p) if p else none, defines=tuple(d) if d else none)
        if direct:
            for pos, m in zip(direct, match_many([docs[p] for p in direct], ck)):
                out[pos] = m
        return out

    def _result(self, seg: Segment, needle: bytes, definable: bool) -> tuple[dict[int, int], dict[int, float]]:
        """(count per file, definition per file) of ``needle`` over every file of ``seg``:
        from the needle store when an earlier cycle or task computed it (a segment never
        changes, so neither does its answer), else computed and kept for the store."""
        got = self._store.get(seg.name, needle)
        if got is not None and (got[1] is not None or not definable):
            return got[0], got[1] or {}
        found = got[0] if got is not None else self._count(seg, needle)
        defined: Optional[dict[int, float]] = None
        if definable:
            defined = {}
            prune = seg.def_holders(needle) if found else set()
            for fi in sorted(prune.intersection(found)):
                language = lang.language_of(seg.rels[fi])
                if language.words:
                    d = defines(seg.text(fi), needle, language, found[fi])
                    if d:
                        defined[fi] = d
        self._store.put(seg.name, needle, found, defined)
        return found, defined or {}

    @staticmethod
    def _count(seg: Segment, needle: bytes) -> dict[int, int]:
        """Occurrences of ``needle`` per file of ``seg`` (files without any left out)."""
        if needle and _IDENT_NEEDLE.match(needle):
            return seg.count(needle)
        cands: Optional[set[int]] = None
        for run in sorted(set(_TOKEN_RE.findall(needle)), key=len, reverse=True):
            have = seg.holders(run)
            cands = have if cands is None else cands & have
            if not cands:
                return {}
        out = {}
        for fi in (sorted(cands) if cands is not None else range(len(seg.rels))):
            if seg.text_len[fi] < 0:
                continue
            c = match_mod.count_in(seg.text(fi), needle)
            if c:
                out[fi] = c
        return out

    def presence(self, docs: Sequence[Document]) -> Callable[[bytes], Optional[int]]:
        """A counter of how many of ``docs`` hold a needle (``sum(needle in d.low)``), or
        None for a needle of other bytes (the caller then searches the texts itself).

        For a needle of token bytes (``[a-z0-9_]``) every occurrence lies inside a token,
        so a file the index serves holds it exactly when the needle's count there
        (:meth:`Segment.count`) is not zero: the files' texts are never loaded. The
        counts are the needle store's answers (a later cycle or task asking for the same
        term reads them back instead of searching the vocabulary again). A short needle,
        which the search counts only where a word starts, is held wherever it stands
        (:meth:`Segment.holders`): a learned term is a part of names, and counted where
        words start a part of three letters looked rare and was learned first (on the dev
        splits ``ops`` took sympy-14024's fix from 11th to 20th in cycle 2)."""
        if not self._loaded:
            self._load()
        segs = self._segments + self._new
        new_si = len(self._segments)
        wanted: dict[int, set[int]] = {}
        direct: list[Document] = []
        for doc in docs:
            w = self._serving(doc.rel, new_si)
            if w is None:
                direct.append(doc)
            else:
                wanted.setdefault(w[0], set()).add(w[1])

        def holding(needle: bytes) -> Optional[int]:
            if not (needle and _IDENT_NEEDLE.match(needle)):
                return None
            n = sum(1 for d in direct if needle in d.low)
            for si, files in wanted.items():
                # (A short needle counts only where a word starts (match.count_in); held is
                # held anywhere, as a learned term's part of a name is: the files holding a
                # token that contains it.)
                held = segs[si].holders(needle) if match_mod.starts_only(needle) else self._counted(segs[si], needle)
                n += len(files.intersection(held))
            return n

        return holding

    def _counted(self, seg: Segment, needle: bytes) -> dict[int, int]:
        """Occurrences of ``needle`` per file of ``seg``: the store's answer, else counted
        and kept for the store."""
        got = self._store.get(seg.name, needle)
        if got is not None:
            return got[0]
        found = self._count(seg, needle)
        self._store.put(seg.name, needle, found, None)
        return found

    @staticmethod
    def _paths(docs: Sequence[Document], keywords: Sequence[Keyword], in_path: dict[int, list[float]],
               hit: list, skip: Sequence[int]) -> None:
        """match_document's path test, found by searching all paths at once (``in_path``
        gets a row for each document a keyword's path test hits)."""
        skipped = set(skip)
        raw = "\n".join(d.rel for d in docs)
        newline = raw.count("\n") != max(len(docs) - 1, 0)  # a name holding one
        if newline:  # (searched path by path)
            lows = [d.rel.lower() for d in docs]
            flats = [r.replace("_", "").replace("-", "") for r in lows]
            joined = jflat = ""
            starts: list[int] = []
            fstarts: list[int] = []
        else:
            # All paths lower-cased and flattened in one call each (lower-casing goes
            # character by character here: a newline is neither cased nor case-ignorable).
            joined = raw.lower()
            jflat = joined.replace("_", "").replace("-", "")
            lows = joined.split("\n") if docs else []
            flats = jflat.split("\n") if docs else []
            starts = _line_starts(lows)
            fstarts = _line_starts(flats)
        for i, kw in enumerate(keywords):
            pn = kw.path_needle
            if not pn or "\n" in pn or newline:
                cand = [p for p in range(len(docs)) if pn in lows[p] or pn in flats[p]]
            else:
                cand = set(_positions(joined, starts, pn)) | set(_positions(jflat, fstarts, pn))
            if kw.kind == "path" and pn:
                # A quoted path that ends with this file's path (quoted from outside the
                # root: ``a/src/x.py`` of a diff, a checkout's path) - match_document's
                # ``rel_low in pn`` test, by the quoted path's own suffixes.
                cand = set(cand)
                for tail in outside_tails(pn):
                    holders = range(len(docs)) if newline else _positions(joined, starts, tail)
                    cand.update(p for p in holders if lows[p] == tail)
                member = member_module(kw)
                if member:  # (the module file a dotted name's last part is a member of)
                    holders = range(len(docs)) if newline else _positions(joined, starts, member)
                    cand.update(p for p in holders if member in lows[p])
            for p in cand:
                if p in skipped:
                    continue
                v = path_match(lows[p], kw, docs[p].rel)
                if v:
                    (in_path.get(p) or in_path.setdefault(p, [0.0] * len(keywords)))[i] = v
                    hit[p] = True

    def _index_fresh(self) -> None:
        """Index this cycle's trusted fresh reads (within the step and size caps) into a
        new in-memory segment, so that they too are answered from postings."""
        if not self._fresh or self._indexed:
            return
        self._indexed = True
        room = _max_bytes() - sum(s.size for s in self._segments)
        budget = min(room, BUILD_STEP_BYTES)
        entries = []
        for rel in sorted(self._fresh):
            st, doc = self._fresh[rel]
            if doc is None:
                entries.append((rel, st, None))
                continue
            if doc.size > budget:
                continue
            budget -= doc.size
            entries.append((rel, st, doc.low))
        if not entries:
            return
        segs = self._build_parallel(entries)
        if segs is None:
            segs = [build_segment(_segment_name(), entries, self.progress)]
        self._new = segs
        self._new_pos = {rel: (si, fi) for si, seg in enumerate(segs) for fi, rel in enumerate(seg.rels)}

    def _build_parallel(self, entries: list) -> Optional[list[Segment]]:
        """Large first builds on several cores: each forked worker indexes a contiguous
        part and writes it as a segment file; the parent loads them. None when it does not
        pay (less than match.PARALLEL_MIN_BYTES of text) or cannot be done."""
        global _FORK_BUILD
        workers = min(os.cpu_count() or 1, match_mod.MAX_WORKERS)
        sizes = [len(e[2]) if e[2] is not None else 0 for e in entries]
        total = sum(sizes)
        if workers < 2 or len(entries) < 2 or total < match_mod.PARALLEL_MIN_BYTES:
            return None
        parts, start, acc = [], 0, 0
        for i, n in enumerate(sizes):
            acc += n
            if acc >= total * (len(parts) + 1) / workers and len(parts) < workers - 1:
                parts.append((start, i + 1, _segment_name()))
                start = i + 1
        parts.append((start, len(entries), _segment_name()))
        parts = [p for p in parts if p[0] < p[1]]
        _FORK_BUILD = (entries, self.path, self.root, self._fingerprint)
        try:
            names = fork_map(_build_part, parts, len(parts))
        finally:
            _FORK_BUILD = None
        segs: list[Segment] = []
        try:
            if names is None or any(n is None for n in names):  # (no fork here, or a worker failed or died)
                raise OSError("a part could not be written")
            for name in names:
                segs.append(Segment.load(os.path.join(self.path, name), self.root, self._fingerprint))
        except (OSError, ValueError):
            for _s, _e, name in parts:  # what any worker wrote goes
                try:
                    os.unlink(os.path.join(self.path, name))
                except OSError:
                    pass
            return None
        self._written.update(names)
        return segs

    # ------------------------------------------------------------------ saving

    def save(self) -> None:
        """Write this cycle's new segment and the manifest (merging segments when there are
        too many), unless another process is saving. OSError propagates."""
        if not self._loaded:
            return
        if not self._new and not self._fresh and not self._dirty and not self._store.dirty \
                and not self._facts.dirty:
            return
        self._index_fresh()
        written: list[str] = []
        for seg in self._new:
            if seg.name not in self._written:
                self._write(seg)
            written.append(seg.name)
        with _try_lock(os.path.join(self.path, LOCK_NAME)) as got:
            if not got:
                return
            current = [n for n in self._manifest_names(quiet=True)
                       if n not in self._bad and os.path.exists(os.path.join(self.path, n))]
            if not current and not self._dirty:
                current = [s.name for s in self._segments]
            names = [n for n in current if n not in written] + written
            mine = {s.name for s in self._segments}
            if len(names) > MAX_SEGMENTS and set(names) <= mine | set(written):
                merged = self._merged()
                self._write(merged)
                names = [merged.name]
            man = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "matcher": self._fingerprint,
                   "root": self.root, "segments": names}
            atomic_write(os.path.join(self.path, MANIFEST),
                         [json.dumps(man, indent=0).encode("ascii")], fsync=False, prefix=TMP_PREFIX, outside=self.root)
            self._store.save(names)
            self._facts.save(names)
            self._collect(set(names))
        _evict_others(os.path.dirname(self.path), self.path)

    def _write(self, seg: Segment) -> None:
        atomic_write(os.path.join(self.path, seg.name), seg.pieces(self.root, self._fingerprint),
                     fsync=False, prefix=TMP_PREFIX, outside=self.root)

    def _merged(self) -> Segment:
        """All live entries (newest per path, not known stale) as one segment."""
        segs = self._segments + self._new
        newest: dict[str, tuple[int, int]] = {}
        for si, seg in enumerate(segs):
            for fi, rel in enumerate(seg.rels):
                newest[rel] = (si, fi)
        entries = []
        for rel in sorted(newest):
            si, fi = newest[rel]
            seg = segs[si]
            st = seg.stat(fi)
            if rel in self._fresh and self._fresh[rel][0] != st:
                continue
            try:
                text = None if seg.text_len[fi] < 0 else seg.text(fi)
            except OSError:
                continue
            entries.append((rel, st, text))
        return build_segment(_segment_name(), entries, self.progress)

    def _collect(self, live: set[str]) -> None:
        """Remove segment and temporary files no manifest names, once old enough."""
        now = time.time()
        try:
            names = os.listdir(self.path)
        except OSError:
            return
        for name in names:
            if name in live or not (name.startswith(SEG_PREFIX) or name.startswith(TMP_PREFIX)):
                continue
            p = os.path.join(self.path, name)
            try:
                if now - os.lstat(p).st_mtime > GC_GRACE_S:
                    os.unlink(p)
            except OSError:
                pass


def _segment_name() -> str:
    return SEG_PREFIX + os.urandom(8).hex() + SEG_SUFFIX


# What a forked worker indexes: inherited from the parent at fork time (copy-on-write).
_FORK_BUILD: Optional[tuple] = None


def _build_part(part: tuple[int, int, str]) -> Optional[str]:
    """In a worker: index entries[a:b] and write them as segment ``name``; its name, or
    None when it could not be written."""
    entries, path, root, fingerprint = _FORK_BUILD  # type: ignore[misc]
    a, b, name = part
    try:
        seg = build_segment(name, entries[a:b])
        atomic_write(os.path.join(path, name), seg.pieces(root, fingerprint), fsync=False, prefix=TMP_PREFIX,
                     outside=root)
    except OSError:
        return None
    return name


def _served_document(seg: Segment, fi: int, rel: str, path: str, size: int,
                     ident: Optional[fsafe.FileId]) -> Document:
    """The document of the walked file ``rel`` at ``path`` (``ident``: its device and
    inode), served as file ``fi`` of ``seg``: its text is read from the segment when
    first needed."""
    return Document(rel, size=size, load_low=lambda: _text_or_disk(seg, fi, path, ident, size), path=path,
                    identity=ident)


def _text_or_disk(seg: Segment, fi: int, path: str, ident: Optional[fsafe.FileId], size: int) -> bytes:
    """An indexed file's text; should the segment have lost it, the file's as it is now
    (by fsafe's rules, pinned to the file the walk saw) when it still has the size the
    walk saw, lower-cased; else nothing."""
    try:
        return seg.text(fi)
    except OSError:
        try:
            data = fsafe.read_checked(path, expect=ident, max_bytes=size)[0]
        except OSError:
            return b""
        return data.lower() if len(data) == size else b""


def _line_starts(lines: Sequence[str]) -> list[int]:
    """Where each of ``lines`` begins in ``"\\n".join(lines)``."""
    out = list(accumulate(map(len, lines), initial=0))[:-1]
    return [at + i for i, at in enumerate(out)]


def _positions(joined: str, starts: list[int], needle: str) -> list[int]:
    """Indices of the lines of ``joined`` (line i begins at starts[i]) holding ``needle``."""
    out = []
    p = joined.find(needle)
    while p >= 0:
        i = bisect_right(starts, p) - 1
        out.append(i)
        nxt = starts[i + 1] if i + 1 < len(starts) else len(joined)
        p = joined.find(needle, nxt)
    return out


class _try_lock:
    """An exclusive lock on ``path`` if it can be had within ``wait`` seconds (else ``False``)."""

    def __init__(self, path: str, wait: float = LOCK_WAIT_S) -> None:
        self.path = path
        self.wait = wait
        self.fd = -1

    def __enter__(self) -> bool:
        try:
            import fcntl
        except ImportError:  # no advisory locks: the manifest's rename is still atomic
            return True
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except OSError:
            return False
        deadline = time.monotonic() + self.wait
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(LOCK_POLL_S)

    def __exit__(self, *exc: Any) -> None:
        if self.fd >= 0:
            os.close(self.fd)


def _evict_others(base: str, mine: str) -> None:
    """Drop the least recently used trees' indexes while all of them exceed TOTAL_MAX_MB.
    Only a directory named like an index whose manifest says it is one counts, and only
    the files an index writes are removed from it: anything else there is the user's."""
    try:
        dirs = [os.path.join(base, n) for n in os.listdir(base) if _KEY_RE.fullmatch(n)]
    except OSError:
        return
    sizes = []
    total = 0
    for d in dirs:
        try:
            st = os.lstat(d)
            if not stat_mod.S_ISDIR(st.st_mode) or _untrusted(st) or not _is_index_dir(d):
                continue
            size = sum(_allocated(os.lstat(os.path.join(d, n))) for n in os.listdir(d) if _index_file(n))
            used = os.lstat(os.path.join(d, MANIFEST)).st_mtime
        except OSError:
            continue
        total += size
        sizes.append((used, d, size))
    for _, d, size in sorted(sizes):
        if total <= TOTAL_MAX_MB << 20:
            break
        if d == mine:
            continue
        with _try_lock(os.path.join(d, LOCK_NAME), wait=0.0) as got:
            if not got:
                continue  # (another process is saving that index: it is in use)
            try:
                names = os.listdir(d)
            except OSError:
                continue
            for n in names:
                if _index_file(n):
                    try:
                        os.unlink(os.path.join(d, n))
                    except OSError:
                        pass
        try:
            os.rmdir(d)  # (left in place when the user keeps anything else in it)
        except OSError:
            pass
        total -= size


def _allocated(st: os.stat_result) -> int:
    """The bytes a file takes on disk: its size, or less when it is sparse (a 9 GB file
    of holes is no reason to evict every other index)."""
    blocks = getattr(st, "st_blocks", None)
    return st.st_size if blocks is None else min(st.st_size, blocks * 512)


def _is_index_dir(d: str) -> bool:
    """Whether ``d`` holds an index's manifest (of any version): a small JSON object whose
    ``format`` is :data:`FORMAT_NAME`."""
    path = os.path.join(d, MANIFEST)
    try:
        if not stat_mod.S_ISREG(os.lstat(path).st_mode):
            return False  # (a link is not followed, a FIFO never waited on)
        man = json.loads(fsafe.read_regular(path, 1 << 16).decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(man, dict) and man.get("format") == FORMAT_NAME


def _index_file(name: str) -> bool:
    """Whether a file name is one an index directory's writer makes."""
    return name in (MANIFEST, STORE_NAME, FACTS_NAME, LOCK_NAME) or name.startswith((SEG_PREFIX, TMP_PREFIX))
