"""agentic_search.state: the loop's state file - versioned JSON, written atomically."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentic_search import state as state_mod
from agentic_search.state import FORMAT_NAME, FORMAT_VERSION, StateError, load_state, new_state, save_state

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def leftovers(directory: Path) -> list[str]:
    """Temporary files an interrupted write would leave."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".agentic-search-"))


def saved(tmp_path: Path, **changes) -> Path:
    """A state file holding a fresh state with ``changes`` applied."""
    path = tmp_path / "s.json"
    data = new_state("/some/root", "task", 3)
    data.update(changes)
    save_state(str(path), data)
    return path


def test_new_state_carries_format_and_version():
    s = new_state("/r", "fix it", 3)
    assert (s["format"], s["version"]) == (FORMAT_NAME, FORMAT_VERSION)
    assert (s["root"], s["task"], s["max_cycles"], s["cycle"], s["done"]) == ("/r", "fix it", 3, 0, False)


def test_missing_state_file_loads_as_none(tmp_path):
    assert load_state(str(tmp_path / "absent.json")) is None


def test_save_then_load_round_trips_including_key_order(tmp_path):
    data = new_state("/r", "t", 3)
    data["last_output"] = {"cycle": 1, "max_cycles": 3, "done": True, "stop_reason": "sufficient", "query": {}}
    data["scores"] = {"b.py": {"score": 0.5}, "a.py": {"score": 0.9}}
    path = tmp_path / "s.json"
    save_state(str(path), data)
    loaded = load_state(str(path))
    assert loaded == data
    assert list(loaded["last_output"]) == ["cycle", "max_cycles", "done", "stop_reason", "query"]
    assert list(loaded["scores"]) == ["b.py", "a.py"]


def test_saved_file_is_utf8_json_with_format_and_version(tmp_path):
    path = saved(tmp_path, task="caf\u00e9 \u2014 token")
    raw = path.read_bytes()
    data = json.loads(raw.decode("utf-8"))
    assert (data["format"], data["version"]) == ("agentic-search-state", 1)
    assert "caf\u00e9 \u2014 token".encode("utf-8") in raw
    assert leftovers(tmp_path) == []


def test_save_creates_the_state_directory(tmp_path):
    path = tmp_path / "a" / "b" / "s.json"
    save_state(str(path), new_state("/r", "", 3))
    assert load_state(str(path))["root"] == "/r"


def test_save_replaces_an_existing_file(tmp_path):
    path = saved(tmp_path, cycle=1)
    save_state(str(path), dict(load_state(str(path)), cycle=2))
    assert load_state(str(path))["cycle"] == 2
    assert leftovers(tmp_path) == []


FAILURES = [
    ("os.replace fails", "replace", OSError(28, "No space left on device")),
    ("fsync fails", "fsync", OSError(5, "Input/output error")),
    ("interrupted before the rename", "replace", KeyboardInterrupt()),
]


@pytest.mark.parametrize("target, exc", [f[1:] for f in FAILURES], ids=[f[0] for f in FAILURES])
def test_a_failed_write_keeps_the_previous_state_and_removes_the_temp_file(tmp_path, monkeypatch, target, exc):
    path = saved(tmp_path, cycle=1)
    before = path.read_bytes()

    def fail(*_args, **_kwargs):
        raise exc

    monkeypatch.setattr(state_mod.os, target, fail)
    with pytest.raises(type(exc)):
        save_state(str(path), dict(load_state(str(path)), cycle=2))
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert leftovers(tmp_path) == []


def test_a_failed_first_write_creates_no_state_file(tmp_path, monkeypatch):
    def fail(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(state_mod.os, "replace", fail)
    with pytest.raises(OSError):
        save_state(str(tmp_path / "s.json"), new_state("/r", "", 3))
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == []


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_a_process_killed_mid_write_leaves_the_previous_state_loadable(tmp_path):
    path = saved(tmp_path, cycle=1)
    before = path.read_bytes()
    # The child dies (no cleanup, no finally) between writing the temp file and the rename.
    code = (
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(SCRIPTS)!r})\n"
        "from agentic_search import state\n"
        "os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\n"
        f"s = state.load_state({str(path)!r}); s['cycle'] = 2\n"
        f"state.save_state({str(path)!r}, s)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert path.read_bytes() == before
    assert load_state(str(path))["cycle"] == 1
    # What a kill leaves behind is a hidden temp file: the walk skips hidden entries.
    assert all(name.startswith(".") and name.endswith(".tmp") for name in leftovers(tmp_path))


