"""The command behind scripts/retrieve_loop.py: arguments -> state -> one cycle -> text.

Kept apart from the thin script so it can be called and tested in-process.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from .cache import open_cache
from .progress import Progress
from .cycle import DEFAULT_LIMIT, DEFAULT_MAX_CYCLES, CycleError, Steering, rejudge, run_cycle
from .state import StateError, load_state, new_state, save_state
from .walk import MAX_FILE_BYTES


class CliError(Exception):
    """One line for stderr: what is wrong and where (exit 1)."""


class CliUsageError(CliError):
    """The call's arguments do not make sense together (exit 2)."""


def _hints_module():
    """hints.py beside this package (scripts/ is on sys.path when run as a script)."""
    import hints  # noqa: WPS433 - the sibling module, imported late to keep start-up light

    return hints


def _read_task(args) -> str:
    text = args.task or ""
    if args.task_file:
        try:
            if args.task_file == "-":
                extra = sys.stdin.read()
            else:
                with open(args.task_file, encoding="utf-8", errors="replace") as fh:
                    extra = fh.read()
        except OSError as exc:
            raise CliError(f"--task-file {args.task_file}: cannot read: {exc.strerror or exc}") from None
        text = (text + "\n" + extra).strip() if text else extra
    return text


def run(args, judgements: tuple[tuple[str, float], ...]) -> tuple[dict[str, Any], str]:
    """Run one cycle for parsed arguments; returns (output dict, text to print)."""
    if args.max_cycles is not None and args.max_cycles < 1:
        raise CliError(f"--max-cycles {args.max_cycles}: must be at least 1")
    if args.limit is not None and args.limit < 1:
        raise CliError(f"--limit {args.limit}: must be at least 1")
    max_file_kb = getattr(args, "max_file_kb", None)
    if max_file_kb is not None and max_file_kb < 1:
        raise CliError(f"--max-file-kb {max_file_kb}: must be at least 1")
    state_path = os.path.abspath(args.state)
    if os.path.isdir(state_path):
        raise CliError(f"--state {args.state}: is a directory, not a state file")
    state = None
    if not args.reset:
        try:
            state = load_state(state_path)
        except StateError as exc:
            raise CliError(str(exc)) from None
    if args.root is None:
        if state is None:
            raise CliUsageError("--root DIR is required on the first call (later calls take it from --state)")
        args.root = state["root"]
    root = os.path.abspath(args.root)
    if not os.path.exists(root):
        raise CliError(f"--root {args.root}: no such directory")
    if not os.path.isdir(root):
        raise CliError(f"--root {args.root}: not a directory")
    state_real = os.path.realpath(state_path)
    for path, _score in judgements:
        if os.path.realpath(os.path.join(root, path)) == state_real:
            raise CliError(f"--judge {path}: is the loop's own state file, not a file of the tree")
    task = _read_task(args)
    if state is not None and os.path.realpath(state.get("root", "")) != os.path.realpath(root):
        raise CliError(
            f"--state {args.state}: belongs to a loop over {state.get('root')!r}, not {root!r}; "
            "pass --reset or use another --state"
        )
    fresh = state is None
    if fresh:
        if not task.strip() and not args.keywords:
            raise CliError("no keywords and no task: pass --task TEXT or --keywords K ...")
        state = new_state(root, "", args.max_cycles or DEFAULT_MAX_CYCLES)
    elif args.max_cycles is not None:
        state["max_cycles"] = args.max_cycles
    if max_file_kb is not None:
        state["max_file_bytes"] = max_file_kb * 1024

    # The cache sits beside the state, never inside the tree (then there is none).
    cache = None if getattr(args, "no_cache", False) else open_cache(state_path, root)
    steer = Steering(
        task=task,
        keywords=tuple(args.keywords),
        patterns=tuple(args.patterns),
        excludes=tuple(args.exclude),
        judgements=judgements,
        limit=args.limit or DEFAULT_LIMIT,
        max_file_bytes=state.get("max_file_bytes", MAX_FILE_BYTES),
        skip_paths=(state_path,) + (cache.paths if cache is not None else ()),
        synonyms_for=_hints_module().synonyms_for,
        compute_hints=_hints_module().compute_hints,
        cache=cache,
        progress=Progress(),
    )
    finished = not fresh and state.get("done") and isinstance(state.get("last_output"), dict)
    if finished and (not steer.steers_query or state["cycle"] >= state["max_cycles"]):
        if judgements:
            out, new = rejudge(root, state, steer)
            _save(state_path, args.state, new)
        else:
            out = dict(state["last_output"])
        if not judgements:
            print(f"retrieve_loop.py: the loop is done ({state.get('stop_reason')}); showing its final answer. "
                  "Pass --reset to start over" + ("" if state["cycle"] < state["max_cycles"] else " or raise --max-cycles")
                  + ".", file=sys.stderr)
        return out, _render_checked(out, args.text)
    try:
        out, new = run_cycle(root, state, steer)
    except CycleError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"--root {args.root}: {exc.strerror or exc}") from None
    new["last_output"] = out
    _save(state_path, args.state, new)
    if cache is not None:
        try:
            cache.save()
        except OSError:  # only a cache: the next cycle reads the files again
            pass
    return out, _render_checked(out, args.text)


def _save(state_path: str, shown: str, state: dict) -> None:
    try:
        save_state(state_path, state)
    except OSError as exc:
        raise CliError(f"--state {shown}: cannot write: {exc.strerror or exc}") from None


def _render_checked(out: dict[str, Any], as_text: bool) -> str:
    """render(), with a stored answer that was edited by hand reported, not crashed on."""
    try:
        return render(out, as_text)
    except (KeyError, TypeError, AttributeError, ValueError):
        raise CliError("state: the stored final answer is malformed; pass --reset") from None


def render(out: dict[str, Any], as_text: bool) -> str:
    """JSON (keys in a stable order, newline-terminated) or the human-readable report."""
    if not as_text:
        return json.dumps(out, ensure_ascii=False, indent=2) + "\n"
    lines = [
        f"cycle {out['cycle']}/{out['max_cycles']}"
        + (f" - done ({out['stop_reason']})" if out["done"] else " - continue"),
        f"query: {', '.join(out['query']['keywords'][:12])}"
        + (" ..." if len(out["query"]["keywords"]) > 12 else ""),
        f"files read: {out['stats']['files_read']}, matched: {out['stats']['files_matched']}",
        "",
        "results:",
    ]
    for r in out["results"][:10]:
        lines.append(f"  {r['score']:.2f}  {r['id']}  ({r['reason']})")
        for s in r["summary"].splitlines():
            lines.append(f"          {s}")
    if not out["results"]:
        lines.append("  (none)")
    hints = out.get("hints") or {}
    if hints:
        lines += ["", f"next action: {hints.get('next_action')}"]
    nq = out["next_query"]
    if not out["done"]:
        added = nq.get("learned", []) + nq.get("synonyms", [])
        if added:
            lines.append(f"next cycle adds: {', '.join(added)}")
        for f in nq["focus_areas"]:
            lines.append(f"  focus: {f}")
    lines += ["", "context (read these):"]
    for c in out["context"]:
        lines.append(f"  {c['score']:.2f}  {c['id']}")
    if not out["context"]:
        lines.append("  (nothing at 0.7 or above yet)")
    return "\n".join(lines) + "\n"
