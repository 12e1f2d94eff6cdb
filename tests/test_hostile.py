"""Hostile trees, file systems and caches (issue 14): each class is a property, pinned here.

1. No read outside the tree: a file swapped for a symlink (or another file) between
   the walk and the read, or between the read and a summary's re-read, is not read.
2. No hang or blow-up: FIFOs and devices where ignore and git files should be,
   symlink fan-out, brace bombs, backtracking ignore patterns, unclosed imports.
3. A cache planted by someone else is ignored, with one line on stderr.
4. A stale cache entry is never served: output equals a run without the cache.
6. A ``.git`` above the root owned by another user is not the work-tree top.
8. Names that are not UTF-8 are walked and kept losslessly; ``?`` and ``[...]``
   match bytes, as in git.

Trees are built in tmp_path; "another user" tests chown and skip when not root.
"""
from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, List

import pytest

from agentic_search_skill import index as index_mod
from agentic_search_skill import fsafe, imports, walk as walk_mod
from agentic_search_skill.ignore import (
    GitIgnore, LinearGlob, _tokens, compile_glob, parse_ignore_file, root_rules, translate_glob,
)
from agentic_search_skill.match import read_document, read_entry
from agentic_search_skill.walk import GlobError, escape_glob, expand_braces, walk
from _trees import write_tree

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "retrieve_loop.py"
OLD = 1_600_000_000  # seconds: mtimes far outside the racy window
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
OTHER_UID = 54321  # a user that owns nothing here
HAVE_GIT = shutil.which("git") is not None
needs_root = pytest.mark.skipif(not IS_ROOT, reason="chown to another user needs root")
needs_git = pytest.mark.skipif(not HAVE_GIT, reason="git is not installed")
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
SECRET = "TOP-SECRET-OUTSIDE-THE-TREE"


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail (instead of hanging the suite) when the block takes longer than ``seconds``."""
    def expired(signum, frame):  # pragma: no cover - only on failure
        raise TimeoutError(f"took longer than {seconds} s")
    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def rels(result) -> List[str]:
    return [f.rel for f in result.files]


def secret_outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.py").write_text(f"{SECRET} def handler(): pass\n")
    return outside / "a.py"


# --------------------------------------------------------------------------- 1. reads


def test_file_swapped_for_a_symlink_after_the_walk_is_not_read(tmp_path) -> None:
    secret = secret_outside(tmp_path)
    root = write_tree(tmp_path / "root", {"a.py": "def handler(): pass\n"})
    (entry,) = walk(str(root)).files
    os.replace(str(root / "a.py"), str(tmp_path / "gone.py"))
    os.symlink(str(secret), str(root / "a.py"))
    with pytest.raises(OSError):
        read_entry(entry)
    with pytest.raises(OSError):  # without the walk's identity too: O_NOFOLLOW
        read_document(entry.rel, entry.path)


def test_file_or_directory_swapped_for_another_file_is_not_read(tmp_path) -> None:
    outside = secret_outside(tmp_path).parent
    root = write_tree(tmp_path / "root", {"d/a.py": "x = 1\n", "b.py": "y = 2\n"})
    entries = {f.rel: f for f in walk(str(root)).files}
    os.rename(str(root / "d"), str(tmp_path / "old-d"))
    os.symlink(str(outside), str(root / "d"))  # a directory above the file swapped
    os.replace(str(outside / "a.py"), str(outside / "a2.py"))
    shutil.copy(str(outside / "a2.py"), str(root / "b.py.new"))
    os.replace(str(root / "b.py.new"), str(root / "b.py"))  # another inode, same name
    shutil.copy(str(outside / "a2.py"), str(outside / "a.py"))
    for rel in ("d/a.py", "b.py"):
        with pytest.raises(fsafe.UnsafeFile):
            read_entry(entries[rel])


def test_summary_reread_is_pinned_to_the_file_first_read(tmp_path) -> None:
    secret = secret_outside(tmp_path)
    root = write_tree(tmp_path / "root", {"a.py": "def Handler(): pass\n"})
    (entry,) = walk(str(root)).files
    doc = read_entry(entry)
    os.unlink(str(root / "a.py"))
    os.symlink(str(secret), str(root / "a.py"))
    assert SECRET.encode() not in doc.head  # the re-read refuses; the lower-cased text stays
    assert doc.data == b"def handler(): pass\n"


def test_swap_between_walk_and_read_leaks_nothing_end_to_end(tmp_path, monkeypatch, capsys) -> None:
    """The whole cycle, with a hook that swaps every file for a symlink right after the walk."""
    import retrieve_loop
    from agentic_search_skill import cycle
    secret = secret_outside(tmp_path)
    root = write_tree(tmp_path / "root", {f"m{i}.py": "def handler(request): pass\n" for i in range(5)})
    real_walk = walk_mod.walk
    fired = []

    def walk_then_swap(*args, **kwargs):
        result = real_walk(*args, **kwargs)
        for f in result.files:
            os.unlink(f.path)
            os.symlink(str(secret), f.path)
        fired.append(len(result.files))
        return result

    monkeypatch.setattr(walk_mod, "walk", walk_then_swap)
    if hasattr(cycle, "walk"):
        monkeypatch.setattr(cycle, "walk", walk_then_swap)
    state = tmp_path / "state" / "s.json"
    state.parent.mkdir()
    code = retrieve_loop.main(["--root", str(root), "--state", str(state), "--keywords", "handler"])
    out = capsys.readouterr().out
    assert code == 0 and fired == [5]
    assert SECRET not in out and SECRET.lower() not in out


@pytest.mark.parametrize("cache", [True, False])
def test_directory_swapped_between_walk_and_read_leaks_nothing_end_to_end(tmp_path, monkeypatch, capsys,
                                                                          cache) -> None:
    import retrieve_loop
    from agentic_search_skill import cycle
    outside = secret_outside(tmp_path).parent
    root = write_tree(tmp_path / "root", {"d/a.py": "def handler(request): pass\n"})
    real_walk = walk_mod.walk

    def walk_then_swap(*args, **kwargs):
        result = real_walk(*args, **kwargs)
        os.rename(str(root / "d"), str(tmp_path / "old-d"))
        os.symlink(str(outside), str(root / "d"))
        return result

    monkeypatch.setattr(walk_mod, "walk", walk_then_swap)
    if hasattr(cycle, "walk"):
        monkeypatch.setattr(cycle, "walk", walk_then_swap)
    state = tmp_path / "state" / "s.json"
    state.parent.mkdir()
    flags = [] if cache else ["--no-cache"]
    code = retrieve_loop.main(["--root", str(root), "--state", str(state), "--keywords", "handler", *flags])
    out = capsys.readouterr().out
    assert code == 0 and SECRET not in out and SECRET.lower() not in out


# --------------------------------------------------------------------------- 2. hangs


def _special(path: Path, kind: str) -> None:
    if kind == "fifo":
        os.mkfifo(str(path))
    else:  # a character device with /dev/zero's numbers: reads never end
        os.mknod(str(path), stat.S_IFCHR | 0o644, os.makedev(1, 5))


SPECIAL_KINDS = ["fifo"] + (["device"] if IS_ROOT else [])


@needs_fifo
@pytest.mark.parametrize("kind", SPECIAL_KINDS)
@pytest.mark.parametrize("where", [".gitignore", "sub/.gitignore", ".git", ".git/info/exclude",
                                   ".git/commondir", "gitdir-target/commondir"])
def test_special_files_where_ignore_and_git_files_belong_never_block(tmp_path, kind, where) -> None:
    root = write_tree(tmp_path / "root", {"a.py": "x\n", "sub/b.py": "y\n"})
    if where.startswith(".git/"):
        (root / ".git" / "info").mkdir(parents=True)
    if where.startswith("gitdir-target"):
        (tmp_path / "gitdir-target").mkdir()
        (root / ".git").write_text(f"gitdir: {tmp_path / 'gitdir-target'}\n")
        target = tmp_path / where
    elif where == ".git/commondir":
        # a linked worktree: .git is a file naming a git dir whose commondir is the FIFO
        shutil.rmtree(str(root / ".git"))
        (tmp_path / "wt").mkdir()
        (root / ".git").write_text(f"gitdir: {tmp_path / 'wt'}\n")
        target = tmp_path / "wt" / "commondir"
    else:
        target = root / where
    _special(target, kind)
    with deadline(20):
        result = walk(str(root))
    assert rels(result) == ["a.py", "sub/b.py"]
    if where.endswith(".gitignore"):
        assert dict(result.skipped)["bad_ignore_file"] == 1


def test_oversized_gitignore_is_not_read_and_is_counted(tmp_path, monkeypatch) -> None:
    from agentic_search_skill import ignore
    monkeypatch.setattr(ignore, "MAX_IGNORE_BYTES", 64)
    root = write_tree(tmp_path, {".gitignore": "*.py\n" * 20, "a.py": ""})
    result = walk(str(root))
    assert rels(result) == ["a.py"] and dict(result.skipped)["bad_ignore_file"] == 1


def test_symlink_fan_out_walks_each_directory_once(tmp_path) -> None:
    """17 directories, each linking twice to the next: 262,125 paths, 17 real directories."""
    root = tmp_path / "root"
    depth = 17
    for i in range(depth):
        write_tree(root / f"d{i}", {"f.py": "x\n"})
    for i in range(depth - 1):
        os.symlink(f"../d{i + 1}", str(root / f"d{i}" / "l1"))
        os.symlink(f"../d{i + 1}", str(root / f"d{i}" / "l2"))
    with deadline(20):
        result = walk(str(root))
    assert rels(result) == sorted(f"d{i}/f.py" for i in range(depth))
    assert sum(n for _, n in result.skipped) == 2 * (depth - 1)  # each link counted once


def test_brace_bombs_give_a_clear_error(tmp_path) -> None:
    write_tree(tmp_path, {"a.py": ""})
    with deadline(10):
        with pytest.raises(GlobError, match="more than"):
            walk(str(tmp_path), ["{a,b}" * 16])
        with pytest.raises(GlobError, match="nested deeper"):
            expand_braces("{a," * 1000 + "}" * 1000)
    assert expand_braces("src/{a,b}/*.{ts,tsx}") == ("src/a/*.ts", "src/a/*.tsx", "src/b/*.ts", "src/b/*.tsx")
    # Globs each under the cap still add up: a loop's globs are bounded in all.
    with deadline(10):
        with pytest.raises(GlobError, match="in all"):
            walk(str(tmp_path), [f"x{k}" + "{a,b}" * 8 for k in range(2)])


def test_escaped_directory_names_select_themselves(tmp_path) -> None:
    """Refine builds 'dir/**' from names on disk: a name full of glob syntax stays literal."""
    names = ["{a,b}" * 40, "*", "[x]", "a?b", "x\\y", "#c", "!d", "e,f"]
    files = {f"{n}/f.py": "" for n in names}
    files.update({"a/f.py": "", "ab/f.py": "", "x/f.py": ""})
    write_tree(tmp_path, files)
    for name in names:
        with deadline(10):
            assert rels(walk(str(tmp_path), [escape_glob(name) + "/**"])) == [f"{name}/f.py"]


def test_backtracking_ignore_patterns_finish_fast(tmp_path) -> None:
    long_name = "ab" * 125  # 250 characters that almost match
    deep = "/".join(["a"] * 60) + "/c"
    write_tree(tmp_path, {
        ".gitignore": "a*b*c*d*e*a*b*c*d*e*f\n" + "**/a" * 30 + "/**/b\n" + "*a*a*a*a*a*a*a*a*z\n",
        long_name: "", deep: "", "keep.py": "",
    })
    with deadline(20):
        started = time.monotonic()
        result = walk(str(tmp_path))
        assert time.monotonic() - started < 5
    assert rels(result) == sorted([long_name, deep, "keep.py"])


def test_a_long_header_of_supertypes_is_read_in_linear_time(tmp_path) -> None:
    # (an adversarial check: the first rule for a supertype's constructor tried 2^n ways to
    # split a list of n names, and one 146-character comment line hung the tool)
    from agentic_search_skill.match import compile_keywords, match_document
    from agentic_search_skill.query import Kind, make_keyword
    line = "// enum flags: " + ", ".join(f"f{i}" for i in range(30)) + " or frob(x);\n"  # (a line's head is short)
    blanks = "x:class a" + " \t" * 240 + "frob(1) {}\n"  # (a second check: two runs of blanks, quadratic)
    tree = {"a.cpp": line * 3 + "int other(int x) {\n  return x;\n}\n",
            "b.kt": "class A : " + "b," * 30 + "c frob(y) {\n}\n", "c.c": blanks * 4000}
    write_tree(tmp_path, tree)
    docs = [read_document(rel, str(tmp_path / rel)) for rel in sorted(tree)]
    ck = compile_keywords([make_keyword("frob", Kind.GIVEN), make_keyword("other", Kind.GIVEN)])
    with deadline(20):
        started = time.monotonic()
        found = [match_document(doc, ck) for doc in docs]
        assert time.monotonic() - started < 5
    assert [m.defines[0] for m in found[:2]] == [0.0, 0.0] and found[0].defines[1] == 1.0


def test_many_patterns_and_nested_gitignores_are_built_once(tmp_path) -> None:
    patterns = "".join(f"gen{i}_*.tmp\nlit{i}.txt\n" for i in range(10_000))
    files = {".gitignore": patterns, "gen7_x.tmp": "", "lit9999.txt": "", "keep.py": ""}
    deep = "/".join(f"d{i}" for i in range(300))
    files[f"{deep}/x.py"] = ""
    write_tree(tmp_path, files)
    for i in range(1, 301):
        (tmp_path.joinpath(*[f"d{k}" for k in range(i)]) / ".gitignore").write_text(f"*.n{i}\n")
    with deadline(60):
        started = time.monotonic()
        result = walk(str(tmp_path))
        assert time.monotonic() - started < 20
    assert rels(result) == sorted(["keep.py", f"{deep}/x.py"])


def test_linear_matcher_answers_like_the_regex() -> None:
    """LinearGlob.fullmatch == re.fullmatch(translate_glob(...)) on random globs and paths."""
    rng = random.Random(1414)
    pieces = ["a", "b", "/", "*", "**", "?", "[ab]", "[!a]", "\\*", "**/", "/**", "[a-b]", "é"]
    subjects = ["", "a", "b", "ab", "a/b", "a/b/a", "aab/b", "b/a/b/ab", "a/", "/a", "ba/ab/",
                "*", "a*b", "é", "aé/b"]
    for _ in range(3000):
        glob = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 7)))
        quirk = rng.random() < 0.5
        tokens = _tokens(glob, quirk)
        if tokens is None:
            continue
        linear = LinearGlob(tokens)
        rx = re.compile(translate_glob(glob, quirk), re.DOTALL)
        for s in subjects:
            assert linear.fullmatch(s) == (rx.fullmatch(s) is not None), (glob, quirk, s)


def test_unclosed_import_brackets_parse_in_linear_time() -> None:
    index = imports.build_index(["auth/__init__.py", "auth/tokens.py", "pkg/x.go", "app.py", "main.go"])
    python = b"from auth import (\n" * 120_000 + b"from auth import tokens\n"
    go = b"import (\n" * 120_000 + b'import "x/pkg"\n'
    with deadline(30):
        started = time.monotonic()
        assert imports.imports_of("app.py", python, index) == ("auth/tokens.py",)
        assert imports.imports_of("main.go", go, index) == ("pkg/x.go",)
        imports.imports_of("lib.rs", b"use crate::a;\n" + b"use x\n" * 200_000, index)
        imports.imports_of("lib.rs", b"use crate::" + b"{a," * 900 + b"}" * 900 + b";\n", index)
        assert time.monotonic() - started < 10


def test_task_texts_of_blank_runs_and_modifier_lines_read_in_linear_time() -> None:
    """A pasted terminal (lines padded to 200 columns), a line of spaces after an
    environment key, and lines of only ``pub`` (the definition pattern's modifiers) were
    cubic or quadratic: tens of seconds at 20-64 KB."""
    from agentic_search_skill.query import extract_keywords
    tasks = ["\n".join(f"line {i}".ljust(200) for i in range(2000)), "x\n" + " " * 200_000 + "\n",
             "- OS: " + " " * 200_000 + "linux\n", "pub\n" * 100_000, "pub(crate)\n" * 50_000,
             "\t" * 300_000]
    with deadline(60):
        started = time.monotonic()
        for task in tasks:
            extract_keywords(task)
        assert time.monotonic() - started < 20


def test_task_markup_and_files_of_long_runs_read_in_linear_time() -> None:
    """Unclosed tags, images and comment pairs in a task, and a file's long run of host or
    scheme characters beside a link (learned vocabulary), were quadratic: minutes at 40 KB
    of ``<a b=`` and for a 250 KB string of ``a.b.c.``."""
    from agentic_search_skill.query import extract_keywords, strip_boilerplate
    from agentic_search_skill.refine import _without_urls
    tasks = ["token expiry " + "<a b=" * 40_000, "x " + "<!-- a -->" * 40_000, "y " + "![a](" * 80_000,
             "z " + '<img src="' * 30_000]
    files = [b'DATA = "' + b"a.b.c.d.e.f.g.h." * 15_625 + b'"\n',
             b"// see https://example.com\n" + b"A" * 250_000, b'x = "' + b"token-expiry" * 20_000 + b'" https://x.org/a']
    with deadline(60):
        started = time.monotonic()
        for task in tasks:
            extract_keywords(task)
        for data in files:
            _without_urls(data)
        assert time.monotonic() - started < 20
    # what they take out is as before: a bot's delimited block, an image, a tag; a link, a module host
    assert strip_boilerplate("q <!-- Bounty -->paid<!-- /bounty --> kept ![x](y.png) <b>bold</b>").split() == [
        "q", "kept", "bold"]
    assert _without_urls(b"see https://x.org/a and github.com/google/uuid").split() == [b"see", b"and", b"/uuid"]



def test_task_messages_escapes_and_reports_of_long_runs_read_in_linear_time() -> None:
    """The forms read for messages, escapes, version reports and guides' links - values
    cut out of a message, backticked chains, log levels, fenced ``key: value`` blocks,
    entities, percent-encoded links, guides' paths, XML prologs, prompts, options - at
    200 KB of each take about a second."""
    from agentic_search_skill.query import extract_keywords
    n = 200_000
    tasks = ["Error: " + "a/b " * (n // 4), "`a: b" * (n // 5), "`" + "word: " * (n // 6) + "`",
             "ERROR:\n" * (n // 7), "[" * n + "ERROR]", "```\n" + "k: 1.2.3\n" * (n // 9) + "```\n",
             "```\n" + (" " * 60 + "x") * (n // 61) + "\n```", "```\n```\n" * (n // 8), "&" + "a" * n,
             "http%3A%2F%2F" + "%2F" * (n // 3), "a/" * (n // 2) + "CONTRIBUTING.md", "1.2.3." * (n // 6),
             "[ERROR] " + "a:1" * (n // 3), "Error: " + "1 " * (n // 2), "<!DOCTYPE" * (n // 9),
             "<?xml" * (n // 5), "`$ " * (n // 3), "-a.b" * (n // 4), "--a.b " * (n // 6),
             "Error: " + "a" * n, "[ERROR] " + "a" * n, "Error: cannot decode 0x" + "f86c0a85" * (n // 8),
             "00:00:00 " * (n // 9), "00:00:00" + " x" * (n // 2), "00:00:00 ERROR " + "[" * n]
    with deadline(120):
        started = time.monotonic()
        for task in tasks:
            extract_keywords("Title\n\n" + task)
        assert time.monotonic() - started < 60

# --------------------------------------------------------------------------- 3./4. cache

TREE = {
    "api/endpoints.py": "from middleware.throttle import Throttle\n\ndef list_users(request):\n"
                        "    return Throttle().check(request)\n",
    "middleware/throttle.py": "class Throttle:\n    def check(self, request):\n        return True\n",
    "util/strings.py": "def slug(text):\n    return text.lower()\n",
}
STEP1 = ["--keywords", "Throttle", "slug"]


def run(*args, expect_stderr: str = "") -> str:
    proc = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert expect_stderr in proc.stderr and proc.stderr.count("\n") == (1 if expect_stderr else 0), proc.stderr
    return proc.stdout


def cache_files(tree: Path) -> List[Path]:
    """The files of the tree's index: manifest, segments, needle store."""
    d = Path(index_mod.index_path(str(tree)))
    return sorted(p for p in d.iterdir() if p.name != index_mod.LOCK_NAME)


def _forge_text(tree: Path) -> None:
    """Rewrite the indexed text of util/strings.py (same length) to hold a forged keyword."""
    for seg in Path(index_mod.index_path(str(tree))).glob("seg-*.idx"):
        data = seg.read_bytes()
        start = data.index(b"def slug(text)")
        forged = b"def throttle()"
        seg.write_bytes(data[:start] + forged + data[start + len(forged):])


PLANTS = ["other owner", "group writable", "fifo", "link to /dev/zero"]


@pytest.fixture(scope="module")
def aged_trees(tmp_path_factory) -> dict:
    """One tree per plant, written once and aged past the racy window together (one wait
    for all, not one each)."""
    trees = {plant: write_tree(tmp_path_factory.mktemp("aged") / "tree", TREE, mtime=OLD) for plant in PLANTS}
    time.sleep(index_mod.RACY_WINDOW_NS / 1e9)  # the trees' ctimes leave the racy window
    return trees


@needs_root
@pytest.mark.parametrize("plant", PLANTS)
def test_planted_cache_is_ignored_with_one_line(tmp_path, plant, aged_trees) -> None:
    tree = aged_trees[plant]
    state, clean = tmp_path / "on" / "s.json", tmp_path / "off" / "s.json"
    state.parent.mkdir()
    clean.parent.mkdir()
    run("--root", tree, "--state", state, *STEP1)
    expected = run("--root", tree, "--state", clean, "--no-cache", "--reset", *STEP1)
    _forge_text(tree)
    for path in cache_files(tree):
        if plant == "other owner":
            os.chown(str(path), OTHER_UID, OTHER_UID)
        elif plant == "group writable":
            os.chmod(str(path), 0o664)
        elif plant == "fifo":
            path.unlink()
            os.mkfifo(str(path))
        else:
            path.unlink()
            os.symlink("/dev/zero", str(path))
    with deadline(60):
        out = run("--root", tree, "--state", state, "--reset", *STEP1, expect_stderr="retrieve_loop.py: index ")
    assert out == expected
    if plant == "other owner":  # a directory someone else owns: the index is not used at all
        os.chown(index_mod.index_path(str(tree)), OTHER_UID, OTHER_UID)
        out = run("--root", tree, "--state", state, "--reset", *STEP1, expect_stderr="not by you")
        assert out == expected


def _in_process_pair(tmp_path: Path, monkeypatch, capsys, tree: Path, change) -> str:
    """Cycle 1, ``change()``, cycle 2 -- with and without the cache; outputs must agree.

    In-process with a zero racy window, so that entries are served by their stat alone
    (the tree was written moments ago) and only the stat comparison can catch ``change``.
    """
    import retrieve_loop
    monkeypatch.setattr(index_mod, "RACY_WINDOW_NS", 0)
    outs = {}
    states = {mode: tmp_path / mode / "s.json" for mode in ("on", "off")}
    for mode, state in states.items():
        state.parent.mkdir()
        flags = ["--no-cache"] if mode == "off" else []
        assert retrieve_loop.main(["--root", str(tree), "--state", str(state), *flags, *STEP1]) == 0
    capsys.readouterr()
    change()
    for mode, state in states.items():
        flags = ["--no-cache"] if mode == "off" else []
        assert retrieve_loop.main(["--state", str(state), *flags, "--keywords", "throttle"]) == 0
        outs[mode] = capsys.readouterr().out
    assert outs["on"] == outs["off"]
    return outs["on"]


def _same_size_edit(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes().replace(old, new)
    st = os.stat(str(path))
    path.write_bytes(data)
    os.utime(str(path), ns=(st.st_atime_ns, st.st_mtime_ns))


@pytest.mark.parametrize("how", ["edit restoring mtime", "cp -p", "rename over", "text turned binary"])
def test_stale_entries_are_never_served(tmp_path, monkeypatch, capsys, how) -> None:
    tree = write_tree(tmp_path / "tree", TREE, mtime=OLD)
    target = tree / "util" / "strings.py"

    def change() -> None:
        time.sleep(0.01)  # a new ctime tick
        if how == "edit restoring mtime":
            _same_size_edit(target, b"def slug(text)", b"def throttle()")
        elif how == "text turned binary":
            _same_size_edit(target, b"def slug(text)", b"throttle\0\0\0\0\0\0")
        else:
            other = tmp_path / "other.py"
            other.write_bytes(target.read_bytes().replace(b"def slug(text)", b"def throttle()"))
            os.utime(str(other), (OLD, OLD))
            if how == "cp -p":
                subprocess.run(["cp", "-p", str(other), str(target)], check=True)
            else:
                os.replace(str(other), str(target))

    out = _in_process_pair(tmp_path, monkeypatch, capsys, tree, change)
    # The edited file now holds "throttle"; the one turned binary holds no text, so its
    # cycle-1 entry is no longer shown either.
    assert ("util/strings.py" in out) == (how != "text turned binary")


def test_racy_ctime_entries_are_not_recorded(tmp_path) -> None:
    """A tree written moments ago (old mtimes, new ctimes): nothing is indexed yet, so an
    edit that keeps size and mtime in the same moment is seen."""
    tree = write_tree(tmp_path / "tree", TREE, mtime=OLD)
    state, clean = tmp_path / "on" / "s.json", tmp_path / "off" / "s.json"
    run("--root", tree, "--state", state, *STEP1)
    run("--root", tree, "--state", clean, "--no-cache", *STEP1)
    assert not list(Path(index_mod.index_path(str(tree))).glob("seg-*.idx"))
    _same_size_edit(tree / "util" / "strings.py", b"def slug(text)", b"def throttle()")
    assert run("--state", state, "--keywords", "throttle") == run("--state", clean, "--no-cache",
                                                                   "--keywords", "throttle")


# --------------------------------------------------------------------------- 5. own files


@pytest.fixture
def alias_of(tmp_path):
    """Bind-mount a directory elsewhere (skips when mounts are not allowed)."""
    mounted = []

    def make(src: Path) -> Path:
        dst = tmp_path / "alias"
        dst.mkdir()
        proc = subprocess.run(["mount", "--bind", str(src), str(dst)], capture_output=True)
        if proc.returncode != 0:
            pytest.skip("bind mounts are not allowed here")
        mounted.append(dst)
        return dst

    yield make
    for dst in mounted:
        subprocess.run(["umount", str(dst)], capture_output=True)


def test_the_tools_own_files_are_skipped_under_a_bind_mount_alias(tmp_path, alias_of) -> None:
    root = write_tree(tmp_path / "root", {"a.py": "", "state/s.json": "{}", "state/s.json.cache": ""})
    alias = alias_of(root)
    own = [str(alias / "state" / "s.json"), str(alias / "state" / "s.json.cache")]
    result = walk(str(root), skip_paths=own)
    assert rels(result) == ["a.py"] and dict(result.skipped)["skip_path"] == 2
    assert index_mod.open_index(str(root), str(alias / "state")) is None  # no index written into the tree


# --------------------------------------------------------------------------- 6. ownership


@needs_root
def test_another_users_repository_above_the_root_is_not_the_work_tree(tmp_path) -> None:
    shared = tmp_path / "shared"
    write_tree(shared, {".git/HEAD": "ref: refs/heads/main\n", ".gitignore": "*\n",
                        "me/project/a.py": "", ".git/info/exclude": "*.py\n"})
    root = shared / "me" / "project"
    assert rels(walk(str(root))) == []  # the caller's own repository: its rules apply
    for dirpath, dirnames, filenames in os.walk(str(shared / ".git")):
        for name in dirnames + filenames + ["."]:
            os.chown(os.path.join(dirpath, name), OTHER_UID, OTHER_UID)
    os.chown(str(shared / ".git"), OTHER_UID, OTHER_UID)
    assert rels(walk(str(root))) == ["a.py"]
    assert root_rules(str(root)) [1] == ""


@needs_root
def test_the_roots_own_git_owned_by_root_is_trusted(tmp_path) -> None:
    write_tree(tmp_path, {".git/HEAD": "", ".git/info/exclude": "*.log\n", "a.py": "", "b.log": ""})
    assert rels(walk(str(tmp_path))) == ["a.py"]
    os.chown(str(tmp_path / ".git"), OTHER_UID, OTHER_UID)
    assert rels(walk(str(tmp_path))) == ["a.py", "b.log"]


# --------------------------------------------------------------------------- 8. bytes


@pytest.mark.skipif(sys.platform == "darwin", reason="the file system refuses non-UTF-8 names")
def test_non_utf8_names_are_walked_and_kept_losslessly(tmp_path) -> None:
    root = os.fsencode(str(tmp_path))
    os.makedirs(root + b"/d\xff\xfe")
    for name in (b"/caf\xe9.py", b"/d\xff\xfe/\x80x.py", b"/ok.py"):
        with open(root + name if b"d\xff" not in name else root + name, "wb") as fh:
            fh.write(b"def handler(): pass\n")
    result = walk(str(tmp_path))
    got = sorted(os.fsencode(f.rel) for f in result.files)
    assert got == sorted([b"caf\xe9.py", b"d\xff\xfe/\x80x.py", b"ok.py"])
    for f in result.files:
        assert read_entry(f).low == b"def handler(): pass\n"


@pytest.mark.skipif(sys.platform == "darwin", reason="the file system refuses non-UTF-8 names")
def test_a_non_utf8_file_name_leaves_the_output_json_and_other_text_as_it_is(tmp_path) -> None:
    # The name is held as a lone surrogate: it must print as JSON's own escape, and only
    # it - "café" and an emoji in a quoted line stay as they are (an earlier version
    # escaped the whole output as Python does, "\xe9", which is not JSON).
    tree = tmp_path / "t"
    tree.mkdir()
    (tree / "a.py").write_bytes("caf\u00e9 auth token \U0001f600\n".encode("utf-8"))
    with open(os.fsencode(str(tree)) + b"/b\xffauth.py", "wb") as fh:
        fh.write(b"auth token\n")
    proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(tree), "--state", str(tmp_path / "s.json"),
                           "--task", "auth token", "--no-cache", "--full"], capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.decode("utf-8"))
    assert sorted(r["id"] for r in out["ranking"]) == ["a.py", "b\udcffauth.py"]
    summary = next(r["summary"] for r in out["results"] if r["id"] == "a.py")
    assert "caf\u00e9 auth token \U0001f600" in summary


