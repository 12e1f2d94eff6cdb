"""What the loop says about its ranking, and what it costs: the loop tables of localize.py.

``bench/localize.py`` records, per issue, the tool's final ranking with its scores, cycle 1's
ranking and decision (``next_action`` and ``done``), the characters each call printed and,
with ``--reader``, the order in which a simulated reader opened files. This module turns
those per-issue rows (plain dicts, as written to ``--out``) into markdown tables:

- ``reliability_table`` — does a score mean what the rubric says (per score band, the share
  of ranked files that are gold)?
- ``decision_table`` — per cycle-1 decision, how often the top file was gold.
- ``chars_table`` — characters printed per cycle and per issue.
- ``cycles_table`` — do the cycles after the first add anything (cycle 1's ranking against
  the final one)?
- ``reader_table`` — the simulated reader (judging or not) against reading cycle 1's
  ranking in order.

Every function returns ``""`` when the rows hold none of what it needs (rows written by an
older harness, a ``--no-tool`` run), so a report never fails on old files.
"""
from __future__ import annotations

import math
import statistics
from typing import Dict, List, Optional, Sequence, Tuple

# Score bands of the rubric: 0.8-1.0 "implements the target", below 0.5 "related at most";
# 0.7 and 0.2 split the middle and the bottom so a calibration shift shows.
BANDS: Tuple[Tuple[float, float, str], ...] = (
    (0.8, math.inf, "0.8–1.0"),
    (0.7, 0.8, "0.7–0.8"),
    (0.5, 0.7, "0.5–0.7"),
    (0.2, 0.5, "0.2–0.5"),
    (-math.inf, 0.2, "< 0.2"),
)
HIGH = 0.8  # the rubric's "implements the target": issue 12 wants the top file there and gold
LOW = 0.5  # below this the rubric says "related at most": such files should rarely be gold
DEEP = 20  # no gold file in the top 20 (the default --limit): the tool had no real evidence
READS = (3, 5, 10)  # reads an agent can afford, issue 12's "all gold read within k reads"
P90 = 0.9  # the tail the character budget is set on


# ---------------------------------------------------------------- helpers

def tool_recs(rows: Sequence[dict]) -> List[Tuple[dict, dict]]:
    """(row, tool record) of every row whose tool ran without error."""
    out = []
    for row in rows:
        rec = row.get("systems", {}).get("tool")
        if rec is not None and not rec.get("error"):
            out.append((row, rec))
    return out


def ids_of(ranking: Sequence) -> List[str]:
    """The ids of a recorded ranking (``[[id, score], ...]`` or plain ids)."""
    return [r[0] if isinstance(r, (list, tuple)) else r for r in ranking]


def all_within(ids: Sequence[str], gold: Sequence[str], k: int) -> bool:
    """True when every gold file is among the first k ids (Acc@k's test)."""
    head = set(ids[:k])
    return bool(gold) and all(g in head for g in gold)


def reads_needed(reads: Sequence[str], gold: Sequence[str]) -> Optional[int]:
    """How many reads until every gold file was read; None when one never was."""
    pos: Dict[str, int] = {}
    for i, fid in enumerate(reads, 1):
        pos.setdefault(fid, i)
    if not gold or any(g not in pos for g in gold):
        return None
    return max(pos[g] for g in gold)


def band_of(score: float) -> str:
    """The label of the band holding ``score``."""
    for lo, hi, label in BANDS:
        if lo <= score < hi:
            return label
    return BANDS[-1][2]


