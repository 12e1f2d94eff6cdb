"""scripts/retrieve_loop.py as a black box: exit codes, stderr, stdout, the state file.

Every test builds its codebase in tmp_path and runs the script as a subprocess (the way
an agent calls it), except where a fault has to be injected (an unreadable file as
root, a crash while saving), which runs ``main()`` in-process with a monkeypatch.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _trees import write_tree

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "retrieve_loop.py"
PREFIX = "retrieve_loop.py: error: "

# A codebase that only ever says "throttle" and "route": the loop needs more than one cycle.
ROUTER_TREE = {
    "lib/throttle.py": 'class Throttle:\n    """Throttle requests per client."""\n'
                       "    def allow(self, client):\n        return True\n",
    "app/router.py": "from lib.throttle import Throttle\n\ndef setup_routes(app):\n    app.use(Throttle())\n",
    "app/views.py": 'def index(request):\n    return "hello"\n',
    # (A second file on the routes: "route" alone does not single one file out, and the
    # loop goes on after cycle 1, as the tests of its later cycles need.)
    "app/urls.py": "# each route of the app maps to a view\n",
}

TOP_KEYS = ("cycle", "max_cycles", "done", "stop_reason", "next_action", "why", "confidence", "query",
            "results", "ranking", "context", "next_query", "gaps", "stats")
RESULT_KEYS = ("id", "score", "reason", "lines")
FULL_RESULT_KEYS = ("id", "title", "summary", "tags", "score", "related", "reason", "missing", "matched")


def make_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    """Write ``files`` (POSIX relative path -> text or bytes) under ``root``."""
    return write_tree(root, files)


def run_cli(*args: str | os.PathLike) -> subprocess.CompletedProcess:
    """Run the script; stdout and stderr decoded as UTF-8."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True, text=True, encoding="utf-8", timeout=120,
    )


def run_json(*args: str | os.PathLike) -> dict:
    """Run the script, expect success with an empty stderr, return the JSON output."""
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.endswith("}\n")
    return json.loads(proc.stdout)


def assert_one_line_error(proc: subprocess.CompletedProcess, needle: str, code: int = 1) -> None:
    """Exit ``code``, nothing on stdout, one line on stderr naming the problem, no traceback."""
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith(PREFIX), proc.stderr
    assert proc.stderr.endswith("\n") and proc.stderr.count("\n") == 1, proc.stderr
    assert needle in proc.stderr, proc.stderr


def tree_snapshot(root: Path) -> dict[str, tuple[bool, int, int]]:
    """Every entry under root: (is a directory, size, mtime in ns)."""
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = path.lstat()
            snap[path.relative_to(root).as_posix()] = (path.is_dir(), st.st_size, st.st_mtime_ns)
    return snap


def temp_files(directory: Path) -> list[str]:
    """Leftovers of an interrupted atomic write."""
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def all_ids(out: dict) -> set[str]:
    """Every file id the output names: results, ranking, context, related."""
    ids = {r["id"] for r in out["results"]} | {r["id"] for r in out["ranking"]} | {c["id"] for c in out["context"]}
    for r in out["results"]:
        ids.update(r.get("related", []))
    ids.update(out.get("related", []))
    return ids


@pytest.fixture
def router(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "repo", ROUTER_TREE)


# --- bad input: one line on stderr, exit 1, nothing lost ----------------------------

def _missing_root(tmp: Path, root: Path) -> list:
    return ["--root", tmp / "nope", "--state", tmp / "s.json", "--keywords", "route"]


def _root_is_file(tmp: Path, root: Path) -> list:
    return ["--root", root / "app/router.py", "--state", tmp / "s.json", "--keywords", "route"]


def _no_keywords_no_task(tmp: Path, root: Path) -> list:
    return ["--root", root, "--state", tmp / "s.json"]


def _blank_task(tmp: Path, root: Path) -> list:
    return ["--root", root, "--state", tmp / "s.json", "--task", "   "]


def _judge(value: str):
    def build(tmp: Path, root: Path) -> list:
        return ["--root", root, "--state", tmp / "s.json", "--keywords", "route", "--judge", value]
    return build


def _judge_outside_absolute(tmp: Path, root: Path) -> list:
    (tmp / "outside.py").write_text("route\n")
    return _judge(f"{tmp / 'outside.py'}=0.5")(tmp, root)


def _judge_symlink_out(tmp: Path, root: Path) -> list:
    (tmp / "outside.py").write_text("route\n")
    os.symlink(tmp / "outside.py", root / "link.py")
    return _judge("link.py=0.5")(tmp, root)


def _judge_too_deep(tmp: Path, root: Path) -> list:
    # A file whose path the system will not take (past PATH_MAX) exists: the message
    # says what the system said, not "no such file" (an adversarial check).
    here = os.getcwd()
    try:
        os.chdir(root)
        parts = []
        while len(str(root)) + sum(len(p) + 1 for p in parts) < 4200:
            parts.append("d" * 60)
            os.mkdir(parts[-1])
            os.chdir(parts[-1])
        with open("deep.py", "w") as fh:
            fh.write("route\n")
    finally:
        os.chdir(here)
    return _judge("/".join(parts + ["deep.py"]) + "=0.5")(tmp, root)


def _flag(*extra: str):
    def build(tmp: Path, root: Path) -> list:
        return ["--root", root, "--state", tmp / "s.json", "--keywords", "route", *extra]
    return build


BAD_INPUT = [
    ("missing root", _missing_root, "no such directory"),
    ("root is a file", _root_is_file, "not a directory"),
    ("no keywords and no task", _no_keywords_no_task, "no keywords and no task"),
    ("blank task", _blank_task, "no keywords and no task"),
    ("judge relative path outside the tree", _judge("../outside.py=0.5"), "outside the root"),
    ("judge absolute path outside the tree", _judge_outside_absolute, "outside the root"),
    ("judge symlink leaving the tree", _judge_symlink_out, "outside the root"),
    ("judge file that does not exist", _judge("app/nothere.py=0.5"), "no such file"),
    ("judge file whose path is too long", _judge_too_deep, "cannot be read (File name too long)"),
    ("judge a path through a file", _judge("app/router.py/x.py=0.5"), "no such file under the root"),
    ("state is a directory", lambda tmp, root: ["--root", root, "--state", tmp, "--keywords", "route"],
     "is a directory"),
]


@pytest.mark.parametrize("build, needle", [c[1:] for c in BAD_INPUT], ids=[c[0] for c in BAD_INPUT])
def test_bad_input_on_first_call_is_one_line_exit_1_and_creates_no_state(tmp_path, router, build, needle):
    args = build(tmp_path, router)
    assert_one_line_error(run_cli(*args), needle)
    assert not (tmp_path / "s.json").is_file()
    assert temp_files(tmp_path) == []


# A --judge value malformed in itself is a usage error (exit 2), as a flag out of its range
# is; what its path names (missing, outside the tree) is bad input (exit 1, above).
JUDGE_MALFORMED = [
    ("judge without '='", "app/router.py", "expected PATH=SCORE"),
    ("judge without a path", "=0.5", "expected PATH=SCORE"),
    ("judge score not a number", "app/router.py=high", "is not a number"),
    ("judge score above 1", "app/router.py=1.5", "between 0 and 1"),
    ("judge score below 0", "app/router.py=-0.1", "between 0 and 1"),
    ("judge score nan", "app/router.py=nan", "between 0 and 1"),
]


@pytest.mark.parametrize("value, needle", [c[1:] for c in JUDGE_MALFORMED], ids=[c[0] for c in JUDGE_MALFORMED])
def test_a_malformed_judgement_is_a_usage_error_on_any_call(tmp_path, router, value, needle):
    state = tmp_path / "s.json"
    assert_one_line_error(run_cli(*_judge(value)(tmp_path, router)), needle, code=2)
    assert not state.is_file() and temp_files(tmp_path) == []
    run_json("--root", router, "--state", state, "--keywords", "route")
    before = state.read_bytes()
    assert_one_line_error(run_cli(*_judge(value)(tmp_path, router)), needle, code=2)
    assert state.read_bytes() == before


FLAG_BELOW_ONE = [("--max-cycles", "0"), ("--limit", "0"), ("--max-file-kb", "0"), ("--limit", "-3")]


@pytest.mark.parametrize("flag, value", FLAG_BELOW_ONE)
def test_a_flag_below_one_is_a_usage_error_like_one_above_its_bound(tmp_path, router, flag, value):
    state = tmp_path / "s.json"
    assert_one_line_error(run_cli(*_flag(flag, value)(tmp_path, router)), f"{flag} {value}: must be at least 1", code=2)
    assert not state.is_file()
    run_json("--root", router, "--state", state, "--keywords", "route")
    before = state.read_bytes()
    assert_one_line_error(run_cli(*_flag(flag, value)(tmp_path, router)), f"{flag} {value}", code=2)
    assert state.read_bytes() == before


LATER_BAD_INPUT = [c for c in BAD_INPUT if c[0] not in ("no keywords and no task", "blank task", "state is a directory")]


@pytest.mark.parametrize("build, needle", [c[1:] for c in LATER_BAD_INPUT], ids=[c[0] for c in LATER_BAD_INPUT])
def test_bad_input_on_a_later_call_leaves_the_state_byte_for_byte(tmp_path, router, build, needle):
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route")
    before = state.read_bytes()
    assert_one_line_error(run_cli(*build(tmp_path, router)), needle)
    assert state.read_bytes() == before


USAGE = [
    ("no arguments", []),
    ("missing --root", ["--state", "s.json", "--keywords", "x"]),
    ("missing --state", ["--root", ".", "--keywords", "x"]),
    ("unknown flag", ["--root", ".", "--state", "s.json", "--bogus"]),
    ("max-cycles not an int", ["--root", ".", "--state", "s.json", "--max-cycles", "x"]),
    ("limit not an int", ["--root", ".", "--state", "s.json", "--limit", "many"]),
]


@pytest.mark.parametrize("args", [c[1] for c in USAGE], ids=[c[0] for c in USAGE])
def test_usage_error_exits_2_without_traceback(args):
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith(PREFIX)


def test_help_exits_0_and_names_every_flag():
    proc = run_cli("--help")
    assert proc.returncode == 0 and proc.stderr == ""
    for flag in ("--root", "--state", "--task", "--keywords", "--patterns", "--exclude", "--judge",
                 "--max-cycles", "--limit", "--max-file-kb", "--reset", "--text"):
        assert flag in proc.stdout


# --- corrupt, foreign and other-root state files ---------------------------------------

CORRUPT = [
    ("invalid json", b"{bad", "not an agentic-search state file"),
    ("truncated state", b'{"format":"agentic-search-state","version":2,"ro', "state file is corrupt"),
    ("not utf-8", b"\xff\xfe{}", "not an agentic-search state file"),
    ("json array", b"[1, 2]", "not an agentic-search state file"),
    ("json string", b'"agentic-search-state"', "not an agentic-search state file"),
    ("object of another format", b'{"format": "other-tool", "version": 1, "scores": {}}',
     "not an agentic-search state file"),
    ("object without format", b'{"version": 1}', "not an agentic-search state file"),
    ("unknown version", b'{"format": "agentic-search-state", "version": 99}', "version 99 is not supported"),
    ("version as string", b'{"format": "agentic-search-state", "version": "1"}', "is not supported"),
    ("the format before records", b'{"format": "agentic-search-state", "version": 1}', "version 1 is not supported"),
    ("right header, no fields", b'{"format": "agentic-search-state", "version": 2}', "missing or malformed"),
]


@pytest.mark.parametrize("content, needle", [c[1:] for c in CORRUPT], ids=[c[0] for c in CORRUPT])
def test_corrupt_or_foreign_state_is_an_error_and_left_untouched(tmp_path, router, content, needle):
    state = tmp_path / "s.json"
    state.write_bytes(content)
    assert_one_line_error(run_cli("--root", router, "--state", state, "--keywords", "route"), needle)
    assert state.read_bytes() == content
    # Also on a call with no query flags (the "next cycle" path).
    assert_one_line_error(run_cli("--root", router, "--state", state), needle)
    assert state.read_bytes() == content
    assert temp_files(tmp_path) == []


def test_an_empty_file_is_no_state_yet(tmp_path, router):
    # `S=$(mktemp)` makes an empty file; the tool never writes one (its saves are atomic)
    state = tmp_path / "s.json"
    state.write_bytes(b"")
    out = run_json("--root", router, "--state", state, "--keywords", "route")
    assert out["cycle"] == 1 and json.loads(state.read_text())["cycle"] == 1
    state.write_bytes(b"")
    assert_one_line_error(run_cli("--state", state, "--keywords", "route"), "--root", code=2)


# Ours: empty, or an object whose first key names the state format (as the writer puts it).
OURS = [c for c in CORRUPT if not c[1].strip() or re.match(rb'\s*\{\s*"format"\s*:\s*"agentic-search-state"', c[1])]
FOREIGN = [c for c in CORRUPT if c not in OURS]


@pytest.mark.parametrize("content", [c[1] for c in OURS], ids=[c[0] for c in OURS])
def test_reset_starts_over_from_a_corrupt_state_file(tmp_path, router, content):
    state = tmp_path / "s.json"
    state.write_bytes(content)
    out = run_json("--root", router, "--state", state, "--keywords", "route", "--reset")
    assert out["cycle"] == 1
    saved = json.loads(state.read_text(encoding="utf-8"))
    assert saved["format"] == "agentic-search-state" and saved["version"] == 2


@pytest.mark.parametrize("content", [c[1] for c in FOREIGN], ids=[c[0] for c in FOREIGN])
def test_reset_leaves_a_file_that_names_no_state_format_alone(tmp_path, router, content):
    state = tmp_path / "s.json"
    state.write_bytes(content)
    proc = run_cli("--root", router, "--state", state, "--keywords", "route", "--reset")
    assert_one_line_error(proc, "not an agentic-search state file")
    assert state.read_bytes() == content


