"""agentic_search_skill.state: the loop's state - a record, versioned JSON, written atomically, locked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from agentic_search_skill import state as state_mod
from agentic_search_skill.query import make_keyword
from agentic_search_skill.records import Change, CycleView, Decision, ResultView, Stats
from agentic_search_skill.state import (FORMAT_NAME, FORMAT_VERSION, HistoryEntry, LoopState, Query, ScoreEntry,
                                  StateError, load_state, locked, save_state)

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def leftovers(directory: Path) -> list[str]:
    """Temporary files an interrupted write would leave."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".agentic-search-"))


def new_state(root: str = "/some/root", task: str = "task", max_cycles: int = 3) -> LoopState:
    return LoopState(root=root, task=task, max_cycles=max_cycles)


def saved(tmp_path: Path, **changes) -> Path:
    """A state file holding a fresh state with ``changes`` applied to its JSON."""
    path = tmp_path / "s.json"
    data = new_state().to_json()
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def busy_state() -> LoopState:
    """A mid-loop state with every field filled."""
    view = CycleView(
        cycle=2, max_cycles=3, patterns=("**",), keywords=("route", "throttle"), excludes=("x.py",),
        stats=Stats(10, 9, 3, 1, 0, (("hidden", 2), ("ignored", 4))),
        results=(ResultView("a.py", 0.9, "defines route", ("L1: def route():",), "a.py — route", ("route",),
                            ("b.py",), ("throttle",), ("route",)),),
        decision=Decision("refine", False, None, "searching the codebase's own terms: throttle", 0.7),
        change=Change(("throttle (learned)",), ("nothing",), ("x.py",), ("no file matches 'nothing'",)),
        gaps=("nothing", "zephyr"), related=(), hints={"next_action": "expand"}, prose_gaps=1,
    )
    return LoopState(
        root="/r", task="add a route", max_cycles=3, max_file_bytes=4096, cycle=2, done=False,
        proposal=Query(("**",), (make_keyword("route", "given"), make_keyword("throttle", "learned", 0.3),
                                 make_keyword("limiter", "synonym", 0.6, group="rate limit"),
                                 replace(make_keyword("_print_Float", "identifier", 0.5), task_defines=True),
                                 replace(make_keyword("frontal", "word", 0.3), translated=True)), ("x.py",), ("w.py",)),
        scores={"b.py": ScoreEntry(0.5, 1, "route x1"), "a.py": ScoreEntry(0.9, 2, "defines route", judged=True),
                "c.py": ScoreEntry(0.8, 2, "route x1", standing=0.85, stamp="120:1700000000123456789")},
        judgements={"a.py": 0.9}, seen_ids=("a.py", "b.py"), pending_related=("c.py",),
        history=(HistoryEntry(1, ("route",), 9, 2, 0.8),), last=view,
    )


def test_a_fresh_state_carries_format_and_version_on_disk(tmp_path):
    save_state(str(tmp_path / "s.json"), new_state("/r", "fix it"))
    data = json.loads((tmp_path / "s.json").read_text())
    assert (data["format"], data["version"]) == (FORMAT_NAME, FORMAT_VERSION)
    assert (data["root"], data["task"], data["max_cycles"], data["cycle"], data["done"]) == ("/r", "fix it", 3, 0, False)


def test_missing_state_file_loads_as_none(tmp_path):
    assert load_state(str(tmp_path / "absent.json")) is None


def test_every_field_round_trips(tmp_path):
    path = tmp_path / "s.json"
    save_state(str(path), busy_state())
    assert load_state(str(path)) == busy_state()
    assert list(load_state(str(path)).scores) == ["b.py", "a.py", "c.py"]


def test_a_state_without_the_count_of_prose_gaps_lists_every_gap(tmp_path):
    # (a state saved before the count: its gaps were all listed)
    path = tmp_path / "s.json"
    save_state(str(path), busy_state())
    data = json.loads(path.read_text())
    del data["last"]["prose_gaps"]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_state(str(path)).last.prose_gaps == 0
    data["last"]["prose_gaps"] = 5  # more than the gaps: at most all of them
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_state(str(path)).last.prose_gaps == 2


