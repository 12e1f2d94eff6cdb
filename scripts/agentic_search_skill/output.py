"""The JSON boundary: a cycle's view and the loop's memory -> what the caller reads.

An agent reads every character printed, so the default output is the decision and the
evidence behind it, nothing repeated: the next move and why, the query, the best files
of this cycle (less those the call judged) with their reasons and best lines, the
loop's ranking so far, the context to read, what the next cycle changes and what
matched nothing. ``--full``
(``detail=FULL``) adds what the default leaves out: every result field of the seed's
contract (title, summary, tags, related, missing, matched), hints.py's advisory hints,
the whole next query and all walk statistics.

Layout: one JSON object, keys in a fixed order, one line per list entry, so a reader
that cuts long output still sees every key. ``--text`` is the same for people.

Example::

    >>> ranking_entries({"a.py": ScoreEntry(0.9, 1, "defines x")}, 5)
    [{'id': 'a.py', 'score': 0.9}]
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any, Collection, Mapping, Optional, Sequence

from hints import _BIDI_CONTROLS  # (hints.py's own list: a name that reorders the text around it)

from .records import CycleView, ResultView
from .report import LINE_CHARS, SHOWN_FIRST, SUMMARY_LINES
from .refine import GAP_FOCUS
from .rubric import HIGH_RELEVANCE, two_places
from .state import LoopState, ScoreEntry, ranked_scores, shown_of
from .walk import has_magic

COMPACT, FULL = "compact", "full"
# Results described in the default output (the rest are in the ranking, id and score).
RESULTS_SHOWN = 5
# Lines quoted per described result, and their length, in the default output.
# Three: on the dev issues whose fix commit is known (bench/HISTORY.md), a quoted line lay
# within 10 lines of the fix's hunks for 54.0% of the gold files in `results` with three
# lines, 45.6% with two (and 44.1% with the first two in file order, before), for 8% more
# characters per cycle. The report for people keeps the best two (its budget is 3,000).
LINES_SHOWN = SUMMARY_LINES
TEXT_LINES_SHOWN = SHOWN_FIRST
# A reason longer than this is cut (the strongest signals come first).
REASON_CHARS = 160
# Keywords the default JSON lists in ``query`` (the task's names come first, then its
# words by weight; ``keywords_left_out`` counts the rest, ``--full`` lists them): a long
# report's 60 keywords were a fifth of a cycle's characters, read again every cycle.
QUERY_KEYWORDS_SHOWN = 24
# Gaps the default JSON lists (names and messages first, then the title's words by
# weight; the body's plain words never: ``gaps_left_out`` counts the rest, ``--full``
# lists them).
GAPS_SHOWN = 8
# Keywords and focus lines listed in the text report.
TEXT_KEYWORDS = 12
TEXT_REASON_CHARS = 70
TEXT_LINES = 3


Ranked = Sequence[tuple[str, float, ScoreEntry]]  # state.ranked_scores' answer


def ranking_entries(scores: Mapping[str, ScoreEntry], limit: int,
                    ranked: Optional[Ranked] = None) -> list[dict[str, Any]]:
    """Every file scored so far, best first, at most ``limit`` (``ranked``: the scores
    already ordered by :func:`ranked_scores`). A file the caller judged says so
    (``"judged": true``): it stands at the caller's score, and "read the next of the
    ranking" is about the others (a trial's agent, reading down the ranking, was sent
    back to two files it had judged 0.2, above the fix's file at 0.16)."""
    ranked = ranked_scores(scores) if ranked is None else ranked
    return [{"id": rel, "score": shown, "judged": True} if e.judged else {"id": rel, "score": shown}
            for rel, shown, e in ranked[:limit]]


