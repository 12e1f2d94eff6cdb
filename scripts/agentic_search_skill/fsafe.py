"""Safe opening: the check and the read of a file are one act.

Every file the tool reads from a searched tree (candidate files, their re-reads
for summaries, ``.gitignore`` files, ``.git`` files, the cache beside the
state) is opened here, by these rules:

1. ``O_NOFOLLOW``: a last path component that is a symlink is never followed
   (the open fails with ELOOP); the walk hands over the resolved path of a
   symlink it vetted.
2. ``O_NONBLOCK`` and ``O_NOCTTY``: opening a FIFO or a terminal never blocks
   and never takes a controlling terminal.
3. After the open, ``fstat`` on the descriptor decides: not a regular file,
   another file than the walk saw (device and inode differ: it was swapped
   between the walk and the read, or a directory above it was), or larger than
   the caller allows, and nothing is read -- :class:`UnsafeFile` (an OSError)
   is raised instead.
4. At most the caller's limit is read, even from a file that grows meanwhile.

A caller that has no identity to compare (an ignore file, a git file) may ask
for a cheap ``lstat`` first, so that devices are never even opened.

Example::

    >>> data, st = read_checked("/repo/a.py", expect=(2049, 131))  # doctest: +SKIP
"""
from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import stat
from typing import Iterator, Optional, Tuple

from hints import _read_to_end  # (hints.py's own: a descriptor read to its end)

# Flags for every read: never follow the last component, never block on a FIFO,
# never become a controlling terminal, never leak the descriptor to a child.
OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
              | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
# Bytes asked of os.read at a time once a file turns out longer than fstat said.
READ_CHUNK = 1024 * 1024

FileId = Tuple[int, int]  # (st_dev, st_ino): what a file is, whatever its name


class UnsafeFile(OSError):
    """A file that must not be read: not regular, not the one expected, or too large."""


def identity(st: os.stat_result) -> FileId:
    """The (device, inode) pair of a stat result."""
    return (st.st_dev, st.st_ino)


def resolve(path: str) -> Optional[str]:
    """``os.path.realpath(path)``, or None when it cannot be resolved: realpath follows
    links without ``strict`` yet still raises when a link cannot be read (``/proc/N/exe``
    of a kernel thread lstat's as a link whose readlink fails; another user's process
    gives EACCES), and a name with a NUL byte is a ValueError."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return None


def absolute(path: str) -> str:
    """``path`` made absolute, each ``..`` read as the system reads it: the parent of
    where the path got to, through links (``LINK/..`` is the parent of LINK's target, as
    for ls and grep, not the folder LINK sits in: a root named so searched another tree).
    OSError when it is relative and the current directory no longer exists; an OSError
    whose ``filename`` is the path before a ``..`` when the system cannot go through it
    (``missing/..``, ``file/..``, a folder it may not enter, a loop of links): the
    system's own error."""
    absolute_path = path if os.path.isabs(path) else os.path.join(os.getcwd(), path)
    parts = absolute_path.split(os.sep)
    if ".." not in parts:
        return os.path.normpath(absolute_path)
    for j, part in enumerate(parts):
        if part == "..":
            before = os.sep.join(parts[:j]) or os.sep
            try:
                os.stat(os.path.join(before, "."))  # (entering it, as the system does for "..")
            except OSError as exc:
                raise OSError(exc.errno or errno.ENOENT, exc.strerror or "cannot be entered", before) from None
    last = len(parts) - 1 - parts[::-1].index("..")
    head = os.path.realpath(os.sep.join(parts[:last + 1]) or os.sep)
    return os.path.normpath(os.path.join(head, *parts[last + 1:]))


def resolved(path: str) -> str:
    """:func:`resolve`, else the absolute path as written: for a path the caller names
    (a root, a base directory) whose resolution only decides where things are kept."""
    real = resolve(path)
    return real if real is not None else os.path.abspath(path)


def inside(real: str, root_real: str) -> bool:
    """Whether the resolved path ``real`` is ``root_real`` or below it."""
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def home_dir() -> str:
    """The user's home: $HOME when it is an absolute path, else the password database's
    (``HOME=""`` would make it ``/``, a relative one the working directory)."""
    home = os.environ.get("HOME", "")
    if os.path.isabs(home):
        return home
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):
        return os.path.expanduser("~")


