"""The loop's state between invocations: one JSON file, versioned, written atomically.

This is the only module that writes to disk. A write goes to a temporary file in the
state file's own directory, is flushed and fsynced, then moved into place with
``os.replace``: a crash mid-write leaves the previous state intact. A state file that
is not valid JSON, is not ours, or has a version we do not know is never overwritten
without ``--reset``.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

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
    for key, kind in (("scores", dict), ("judgements", dict), ("seen_ids", list), ("history", list)):
        if not isinstance(data.get(key), kind):
            raise StateError(f"{path}: state file field {key!r} is missing or malformed; pass --reset")
    return data


def save_state(path: str, state: dict[str, Any]) -> None:
    """Write ``state`` to ``path`` atomically (temp file in the same directory, then rename)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    payload = json.dumps(state, ensure_ascii=False, sort_keys=True, indent=1).encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=".agentic-search-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
