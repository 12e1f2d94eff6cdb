"""Tracked paths from a git index: what a user relies on is that a file git tracks is
searched however a .gitignore reads, and that a bad index changes nothing."""
from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess

import pytest

from agentic_search_skill import gitindex
from agentic_search_skill.walk import walk

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _entry(path: bytes, name_bytes: int, mode: int = 0o100644) -> bytes:
    stat_data = struct.pack(">10I", 0, 0, 0, 0, 0, 0, mode, 0, 0, 0)
    body = stat_data + b"\x11" * name_bytes + struct.pack(">H", min(len(path), 0xFFF)) + path
    return body + b"\0" * (8 - len(body) % 8)  # 1 to 8 NULs: a multiple of 8


def _index(paths, name_bytes: int = 20, modes=None) -> bytes:
    """A version-2 index of ``paths`` as git writes it, its hash at the end."""
    modes = modes or {}
    data = struct.pack(">4sII", b"DIRC", 2, len(paths))
    data += b"".join(_entry(p, name_bytes, modes.get(p, 0o100644)) for p in paths)
    digest = hashlib.sha1 if name_bytes == 20 else hashlib.sha256
    return data + digest(data).digest()


@pytest.mark.parametrize("name_bytes", [20, 32])
def test_an_index_lists_its_files_and_every_directory_above_them(tmp_path, name_bytes):
    (tmp_path / "index").write_bytes(_index([b"a.py", b"pkg/lib/x.py", b"sub"], name_bytes,
                                            {b"sub": 0o160000}))
    got = gitindex.read_tracked(str(tmp_path))
    assert got.files == {"a.py", "pkg/lib/x.py"} and got.dirs == {"pkg", "pkg/lib", "sub"}
    assert got.holds("pkg/lib", True) and got.holds("pkg/lib/x.py", False) and not got.holds("pkg/lib/y.py", False)


@pytest.mark.parametrize("data", [
    b"", b"DIRC", b"DIRC\0\0\0\x09\0\0\0\x01",                    # short, an unknown version
    _index([b"a.py"])[:30],                                        # cut inside an entry
    _index([b"a.py", b"b.py"]).replace(b"b.py", b"b.pyy"[:4] + b"\x01"),  # padding that is no NUL
    b"\0" * 4096,                                                  # no signature
])
def test_a_bad_index_tracks_nothing_and_raises_nothing(tmp_path, data):
    (tmp_path / "index").write_bytes(data)
    assert gitindex.read_tracked(str(tmp_path)) == gitindex.NOTHING


def test_no_index_or_a_directory_in_its_place_tracks_nothing(tmp_path):
    assert gitindex.read_tracked(str(tmp_path)) == gitindex.NOTHING
    (tmp_path / "index").mkdir()
    assert gitindex.read_tracked(str(tmp_path)) == gitindex.NOTHING


def _git(cwd, *args):
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True,
                   capture_output=True)