# Where Linux lists the mounts this process sees: for each, the folder of its file
# system it shows (a bind mount of a folder shows that folder, not the file system's root).
MOUNT_TABLE = "/proc/self/mountinfo"
# A mount table longer than this is not read (the check by device and inode still runs).
MOUNT_TABLE_MAX_BYTES = 4 * 1024 * 1024
_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


def inside_any_name(path: str, root_real: str) -> bool:
    """Whether ``path`` is ``root_real`` or below it, by name or by device and inode: a
    folder of the tree reached through another name (a bind mount) is inside it too, and
    so is a folder below it mounted elsewhere (``tree/.cache`` bound as ``~/.cache``:
    seen in the mount table, where there is one). For where the tool would write (its
    state, its index)."""
    if inside(path, root_real):
        return True
    if _inside_by_mounts(path, root_real):
        return True
    try:
        st = os.stat(root_real)
    except OSError:
        return False
    cur = path
    while True:
        try:
            here = os.stat(cur)
            if (here.st_dev, here.st_ino) == (st.st_dev, st.st_ino):
                return True
        except OSError:
            pass
        parent = os.path.dirname(cur)
        if parent == cur:
            return False
        cur = parent


def _inside_by_mounts(path: str, root_real: str) -> bool:
    """Whether ``path`` and ``root_real``, each seen as a folder of the file system it is
    mounted from (:func:`_fs_location`), are one file system and ``path`` is below."""
    mounts = _mounts()
    if not mounts:
        return False
    here, tree = _fs_location(path, mounts), _fs_location(root_real, mounts)
    return here is not None and tree is not None and here[0] == tree[0] and inside(here[1], tree[1])


def _mounts() -> dict:
    """Mount id -> (device, folder of its file system shown, mount point), per line of the
    mount table, in its order; {} where there is none or it cannot be read."""
    try:
        with open(MOUNT_TABLE, "rb") as fh:
            raw = fh.read(MOUNT_TABLE_MAX_BYTES + 1)
    except OSError:
        return {}
    if len(raw) > MOUNT_TABLE_MAX_BYTES:
        return {}
    unescape = functools.partial(_OCTAL_ESCAPE.sub, lambda m: chr(int(m.group(1), 8)))
    out = {}
    for line in raw.decode("utf-8", "surrogateescape").splitlines():
        fields = line.split(" ")
        if len(fields) >= 5:
            out[fields[0]] = (fields[2], unescape(fields[3]), unescape(fields[4]))
    return out