@needs_git
def test_random_non_ascii_trees_match_git(tmp_path) -> None:
    """'?' is one byte and '[é]' two bytes, as in git, on UTF-8 and non-UTF-8 names."""
    rng = random.Random(8080)
    tokens = ["é", "e", "?", "??", "*", "[é]", "[!é]", "[a-é]", "ü", "/", "\udcff", "[\udce9]", "\udce9"]
    leaves = ["é", "e", "ée", "aé/x", "ö/é", "ü", "üé", "x/ée"]
    byte_leaves = [b"\xe9", b"\xff", b"a\xe9b"]
    root = str(tmp_path)
    subprocess.run(["git", "init", "-q", root], check=True, capture_output=True)
    paths: List[bytes] = []
    for case in range(60):
        lines = []
        for _ in range(rng.randint(1, 3)):
            pat = "".join(rng.choice(tokens) for _ in range(rng.randint(1, 4)))
            lines.append(("!" if rng.random() < 0.2 else "") + pat)
        base = os.path.join(root, f"c{case}")
        os.makedirs(base)
        with open(os.path.join(base, ".gitignore"), "wb") as fh:
            fh.write("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
        for leaf in leaves:
            full = os.path.join(base, *leaf.split("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            open(full, "w").close()
            paths.append(os.fsencode(f"c{case}/{leaf}"))
        for leaf in byte_leaves:
            open(os.fsencode(base) + b"/" + leaf, "w").close()
            paths.append(os.fsencode(f"c{case}/") + leaf)
    proc = subprocess.run(["git", "-c", "core.excludesFile=/dev/null", "check-ignore", "--no-index",
                           "-v", "-n", "-z", "--stdin"], cwd=root, input=b"\0".join(paths) + b"\0",
                          capture_output=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    fields = proc.stdout.split(b"\0")
    expected = {}
    for k in range(0, len(fields) - 1, 4):
        source, line, pattern, path = fields[k:k + 4]
        expected[os.fsdecode(path)] = None if not source else (not pattern.startswith(b"!"),
                                                               f"{os.fsdecode(source)}:{os.fsdecode(line)}")
    matcher = GitIgnore(root)
    mismatches = {}
    for raw in paths:
        rel = os.fsdecode(raw)
        found = matcher.check(rel, False)
        ours = None if found is None else (found.ignored, f"{found.pattern.source}:{found.pattern.line}")
        if ours != expected.get(rel):
            mismatches[rel] = (ours, expected.get(rel))
    assert not mismatches, dict(list(mismatches.items())[:10])


def test_byte_wise_question_mark_and_class() -> None:
    f = parse_ignore_file("caf?\n", ".gitignore", "")
    assert f.last_match("café", False) is None  # é is two bytes
    assert parse_ignore_file("caf??\n", ".gitignore", "").last_match("café", False) is not None
    assert parse_ignore_file("caf[é][é]\n", ".gitignore", "").last_match("café", False) is not None
    assert compile_glob("a*b*c*d*e*f").fullmatch("ab" * 2000) in (None, False)


def test_gitdir_pointer_outside_the_root_is_not_followed(tmp_path) -> None:
    """A .git file naming a directory outside the root: its info/exclude is never read."""
    elsewhere = write_tree(tmp_path / "elsewhere", {"info/exclude": "*.py\n"})
    root = write_tree(tmp_path / "root", {"a.py": "x\n", "b.txt": "y\n"})
    (root / ".git").write_text(f"gitdir: {elsewhere}\n")
    assert rels(walk(str(root))) == ["a.py", "b.txt"]
    (root / ".git").write_text("gitdir: ../elsewhere\n")  # relative, same place
    assert rels(walk(str(root))) == ["a.py", "b.txt"]


def test_gitdir_pointer_inside_the_root_is_followed(tmp_path) -> None:
    root = write_tree(tmp_path / "root", {"a.py": "x\n", "b.txt": "y\n", "gd/info/exclude": "*.py\n"})
    (root / ".git").write_text("gitdir: gd\n")
    assert rels(walk(str(root))) == ["b.txt", "gd/info/exclude"]


def test_commondir_outside_the_root_is_not_followed(tmp_path) -> None:
    common = write_tree(tmp_path / "common", {"info/exclude": "*.py\n"})
    root = write_tree(tmp_path / "root", {"a.py": "x\n", "gd/commondir": f"{common}\n"})
    (root / ".git").write_text("gitdir: gd\n")
    assert rels(walk(str(root))) == ["a.py", "gd/commondir"]


def test_symlinked_git_info_outside_the_root_is_not_followed(tmp_path) -> None:
    outside = write_tree(tmp_path / "outside", {"exclude": "*.py\n"})
    root = write_tree(tmp_path / "root", {"a.py": "x\n", ".git/HEAD": ""})
    os.symlink(str(outside), str(root / ".git" / "info"))
    assert rels(walk(str(root))) == ["a.py"]


def test_pathological_gitignore_is_cut_and_stays_fast(tmp_path, capsys) -> None:
    """200,000 lines like ``*123*a*`` (2.4 MB): minutes and 2.3 GB before; now cut, one line."""
    root = write_tree(tmp_path, {f"sub/f{i}.py": "x\n" for i in range(50)})
    (root / ".gitignore").write_text("\n".join("*%d*a*" % i for i in range(200000)))
    with deadline(20):
        result = walk(str(root))
    assert len(result.files) == 50 and dict(result.skipped)["bad_ignore_file"] == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and str(root / ".gitignore") in err[0] and "cut at line 101" in err[0]


@pytest.mark.parametrize("cap, lines", [
    ("MAX_IGNORE_PATTERNS", ["a.py", "b.py", "c.py"]),
    ("MAX_IGNORE_WILDCARD", ["a*.py", "b*.py", "c*.py"]),
    ("MAX_IGNORE_LEADING_WILDCARD", ["*a.py", "*b.py", "*c.py"]),
    ("MAX_IGNORE_LINEAR", ["*a*.p*", "*b*.p*", "*c*.p*"]),
])
def test_ignore_file_lines_past_a_cap_are_not_applied(tmp_path, monkeypatch, capsys, cap, lines) -> None:
    from agentic_search_skill import ignore
    monkeypatch.setattr(ignore, cap, 2)
    root = write_tree(tmp_path, {".gitignore": "# two kept\n" + "\n".join(lines) + "\n",
                                 "a.py": "", "b.py": "", "c.py": ""})
    assert rels(walk(str(root))) == ["c.py"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cut at line 4" in err and ".gitignore" in err


def test_ignore_file_is_read_up_to_a_byte_cap_in_whole_lines(tmp_path, monkeypatch, capsys) -> None:
    from agentic_search_skill import ignore
    monkeypatch.setattr(ignore, "MAX_IGNORE_READ_BYTES", 12)
    root = write_tree(tmp_path, {".gitignore": "a.py\nb.py\nc.py\n", "a.py": "", "b.py": "", "c.py": ""})
    assert rels(walk(str(root))) == ["c.py"]  # 12 bytes end inside 'c.py': that line is dropped
    assert "cut after 12 bytes" in capsys.readouterr().err
    assert rels(walk(str(root))) == ["c.py"] and capsys.readouterr().err == ""  # said once


def test_a_task_of_a_hundred_thousand_forge_links_is_read_in_linear_time() -> None:
    # Each link's path was looked up in a list of those before it: 92 s for 4 MiB.
    from agentic_search_skill.query import strip_urls
    task = "".join(f"https://github.com/o/r/blob/m/{i:x} " for i in range(120_000))
    with deadline(30):
        _, paths = strip_urls(task)
    assert len(paths) == 120_000 and paths[:2] == ["0", "1"]


@pytest.mark.parametrize("task", [
    "# " + "#" * 400_000 + "x",            # a heading's closing hashes, read once per hash before
    ": x" + " " * 400_000 + "y",           # Ruby's trailing error class, looked for at every space before
    "-" * 400_000,                         # an error line's program name, tried at every dash before
    "**x**" + " " * 400_000 + "y",         # a bold heading's trailing spaces, two runs against each other
    "Error: " + "[" * 400_000,             # a message's bracketed values, each read to the line's end
])
def test_a_task_shaped_against_the_heading_and_error_readers_is_read_in_linear_time(task) -> None:
    from agentic_search_skill.query import extract_keywords
    with deadline(20):
        extract_keywords(task)


def test_learning_the_codes_words_near_the_task_is_linear_in_the_best_files() -> None:
    # Each line was tested against each of the query's needles: 90 s on three files of
    # 780,000 short lines; the needles are searched together now.
    from agentic_search_skill.refine import _parts_near
    names = [f"fooBar_baz-Qux{i}".encode() for i in range(100)]
    text = b" ".join(names) + b"\n" * 780_000
    with deadline(20):
        near = _parts_near([text] * 3, [n.lower() for n in names] * 2 + [b"handler"])
    assert {"foo", "bar", "baz", "qux0"} <= near


def test_telling_a_task_given_again_is_linear_however_many_lines_repeat() -> None:
    # A task of 100,000 one-letter lines, given again: each start line against the task
    # was the square of the lines.
    from agentic_search_skill.cli import _holds_task
    many = "a\n" * 100_000
    with deadline(20):
        assert _holds_task(many, many) and not _holds_task(many, many + "b")


def test_a_task_of_a_long_run_of_combining_marks_is_read_in_linear_time() -> None:
    # Unicode normalization reorders a run of combining marks in time that grows with its
    # square: 27 s for a task of 200 KB of accents, minutes at the task's 256k-character cap.
    from agentic_search_skill.query import extract_keywords, normalize
    from agentic_search_skill.score import task_words
    task = "token refresh fails a" + "\u0323\u0301" * 128_000 + " end\n"
    with deadline(30):
        words = {k.text for k in extract_keywords(task)}
        task_words(task)
    assert {"token", "refresh"} <= words
    # Runs within Unicode's stream-safe 30 marks normalize as they always did.
    word = "e\u0323\u0302" + "\u0301" * 27
    assert normalize(word) == __import__("unicodedata").normalize("NFKC", word).casefold()


def test_hints_on_combining_marks_and_keywords_holding_nul_answer_in_linear_time() -> None:
    # A result's text of a long run of accents (8.7 s at 200 KB), and a thousand keywords
    # holding NUL, each of which folded every result's text again (10 s at 170 KB).
    # (Results in 300 items of 2,000 half-width kana: the fold of each is not ASCII's.)
    import hints
    marks = [{"id": "m", "score": 0.5, "text": "found a" + "\u0323\u0301" * 150_000}]
    kana = [{"id": f"k{i}", "score": 0.5, "text": "\uff71" * 2_000 + " ok\0z"} for i in range(300)]
    kana += [{}] * 300_000 + [{"text": "\0"}] * 100_000  # (items holding NUL too)
    keywords = ["ok\0z"] + [f"k{i}\0z" for i in range(hints.MAX_KEYWORDS - 1)]
    with deadline(30):
        out = hints.compute_hints(marks, ["found", "zzz"])
        gaps = hints.gap_keywords(keywords, kana)
    assert out["gap_keywords"] == ["zzz"]
    assert gaps and "ok\0z" not in gaps and set(gaps) <= set(keywords)  # (as far as the scan budget goes)