def pct(num: float, den: float) -> str:
    """``12.3%`` or ``—`` when there is nothing to divide by."""
    return f"{100.0 * num / den:.1f}%" if den else "—"


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in (0, 1]) of a non-empty sequence."""
    s = sorted(values)
    return s[max(0, math.ceil(q * len(s)) - 1)]


def top_is_gold(ranking: Sequence, gold: Sequence[str]) -> bool:
    """True when the first ranked file is a gold file."""
    ids = ids_of(ranking)
    return bool(ids) and ids[0] in gold


# ---------------------------------------------------------------- tables

def ranking_of(rec: dict, which: str) -> Optional[list]:
    """The recorded ranking ``which`` ("final" or "cycle1") of a tool record, or None."""
    if which == "cycle1":
        c1 = rec.get("cycle1")
        return c1.get("ranking") if isinstance(c1, dict) else None
    return rec.get("ranking")


def reliability_table(rows: Sequence[dict], which: str = "final") -> str:
    """Per score band of a ranking (the final one, or cycle 1's): files and the share that
    are gold; then the top file at >= HIGH, files below LOW, and the top score where no
    gold is in the top DEEP."""
    recs = [(row, dict(rec, ranking=ranking_of(rec, which))) for row, rec in tool_recs(rows)
            if ranking_of(rec, which) is not None]
    if not recs:
        return ""
    files = {label: [0, 0] for _, _, label in BANDS}
    low = [0, 0]
    high_issues = high_gold = 0
    deep_tops: List[float] = []
    unscored = 0
    for row, rec in recs:
        gold = set(row.get("gold", []))
        ranking = rec["ranking"]
        for fid, score in ranking:
            if score is None:
                unscored += 1
                continue
            cell = files[band_of(score)]
            cell[0] += 1
            cell[1] += fid in gold
            if score < LOW:
                low[0] += 1
                low[1] += fid in gold
        top = ranking[0][1] if ranking and ranking[0][1] is not None else None
        if top is not None and top >= HIGH:
            high_issues += 1
            high_gold += ranking[0][0] in gold
        if not gold & set(ids_of(ranking[:DEEP])):
            deep_tops.append(top if top is not None else 0.0)
    n = len(recs)
    lines = ["| score band | files | gold | gold share |", "|---|---:|---:|---:|"]
    for _, _, label in BANDS:
        total, hit = files[label]
        lines.append(f"| {label} | {total} | {hit} | {pct(hit, total)} |")
    lines += ["", "| measure | value |", "|---|---:|",
              f"| issues whose top file scores ≥ {HIGH} | {high_issues} of {n} ({pct(high_issues, n)}) |",
              f"| … whose top file is gold | {high_gold} of {high_issues} ({pct(high_gold, high_issues)}) |",
              f"| ranked files scoring < {LOW} that are gold | {low[1]} of {low[0]} ({pct(low[1], low[0])}) |",
              f"| issues with no gold file in the top {DEEP} | {len(deep_tops)} of {n} |"]
    if deep_tops:
        by_band = {label: 0 for _, _, label in BANDS}
        for s in deep_tops:
            by_band[band_of(s)] += 1
        spread = ", ".join(f"{label}: {c}" for label, c in by_band.items() if c)
        lines.append(f"| … their top score: median; by band | {statistics.median(deep_tops):.2f}; {spread} |")
    if unscored:
        lines.append(f"| ranked files without a score (not banded) | {unscored} |")
    return "\n".join(lines) + "\n"


def decision_table(rows: Sequence[dict]) -> str:
    """Per cycle-1 decision (next_action, done): issues, and how often the top file was gold."""
    recs = [(row, rec) for row, rec in tool_recs(rows) if isinstance(rec.get("cycle1"), dict)]
    if not recs:
        return ""
    groups: Dict[Tuple[str, bool], List[Tuple[bool, bool]]] = {}
    stopped: List[bool] = []
    for row, rec in recs:
        c1 = rec["cycle1"]
        key = (str(c1.get("next_action") or "—"), bool(c1.get("done")))
        hit1 = top_is_gold(c1.get("ranking", []), row.get("gold", []))
        groups.setdefault(key, []).append((hit1, top_is_gold(rec.get("ranking", []), row.get("gold", []))))
        if rec.get("cycles", 0) == 1:
            stopped.append(hit1)
    n = len(recs)
    lines = ["| cycle-1 next_action | done | issues | top file gold, cycle 1 | top file gold, final |",
             "|---|---|---:|---:|---:|"]
    for (action, done), hits in sorted(groups.items()):
        h1 = sum(a for a, _ in hits)
        hf = sum(b for _, b in hits)
        lines.append(f"| {action} | {'yes' if done else 'no'} | {len(hits)} ({pct(len(hits), n)}) | "
                     f"{pct(h1, len(hits))} | {pct(hf, len(hits))} |")
    lines.append(f"| stopped after cycle 1 | | {len(stopped)} ({pct(len(stopped), n)}) | "
                 f"{pct(sum(stopped), len(stopped))} | |")
    return "\n".join(lines) + "\n"


def chars_table(rows: Sequence[dict]) -> str:
    """Characters of stdout per call (every cycle, cycle 1) and per issue (the whole loop)."""
    per_issue: List[int] = []
    per_cycle: List[int] = []
    first: List[int] = []
    for _row, rec in tool_recs(rows):
        chars = rec.get("chars_per_cycle")
        if not chars:
            continue
        per_cycle += chars
        first.append(chars[0])
        per_issue.append(sum(chars))
    if not per_issue:
        return ""
    lines = ["| characters printed | calls | median | p90 |", "|---|---:|---:|---:|"]
    for label, vals in (("per cycle", per_cycle), ("cycle 1", first), ("per issue (whole loop)", per_issue)):
        lines.append(f"| {label} | {len(vals)} | {statistics.median(vals):,.0f} | "
                     f"{percentile(vals, P90):,.0f} |")
    return "\n".join(lines) + "\n"


def _acc_cells(pairs: Sequence[Tuple[Sequence[str], Sequence[str]]]) -> str:
    """Acc@1/5/10 cells for (ids, gold) pairs."""
    n = len(pairs)
    return " | ".join(pct(sum(all_within(ids, g, k) for ids, g in pairs), n) for k in (1, 5, 10))


def cycles_table(rows: Sequence[dict]) -> str:
    """Cycle 1's ranking against the final one, on all issues and where cycle 2+ ran."""
    recs = [(row, rec) for row, rec in tool_recs(rows) if isinstance(rec.get("cycle1"), dict)]
    if not recs:
        return ""
    later = [(row, rec) for row, rec in recs if rec.get("cycles", 0) >= 2]
    lines = ["| ranking | issues | Acc@1 | Acc@5 | Acc@10 |", "|---|---:|---:|---:|---:|"]
    for label, group in (("all issues", recs), ("issues where cycle 2+ ran", later)):
        c1 = [(ids_of(rec["cycle1"].get("ranking", [])), row.get("gold", [])) for row, rec in group]
        fin = [(ids_of(rec.get("ranking", [])), row.get("gold", [])) for row, rec in group]
        lines.append(f"| cycle 1, {label} | {len(group)} | {_acc_cells(c1)} |")
        lines.append(f"| final, {label} | {len(group)} | {_acc_cells(fin)} |")
    return "\n".join(lines) + "\n"


def reader_table(rows: Sequence[dict]) -> str:
    """All gold read within 3 / 5 / 10 reads: the simulated reader against cycle 1 in order.

    The reader's reads are recorded in every run; ``reader`` in a record says whether its
    judgments were sent to the tool (``--reader``), so a run without it measures the same
    reading order with the tool left unjudged.
    """
    recs = [(row, rec) for row, rec in tool_recs(rows)
            if "reads" in rec and isinstance(rec.get("cycle1"), dict)]
    if not recs:
        return ""
    scopes: List[Tuple[str, List[Tuple[dict, dict]]]] = [("all", recs)]
    for lang in sorted({row.get("language", "") for row, _ in recs}):
        scopes.append((lang, [(r, c) for r, c in recs if r.get("language", "") == lang]))
    multi = [(r, c) for r, c in recs if len(r.get("gold", [])) > 1]
    if multi:
        scopes.append(("multi-file fixes", multi))
    head = " | ".join(f"≤ {k}" for k in READS)
    lines = [f"| issues | n | cycle 1 in order: {head} | reader: {head} |",
             "|---|---:|" + "---:|" * (2 * len(READS))]
    for label, group in scopes:
        base = [reads_needed(ids_of(c["cycle1"].get("ranking", [])), r.get("gold", [])) for r, c in group]
        read = [reads_needed(c.get("reads", []), r.get("gold", [])) for r, c in group]
        cells = [pct(sum(1 for x in vals if x is not None and x <= k), len(group))
                 for vals in (base, read) for k in READS]
        lines.append(f"| {label} | {len(group)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