def _mount_id(real: str) -> Optional[str]:
    """The id of the mount that holds ``real`` (or its nearest existing folder), as the
    kernel says for a descriptor of it: the mount actually reached, whatever covers or
    stacks on the same points. None where that cannot be asked (not Linux)."""
    o_path = getattr(os, "O_PATH", 0)
    if not o_path:
        return None
    here = real
    while not os.path.lexists(here):
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    try:
        fd = os.open(here, o_path | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        with open(f"/proc/self/fdinfo/{fd}", "rb") as fh:
            for line in fh.read(4096).splitlines():
                if line.startswith(b"mnt_id:"):
                    return line.split(b":", 1)[1].strip().decode("ascii", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    return None


def _fs_location(real: str, mounts: dict) -> Optional[Tuple[str, str]]:
    """(device, path within its file system) of the resolved path ``real``: its mount's
    shown folder joined with the rest of the path below the mount point. The mount is the
    one the kernel names for it; else (no such answer) the one whose point holds it most
    closely, the last such in the table."""
    found = mounts.get(_mount_id(real) or "")
    if found is None:
        for device, shown, point in mounts.values():
            if inside(real, point) and (found is None or len(point) >= len(found[2])):
                found = (device, shown, point)
    if found is None or not inside(real, found[2]):
        return None
    device, shown, point = found
    rest = os.path.relpath(real, point)
    return device, os.path.normpath(os.path.join(shown, rest)) if rest != "." else shown


# The tree whose files are being read, as (root as given, resolved root): see tree_reads.
_TREE: list = []


@contextlib.contextmanager
def tree_reads(root: str, root_real: str) -> Iterator[None]:
    """While a cycle reads the tree at ``root``: a file or directory opened by a path
    under it must still be in it once open (:func:`left_tree`). A folder of the tree moved
    out and replaced by a link to its new place keeps its inodes, so the walk's identity
    checks pass; only where the open descriptor really lies tells."""
    _TREE.append((os.path.abspath(root), root_real))
    try:
        yield
    finally:
        _TREE.pop()


def fd_path(fd: int) -> Optional[str]:
    """Where the file open as ``fd`` lies (Linux's /proc), None where that is not known."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except (OSError, ValueError):
        return None


def left_tree(fd: int, path: str) -> bool:
    """Whether ``fd``, opened by ``path`` (a path under the tree being read), lies outside
    that tree: a folder above it was swapped for a link leading out."""
    if not _TREE:
        return False
    root, root_real = _TREE[-1]
    where = path if os.path.isabs(path) else os.path.abspath(path)  # (the walk's paths are absolute)
    if not (inside(where, root) or inside(where, root_real)):
        return False  # (an ignore file above the root, read as git reads it)
    got = fd_path(fd)
    return got is not None and got.startswith(os.sep) and not inside(got, root_real)


def read_checked(path: str, *, expect: Optional[FileId] = None, max_bytes: Optional[int] = None,
                 pre_lstat: bool = False, head: bool = False) -> Tuple[bytes, os.stat_result]:
    """Read a regular file safely; returns (bytes, fstat of the descriptor read).

    ``expect`` is the (device, inode) the walk saw; ``max_bytes`` bounds both the
    size fstat reports and what is read; with ``head`` a longer file is no error: its
    first ``max_bytes`` + 1 bytes are read (the caller sees it was longer).
    ``pre_lstat`` refuses non-regular files before opening them at all (devices have
    open side effects).  Raises :class:`UnsafeFile` for a file that must not be read,
    OSError when it cannot be opened (ELOOP for a symlink).
    """
    if pre_lstat:
        pre = os.lstat(path)
        if not stat.S_ISREG(pre.st_mode):
            raise UnsafeFile(errno.EINVAL, "not a regular file", path)
    fd = os.open(path, OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeFile(errno.EINVAL, "not a regular file", path)
        if expect is not None and (st.st_dev, st.st_ino) != expect:
            raise UnsafeFile(errno.ESTALE, "not the file the walk saw (replaced meanwhile)", path)
        if left_tree(fd, path):
            raise UnsafeFile(errno.EXDEV, "no longer in the tree (a folder above it was moved out)", path)
        if max_bytes is not None and st.st_size > max_bytes and not head:
            raise UnsafeFile(errno.EFBIG, f"larger than {max_bytes} bytes", path)
        data = read_fd(fd, st.st_size if max_bytes is None else min(st.st_size, max_bytes), max_bytes)
    finally:
        os.close(fd)
    if max_bytes is not None and len(data) > max_bytes and not head:
        raise UnsafeFile(errno.EFBIG, f"grew beyond {max_bytes} bytes while read", path)
    return data, st


def read_fd(fd: int, size_hint: int, max_bytes: Optional[int]) -> bytes:
    """Read to end of file (at most max_bytes + 1 bytes): one read for the common case."""
    cap = None if max_bytes is None else max_bytes + 1
    want = size_hint + 1  # one byte more than fstat said: sees EOF in the same call
    chunks = []
    total = 0
    while True:
        n = want if cap is None else min(want, cap - total)
        if n <= 0:
            break
        chunk = os.read(fd, n)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        want = READ_CHUNK
    if len(chunks) == 1:
        return chunks[0]
    return b"".join(chunks)


def lstat_regular(path: str) -> Optional[os.stat_result]:
    """``lstat`` of ``path`` when it is a regular file (no symlink), else None."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


class NotRegularError(OSError):
    """The path names a FIFO, socket or device, not a regular file."""


def read_regular(path: str, limit: int) -> bytes:
    """At most ``limit`` bytes of the regular file at ``path``; NotRegularError for any
    other kind (opened without blocking, so a FIFO with no writer never hangs). A file
    that says it is regular yet would block (``/proc/kmsg``) is refused, not waited on."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
            raise NotRegularError(path)
        return read_stream(fd, limit, wait=False)
    finally:
        os.close(fd)


def read_stream(fd: int, limit: int, wait: bool = True) -> bytes:
    """At most ``limit`` bytes of the open descriptor ``fd``, to its end. A descriptor
    left non-blocking (a pipe whose writer set ``O_NONBLOCK``) is read as a blocking one
    would be - waiting for each next piece until the writer closes - so that a task is
    never cut at what had arrived; with ``wait`` false such a read raises
    BlockingIOError instead. (hints.py's reader: it reads its own stdin so.)"""
    return _read_to_end(fd, limit, wait)
