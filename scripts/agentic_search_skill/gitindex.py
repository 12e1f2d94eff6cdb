"""The paths git tracks, read from a work tree's index file (``$GIT_DIR/index``).

Ignore rules do not apply to a file git tracks (``git add -f build/keep.py``, or a file
added before the pattern was): ``git check-ignore`` says it is not ignored, and the walk
must search it. This module reads only the index's entries (format versions 2, 3 and 4;
SHA-1 or SHA-256 object names), never the objects, and answers which paths are tracked
and which directories hold tracked files.

The index ends with the hash of what precedes it, which tells SHA-1 names from SHA-256
ones. Anything unexpected - no index, a short or hostile file, an unknown version, a split
index whose shared part is elsewhere - gives what could be read safely, or nothing: a
path this module does not report as tracked is judged by the ignore rules alone, as
before. It never raises for a bad file.

Format (git's Documentation/gitformat-index.txt): a 12-byte header (``DIRC``, version,
entry count), then the entries sorted by path. Each entry: 40 bytes of stat data, the
object name (20 or 32 bytes), 16 bits of flags (low 12 bits: the path's length, capped at
0xFFF), in version 3 and later 16 more bits when the flags' bit 0x4000 is set, then the
path. Versions 2 and 3 end the path with NUL bytes up to a multiple of 8 of the entry's
length; version 4 writes the path as a number of bytes to drop from the previous path
(a varint) and the NUL-ended rest.
"""
from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass
from typing import FrozenSet, Optional

from . import fsafe

INDEX_NAME = "index"
# An index larger than this is not read (linux's is about 10 MiB for 80,000 files).
MAX_INDEX_BYTES = 64 * 1024 * 1024
# A path longer than this is no path (git's own limit is the file system's, 4,096 on
# Linux); and the paths of a version-4 index, each extending the one before it, may
# hold at most this many times the index's bytes, or a crafted index of a few MB would
# spell out gigabytes (real ones hold less than their size; v4 about half).
MAX_PATH_BYTES = 4096
MAX_PATH_BYTES_PER_INDEX_BYTE = 4
# The directories above the paths, spelled out, may hold at most this many times the
# index's bytes too: a real tree's files share their directories (linux's hold a few
# percent of its paths' bytes), while an index of deep paths that differ at the top
# spells out each one's every directory (an 830 KB one took 900 MB). Past it, the index
# is read as none (the ignore rules alone decide).
MAX_DIR_BYTES_PER_INDEX_BYTE = 4
_HEADER = struct.Struct(">4sII")
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")
_STAT_BYTES = 40
_SHA1_BYTES = 20
_SHA256_BYTES = 32
_MODE_OFFSET = 24          # within the stat data: ctime, mtime (8 each), dev, ino, then mode
_GITLINK = 0o160000        # a submodule's commit: a directory of another repository
_TREE = 0o040000           # a sparse index's directory entry (its files are not checked out)


@dataclass(frozen=True)
class Tracked:
    """Paths of one work tree that git tracks, relative to its top (``/``-separated)."""

    files: FrozenSet[str] = frozenset()
    dirs: FrozenSet[str] = frozenset()     # every directory holding a tracked file, at any depth
    sparse: FrozenSet[str] = frozenset()   # a sparse index's directories: every path below is tracked

    def holds(self, rel: str, is_dir: bool) -> bool:
        """Whether git tracks the file ``rel``, or tracks a file below the directory ``rel``."""
        if rel in (self.dirs if is_dir else self.files):
            return True
        if not self.sparse:
            return False
        # (``rel`` or a directory above it: one lookup per level, whatever the index holds.)
        head = rel
        while head:
            if head in self.sparse:
                return True
            head = head.rpartition("/")[0]
        return False


NOTHING = Tracked()


def read_tracked(git_dir: str) -> Tracked:
    """The tracked paths of the index in ``git_dir`` (NOTHING when it cannot be read)."""
    try:
        data = fsafe.read_regular(os.path.join(git_dir, INDEX_NAME), MAX_INDEX_BYTES + 1)
    except (OSError, ValueError):
        return NOTHING
    if len(data) > MAX_INDEX_BYTES:
        return NOTHING
    for name_bytes in _object_name_sizes(data):
        parsed = _entries_and_end(data, name_bytes)
        if parsed is not None:
            entries, end = parsed
            read = len(data)
            shared = _shared_index(data, end, name_bytes)
            if shared is not None:  # a split index: most entries are in the shared file
                more, more_bytes = _shared_entries(git_dir, shared, name_bytes)
                entries, read = entries + more, read + more_bytes
            return _tracked(entries, MAX_DIR_BYTES_PER_INDEX_BYTE * read)
    return NOTHING