CORRUPT = [
    ("invalid json", b"{bad", "corrupt"),
    ("truncated json", b'{"format": "agentic-search-state", "vers', "corrupt"),
    ("empty", b"", "corrupt"),
    ("not utf-8", b"\xff\xfe\x00{", "corrupt"),
    ("json array", b"[]", "not an agentic-search state file"),
    ("json null", b"null", "not an agentic-search state file"),
    ("another format", b'{"format": "something-else", "version": 1}', "not an agentic-search state file"),
    ("unknown version", b'{"format": "agentic-search-state", "version": 2}', "version 2 is not supported"),
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


def test_a_directory_is_not_a_state_file(tmp_path):
    with pytest.raises(StateError, match="is a directory"):
        load_state(str(tmp_path))


MALFORMED = [
    ("root", None), ("root", 1), ("task", None), ("max_cycles", 0), ("max_cycles", "3"), ("max_cycles", True),
    ("cycle", -1), ("cycle", 1.5), ("cycle", None), ("done", 1), ("done", None), ("stop_reason", []),
    ("next_query", []), ("next_query", {"keywords": "route"}), ("next_query", {"keywords": [{"kind": "given"}]}),
    ("next_query", {"patterns": [1]}), ("next_query", {"excludes": "x"}), ("scores", []),
    ("scores", {"a.py": 0.5}), ("scores", {"a.py": {"reason": "no score"}}), ("scores", {"a.py": {"score": True}}),
    ("judgements", []), ("judgements", {"a.py": None}), ("seen_ids", "a.py"), ("seen_ids", [None]),
    ("pending_related", None), ("pending_related", [3]), ("history", None), ("last_output", []),
]


@pytest.mark.parametrize("field, value", MALFORMED, ids=[f"{f}={v!r}" for f, v in MALFORMED])
def test_malformed_field_raises_state_error_naming_it(tmp_path, field, value):
    path = saved(tmp_path, **{field: value})
    before = path.read_bytes()
    with pytest.raises(StateError, match=f"field '{field}' is missing or malformed"):
        load_state(str(path))
    assert path.read_bytes() == before


@pytest.mark.parametrize("field", ["root", "task", "max_cycles", "cycle", "done", "scores", "judgements",
                                   "seen_ids", "history"])
def test_missing_required_field_raises_state_error(tmp_path, field):
    path = tmp_path / "s.json"
    data = new_state("/r", "", 3)
    del data[field]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(StateError, match=f"field '{field}'"):
        load_state(str(path))


VALID = [
    ("fresh", {}),
    ("mid-loop", {"cycle": 2, "next_query": {"patterns": ["**"], "keywords": [{"text": "route", "kind": "given"}],
                                             "excludes": [], "focus_areas": []},
                  "scores": {"a.py": {"score": 0.9, "cycle": 1, "reason": "x"}}, "judgements": {"a.py": 1},
                  "seen_ids": ["a.py"], "pending_related": ["b.py"], "history": [{"cycle": 1}]}),
    ("done with a final answer", {"cycle": 3, "done": True, "stop_reason": "max_cycles", "last_output": {"cycle": 3}}),
    ("written before pending_related existed", {"pending_related": None}),
]


@pytest.mark.parametrize("changes", [v[1] for v in VALID], ids=[v[0] for v in VALID])
def test_valid_states_load(tmp_path, changes):
    path = tmp_path / "s.json"
    data = new_state("/r", "", 3)
    data.update(changes)
    if data.get("pending_related") is None:
        del data["pending_related"]
    path.write_text(json.dumps(data), encoding="utf-8")
    assert load_state(str(path)) == data
