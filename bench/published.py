#!/usr/bin/env python3
"""The tool beside published dense retrievers, with a BM25 measured in the same run.

    python3 bench/published.py RUN.json [RUN.json ...]

Reads runs of ``localize.py --out`` (their rows pooled; run them with the baseline, not
``--no-baseline``) and prints file-level Acc@1 / @3 / @5 / @10 of the tool's cycle 1, its
final ranking and ``bm25-lang``, then the published rows below and each retriever's
figures divided by BM25's in its own measurement.

Acc@k is the share of issues whose gold files are all in the top k. The published rows
cut a gold list longer than k to k (``acc_at_k`` of SweRank's and LocAgent's evaluation
code); with one gold file per issue, as in every SWE-bench Lite issue, the two agree.

The published rows are not of the same issues: SweRank's Table 1 is 274 of SWE-bench
Lite's 300 issues (those whose fix changes an existing function), ranked by retrievers
of functions whose first hit of each file makes the file ranking. A figure divided by
the BM25 of its own measurement is the comparison that survives that difference, and
only roughly: the issue sets and BM25 set-ups differ.
"""
from __future__ import annotations

import sys
from typing import Dict, List, Optional, Sequence, Tuple

import localize

KS = (1, 3, 5, 10)

# SweRank (Reddy et al., 2025, arXiv 2505.07849), Table 1, file level, SWE-bench Lite,
# 274 issues: Acc@1, @3, @5 in percent (no file-level Acc@10 is reported). Read from the
# paper's PDF in github.com/SalesforceAIResearch/SweRank.
SOURCE = "SweRank (arXiv 2505.07849) Table 1, SWE-bench Lite, 274 issues"
PUBLISHED: Tuple[Tuple[str, Tuple[float, float, float]], ...] = (
    ("BM25", (38.69, 51.82, 61.68)),
    ("Jina-Code-v2 (161M)", (43.43, 71.17, 80.29)),
    ("CodeSage-large-v2 (1.3B)", (47.81, 69.34, 78.10)),
    ("CodeRankEmbed (137M)", (52.55, 77.74, 84.67)),
    ("SFR-Embedding-2 (7B)", (58.03, 80.29, 83.94)),
    ("GTE-Qwen2-7B-Instruct (7B)", (65.33, 82.85, 89.78)),
    ("SweRankEmbed-Small (137M)", (66.42, 86.50, 90.88)),
    ("SweRankEmbed-Large (7B)", (72.63, 91.24, 94.16)),
)


def ranking_ranks(rec: dict, gold: Sequence[str], cycle1: bool) -> Dict[str, Optional[int]]:
    """Gold ranks in the tool's final ranking, or in cycle 1's."""
    if not cycle1:
        return rec.get("ranks", {})
    ranking = [p for p, _score in (rec.get("cycle1") or {}).get("ranking", [])]
    return localize.gold_ranks(ranking, gold)


def accuracy(rows: Sequence[dict], system: str, cycle1: bool = False) -> Optional[List[float]]:
    """Acc@k in percent for each k of KS; an issue the system lacks scores 0."""
    if not rows or not any(system in r["systems"] for r in rows):
        return None
    tot = [0.0] * len(KS)
    for row in rows:
        rec = row["systems"].get(system)
        if rec is None:
            continue
        ranks = ranking_ranks(rec, row.get("gold", []), cycle1)
        for i, k in enumerate(KS):
            tot[i] += localize.acc_at(ranks, k)
    return [100 * t / len(rows) for t in tot]


def cells(values: Sequence[Optional[float]]) -> str:
    return " | ".join("—" if v is None else f"{v:.1f}" for v in values)


def ratios(values: Sequence[Optional[float]], base: Sequence[Optional[float]]) -> str:
    return " | ".join("—" if v is None or not b else f"{v / b:.2f}×" for v, b in zip(values, base))


def report(rows: Sequence[dict]) -> str:
    """The two tables, as Markdown."""
    measured = [("tool, cycle 1", accuracy(rows, "tool", cycle1=True)),
                ("tool, final ranking", accuracy(rows, "tool")),
                ("bm25-lang", accuracy(rows, "bm25-lang"))]
    measured = [(name, acc) for name, acc in measured if acc is not None]
    base = dict(measured).get("bm25-lang")
    head = "| retriever | " + " | ".join(f"Acc@{k}" for k in KS)
    lines = [f"Measured here, {len(rows)} issues:", "",
             head + " | " + " | ".join(f"÷ BM25 @{k}" for k in KS) + " |",
             "|---|" + "---:|" * (2 * len(KS))]
    for name, acc in measured:
        rel = ratios(acc, base) if base else " | ".join("—" for _ in KS)
        lines.append(f"| {name} | {cells(acc)} | {rel} |")
    pub_base = PUBLISHED[0][1]
    lines += ["", f"Published, {SOURCE} (no file-level Acc@10 reported):", "",
              head + " | " + " | ".join(f"÷ BM25 @{k}" for k in KS[:3]) + " |",
              "|---|" + "---:|" * (len(KS) + 3)]
    for name, acc in PUBLISHED:
        lines.append(f"| {name} | {cells(list(acc) + [None])} | {ratios(acc, pub_base)} |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or any(a.startswith("-") for a in args):
        print("usage: published.py RUN.json [RUN.json ...]", file=sys.stderr)
        return 2
    rows: List[dict] = []
    for path in args:
        rows.extend(localize.load_rows(path))
    print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