def test_names_that_are_not_utf8_survive_the_round_trip(tmp_path):
    odd = os.fsdecode(b"caf\xe9/\xff.py")  # surrogate escapes, as os.listdir gives them
    st = new_state().with_(seen_ids=(odd,), scores={odd: ScoreEntry(0.5, 1, "x")}, task="caf\u00e9 \u2014 token")
    save_state(str(tmp_path / "s.json"), st)
    (tmp_path / "s.json").read_bytes().decode("ascii")  # written ASCII-only: any reader can parse it
    assert load_state(str(tmp_path / "s.json")) == st
    assert leftovers(tmp_path) == []


def test_save_creates_the_state_directory(tmp_path):
    path = tmp_path / "a" / "b" / "s.json"
    save_state(str(path), new_state("/r"))
    assert load_state(str(path)).root == "/r"


def test_save_replaces_an_existing_file(tmp_path):
    path = tmp_path / "s.json"
    save_state(str(path), new_state().with_(cycle=1))
    save_state(str(path), load_state(str(path)).with_(cycle=2))
    assert load_state(str(path)).cycle == 2
    assert leftovers(tmp_path) == []


FAILURES = [
    ("os.replace fails", "replace", OSError(28, "No space left on device")),
    ("fsync fails", "fsync", OSError(5, "Input/output error")),
    ("interrupted before the rename", "replace", KeyboardInterrupt()),
]