# A state file of the right format whose fields were hand-edited: each must fail cleanly
# (it used to reach the cycle and die with a TypeError/AttributeError traceback).
MALFORMED_FIELDS = [
    ("cycle", None), ("cycle", "x"), ("cycle", -1), ("max_cycles", None), ("max_cycles", 0),
    ("root", 5), ("task", 5), ("done", "yes"), ("next_query", "x"),
    ("next_query", {"keywords": ["x"]}), ("next_query", {"keywords": [], "patterns": "**"}),
    ("scores", {"a.py": 1}), ("scores", {"a.py": {"score": "high"}}), ("judgements", {"app/router.py": "x"}),
    ("seen_ids", [1]), ("pending_related", 5), ("history", {}), ("last", 5), ("last", {"cycle": 1}),
    ("max_file_bytes", 0), ("max_file_bytes", "2MB"),
]


@pytest.mark.parametrize("field, value", MALFORMED_FIELDS, ids=[f"{f}={v!r}" for f, v in MALFORMED_FIELDS])
def test_state_with_a_malformed_field_is_a_one_line_error(tmp_path, router, field, value):
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "3")
    data = json.loads(state.read_text(encoding="utf-8"))
    data["done"] = field == "last"  # the replay path shows the last cycle
    data[field] = value
    state.write_text(json.dumps(data), encoding="utf-8")
    before = state.read_bytes()
    assert_one_line_error(run_cli("--root", router, "--state", state), f"field '{field}")
    assert state.read_bytes() == before


def test_state_of_another_root_is_an_error_and_left_untouched(tmp_path, router):
    other = make_tree(tmp_path / "other", ROUTER_TREE)
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route")
    before = state.read_bytes()
    assert_one_line_error(run_cli("--root", other, "--state", state, "--keywords", "route"), "belongs to a loop over")
    assert state.read_bytes() == before
    # --reset hands the state file to the new root.
    assert run_json("--root", other, "--state", state, "--keywords", "route", "--reset")["cycle"] == 1


def test_same_root_through_a_symlink_is_the_same_loop(tmp_path, router):
    link = tmp_path / "link"
    os.symlink(router, link)
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "3")
    assert run_json("--root", link, "--state", state)["cycle"] == 2


# --- the state file ---------------------------------------------------------------------

def test_state_file_is_versioned_json_matching_the_output(tmp_path, router):
    state = tmp_path / "s.json"
    out = run_json("--root", router, "--state", state, "--keywords", "route")
    data = json.loads(state.read_text(encoding="utf-8"))
    assert data["format"] == "agentic-search-state"
    assert data["version"] == 2
    assert data["cycle"] == out["cycle"] and data["done"] == out["done"]
    assert temp_files(tmp_path) == []


def test_state_outside_root_leaves_the_tree_untouched(tmp_path, router):
    before = tree_snapshot(router)
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "throttle", "--max-cycles", "3")
    for _ in range(3):
        assert run_cli("--root", router, "--state", state).returncode == 0
    assert tree_snapshot(router) == before


@pytest.mark.parametrize("state_name", ["loop-state.json", ".state.json", "app/state.txt"])
def test_a_state_inside_the_root_is_refused_and_nothing_is_written(tmp_path, router, state_name):
    before = tree_snapshot(router)
    proc = run_cli("--root", router, "--state", router / state_name, "--keywords", "throttle")
    assert_one_line_error(proc, "inside the tree it searches")
    assert tree_snapshot(router) == before  # no state, no lock, no directory


def test_a_state_linked_into_the_root_is_never_a_result_nor_judged(tmp_path, router):
    # A hard link brings the state, kept outside, into the tree: a state of two names is
    # refused whole (a save would replace one name and leave the other behind), and is
    # never read as a file of the tree; once the link goes, the loop goes on.
    state = tmp_path / "s.json"
    outs = [run_json("--root", router, "--state", state, "--keywords", "throttle", "route", "format",
                     "--max-cycles", "3", "--patterns", "**")]
    link = router / "loop-state.json"
    for _ in range(2):  # (each cycle saves a new state file: the link is made again)
        os.link(state, link)
        before = state.read_bytes()
        assert_one_line_error(run_cli("--state", state, "--judge", "loop-state.json=0.9"), "has 2 names")
        assert_one_line_error(run_cli("--state", state), "has 2 names")
        assert state.read_bytes() == before
        link.unlink()
        proc = run_cli("--state", state)
        assert proc.returncode == 0, proc.stderr
        outs.append(json.loads(proc.stdout))
    for out in outs[1:]:
        assert "loop-state.json" not in all_ids(out)
        assert out["stats"]["files_read"] == len(ROUTER_TREE)


def test_a_lock_linked_to_a_file_of_the_tree_is_refused_and_the_file_kept(tmp_path, router):
    # A lock that is another name of a tree file hid that file from the walk as the
    # tool's own (a tester's): a lock of two names is refused, as a state of two names is.
    target = router / "app" / "router.py"
    before = target.read_bytes()
    os.link(target, tmp_path / "s.json.lock")
    assert_one_line_error(run_cli("--root", router, "--state", tmp_path / "s.json", "--keywords", "route"),
                          "lock has 2 names")
    assert target.read_bytes() == before and (tmp_path / "s.json.lock").exists()
    (tmp_path / "s.json.lock").unlink()
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--keywords", "route")
    assert out["stats"]["files_read"] == len(ROUTER_TREE)


def test_a_state_moved_into_the_root_is_refused_and_kept(tmp_path, router):
    outside = tmp_path / "s.json"
    run_json("--root", router, "--state", outside, "--keywords", "route", "--max-cycles", "3")
    moved = router / "s.json"
    os.replace(outside, moved)
    kept = moved.read_bytes()
    assert_one_line_error(run_cli("--state", moved), "inside the tree it searches")
    assert moved.read_bytes() == kept  # nothing lost, and no lock made beside it
    assert not (router / "s.json.lock").exists()  # moved back out, it goes on
    os.replace(moved, outside)
    assert run_cli("--state", outside).returncode == 0


def test_crash_while_saving_keeps_the_previous_state_and_no_temp_file(tmp_path, router, monkeypatch, capsys):
    import retrieve_loop
    from agentic_search_skill import state as state_mod

    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "3")
    before = state.read_bytes()

    def disk_full(src, dst, **dir_fds):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(state_mod.os, "replace", disk_full)
    code = retrieve_loop.main(["--root", str(router), "--state", str(state)])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    assert captured.err == f"{PREFIX}--state {state}: cannot write: No space left on device\n"
    assert state.read_bytes() == before
    assert temp_files(tmp_path) == []


@pytest.mark.parametrize("where", ["index", "output", "directory sync"])
def test_an_interrupt_after_the_state_is_saved_says_so_and_show_prints_the_answer(tmp_path, router, monkeypatch,
                                                                                    capsys, where):
    # Ctrl-C after the new state was in place: exit 130 with no word, the cycle counted,
    # and the caller believed the state was as it was.
    import retrieve_loop
    from agentic_search_skill import cli as cli_mod
    from agentic_search_skill import state as state_mod

    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "3")

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    if where == "index":
        from agentic_search_skill import index as index_mod
        monkeypatch.setattr(index_mod.Index, "save", interrupt)
    elif where == "output":
        monkeypatch.setattr(cli_mod, "to_output", interrupt)
    else:
        real_write = state_mod.atomic_write

        def write_then_interrupt(*args, **kwargs):
            real_write(*args, **kwargs)
            raise KeyboardInterrupt

        monkeypatch.setattr(state_mod, "atomic_write", write_then_interrupt)
    args = ["--state", str(state), "--index-dir", str(tmp_path / "idx")] if where == "index" else \
        ["--state", str(state), "--no-cache"]
    code = retrieve_loop.main(args)
    captured = capsys.readouterr()
    assert code == 130 and captured.out == ""
    assert captured.err == "retrieve_loop.py: interrupted after the state was saved: the call's cycle or " \
                           "judgements stand; --show prints the answer\n"
    monkeypatch.undo()
    shown = run_json("--state", state, "--show")
    assert shown["cycle"] == 2


def test_running_out_of_memory_is_one_line_not_a_traceback(tmp_path, router):
    script = Path(__file__).resolve().parent.parent / "scripts" / "retrieve_loop.py"
    code = (f"import sys, runpy\nsys.path.insert(0, {str(script.parent)!r})\n"
            "from agentic_search_skill import cli\n"
            "def boom(*a, **k):\n    raise MemoryError\n"
            "cli.run = boom\n"
            f"sys.argv = ['retrieve_loop.py', '--root', {str(router)!r}, '--state', {str(tmp_path / 's.json')!r}, "
            "'--keywords', 'route', '--no-cache']\n"
            f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == "retrieve_loop.py: error: out of memory (a memory limit such as ulimit -v is too low " \
                          "for this tree)\n"


@pytest.mark.skipif(os.name == "nt", reason="SIGTERM is POSIX's")
def test_sigterm_while_the_state_is_written_leaves_it_as_it_was_and_no_temporary_file(tmp_path, router):
    # A supervisor's SIGTERM (timeout(1)) during the write left the temporary file beside
    # the state for good: no handler ran the write's clean-up.
    import signal
    import time

    state = tmp_path / "st" / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "9")
    before = state.read_bytes()
    script = Path(__file__).resolve().parent.parent / "scripts" / "retrieve_loop.py"
    code = (f"import sys, time, runpy\nsys.path.insert(0, {str(script.parent)!r})\n"
            "from agentic_search_skill import state as st\n"
            "real = st.os.replace\n"
            "def slow(*a, **k):\n    time.sleep(30)\n    return real(*a, **k)\n"
            "st.os.replace = slow\n"
            f"sys.argv = ['retrieve_loop.py', '--state', {str(state)!r}, '--no-cache']\n"
            f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not temp_files(tmp_path / "st") and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert temp_files(tmp_path / "st"), "the write never started"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143 and out == "" and "Traceback" not in err
    assert state.read_bytes() == before and temp_files(tmp_path / "st") == []


def test_an_interrupt_before_the_state_is_saved_leaves_it_as_it_was(tmp_path, router, monkeypatch, capsys):
    import retrieve_loop
    from agentic_search_skill import cli as cli_mod

    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "3")
    before = state.read_bytes()

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_mod, "run_cycle", interrupt)
    assert retrieve_loop.main(["--state", str(state), "--no-cache"]) == 130
    captured = capsys.readouterr()
    assert state.read_bytes() == before and captured.out == "" and captured.err == ""
    # A finished loop's answer shown again saves nothing: an interrupt while it is printed
    # says nothing of a save either.
    for _ in range(3):
        run_cli("--state", state, "--no-cache")
    before = state.read_bytes()
    monkeypatch.setattr(retrieve_loop, "_write", interrupt)
    assert retrieve_loop.main(["--state", str(state), "--no-cache"]) == 130
    captured = capsys.readouterr()
    assert state.read_bytes() == before and captured.out == "" and "saved" not in captured.err


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="symlinks need a POSIX file system")
def test_a_state_folder_swapped_for_a_link_into_the_tree_mid_cycle_gets_nothing_written(tmp_path, router,
                                                                                         monkeypatch, capsys):
    # An adversary swaps the state's folder for a link into the tree while a cycle runs:
    # the state was written into the tree (the check had run before the cycle).
    import retrieve_loop
    from agentic_search_skill import cli as cli_mod

    folder = tmp_path / "st" / "x"
    state = folder / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "3")
    real_cycle = cli_mod.run_cycle

    def cycle_then_swap(*args, **kwargs):
        out = real_cycle(*args, **kwargs)
        os.rename(str(folder), str(tmp_path / "st" / "x.old"))
        os.symlink(str(router / "app"), str(folder))
        return out

    monkeypatch.setattr(cli_mod, "run_cycle", cycle_then_swap)
    before = sorted(str(p.relative_to(router)) for p in router.rglob("*"))
    code = retrieve_loop.main(["--state", str(state)])
    captured = capsys.readouterr()
    assert code == 1 and captured.out == ""
    assert captured.err.startswith(f"{PREFIX}--state {state}: its folder is now inside the tree it searches")
    assert len(captured.err.splitlines()) == 1
    assert sorted(str(p.relative_to(router)) for p in router.rglob("*")) == before


@pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="symlinks need a POSIX file system")
@pytest.mark.parametrize("held", [True, False], ids=["a tree file of the lock's name", "an empty tree folder"])
def test_the_clean_up_of_a_refused_first_call_removes_nothing_of_the_tree(tmp_path, router, monkeypatch, capsys,
                                                                          held):
    # A first call makes the state's folders and lock; refused at the save (its folder
    # swapped for a link into the tree), its clean-up removed by path: the tree's own
    # file of the lock's name, and an empty folder of the tree where it had made one.
    import retrieve_loop
    from agentic_search_skill import cli as cli_mod

    (router / "app" / "sub").mkdir()
    if held:
        (router / "app" / "sub" / "s.json.lock").write_text("the tree's own file\n")
    made = tmp_path / "new"
    state = made / "sub" / "s.json"
    real_cycle = cli_mod.run_cycle

    def cycle_then_swap(*args, **kwargs):
        out = real_cycle(*args, **kwargs)
        os.rename(str(made), str(tmp_path / "new.old"))
        os.symlink(str(router / "app"), str(made))
        return out

    monkeypatch.setattr(cli_mod, "run_cycle", cycle_then_swap)
    before = sorted(str(p.relative_to(router)) for p in router.rglob("*"))
    code = retrieve_loop.main(["--root", str(router), "--state", str(state), "--keywords", "route"])
    assert code == 1 and "inside the tree it searches" in capsys.readouterr().err
    assert sorted(str(p.relative_to(router)) for p in router.rglob("*")) == before
    assert (router / "app" / "sub").is_dir()