def context_entries(scores: Mapping[str, ScoreEntry], limit: int, with_reason: bool,
                    ranked: Optional[Ranked] = None) -> list[dict[str, Any]]:
    """The files to read: the rubric's high relevance and above, best first."""
    out = []
    for rel, shown, e in ranked_scores(scores) if ranked is None else ranked:
        if shown < HIGH_RELEVANCE or len(out) >= limit:
            break
        entry = {"id": rel, "score": shown, "reason": e.reason} if with_reason else {"id": rel, "score": shown}
        if e.judged:
            entry["judged"] = True  # (as in ranking)
        out.append(entry)
    return out


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _cut_reason(text: str, n: int) -> str:
    """A reason cut at the last whole signal that fits (``…; path names x; …``), never
    inside a word or a count."""
    if len(text) <= n:
        return text
    cut = text.rfind("; ", 0, n - 2)
    return text[:cut] + "; …" if cut > 0 else _cut(text, n)


def _excludes_shown(excludes: Sequence[str], full: bool) -> tuple[list[str], int]:
    """The caller's excludes as the default output shows them: the patterns, and how many
    single files it left out (``--full`` lists those too)."""
    if full:
        return list(excludes), 0
    globs = [e for e in excludes if has_magic(e)]
    return globs, len(excludes) - len(globs)


def _apart(view: CycleView, state: LoopState) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The view's excludes: the caller's, and the files the loop set aside. A view a
    state of an older version kept holds both in ``excludes``: the loop's are those its
    next query still sets aside."""
    if view.set_aside or state.proposal is None or not state.proposal.set_aside:
        return view.excludes, view.set_aside
    aside = frozenset(state.proposal.set_aside)
    return (tuple(e for e in view.excludes if e not in aside), tuple(e for e in view.excludes if e in aside))


def _result(r: ResultView, detail: str, shown: Mapping[str, float]) -> dict[str, Any]:
    """A result as printed. Its score is the one the ranking shows for the file (the loop's,
    read downward), so that one file never shows two scores in one output; ``--full`` adds
    this cycle's own score as ``cycle_score`` where the two differ."""
    score = shown.get(r.id, r.score)
    if detail == FULL:
        out = r.to_json()
        out["summary"] = "\n".join(out.pop("lines"))
        if score != r.score:
            out["cycle_score"], out["score"] = r.score, score
        return out
    return {"id": r.id, "score": score, "reason": _cut_reason(r.reason, REASON_CHARS),
            "lines": [_cut(line, LINE_CHARS) for line in r.lines[:LINES_SHOWN]]}


