"""fsafe.py: where the tool may write - never inside the tree it searches, by any name."""

from __future__ import annotations

from agentic_search import fsafe

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