def _shared_index(data: bytes, pos: int, name_bytes: int) -> Optional[str]:
    """The name of the shared index a split index's ``link`` extension points to (a
    file ``sharedindex.<hex>`` beside it), or None. Extensions follow the entries: a
    4-byte signature, a 32-bit size, the data."""
    end = len(data) - name_bytes
    while pos + 8 <= end:
        signature = data[pos:pos + 4]
        size = _U32.unpack_from(data, pos + 4)[0]
        if signature == b"link" and size >= name_bytes:
            return data[pos + 8:pos + 8 + name_bytes].hex()
        pos += 8 + size
    return None


def _shared_entries(git_dir: str, name: str, name_bytes: int) -> tuple[list, int]:
    """The entries of the shared index ``sharedindex.<name>`` (none when unreadable),
    and the bytes they were read from.
    The split index's deletions are not applied: a path it removed stays tracked here,
    which can only keep a file in that git would call ignored."""
    path = os.path.join(git_dir, f"sharedindex.{name}")
    if os.path.islink(path):
        return [], 0  # (git writes a file; a link could lead out of the tree)
    try:
        data = fsafe.read_regular(path, MAX_INDEX_BYTES + 1)
    except (OSError, ValueError):
        return [], 0
    parsed = _entries_and_end(data, name_bytes) if len(data) <= MAX_INDEX_BYTES else None
    return (parsed[0], len(data)) if parsed is not None else ([], 0)


def _object_name_sizes(data: bytes) -> tuple:
    """The object name sizes to read ``data`` with: the one whose hash the index ends
    with (SHA-1's or SHA-256's of everything before it), else both (``index.skipHash``
    writes zeros there)."""
    for size, algorithm in ((_SHA1_BYTES, hashlib.sha1), (_SHA256_BYTES, hashlib.sha256)):
        if len(data) > size and data[-size:] == algorithm(data[:-size]).digest():
            return (size,)
    return (_SHA1_BYTES, _SHA256_BYTES)


def _entries_and_end(data: bytes, name_bytes: int) -> Optional[tuple]:
    """((path, mode) of every entry, the position after the last one), or None when
    ``data`` is no index with object names of ``name_bytes`` bytes (a path that runs past
    the end, padding that is not NUL, a path past the bounds above)."""
    if len(data) < _HEADER.size:
        return None
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3, 4) or count > len(data) // 8:
        return None
    out = []
    pos = _HEADER.size
    previous = b""
    budget = MAX_PATH_BYTES_PER_INDEX_BYTE * len(data)
    fixed = _STAT_BYTES + name_bytes + 2
    flags_at = _STAT_BYTES + name_bytes
    size = len(data)
    find = data.find
    for _ in range(count):
        start = pos
        if pos + fixed > size:
            return None
        mode = _U32.unpack_from(data, pos + _MODE_OFFSET)[0]
        flags = _U16.unpack_from(data, pos + flags_at)[0]
        pos += fixed
        if flags & 0x4000:
            if version < 3:
                return None
            pos += 2
        if version == 4:
            drop, pos = _varint(data, pos)
            end = data.find(b"\0", pos)
            if drop is None or end < 0 or drop > len(previous):
                return None
            path = previous[:len(previous) - drop] + data[pos:end]
            pos = end + 1
        else:
            end = find(b"\0", pos)
            if end < 0:
                return None
            path = data[pos:end]
            pos = start + ((end - start) // 8 + 1) * 8  # NUL padding to a multiple of 8
            if pos > size or data[end:pos].strip(b"\0"):
                return None
        length = flags & 0xFFF
        budget -= len(path)
        if (length < 0xFFF and length != len(path)) or len(path) > MAX_PATH_BYTES or budget < 0:
            return None
        previous = path
        out.append((path, mode))
    return out, pos


def _varint(data: bytes, pos: int) -> tuple:
    """Git's offset varint at ``pos``: (value, the position after it), or (None, pos)."""
    value = 0
    for i in range(10):
        if pos >= len(data):
            return None, pos
        byte = data[pos]
        pos += 1
        value = (value << 7) | (byte & 0x7F) if i == 0 else ((value + 1) << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, pos
    return None, pos


def _tracked(entries: list, max_dir_bytes: int) -> Tracked:
    """The files and their directories of index entries (a submodule counts as a
    directory whose content is tracked, and so does a sparse index's directory entry:
    git tracks every file below it, checked out or not); NOTHING when the directories
    spelled out would hold more than ``max_dir_bytes``."""
    files = set()
    dirs = set()
    sparse = set()
    dir_bytes = 0
    for raw, mode in entries:
        kind = mode & 0o170000
        path = raw.decode("utf-8", "surrogateescape")
        if kind == _TREE:
            path = path.rstrip("/")
            sparse.add(path)
        if kind in (_GITLINK, _TREE):
            dirs.add(path)
        else:
            files.add(path)
        head = path.rpartition("/")[0]
        while head and head not in dirs:
            dir_bytes += len(head)
            if dir_bytes > max_dir_bytes:
                return NOTHING
            dirs.add(head)
            head = head.rpartition("/")[0]
    return Tracked(frozenset(files), frozenset(dirs), frozenset(sparse))