def to_output(view: CycleView, state: LoopState, limit: int, detail: str = COMPACT,
              judged_now: Collection[str] = (), asked_anew: bool = False) -> dict[str, Any]:
    """The output for one cycle (or the final answer of a finished loop). ``judged_now``:
    the files this call judged, which the caller has just read; ``asked_anew``: this call
    gave words of its own (``--keywords``, ``--task``), for which a file read earlier
    may hold new lines."""
    d = view.decision
    full = detail == FULL
    # The caller has read the files it judged, in this call or an earlier one: results are
    # the best of the rest (the judged files stand in the ranking at the caller's
    # scores). A file judged earlier shows again where a later query puts it, with its
    # lines for that query, when the caller asked something new (or with ``--full``);
    # the loop's own proposal sends it back to no one.
    earlier = () if full or asked_anew else (rel for rel, e in state.scores.items() if e.judged)
    read = set(judged_now) | set(earlier)
    unread = [r for r in view.results if r.id not in read]
    if not full:
        # A file this round sets aside (far below the round's best file) is not offered
        # to read beside the files that pass it; a round whose every file falls below
        # shows its best anyway, as where to start.
        set_aside = set(view.change.excludes)
        passing = [r for r in unread if r.id not in set_aside]
        unread = passing or unread
    results = unread[:limit] if full else unread[:min(limit, RESULTS_SHOWN)]
    callers, set_aside = _apart(view, state)
    excludes, excluded_files = _excludes_shown(callers, full)
    ranked = ranked_scores(shown_of(state))
    shown = {rel: score for rel, score, _e in ranked}
    out: dict[str, Any] = {
        "cycle": view.cycle, "max_cycles": view.max_cycles, "done": d.done, "stop_reason": d.reason,
        "next_action": d.action, "why": d.why, "confidence": d.confidence,
        "query": {"keywords": list(view.keywords), "patterns": list(view.patterns), "excludes": excludes},
        # (In the ranking's order, at its scores: a round's own order beside the ranking's
        # scores read as out of order - 0.74 listed before 0.86.)
        "results": sorted((_result(r, detail, shown) for r in results), key=lambda e: (-e["score"], e["id"])),
        "ranking": ranking_entries(state.scores, limit, ranked),
        "context": context_entries(state.scores, limit, with_reason=full, ranked=ranked),
        "next_query": view.change.to_json(),
        "gaps": list(view.gaps),
    }
    if d.done and not full:
        del out["next_query"]  # the loop stopped: nothing to act on (--full keeps it)
    elif not full:
        # A gap is listed once, in ``gaps``; focus keeps what gaps does not say.
        out["next_query"]["focus"] = [f for f in out["next_query"]["focus"] if not f.startswith(GAP_FOCUS)]
        # The files the loop sets aside are its own bookkeeping (what later rounds stop
        # showing in results): named, or marked in ``ranking``, they read as "the tool
        # drops this file" - a trial's agent saw the fix's file so marked at 3rd - so the
        # default output leaves them to --full.
        del out["next_query"]["excludes"]
    shown_gaps = view.gaps[:min(GAPS_SHOWN, len(view.gaps) - view.prose_gaps)]
    if not full and len(shown_gaps) < len(view.gaps):
        out["gaps"] = list(shown_gaps)
        out["gaps_left_out"] = len(view.gaps) - len(shown_gaps)
    if not full and len(view.keywords) > QUERY_KEYWORDS_SHOWN:
        out["query"]["keywords"] = list(view.keywords[:QUERY_KEYWORDS_SHOWN])
        out["query"]["keywords_left_out"] = len(view.keywords) - QUERY_KEYWORDS_SHOWN
    if view.related:
        out["related"] = list(view.related)
    if excluded_files:
        out["query"]["excluded_files"] = excluded_files
    if set_aside:
        # (Apart from the caller's excludes: beside ``--exclude 'lib/**'`` a count of both
        # read as "your glob removed 13 files" to a trial's agent.)
        if full:
            out["query"]["set_aside"] = list(set_aside)
        else:
            out["query"]["set_aside_files"] = len(set_aside)
    if view.translated:
        out["query"]["translated"] = list(view.translated)
    if full:
        nq = state.proposal
        if nq is not None:
            # (The caller's excludes and the loop's set-aside files apart: in one list a
            # trial's agent read the fix's set-aside file as dropped from the search.)
            out["next_query"].update({"patterns": list(nq.patterns), "keywords": [k.text for k in nq.keywords],
                                      "excludes": list(nq.excludes), "set_aside": list(nq.set_aside)})
        out["stats"] = view.stats.to_json()
        out["hints"] = dict(view.hints or {})
    else:
        s = view.stats
        out["stats"] = {"files_read": s.files_read, "files_matched": s.files_matched}
        skipped = {k: v for k, v in s.walk_skipped if v}
        # A folder the walk could not list and a file the read could not open are both
        # unreadable: one count, the sum.
        for key, n in (("binary", s.binary_skipped), ("unreadable", s.unreadable_skipped)):
            if n:
                skipped[key] = skipped.get(key, 0) + n
        if skipped:
            out["stats"]["skipped"] = dict(sorted(skipped.items()))
    return out


def _dumps(value: Any, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only, allow_nan=False, separators=(", ", ": "))


