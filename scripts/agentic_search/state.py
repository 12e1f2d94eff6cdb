"""The loop's state between invocations: one JSON file, versioned, written atomically.

Every write to disk goes through :func:`atomic_write` here (the cache beside the state
uses it too). A state write goes to a temporary file in the
state file's own directory, is flushed and fsynced, then moved into place with
``os.replace``: a crash mid-write leaves the previous state intact. A state file that
is not valid JSON, is not ours, or has a version we do not know is never overwritten
without ``--reset``.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Sequence

FORMAT_NAME = "agentic-search-state"
FORMAT_VERSION = 1


class StateError(Exception):
    """The state file cannot be used; the message says what and where."""


def new_state(root: str, task: str, max_cycles: int) -> dict[str, Any]:
    """A fresh state for a loop over ``root``."""
    return {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "root": root,
        "task": task,
        "max_cycles": max_cycles,
        "cycle": 0,
        "done": False,
        "stop_reason": None,
        "next_query": None,
        "scores": {},
        "judgements": {},
        "seen_ids": [],
        "pending_related": [],
        "history": [],
    }


def load_state(path: str) -> dict[str, Any] | None:
    """The state at ``path``, or None when there is no file yet.

    Raises StateError for an unreadable, corrupt or foreign file.
    """
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise StateError(f"{path}: is a directory, not a state file") from None
    except OSError as exc:
        raise StateError(f"{path}: cannot read state file: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StateError(
            f"{path}: state file is corrupt ({exc.__class__.__name__}: {exc}); "
            "left untouched, pass --reset to start over"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise StateError(
            f"{path}: not an agentic-search state file; left untouched, "
            "pass --reset to overwrite it or choose another --state"
        )
    if data.get("version") != FORMAT_VERSION:
        raise StateError(
            f"{path}: state format version {data.get('version')!r} is not supported "
            f"(this tool writes version {FORMAT_VERSION}); pass --reset to start over"
        )
    bad = _malformed_field(data)
    if bad is not None:
        raise StateError(f"{path}: state file field {bad!r} is missing or malformed; pass --reset")
    return data


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _malformed_field(data: dict[str, Any]) -> str | None:
    """The first field a cycle would choke on, or None: a hand-edited file must fail here, cleanly."""
    checks = (
        ("root", isinstance(data.get("root"), str)),
        ("task", isinstance(data.get("task"), str)),
        ("max_cycles", _is_int(data.get("max_cycles")) and data["max_cycles"] >= 1),
        ("max_file_bytes", "max_file_bytes" not in data or (_is_int(data["max_file_bytes"]) and data["max_file_bytes"] >= 1)),
        ("cycle", _is_int(data.get("cycle")) and data["cycle"] >= 0),
        ("done", isinstance(data.get("done"), bool)),
        ("stop_reason", data.get("stop_reason") is None or isinstance(data.get("stop_reason"), str)),
        ("next_query", data.get("next_query") is None or _valid_query(data.get("next_query"))),
        ("scores", isinstance(data.get("scores"), dict) and all(
            isinstance(v, dict) and _is_number(v.get("score")) for v in data["scores"].values())),
        ("judgements", isinstance(data.get("judgements"), dict) and all(
            _is_number(v) for v in data["judgements"].values())),
        ("seen_ids", _is_str_list(data.get("seen_ids"))),
        ("pending_related", _is_str_list(data.get("pending_related", []))),
        ("history", isinstance(data.get("history"), list)),
        ("last_output", "last_output" not in data or isinstance(data["last_output"], dict)),
    )
    for key, ok in checks:
        if not ok:
            return key
    return None


def _valid_query(query: Any) -> bool:
    if not isinstance(query, dict):
        return False
    for key in ("patterns", "excludes", "focus_areas"):
        if key in query and query[key] is not None and not _is_str_list(query[key]):
            return False
    keywords = query.get("keywords")
    return keywords is None or (isinstance(keywords, list) and all(
        isinstance(k, dict) and isinstance(k.get("text"), str) for k in keywords))


def save_state(path: str, state: dict[str, Any]) -> None:
    """Write ``state`` to ``path`` atomically (temp file in the same directory, then rename)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    # No sort_keys: last_output is replayed verbatim once the loop is done, so its
    # key order (the output's stable order) must survive the round trip.
    payload = json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    atomic_write(path, (payload,), fsync=True)


def atomic_write(path: str, pieces: Sequence[bytes], *, fsync: bool, prefix: str = ".agentic-search-") -> None:
    """Write ``pieces`` to a temporary file beside ``path``, then rename it into place.

    A crash at any point leaves either the old file or the new one, never a mix; the
    temporary file is removed on failure. ``fsync`` makes the new content durable
    before the rename (the state needs it; a cache, which is rebuilt, does not).
    """
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            for piece in pieces:
                fh.write(piece)
            if fsync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