@pytest.mark.parametrize("target, exc", [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
def test_a_failed_write_keeps_the_previous_state_and_removes_the_temp_file(tmp_path, monkeypatch, target, exc):
    path = tmp_path / "s.json"
    save_state(str(path), new_state().with_(cycle=1))
    before = path.read_bytes()

    def fail(*_args, **_kwargs):
        raise exc

    monkeypatch.setattr(state_mod.os, target, fail)
    with pytest.raises(type(exc)):
        save_state(str(path), load_state(str(path)).with_(cycle=2))
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_a_failed_first_write_creates_no_state_file(tmp_path, monkeypatch):
    def fail(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(state_mod.os, "replace", fail)
    with pytest.raises(OSError):
        save_state(str(tmp_path / "s.json"), new_state("/r"))
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_process_killed_mid_write_leaves_the_previous_state_loadable(tmp_path):
    path = tmp_path / "s.json"
    save_state(str(path), new_state().with_(cycle=1))
    before = path.read_bytes()
    # The child dies (no cleanup, no finally) between writing the temp file and the rename.
    code = (
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(SCRIPTS)!r})\n"
        "from agentic_search_skill import state\n"
        "os.replace = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
        f"s = state.load_state({str(path)!r}).with_(cycle=2)\n"
        f"state.save_state({str(path)!r}, s)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert path.read_bytes() == before
    assert load_state(str(path)).cycle == 1
    # What a kill leaves behind is a hidden temp file: the walk skips hidden entries.
    assert all(name.startswith(".") and name.endswith(".tmp") for name in leftovers(tmp_path))


CORRUPT = [
    ("invalid json", b"{bad", "corrupt"),
    ("truncated json", b'{"format": "agentic-search-state", "vers', "corrupt"),
    ("not utf-8", b"\xff\xfe\x00{", "corrupt"),
    ("json array", b"[]", "not an agentic-search state file"),
    ("json null", b"null", "not an agentic-search state file"),
    ("another format", b'{"format": "something-else", "version": 1}', "not an agentic-search state file"),
    ("unknown version", b'{"format": "agentic-search-state", "version": 99}', "version 99 is not supported"),
    ("the format before records", b'{"format": "agentic-search-state", "version": 1}', "version 1 is not supported"),
    ("nested too deep", b"[" * 100000, "corrupt"),
    ("NaN", b'{"format": "agentic-search-state", "version": 2, "cycle": NaN}', "corrupt"),
    ("Infinity", b'{"format": "agentic-search-state", "version": 2, "cycle": Infinity}', "corrupt"),
    ("missing version", b'{"format": "agentic-search-state"}', "version None is not supported"),
]


@pytest.mark.parametrize("content, needle", [c[1:] for c in CORRUPT], ids=[c[0] for c in CORRUPT])
def test_corrupt_or_foreign_file_raises_state_error_and_is_left_untouched(tmp_path, content, needle):
    path = tmp_path / "s.json"
    path.write_bytes(content)
    with pytest.raises(StateError) as err:
        load_state(str(path))
    message = str(err.value)
    assert needle in message
    assert message.startswith(str(path))
    assert "\n" not in message
    assert path.read_bytes() == content


def test_an_empty_file_is_no_state_and_a_state_of_two_names_is_refused(tmp_path):
    path = tmp_path / "s.json"
    path.write_bytes(b"")  # mktemp's: the tool's own saves are atomic, never empty
    assert load_state(str(path)) is None
    save_state(str(path), new_state("/r", "fix it"))
    (tmp_path / "link.json").symlink_to(path)
    with pytest.raises(StateError, match="symbolic link"):
        load_state(str(tmp_path / "link.json"))
    os.link(path, tmp_path / "second.json")
    for name in ("s.json", "second.json"):
        with pytest.raises(StateError, match="has 2 names"):
            load_state(str(tmp_path / name))
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere.json")
    with pytest.raises(StateError, match="symbolic link"):
        load_state(str(tmp_path / "dangling.json"))


def test_a_directory_is_not_a_state_file(tmp_path):
    with pytest.raises(StateError, match="is a directory"):
        load_state(str(tmp_path))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "s.json"
    os.mkfifo(fifo)
    with pytest.raises(StateError, match="not a regular file"):
        load_state(str(fifo))
    with pytest.raises(StateError, match="not a regular file"):
        state_mod.check_writable_target(str(fifo), "s.json")


def test_a_device_is_never_replaced_by_reset():
    with pytest.raises(StateError, match="not a regular file"):
        state_mod.check_writable_target(os.devnull, os.devnull)


MALFORMED = [
    ("root", None), ("root", 1), ("task", None), ("max_cycles", 0), ("max_cycles", "3"), ("max_cycles", True),
    ("cycle", -1), ("cycle", 1.5), ("cycle", None), ("cycle", 10 ** 30), ("done", 1), ("done", None),
    ("next_query", []), ("next_query", {"keywords": "route"}), ("next_query", {"keywords": [{"kind": "given"}]}),
    ("next_query", {"patterns": [1]}), ("next_query", {"excludes": "x"}), ("scores", []),
    ("scores", {"a.py": 0.5}), ("scores", {"a.py": {"reason": "no score"}}), ("scores", {"a.py": {"score": True}}),
    ("scores", {"a.py": {"score": 1e308, "cycle": 1, "reason": ""}}),
    ("judgements", []), ("judgements", {"a.py": None}), ("judgements", {"a.py": 2.0}),
    ("seen_ids", "a.py"), ("seen_ids", [None]), ("pending_related", None), ("pending_related", [3]),
    ("history", None), ("last", []), ("last", {"cycle": 1}),
    ("root", "relative/tree"), ("root", ""), ("root", "/tree\u0000x"), ("root_real", "/tree\u0000"),
    ("next_query", {"patterns": ["../**"], "keywords": []}), ("next_query", {"patterns": ["/etc/**"], "keywords": []}),
    ("next_query", {"patterns": ["**"], "keywords": [], "excludes": ["a/../../b"]}),
    ("next_query", {"patterns": [""], "keywords": []}),
]


@pytest.mark.parametrize("field, value", MALFORMED, ids=[f"{f}={v!r}" for f, v in MALFORMED])
def test_malformed_field_raises_state_error_naming_it(tmp_path, field, value):
    path = saved(tmp_path, **{field: value})
    before = path.read_bytes()
    with pytest.raises(StateError, match="is missing or malformed") as err:
        load_state(str(path))
    assert "\n" not in str(err.value)
    assert path.read_bytes() == before


@pytest.mark.parametrize("where", ["result", "last"])
@pytest.mark.parametrize("bad", ["/etc/passwd", "../../../etc/shadow", "a/../../b"])
def test_related_files_outside_the_tree_are_refused_never_shown(tmp_path, where, bad):
    data = busy_state().to_json()
    if where == "result":
        data["last"]["results"][0]["related"] = ["b.py", bad]
    else:
        data["last"]["related"] = [bad]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StateError, match="last.re"):
        load_state(str(path))


def test_an_unknown_keyword_kind_is_malformed_not_the_strongest_kind(tmp_path):
    nq = {"patterns": ["**"], "keywords": [{"text": "route", "kind": "mystery", "weight": 1.0}], "excludes": []}
    with pytest.raises(StateError, match="next_query.keywords"):
        load_state(str(saved(tmp_path, next_query=nq)))


@pytest.mark.parametrize("field", ["root", "task", "max_cycles", "cycle", "done"])
def test_missing_required_field_raises_state_error(tmp_path, field):
    path = tmp_path / "s.json"
    data = new_state().to_json()
    del data[field]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StateError, match=f"field '{field}'"):
        load_state(str(path))