def render_json(out: Mapping[str, Any], ascii_only: bool = False) -> str:
    """One JSON object: a key per line, a list entry per line; newline-terminated."""
    lines = ["{"]
    items = list(out.items())
    for n, (key, value) in enumerate(items):
        comma = "," if n < len(items) - 1 else ""
        if isinstance(value, list) and value:
            lines.append(f"  {_dumps(key, ascii_only)}: [")
            lines += [f"    {_dumps(v, ascii_only)}" + ("," if i < len(value) - 1 else "") for i, v in enumerate(value)]
            lines.append("  ]" + comma)
        else:
            lines.append(f"  {_dumps(key, ascii_only)}: {_dumps(value, ascii_only)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _safe(text: str, tabs: bool = True) -> str:
    """Text for a terminal: control characters (escape sequences) and bidirectional
    controls shown as escapes; a tab kept as it is when ``tabs`` (a quoted line of code),
    else shown as ``\\x09`` (a tab in a file's name reads as a gap between two names)."""
    return "".join(ch if (ch == "\t" and tabs) or (ch != "\t" and unicodedata.category(ch) not in ("Cc", "Cs")
                                                and ch not in _BIDI_CONTROLS)
                   else ("\\x%02x" % ord(ch) if ord(ch) < 0x100 else "\\u%04x" % ord(ch)) for ch in text)


def render_text(out: Mapping[str, Any]) -> str:
    """The human-readable report: the decision, the best files with their best lines,
    the context, and what the next cycle changes."""
    status = f"done ({out['stop_reason']})" if out["done"] else "continue"
    kws = out["query"]["keywords"]
    total = len(kws) + out["query"].get("keywords_left_out", 0)
    lines = [
        f"cycle {out['cycle']}/{out['max_cycles']} - {status}: {out['next_action']} "
        f"(confidence {two_places(out['confidence'])})",
        f"why: {out['why']}",
        f"query: {', '.join(kws[:TEXT_KEYWORDS])}" + (f" ... ({total} keywords)" if total > TEXT_KEYWORDS else ""),
    ]
    if out["query"].get("translated"):
        lines.append(f"translated: {', '.join(out['query']['translated'])}")
    lines += [
        f"files read: {out['stats']['files_read']}, matched: {out['stats']['files_matched']}",
        "",
        "ranking:",
    ]
    code: set[int] = set()  # the lines quoting a file's code (their tabs kept)
    described = {r["id"]: r for r in out["results"][:TEXT_LINES]}
    for r in out["ranking"]:
        detail = described.get(r["id"])
        reason = f"  ({_cut(detail['reason'], TEXT_REASON_CHARS)})" if detail \
            else "  (judged)" if r.get("judged") else ""
        lines.append(f"  {two_places(r['score'])}  {r['id']}{reason}")
        for quoted in (detail or {}).get("lines", [])[:TEXT_LINES_SHOWN]:
            code.add(len(lines))
            lines.append(f"          {_cut(quoted, LINE_CHARS)}")
    if not out["ranking"]:
        lines.append("  (none)")
    lines += ["", "context (read these): " + (", ".join(c["id"] for c in out["context"])
                                             or f"(nothing at {HIGH_RELEVANCE} or above yet)")]
    nq = out.get("next_query") or {"adds": []}
    if not out["done"] and nq["adds"]:
        lines.append(f"next cycle adds: {', '.join(nq['adds'])}")
    gaps = out["gaps"][:TEXT_KEYWORDS]
    more = len(out["gaps"]) - len(gaps) + out.get("gaps_left_out", 0)
    if gaps or more:
        # (the words left out counted, as the query line counts its keywords: an empty
        # line read as "everything matched")
        said = (", ".join(gaps) + (f" (+{more} more, --full)" if more else "")) if gaps \
            else f"{more} plain words of the task (--full)"
        lines.append(f"no file matches: {said}")
    if out.get("related"):
        lines.append(f"follow: {', '.join(out['related'])}")
    return "\n".join(_safe(line, i in code) for i, line in enumerate(lines)) + "\n"


def render(out: Mapping[str, Any], as_text: bool, ascii_only: bool = False) -> str:
    """JSON or the text report."""
    return render_text(out) if as_text else render_json(out, ascii_only)
