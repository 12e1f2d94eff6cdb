"""Tests for agentic_search_skill.walk (DISPATCH): which files are candidates, and why not.

Trees are built in tmp_path.  Where git is installed, the walk's file list is
compared with ``git ls-files --others --exclude-standard`` (minus hidden
paths, which the walk skips by design).
"""
from __future__ import annotations

import builtins
import os
import shutil
import subprocess
from typing import Dict, List

import pytest

from agentic_search_skill.walk import (
    MAX_FILE_BYTES, FileEntry, WalkResult, expand_braces, glob_covers, glob_match, walk,
)

HAVE_GIT = shutil.which("git") is not None
needs_git = pytest.mark.skipif(not HAVE_GIT, reason="git is not installed")
needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt",
                                    reason="symlinks need a POSIX file system")


def make(root, files: Dict[str, str]) -> None:
    """Create files (POSIX rel -> text); a trailing '/' makes an empty directory."""
    for rel, text in files.items():
        full = os.path.join(str(root), *rel.strip("/").split("/"))
        if rel.endswith("/"):
            os.makedirs(full, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(text)


def rels(result: WalkResult) -> List[str]:
    return [f.rel for f in result.files]


def skipped(result: WalkResult) -> Dict[str, int]:
    return dict(result.skipped)


def reasons_for(result: WalkResult, rel: str) -> List[str]:
    return [s.reason for s in result.examples if s.rel == rel]


# --------------------------------------------------------------------------- #
# Hidden entries, .gitignore
# --------------------------------------------------------------------------- #

def test_hidden_entries_skipped_and_counted(tmp_path) -> None:
    make(tmp_path, {"a.py": "", ".env": "", ".github/ci.yml": "", "sub/.hidden.py": "",
                    "sub/b.py": "", ".git/config": ""})
    result = walk(str(tmp_path))
    assert rels(result) == ["a.py", "sub/b.py"]
    assert skipped(result) == {"hidden": 4}  # .env, .git, .github, sub/.hidden.py


def test_gitignore_is_read_although_hidden(tmp_path) -> None:
    make(tmp_path, {".gitignore": "*.log\n", "a.log": "", "a.py": ""})
    result = walk(str(tmp_path))
    assert rels(result) == ["a.py"]
    assert skipped(result) == {"hidden": 1, "ignored": 1}


def test_ignored_skip_explains_the_pattern(tmp_path) -> None:
    make(tmp_path, {".gitignore": "# x\n*.log\n", "sub/.gitignore": "/gen/\n",
                    "a.log": "", "sub/gen/x.py": "", "sub/y.py": ""})
    result = walk(str(tmp_path))
    details = {s.rel: s.detail for s in result.examples if s.reason == "ignored"}
    assert details == {"a.log": ".gitignore:2:*.log", "sub/gen": "sub/.gitignore:1:/gen/"}
    assert rels(result) == ["sub/y.py"]


def test_ignored_directory_is_pruned_and_cannot_be_reincluded(tmp_path) -> None:
    make(tmp_path, {".gitignore": "build/\n!build/keep.py\nout/*\n!out/keep.py\n",
                    "build/keep.py": "", "build/x.py": "", "out/keep.py": "", "out/y.py": ""})
    result = walk(str(tmp_path))
    assert rels(result) == ["out/keep.py"]
    assert skipped(result) == {"hidden": 1, "ignored": 2}  # 'build' once, 'out/y.py'


def test_use_gitignore_false_keeps_ignored_files(tmp_path) -> None:
    make(tmp_path, {".gitignore": "*.log\n", "a.log": "", ".git/info/exclude": "*.py\n",
                    "b.py": ""})
    assert rels(walk(str(tmp_path), use_gitignore=False)) == ["a.log", "b.py"]
    assert rels(walk(str(tmp_path))) == []


def test_info_exclude_applies_when_root_has_git_dir(tmp_path) -> None:
    make(tmp_path, {".git/info/exclude": "*.secret\n", ".gitignore": "!shown.secret\n",
                    "a.secret": "", "shown.secret": "", "c.txt": ""})
    assert rels(walk(str(tmp_path))) == ["c.txt", "shown.secret"]


def test_root_below_work_tree_top_obeys_parent_gitignore(tmp_path) -> None:
    make(tmp_path, {".git/HEAD": "", ".gitignore": "*.pyc\n/pkg/gen/\n",
                    "pkg/a.pyc": "", "pkg/gen/x.py": "", "pkg/c.py": "", "pkg/sub/gen/y.py": ""})
    result = walk(str(tmp_path / "pkg"))
    assert rels(result) == ["c.py", "sub/gen/y.py"]
    assert {s.rel: s.detail for s in result.examples} == {
        "a.pyc": ".gitignore:1:*.pyc", "gen": ".gitignore:2:/pkg/gen/"}


GIT_TREE = {
    ".gitignore": "*.log\n!keep.log\n/top.txt\nbuild/\ndocs/*.txt\n**/gen/**\nout/*\n!out/k.py\n",
    "a.py": "", "keep.log": "", "x.log": "", "top.txt": "", "sub/top.txt": "",
    "build/a.py": "", "src/build/b.py": "", "docs/a.txt": "", "docs/sub/b.txt": "",
    "p/gen/q/r.py": "", "gen/s.py": "", "out/k.py": "", "out/z.py": "",
    "sub/.gitignore": "!x.log\n*.tmp\n/anch/\n", "sub/x.log": "", "sub/y.tmp": "",
    "sub/anch/f.py": "", "sub/deep/anch/g.py": "", "names with space.txt": "",
    "weird[1].py": "", "sub/deep/.gitignore": "!y.tmp\n", "sub/deep/y.tmp": "",
}


@needs_git
def test_walk_agrees_with_git_ls_files_others(tmp_path) -> None:
    """The files walk() returns are git's untracked-not-ignored files, minus hidden ones."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, capture_output=True)
    make(tmp_path, GIT_TREE)
    proc = subprocess.run(
        ["git", "-c", "core.excludesFile=/dev/null", "-c", "core.quotePath=false", "ls-files",
         "--others", "--exclude-standard", "-z"],
        cwd=str(tmp_path), capture_output=True, text=True, check=True)
    expected = sorted(p for p in proc.stdout.split("\0")
                      if p and not any(part.startswith(".") for part in p.split("/")))
    assert rels(walk(str(tmp_path))) == expected


# --------------------------------------------------------------------------- #
# Symlinks
# --------------------------------------------------------------------------- #

@needs_symlinks
def test_symlink_loop_is_survived_and_counted(tmp_path) -> None:
    make(tmp_path, {"a/b/f.py": ""})
    os.symlink(str(tmp_path), str(tmp_path / "a" / "b" / "to_root"))
    os.symlink("..", str(tmp_path / "a" / "up"))
    result = walk(str(tmp_path))
    assert rels(result) == ["a/b/f.py"]
    assert skipped(result) == {"symlink_loop": 2}


@needs_symlinks
def test_symlink_leaving_the_root_is_skipped(tmp_path) -> None:
    outside = tmp_path / "outside"
    make(outside, {"secret.py": ""})
    root = tmp_path / "root"
    make(root, {"a.py": ""})
    os.symlink(str(outside), str(root / "dir_link"))
    os.symlink(str(outside / "secret.py"), str(root / "file_link.py"))
    result = walk(str(root))
    assert rels(result) == ["a.py"]
    assert skipped(result) == {"symlink_outside_root": 2}


@needs_symlinks
@pytest.mark.parametrize("after", ["", "sub"])
def test_a_directory_swapped_for_a_link_while_the_walk_runs_is_never_listed(tmp_path, monkeypatch, after) -> None:
    # An adversary swaps ``sub`` for a link to outside the tree right after the walk has
    # listed the root (then ``sub`` itself would be listed through the link) or ``sub``
    # (then ``sub/deep``, below it): the outside files were listed, with their own
    # device and inode, and read.
    from agentic_search_skill import walk as walk_module

    outside = tmp_path / "outside"
    make(outside, {"f.py": "SECRET", "deep/g.py": "SECRET"})
    root = tmp_path / "root"
    make(root, {"a.py": "", "sub/f.py": "", "sub/deep/g.py": ""})
    real_scan = walk_module._scan_entries
    done = []

    def scan_then_swap(d, *args, **kwargs):
        out = real_scan(d, *args, **kwargs)
        if d[1] == after and not done:
            done.append(True)
            os.rename(str(root / "sub"), str(tmp_path / "moved"))
            os.symlink(str(outside), str(root / "sub"))
        return out

    monkeypatch.setattr(walk_module, "_scan_entries", scan_then_swap)
    result = walk(str(root))
    assert "a.py" in rels(result)
    secret = {(st.st_dev, st.st_ino) for st in (os.stat(str(outside / "f.py")), os.stat(str(outside / "deep/g.py")))}
    assert not [f.rel for f in result.files if (f.dev, f.ino) in secret]
    assert skipped(result).get("unreadable") == 1


def test_every_folder_below_a_mount_point_inside_the_tree_is_walked(tmp_path) -> None:
    # Directories listed by descriptor are checked against what their parent listed: a
    # mount point's own device and inode differ, and its children's were checked against
    # the covered folder's (all skipped as "replaced").
    root = tmp_path / "root"
    make(root, {"a.py": "", "mnt/": ""})
    mounted = subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(root / "mnt")], capture_output=True) \
        if shutil.which("mount") and hasattr(os, "geteuid") and os.geteuid() == 0 else None
    if mounted is None or mounted.returncode != 0:
        pytest.skip("needs to mount a tmpfs (root in a system that allows it)")
    try:
        make(root, {"mnt/top.py": "", "mnt/d/t.py": "", "mnt/d/e/f.py": ""})
        result = walk(str(root))
        assert rels(result) == ["a.py", "mnt/d/e/f.py", "mnt/d/t.py", "mnt/top.py"]
        assert "unreadable" not in skipped(result)
    finally:
        subprocess.run(["umount", str(root / "mnt")], capture_output=True)


@needs_symlinks
def test_symlink_inside_root_is_followed_and_each_directory_walked_once(tmp_path) -> None:
    make(tmp_path, {"real/f.py": "", "g.py": "", "only/x.py": ""})
    os.symlink("real", str(tmp_path / "alias"))  # 'real' is walked by its own name
    os.symlink("g.py", str(tmp_path / "h.py"))
    os.mkdir(str(tmp_path / "hid"))
    os.symlink("only", str(tmp_path / "zlink"))
    result = walk(str(tmp_path))
    # h.py is g.py under another path: listed once, by its own path (one id, one score)
    assert rels(result) == ["g.py", "only/x.py", "real/f.py"]
    assert skipped(result) == {"duplicate_directory": 2, "duplicate_file": 1}


@needs_symlinks
def test_a_link_to_a_file_the_walk_does_not_list_is_the_way_to_it(tmp_path) -> None:
    make(tmp_path, {".gen.py": "", "g.py": ""})
    os.symlink(".gen.py", str(tmp_path / "h.py"))  # the target is hidden
    os.symlink("g.py", str(tmp_path / "a_alias.py"))  # sorts before its target
    result = walk(str(tmp_path))
    assert rels(result) == ["g.py", "h.py"]
    assert skipped(result) == {"hidden": 1, "duplicate_file": 1}
    # A vetted file symlink is opened at its target, so the read never follows a link.
    assert {f.rel: f.path for f in result.files}["h.py"] == os.path.join(str(tmp_path), ".gen.py")


@needs_symlinks
def test_directory_reached_only_through_a_symlink_is_walked(tmp_path) -> None:
    make(tmp_path, {"_build/gen/f.py": "", ".gitignore": "_build/\n"})
    os.symlink("_build/gen", str(tmp_path / "gen"))
    assert rels(walk(str(tmp_path))) == ["gen/f.py"]


@needs_symlinks
def test_broken_symlink_is_counted(tmp_path) -> None:
    make(tmp_path, {"a.py": ""})
    os.symlink("missing.py", str(tmp_path / "dangling.py"))
    assert skipped(walk(str(tmp_path))) == {"symlink_broken": 1}


# --------------------------------------------------------------------------- #
# Size cap, special files, skip_paths
# --------------------------------------------------------------------------- #

def test_files_over_the_size_cap_are_skipped(tmp_path) -> None:
    make(tmp_path, {"small.py": "x" * 10, "big.py": "x" * 11, "exact.py": "x" * 10})
    result = walk(str(tmp_path), max_bytes=10)
    assert rels(result) == ["exact.py", "small.py"]
    assert skipped(result) == {"too_large": 1}
    assert "11 bytes" in result.examples[0].detail
    assert 1024 * 1024 <= MAX_FILE_BYTES <= 2 * 1024 * 1024


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
def test_fifo_is_not_regular_and_never_opened(tmp_path) -> None:
    make(tmp_path, {"a.py": ""})
    os.mkfifo(str(tmp_path / "pipe"))
    result = walk(str(tmp_path))
    assert rels(result) == ["a.py"]
    assert skipped(result) == {"not_regular": 1}


def test_skip_paths_hide_the_tools_own_state_and_cache(tmp_path) -> None:
    make(tmp_path, {"a.py": "", "state.json": "{}", "cache/x.bin": "", "cache/y.bin": ""})
    result = walk(str(tmp_path), skip_paths=[str(tmp_path / "state.json"),
                                             str(tmp_path / "cache")])
    assert rels(result) == ["a.py"]
    assert skipped(result) == {"skip_path": 2}


def test_skip_paths_compare_real_paths(tmp_path, monkeypatch) -> None:
    make(tmp_path, {"a.py": "", "state.json": "{}"})
    monkeypatch.chdir(str(tmp_path))
    assert rels(walk(".", skip_paths=["state.json"])) == ["a.py"]
    if hasattr(os, "symlink") and os.name != "nt":
        os.symlink(str(tmp_path), str(tmp_path.parent / (tmp_path.name + "_alias")))
        alias = str(tmp_path.parent / (tmp_path.name + "_alias"))
        assert rels(walk(alias, skip_paths=[str(tmp_path / "state.json")])) == ["a.py"]


def test_walk_reads_no_file_contents_except_ignore_files(tmp_path, monkeypatch) -> None:
    make(tmp_path, {".gitignore": "*.log\n", "a.py": "", "sub/b.txt": "", "c.log": ""})
    real_open = builtins.open
    opened: List[str] = []

    def spy(file, *args, **kwargs):
        opened.append(os.path.basename(str(file)))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    assert rels(walk(str(tmp_path))) == ["a.py", "sub/b.txt"]
    assert set(opened) <= {".gitignore", "exclude"}


# --------------------------------------------------------------------------- #
# patterns and excludes
# --------------------------------------------------------------------------- #

TREE = {
    "src/app.ts": "", "src/app.test.ts": "", "src/lib/util.ts": "", "src/lib/util.js": "",
    "tests/test_a.py": "", "tests/unit/test_b.py": "", "node_modules/pkg/index.js": "",
    "web/node_modules/x.js": "", "build/out.js": "", "lib/build/keep.js": "",
    "setup.py": "", "README.md": "", "docs/build": "",
}


@pytest.mark.parametrize("patterns, excludes, expected", [
    (("**",), (), sorted(TREE)),
    (("src/**/*.ts",), (), ["src/app.test.ts", "src/app.ts", "src/lib/util.ts"]),
    (("*.test.ts",), (), ["src/app.test.ts"]),
    (("tests/**",), (), ["tests/test_a.py", "tests/unit/test_b.py"]),
    (("*.py",), (), ["setup.py", "tests/test_a.py", "tests/unit/test_b.py"]),
    (("*.py",), ("tests",), ["setup.py"]),
    (("src/*.ts",), (), ["src/app.test.ts", "src/app.ts"]),
    (("src/**/*.{ts,js}",), (), ["src/app.test.ts", "src/app.ts", "src/lib/util.js",
                                 "src/lib/util.ts"]),
    (("*.js",), ("node_modules",), ["build/out.js", "lib/build/keep.js", "src/lib/util.js"]),
    (("*.js",), ("build/",), ["node_modules/pkg/index.js", "src/lib/util.js",
                              "web/node_modules/x.js"]),
    (("**",), ("build/", "node_modules", "src/**", "tests/unit/test_b.py", "*.md"),
     ["docs/build", "setup.py", "tests/test_a.py"]),
    (("tests/",), (), ["tests/test_a.py", "tests/unit/test_b.py"]),
    (("./setup.py", "/README.md"), (), ["README.md", "setup.py"]),
])
def test_patterns_and_excludes_semantics(tmp_path, patterns, excludes, expected) -> None:
    make(tmp_path, TREE)
    assert rels(walk(str(tmp_path), patterns, excludes)) == expected


def test_exclude_equal_to_a_rel_path_excludes_exactly_that_file(tmp_path) -> None:
    make(tmp_path, {"a/x.py": "", "b/a/x.py": "", "a/y.py": ""})
    result = walk(str(tmp_path), excludes=["a/x.py"])
    assert rels(result) == ["a/y.py", "b/a/x.py"]
    assert skipped(result) == {"excluded": 1}


def test_excluded_directory_is_pruned_and_counted_once(tmp_path) -> None:
    make(tmp_path, {"node_modules/a/b.js": "", "node_modules/c.js": "", "d.js": ""})
    result = walk(str(tmp_path), excludes=["node_modules"])
    assert rels(result) == ["d.js"]
    assert skipped(result) == {"excluded": 1}


def test_directories_no_pattern_can_reach_are_pruned(tmp_path) -> None:
    make(tmp_path, {"src/a.ts": "", "other/deep/b.ts": "", "x.ts": ""})
    result = walk(str(tmp_path), ["src/**/*.ts"])
    assert rels(result) == ["src/a.ts"]
    assert skipped(result) == {"unmatched": 2}  # 'other' pruned whole, 'x.ts'


@pytest.mark.parametrize("pattern, rel, hit", [
    ("*.py", "a.py", True),
    ("*.py", "deep/er/a.py", True),
    ("*.py", "a.pyc", False),
    ("src/**/*.ts", "src/a.ts", True),
    ("src/**/*.ts", "src/a/b/c.ts", True),
    ("src/**/*.ts", "lib/src/a.ts", False),
    ("src/*.ts", "src/a/b.ts", False),
    ("tests/**", "tests/a/b.py", True),
    ("tests/**", "tests", False),
    ("**/test_*.py", "test_a.py", True),
    ("**/test_*.py", "a/b/test_a.py", True),
    ("?.md", "a.md", True),
    ("?.md", "ab.md", False),
    ("[ab].md", "b.md", True),
    ("*.{js,ts}", "x/y.ts", True),
    ("a/b.py", "a/b.py", True),
    ("a/b.py", "x/a/b.py", False),
    ("*", "a/b/c", True),
])
def test_glob_match_semantics(pattern: str, rel: str, hit: bool) -> None:
    assert glob_match(pattern, rel) is hit


def test_glob_match_directory_glob_needs_is_dir() -> None:
    assert glob_match("build/", "x/build", is_dir=True)
    assert not glob_match("build/", "x/build")


@pytest.mark.parametrize("pattern, rel, hit", [
    ("node_modules", "a/node_modules/b/c.js", True),
    ("build/", "build/x.js", True),
    ("build/", "a/build", False),  # a file named build is not a directory
    ("src/**", "src/a/b.ts", True),
    ("src/a.ts", "src/a.ts", True),
    ("src/a.ts", "src/a.tsx", False),
])
def test_glob_covers_is_how_an_exclude_acts(pattern: str, rel: str, hit: bool) -> None:
    assert glob_covers(pattern, rel) is hit


def test_expand_braces() -> None:
    assert expand_braces("a{b,c{d,e}}f") == ("abf", "acdf", "acef")
    assert expand_braces("{x}") == ("{x}",)
    assert expand_braces("a{b") == ("a{b",)


# --------------------------------------------------------------------------- #
# Determinism, results, errors
# --------------------------------------------------------------------------- #

def test_files_sorted_by_rel_and_repeatable(tmp_path) -> None:
    make(tmp_path, {"a/b.txt": "", "a.txt": "", "a-b": "", "B.txt": "", "a/a/z": ""})
    first = walk(str(tmp_path))
    assert rels(first) == sorted(rels(first)) == ["B.txt", "a-b", "a.txt", "a/a/z", "a/b.txt"]
    assert walk(str(tmp_path)) == first


def test_skipped_counts_sorted_by_reason(tmp_path) -> None:
    make(tmp_path, {".h": "", ".gitignore": "*.log\n", "a.log": "", "big.py": "xxxx",
                    "x/y.py": "", "z.md": ""})
    result = walk(str(tmp_path), ["*.py"], ["x"], max_bytes=3)
    assert result.skipped == (("excluded", 1), ("hidden", 2), ("ignored", 1),
                              ("too_large", 1), ("unmatched", 1))
    assert rels(result) == []


def test_file_entry_fields(tmp_path) -> None:
    make(tmp_path, {"d/f.py": "hello"})
    (entry,) = walk(str(tmp_path)).files
    st = os.stat(str(tmp_path / "d" / "f.py"))
    assert entry == FileEntry("d/f.py", os.path.join(str(tmp_path), "d", "f.py"), 5,
                              st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino)
    # The stat fields a read and the cache compare have defaults: older callers still work.
    assert FileEntry("a", "/a", 1, 2).ino == 0


def test_examples_are_bounded_per_reason(tmp_path) -> None:
    make(tmp_path, {f".h{i}": "" for i in range(20)})
    result = walk(str(tmp_path))
    assert skipped(result) == {"hidden": 20}
    assert len(result.examples) == 5


def test_missing_root_raises_file_not_found(tmp_path) -> None:
    with pytest.raises(FileNotFoundError):
        walk(str(tmp_path / "nope"))


def test_root_that_is_a_file_raises_not_a_directory(tmp_path) -> None:
    make(tmp_path, {"f": ""})
    with pytest.raises(NotADirectoryError):
        walk(str(tmp_path / "f"))


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root reads every directory")
def test_unreadable_directory_is_skipped_and_counted(tmp_path) -> None:
    make(tmp_path, {"locked/a.py": "", "b.py": ""})
    os.chmod(str(tmp_path / "locked"), 0)
    try:
        result = walk(str(tmp_path))
    finally:
        os.chmod(str(tmp_path / "locked"), 0o755)
    assert rels(result) == ["b.py"]
    assert skipped(result) == {"unreadable": 1}


def test_a_hidden_directory_a_negation_re_includes_is_walked_as_ripgrep_does(tmp_path):
    make(tmp_path, {".gitignore": "!.github/\n", ".github/workflows/ci.yml": "on: push\n",
                    ".hidden/x.py": "", ".git/config": "", "a.py": ""})
    assert rels(walk(str(tmp_path))) == [".github/workflows/ci.yml", "a.py"]


def test_a_file_named_exactly_by_a_pattern_bypasses_the_hidden_and_ignore_filters(tmp_path):
    make(tmp_path, {".gitignore": "*.log\n", "a.log": "boom\n", ".env": "KEY=1\n", "b.log": "", "src/x.py": ""})
    assert rels(walk(str(tmp_path), ["a.log", ".env", "src/**"])) == [".env", "a.log", "src/x.py"]
    # A wildcard does not: ignored and hidden files stay out.
    assert rels(walk(str(tmp_path), ["*.log", ".*"])) == []


def test_a_named_file_outside_the_root_or_of_the_tool_is_not_added(tmp_path):
    (tmp_path / "out.txt").write_text("x")
    make(tmp_path / "r", {"a.py": ""})
    os.symlink(tmp_path / "out.txt", tmp_path / "r" / "link.txt")
    (tmp_path / "r" / "state.json").write_text("{}")
    got = rels(walk(str(tmp_path / "r"), ["link.txt", "../out.txt", "state.json"],
                    skip_paths=[str(tmp_path / "r" / "state.json")]))
    assert got == []


def test_a_link_that_cannot_be_read_is_skipped_not_fatal(tmp_path, monkeypatch):
    # os.path.realpath raises when readlink fails (a /proc/N/exe of a kernel thread,
    # another user's process): the link is skipped and counted, the walk goes on.
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\n")
    (root / "src" / "kexe").symlink_to(root / "src" / "a.py")
    real = os.path.realpath

    def failing(path, *a, **k):
        if str(path).endswith("kexe"):
            raise FileNotFoundError(2, "No such file or directory", str(path))
        return real(path, *a, **k)

    monkeypatch.setattr(os.path, "realpath", failing)
    result = walk(str(root))
    assert [f.rel for f in result.files] == ["src/a.py"]
    assert dict(result.skipped).get("symlink_broken") == 1