# --- the loop ---------------------------------------------------------------------------

def test_calls_with_only_root_and_state_run_the_proposed_query_until_done(tmp_path, router):
    state = tmp_path / "s.json"
    outs = [run_json("--root", router, "--state", state, "--keywords", "route", "--full")]
    while not outs[-1]["done"] and len(outs) < 5:
        outs.append(run_json("--root", router, "--state", state, "--full"))
    assert [o["cycle"] for o in outs] == list(range(1, len(outs) + 1))
    assert 2 <= len(outs) <= 3
    assert [o["done"] for o in outs] == [False] * (len(outs) - 1) + [True]
    assert [o["stop_reason"] for o in outs[:-1]] == [None] * (len(outs) - 1)
    assert isinstance(outs[-1]["stop_reason"], str) and outs[-1]["stop_reason"]
    for prev, cur in zip(outs, outs[1:]):
        for key in ("patterns", "keywords", "excludes"):
            assert cur["query"][key] == prev["next_query"][key]
    # The loop learned the codebase's own term and ended holding the throttle file.
    assert "throttle" in outs[-1]["query"]["keywords"]
    assert "lib/throttle.py" in {r["id"] for r in outs[-1]["ranking"]}


def test_calling_after_done_replays_the_final_answer_verbatim(tmp_path, router):
    state = tmp_path / "s.json"
    proc = run_cli("--root", router, "--state", state, "--keywords", "route")
    while not json.loads(proc.stdout)["done"]:
        proc = run_cli("--root", router, "--state", state)
        assert proc.returncode == 0
    final = proc.stdout
    saved = state.read_bytes()
    for _ in range(2):
        again = run_cli("--root", router, "--state", state)
        assert again.returncode == 0
        assert "Traceback" not in again.stderr and again.stderr.count("\n") == 1  # a note, not an error
        assert again.stdout == final  # same keys in the same order
    assert state.read_bytes() == saved


def test_a_finished_answer_replayed_leaves_out_files_deleted_since(tmp_path, router):
    state = tmp_path / "s.json"
    proc = run_cli("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "1")
    final = json.loads(proc.stdout)
    assert final["done"] and final["ranking"]
    first = final["ranking"][0]["id"]
    (router / first).unlink()
    again = run_cli("--root", router, "--state", state)
    assert again.returncode == 0 and again.stderr.count("\n") == 1
    assert "is gone" in again.stderr
    out = json.loads(again.stdout)
    assert first not in all_ids(out)
    assert first not in final["why"] or out["why"].endswith(f"since then {first} is gone")
    assert [r["id"] for r in out["ranking"]] == [r["id"] for r in final["ranking"] if r["id"] != first]
    # the confidence was the gone file's: the file leading now is shown with its own score
    assert abs(out["confidence"] - (out["ranking"][0]["score"] if out["ranking"] else 0.0)) < 1e-3


def test_show_full_after_a_deletion_names_the_gone_file_nowhere(tmp_path):
    # --show --full: no result's related files, no hint (computed again) names it.
    tree = tmp_path / "t"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "auth.py").write_text("import pkg.token\ndef check_token_expiry(token):\n"
                                          "    return token.expiry < now()\n")
    (tree / "pkg" / "token.py").write_text("class Token:\n    def __init__(self, expiry):\n"
                                           "        self.expiry = expiry\n")
    state = tmp_path / "s.json"
    run_json("--root", tree, "--state", state, "--task", "fix the auth token expiry bug", "--no-cache")
    before = run_json("--state", state, "--show", "--full")
    assert "pkg/auth.py" in json.dumps(before["results"]) and "pkg/auth.py" in json.dumps(before["hints"])
    (tree / "pkg" / "auth.py").unlink()
    after = run_json("--state", state, "--show", "--full")
    assert "pkg/auth.py" not in json.dumps(after["results"]) + json.dumps(after["hints"])
    assert after["hints"]["result_count"] == len(after["results"])


def test_show_after_a_related_file_that_matched_nothing_is_deleted_names_it_nowhere(tmp_path):
    # A related file that matched no keyword has no score of its own: it is checked too.
    tree = tmp_path / "t"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "session.py").write_text(
        "from helpers import frobnicate\nclass SessionStore:\n    def refresh_token(self, token):\n"
        "        raise TokenExpiredError('token expired')\n        return frobnicate(token)\n")
    (tree / "src" / "helpers.py").write_text("def frobnicate(x):\n    return x\n")
    state = tmp_path / "s.json"
    run_json("--root", tree, "--state", state, "--task", "TokenExpiredError raised by refresh_token in SessionStore",
             "--no-cache")
    before = run_json("--state", state, "--show", "--full")
    assert "src/helpers.py" in json.dumps(before["results"])
    (tree / "src" / "helpers.py").unlink()
    after = run_json("--state", state, "--show", "--full")
    assert "src/helpers.py" not in json.dumps(after["results"]) + json.dumps(after["hints"])


def test_max_cycles_1_is_done_after_the_first_cycle(tmp_path, router):
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--keywords", "route", "--max-cycles", "1")
    assert (out["cycle"], out["max_cycles"], out["done"]) == (1, 1, True)
    assert out["stop_reason"]


def test_reset_discards_the_previous_loop(tmp_path, router):
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "3")
    out = run_json("--root", router, "--state", state, "--keywords", "hello", "--reset")
    assert out["cycle"] == 1
    assert out["query"]["keywords"] == ["hello"]
    assert [r["id"] for r in out["ranking"]] == ["app/views.py"]


# --- --judge ----------------------------------------------------------------------------

def _score_of(out: dict, rel: str) -> float | None:
    return next((r["score"] for r in out["ranking"] if r["id"] == rel), None)


@pytest.mark.parametrize("spelling", ["lib/throttle.py", "./lib/throttle.py", "lib/../lib/throttle.py", "ABSOLUTE"])
def test_judge_replaces_the_heuristic_score_and_enters_context(tmp_path, router, spelling):
    path = str(router / "lib/throttle.py") if spelling == "ABSOLUTE" else spelling
    state = tmp_path / "s.json"
    first = run_json("--root", router, "--state", state, "--keywords", "route", "throttle", "--max-cycles", "3")
    assert _score_of(first, "lib/throttle.py") < 0.7
    out = run_json("--root", router, "--state", state, "--judge", f"{path}=0.95", "--full")
    assert _score_of(out, "lib/throttle.py") == 0.95
    assert "lib/throttle.py" in [c["id"] for c in out["context"]]
    ctx = next(c for c in out["context"] if c["id"] == "lib/throttle.py")
    assert "judged" in ctx["reason"]
    # results are the files still to read: the judged file stands in ranking and context,
    # marked as judged there
    assert "lib/throttle.py" not in [r["id"] for r in out["results"]]
    assert out["results"]
    assert [r["id"] for r in out["ranking"] if r.get("judged")] == ["lib/throttle.py"]
    text = run_cli("--root", router, "--state", state, "--show", "--text").stdout
    assert any(line.strip().endswith("lib/throttle.py  (judged)") for line in text.splitlines()), text


def test_judge_zero_drops_a_file_out_of_context_and_the_judgement_persists(tmp_path, router):
    state = tmp_path / "s.json"
    first = run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "3")
    assert "app/router.py" in [c["id"] for c in first["context"]]
    out = run_json("--root", router, "--state", state, "--judge", "app/router.py=0")
    assert _score_of(out, "app/router.py") == 0.0
    assert "app/router.py" not in [c["id"] for c in out["context"]]
    assert [r["id"] for r in out["ranking"]][-1] == "app/router.py"


def test_judge_on_the_first_call(tmp_path, router):
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--keywords", "route",
                   "--judge", "app/views.py=0.8")
    assert _score_of(out, "app/views.py") == 0.8
    ids = [c["id"] for c in out["context"]]
    assert ids[0] == "app/router.py" and "app/views.py" in ids


# --- output shape -----------------------------------------------------------------------

def test_output_has_the_documented_shape(tmp_path, router):
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--keywords", "route", "throttle")
    assert list(out) == list(TOP_KEYS)
    assert isinstance(out["cycle"], int) and out["max_cycles"] == 3 and isinstance(out["done"], bool)
    assert out["next_action"] in ("synthesize", "refine", "expand", "broaden") and out["why"]
    assert 0.0 <= out["confidence"] <= 1.0
    assert list(out["query"]) == ["keywords", "patterns", "excludes"]
    assert out["query"]["keywords"] == ["route", "throttle"]
    assert list(out["next_query"]) == ["adds", "drops", "focus"]
    assert out["results"]
    for r in out["results"]:
        assert list(r) == list(RESULT_KEYS)
        assert 0.0 <= r["score"] <= 1.0 and r["reason"] and isinstance(r["lines"], list)
    ranking = [(r["id"], r["score"]) for r in out["ranking"]]
    assert ranking == sorted(ranking, key=lambda t: (-t[1], t[0]))
    assert out["context"] == [{"id": i, "score": s} for i, s in ranking if s >= 0.7]


def test_the_files_the_next_cycle_sets_aside_are_named_in_full_only(tmp_path):
    # The seed's first example: cycle 1 goes on (refine), and the readme, far below the
    # best file, is set aside for the next cycle. That is the loop's bookkeeping: marked
    # in the default output it read as "the tool drops this file" (a trial's agent saw
    # the fix's file marked so); --full names it.
    from test_seed_auth_fresh import TASK, TREE
    tree = make_tree(tmp_path / "repo", TREE)
    out = run_json("--root", tree, "--task", TASK, "--state", tmp_path / "a.json")
    full = run_json("--root", tree, "--task", TASK, "--state", tmp_path / "b.json", "--full")
    assert not out["done"] and full["next_query"]["set_aside"] == ["README.md"]
    assert full["next_query"]["excludes"] == []  # the caller's, apart from the loop's
    assert "excludes" not in out["next_query"] and "excluded" not in json.dumps(out["ranking"])
    assert [r for r in full["ranking"] if "excluded" in r] == []


def test_full_output_adds_every_field_of_the_result_contract(tmp_path, router):
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--keywords", "route", "throttle", "--full")
    assert list(out)[:len(TOP_KEYS) - 1] == list(TOP_KEYS[:-1]) and "hints" in out
    assert set(out["next_query"]) >= {"patterns", "keywords", "excludes", "set_aside", "focus", "adds", "drops"}
    assert "next_action" in out["hints"]
    for r in out["results"]:
        assert set(r) >= set(FULL_RESULT_KEYS)
        assert isinstance(r["summary"], str) and isinstance(r["tags"], list)
    for c in out["context"]:
        assert c["score"] >= 0.7 and c["reason"]
    # The router imports the throttle: each names the other as related.
    by_id = {r["id"]: r for r in out["results"]}
    assert by_id["app/router.py"]["related"] == ["lib/throttle.py"]
    assert by_id["lib/throttle.py"]["related"] == ["app/router.py"]
    assert set(out["stats"]) >= {"files_considered", "files_read", "files_matched", "binary_skipped",
                                 "unreadable_skipped", "walk_skipped"}


def test_ids_are_posix_paths_relative_to_the_root(tmp_path):
    root = make_tree(tmp_path / "repo", {"a/b/c/deep_widget.py": "widget = 1\n", "top_widget.py": "widget\n"})
    out = run_json("--root", root, "--state", tmp_path / "s.json", "--keywords", "widget")
    assert sorted(all_ids(out)) == ["a/b/c/deep_widget.py", "top_widget.py"]


@pytest.mark.parametrize("limit", [1, 2])
def test_limit_bounds_results_ranking_and_context(tmp_path, limit):
    root = make_tree(tmp_path / "repo", {f"widget_{i}.py": "widget = 1\n" * (i + 1) for i in range(5)})
    out = run_json("--root", root, "--state", tmp_path / "s.json", "--keywords", "widget", "--limit", str(limit))
    assert len(out["ranking"]) == limit
    assert len(out["results"]) <= limit and len(out["context"]) <= limit


def test_two_fresh_runs_give_identical_stdout(tmp_path, router):
    a = run_cli("--root", router, "--state", tmp_path / "a.json", "--keywords", "route", "throttle")
    b = run_cli("--root", router, "--state", tmp_path / "b.json", "--keywords", "route", "throttle")
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout


def test_text_prints_a_report_not_json(tmp_path, router):
    proc = run_cli("--root", router, "--state", tmp_path / "s.json", "--keywords", "route", "--text")
    assert proc.returncode == 0 and proc.stderr == ""
    with pytest.raises(json.JSONDecodeError):
        json.loads(proc.stdout)
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("cycle 1/3")
    assert "ranking:" in lines and any(line.startswith("context (read these):") for line in lines)
    assert any("app/router.py" in line for line in lines)


def test_gaps_list_the_tasks_names_first_then_its_title_words_and_count_the_rest(tmp_path, router):
    task = ("Route gets mangled by quokka\n\nCalling `frobnicateRoute` after "
            "zephyr xylograph wombat yodel vexillum umbra tundra sorrel quagmire happens.")
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--task", task)
    assert out["gaps"][0] == "frobnicateRoute"  # a name, then the title's words
    assert set(out["gaps"][1:]) == {"mangled", "quokka"}
    # the body's plain words no file holds are prose (two trials' agents read
    # `practically`, `incredible` there as noise): counted, listed with --full
    assert out["gaps_left_out"] >= 10
    full = run_json("--root", router, "--state", tmp_path / "f.json", "--task", task, "--full")
    assert "gaps_left_out" not in full and len(full["gaps"]) == 3 + out["gaps_left_out"]
    assert {"zephyr", "wombat", "sorrel"} <= set(full["gaps"][3:])
    # --text counts them too (an adversarial check: its line said nothing of them)
    text = run_cli("--root", router, "--state", tmp_path / "t.json", "--task", task, "--text").stdout
    assert f"no file matches: frobnicateRoute, " in text and f"(+{out['gaps_left_out']} more, --full)" in text
    body_only = run_cli("--root", router, "--state", tmp_path / "b.json", "--text", "--task",
                        "Route\n\nzephyr xylograph wombat route").stdout
    assert "no file matches: 3 plain words of the task (--full)" in body_only


