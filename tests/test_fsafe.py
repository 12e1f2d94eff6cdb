"""fsafe.py: where the tool may write (never inside the tree it searches, by any name),
and what a cycle reads (nothing outside that tree)."""

from __future__ import annotations

import os

import pytest

from agentic_search_skill import fsafe

MOUNTS = (
    "1 0 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
    "2 1 8:1 /srv/tree/.cache /home/u/.cache rw,relatime - ext4 /dev/sda1 rw\n"
    "3 1 8:2 / /data rw,relatime - ext4 /dev/sdb1 rw\n"
    "4 1 8:1 /srv/my\\040tree /mnt/with\\040space rw,relatime - ext4 /dev/sda1 rw\n"
)


def test_a_folder_of_the_tree_mounted_elsewhere_is_inside_the_tree(tmp_path, monkeypatch):
    # A devcontainer binds the project's .cache as ~/.cache: the index (and a state kept
    # there) was written into the tree, because only the root's own device and inode
    # were compared with the target's folders.
    table = tmp_path / "mountinfo"
    table.write_text(MOUNTS)
    monkeypatch.setattr(fsafe, "MOUNT_TABLE", str(table))
    assert fsafe.inside_any_name("/home/u/.cache/agentic-search/ab12", "/srv/tree")
    assert fsafe.inside_any_name("/home/u/.cache", "/srv/tree")
    assert not fsafe.inside_any_name("/home/u/other", "/srv/tree")
    assert not fsafe.inside_any_name("/home/u/.cache/x", "/srv/tree2")
    # another file system at the same folder names is another place
    assert not fsafe.inside_any_name("/data/srv/tree/x", "/srv/tree")
    # the table's escapes (a space is \040) are read
    assert fsafe.inside_any_name("/mnt/with space/sub", "/srv/my tree")


def test_without_a_mount_table_the_checks_by_name_and_identity_still_hold(tmp_path, monkeypatch):
    monkeypatch.setattr(fsafe, "MOUNT_TABLE", str(tmp_path / "none"))
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    assert fsafe.inside_any_name(str(tree / "sub" / "x"), str(tree))
    assert not fsafe.inside_any_name(str(tmp_path / "elsewhere"), str(tree))


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd") or not hasattr(os, "symlink"),
                                reason="where an open file lies is read from Linux's /proc")


@needs_proc
def test_a_folder_moved_out_and_linked_back_is_not_read_through(tmp_path):
    # The moved folder keeps its inodes: the identity the walk saw still matches, yet the
    # file now lies outside the tree.
    tree, out = tmp_path / "tree", tmp_path / "out"
    (tree / "src" / "auth").mkdir(parents=True)
    out.mkdir()
    path = tree / "src" / "auth" / "a.py"
    path.write_text("token = 1\n")
    ident = fsafe.identity(os.stat(path))
    root_real = os.path.realpath(tree)
    with fsafe.tree_reads(str(tree), root_real):
        assert fsafe.read_checked(str(path), expect=ident)[0] == b"token = 1\n"
        os.rename(tree / "src" / "auth", out / "auth")
        os.symlink(out / "auth", tree / "src" / "auth")
        with pytest.raises(fsafe.UnsafeFile, match="no longer in the tree"):
            fsafe.read_checked(str(path), expect=ident)
    assert fsafe.read_checked(str(path), expect=ident)[0] == b"token = 1\n"  # (no tree being read: no rule)


@needs_proc
def test_the_walk_does_not_list_a_folder_moved_out_while_it_ran(tmp_path, monkeypatch):
    from agentic_search_skill import walk as walk_mod

    tree, out = tmp_path / "tree", tmp_path / "out"
    (tree / "src" / "auth" / "sub").mkdir(parents=True)
    out.mkdir()
    (tree / "src" / "auth" / "sub" / "a.py").write_text("token = 1\n")
    (tree / "src" / "u.py").write_text("x = 1\n")
    real_open = walk_mod._open_dir

    def swap_then_open(real, key, parent):
        if real.endswith(os.path.join("auth", "sub")) and not (out / "auth").exists():
            os.rename(tree / "src" / "auth", out / "auth")
            os.symlink(out / "auth", tree / "src" / "auth")
            (out / "auth" / "sub" / "planted.py").write_text("outside = 1\n")
        return real_open(real, key, parent)

    monkeypatch.setattr(walk_mod, "_open_dir", swap_then_open)
    root_real = os.path.realpath(tree)
    with fsafe.tree_reads(str(tree), root_real):
        result = walk_mod.walk(root_real)
    rels = sorted(e.rel for e in result.files)
    assert "src/auth/sub/planted.py" not in rels and "src/u.py" in rels


@pytest.mark.skipif(not hasattr(os, "set_blocking"), reason="non-blocking pipes")
def test_read_stream_waits_on_a_non_blocking_pipe_or_refuses_when_told_not_to_wait():
    r, w = os.pipe()
    try:
        os.set_blocking(r, False)
        with pytest.raises(BlockingIOError):  # (read_regular's kernel file that would block)
            fsafe.read_stream(r, 10, wait=False)
        os.write(w, b"abc")
        os.close(w)
        w = -1
        assert fsafe.read_stream(r, 10) == b"abc"
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)
