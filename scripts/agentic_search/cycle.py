"""One DISPATCH -> EVALUATE -> REFINE cycle of the loop, state in and state out.

:func:`run_cycle` is the library entry point behind ``scripts/retrieve_loop.py``:
it takes the previous state (or None), the caller's steering (keywords, patterns,
excludes, judgements), runs one cycle over the tree and returns the JSON-ready
output and the new state. It does no I/O on the state file itself.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from . import imports as imports_mod
from .engine import Candidate, load_documents, rank_documents
from .match import Document
from .progress import QUIET, Progress
from .query import KIND_WEIGHTS, Keyword, extract_keywords, keywords_from_list, make_keyword, merge_keywords, normalize
from .refine import learn_vocabulary, refine_query, synonym_keywords
from .report import build_result, context_entries, ranking_entries
from .score import Scored, coverage_share, task_words
from .walk import MAX_FILE_BYTES, walk

# The seed's loop limit.
DEFAULT_MAX_CYCLES = 3
# Results, ranking and context are cut to this many entries (agents truncate long output).
DEFAULT_LIMIT = 20
# The seed's "high relevance": files at or above it go to the context.
CONTEXT_SCORE = 0.7
# The seed's stopping rule: this many high-relevance files and no critical gap.
ENOUGH_HIGH_FILES = 3
# Related files of results at or above this are followed by the next cycle (expand).
EXPAND_FROM_SCORE = 0.5
# The best files whose imports are parsed to find related files (both directions).
RELATED_SCAN_FILES = 50
# Evidence a related file gets for being imported by / importing a relevant file, as a
# share of the best file's evidence (scaled down for long task texts).
RELATED_BONUS = 0.15
# Keyword kinds whose total absence is a critical gap (the task named them outright).
CRITICAL_KINDS = ("given", "identifier", "path")


class CycleError(Exception):
    """Bad input for a cycle (a judge path outside the tree, no keywords, ...)."""


@dataclass(frozen=True)
class Steering:
    """What the caller passed on this invocation."""

    task: str = ""
    keywords: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    judgements: tuple[tuple[str, float], ...] = ()
    limit: int = DEFAULT_LIMIT
    max_file_bytes: int = MAX_FILE_BYTES  # larger files are skipped (too_large)
    skip_paths: tuple[str, ...] = ()
    synonyms_for: Optional[Callable[[str], list[str]]] = None
    compute_hints: Optional[Callable[..., dict]] = None
    cache: Optional[Any] = None  # cache.Cache: reuse what earlier cycles read
    progress: Progress = QUIET  # stderr progress on a terminal for long cycles

    @property
    def steers_query(self) -> bool:
        """True when the caller changed the query (not only judged files)."""
        return bool(self.task or self.keywords or self.patterns or self.excludes)


def _kw_to_state(kw: Keyword) -> dict:
    return kw.to_json()


def _kw_from_state(item: Any) -> Keyword:
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        raise CycleError("state: malformed keyword entry; pass --reset")
    kind = item.get("kind") if item.get("kind") in ("given", "path", "identifier", "word", "learned", "synonym") else "given"
    weight = item.get("weight")
    group = item.get("group") if isinstance(item.get("group"), str) else ""
    kw = make_keyword(item["text"], kind, float(weight) if isinstance(weight, (int, float)) else None, group,
                      stemmed=item.get("stemmed") is True)
    if kw is None:
        raise CycleError("state: empty keyword entry; pass --reset")
    return kw


def resolve_judge_path(root: str, path: str) -> str:
    """A --judge path as a POSIX path relative to the root; CycleError if outside."""
    root_real = os.path.realpath(root)
    full = path if os.path.isabs(path) else os.path.join(root, path)
    real = os.path.realpath(full)
    if real != root_real and not real.startswith(root_real.rstrip(os.sep) + os.sep):
        raise CycleError(f"--judge {path}: path is outside the root {root}")
    if not os.path.isfile(real):
        raise CycleError(f"--judge {path}: no such file under the root")
    rel = os.path.relpath(os.path.abspath(full), os.path.abspath(root))
    if rel.startswith(".."):
        rel = os.path.relpath(real, root_real)
    return rel.replace(os.sep, "/")


def _initial_query(state: dict, steer: Steering) -> tuple[list[str], list[Keyword], list[str]]:
    """The query to run now: the previous proposal, plus whatever the caller added."""
    proposal = state.get("next_query")
    if proposal:
        patterns = list(proposal.get("patterns") or ["**"])
        keywords = [_kw_from_state(k) for k in proposal.get("keywords") or []]
        excludes = list(proposal.get("excludes") or [])
    else:
        patterns, keywords, excludes = [], [], []
    if steer.task:
        keywords = merge_keywords(keywords, extract_keywords(steer.task))
    if steer.keywords:
        given = keywords_from_list(steer.keywords, "given")
        keywords = merge_keywords(given, keywords)
    for p in steer.patterns:
        if p not in patterns:
            patterns.append(p)
    for e in steer.excludes:
        if e not in excludes:
            excludes.append(e)
    return patterns or ["**"], keywords, excludes


def _split_excludes(excludes: Sequence[str], root: str) -> tuple[list[str], set[str]]:
    """Exact file paths (a set lookup) apart from globs (the walker's job)."""
    globs: list[str] = []
    exact: set[str] = set()
    for e in excludes:
        if not any(c in e for c in "*?[{") and os.path.isfile(os.path.join(root, e)):
            exact.add(e)
        else:
            globs.append(e)
    return globs, exact


def _related_graph(scored: Sequence[Scored], docs: dict[str, Document], rels: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Imports of the best files, and the reverse edges among them."""
    index = imports_mod.build_index(rels)
    graph: dict[str, tuple[str, ...]] = {}
    for s in scored[:RELATED_SCAN_FILES]:
        doc = docs.get(s.rel)
        if doc is not None:
            graph[s.rel] = imports_mod.imports_of(s.rel, doc.head, index)
    related: dict[str, list[str]] = {rel: list(targets) for rel, targets in graph.items()}
    for src, targets in graph.items():
        for t in targets:
            if t in related and src not in related[t]:
                related[t].append(src)
    return {rel: tuple(sorted(set(v))) for rel, v in related.items()}


@dataclass(frozen=True)
class _Query:
    """What one cycle searches: the caller's and the previous cycle's query merged."""

    patterns: list[str]
    keywords: list[Keyword]
    excludes: list[str]


@dataclass(frozen=True)
class _Evaluation:
    """EVALUATE's outcome for one cycle."""

    scored: list[Scored]
    shown: list[Scored]
    matches: dict
    corpus: Any
    related: dict[str, tuple[str, ...]]
    gaps: list[Keyword]
    results: list[dict]


def run_cycle(root: str, state: dict, steer: Steering) -> tuple[dict, dict]:
    """Run the next cycle; returns (output for the JSON boundary, new state).

    The stages, in order: DISPATCH (walk and read), EVALUATE (match, score, related
    files, the result contract), hints, REFINE (the next query), then the merge into
    the loop's memory and the stopping rules.
    """
    cycle_no = int(state.get("cycle", 0)) + 1
    max_cycles = int(state.get("max_cycles", DEFAULT_MAX_CYCLES))
    task_text = state.get("task") or ""
    if steer.task:
        task_text = (task_text + "\n" + steer.task).strip() if task_text else steer.task
    patterns, keywords, excludes = _initial_query(state, steer)
    if not keywords:
        raise CycleError("no keywords: pass --keywords or a --task with searchable words")
    query = _Query(patterns, keywords, excludes)
    judgements = dict(state.get("judgements") or {})
    for path, score in steer.judgements:
        judgements[resolve_judge_path(root, path)] = score

    walked, entries, docs, binary, unreadable = _dispatch(root, query, steer)
    by_rel = {d.rel: d for d in docs}
    ev = _evaluate(query, state, steer, task_text, walked, docs, by_rel, judgements)
    seen_before = list(state.get("seen_ids") or [])
    seen = set(seen_before)
    hints = steer.compute_hints(
        [_hint_item(r) for r in ev.results], [k.text for k in keywords],
        seen_ids=seen_before, round=cycle_no, max_rounds=max_cycles,
    ) if steer.compute_hints else {}
    unseen_related = _unseen_related(ev, seen)
    nq = _refine(query, ev, steer, by_rel, docs, unseen_related)

    scores = _merge_scores(state, ev.scored, judgements, cycle_no)
    new_ids = [r["id"] for r in ev.results if r["id"] not in seen]
    critical = [kw for kw in ev.gaps if kw.kind in CRITICAL_KINDS]
    done, stop_reason = _stop(cycle_no, max_cycles, ev.scored, critical, new_ids, hints)
    new_state = dict(state)
    new_state.update({
        "cycle": cycle_no,
        "task": task_text,
        "done": done,
        "stop_reason": stop_reason,
        "next_query": {
            "patterns": list(nq.patterns),
            "keywords": [_kw_to_state(k) for k in nq.keywords],
            "excludes": list(nq.excludes),
            "focus_areas": list(nq.focus_areas),
        },
        "scores": scores,
        "judgements": judgements,
        "seen_ids": seen_before + new_ids,
        "pending_related": unseen_related,
        "history": list(state.get("history") or []) + [{
            "cycle": cycle_no,
            "keywords": [k.text for k in keywords],
            "files_read": len(docs),
            "new_ids": len(new_ids),
            "max_score": ev.shown[0].score if ev.shown else 0.0,
        }],
    })
    output = {
        "cycle": cycle_no,
        "max_cycles": max_cycles,
        "done": done,
        "stop_reason": stop_reason,
        "query": {
            "patterns": list(patterns),
            "keywords": [k.text for k in keywords],
            "excludes": list(excludes),
        },
        "stats": {
            "files_considered": len(entries),
            "files_read": len(docs),
            "files_matched": len(ev.matches),
            "binary_skipped": binary,
            "unreadable_skipped": unreadable,
            "walk_skipped": dict(walked.skipped),
        },
        "results": ev.results,
        "hints": hints,
        "next_query": {
            "patterns": list(nq.patterns),
            "keywords": [k.text for k in nq.keywords],
            "excludes": list(nq.excludes),
            "focus_areas": list(nq.focus_areas),
            "learned": list(nq.learned),
            "synonyms": list(nq.synonyms),
        },
        "ranking": ranking_entries(scores, steer.limit),
        "context": context_entries(scores, CONTEXT_SCORE, steer.limit),
    }
    return output, new_state


def _dispatch(root: str, query: _Query, steer: Steering):
    """DISPATCH: walk the tree and read every candidate once."""
    glob_excludes, exact_excludes = _split_excludes(query.excludes, root)
    walked = walk(root, query.patterns, glob_excludes, skip_paths=steer.skip_paths, max_bytes=steer.max_file_bytes)
    entries = [f for f in walked.files if f.rel not in exact_excludes]
    docs, binary, unreadable = load_documents(
        (Candidate(f.rel, f.path, f.size, f.mtime_ns) for f in entries), steer.cache, steer.progress)
    return walked, entries, docs, binary, unreadable


def _evaluate(query: _Query, state: dict, steer: Steering, task_text: str, walked,
              docs: Sequence[Document], by_rel: dict[str, Document],
              judgements: dict[str, float]) -> _Evaluation:
    """EVALUATE: score every file, find related files, build this cycle's results."""
    pending = [r for r in state.get("pending_related") or [] if r in by_rel]
    bonuses = {r: (RELATED_BONUS, "related to a relevant file") for r in pending}
    scored, matches, corpus = rank_documents(docs, query.keywords, task_words(task_text), bonuses,
                                             steer.cache, steer.progress)
    steer.progress.finish()
    related = _related_graph(scored, by_rel, [f.rel for f in walked.files])
    scored = _apply_judgements(scored, judgements)
    shown = scored[: steer.limit]
    gaps = [kw for i, kw in enumerate(query.keywords) if corpus.idfs and not _matched_anywhere(matches, i)]
    results = [build_result(s, by_rel.get(s.rel), query.keywords, matches.get(s.rel), related.get(s.rel, ()))
               for s in shown]
    return _Evaluation(scored, shown, matches, corpus, related, gaps, results)


def _unseen_related(ev: _Evaluation, seen: set[str]) -> list[str]:
    """Files related to good results that the loop has not shown yet (expand)."""
    shown = {s.rel for s in ev.shown}
    out: list[str] = []
    for s in ev.shown:
        if s.score < EXPAND_FROM_SCORE:
            continue
        for r in ev.related.get(s.rel, ()):
            if r not in seen and r not in shown and r not in out:
                out.append(r)
    return out


def _refine(query: _Query, ev: _Evaluation, steer: Steering, by_rel: dict[str, Document],
            docs: Sequence[Document], unseen_related: list[str]):
    """REFINE: learned vocabulary, synonyms for gaps, excludes, focus areas."""
    top = {s.rel for s in ev.scored[:3]}
    learned = learn_vocabulary(ev.scored, {r: by_rel[r].head for r in top if r in by_rel}, docs, query.keywords)
    synonyms_for = steer.synonyms_for or (lambda _t: [])
    syns = synonym_keywords(ev.gaps, synonyms_for, query.keywords) if ev.gaps else []
    # Broaden: synonyms replace the words they stand for; derived keywords that found
    # nothing (an unlucky synonym or learned term) are dropped rather than kept.
    dropped = [g for g in ev.gaps if g.kind in ("synonym", "learned")] + (ev.gaps if syns else [])
    lam = coverage_share(query.keywords, ev.corpus)
    return refine_query(query.patterns, _drop_gaps(query.keywords, dropped), query.excludes, ev.shown,
                        ev.gaps, learned, syns, unseen_related,
                        learned_weight=KIND_WEIGHTS["learned"] * lam)


def _merge_scores(state: dict, scored: Sequence[Scored], judgements: dict[str, float],
                  cycle_no: int) -> dict[str, dict]:
    """The loop's memory of every file scored so far (see _keeps_high)."""
    scores = dict(state.get("scores") or {})
    for s in scored:
        prev = scores.get(s.rel)
        if prev is not None and (prev.get("judged") or _keeps_high(prev, s.score)):
            continue
        scores[s.rel] = {"score": s.score, "cycle": cycle_no, "reason": "; ".join(s.signals)}
    for rel, score in judgements.items():
        prev = scores.get(rel, {})
        scores[rel] = {"score": score, "cycle": prev.get("cycle", cycle_no),
                       "reason": f"judged {score} by the caller", "judged": True}
    return scores


def rejudge(root: str, state: dict, steer: Steering) -> tuple[dict, dict]:
    """Apply judgements to a finished loop without running another cycle.

    The stored final answer's ranking and context are recomputed with the caller's
    scores; the cycle count does not move past the limit.
    """
    judgements = dict(state.get("judgements") or {})
    for path, score in steer.judgements:
        judgements[resolve_judge_path(root, path)] = score
    scores = dict(state.get("scores") or {})
    for rel, score in judgements.items():
        prev = scores.get(rel, {})
        scores[rel] = {"score": score, "cycle": prev.get("cycle", state.get("cycle", 0)),
                       "reason": f"judged {score} by the caller", "judged": True}
    out = dict(state["last_output"])
    out["results"] = [
        dict(r, score=judgements[r["id"]], reason=f"judged {judgements[r['id']]} by the caller; " + r.get("reason", ""))
        if isinstance(r, dict) and r.get("id") in judgements else r
        for r in out.get("results") or []
    ]
    out["ranking"] = ranking_entries(scores, steer.limit)
    out["context"] = context_entries(scores, CONTEXT_SCORE, steer.limit)
    new_state = dict(state)
    new_state.update({"scores": scores, "judgements": judgements, "last_output": out})
    return out, new_state


def _keeps_high(prev: dict, new_score: float) -> bool:
    """The seed's mergeContext: a file once at 0.7+ keeps its best score; others take the latest.

    The latest evaluation is the loop's current knowledge (a weak match of cycle 1 that
    the refined query no longer supports sinks); high-relevance files are the context
    gathered so far and are never lost to a later, differently focused cycle.
    """
    old = float(prev.get("score", 0.0))
    return old >= CONTEXT_SCORE and old >= new_score


def _matched_anywhere(matches: dict, i: int) -> bool:
    return any(m.counts[i] or m.in_path[i] for m in matches.values())


def _drop_gaps(keywords: Sequence[Keyword], gaps: Sequence[Keyword]) -> list[Keyword]:
    """Broaden: keep what matched, drop what the synonyms replace."""
    gap_keys = {normalize(g.text) for g in gaps}
    kept = [k for k in keywords if normalize(k.text) not in gap_keys]
    return kept


def _apply_judgements(scored: list[Scored], judgements: dict[str, float]) -> list[Scored]:
    """The caller's scores replace the heuristic ones for the files it judged."""
    if not judgements:
        return scored
    out = []
    for s in scored:
        if s.rel in judgements:
            s = Scored(rel=s.rel, score=judgements[s.rel], raw=s.raw, coverage=s.coverage, role=s.role,
                       signals=(f"judged {judgements[s.rel]} by the caller",) + s.signals,
                       matched_keywords=s.matched_keywords)
        out.append(s)
    out.sort(key=lambda s: (-s.score, -s.raw, s.rel))
    return out


def _hint_item(result: dict) -> dict:
    """The seed's contract for hints.py: text stands for what the file matched."""
    return {
        "id": result["id"], "title": result["title"], "summary": result["summary"],
        "tags": result["tags"], "score": result["score"], "related": result["related"],
        "text": result["id"] + " " + " ".join(result.get("matched", [])) + " " + " ".join(result["tags"]),
    }


def _stop(cycle_no: int, max_cycles: int, scored: Sequence[Scored], critical: Sequence[Keyword],
          new_ids: Sequence[str], hints: dict) -> tuple[bool, Optional[str]]:
    """The loop's stopping rules, in order: enough, hints say synthesize, saturated, limit."""
    high = [s for s in scored if s.score >= CONTEXT_SCORE]
    if len(high) >= ENOUGH_HIGH_FILES and not critical:
        return True, "sufficient"
    if hints.get("next_action") == "synthesize":
        return True, hints.get("stop_reason") or "sufficient"
    if cycle_no > 1 and not new_ids:
        return True, "saturated"
    if cycle_no >= max_cycles:
        return True, "max_cycles"
    return False, None