# --- files the walk cannot use ----------------------------------------------------------

@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads chmod 000 files")
def test_unreadable_file_is_skipped_and_counted(tmp_path, router):
    secret = router / "lib/secret_route.py"
    secret.write_text("route = 1\n")
    secret.chmod(0)
    try:
        out = run_json("--root", router, "--state", tmp_path / "s.json", "--keywords", "route", "--full")
    finally:
        secret.chmod(0o644)
    assert out["stats"]["unreadable_skipped"] == 1
    assert "lib/secret_route.py" not in all_ids(out)


def test_unreadable_file_is_skipped_and_counted_in_process(tmp_path, router, monkeypatch, capsys):
    """The same as above, by injecting the read error (works when the tests run as root)."""
    import retrieve_loop
    from agentic_search_skill import engine

    (router / "lib/secret_route.py").write_text("route = 1\n")
    real_read = engine.read_document

    def read(rel, path, **kw):
        if rel == "lib/secret_route.py":
            raise PermissionError(13, "Permission denied", path)
        return real_read(rel, path, **kw)

    monkeypatch.setattr(engine, "read_document", read)
    code = retrieve_loop.main(["--root", str(router), "--state", str(tmp_path / "s.json"), "--keywords", "route",
                               "--full"])
    captured = capsys.readouterr()
    assert code == 0 and captured.err == ""
    out = json.loads(captured.out)
    assert out["stats"]["unreadable_skipped"] == 1
    assert "lib/secret_route.py" not in all_ids(out)


def test_default_skipped_unreadable_counts_folders_and_files_together(tmp_path, router, monkeypatch, capsys):
    """The default output's one ``unreadable`` count is every entry the tool could not use: a
    folder the walk could not list and two files the read could not open are three."""
    import retrieve_loop
    from agentic_search_skill import engine, walk

    (router / "lib/secret_route.py").write_text("route = 1\n")
    (router / "lib/other_route.py").write_text("route = 2\n")
    (router / "locked").mkdir()
    (router / "locked/route.py").write_text("route = 3\n")
    real_read, real_scan = engine.read_document, walk._scan

    def read(rel, path, **kw):
        if rel in ("lib/secret_route.py", "lib/other_route.py"):
            raise PermissionError(13, "Permission denied", path)
        return real_read(rel, path, **kw)

    def scan(d, *args):
        if d[1] == "locked":
            args[-1].skip("unreadable", d[1], "cannot list directory: Permission denied")
            return []
        return real_scan(d, *args)

    monkeypatch.setattr(engine, "read_document", read)
    monkeypatch.setattr(walk, "_scan", scan)
    code = retrieve_loop.main(["--root", str(router), "--state", str(tmp_path / "s.json"), "--keywords", "route"])
    captured = capsys.readouterr()
    assert code == 0
    assert json.loads(captured.out)["stats"]["skipped"]["unreadable"] == 3


def test_binary_file_is_skipped_and_counted(tmp_path, router):
    (router / "lib/route.bin").write_bytes(b"route\x00\x01\x02route")
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--keywords", "route", "--full")
    assert out["stats"]["binary_skipped"] == 1
    assert "lib/route.bin" not in all_ids(out)


def test_latin1_file_is_decoded_with_replacement_and_still_matches(tmp_path, router):
    (router / "lib/legacy.py").write_bytes(b"# caf\xe9 throttle for legacy clients\nx = 1\n")
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--keywords", "throttle", "--full")
    legacy = next(r for r in out["results"] if r["id"] == "lib/legacy.py")
    assert legacy["summary"] == "L1: # caf\ufffd throttle for legacy clients"
    assert out["stats"]["unreadable_skipped"] == 0 and out["stats"]["binary_skipped"] == 0


# --- keywords are literal text ----------------------------------------------------------

LITERAL_TREE = {
    "lit.py": 'pattern = "a.*b"\n',
    "other.py": "axxb = 1\n",
    "paren.py": "call(x)\n",
    "plain.txt": "nothing here\n",
}

LITERAL = [
    ("a.*b", ["lit.py"]),
    ("(", ["paren.py"]),
    ("[a-z]", []),
    ("a|b", []),
    ("\\d", []),
    ("*", ["lit.py"]),
    (")|(", []),
]


@pytest.mark.parametrize("keyword, expected", LITERAL, ids=[k for k, _ in LITERAL])
def test_keywords_match_literally_never_as_regex(tmp_path, keyword, expected):
    root = make_tree(tmp_path / "repo", LITERAL_TREE)
    out = run_json("--root", root, "--state", tmp_path / "s.json", "--keywords", keyword)
    assert out["query"]["keywords"] == [keyword]
    assert [r["id"] for r in out["results"]] == expected


# --- a closed stdout --------------------------------------------------------------------

def test_stdout_closed_before_writing_is_quiet(tmp_path, router):
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, str(SCRIPT), "--root", str(router), "--state", str(tmp_path / "s.json"),
             "--keywords", "route"],
            stdout=write_end, stderr=subprocess.PIPE, timeout=120,
        )
    finally:
        os.close(write_end)
    assert proc.returncode == 0
    assert proc.stderr == b""


def test_stdout_piped_to_head_is_quiet(tmp_path):
    # Enough output that the pipe closes while the script is still writing.
    root = make_tree(tmp_path / "repo", {f"pkg{i}/widget_{i}.py": "widget = 1\n" * 50 for i in range(200)})
    err = tmp_path / "err.txt"
    cmd = (f"'{sys.executable}' '{SCRIPT}' --root '{root}' --state '{tmp_path / 's.json'}' "
           f"--keywords widget --limit 200 2>'{err}' | head -c 10")
    proc = subprocess.run(["sh", "-c", cmd], capture_output=True, timeout=120)
    assert proc.stdout == b'{\n  "cycle'
    text = err.read_text()
    assert "Traceback" not in text and "Exception ignored" not in text
    assert text == ""


def test_later_cycles_need_only_the_state_file(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "throttle.py").write_text("def throttle(limit):\n    return limit\n")
    (root / "src" / "app.py").write_text("from src.throttle import throttle\nthrottle(3)\n")
    state = tmp_path / "s.json"
    first = subprocess.run([sys.executable, SCRIPT, "--root", str(root), "--state", str(state),
                            "--keywords", "throttle", "--max-cycles", "3"], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, SCRIPT, "--state", str(state)], capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    out = json.loads(second.stdout)
    assert out["cycle"] == 2 or json.loads(first.stdout)["done"]


def test_first_call_without_root_is_a_usage_error(tmp_path):
    proc = subprocess.run([sys.executable, SCRIPT, "--state", str(tmp_path / "s.json"), "--task", "x y"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "--root" in proc.stderr


def test_max_file_kb_lets_large_files_in_and_is_kept_for_later_calls(tmp_path):
    big = "def throttle_requests():\n    pass\n" + "# filler line of text\n" * 100_000  # ~2.2 MB
    root = make_tree(tmp_path / "repo", {"big.py": big, "app/rate.py": "RATE = 1\n"})
    state = tmp_path / "s.json"
    out = run_json("--root", root, "--state", state, "--keywords", "throttle_requests", "--full")
    assert out["ranking"] == [] and out["stats"]["walk_skipped"] == {"too_large": 1}
    out = run_json("--root", root, "--state", state, "--reset", "--keywords", "throttle_requests", "rate",
                   "--max-file-kb", "4096", "--max-cycles", "3", "--full")
    assert "big.py" in [r["id"] for r in out["ranking"]]
    # A later call without the flag keeps the limit the loop was started with.
    out = run_json("--state", state, "--keywords", "throttle", "--full")
    assert "big.py" in [r["id"] for r in out["ranking"]]
    assert "too_large" not in out["stats"]["walk_skipped"]


def test_main_in_process_leaves_the_garbage_collector_as_it_found_it(tmp_path, router, capsys):
    import gc

    import retrieve_loop

    assert gc.isenabled()
    assert retrieve_loop.main(["--root", str(router), "--state", str(tmp_path / "s.json"), "--keywords", "route"]) == 0
    assert gc.isenabled()
    assert retrieve_loop.main(["--state", str(tmp_path / "missing" / "s.json")]) == 2  # the error path too
    assert gc.isenabled()
    capsys.readouterr()


def test_a_huge_file_is_searched_whole_but_quoted_from_its_first_mib(tmp_path):
    from agentic_search_skill.match import QUOTE_BYTES

    filler = "# filler line of text\n" * (QUOTE_BYTES // 22 + 1000)
    big = "def alpha_handler():\n    pass\n" + filler + "beta_marker = 1\n"
    root = make_tree(tmp_path / "repo", {"big.py": big, "small.py": "x = 1\n"})
    out = run_json("--root", root, "--state", tmp_path / "s.json", "--keywords", "alpha_handler", "beta_marker",
                   "--max-file-kb", "4096", "--full")
    result = next(r for r in out["results"] if r["id"] == "big.py")
    assert set(result["matched"]) == {"alpha_handler", "beta_marker"}  # counted past the first MiB
    assert "alpha_handler" in result["summary"]
    assert "beta_marker" not in result["summary"]                     # quoted from the first MiB only


def _done_before_its_limit(tmp_path, router) -> tuple[Path, dict]:
    """A loop that stopped at ``done`` with cycles left (done after cycle 1 of 3)."""
    state = tmp_path / "s.json"
    out = run_json("--root", router, "--state", state, "--keywords", "route", "throttle", "--max-cycles", "1")
    assert out["done"] and out["cycle"] == 1
    data = json.loads(state.read_text())
    data["max_cycles"] = 3  # as if it had stopped on its own after cycle 1 of 3
    state.write_text(json.dumps(data))
    return state, out


def test_new_judgements_on_a_finished_loop_with_cycles_left_run_a_feedback_cycle(tmp_path, router):
    state, first = _done_before_its_limit(tmp_path, router)
    top = first["ranking"][0]["id"]
    out = run_json("--state", state, "--judge", f"{top}=0")
    assert out["cycle"] == 2 and _score_of(out, top) == 0.0
    assert out["ranking"][0]["id"] != top  # the answer it contradicted no longer leads


def test_judgements_it_already_holds_only_re_sort_a_finished_loop(tmp_path, router):
    state, first = _done_before_its_limit(tmp_path, router)
    top = first["ranking"][0]["id"]
    out = run_json("--state", state, "--judge", f"{top}=0.9")
    assert out["cycle"] == 2
    while not out["done"]:
        out = run_json("--state", state)
    before = out["cycle"]
    out = run_json("--state", state, "--judge", f"{top}=0.9")
    assert out["cycle"] == before and _score_of(out, top) == 0.9


# --- faults: no traceback, no lost update ---------------------------------------------

def test_judge_on_a_finished_loop_checks_the_path_like_any_call(tmp_path, router):
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "1")
    before = state.read_bytes()
    for bad, needle in (("app/nothere.py=0.5", "no such file"), ("../../../etc/passwd=1", "outside the root"),
                        ("app=0.5", "is a directory")):
        assert_one_line_error(run_cli("--state", state, "--judge", bad), needle)
    assert state.read_bytes() == before
    out = run_json("--state", state, "--judge", "app/views.py=0.9")
    assert _score_of(out, "app/views.py") == 0.9 and out["cycle"] == 1


def test_task_file_from_a_closed_stdin_is_a_clean_error(tmp_path, router):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(router), "--state", str(tmp_path / "s.json"),
                           "--task-file", "-"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    # An empty stdin is an empty task: the call has nothing to search, and says where.
    assert_one_line_error(proc, "--task-file -: standard input holds no text")
    (tmp_path / "blank.txt").write_text("  \n")
    assert_one_line_error(run_cli("--root", router, "--state", tmp_path / "s.json", "--task-file",
                                  tmp_path / "blank.txt"), "the file holds no text")
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--task-file", tmp_path / "blank.txt",
                   "--keywords", "route")
    assert out["cycle"] == 1  # keywords are a query of their own


def test_another_loops_lock_named_as_the_state_is_refused_not_taken_over(tmp_path, router):
    assert run_cli("--root", router, "--state", tmp_path / "a.json", "--task", "route").returncode == 0
    lock = tmp_path / "a.json.lock"
    lock.write_bytes(b"")  # (as a running cycle holds it)
    proc = run_cli("--root", router, "--state", lock, "--task", "route")
    assert proc.returncode == 2 and "name of a lock" in proc.stderr and proc.stderr.count("\n") == 1
    assert lock.read_bytes() == b""


@pytest.mark.parametrize("state", ["", "-"])
def test_a_state_named_nothing_or_a_dash_is_refused_not_written(tmp_path, router, state):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(router), "--state", state, "--task", "route"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "not a file name" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "-").exists()


def test_a_binary_task_file_is_refused_in_one_line_and_a_coloured_log_is_not(tmp_path, router):
    import random
    blob = tmp_path / "task.bin"
    blob.write_bytes(bytes(random.Random(7).randrange(256) for _ in range(4096)))
    proc = run_cli("--root", router, "--state", tmp_path / "s.json", "--task-file", blob)
    assert_one_line_error(proc, "looks binary")
    assert not (tmp_path / "s.json").exists()
    log = tmp_path / "log.txt"
    log.write_text("Route fails\n\n" + "\x1b[31mERROR\x1b[0m: route not found for the client\n" * 20)
    assert run_json("--root", router, "--state", tmp_path / "t.json", "--task-file", log)["cycle"] == 1