@needs_git
@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_a_file_git_tracks_is_searched_however_gitignore_reads(tmp_path, version):
    """GitHub's Python .gitignore holds ``lib/`` and ``build/``: a package's tracked
    ``pkg/lib/ratelimit.py`` was never read ("throttle" matched nothing). As in git, an
    untracked file beside it stays ignored, and so does an ignored directory without
    tracked files."""
    root = tmp_path / "repo"
    for rel, text in {".gitignore": "lib/\nbuild/\n*.log\n!pkg/lib/untracked.py\n",
                      "pkg/lib/ratelimit.py": "def throttle(): pass\n", "pkg/lib/untracked.py": "x\n",
                      "build/tool.py": "y\n", "keep.log": "k\n", "a.py": "a\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git(tmp_path, "init", "-q", str(root))
    _git(root, "add", ".gitignore", "a.py")
    _git(root, "add", "-f", "pkg/lib/ratelimit.py", "keep.log")
    _git(root, "update-index", "--index-version", version)
    got = walk(str(root))
    assert [f.rel for f in got.files] == ["a.py", "keep.log", "pkg/lib/ratelimit.py"]
    assert [f.rel for f in walk(str(root / "pkg")).files] == ["lib/ratelimit.py"]  # a root below the top
    assert [f.rel for f in walk(str(root), use_gitignore=False).files] == \
        ["a.py", "build/tool.py", "keep.log", "pkg/lib/ratelimit.py", "pkg/lib/untracked.py"]
    # No index, no tracked file: the rules alone decide, as before.
    os.remove(root / ".git" / "index")
    assert [f.rel for f in walk(str(root)).files] == ["a.py"]


def test_a_crafted_version_4_index_whose_paths_grow_is_refused_not_spelled_out(tmp_path):
    """Each version-4 path extends the one before: 80,000 entries of one byte more each
    spelled out 3 GB from a 5 MB file (a tester's). A path past MAX_PATH_BYTES, or paths
    past MAX_PATH_BYTES_PER_INDEX_BYTE times the index, make it no index."""
    n = gitindex.MAX_PATH_BYTES + 10
    entry = b"\0" * 24 + struct.pack(">I", 0o100644) + b"\0" * 12 + b"\x11" * 20
    data = struct.pack(">4sII", b"DIRC", 4, n) + b"".join(
        entry + struct.pack(">H", min(i, 0xFFF)) + b"\x00" + b"a\0" for i in range(1, n + 1))
    (tmp_path / "index").write_bytes(data + hashlib.sha1(data).digest())
    assert gitindex.read_tracked(str(tmp_path)) == gitindex.NOTHING


@needs_git
def test_a_split_index_reads_its_shared_part(tmp_path):
    root = tmp_path / "repo"
    (root / "build").mkdir(parents=True)
    (root / "build" / "keep.py").write_text("def keep_me(): pass\n")
    (root / ".gitignore").write_text("build/\n")
    _git(tmp_path, "init", "-q", str(root))
    _git(root, "add", "-f", "build/keep.py", ".gitignore")
    _git(root, "update-index", "--split-index")
    assert any(name.startswith("sharedindex.") for name in os.listdir(root / ".git"))
    assert [f.rel for f in walk(str(root)).files] == ["build/keep.py"]


def test_a_sparse_index_directory_tracks_every_path_below_it(tmp_path):
    """``git sparse-checkout --sparse-index`` writes one entry for a directory left out
    (``b/``, mode 040000): git tracks every file below it, on disk or not."""
    (tmp_path / "index").write_bytes(_index([b"a/k.py", b"b/"], modes={b"b/": 0o040000}))
    got = gitindex.read_tracked(str(tmp_path))
    assert got.holds("b", True) and got.holds("b/build", True) and got.holds("b/build/k.py", False)
    assert not got.holds("bb/k.py", False) and not got.holds("c", True)


def test_a_sparse_index_of_many_directories_answers_for_nested_paths_and_their_neighbours(tmp_path):
    many = [b"sp%05d/" % i for i in range(20000)]
    (tmp_path / "index").write_bytes(_index(many + [b"src/f.py"], modes={p: 0o040000 for p in many}))
    got = gitindex.read_tracked(str(tmp_path))
    assert got.holds("sp19999", True) and got.holds("sp00042/deep/er/x.py", False)
    assert not got.holds("sp2", True) and not got.holds("src/g.py", False) and got.holds("src/f.py", False)


def test_an_index_that_would_spell_out_far_more_directories_than_its_size_tracks_nothing(tmp_path):
    """Paths 2,000 directories deep that differ at the top: each spells out 2,000
    directories of its own (200 such entries were 900 MB). A real tree's files share
    their directories; this one is read as no index, the ignore rules alone decide."""
    deep = [b"%04d" % i + b"/a" * 2000 + b"/x.py" for i in range(200)]
    (tmp_path / "index").write_bytes(_index(deep))
    assert gitindex.read_tracked(str(tmp_path)) == gitindex.NOTHING
    shallow = [b"%04d/a/b/x.py" % i for i in range(200)]
    (tmp_path / "index").write_bytes(_index(shallow))
    assert gitindex.read_tracked(str(tmp_path)).holds("0042/a", True)


@needs_git
def test_a_submodule_follows_its_own_ignore_rules_and_index_not_the_outer_ones(tmp_path):
    """As in git: the outer work tree's ``build/`` and ``*.log`` do not reach into a
    submodule (they hid its tracked ``build/tool.py`` and ``keep.log``), and the
    submodule's own ``gen/`` ignores its untracked files but not one it force-added."""
    inner = tmp_path / "inner"
    for rel, text in {"gen/keep.py": "def gen_keep(): pass\n", "gen/scratch.py": "x\n", "build/tool.py": "y\n",
                      "keep.log": "k\n", ".gitignore": "gen/\n"}.items():
        (inner / rel).parent.mkdir(parents=True, exist_ok=True)
        (inner / rel).write_text(text)
    _git(tmp_path, "init", "-q", str(inner))
    _git(inner, "add", ".gitignore", "build/tool.py", "keep.log")
    _git(inner, "add", "-f", "gen/keep.py")
    _git(inner, "commit", "-qm", "inner")
    outer = tmp_path / "outer"
    _git(tmp_path, "init", "-q", str(outer))
    (outer / ".gitignore").write_text("build/\n*.log\n")
    _git(outer, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(inner), "sub")
    (outer / "sub" / "gen" / "scratch.py").write_text("x\n")  # untracked, under the submodule's own gen/
    (outer / "build").mkdir()
    (outer / "build" / "out.py").write_text("z\n")  # the outer build/: ignored
    got = [f.rel for f in walk(str(outer)).files]
    assert got == ["sub/build/tool.py", "sub/gen/keep.py", "sub/keep.log"], got
