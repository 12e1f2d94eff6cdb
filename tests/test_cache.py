"""cache.py: later cycles reuse what earlier ones read, and nothing changes by it.

Two loops run side by side over the same tree, one with the cache and one with
``--no-cache``; every cycle's stdout and the final state must be byte-for-byte equal,
including when files change, vanish or appear between cycles and when the cache file
is damaged. The tree's files get an old mtime so that the cache may record them (a
file modified within the last two seconds is never recorded: see RACY_WINDOW_NS).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Optional

import pytest

from agentic_search import cache as cache_mod
from _trees import write_tree

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "retrieve_loop.py"
OLD = 1_600_000_000  # seconds: mtimes far outside the racy window

TREE = {
    "api/endpoints.py": "from middleware.throttle import Throttle\n\n"
                        "def list_users(request):\n    return Throttle().check(request)\n",
    "middleware/throttle.py": "class Throttle:\n    \"\"\"Throttle API requests per client.\"\"\"\n"
                              "    def check(self, request):\n        return self.bucket.take(request.client)\n",
    "middleware/__init__.py": "from .throttle import Throttle\n",
    "middleware/bucket.py": "class TokenBucket:\n    def take(self, client):\n        return True\n",
    "app/router.py": "from api.endpoints import list_users\n\ndef setup(app):\n"
                     "    app.route('/users', list_users)\n",
    "docs/api.md": "# API\nEndpoints are throttled per client.\n",
    "util/strings.py": "def slug(text):\n    return text.lower()\n",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
}
# Cycle 1 finds no "RateLimiter" (cycle 2 then runs synonyms such as "throttle"); cycle 3
# is steered with one more keyword, so the loop runs three cycles whatever it decides.
STEPS = {1: ["--keywords", "RateLimiter", "endpoints"], 2: [], 3: ["--keywords", "TokenBucket"]}


def make_tree(root: Path, files: dict) -> Path:
    """Write ``files`` under ``root`` with old mtimes."""
    return write_tree(root, files, mtime=OLD)


def run(*args) -> str:
    """Run the script; expect success and an empty stderr; return stdout."""
    proc = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)],
                          capture_output=True, text=True, encoding="utf-8", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    return proc.stdout


def side_by_side(tmp_path: Path, tree: Path, cycles: int = 3,
                 between: Optional[Callable[[int], None]] = None,
                 damage: Optional[Callable[[Path], None]] = None) -> list[dict]:
    """Run ``cycles`` cycles with and without the cache; assert equal output each time.

    ``between(n)`` runs after cycle n (changing the tree for both loops alike);
    ``damage(state)`` after cycle 1, on the cached loop's state path only.
    """
    states = {"on": tmp_path / "on" / "s.json", "off": tmp_path / "off" / "s.json"}
    outs = []
    for n in range(1, cycles + 1):
        texts = {}
        for mode, state in states.items():
            args = ["--state", state] + (["--no-cache"] if mode == "off" else [])
            args += (["--root", tree] if n == 1 else []) + STEPS[n]
            texts[mode] = run(*args)
        assert texts["on"] == texts["off"], f"cycle {n} differs with the cache"
        outs.append(json.loads(texts["on"]))
        if damage is not None and n == 1:
            damage(states["on"])
        if between is not None:
            between(n)
    assert states["on"].read_bytes() == states["off"].read_bytes()
    return outs


def cache_files(state: Path) -> list[Path]:
    return [Path(str(state) + cache_mod.INDEX_SUFFIX), Path(str(state) + cache_mod.BLOB_SUFFIX)]


def results_ids(out: dict) -> list[str]:
    """Every file the loop ranks (the default output describes only the best few)."""
    return [r["id"] for r in out["ranking"]]


# --------------------------------------------------------------------------- identity


def test_three_cycles_are_identical_with_and_without_the_cache(tmp_path):
    tree = make_tree(tmp_path / "tree", TREE)
    outs = side_by_side(tmp_path, tree)
    assert outs[0]["cycle"] == 1 and len(outs) == 3
    assert "throttle" in outs[1]["query"]["keywords"]  # a keyword cycle 1 did not count
    assert "TokenBucket" in outs[2]["query"]["keywords"]
    assert all(p.is_file() for p in cache_files(tmp_path / "on" / "s.json"))
    assert sorted(os.listdir(tmp_path / "off")) == ["s.json", "s.json.lock"]  # --no-cache writes no cache


def test_unchanged_files_are_not_read_again(tmp_path, monkeypatch, capsys):
    """Cycle 2 reads only what changed; cycle 1 with a fresh state reuses the cache too."""
    import retrieve_loop
    from agentic_search import engine

    tree = make_tree(tmp_path / "tree", TREE)
    # The tree's ctimes are "now": outside the racy window only once it is this short.
    monkeypatch.setattr(cache_mod, "RACY_WINDOW_NS", 0)
    reads: list[str] = []
    real_read = engine.read_document

    def counting_read(rel, path):
        reads.append(rel)
        return real_read(rel, path)

    monkeypatch.setattr(engine, "read_document", counting_read)
    state = str(tmp_path / "s.json")
    assert retrieve_loop.main(["--root", str(tree), "--state", state, *STEPS[1]]) == 0
    assert sorted(reads) == sorted(TREE)
    reads.clear()
    (tree / "util/strings.py").write_text("def slug(text):\n    return text.upper()\n")
    os.utime(tree / "util/strings.py", (OLD + 10, OLD + 10))
    assert retrieve_loop.main(["--state", state]) == 0
    assert reads == ["util/strings.py"]
    reads.clear()
    assert retrieve_loop.main(["--root", str(tree), "--state", state, "--reset", *STEPS[1]]) == 0
    assert reads == []
    capsys.readouterr()


# --------------------------------------------------------------------------- staleness


def test_file_changed_with_the_same_size_and_a_new_mtime_is_read_again(tmp_path):
    tree = make_tree(tmp_path / "tree", TREE)
    target = tree / "util/strings.py"
    before = target.read_bytes()

    def edit(n: int) -> None:
        if n == 1:
            after = before.replace(b"slug(text)", b"throttle()")
            assert len(after) == len(before)
            target.write_bytes(after)
            os.utime(target, (OLD + 1, OLD + 1))

    outs = side_by_side(tmp_path, tree, cycles=2, between=edit)
    assert "util/strings.py" in results_ids(outs[1])


def test_removed_file_disappears(tmp_path):
    tree = make_tree(tmp_path / "tree", TREE)
    # Cycle 3 looks for "TokenBucket", which only the removed file held: its bytes stay in
    # the blob (a gap no table entry covers) and must not be found there.
    outs = side_by_side(tmp_path, tree, cycles=3,
                        between=lambda n: (tree / "middleware/bucket.py").unlink() if n == 1 else None)
    assert outs[1]["stats"]["files_read"] == outs[0]["stats"]["files_read"] - 1
    assert all("middleware/bucket.py" not in results_ids(out) for out in outs[1:])


def test_added_file_appears(tmp_path):
    tree = make_tree(tmp_path / "tree", TREE)

    def add(n: int) -> None:
        if n == 1:
            make_tree(tree, {"middleware/ratelimit.py": "def throttle_endpoint(api):\n    return api\n"})

    outs = side_by_side(tmp_path, tree, cycles=3, between=add)
    assert "middleware/ratelimit.py" in results_ids(outs[1])


def test_a_file_written_moments_ago_is_not_recorded(tmp_path):
    """Racy entries: a write in the same timestamp tick could keep size and mtime."""
    tree = make_tree(tmp_path / "tree", TREE)
    (tree / "util/fresh.py").write_text("x = 1\n")  # mtime: now
    state = tmp_path / "s.json"
    run("--root", tree, "--state", state, *STEPS[1])
    index = json.loads(cache_files(state)[0].read_text())
    recorded = [row[0] for row in index["files"]]
    assert "util/fresh.py" not in recorded
    assert sorted(recorded) == sorted(TREE)


# --------------------------------------------------------------------------- damage


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def _edit_index(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def damage(state: Path) -> None:
        index_path = cache_files(state)[0]
        index = json.loads(index_path.read_text())
        change(index)
        index_path.write_text(json.dumps(index))
    return damage


DAMAGE = {
    "garbage index": lambda s: _write(cache_files(s)[0], b"\x00\xffnot json at all"),
    "empty index": lambda s: _write(cache_files(s)[0], b""),
    "garbage blob": lambda s: _write(cache_files(s)[1], os.urandom(300)),
    "truncated blob": lambda s: _write(cache_files(s)[1], cache_files(s)[1].read_bytes()[:-7]),
    "missing blob": lambda s: cache_files(s)[1].unlink(),
    "truncated index": lambda s: _write(cache_files(s)[0], cache_files(s)[0].read_bytes()[:100]),
    "wrong version": _edit_index(lambda i: i.update(version=999)),
    "foreign format": _edit_index(lambda i: i.update(format="something-else")),
    "other root": _edit_index(lambda i: i.update(root="/elsewhere")),
    "other matcher": _edit_index(lambda i: i.update(matcher="0" * 16)),
    "file row out of range": _edit_index(lambda i: i["files"][0].__setitem__(6, 10 ** 12)),
    "keyword row bad index": _edit_index(
        lambda i: next(k for k in i["keywords"] if k["rows"])["rows"].__setitem__(0, 10 ** 6)),
    "keyword count not a number": _edit_index(
        lambda i: next(k for k in i["keywords"] if k["rows"])["rows"].__setitem__(1, "many")),
    "keyword rows not a list": _edit_index(lambda i: i["keywords"][0].__setitem__("rows", {"a": 1})),
    "files not a list": _edit_index(lambda i: i.update(files="abcde")),
    "deep nesting": lambda s: _write(cache_files(s)[0], b"[" * 100_000 + b"]" * 100_000),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_damaged_cache_is_ignored_and_rebuilt(tmp_path, kind):
    tree = make_tree(tmp_path / "tree", TREE)
    side_by_side(tmp_path, tree, cycles=3, damage=DAMAGE[kind])
    index = json.loads(cache_files(tmp_path / "on" / "s.json")[0].read_text())
    assert index["format"] == cache_mod.FORMAT_NAME and index["version"] == cache_mod.FORMAT_VERSION


def test_cache_of_another_root_is_not_served(tmp_path):
    """One state path reused (--reset) for another tree with the same paths, sizes, mtimes."""
    a = make_tree(tmp_path / "a", TREE)
    b = make_tree(tmp_path / "b", {rel: (c.replace("Throttle", "Throtle") + " " if isinstance(c, str) else c)
                                   for rel, c in TREE.items()})
    for rel in TREE:
        os.utime(b / rel, (OLD, OLD))
    state = tmp_path / "s.json"
    run("--root", a, "--state", state, *STEPS[1])
    on = run("--root", b, "--state", state, "--reset", *STEPS[1])
    off = run("--root", b, "--state", tmp_path / "off.json", *STEPS[1], "--no-cache")
    assert on == off


# --------------------------------------------------------------------------- where it lives


def test_cache_sits_beside_the_state_and_nothing_is_written_in_the_root(tmp_path):
    tree = make_tree(tmp_path / "tree", TREE)
    before = sorted(str(p.relative_to(tree)) for p in tree.rglob("*"))
    state = tmp_path / "state" / "s.json"
    run("--root", tree, "--state", state, *STEPS[1])
    run("--state", state)
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*")) == before
    assert sorted(os.listdir(state.parent)) == ["s.json", "s.json.cache", "s.json.cache.blob", "s.json.lock"]


def test_no_cache_inside_the_root(tmp_path):
    """A state file inside the tree stays the only file written there."""
    tree = make_tree(tmp_path / "tree", TREE)
    state = tree / "s.json"
    run("--root", tree, "--state", state, *STEPS[1])
    run("--state", state)
    assert not any(p.exists() for p in cache_files(state))


def test_no_cache_flag_reads_and_writes_no_cache(tmp_path):
    tree = make_tree(tmp_path / "tree", TREE)
    state = tmp_path / "s.json"
    run("--root", tree, "--state", state, *STEPS[1], "--no-cache")
    run("--state", state, "--no-cache")
    assert sorted(os.listdir(tmp_path)) == ["s.json", "s.json.lock", "tree"]
    # An existing cache is left as it is, not read: damage it and nothing notices.
    run("--root", tree, "--state", state, "--reset", *STEPS[1])
    index, blob = cache_files(state)
    blob.write_bytes(b"junk")
    run("--state", state, "--no-cache")
    assert blob.read_bytes() == b"junk"
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_unwritable_cache_is_not_an_error(tmp_path):
    """A cache that cannot be written is skipped quietly: the state is what matters."""
    tree = make_tree(tmp_path / "tree", TREE)
    state = tmp_path / "s.json"
    os.mkdir(str(state) + cache_mod.INDEX_SUFFIX)  # a directory where the index would go
    for cycle, args in ((1, ("--root", tree, *STEPS[1])), (2, ())):
        proc = subprocess.run([sys.executable, str(SCRIPT), "--state", str(state), *map(str, args)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and json.loads(proc.stdout)["cycle"] == cycle
        # Not a regular file where the cache would be: said once, in one line.
        assert proc.stderr.count("\n") == 1 and "not a regular file" in proc.stderr
