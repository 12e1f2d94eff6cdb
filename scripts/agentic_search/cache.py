"""A cache beside the state file, so that cycles 2 and 3 reuse what cycle 1 read.

A cycle reads every candidate file and counts every keyword in it. The next cycle
walks the same tree with mostly the same keywords, so the cache keeps, beside
``--state FILE``:

- ``FILE.cache`` (JSON): the file table -- path, the stat git compares (size,
  ``mtime_ns``, ``ctime_ns``, device, inode), where its lower-cased bytes sit in the blob (length -1 marks a binary file) -- and, per
  keyword, what it found in each file (count, path match, definition), keyed by
  what decides those: the keyword's needles, its path needle and whether it is a
  path keyword.
- ``FILE.cache.blob``: one header line (format, version, token, size), then the
  lower-cased bytes of the table's text files, one after another.

The rules, in the order they are applied:

1. The cache is never inside the searched tree: :func:`open_cache` gives None when
   the state file's directory is inside ``--root`` (the state is then the only file
   the tool writes there).
2. An entry is served only when the walk's stat for that path -- size, ``mtime_ns``,
   ``ctime_ns``, device and inode, what git's index compares -- equals the recorded
   one. An edit that restores the mtime still moves the ctime; ``cp -p`` and a rename
   over the file bring a new inode. A changed, added or removed file is read from disk
   as without the cache; files this cycle does not read leave the table.
3. Racy entries (git's "racily clean" ones): a later write in the same timestamp tick
   could keep the whole stat. A file whose mtime lies within :data:`RACY_WINDOW_NS` of
   the moment it was read is not recorded; one whose ctime does (a tree just checked
   out or copied) is recorded as "verify": before it is served its bytes are read and
   compared with the recorded ones, as git compares content for such entries.
4. A keyword's results cover every text file of the table; results no longer covering
   it are dropped. Keywords only counted when they are not in the cache, and then
   only in the files that hold one of their needles at all (found with one
   ``bytes.find`` pass over the blob); every count, path match and definition still
   comes from :func:`match.match_document`, so results and scores are identical with
   and without the cache.
5. A file that is not ours, of another version, for another root, written by another
   ``match.py`` (its hash is recorded), truncated or malformed is ignored and rebuilt:
   it is only a cache, never an error. No pickle: JSON and raw bytes only.
   Before a byte is read, each file must be a regular file (opened without following
   a symlink, never blocking on a FIFO), owned by the caller, writable by no group or
   other user, and no larger than its header says (the blob) -- a cache planted by
   someone else in a shared directory such as /tmp is ignored with one line on stderr.
6. Writes go to a temporary file in the same directory, then ``os.replace``; the blob
   is rewritten only when new file contents must go in, the index when anything
   changed. No fsync: a crash leaves the previous files or ones rule 5 rejects.

Example::

    >>> cache = open_cache("/tmp/s.json", "/path/to/repo")  # doctest: +SKIP
    >>> docs, _, _ = load_documents(candidates, cache)       # engine.py  # doctest: +SKIP
    >>> rank_documents(docs, keywords, words, cache=cache)   # doctest: +SKIP
    >>> cache.save()                                         # doctest: +SKIP
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat as stat_mod
import sys
import time
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from . import fsafe
from . import match as match_mod
from .match import Document, FileMatch, compile_keywords, match_document, match_many
from .query import Keyword
from .state import atomic_write

# Temporary files of an interrupted cache write are named so (and cleaned up on failure).
CACHE_TMP_PREFIX = ".agentic-search-cache-"

FORMAT_NAME = "agentic-search-cache"
FORMAT_VERSION = 2  # 2: rows carry ctime, device and inode
# Suffixes added to the state file's path.
INDEX_SUFFIX = ".cache"
BLOB_SUFFIX = ".cache.blob"
# A file modified this close to the moment it was read may change again without a
# new mtime (2 s covers the coarsest common timestamps, FAT's).
RACY_WINDOW_NS = 2_000_000_000
# Keywords whose results are kept: this cycle's, then earlier ones, up to this many
# (each costs a few KB to a few hundred KB of index).
MAX_KEYWORDS = 160
# The blob is rewritten compactly once less than this share of it is still in use.
MIN_LIVE_SHARE = 0.5
# Bytes of the blob's first line we look at.
_BLOB_HEADER_MAX = 256
# Recorded in place of a ctime too close to the read: the entry is served only after
# its content has been compared.
VERIFY_CTIME = -1
# Mode bits that let someone else rewrite a cache file: such a file is not trusted.
_FOREIGN_WRITE = stat_mod.S_IWGRP | stat_mod.S_IWOTH

# (count, path match, definition) of one keyword in one file.
Triple = tuple  # tuple[int, float, float]


# (size, mtime_ns, ctime_ns, device, inode) of a file: what must be unchanged to serve it.
Stat = tuple


@dataclass(frozen=True)
class Entry:
    """One recorded file: its stat when read and where its bytes sit in the blob."""

    stat: Stat
    offset: int  # absolute position in the blob file's bytes
    length: int  # -1: binary

    @property
    def size(self) -> int:
        """The file's size when recorded."""
        return self.stat[0]


