"""Feature dump and fit report for scripts/agentic_search_skill/trust.py (cycle 1 only).

``dump`` runs cycle 1 in-process the way ``cycle.run_cycle`` does (the caller's task
turned into a query, the tree walked and read, every document matched and scored by
``engine.rank_documents``) and pickles, per issue, the best files' ``Scored`` and
``FileMatch`` rows with the keywords and the corpus, so that ``trust.assess`` can be
re-run offline on exactly what cycle 1 hands it. ``report`` runs ``assess`` on the dump
and prints, per split and for both together, every target of issue 12 sections 1-2,
before (score.py's scores) and after (trust.py's); ``fit`` prints the weights and
knots that a fit on both splits, and on each alone, gives (paste the first into
trust.py). The dump is of one ranking: after a change to score.py or query.py, dump
again into a fresh ``--cache``. "Before" for clear is cycle.py's sufficient rule
(three files at 0.7+ and no quoted name unmatched), hints' synthesize left out.

Usage::

    python3 bench/trust_features.py dump --jobs 2          # both splits, ~10 min
    python3 bench/trust_features.py fit
    python3 bench/trust_features.py report                 # the shipped parameters
    python3 bench/trust_features.py report --cv 10         # held-out, 10-fold
    python3 bench/trust_features.py report --fit python    # multilang = out of split
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Dict, List, Optional, Sequence

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(PROJECT, "scripts"))

from agentic_search_skill import cycle as cycle_mod  # noqa: E402
from agentic_search_skill.engine import rank_documents  # noqa: E402
from agentic_search_skill.score import task_words  # noqa: E402
from agentic_search_skill import trust  # noqa: E402

SHARED = "/work/shared/bench"
SPLITS = {
    "python": os.path.join(SHARED, "swebench-lite-dev.jsonl"),
    "multilang": os.path.join(SHARED, "multilang-dev.jsonl"),
}
DEFAULT_TREES = "/work/trees"
DEFAULT_CACHE = "/work/bench-out/trust"
# Files kept per issue: the report counts over the top 20; the rest let assess see
# how many files share the top evidence.
KEEP_FILES = 200
TOP = 20


def cycle1_inputs(root: str, task: str) -> tuple:
    """(documents, keywords, task text) of cycle 1, by the cycle's own stages: the typed
    stages (plan -> dispatch) where cycle.py has them, the earlier helpers otherwise."""
    if hasattr(cycle_mod, "plan"):
        from agentic_search_skill.request import Request
        from agentic_search_skill.state import LoopState
        state = LoopState(root=root)
        p = cycle_mod.plan(state, Request(state_path="", state_shown="", task=task), {})
        d = cycle_mod.dispatch(root, p, cycle_mod.Env(), state.max_file_bytes)
        return [doc for doc in d.docs if doc.rel not in d.hidden], list(p.query.keywords), p.task
    steer = cycle_mod.Steering(task=task)
    patterns, keywords, excludes = cycle_mod._initial_query({}, steer)
    _walked, _entries, docs, _b, _u = cycle_mod._dispatch(root, cycle_mod._Query(patterns, keywords, excludes), steer)
    return docs, keywords, task


def dump_one(args: tuple) -> str:
    inst, trees, cache_dir, split = args
    out = os.path.join(cache_dir, split, inst["instance_id"] + ".pkl")
    if os.path.exists(out):
        return f"{inst['instance_id']} cached"
    root = os.path.join(trees, inst["instance_id"])
    if not os.path.isdir(root):
        return f"{inst['instance_id']} no tree"
    t0 = time.perf_counter()
    docs, keywords, task = cycle1_inputs(root, inst["problem_statement"])
    scored, matches, corpus = rank_documents(docs, keywords, task_words(task), {}, None)
    kept = scored[:KEEP_FILES]
    rec = {
        "instance": inst["instance_id"], "repo": inst["repo"], "split": split,
        "language": inst.get("language", "python"), "gold": list(inst["gold_files"]),
        "scored": kept, "matches": {s.rel: matches[s.rel] for s in kept},
        "keywords": list(keywords), "corpus": corpus, "n_scored": len(scored),
        "seconds": time.perf_counter() - t0,
    }
    os.makedirs(os.path.dirname(out), exist_ok=True)
    tmp = out + ".tmp"
    with open(tmp, "wb") as fh:
        pickle.dump(rec, fh)
    os.replace(tmp, out)
    return f"{inst['instance_id']} {rec['seconds']:.1f}s"


def load_split(split: str) -> List[dict]:
    with open(SPLITS[split], encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def cmd_dump(ns: argparse.Namespace) -> int:
    jobs = []
    for split in ns.splits:
        for inst in load_split(split):
            jobs.append((inst, ns.trees, ns.cache, split))
    with ProcessPoolExecutor(max_workers=ns.jobs) as pool:
        for n, msg in enumerate(pool.map(dump_one, jobs, chunksize=1), 1):
            print(f"[{n}/{len(jobs)}] {msg}", file=sys.stderr, flush=True)
    return 0


def load_dump(cache_dir: str, split: str) -> List[dict]:
    d = os.path.join(cache_dir, split)
    recs = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        if name.endswith(".pkl"):
            with open(os.path.join(d, name), "rb") as fh:
                recs.append(pickle.load(fh))
    return recs


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump", help="run cycle 1 per issue and cache what assess needs")
    d.add_argument("--splits", nargs="+", default=["multilang", "python"], choices=sorted(SPLITS))
    d.add_argument("--trees", default=DEFAULT_TREES)
    d.add_argument("--cache", default=DEFAULT_CACHE)
    d.add_argument("--jobs", type=int, default=2)
    r = sub.add_parser("report", help="targets before and after trust.assess, per split")
    r.add_argument("--cache", default=DEFAULT_CACHE)
    r.add_argument("--fit", choices=["both", "python", "multilang"], help="refit the weights first (exploration)")
    r.add_argument("--l2", type=float, default=1.0)
    r.add_argument("--knots", type=float, nargs=2)
    r.add_argument("--cv", type=int, default=0, help="after = held-out predictions of a k-fold fit")
    r.add_argument("--standing", type=float)
    f = sub.add_parser("fit", help="fit trust.WEIGHTS on the dump (both splits, each alone)")
    f.add_argument("--cache", default=DEFAULT_CACHE)
    f.add_argument("--l2", type=float, default=1.0)
    ns = p.parse_args(argv)
    if ns.cmd == "dump":
        return cmd_dump(ns)
    if ns.cmd == "fit":
        return cmd_fit(ns)
    return cmd_report(ns)


# ---------------------------------------------------------------- fit

def features(rec: dict) -> Optional[tuple]:
    """(feature vector, first file is gold) of one issue; None when nothing scored."""
    ev = trust.evidence(rec["scored"], rec["matches"], rec["keywords"], rec["corpus"])
    if ev is None:
        return None
    f = ev.features()
    return [f[n] for n, _ in trust.WEIGHTS[1:]], rec["scored"][0].rel in set(rec["gold"])


def fit_logistic(xs: List[Sequence[float]], ys: List[bool], l2: float) -> List[float]:
    """Weights (bias first) of an L2-regularised logistic regression, by Newton steps."""
    rows = [[1.0] + list(x) for x in xs]
    d = len(rows[0])
    w = [0.0] * d
    for _ in range(50):
        grad = [0.0] * d
        hess = [[0.0] * d for _ in range(d)]
        for x, y in zip(rows, ys):
            z = sum(a * b for a, b in zip(w, x))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            for j in range(d):
                grad[j] += (p - float(y)) * x[j]
                for k in range(d):
                    hess[j][k] += p * (1 - p) * x[j] * x[k]
        for j in range(1, d):  # the bias is not shrunk
            grad[j] += l2 * w[j]
            hess[j][j] += l2
        step = solve(hess, grad)
        w = [a - b for a, b in zip(w, step)]
        if max(abs(v) for v in step) < 1e-8:
            break
    return w


def solve(a: List[List[float]], b: List[float]) -> List[float]:
    """Gaussian elimination with partial pivoting (a is small)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[piv] = m[piv], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                for k in range(c, n + 1):
                    m[r][k] -= f * m[c][k]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