def test_the_lock_serializes_two_holders_and_a_waiter_gives_up_cleanly(tmp_path):
    path = str(tmp_path / "s.json")
    order: list[str] = []
    with locked(path, "s.json"):
        def second() -> None:
            with locked(path, "s.json"):
                order.append("second")
        t = threading.Thread(target=second)
        t.start()
        time.sleep(0.2)
        order.append("first")
        with pytest.raises(StateError, match="another process"):
            with locked(path, "s.json", wait=0.1):
                pass
    t.join(10)
    assert order == ["first", "second"]


def test_a_state_written_before_set_aside_loads_with_none(tmp_path):
    # The loop's set-aside files used to be kept among the excludes: such a state loads,
    # its excludes as they were and nothing set aside.
    path = str(tmp_path / "s.json")
    save_state(path, busy_state())
    data = json.loads(open(path).read())
    del data["next_query"]["set_aside"]
    open(path, "w").write(json.dumps(data))
    loaded = load_state(path)
    assert loaded.proposal.excludes == ("x.py",) and loaded.proposal.set_aside == ()


@pytest.mark.parametrize("field", ["scores", "judgements", "seen_ids", "pending_related"])
@pytest.mark.parametrize("rel", ["../outside/secret.py", "/etc/passwd", "a/../../b", "", "./b.py"])
def test_a_state_naming_a_path_outside_the_tree_is_refused(tmp_path, field, rel):
    # The state's files are what the agent is told to read next: one edited to name a
    # file outside the tree is refused, never served.
    path = str(tmp_path / "s.json")
    save_state(path, busy_state())
    data = json.loads(open(path).read())
    if field == "scores":
        data["scores"][rel] = data["scores"]["b.py"]
    elif field == "judgements":
        data["judgements"][rel] = 1.0
    else:
        data[field].append(rel)
    open(path, "w").write(json.dumps(data))
    with pytest.raises(StateError, match=field):
        load_state(path)


def test_a_directory_another_call_removed_meanwhile_is_made_again(tmp_path, monkeypatch):
    # Two first calls on one new directory: the one that fails removes the directories it
    # made, maybe while the other is making one inside them (mkdir: ENOENT).
    from agentic_search_skill import state as state_mod
    real_mkdir = os.mkdir
    calls = []

    def racing_mkdir(path, *args, **kw):
        calls.append(path)
        if len(calls) == 2:  # the other call removes what the first mkdir made
            os.rmdir(calls[0])
            raise FileNotFoundError(2, "No such file or directory", path)
        return real_mkdir(path, *args, **kw)

    monkeypatch.setattr(os, "mkdir", racing_mkdir)
    target = tmp_path / "a" / "b" / "s.json"
    made = state_mod.make_parents(str(target), "s.json")
    assert (tmp_path / "a" / "b").is_dir()
    assert [p for p, _ident in made] == [str(tmp_path / "a"), str(tmp_path / "a" / "b")]


def test_a_save_removes_the_temporary_files_of_saves_killed_long_ago(tmp_path) -> None:
    from agentic_search_skill.state import STALE_TEMP_SECONDS, LoopState, save_state
    old = tmp_path / ".agentic-search-0123456789ab.tmp"
    fresh = tmp_path / ".agentic-search-ba9876543210.tmp"
    other = tmp_path / ".agentic-search-notes.txt"
    for p in (old, fresh, other):
        p.write_text("{")
    long_ago = os.stat(old).st_mtime - STALE_TEMP_SECONDS - 60
    os.utime(old, (long_ago, long_ago))
    os.utime(other, (long_ago, long_ago))
    save_state(str(tmp_path / "s.json"), LoopState(root=str(tmp_path / "tree")))
    assert not old.exists() and fresh.exists() and other.exists()  # (a save may be writing the fresh one)