def stat_key(cand: Any) -> Optional[Stat]:
    """The stat of a walked file to compare with the recorded one: the walk's own
    (walk.FileEntry carries it); for a candidate without device and inode, an
    ``lstat`` now; None when it cannot be had."""
    if getattr(cand, "ino", 0):
        return (cand.size, cand.mtime_ns, cand.ctime_ns, cand.dev, cand.ino)
    try:
        st = os.lstat(cand.path)
    except (OSError, TypeError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino)


def keyword_key(kw: Keyword) -> str:
    """What decides a keyword's counts, path matches and definitions, as one string."""
    return json.dumps([
        "path" if kw.kind == "path" else "text",
        kw.path_needle,
        [n.decode("latin-1") for n in kw.needles],
    ])


def matcher_fingerprint() -> Optional[str]:
    """A hash of match.py: results written by another matcher are not reused."""
    try:
        with open(match_mod.__file__, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()[:16]
    except (OSError, TypeError):
        return None


def open_cache(state_path: str, root: str) -> Optional["Cache"]:
    """The cache beside ``state_path``, or None when it would sit inside ``root``."""
    state_dir = os.path.realpath(os.path.dirname(os.path.abspath(state_path)))
    root_real = os.path.realpath(root)
    if state_dir == root_real or state_dir.startswith(root_real.rstrip(os.sep) + os.sep):
        return None
    if inside_by_identity(state_dir, root_real):  # a bind mount or other alias of the tree
        return None
    fingerprint = matcher_fingerprint()
    if fingerprint is None:
        return None
    return Cache(os.path.abspath(state_path) + INDEX_SUFFIX, root_real, fingerprint)


def inside_by_identity(path: str, root: str) -> bool:
    """Whether ``path`` or a directory above it is ``root`` itself by device and inode
    (so a bind-mount alias of the tree counts as inside it)."""
    try:
        st = os.stat(root)
    except OSError:
        return False
    target = (st.st_dev, st.st_ino)
    cur = path
    while True:
        try:
            here = os.stat(cur)
            if (here.st_dev, here.st_ino) == target:
                return True
        except OSError:
            pass
        parent = os.path.dirname(cur)
        if parent == cur:
            return False
        cur = parent


def _untrusted_reason(st: os.stat_result) -> Optional[str]:
    """Why a cache file must not be believed, or None: it must be the caller's own."""
    geteuid = getattr(os, "geteuid", None)
    if geteuid is not None and st.st_uid != geteuid():
        return f"owned by uid {st.st_uid}, not by you"
    if st.st_mode & _FOREIGN_WRITE:
        return "writable by group or others"
    return None


def _read_trusted(path: str, blob: bool = False) -> Optional[bytes]:
    """A cache file's bytes, or None: absent (silently), or not to be trusted (one line
    on stderr), or -- the blob -- of another size than its header says (silently: a
    damaged cache is rebuilt). The checks are made on the open descriptor."""
    try:
        fd = os.open(path, fsafe.OPEN_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        _warn(path, "a symlink" if os.path.islink(path) else (exc.strerror or str(exc)))
        return None
    try:
        st = os.fstat(fd)
        if not stat_mod.S_ISREG(st.st_mode):
            _warn(path, "not a regular file")
            return None
        why = _untrusted_reason(st)
        if why is not None:
            _warn(path, why)
            return None
        head = b""
        if blob:
            head = os.read(fd, _BLOB_HEADER_MAX)
            nl = head.find(b"\n")
            parts = head[:nl].split(b" ") if nl > 0 else []
            if len(parts) != 4 or not parts[3].isdigit() or nl + 1 + int(parts[3]) != st.st_size:
                return None
        rest = fsafe.read_fd(fd, st.st_size - len(head), st.st_size - len(head))
        data = head + rest
        return data if len(data) == st.st_size else None
    finally:
        os.close(fd)


def _warn(path: str, why: str) -> None:
    """One line on stderr for a cache file that is ignored as untrustworthy."""
    sys.stderr.write(f"retrieve_loop.py: ignoring the cache {path}: {why}\n")


def _path_may_match(rel: str, path_needles: Sequence[str]) -> bool:
    """match_document's own test for looking at a path at all: a file none of whose
    needles occur in its text and none of whose path needles pass this matches nothing."""
    rel_low = rel.lower()
    rel_flat = rel_low.replace("_", "").replace("-", "")
    return any(pn in rel_low or pn in rel_flat for pn in path_needles)


class Cache:
    """The cache of one loop: load lazily, serve documents and matches, save once."""

    def __init__(self, path: str, root_real: str, fingerprint: str) -> None:
        self.path = path
        self.blob_path = path[: -len(INDEX_SUFFIX)] + BLOB_SUFFIX
        self.root = root_real
        self._fingerprint = fingerprint
        self._loaded = False
        # What the files on disk held.
        self._table: dict[str, Entry] = {}
        self._token = ""
        self._blob = b""
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._rels: list[str] = []
        self._kw: dict[str, dict[str, Triple]] = {}
        # What this cycle saw.
        self._served: dict[str, Entry] = {}
        self._fresh: dict[str, Document] = {}
        self._fresh_stat: dict[str, Stat] = {}
        self._fresh_binary: dict[str, Stat] = {}
        self._untrusted: set[str] = set()
        self._matched_rels: Optional[set[str]] = None
        self._results: dict[str, dict[str, Triple]] = {}

    @property
    def paths(self) -> tuple[str, str]:
        """The files the cache may write: the walk must skip them."""
        return self.path, self.blob_path

    # ------------------------------------------------------------------ loading

    def _load(self) -> None:
        """Read the index and blob; anything wrong leaves the cache empty."""
        self._loaded = True
        try:
            raw = _read_trusted(self.path)
            blob = _read_trusted(self.blob_path, blob=True) if raw is not None else None
            if raw is None or blob is None:
                return
            index = json.loads(raw.decode("utf-8"))
            table, kw = self._parse(index, blob)
        except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, IndexError, AttributeError,
                RecursionError):
            return
        self._table, self._kw, self._blob = table, kw, blob
        self._token = index["token"]
        live = sorted((e.offset, e.offset + e.length, rel) for rel, e in table.items() if e.length >= 0)
        self._starts = [s for s, _, _ in live]
        self._ends = [e for _, e, _ in live]
        self._rels = [r for _, _, r in live]

    def _parse(self, index: Any, blob: bytes) -> tuple[dict[str, Entry], dict[str, dict[str, Triple]]]:
        """Validate the index against the blob; ValueError when anything is off."""
        if not isinstance(index, dict) or index.get("format") != FORMAT_NAME:
            raise ValueError("not a cache")
        if index.get("version") != FORMAT_VERSION or index.get("matcher") != self._fingerprint:
            raise ValueError("other version or matcher")
        if index.get("root") != self.root or not isinstance(index.get("token"), str):
            raise ValueError("other root")
        nl = blob.find(b"\n", 0, _BLOB_HEADER_MAX)
        head = blob[:nl].decode("ascii").split(" ") if nl > 0 else []
        if head[:3] != [FORMAT_NAME + "-blob", str(FORMAT_VERSION), index["token"]] or len(head) != 4:
            raise ValueError("blob does not belong to this index")
        if int(head[3]) != len(blob) - nl - 1:
            raise ValueError("truncated blob")
        base, end = nl + 1, len(blob)
        rels: list[str] = []
        table: dict[str, Entry] = {}
        for row in index["files"]:
            rel, size, mtime_ns, ctime_ns, dev, ino, offset, length = row
            st = (size, mtime_ns, ctime_ns, dev, ino)
            if not (isinstance(rel, str) and all(type(v) is int for v in st + (offset, length))):
                raise ValueError("bad file row")
            if length >= 0 and (offset < 0 or length != size or base + offset + length > end):
                raise ValueError("file row outside the blob")
            if rel in table:
                raise ValueError("duplicate file row")
            table[rel] = Entry(st, base + offset, length)
            rels.append(rel)
        kw: dict[str, dict[str, Triple]] = {}
        for item in index["keywords"]:
            key, rows = item["key"], item["rows"]
            if not isinstance(key, str) or not isinstance(rows, list) or len(rows) % 4:
                raise ValueError("bad keyword entry")
            found: dict[str, Triple] = {}
            for i in range(0, len(rows), 4):
                fi, c, p, d = rows[i:i + 4]
                rel = rels[fi]
                if type(fi) is not int or fi < 0 or table[rel].length < 0 or type(c) is not int or c < 0 \
                        or type(p) is not float or type(d) is not float:
                    raise ValueError("bad keyword row")
                found[rel] = (c, p, d)
            kw[key] = found
        return table, kw

    # ------------------------------------------------------------------ reading

    def read(self, cand: Any, reader: Callable[..., Optional[Document]]) -> Optional[Document]:
        """The document of a walked file (None when binary): from the cache when its
        stat (:func:`stat_key`) is unchanged, else through ``reader(rel, path)`` (OSError
        propagates); a document whose (device, inode) is not the walk's is refused."""
        if not self._loaded:
            self._load()
        key = stat_key(cand)
        ident = (key[3], key[4]) if key is not None else None
        entry = self._table.get(cand.rel)
        if entry is not None and key is not None and key == entry.stat:
            if entry.length < 0:
                self._fresh_binary[cand.rel] = entry.stat
                return None
            self._served[cand.rel] = entry
            low = self._slicer(entry)
            return Document(cand.rel, size=entry.length, load_low=low, path=cand.path, identity=ident)
        started = time.time_ns()
        doc = reader(cand.rel, cand.path)
        if doc is not None and ident is not None and doc.identity not in (None, ident):
            # Another file than the walk saw (swapped meanwhile): its bytes go no further.
            raise fsafe.UnsafeFile(errno.ESTALE, "not the file the walk saw (replaced meanwhile)", cand.path)
        if entry is not None and key is not None and entry.stat[2] == VERIFY_CTIME \
                and key[:2] + key[3:] == entry.stat[:2] + entry.stat[3:] and self._same_content(entry, doc):
            checked = self._recorded_stat(key, started)
            if entry.length < 0:
                self._fresh_binary[cand.rel] = checked
            else:
                self._served[cand.rel] = Entry(checked, entry.offset, entry.length)
            return doc
        trusted = (key is not None and all(isinstance(v, int) for v in key)
                   and key[1] < started - RACY_WINDOW_NS
                   and (doc is None or doc.size == key[0]))
        if not trusted:
            self._untrusted.add(cand.rel)
        elif doc is None:
            self._fresh_binary[cand.rel] = self._recorded_stat(key, started)
        else:
            self._fresh[cand.rel] = doc
            self._fresh_stat[cand.rel] = self._recorded_stat(key, started)
        return doc

    @staticmethod
    def _recorded_stat(key: Stat, started: int) -> Stat:
        """The stat to record: a ctime too close to the read is recorded as "verify"."""
        if key[2] < started - RACY_WINDOW_NS:
            return key
        return key[:2] + (VERIFY_CTIME,) + key[3:]

    def _same_content(self, entry: Entry, doc: Optional[Document]) -> bool:
        """Whether a file read now holds what the cache recorded for it."""
        if entry.length < 0 or doc is None:
            return entry.length < 0 and doc is None
        return doc.size == entry.length and doc.low == self._blob[entry.offset:entry.offset + entry.length]

    def _slicer(self, entry: Entry) -> Callable[[], bytes]:
        blob = self._blob
        return lambda: blob[entry.offset:entry.offset + entry.length]

    # ------------------------------------------------------------------ matching

    def match(self, docs: Sequence[Document], keywords: Sequence[Keyword]) -> list[Optional[FileMatch]]:
        """What :func:`match.match_document` gives for each document, or None where no
        keyword hit its content or path; cached results are reused, the rest counted."""
        if not self._loaded:
            self._load()
        keys = [keyword_key(kw) for kw in keywords]
        n = len(keywords)
        missing = [i for i, k in enumerate(keys) if k not in self._kw]
        missing_keys = [keys[i] for i in missing]
        ck_all = compile_keywords(keywords)
        ck_missing = compile_keywords([keywords[i] for i in missing])
        served = {d.rel for d in docs if d.rel in self._served and d.rel not in self._fresh}
        rows: dict[str, tuple[list, list, list]] = {}
        for i, key in enumerate(keys):
            if key in self._kw:
                for rel, (c, p, d) in self._kw[key].items():
                    if rel in served:
                        row = rows.get(rel)
                        if row is None:
                            row = rows[rel] = ([0] * n, [0.0] * n, [0.0] * n)
                        row[0][i], row[1][i], row[2][i] = c, p, d
        holders = self._holders(ck_missing) if missing else set()
        path_needles = [kw.path_needle for kw in ck_missing.keywords]
        results: dict[str, dict[str, Triple]] = {k: {} for k in keys}
        out: list[Optional[FileMatch]] = []
        fresh = iter(match_many([doc for doc in docs if doc.rel not in served], ck_all))
        for doc in docs:
            if doc.rel not in served:
                m = next(fresh)
                self._record(results, keys, doc.rel, m)
                out.append(m if m.matched else None)
                continue
            if missing and (doc.rel in holders or _path_may_match(doc.rel, path_needles)):
                probe = doc if doc.rel in holders else Document(doc.rel, b"", b"", doc.size)
                mm = match_document(probe, ck_missing)
                if mm.matched:
                    self._record(results, missing_keys, doc.rel, mm)
                    row = rows.get(doc.rel)
                    if row is None:
                        row = rows[doc.rel] = ([0] * n, [0.0] * n, [0.0] * n)
                    for j, i in enumerate(missing):
                        row[0][i], row[1][i], row[2][i] = mm.counts[j], mm.in_path[j], mm.defines[j]
            row = rows.get(doc.rel)
            out.append(None if row is None else FileMatch(
                rel=doc.rel, size=doc.size, counts=tuple(row[0]), in_path=tuple(row[1]), defines=tuple(row[2])))
        for key in keys:
            if key in self._kw:
                found = results[key]
                for rel, t in self._kw[key].items():
                    if rel in served:
                        found[rel] = t
        self._results = results
        self._matched_rels = {d.rel for d in docs}
        return out

    @staticmethod
    def _record(results: dict[str, dict[str, Triple]], keys: Sequence[str], rel: str, m: FileMatch) -> None:
        for j, key in enumerate(keys):
            if m.counts[j] or m.in_path[j]:
                results[key][rel] = (m.counts[j], m.in_path[j], m.defines[j])

    def _holders(self, ck: Any) -> set[str]:
        """Cached files whose text holds any of these needles (a superset: one find pass
        over the blob per needle, jumping to the next file after each hit)."""
        needles = {n for kw in ck.keywords for n in kw.needles}
        if b"" in needles:
            return set(self._rels)
        blob, starts, ends = self._blob, self._starts, self._ends
        found: set[int] = set()
        for needle in sorted(needles):
            pos = starts[0] if starts else len(blob)
            while True:
                p = blob.find(needle, pos)
                if p < 0:
                    break
                j = bisect_right(starts, p) - 1
                if j >= 0 and p < ends[j]:
                    found.add(j)
                    pos = ends[j]
                else:  # a gap: bytes of a file no longer in the table
                    pos = p + 1
        return {self._rels[j] for j in found}

    # ------------------------------------------------------------------ saving

    def save(self) -> None:
        """Write what this cycle read and matched, when anything changed. OSError propagates."""
        if not self._loaded:
            return
        text = sorted(set(self._served) | set(self._fresh))
        binary = sorted(self._fresh_binary)
        live = sum(self._served[r].length for r in self._served)
        rewrite = bool(self._fresh) or not self._token or live < MIN_LIVE_SHARE * len(self._blob)
        keywords = self._keywords_to_keep(set(text))
        same_table = (not rewrite and set(self._table) == set(text) | set(binary)
                      and all(self._table[r].length >= 0 for r in text)
                      and all(self._table[r] == e for r, e in self._served.items())
                      and all(self._table[r] == Entry(st, self._table[r].offset, -1)
                              for r, st in self._fresh_binary.items()))
        if same_table and list(keywords) == list(self._kw):
            return
        if rewrite:
            token = os.urandom(8).hex()
            entries, base = self._write_blob(token, text)
        else:
            token, entries = self._token, dict(self._served)
            base = self._blob.find(b"\n", 0, _BLOB_HEADER_MAX) + 1
        order = sorted(text + binary)
        position = {rel: i for i, rel in enumerate(order)}
        files = []
        for rel in order:
            if rel in entries:
                e = entries[rel]
                files.append([rel, *e.stat, e.offset - base, e.length])
            else:
                files.append([rel, *self._fresh_binary[rel], 0, -1])
        kw_items = []
        for key, found in keywords.items():
            flat: list = []
            for rel in sorted(found, key=position.__getitem__):
                flat.extend((position[rel],) + tuple(found[rel]))
            kw_items.append({"key": key, "rows": flat})
        index = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "matcher": self._fingerprint,
                 "root": self.root, "token": token, "files": files, "keywords": kw_items}
        atomic_write(self.path, [json.dumps(index, separators=(",", ":")).encode("ascii")],
                     fsync=False, prefix=CACHE_TMP_PREFIX)

    def _keywords_to_keep(self, text: set[str]) -> dict[str, dict[str, Triple]]:
        """This cycle's keywords first, then earlier ones still covering every text file."""
        keep: dict[str, dict[str, Triple]] = {}
        if self._matched_rels is not None and text <= self._matched_rels:
            for key, found in self._results.items():
                keep[key] = {r: t for r, t in found.items() if r in text}
        if not self._fresh:  # earlier results cover only files served from the cache
            for key, found in self._kw.items():
                if key not in keep:
                    keep[key] = {r: t for r, t in found.items() if r in text}
        return dict(list(keep.items())[:MAX_KEYWORDS])

    def _write_blob(self, token: str, text: Sequence[str]) -> tuple[dict[str, Entry], int]:
        """Write the lower-cased bytes of ``text`` files; their entries, and the data's start."""
        size = sum(self._fresh[r].size if r in self._fresh else self._served[r].length for r in text)
        head = f"{FORMAT_NAME}-blob {FORMAT_VERSION} {token} {size}\n".encode("ascii")
        pieces: list = [head]
        entries: dict[str, Entry] = {}
        pos = len(head)
        view = memoryview(self._blob)
        for rel in text:
            if rel in self._fresh:
                doc = self._fresh[rel]
                pieces.append(doc.low)
                entry = Entry(self._fresh_stat[rel], 0, doc.size)
            else:
                e = self._served[rel]
                pieces.append(view[e.offset:e.offset + e.length])
                entry = e
            entries[rel] = Entry(entry.stat, pos, entry.length)
            pos += entry.length
        atomic_write(self.blob_path, pieces, fsync=False, prefix=CACHE_TMP_PREFIX)
        return entries, len(head)