# Knot rules: the first files at or above P_IMPLEMENTS are gold at least this often ...
KNOT_PRECISION = 0.86
# ... and at most this share of the issues without real evidence score 0.5 or more.
KNOT_NO_EVIDENCE = 0.2


def fit_knots(recs: List[dict]) -> tuple:
    """(P_RELATED, P_IMPLEMENTS) by the two knot rules, under the current weights."""
    rows = []
    for r in recs:
        ev = trust.evidence(r["scored"], r["matches"], r["keywords"], r["corpus"])
        gold = set(r["gold"])
        rows.append((trust.confidence_of(ev), r["scored"][0].rel in gold,
                     not any(s.rel in gold for s in r["scored"][:TOP])))
    rows.sort(key=lambda t: -t[0])
    p_imp, hits = 1.0, 0
    for k, (p, ok, _) in enumerate(rows, 1):
        hits += ok
        if k >= 20 and hits / k >= KNOT_PRECISION:
            p_imp = p
    none = sorted((p for p, _, no in rows if no), reverse=True)
    p_rel = none[int(KNOT_NO_EVIDENCE * len(none))] if none else 0.5
    return min(p_rel, p_imp - 0.01), p_imp


def cmd_fit(ns: argparse.Namespace) -> int:
    names = [n for n, _ in trust.WEIGHTS]
    recs = {s: [r for r in load_dump(ns.cache, s) if r["scored"]] for s in SPLITS}
    data = {s: [f for f in map(features, recs[s]) if f] for s in SPLITS}
    fits = {}
    for label, use in (("both", list(SPLITS)), ("python", ["python"]), ("multilang", ["multilang"])):
        xs = [x for s in use for x, _ in data[s]]
        ys = [y for s in use for _, y in data[s]]
        fits[label] = fit_logistic(xs, ys, ns.l2)
        saved = trust.WEIGHTS
        trust.WEIGHTS = tuple(zip(names, fits[label]))
        knots = fit_knots([r for s in use for r in recs[s]])
        trust.WEIGHTS = saved
        print(f"fit on {label} ({len(xs)} issues): " + ", ".join(
            f"{n}={w:+.3f}" for n, w in zip(names, fits[label]))
            + f"; P_RELATED={knots[0]:.3f} P_IMPLEMENTS={knots[1]:.3f}")
        if label == "both":
            block = ["WEIGHTS = ("] + [f"    (\"{n}\", {w:.3f})," for n, w in zip(names, fits[label])]
            block += [")", f"P_RELATED = {knots[0]:.3f}", f"P_IMPLEMENTS = {knots[1]:.3f}"]
            print("\n".join(block), file=sys.stderr)  # paste-ready for trust.py
    return 0


