"""The command behind scripts/retrieve_loop.py: a request -> the state -> one cycle -> text.

:func:`run` takes a validated :class:`~.request.Request` and does, in order: hold the
state's lock; load the state (or start over with ``--reset``); settle the root;
check the judged paths; then either show a finished loop's final answer again
(applying new judgements to it) or run the next cycle; save the state; render.
Kept apart from the thin script so it can be called and tested in-process.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Optional

from hints import _say as notice  # (hints.py's own: one diagnostic line, best effort)
from . import fsafe
from .index import base_dir, holds_indexes, open_index
from .cycle import CycleError, Env, rejudge, run_cycle, with_changes_marked, with_hints, without_vanished
from .output import COMPACT, FULL, render, to_output
from .progress import Progress
from .query import Kind, make_keyword, merge_keywords, normalize, task_read
from .records import CycleView
from .request import (DEFAULT_LIMIT, DEFAULT_MAX_CYCLES, Request, RequestError, UsageError, check_root,
                      check_state_outside, resolve_judgements)
from .state import (InsideTree, LoopState, StateError, check_writable_target, load_state, lock_path_of, locked,
                    save_state)
from .walk import MAX_FILE_BYTES, GlobError, literal_paths, prunes, unescaped

CliError = RequestError
CliUsageError = UsageError


def _hints_module():
    """hints.py beside this package (scripts/ is on sys.path when run as a script)."""
    import hints

    return hints


ROOT_REQUIRED = "--root DIR is required on the first call (later calls take it from --state)"
NO_QUERY = "no keywords and no task: pass --task TEXT or --keywords K ..."


def run(request: Request, ascii_only: bool = False,
        notes: Optional[list[str]] = None) -> tuple[dict[str, Any], str]:
    """Run one call; returns (output dict, text to print). RequestError on bad input.
    The call's notices (a task read in part, an ``--exclude`` that matches nothing) go
    to ``notes`` when given, for the caller to print once the answer is out (a call that
    then fails to print says only its error); else to stderr when the call has run.

    What can be told wrong without the state is told before its lock is taken: a call
    refused for its arguments leaves nothing behind (no lock file, no directory)."""
    try:
        if request.show:
            return _show(request, ascii_only)
        _check_before_the_lock(request)
        with locked(request.state_path, request.state_shown):
            return _run_locked(request, ascii_only, notes)
    except StateError as exc:
        raise RequestError(str(exc)) from None


def _show(request: Request, ascii_only: bool) -> tuple[dict[str, Any], str]:
    """``--show``: the last cycle's answer as the state holds it, less files that no
    longer exist; no cycle runs, and nothing is written, not even the lock: a state is
    replaced whole by a rename, so a cycle another process is saving is read before or
    after, never half (and a state on a read-only disk can be shown)."""
    missing = RequestError(f"--state {request.state_shown}: no such state file; run a cycle first "
                           "(--root DIR --task TEXT)")
    if not os.path.lexists(request.state_path):
        raise missing
    state = load_state(request.state_path, request.state_shown)
    if state is None:  # (an empty file, or removed since the look above)
        if os.path.lexists(request.state_path):
            raise RequestError(f"--state {request.state_shown}: no cycle has run yet; run one first")
        raise missing
    if request.root is not None:
        _check_same_root(request, state, request.root)
    # The answer is about the tree the loop searched: one that is gone, unreadable or now
    # another tree (a root link repointed) gets the refusal a cycle would, not its answer.
    _checked_tree(state, state.root)
    if state.last is None:
        raise RequestError(f"--state {request.state_shown}: no cycle has run yet; run one first")
    shown, _lost = without_vanished(state)
    shown, _edited = with_changes_marked(shown)
    if shown is not state:
        state = with_hints(shown, _hints_module().compute_hints)
    detail = FULL if request.full else COMPACT
    out = to_output(state.last, state, request.limit or state.limit or DEFAULT_LIMIT, detail)
    return out, _render_checked(out, request.text, ascii_only)


def _checked_tree(state: Optional[LoopState], root: str) -> str:
    """``root`` resolved, once for the whole call, after the checks that it is still a
    readable directory and, for a loop under way, the tree its state searched. The call
    then works on the resolved path: a root link repointed during the cycle changes
    nothing (it could have listed one tree and read the other's files)."""
    check_root(root, root)
    real = fsafe.resolved(root)
    if state is not None and state.root_real is not None and real != state.root_real:
        raise RequestError(
            f"--root {root}: now leads to {real}, not to the tree this loop "
            f"searched ({state.root_real}); pass --reset to search it anew")
    return real


def _check_same_root(request: Request, state: LoopState, root: str) -> None:
    """A state belongs to the loop over one tree: another --root is refused."""
    if fsafe.resolved(state.root) != fsafe.resolved(root):
        raise RequestError(
            f"--state {request.state_shown}: belongs to a loop over {state.root!r}, not {root!r}; "
            "pass --reset or use another --state")


def _check_before_the_lock(request: Request) -> None:
    """Every check that needs neither the lock nor the state's content (each is made
    again under the lock where the state decides it)."""
    fresh = request.reset or not os.path.lexists(request.state_path)
    if request.root is None and fresh:
        raise UsageError(ROOT_REQUIRED)
    check_writable_target(request.state_path, request.state_shown, replacing=request.reset)
    if request.root is not None:
        check_root(request.root, request.root)
        check_state_outside(request.state_path, request.state_shown, request.root)
        resolve_judgements(request.root, request.judgements, _own_files(request), None)
    elif not fresh:
        # The state's own root, read without the lock (read again under it): a state
        # that names the tree it lies in is refused before a lock file is made there.
        try:
            found = load_state(request.state_path, request.state_shown)
        except FileNotFoundError:  # gone since: a first call
            found = None
        except OSError as exc:
            raise RequestError(f"--state {request.state_shown}: cannot read: {exc.strerror or exc}") from None
        # (A file that is no state of this tool says so, StateError, as it does with --root.)
        if found is None:  # an empty file, or gone since: a first call, which needs --root
            raise UsageError(ROOT_REQUIRED)
        named = found.root
        if named is not None:
            check_state_outside(request.state_path, request.state_shown, named)
    if fresh and not request.task.strip() and not request.keywords:
        raise RequestError(NO_QUERY)


def _judged_inside(state: LoopState, root: str) -> LoopState:
    """A state's judged files are files of the tree: a judgement of one that now leads
    out of it (replaced by a link since, or a link edited in by hand) goes, as the
    judgement of a deleted file goes; it is never read nor named as the answer."""
    top = fsafe.resolved(root)
    out = []
    for rel in state.judgements:
        real = fsafe.resolve(os.path.join(root, *rel.split("/")))
        if real is not None and os.path.lexists(real) and not fsafe.inside(real, top):
            out.append(rel)
    if not out:
        return state
    return state.with_(judgements={r: v for r, v in state.judgements.items() if r not in out},
                       scores={r: e for r, e in state.scores.items() if r not in out})


def _own_files(request: Request) -> tuple[str, str]:
    return request.state_path, lock_path_of(request.state_path)


def _run_locked(request: Request, ascii_only: bool,
                notes: Optional[list[str]] = None) -> tuple[dict[str, Any], str]:
    state: Optional[LoopState] = None
    if request.reset:
        check_writable_target(request.state_path, request.state_shown)
    else:
        state = load_state(request.state_path, request.state_shown)
    root = request.root  # checked by run() before the lock
    if root is None:
        if state is None:  # the state vanished between run()'s look and the lock
            raise UsageError(ROOT_REQUIRED)
        root = state.root
    if state is not None:
        _check_same_root(request, state, root)
    tree = _checked_tree(state, root)
    # (A state moved into the tree it names: refused here, and the lock this call made
    # beside it goes with the refusal, as state.locked removes it on every failure.)
    check_state_outside(request.state_path, request.state_shown, root)
    if state is not None:
        state = _judged_inside(state, root)
        if state.root_real is None:  # a state written before the field: checked from now on
            state = state.with_(root_real=tree)
    own = _own_files(request)
    judgements = resolve_judgements(root, request.judgements, own,
                                    tuple(state.scores) if state is not None else ())
    # A path copied from the ranking is that file, whatever characters it holds.
    request = replace(request, patterns=literal_paths(tree, request.patterns),
                      excludes=literal_paths(tree, request.excludes))
    # (Said once the call has run: a call refused later prints its one error line alone.)
    read = task_read(request.task)
    cut = [f"retrieve_loop.py: the task is {len(request.task):,} characters; it is read to its "
           f"first {len(read):,}"] if read != request.task else []
    said = [f"retrieve_loop.py: --exclude {x}: no such file in the tree, nothing excluded "
            f"(**/{unescaped(x).rsplit('/', 1)[-1]} excludes that name at any depth)"
            for x in request.excludes
            if not prunes(tree, x) and not os.path.lexists(os.path.join(tree, *unescaped(x).split("/")))]
    if state is None:
        if not request.task.strip() and not request.keywords:
            raise RequestError(NO_QUERY)
        state = LoopState(root=root, max_cycles=request.max_cycles or DEFAULT_MAX_CYCLES, root_real=tree)
    if request.task and state.task and _holds_task(state.task, read):
        # A task the loop already holds, given again (the first call's command run once
        # more) is no new word: a plain call, neither steered nor appended to the task (a
        # trial's rerun raised the confidence 0.807 -> 0.89 on the same words, twice).
        request = replace(request, task="")
        cut = []
        held = True
    else:
        held = False
    if request.max_file_kb is not None:
        state = state.with_(max_file_bytes=request.max_file_kb * 1024)
    # (Settings a finished loop keeps for the later calls, though this one runs no cycle.)
    resettled = (request.max_cycles is not None and request.max_cycles != state.max_cycles) \
        or (request.limit is not None and request.limit != state.limit)
    if request.max_cycles is not None:
        state = state.with_(max_cycles=request.max_cycles)
    if request.limit is not None:
        state = state.with_(limit=request.limit)
    request = replace(request, limit=state.limit or DEFAULT_LIMIT)
    detail = FULL if request.full else COMPACT
    replaying = state.done and state.last is not None \
        and (not request.steers_query or state.cycle >= state.max_cycles) and not _judged_on(state, judgements)
    if held:
        said.append(_held_task_note(request, replaying))
    if not replaying:  # (a replay searches no word: what its words would search is moot)
        said += _same_searches(request.keywords)
    if replaying:
        replayed = _replay(request, state, judgements, detail, ascii_only, resettled)
        _tell(said, notes)  # (a task a finished loop does not search is not read either)
        return replayed
    progress = Progress()
    index = open_index(tree, request.index_dir) if request.use_cache else None
    if index is not None:
        index.progress = progress
    # The tool's own files are never results: its state and lock, and its indexes should
    # they lie inside the tree (a cache directory under the root: not used, and pruned
    # when it holds an index; a folder of the tree named as the index directory is not).
    base = base_dir(request.index_dir)
    env = Env(
        cache=index, progress=progress, skip_paths=own + ((base,) if holds_indexes(base) else ()),
        synonym_runs=_hints_module().synonym_runs, compute_hints=_hints_module().compute_hints,
    )
    try:
        with fsafe.tree_reads(root, tree):
            outcome = run_cycle(tree, state, request, judgements, env)
    except (CycleError, GlobError) as exc:
        raise RequestError(str(exc)) from None
    except OSError as exc:
        raise RequestError(f"--root {root}: {exc.strerror or exc}") from None
    _save(request, outcome.state)
    _tell(cut + said, notes)
    if index is not None:
        try:
            index.save()
        except OSError as exc:  # only an index: the next cycle reads the files again
            notice(f"retrieve_loop.py: index {index.path}: not all saved ({exc.strerror or exc}); "
                   "the next cycle may read files again (answers are the same)")
        finally:
            index.close()
    out = to_output(outcome.view, outcome.state, request.limit, detail, judged_now=tuple(judgements),
                    asked_anew=bool(request.keywords or request.task))
    return out, _render_checked(out, request.text, ascii_only)


HELD_TASK = ("retrieve_loop.py: the loop already holds this task; this call is a plain one "
             "(new words: --keywords)")


def _same_searches(keywords: tuple[str, ...]) -> list[str]:
    """A note for each --keywords word that the query takes as an earlier one
    (query.merge_keywords: a trial's ``ProxySelector proxySelector`` showed one keyword
    in ``query`` and nothing said why): "searches what X does" when X's search finds it
    too, else "is taken as X" (``CAFÉ`` after ``café``), with how to search it alone."""
    given = [kw for kw in (make_keyword(word, Kind.GIVEN) for word in keywords) if kw is not None]
    kept = merge_keywords(given)
    kept_texts = {kw.text for kw in kept}
    out = []
    for kw in given:
        if kw.text in kept_texts:
            continue
        into = next(k for k in kept if normalize(k.text) == normalize(kw.text) or set(k.needles) == set(kw.needles))
        if set(kw.needles) <= set(into.needles):
            out.append(f"retrieve_loop.py: --keywords {kw.text} searches what {into.text} does (case and "
                       "separators do not matter): one keyword")
        else:
            out.append(f"retrieve_loop.py: --keywords {kw.text} is taken as {into.text} (the same word once "
                       f"folded): one keyword; give {kw.text} alone to search it as written")
    return out


def _held_task_note(request: Request, finished: bool) -> str:
    """What stderr says of a task given again: a plain call, or (a trial's ``--judge``
    call with the first command's --task read the plain-call note as its judgements
    ignored) a call whose other flags still count - of a loop ``finished`` (the call
    shows its final answer again), only the judgements, which re-sort that answer (that
    the rest are not searched, the note on the final answer says)."""
    flags = [flag for flag, given in (("--keywords", request.keywords), ("--judge", request.judgements),
                                      ("--patterns", request.patterns), ("--exclude", request.excludes))
             if given and (flag == "--judge" or not finished)]
    if not flags:
        return "retrieve_loop.py: the loop already holds this task" if finished else HELD_TASK
    # ("count" read as a cut sentence and "counts" as a warning that the input was
    # ignored: two trials' agents; the note says it is used.)
    listed = " and ".join(flags) if len(flags) == 2 else ", ".join(flags)
    return (f"retrieve_loop.py: the loop already holds this task (not searched again); this call's "
            f"{listed} {'are' if len(flags) > 1 else 'is'} used")


def _holds_task(held: str, told: str) -> bool:
    """Whether ``told`` is the first or the last of the tasks ``held`` joins (whole lines
    of it from its start, or to its end), as written or re-spaced, in any case: the same
    command run again, not a new word (a shorter text inside a line of the old one,
    ``log`` in ``catalog``, is new). Linear in the texts: one run of lines each way."""
    want = " ".join(told.split()).casefold()
    if not want:
        return False
    lines = [line for line in (" ".join(part.split()).casefold() for part in held.split("\n")) if line]
    for seq in (lines, lines[::-1]):
        taken, total = [], -1
        for line in seq:
            taken.append(line)
            total += len(line) + 1
            if total >= len(want):
                break
        run = " ".join(taken if seq is lines else reversed(taken))
        if run == want:
            return True
    return False


def _tell(lines: list[str], notes: Optional[list[str]]) -> None:
    """The call's notices: to ``notes`` when the caller prints them, else to stderr."""
    if notes is not None:
        notes.extend(lines)
        return
    for line in lines:
        notice(line)


def _judged_on(state: LoopState, judgements: dict) -> bool:
    """New judgements on a finished loop with cycles left run a feedback cycle: a file
    the agent read and judged is evidence the finished answer did not have (a top file
    judged irrelevant contradicts it; one judged relevant points to its neighbours, the
    rest of a multi-file fix). Judgements the state already holds, or a loop at its
    cycle limit, only re-sort the final answer."""
    fresh = any(state.judgements.get(rel) != v for rel, v in judgements.items())
    return fresh and state.cycle < state.max_cycles


def _replay(request: Request, state: LoopState, judgements: dict, detail: str,
            ascii_only: bool, resettled: bool = False) -> tuple[dict[str, Any], str]:
    """A finished loop: its final answer again, with new judgements applied (saved), less
    the files that no longer exist; a new --max-cycles or --limit (``resettled``) is saved
    too (a raised limit was lost, and the next call's words refused)."""
    shown, lost = without_vanished(state)
    shown, edited = with_changes_marked(shown)
    changed, state = shown is not state, shown
    if request.steers_query:
        # The caller asked for a search the loop will not run: say so, never drop it silently.
        notice(f"retrieve_loop.py: the loop is at its cycle limit ({state.max_cycles}): "
               f"{_steering(request)} not searched; pass --max-cycles {_next_limit(state)} (or more) "
               "to search them, or --reset to start over. Showing the final answer.")
    if judgements or changed:
        state = with_hints(rejudge(state, judgements) if judgements else state, _hints_module().compute_hints)
    if judgements or resettled:
        _save(request, state)
    if not judgements and not request.steers_query:
        more = "; --judge, --keywords, --task or --patterns search on" if state.cycle < state.max_cycles else \
            f", or give --keywords, --task, --patterns or --judge with --max-cycles {_next_limit(state)}"
        left = "" if not lost else " (1 of its files is gone, or no longer one the walk reads, and is left out)" \
            if lost == 1 else f" ({lost} of its files are gone, or no longer ones the walk reads, and are left out)"
        if edited:
            left += (" (1 of its results changed since: its lines are left out)" if edited == 1 else
                     f" ({edited} of its results changed since: their lines are left out)")
        notice(f"retrieve_loop.py: the loop is done ({state.stop_reason}); showing its final answer{left}. "
               f"Pass --reset to start over{more}.")
    view: CycleView = state.last
    out = to_output(view, state, request.limit, detail, judged_now=tuple(judgements))
    return out, _render_checked(out, request.text, ascii_only)


def _next_limit(state: LoopState) -> int:
    """The --max-cycles that lets a finished loop run one more cycle (a loop may have run
    past a limit lowered since)."""
    return max(state.cycle, state.max_cycles) + 1


def _steering(request: Request) -> str:
    """The flags that would have changed the query: ``--keywords and --patterns``."""
    flags = [f for f, on in (("--task", request.task), ("--keywords", request.keywords),
                             ("--patterns", request.patterns), ("--exclude", request.excludes)) if on]
    return " and ".join(flags)


def _save(request: Request, state: LoopState) -> None:
    try:
        save_state(request.state_path, state)
    except InsideTree:  # its folder became a link into the tree during the cycle
        raise RequestError(f"--state {request.state_shown}: its folder is now inside the tree it searches "
                           f"({state.root}); nothing was written there: keep the state outside the tree") from None
    except StateError as exc:
        raise RequestError(f"--state {request.state_shown}: {exc}") from None
    except (OSError, ValueError) as exc:
        raise RequestError(f"--state {request.state_shown}: cannot write: {getattr(exc, 'strerror', None) or exc}") \
            from None


def _render_checked(out: dict[str, Any], as_text: bool, ascii_only: bool) -> str:
    """render(), with a stored answer that cannot be shown reported, not crashed on."""
    try:
        return render(out, as_text, ascii_only)
    except (KeyError, TypeError, ValueError):
        raise RequestError("state: the stored final answer is malformed; pass --reset") from None


__all__ = ["CliError", "CliUsageError", "run", "MAX_FILE_BYTES"]