@pytest.mark.parametrize("state", ["tasks/", "tasks/.", "tasks/.."])
def test_a_state_spelled_as_a_folder_is_refused_not_written_as_a_file(tmp_path, router, state):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(router), "--state", state, "--task", "route"],
                          cwd=cwd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "names a folder" in proc.stderr and proc.stderr.count("\n") == 1
    assert list(cwd.iterdir()) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_stdout_to_dev_full_is_one_line_and_the_state_is_saved(tmp_path, router):
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(router), "--state", str(tmp_path / "s.json"),
                               "--keywords", "route"], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1
    assert "cannot write the output" in proc.stderr
    assert (tmp_path / "s.json").is_file()


@pytest.mark.parametrize("stderr", ["closed", "/dev/full"])
def test_an_unwritable_stderr_never_changes_the_answer_or_the_exit_code(tmp_path, router, stderr):
    # The notice of a finished loop (any stderr line) on a closed or full stderr: the call
    # still answers on stdout, exits 0 and saves its state, as with a working stderr.
    if stderr == "/dev/full" and not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "1")
    want = run_cli("--state", state)
    assert want.returncode == 0 and "the loop is done" in want.stderr
    args = [sys.executable, str(SCRIPT), "--state", str(state)]
    if stderr == "closed":
        proc = subprocess.run(args, stdout=subprocess.PIPE, text=True, timeout=60,
                              preexec_fn=lambda: os.close(2))
    else:
        with open(stderr, "w") as err:
            proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=err, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (0, want.stdout)
    # A first cycle whose stderr fails still saves its state.
    with open(os.devnull if stderr == "closed" else stderr, "w") as err:
        first = subprocess.run([sys.executable, str(SCRIPT), "--root", str(router), "--state", str(tmp_path / "t.json"),
                                "--keywords", "route"], stdout=subprocess.PIPE, stderr=err, text=True, timeout=60)
    assert first.returncode == 0 and json.loads(first.stdout)["cycle"] == 1 and (tmp_path / "t.json").is_file()


def test_ctrl_c_exits_130_quietly_and_keeps_the_state(tmp_path, router):
    import signal
    import time

    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "3")
    before = state.read_bytes()
    big = make_tree(tmp_path / "big", {f"d{i}/f{j}.py": "route = 1\n" * 50 for i in range(40) for j in range(50)})
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "--root", str(big), "--state", str(tmp_path / "b.json"),
                             "--keywords", "route"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Interrupt once the cycle has begun (its lock exists), not while Python itself starts.
    deadline = time.monotonic() + 60
    while not (tmp_path / "b.json.lock").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 130)  # 0 when the cycle finished before the signal landed
    assert b"Traceback" not in err
    assert state.read_bytes() == before