# ---------------------------------------------------------------- report

BANDS = ((0.0, 0.2), (0.2, 0.5), (0.5, 0.8), (0.8, 1.01))


def issue_view(rec: dict, after: bool) -> dict:
    """Per issue: the top-20 scores (before or after), gold flags, clear and generic."""
    sc = rec["scored"]
    gold = set(rec["gold"])
    if after:
        a = trust.assess(sc, rec["matches"], rec["keywords"], rec["corpus"])
        scores = list(a.scores[:TOP])
        clear, generic, conf = a.clear, a.generic, a.confidence
        assert all(x >= y for x, y in zip(a.scores, a.scores[1:])), rec["instance"]
    else:
        scores = [s.score for s in sc[:TOP]]
        high = sum(1 for s in sc if s.score >= 0.7)
        clear, generic, conf = high >= 3 and not critical_gap(rec), None, None
    flags = [s.rel in gold for s in sc[:TOP]]
    return {"scores": scores, "gold": flags, "clear": clear, "generic": generic,
            "no_evidence": not any(flags), "conf": conf}


def critical_gap(rec: dict) -> bool:
    """cycle._stop's critical gap, over the kept files (a quoted name nothing matched)."""
    ms = list(rec["matches"].values())
    for i, kw in enumerate(rec["keywords"]):
        if kw.kind in ("given", "identifier", "path") and not any(m.counts[i] or m.in_path[i] for m in ms):
            return True
    return False


def pct(a: int, b: int) -> str:
    return f"{a}/{b} = {100.0 * a / b:.1f}%" if b else f"{a}/0"


def targets(views: List[dict]) -> List[tuple]:
    n = len(views)
    hi = [v for v in views if v["scores"] and v["scores"][0] >= 0.8]
    hi_gold = sum(1 for v in hi if v["gold"][0])
    low = [(s, g) for v in views for s, g in zip(v["scores"], v["gold"]) if s < 0.5]
    low_gold = sum(1 for _, g in low if g)
    none = [v for v in views if v["no_evidence"]]
    none_low = sum(1 for v in none if not v["scores"] or v["scores"][0] < 0.5)
    clear = [v for v in views if v["clear"]]
    clear_gold = sum(1 for v in clear if v["gold"] and v["gold"][0])
    clear_generic = sum(1 for v in clear if v["generic"])
    return [
        ("top >= 0.8 (target >= 40%)", pct(len(hi), n)),
        ("  ... top gold (target >= 80%)", pct(hi_gold, len(hi))),
        ("top-20 files < 0.5 that are gold (target <= 10%)", pct(low_gold, len(low))),
        ("no gold in top 20: top < 0.5 (target all)", pct(none_low, len(none))),
        ("clear after cycle 1 (target >= 40%)", pct(len(clear), n)),
        ("  ... top gold (target >= 85%)", pct(clear_gold, len(clear))),
        ("generic evidence (issues)", str(sum(1 for v in views if v["generic"]))),
        ("clear on generic evidence (target 0)", str(clear_generic) if clear_generic is not None else "-"),
    ]


def bands(views: List[dict]) -> List[tuple]:
    out = []
    for lo, hi in BANDS:
        cell = [g for v in views for s, g in zip(v["scores"], v["gold"]) if lo <= s < hi]
        out.append((f"{lo:.1f}-{min(hi, 1.0):.1f}", len(cell), sum(cell)))
    return out


def fit_into_trust(recs: List[dict], l2: float) -> None:
    """Set trust.WEIGHTS and the knots to what a fit on ``recs`` gives."""
    data = [f for f in map(features, recs) if f]
    w = fit_logistic([x for x, _ in data], [y for _, y in data], l2)
    trust.WEIGHTS = tuple((n, v) for (n, _), v in zip(trust.WEIGHTS, w))
    trust.P_RELATED, trust.P_IMPLEMENTS = fit_knots(recs)


def cross_validated(recs: Dict[str, List[dict]], folds: int, l2: float) -> Dict[str, List[dict]]:
    """Per split, each issue's after-view from a model fitted without its fold (both
    splits pooled, issues dealt to folds in a fixed order)."""
    pooled = [(s, i) for s in sorted(recs) for i in range(len(recs[s]))]
    views: Dict[str, List[Optional[dict]]] = {s: [None] * len(recs[s]) for s in recs}
    saved = (trust.WEIGHTS, trust.P_RELATED, trust.P_IMPLEMENTS)
    for k in range(folds):
        held = {key for j, key in enumerate(pooled) if j % folds == k}
        fit_into_trust([recs[s][i] for s, i in pooled if (s, i) not in held], l2)
        for s, i in held:
            views[s][i] = issue_view(recs[s][i], True)
    trust.WEIGHTS, trust.P_RELATED, trust.P_IMPLEMENTS = saved
    return views  # type: ignore[return-value]


def cmd_report(ns: argparse.Namespace) -> int:
    recs = {s: [r for r in load_dump(ns.cache, s) if r["scored"]] for s in SPLITS}
    cv = cross_validated(recs, ns.cv, ns.l2) if ns.cv else None
    if ns.fit:
        use = list(SPLITS) if ns.fit == "both" else [ns.fit]
        fit_into_trust([r for s in use for r in recs[s]], ns.l2)
        if ns.knots:
            trust.P_RELATED, trust.P_IMPLEMENTS = ns.knots
        if ns.standing is not None:
            trust.STANDING_EXP = ns.standing
        print("weights fitted on " + ns.fit + ": " + ", ".join(f"{n}={v:+.3f}" for n, v in trust.WEIGHTS))
    groups = [("python", ["python"]), ("multilang", ["multilang"]), ("both", ["python", "multilang"])]
    for label, use in groups:
        rs = [r for s in use for r in recs[s]]
        before = [issue_view(r, False) for r in rs]
        after = [v for s in use for v in cv[s]] if cv else [issue_view(r, True) for r in rs]
        print(f"\n### {label} ({len(rs)} issues, cycle 1)\n")
        print("| target | before | after |\n|---|---|---|")
        for (name, b), (_, a) in zip(targets(before), targets(after)):
            print(f"| {name} | {b} | {a} |")
        print("\n| score band (top-20 files) | before: files, gold | after: files, gold |\n|---|---|---|")
        for (band, nb, gb), (_, na, ga) in zip(bands(before), bands(after)):
            print(f"| {band} | {nb}, {pct(gb, nb).split(' = ')[-1]} | {na}, {pct(ga, na).split(' = ')[-1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