def test_concurrent_cycles_on_one_state_lose_no_update(tmp_path, router):
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "9")
    procs = [subprocess.Popen([sys.executable, str(SCRIPT), "--state", str(state), "--judge", f"{rel}=0.{n + 1}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for n, rel in enumerate(["app/views.py", "app/router.py", "lib/throttle.py"])]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    data = json.loads(state.read_text())
    assert data["judgements"] == {"app/views.py": 0.1, "app/router.py": 0.2, "lib/throttle.py": 0.3}


@pytest.mark.parametrize("args", [
    ["--state", "tasks/s.json", "--keywords", "x"],                          # no --root, no state yet
    ["--state", "tasks/s.json", "--reset", "--keywords", "x"],               # --reset needs --root too
    ["--root", "no-such-dir", "--state", "tasks/s.json", "--keywords", "x"],  # a root that is not there
], ids=["missing root", "reset without root", "no such root"])
def test_a_call_refused_for_its_arguments_leaves_nothing_behind(tmp_path, args):
    # Not the state's folder, not its lock file: nothing in the directory it was run from.
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr
    assert os.listdir(tmp_path) == []


def test_a_file_judged_earlier_shows_again_in_results_when_new_keywords_bring_it_up(tmp_path, router):
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "throttle", "--max-cycles", "3")
    judged = run_json("--root", router, "--state", state, "--judge", "lib/throttle.py=0.95")
    assert "lib/throttle.py" not in [r["id"] for r in judged["results"]]  # just read
    later = run_json("--root", router, "--state", state, "--keywords", "Throttle", "--max-cycles", "4")
    shown = {r["id"]: r for r in later["results"]}
    assert "lib/throttle.py" in shown and shown["lib/throttle.py"]["lines"]


def test_reset_never_replaces_a_file_that_is_not_a_state(tmp_path, router):
    # --state named by mistake (a source file, a note): --reset refuses it, untouched,
    # and no lock file is left beside it.
    note = tmp_path / "notes.py"
    note.write_text("def keep_me():\n    return 1\n")
    proc = run_cli("--root", router, "--state", note, "--reset", "--keywords", "route")
    assert_one_line_error(proc, "is not an agentic-search state file")
    assert "--reset" not in proc.stderr.split("(")[0]  # it does not advise the flag that would destroy it
    assert note.read_text() == "def keep_me():\n    return 1\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("notes")) == ["notes.py"]
    # A file that merely quotes the format's name (the tool's own source, a note about
    # it) is no state either, whatever the first call advised.
    for text in ('FORMAT_NAME = "agentic-search-state"\n', 'x = 1\n{"format": "agentic-search-state"}\n'):
        note.write_text(text)
        proc = run_cli("--root", router, "--state", note, "--reset", "--keywords", "route")
        assert_one_line_error(proc, "is not an agentic-search state file")
        assert note.read_text() == text
    # A state of the tool's own, even a corrupt one or one a tool re-saved with its keys
    # sorted, is what --reset is for.
    state = tmp_path / "sorted.json"
    run_json("--root", router, "--state", state, "--keywords", "route")
    state.write_text(json.dumps(dict(sorted(json.loads(state.read_text()).items()))))
    assert run_json("--root", router, "--state", state, "--reset", "--keywords", "route")["cycle"] == 1
    state = tmp_path / "s.json"
    state.write_bytes(b'{"format":"agentic-search-state","version":2,"ro')
    assert run_json("--root", router, "--state", state, "--reset", "--keywords", "route")["cycle"] == 1



def test_a_skill_kept_inside_the_tree_it_searches_writes_no_bytecode_there(tmp_path):
    # A project that vendors the skill (.claude/skills/agentic-search) and searches
    # itself: the modules' compiled bytecode goes to the user's cache, not the tree.
    import shutil
    tree = tmp_path / "proj\u00e9"
    skill = tree / ".claude" / "skills" / "agentic-search" / "scripts"
    shutil.copytree(SCRIPT.parent, skill, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "app.py").write_text("def route():\n    return 1\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    proc = subprocess.run([sys.executable, str(skill / "retrieve_loop.py"), "--root", str(tree),
                           "--state", str(tmp_path / "s.json"), "--keywords", "route"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert not list(tree.rglob("__pycache__"))
    assert list((tmp_path / "cache" / "agentic-search" / "pycache").rglob("*.pyc"))
    # A cache inside the tree (--root ~): no bytecode is written at all, on the first
    # call (--root) or a later one (the root read from the state).
    env["XDG_CACHE_HOME"] = str(tree / ".cache")
    for args in (["--root", str(tree), "--keywords", "route"], []):
        proc = subprocess.run([sys.executable, str(skill / "retrieve_loop.py"), "--state",
                               str(tmp_path / "s2.json"), *args], capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
        assert not list(tree.rglob("*.pyc"))
    # ... nor when the state names its root after a long task (its keys re-saved sorted):
    # the whole state is read for it.
    state = tmp_path / "s3.json"
    proc = subprocess.run([sys.executable, str(skill / "retrieve_loop.py"), "--state", str(state), "--root",
                           str(tree), "--task", "route " + "x" * 70_000, "--no-cache"],
                          capture_output=True, text=True, timeout=120, env={**env, "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stderr
    data = json.loads(state.read_text())
    state.write_text(json.dumps(dict(sorted(data.items(), key=lambda kv: kv[0] in ("root", "root_real")))))
    for extra in (["--show"], []):
        proc = subprocess.run([sys.executable, str(skill / "retrieve_loop.py"), "--state", str(state), *extra],
                              capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
        assert not list(tree.rglob("*.pyc"))
    # ... nor when it names a root twice (the cycle reads the last), or one past a byte
    # that is no ASCII (a state re-saved as UTF-8, as jq does)
    text = state.read_text()
    for edited in ('{"root": "/elsewhere", ' + text[1:], '{"\\u0072oot": "/elsewhere", ' + text[1:],
                   text.replace("\\u00e9", "\u00e9")):
        state.write_text(edited, encoding="utf-8")
        proc = subprocess.run([sys.executable, str(skill / "retrieve_loop.py"), "--state", str(state), "--show"],
                              capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
        assert not list(tree.rglob("*.pyc"))


def test_a_shared_cache_folder_gets_no_bytecode_and_none_is_read_from_it(tmp_path):
    # $XDG_CACHE_HOME pointing at a folder others may write (not /tmp's sticky kind):
    # a .pyc planted there would run, so the cache is not used at all.
    import shutil
    skill = tmp_path / "skill" / "scripts"
    shutil.copytree(SCRIPT.parent, skill, ignore=shutil.ignore_patterns("__pycache__"))
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "app.py").write_text("def route():\n    return 1\n")
    shared = tmp_path / "shared"
    (shared / "agentic-search" / "pycache").mkdir(parents=True)
    os.chmod(shared / "agentic-search" / "pycache", 0o777)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    env["XDG_CACHE_HOME"] = str(shared)
    env["AGENTIC_SEARCH_INDEX_DIR"] = str(tmp_path / "idx")
    proc = subprocess.run([sys.executable, str(skill / "retrieve_loop.py"), "--root", str(tree),
                           "--state", str(tmp_path / "s.json"), "--keywords", "route"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert not list(shared.rglob("*.pyc")) and not list(skill.rglob("*.pyc"))


def test_a_root_through_a_links_parent_is_the_parent_the_system_reads(tmp_path):
    # ``--root LINK/..`` is the parent of LINK's target, as for ls and grep: a file
    # beside LINK is outside that tree and is never read.
    (tmp_path / "proj" / "sub").mkdir(parents=True)
    (tmp_path / "proj" / "sub" / "a.py").write_text("def proj_marker():\n    pass\n")
    (tmp_path / "private.py").write_text("KEY = 'proj_marker'\n")
    os.symlink("proj/sub", str(tmp_path / "L"))
    proc = run_cli("--root", f"{tmp_path}/L/..", "--state", tmp_path / "s.json", "--keywords", "proj_marker",
                   "--no-cache")
    assert proc.returncode == 0, proc.stderr
    assert [r["id"] for r in json.loads(proc.stdout)["ranking"]] == ["sub/a.py"]


def test_a_limit_given_once_holds_for_the_loops_later_rounds(tmp_path):
    # (a trial agent's round 1 took --limit 10, its plain round 2 printed 20 files)
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(12):
        (tree / f"m{i}.py").write_text(f"def parse_token_{i}():\n    return 'token parse'\n")
    state = tmp_path / "s.json"
    assert len(run_json("--root", tree, "--state", state, "--task", "parse token fails", "--limit", "3",
                        "--max-cycles", "5")["ranking"]) == 3
    assert len(run_json("--state", state, "--keywords", "token")["ranking"]) == 3
    assert len(run_json("--state", state, "--show", "--limit", "5")["ranking"]) == 5  # (this call only)
    assert len(run_json("--state", state, "--show")["ranking"]) == 3
    assert len(run_json("--state", state, "--keywords", "parse", "--limit", "4")["ranking"]) == 4
    assert len(run_json("--state", state, "--show")["ranking"]) == 4


def test_the_stop_on_the_callers_judgement_names_every_file_judged_at_the_top(tmp_path):
    # (trial 82: two files judged 1.0, and `why` named one of them)
    tree = write_tree(tmp_path / "tree", {"src/core/index.ts": "export function search(limit) { return heap(limit) }\n",
                                          "src/tools/MaxHeap.ts": "export class MaxHeap { limit = 3 }\n",
                                          "src/tools/config.ts": "export const limit = 3\n",
                                          "src/worker.ts": "const search = 1\n"})
    state = tmp_path / "s.json"
    run_json("--root", tree, "--state", state, "--task", "search with a limit drops results", "--max-cycles", "5")
    out = run_json("--state", state, "--judge", "src/core/index.ts=1.0", "src/tools/MaxHeap.ts=0.9",
                   "src/worker.ts=0.2")
    assert out["why"].startswith("you judged src/core/index.ts 1; src/tools/MaxHeap.ts 0.9: ")
    assert "read them and the context" in out["why"] and "worker" not in out["why"].split(":")[0]
    # ... at most three of them, then how many more (an adversarial check's 200 judged
    # files made a 23,000-character why)
    out = run_json("--state", state, "--judge", "src/tools/config.ts=1.0", "src/worker.ts=0.8")
    assert "(+1 more): the loop stops" in out["why"] and len(out["why"]) < 400


def test_a_judged_files_ending_names_the_one_ranked_file_that_ends_so(tmp_path):
    # (a trial agent judged ``event.rs=0.2`` for ``alacritty/src/event.rs``: refused)
    tree = tmp_path / "tree"
    for rel, text in {"a/src/event.py": "def event_loop():\n    pass\n",
                      "b/src/event.py": "def event_loop2():\n    pass\n",
                      "a/src/run.py": "def runner():\n    event_loop()\n"}.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    state = tmp_path / "s.json"
    run_json("--root", tree, "--state", state, "--task", "event_loop hangs", "--max-cycles", "5")
    out = run_json("--state", state, "--judge", "src/run.py=1.0")
    assert out["why"].startswith("you judged a/src/run.py 1")
    # the stop and its confidence are the caller's word, and say so (four trials' agents read
    # a confidence of 1.0 as the tool's claim about the files named next)
    assert "stops on your judgement (the confidence is yours)" in out["why"] and out["confidence"] == 1.0
    assert "a/src/run.py" in run_json("--state", state, "--judge", "src//run.py=1.0")["why"]
    proc = run_cli("--state", state, "--judge", "event.py=0")
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert "2 ranked files end so (a/src/event.py, b/src/event.py)" in proc.stderr
    proc = run_cli("--state", state, "--judge", "nothere.py=0")
    assert proc.returncode == 1 and "nothere.py: no such file under the root" in proc.stderr


def test_a_parent_of_what_is_no_directory_is_refused_as_the_system_refuses_it(tmp_path):
    # ``missing/..`` and ``file/..`` lead nowhere for ls and grep: not to the folder they sit in.
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "a.py").write_text("def proj_marker():\n    pass\n")
    for bad in ("missing", "a.py"):
        proc = run_cli("--root", f"{tmp_path}/proj/{bad}/..", "--state", tmp_path / "s.json",
                       "--keywords", "proj_marker", "--no-cache")
        assert proc.returncode == 1 and not proc.stdout
        assert proc.stderr.count("\n") == 1 and f"the '..' after {tmp_path}/proj/{bad} leads nowhere" in proc.stderr
    assert not (tmp_path / "s.json").exists()


def test_an_index_directory_through_a_missing_folders_parent_says_so_once_and_the_default_is_used(tmp_path):
    tree = write_tree(tmp_path / "tree", {"a.py": "def parse_widget():\n    pass\n"})
    env = dict(os.environ, AGENTIC_SEARCH_INDEX_DIR=f"{tmp_path}/missing/..", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(tree), "--state", str(tmp_path / "s.json"),
                           "--keywords", "parse_widget"], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0 and json.loads(proc.stdout)["ranking"][0]["id"] == "a.py"
    assert proc.stderr.count("\n") == 1 and f"the '..' after {tmp_path}/missing leads nowhere" in proc.stderr
    assert (tmp_path / "xdg" / "agentic-search").is_dir() and not list(tmp_path.glob("*.json.idx*"))


def test_a_task_of_one_giant_word_leaves_a_state_the_next_call_reads(tmp_path):
    # A word of 200,000 letters is no keyword: stored in every result, it made a state
    # of 72 MB that every later call refused.
    tree = tmp_path / "tree"
    tree.mkdir()
    for i in range(40):
        (tree / f"m{i}.py").write_text("def parse_token():\n    return 1\n")
    task = tmp_path / "task.txt"
    task.write_text("parse_token fails: " + "AlphaBetaGamma" * 20000 + "\n")
    state = tmp_path / "s.json"
    for _ in range(2):
        proc = run_cli("--root", tree, "--state", state, "--task-file", task, "--max-cycles", "5")
        assert proc.returncode == 0, proc.stderr
        assert len(proc.stdout) < 20000
    assert state.stat().st_size < 1_000_000
    assert run_cli("--state", state, "--show").returncode == 0


def test_a_state_larger_than_any_state_file_is_not_written_and_the_old_one_stays(tmp_path, monkeypatch):
    from agentic_search_skill import state as state_mod
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("def route():\n    return 1\n")
    path = tmp_path / "s.json"
    assert run_cli("--root", tree, "--state", path, "--keywords", "route").returncode == 0
    before = path.read_bytes()
    loaded = state_mod.load_state(str(path))
    monkeypatch.setattr(state_mod, "MAX_STATE_BYTES", len(before) - 1)
    with pytest.raises(state_mod.StateError, match="larger than any state file"):
        state_mod.save_state(str(path), loaded)
    assert path.read_bytes() == before


def test_the_tools_indexes_inside_the_tree_searched_are_never_results(tmp_path):
    """A cache directory under the root (searching a home whose cache is not hidden):
    the indexes kept there for other trees are the tool's own files, not the tree's."""
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    (home / "proj" / "tokens.py").write_text("def token_expiry():\n    return 1\n")
    env = dict(os.environ, XDG_CACHE_HOME=str(home / "cache"))
    env.pop("AGENTIC_SEARCH_INDEX_DIR", None)
    kept = home / "cache" / "agentic-search" / "0123456789abcdef01234567"
    kept.mkdir(parents=True)  # another tree's index, as text the keywords would match
    (kept / "facts.idx").write_text("token_expiry facts seg\n")
    (kept / "manifest.json").write_text('{"segments": ["seg-token_expiry.idx"]}\n')

    def cycle(root: Path, state: str, *extra: str) -> dict:
        proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(root), "--state", str(tmp_path / state),
                               "--keywords", "token_expiry", "facts", "seg", *extra],
                              capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    cycle(home / "proj", "a.json")
    out = cycle(home, "b.json")
    assert {r["id"] for r in out["ranking"]} == {"proj/tokens.py"}
    assert "agentic-search" not in json.dumps(out)


def test_a_long_run_of_word_characters_in_the_task_costs_its_length_not_its_square(tmp_path, router):
    # A 200,000-character word (a base64 blob, a CJK paragraph without spaces) once took
    # minutes in one regular expression; a quadratic cost would blow the timeout here.
    task = tmp_path / "task.txt"
    task.write_text("x" * 100_000 + " " + "認" * 100_000, encoding="utf-8")
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--task-file", task, "--keywords", "route")
    assert out["cycle"] == 1


def test_keywords_that_are_not_utf8_are_searched_like_a_task_files_text(tmp_path, router):
    # argv bytes that are not UTF-8 reach Python as surrogate escapes: U+FFFD, no traceback.
    proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(router), "--state", str(tmp_path / "s.json"),
                           b"--keywords", b"\xff\xfe", b"route"], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["query"]["keywords"][0] == "\ufffd\ufffd" and out["results"]


def test_a_keyword_written_as_a_file_holds_it_matches_whatever_case_folding_makes_of_it(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("# straße σας İstanbul ﬁle\n", encoding="utf-8")
    for kw in ("straße", "σας", "İstanbul", "ﬁle"):
        out = run_json("--root", root, "--state", tmp_path / "s.json", "--reset", "--keywords", kw, "--no-cache")
        assert [r["id"] for r in out["results"]] == ["a.py"] and out["gaps"] == [], kw


def test_a_closed_standard_output_is_an_error_before_anything_runs(tmp_path, router):
    state = tmp_path / "s.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(router), "--state", str(state),
                           "--keywords", "route"], stderr=subprocess.PIPE, text=True, timeout=120,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 1 and "standard output is closed" in proc.stderr
    assert "Traceback" not in proc.stderr and not state.exists()


@pytest.mark.parametrize("exclude", ["lib", "lib/", "./lib"])
def test_an_exclude_naming_a_directory_leaves_the_directory_out(tmp_path, router, exclude):
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--keywords", "throttle", "--exclude", exclude)
    assert "lib/throttle.py" not in all_ids(out) and "app/router.py" in all_ids(out)


@pytest.mark.parametrize("flag, value", [("--exclude", "/etc/passwd"), ("--exclude", "./"), ("--exclude", ""),
                                         ("--patterns", ""), ("--patterns", "/"), ("--exclude", "../x")])
def test_a_path_flag_that_names_nothing_in_the_tree_is_a_usage_error(tmp_path, router, flag, value):
    proc = run_cli("--root", router, "--state", tmp_path / "s.json", "--keywords", "throttle", flag, value)
    assert_one_line_error(proc, flag, code=2)


def test_a_doubled_slash_in_a_pattern_selects_what_a_single_one_does(tmp_path, router):
    ids = [all_ids(run_json("--root", router, "--state", tmp_path / f"s{i}.json", "--keywords", "throttle",
                            "--patterns", p)) for i, p in enumerate(("app/*.py", "app//*.py", "./app/*.py"))]
    assert ids[0] == ids[1] == ids[2] and "app/router.py" in ids[0]


def test_a_judgement_of_a_link_that_leads_out_of_the_tree_goes(tmp_path, router):
    """Edited in by hand or made so by a change to the tree, a judged file that leads out
    of the tree loses its judgement, as a deleted one does; nothing outside is read or
    named, and the loop and its other judgements go on."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("route = 'secret'\n")
    (router / "app" / "out.py").symlink_to(outside / "secret.py")
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "5")
    run_json("--state", state, "--judge", "app/router.py=0.9")
    data = json.loads(state.read_text())
    data["judgements"]["app/out.py"] = 1.0
    state.write_text(json.dumps(data))
    out = run_json("--state", state, "--keywords", "route")
    assert "app/out.py" not in all_ids(out) and "secret" not in json.dumps(out)
    data = json.loads(state.read_text())
    assert "app/out.py" not in data["judgements"] and data["judgements"]["app/router.py"] == 0.9
    # The tree changes under a judgement: the judged file's directory becomes a link out.
    run_json("--state", state, "--judge", "lib/throttle.py=0.8")
    shutil.copy(router / "lib" / "throttle.py", outside / "throttle.py")
    shutil.rmtree(router / "lib")
    (router / "lib").symlink_to(outside, target_is_directory=True)
    out = run_json("--state", state, "--keywords", "route")
    assert not any(i.startswith("lib/") for i in all_ids(out))
    assert "lib/throttle.py" not in json.loads(state.read_text())["judgements"]


def test_a_pattern_naming_a_directory_selects_the_files_below_it(tmp_path, router):
    for i, pattern in enumerate(("lib", "lib/", "lib/**")):
        out = run_json("--root", router, "--state", tmp_path / f"s{i}.json", "--keywords", "throttle",
                       "--patterns", pattern)
        assert [r["id"] for r in out["results"]] == ["lib/throttle.py"], pattern


def test_patterns_that_select_no_file_claim_no_gap(tmp_path, router):
    out = run_json("--root", router, "--state", tmp_path / "s.json", "--keywords", "throttle",
                   "--patterns", "docs/*.md")
    assert out["gaps"] == [] and out["done"] and "select no file" in out["why"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_the_state_of_a_later_call_is_refused_without_waiting(tmp_path):
    # A call without --root takes the tree from the state: a FIFO there is never opened
    # for a blocking read (before the state's own checks, nothing may wait on it).
    fifo = tmp_path / "s.json"
    os.mkfifo(fifo)
    proc = run_cli("--state", fifo)  # run_cli's timeout fails the test if it hangs
    assert_one_line_error(proc, "not a regular file")


def test_a_scored_file_that_is_no_longer_a_file_to_read_leaves_the_ranking(tmp_path):
    """A file scored in an earlier cycle that became a FIFO, a directory or a link leading
    out of the tree, or grew past the size limit, is not what its entry says any more:
    it leaves the ranking and the context (an agent told to read a FIFO would hang)."""
    tree = tmp_path / "tree"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "a.py").write_text("def plum_tree():\n    pass\n")
    for name in "bcde":
        (tree / "src" / f"{name}.py").write_text("plum_tree()\n")
    (tree / "src" / "kept.py").write_text("plum_tree()\n")
    outside = tmp_path / "outside.py"
    outside.write_text("plum_tree()\n")
    state = tmp_path / "s.json"
    first = run_json("--root", tree, "--state", state, "--keywords", "plum_tree", "--max-cycles", "10",
                     "--max-file-kb", "1")
    assert {f"src/{n}.py" for n in "bcde"} <= {r["id"] for r in first["ranking"]}
    (tree / "src" / "b.py").unlink()
    os.mkfifo(tree / "src" / "b.py")
    (tree / "src" / "c.py").unlink()
    (tree / "src" / "c.py").mkdir()
    (tree / "src" / "d.py").unlink()
    (tree / "src" / "d.py").symlink_to(outside)
    (tree / "src" / "e.py").write_text("x = 1\n" * 400)  # 2.4 KB, over --max-file-kb 1
    out = run_json("--state", state, "--keywords", "plum_tree", "--exclude", "src/kept.py")
    ids = all_ids(out)
    assert not ids & {f"src/{n}.py" for n in "bcde"}, ids
    # excluded, still a file: remembered by the loop, left out of what it shows
    assert "src/kept.py" in json.loads(state.read_text())["scores"] and "src/kept.py" not in ids
    assert "src/a.py" in ids


def test_judging_a_file_again_on_a_finished_loop_says_the_judgement_once(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.py").write_text("def kiwi_fruit():\n    pass\n")
    (tree / "b.py").write_text("kiwi_fruit()\n")
    (tree / "c.py").write_text("kiwi_fruit()  # kiwi\n")
    state = tmp_path / "s.json"
    run_json("--root", tree, "--state", state, "--keywords", "kiwi_fruit", "--max-cycles", "1")
    for score in ("0.5", "0.5", "0.6"):
        run_json("--state", state, "--judge", f"b.py={score}")
    out = run_json("--state", state, "--judge", "a.py=0.9", "--full")
    reason = next(r["reason"] for r in out["results"] if r["id"] == "b.py")
    assert reason == "judged 0.6 by the caller; kiwi_fruit x1"
    saved = json.loads(state.read_text())["last"]["results"]
    assert all(r["reason"].count("by the caller") <= 1 for r in saved)


def test_a_judgement_of_minus_zero_is_a_judgement_of_zero(tmp_path, router):
    outs = []
    for i, score in enumerate(("0", "-0", "-0.0")):
        state = tmp_path / f"s{i}.json"
        run_json("--root", router, "--state", state, "--keywords", "throttle")
        outs.append((run_cli("--state", state, "--judge", f"app/router.py={score}").stdout,
                     json.loads(state.read_text())["judgements"]))
    assert outs[0] == outs[1] == outs[2] and "-0" not in outs[1][0]


# --- what a second look at the edges found (aliases, a repointed root, odd paths) -------------

needs_links = pytest.mark.skipif(not hasattr(os, "symlink") or os.name == "nt", reason="needs symlinks")


@needs_links
def test_a_file_reached_through_a_link_is_one_file_with_one_score(tmp_path):
    root = make_tree(tmp_path / "t", {"src/auth/session.py": "def refresh_session(user):\n    return user\n",
                                      "src/auth/token.py": "def session_token(user):\n    return user\n"})
    os.symlink("src/auth", str(root / "authdir"))
    os.symlink("src/auth/token.py", str(root / "tok_alias.py"))
    os.symlink(".", str(root / "loop"))
    state = tmp_path / "s.json"
    out = run_json("--root", root, "--state", state, "--task", "refresh session token user", "--no-cache")
    assert {r["id"] for r in out["ranking"]} == {"src/auth/session.py", "src/auth/token.py"}
    # judged through an alias, the file is judged under its own path
    out = run_json("--state", state, "--no-cache", "--judge", "authdir/session.py=1", "loop/src/auth/token.py=0")
    assert [(r["id"], r["score"]) for r in out["ranking"]] == [("src/auth/session.py", 1.0),
                                                                ("src/auth/token.py", 0.0)]


def loop_through_a_root_link(tmp_path, other: dict, *flags: str) -> tuple:
    """A cycle on a tree reached through a root link, and another tree beside it:
    (the link, the other tree, the state)."""
    tree = make_tree(tmp_path / "tree", {"auth.py": "def token_expiry():\n    return 1\n"})
    outside = make_tree(tmp_path / "outside", other)
    link = tmp_path / "rootlink"
    os.symlink(str(tree), str(link))
    state = tmp_path / "s.json"
    run_json("--root", link, "--state", state, "--task", "token expiry", "--no-cache", *flags)
    return link, outside, state


@needs_links
def test_a_root_link_repointed_between_cycles_is_refused_not_searched(tmp_path):
    link, outside, state = loop_through_a_root_link(tmp_path, {"secret.py": "zqxmarker = 1\n"}, "--max-cycles", "5")
    before = state.read_bytes()
    link.unlink()
    os.symlink(str(outside), str(link))
    for extra in ([], ["--root", str(link)]):
        proc = run_cli("--state", state, "--keywords", "zqxmarker", "--no-cache", *extra)
        assert_one_line_error(proc, "not to the tree this loop searched")
        assert "zqxmarker" not in proc.stdout
    assert state.read_bytes() == before


@needs_links
def test_show_refuses_an_answer_about_a_tree_that_is_gone_or_another_now(tmp_path):
    link, other, state = loop_through_a_root_link(tmp_path, {"auth.py": "unrelated = 1\n"})
    assert run_json("--state", state, "--show")["ranking"][0]["id"] == "auth.py"
    link.unlink()
    os.symlink(str(other), str(link))  # the link now leads to another tree
    assert_one_line_error(run_cli("--state", state, "--show"), "not to the tree this loop searched")
    link.unlink()  # ... or to nothing
    assert_one_line_error(run_cli("--state", state, "--show"), str(link))


@needs_links
def test_a_root_link_repointed_during_a_cycle_changes_nothing_it_reads(tmp_path, monkeypatch):
    # The root is resolved once per call: the walk, the reads and the state's root_real
    # are of one tree, whatever the link does meanwhile.
    from agentic_search_skill import cli, cycle
    from agentic_search_skill.request import Request
    tree = make_tree(tmp_path / "tree", {"auth.py": "def token_expiry():\n    return 1\n"})
    outside = make_tree(tmp_path / "outside", {"secret.py": "token_expiry = 'zqxmarker'\n"})
    link = tmp_path / "rootlink"
    os.symlink(str(tree), str(link))
    real_walk = cycle.walk

    def repointing_walk(root, *args, **kw):
        link.unlink()
        os.symlink(str(outside), str(link))
        return real_walk(root, *args, **kw)

    monkeypatch.setattr(cycle, "walk", repointing_walk)
    state = tmp_path / "s.json"
    out, _text = cli.run(Request(state_path=str(state), state_shown="s.json", root=str(link),
                                 task="token expiry", use_cache=False))
    assert [e["id"] for e in out["ranking"]] == ["auth.py"]
    assert json.loads(state.read_text())["root_real"] == os.path.realpath(str(tree))


def test_an_excluded_file_leaves_the_ranking_and_the_context(tmp_path, router):
    # A review's --exclude on a finished loop left the file first in ranking and context.
    state = tmp_path / "s.json"
    first = run_json("--root", router, "--state", state, "--keywords", "throttle", "route", "--max-cycles", "4")
    top = first["ranking"][0]["id"]
    out = run_json("--state", state, "--exclude", top, "--max-cycles", "4")
    assert top not in all_ids(out)
    # a glob covers what it names, as the walk reads it
    again = run_json("--root", router, "--state", tmp_path / "g.json", "--keywords", "throttle", "route",
                     "--max-cycles", "4")
    assert top in all_ids(again)
    out = run_json("--state", tmp_path / "g.json", "--exclude", "*" + top.rsplit("/", 1)[-1][-4:],
                   "--max-cycles", "4")
    assert top not in all_ids(out)


def test_a_glob_excluded_leader_is_not_counted_in_the_decision(tmp_path):
    # A generated bundle led cycle 1; cycle 2 excluded its folder by a glob and named the
    # code's words. The decision still counted the bundle: "2nd in the ranking, below
    # files of earlier cycles" for the file the ranking shows first.
    files = {"single/bundle.py": "".join(f"def helper_{i}(x):\n    return x  # value\n" for i in range(40)),
             "lib/numbers.py": "def parse_number(text):\n    digits = text.strip()\n    return float(digits)  # value\n"}
    files.update({f"lib/m{i}.py": f"def f{i}():\n    return 'value'\n" for i in range(6)})
    tree = make_tree(tmp_path / "repo", files)
    state = tmp_path / "s.json"
    first = run_json("--root", tree, "--state", state, "--task", "wrong value", "--max-cycles", "3")
    assert first["ranking"][0]["id"] == "single/bundle.py"
    out = run_json("--state", state, "--exclude", "single/**", "--keywords", "parse_number", "digits")
    assert "single/bundle.py" not in all_ids(out)
    assert out["ranking"][0]["id"] == "lib/numbers.py"
    assert "lib/numbers.py first" in out["why"] and "in the ranking" not in out["why"]


def test_a_bare_file_name_exclude_means_one_thing_in_results_ranking_and_the_decision(tmp_path):
    # ``--exclude tokens.py`` names the path tokens.py (none here): the cycle read and
    # offered pkg/tokens.py while the ranking and the decision dropped it as if a glob,
    # and the first file's confidence went to another file.
    tree = make_tree(tmp_path / "repo", {
        "pkg/tokens.py": "def token_expiry(token):\n    return token.issued_at + token.ttl\n",
        "lib/auth.py": "def check_auth(token):\n    return token is not None\n",
        "lib/util.py": "def helper():\n    return 1\n",
    })
    done = run_cli("--root", tree, "--state", tmp_path / "s.json", "--no-cache", "--exclude", "tokens.py",
                   "--task", "auth token expiry is wrong: token_expiry returns the wrong time")
    assert done.returncode == 0 and done.stderr == (
        "retrieve_loop.py: --exclude tokens.py: no such file in the tree, nothing excluded "
        "(**/tokens.py excludes that name at any depth)\n")
    out = json.loads(done.stdout)
    assert out["results"][0]["id"] == out["ranking"][0]["id"] == "pkg/tokens.py"
    assert "pkg/tokens.py" in out["why"]
    globbed = run_json("--root", tree, "--state", tmp_path / "g.json", "--no-cache", "--exclude", "**/tokens.py",
                       "--task", "auth token expiry is wrong: token_expiry returns the wrong time")
    assert "pkg/tokens.py" not in all_ids(globbed) and "pkg/tokens.py" not in globbed["why"]


def test_show_on_an_empty_state_file_says_no_cycle_has_run(tmp_path):
    state = tmp_path / "s.json"
    state.write_bytes(b"")
    assert_one_line_error(run_cli("--state", state, "--show"), "no cycle has run yet")
    assert state.read_bytes() == b""


@needs_links
def test_a_state_that_is_a_dangling_link_is_one_line_not_a_traceback(tmp_path, router):
    state = tmp_path / "s.json"
    os.symlink(str(tmp_path / "nowhere" / "x.json"), str(state))
    for args in ([], ["--show"], ["--root", str(router), "--keywords", "route"]):
        assert_one_line_error(run_cli("--state", state, *args), "symbolic link")
    assert not (tmp_path / "s.json.lock").exists() and not (tmp_path / "nowhere").exists()


def test_a_path_with_a_newline_is_shown_escaped_on_one_line(tmp_path, router):
    proc = run_cli("--root", router, "--state", tmp_path / "s.json", "--task-file", str(tmp_path / "no\nsuch"))
    assert_one_line_error(proc, "no\\x0asuch")


def test_a_usage_error_is_one_line_and_flags_are_never_abbreviated(tmp_path, router):
    proc = run_cli("--root", router, "--state", tmp_path / "s.json", "--task", "route", "--bogus")
    assert_one_line_error(proc, "unrecognized arguments: --bogus", code=2)
    assert proc.stderr.endswith("(see --help)\n")
    proc = run_cli("--root", router, "--stat", tmp_path / "s.json", "--task", "route")
    assert proc.returncode == 2 and not (tmp_path / "s.json").exists()


def test_a_state_edited_to_name_the_tree_it_lies_in_leaves_no_lock_there(tmp_path, router):
    state = tmp_path / "st" / "s.json"
    run_json("--root", router, "--state", state, "--task", "route throttle", "--no-cache")
    data = json.loads(state.read_text(encoding="utf-8"))
    data["root"] = str(state.parent.resolve())
    data.pop("root_real", None)
    edited = state.parent / "edited.json"
    edited.write_text(json.dumps(data), encoding="utf-8")
    before = tree_snapshot(state.parent), state.parent.stat().st_mtime_ns
    proc = run_cli("--state", edited, "--keywords", "route", "--no-cache")
    assert_one_line_error(proc, "inside the tree it searches")
    # no lock file made and removed there (the directory's own mtime would show it)
    assert (tree_snapshot(state.parent), state.parent.stat().st_mtime_ns) == before


def _tree_with_a_raw_name(tmp_path, name: bytes):
    """A tree whose one file, in ``src``, is named by these bytes (any, but ``/`` and NUL)."""
    root = tmp_path / "t"
    (root / "src").mkdir(parents=True)
    with open(os.path.join(os.fsencode(str(root / "src")), name), "w") as fh:
        fh.write("def weird_name_func():\n    pass\n")
    return root, tmp_path / "s.json"


@pytest.mark.skipif(sys.platform != "linux", reason="needs a file system that takes any bytes in a name")
def test_a_name_that_is_not_utf8_can_be_judged_by_the_id_a_json_reader_gives_back(tmp_path):
    root, state = _tree_with_a_raw_name(tmp_path, b"bad\xff\xfename.py")
    out = run_cli("--root", root, "--state", state, "--task", "weird_name_func", "--no-cache")
    assert out.returncode == 0, out.stderr
    shown = json.loads(out.stdout)["ranking"][0]["id"]
    # jq and JavaScript read the JSON escape of a lone surrogate as U+FFFD
    passed_back = "".join("\ufffd" if 0xD800 <= ord(c) < 0xE000 else c for c in shown)
    assert passed_back == "src/bad\ufffd\ufffdname.py"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--state", str(state), "--no-cache",
                           "--judge", passed_back + "=1"], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ranking = json.loads(proc.stdout)["ranking"]
    assert [(r["id"], r["score"]) for r in ranking] == [(shown, 1.0)]


@pytest.mark.skipif(sys.platform != "linux", reason="needs a file system that takes any bytes in a name")
def test_a_name_as_text_shows_it_can_be_judged_as_shown(tmp_path):
    root, state = _tree_with_a_raw_name(tmp_path, b"bad\xff\nname.py")
    out = run_cli("--root", root, "--state", state, "--task", "weird_name_func", "--no-cache", "--text")
    assert out.returncode == 0, out.stderr
    shown = "src/bad\\udcff\\x0aname.py"   # what a person copies from the report
    assert shown in out.stdout
    proc = subprocess.run([sys.executable, str(SCRIPT), "--state", str(state), "--no-cache",
                           "--judge", shown + "=1"], capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    ranking = json.loads(proc.stdout)["ranking"]
    assert [r["score"] for r in ranking] == [1.0]



def test_keywords_a_loop_at_its_cycle_limit_will_not_search_are_said_not_searched(tmp_path, router):
    state = tmp_path / "s.json"
    run_json("--root", router, "--state", state, "--keywords", "route", "--max-cycles", "1", "--no-cache")
    proc = run_cli("--state", state, "--keywords", "throttle", "--no-cache")
    assert proc.returncode == 0 and proc.stderr.count("\n") == 1
    assert "--keywords not searched; pass --max-cycles 2" in proc.stderr
    assert "throttle" not in json.loads(proc.stdout)["query"]["keywords"]
    out = run_json("--state", state, "--keywords", "throttle", "--max-cycles", "2", "--no-cache")
    assert "throttle" in out["query"]["keywords"] and out["cycle"] == 2


def test_show_prints_the_last_answer_again_and_runs_no_cycle(tmp_path, router) -> None:
    state = tmp_path / "state.json"
    proc = run_cli("--root", router, "--state", state, "--task", "where are requests throttled")
    assert proc.returncode == 0, proc.stderr
    before = state.read_bytes()
    # the same answer, byte for byte, and the state untouched: no cycle spent on looking
    assert run_cli("--state", state, "--show").stdout == proc.stdout
    text = run_cli("--state", state, "--show", "--text", "--limit", "1")
    assert text.returncode == 0 and text.stdout.startswith("cycle 1/")
    assert state.read_bytes() == before
    # a flag that would change the loop is refused, never silently ignored
    assert_one_line_error(run_cli("--state", state, "--show", "--keywords", "route"), "--show", code=2)
    assert state.read_bytes() == before
    # --show writes nothing, not even the lock: a state on a read-only disk can be shown
    os.unlink(str(state) + ".lock")
    assert run_cli("--state", state, "--show").stdout == proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["repo", "state.json"]


def test_show_without_a_state_says_to_run_a_cycle_first(tmp_path) -> None:
    proc = run_cli("--state", tmp_path / "none.json", "--show")
    assert_one_line_error(proc, "run a cycle first")
    assert not (tmp_path / "none.json").exists()


def test_a_judgement_at_the_cycle_limit_names_the_file_the_ranking_leads_with(tmp_path, router) -> None:
    state = tmp_path / "state.json"
    first = run_json("--root", router, "--state", state, "--task", "where are requests throttled per client",
                     "--max-cycles", "1")
    assert first["done"] and first["cycle"] == first["max_cycles"] == 1
    second = first["ranking"][1]["id"]
    out = run_cli("--state", state, "--judge", f"{first['ranking'][0]['id']}=0", f"{second}=0.9")
    assert out.returncode == 0, out.stderr
    after = json.loads(out.stdout)
    # the sentence, the confidence and the ranking agree on the file that leads
    assert after["ranking"][0]["id"] == second
    assert f"{second} leads (judged 0.9)" in after["why"] and after["confidence"] == 0.9


def test_a_calls_brace_globs_are_bounded_in_all_whatever_the_loop(tmp_path, router) -> None:
    # Each file is matched against every alternative: one call's globs may expand to
    # MAX_GLOB_ALTERNATIVES in all, refused as usage (exit 2) naming the flag, on a new
    # loop and a finished one alike; nothing is written.
    from agentic_search_skill.request import MAX_GLOB_ALTERNATIVES
    state = tmp_path / "s.json"
    bomb = ["**/x" + "{a,b}" * 5 + f"{k}*" for k in range(MAX_GLOB_ALTERNATIVES // 32 + 1)]
    for flag in ("--patterns", "--exclude"):
        proc = run_cli("--root", router, "--state", state, "--task", "route", flag, *bomb)
        assert proc.returncode == 2 and proc.stderr.startswith("retrieve_loop.py: error: " + flag)
        assert not state.exists()
    run_cli("--root", router, "--state", state, "--task", "route", "--max-cycles", "1")
    before = state.read_bytes()
    proc = run_cli("--state", state, "--exclude", *bomb)
    assert proc.returncode == 2 and "in all" in proc.stderr and state.read_bytes() == before
    # Plain paths are looked up, not matched against each file: any number of them.
    many = [f"lib/f{k}.py" for k in range(MAX_GLOB_ALTERNATIVES + 10)]
    assert run_cli("--state", state, "--exclude", *many, "--max-cycles", "2").returncode == 0



def test_a_replayed_answer_never_quotes_a_file_changed_since(tmp_path, router):
    # A finished loop's answer is replayed, not searched again: a result whose file was
    # edited since keeps its score but not its quoted lines, and says so.
    state = tmp_path / "s.json"
    done = run_json("--root", router, "--state", state, "--keywords", "route", "throttle", "--max-cycles", "1")
    quoted = [r for r in done["results"] if r.get("lines")]
    assert len(quoted) >= 2
    edited, kept = quoted[0]["id"], quoted[1]["id"]
    path = router / edited
    path.write_text("# rewritten\n" + path.read_text())
    for extra in ((), ("--show",)):
        proc = run_cli("--state", state, *extra)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr
        shown = {r["id"]: r for r in json.loads(proc.stdout)["results"]}
        assert shown[edited].get("lines", []) == [] and "changed since this answer" in shown[edited]["reason"]
        assert shown[kept]["lines"] == next(r for r in quoted if r["id"] == kept)["lines"]
    assert "changed since" in run_cli("--state", state).stderr


def test_a_task_saved_with_windows_line_ends_is_read_as_one_with_unix_ones(tmp_path, router):
    # a third of the dev issues end their lines in \r\n; a heading or a command on its own
    # line was not recognised before the \r
    task = ("Routes drop the trailing slash\n\n### \u23ef Playground Link\n\nnone\n\n$ router --version\n"
            "router 1.2\n\nThe router strips the slash from every route.\n")
    outs = []
    for name, text in (("unix.txt", task), ("windows.txt", task.replace("\n", "\r\n"))):
        (tmp_path / name).write_bytes(text.encode("utf-8"))
        out = run_json("--root", router, "--state", tmp_path / f"{name}.json", "--task-file", tmp_path / name)
        outs.append(out["query"]["keywords"])
    assert outs[0] == outs[1]
    assert not {"playground", "link"} & {k.lower() for k in outs[1]}


def test_the_same_command_run_again_is_a_plain_call(tmp_path):
    # A trial's agent ran its first command once more for "a plain call": the task was
    # appended to itself and the round counted as the caller's new words, and the
    # confidence rose on nothing new (0.807 -> 0.89).
    root = make_tree(tmp_path / "repo", ROUTER_TREE)
    state = tmp_path / "st.json"
    task = "Rate limiting of clients is ignored by the router setup"
    same = ("--root", root, "--state", state, "--task", task, "--no-cache")
    first = run_json(*same, "--reset")
    proc = run_cli(*same)
    assert proc.returncode == 0 and "already holds this task" in proc.stderr
    again = json.loads(proc.stdout)
    held = json.loads(state.read_text())["task"]
    plain_state = tmp_path / "plain.json"
    run_json("--root", root, "--state", plain_state, "--task", task, "--no-cache", "--reset")
    plain = run_json("--state", plain_state, "--no-cache")
    assert held == task
    assert first["cycle"] == 1 and again["cycle"] == 2
    assert {k: again[k] for k in ("confidence", "why", "ranking", "next_action")} == \
        {k: plain[k] for k in ("confidence", "why", "ranking", "next_action")}
    # with a judgement too the call is no plain one, and stderr does not say it is (a
    # trial read "this call is a plain one" as its --judge ignored)
    proc = run_cli(*same, "--judge", f"{first['ranking'][0]['id']}=1")
    assert proc.returncode == 0 and "this call's --judge is used" in proc.stderr
    assert "plain one" not in proc.stderr
    assert json.loads(proc.stdout)["ranking"][0].get("judged") is True
    # ... and of two flags, both, in a whole sentence (trials read "count" as cut short)
    from agentic_search_skill.cli import _held_task_note
    from agentic_search_skill.request import Judgement, Request
    note = _held_task_note(Request("/s.json", "s.json", keywords=("limiter",),
                                   judgements=(Judgement("a.py", 1.0),)), False)
    assert note.endswith("this call's --keywords and --judge are used")


def test_a_task_is_held_only_as_a_whole_however_spaced_or_cased():
    # An adversarial check: "log" inside "catalog" was taken for the task again and
    # dropped; the same task re-wrapped or in other case was taken for a new one.
    from agentic_search_skill.cli import _holds_task
    held = "The catalog dialog shows stale prices\nafter a reload.\nThe LRU cache evicts early"
    assert _holds_task(held, "The catalog dialog shows stale prices\nafter a reload.")
    assert _holds_task(held, "the catalog dialog shows  stale prices after\na reload.  ")
    assert _holds_task(held, "the lru cache evicts early")
    assert not _holds_task(held, "log")
    assert not _holds_task(held, "stale prices")
    assert not _holds_task(held, "The catalog dialog shows stale prices after a reload. More")
    assert not _holds_task(held, "   ")


def test_keywords_that_search_the_same_are_one_and_stderr_says_so(tmp_path):
    # (a trial gave ``ProxySelector proxySelector``: query showed one, nothing said why)
    root = make_tree(tmp_path / "repo", ROUTER_TREE)
    proc = run_cli("--root", root, "--state", tmp_path / "st.json", "--no-cache",
                   "--keywords", "RateLimit", "rateLimit", "rate_limit", "router")
    assert proc.returncode == 0
    notes = [line for line in proc.stderr.splitlines() if "one keyword" in line]
    assert len(notes) == 2 and "rateLimit searches what RateLimit does" in notes[0]
    kws = json.loads(proc.stdout)["query"]["keywords"]
    assert [k.lower() for k in kws].count("ratelimit") == 1 and "rate_limit" not in kws


def test_a_held_task_given_to_a_finished_loop_claims_nothing_for_the_other_flags(tmp_path):
    # (an adversarial check: at the cycle limit the note said "this call adds --keywords
    # only" right after "--keywords not searched")
    root = make_tree(tmp_path / "repo", ROUTER_TREE)
    state = tmp_path / "st.json"
    task = "Rate limiting of clients is ignored by the router setup"
    run_json("--root", root, "--state", state, "--task", task, "--no-cache", "--max-cycles", "1")
    proc = run_cli("--root", root, "--state", state, "--task", task, "--no-cache", "--keywords", "limiter")
    assert proc.returncode == 0 and "not searched" in proc.stderr
    assert "already holds this task" in proc.stderr and "count" not in proc.stderr and "adds" not in proc.stderr


def test_keywords_the_query_folds_to_one_are_said_to_be_one(tmp_path):
    root = make_tree(tmp_path / "repo", ROUTER_TREE)
    proc = run_cli("--root", root, "--state", tmp_path / "st.json", "--no-cache",
                   "--keywords", "straße", "strasse", "café", "cafe", "CAFÉ")
    notes = [line for line in proc.stderr.splitlines() if "one keyword" in line]
    # (straße is searched as strasse too: one search; CAFÉ is one word with café once
    # folded, not one search: the first is kept, and the note says how to search it)
    assert len(notes) == 2 and "strasse searches what straße does" in notes[0]
    assert "CAFÉ is taken as café" in notes[1] and "give CAFÉ alone" in notes[1]


def test_a_blank_keyword_is_none(tmp_path):
    # (an adversarial check: --keywords "  " steered the round as if a word were given)
    root = make_tree(tmp_path / "repo", ROUTER_TREE)
    state = tmp_path / "st.json"
    task = "Rate limiting of clients is ignored by the router setup"
    run_json("--root", root, "--state", state, "--task", task, "--no-cache")
    plain_state = tmp_path / "plain.json"
    run_json("--root", root, "--state", plain_state, "--task", task, "--no-cache")
    blank = run_json("--state", state, "--no-cache", "--keywords", "  ")
    plain = run_json("--state", plain_state, "--no-cache")
    assert {k: blank[k] for k in ("confidence", "why", "ranking")} == {k: plain[k] for k in ("confidence", "why", "ranking")}


def test_a_held_task_beside_new_words_on_a_saturated_loop_says_they_count(tmp_path):
    # (an adversarial check: a loop stopped "saturated" below its limit searches new words;
    # the note said only the judgement counted)
    root = make_tree(tmp_path / "repo", ROUTER_TREE)
    state = tmp_path / "st.json"
    task = "Rate limiting of clients is ignored by the router setup"
    out = run_json("--root", root, "--state", state, "--task", task, "--no-cache")
    while not out["done"]:
        out = run_json("--state", state, "--no-cache")
    if out["cycle"] >= out["max_cycles"]:
        pytest.skip("the loop reached its limit on this tree")
    proc = run_cli("--root", root, "--state", state, "--task", task, "--no-cache", "--keywords", "limiter")
    assert "this call's --keywords is used" in proc.stderr
    assert json.loads(proc.stdout)["cycle"] == out["cycle"] + 1


def test_a_keyword_longer_than_a_name_is_bad_input_and_blanks_count_for_nothing(tmp_path):
    # (a third check: a 300-character keyword was dropped unsaid yet steered the round; 100
    # words and a blank one were refused as 101)
    root = make_tree(tmp_path / "repo", ROUTER_TREE)
    proc = run_cli("--root", root, "--state", tmp_path / "st.json", "--no-cache", "--keywords", "x" * 300)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "300 characters" in proc.stderr
    assert not (tmp_path / "st.json").exists()
    words = [f"word{i}" for i in range(100)] + ["  "]
    assert run_cli("--root", root, "--state", tmp_path / "st2.json", "--no-cache", "--keywords", *words).returncode == 0


def test_a_finished_loop_names_the_limit_that_searches_on_and_keeps_a_raised_one(tmp_path):
    # (a third check: after --max-cycles 1 on a loop at cycle 2, "--max-cycles 2" was advised
    # and refused; a raised --max-cycles on a finished loop was not saved)
    root = make_tree(tmp_path / "repo", ROUTER_TREE)
    state = tmp_path / "st.json"
    task = "Rate limiting of clients is ignored by the router setup"
    out = run_json("--root", root, "--state", state, "--task", task, "--no-cache", "--max-cycles", "1")
    assert out["done"]
    proc = run_cli("--state", state, "--no-cache", "--keywords", "limiter")
    assert "--max-cycles 2" in proc.stderr
    run_cli("--state", state, "--no-cache", "--max-cycles", "2")
    assert json.loads(state.read_text())["max_cycles"] == 2
    again = run_json("--state", state, "--no-cache", "--keywords", "limiter")
    assert again["cycle"] == 2


def test_the_root_read_for_bytecode_is_the_cycles_or_none(tmp_path):
    # (adversarial checks: a second root, an escaped key, a root no system takes, a state
    # that is no object - the tree is the cycle's own or unknown, and nothing fails)
    sys.path.insert(0, str(SCRIPT.parent))
    import retrieve_loop

    class Args:
        root = None
        state = str(tmp_path / "s.json")

    cases = [('{"root": "/a", "root": "/b"}', "/b"), ('{"\\u0072oot": "/c"}', "/c"), ("[1, 2]", None),
             ('{"root": "/' + "." * 5000 + '"}', None), ('{"a": [' + "{}," * 100_000 + '{}]}', None)]
    for text, want in cases:
        Path(Args.state).write_text(text)
        assert retrieve_loop._root_of(Args) == want
    Path(Args.state).write_text('{"root": "/x/\\ud800"}')
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    proc = subprocess.run([sys.executable, str(SCRIPT), "--state", Args.state], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1

