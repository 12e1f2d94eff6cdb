"""Localization benchmark: does the loop land on the files a real issue's fix changed?

For each SWE-bench instance the harness lays out the repository at ``base_commit``
(``git archive | tar -x`` into ``--trees/<instance_id>``, reused when present), runs
``scripts/retrieve_loop.py`` the way an agent that accepts the tool's own proposals
would (cycle 1 with ``--task <problem statement>``, then ``--state`` alone until
``done`` or 3 cycles), and scores the final ``ranking`` and ``context``. On the same
tree it scores whole-file BM25 (``bench/bm25.py``) over every text file and over
``*.py`` only, and prints one markdown table with the tool's ratio to ``bm25-py``.

Usage::

    python3 bench/localize.py                       # whole dev split, tool + baselines
    python3 bench/localize.py --repo psf/requests --no-baseline
    python3 bench/localize.py --no-tool --out /tmp/bm25.json
    python3 bench/localize.py --instances django__django-11099 --delete-trees

The table goes to stdout, progress to stderr, per-issue rows to ``--out``. A failing
instance scores 0 for the failing system and is listed in the table's notes.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bm25  # noqa: E402  (bench/ is not a package; the harness runs as a script)

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_DATA = os.path.join(os.path.dirname(PROJECT), "shared", "bench", "swebench-lite-dev.jsonl")
DEFAULT_TREES = "/work/trees"  # outside the project: trees are never committed
DEFAULT_MIRRORS = "/work/.mirror"  # bare clones laid out as <owner>+<name>/repo
DEFAULT_TOOL = [sys.executable, os.path.join(PROJECT, "scripts", "retrieve_loop.py")]
# repo field -> mirror directory name, where it is not <owner>+<name> (SWE-bench's own mirror)
MIRROR_NAMES = {"django/django": "swe-bench+django__django"}
MAX_CYCLES = 3  # the agent stops after three cycles at most
TOOL_TIMEOUT = 900.0  # seconds per tool call before the instance counts as failed
SYSTEMS = ("tool", "bm25-all", "bm25-py")
KS = (1, 5, 10)


# ---------------------------------------------------------------- metrics

def gold_ranks(ranking: Sequence[str], gold: Sequence[str]) -> Dict[str, Optional[int]]:
    """Return each gold file's 1-based rank in ``ranking`` (None when absent)."""
    pos: Dict[str, int] = {}
    for i, fid in enumerate(ranking, 1):
        pos.setdefault(fid, i)
    return {g: pos.get(g) for g in gold}


def acc_at(ranks: Dict[str, Optional[int]], k: int) -> float:
    """1.0 when every gold file is in the top k (LocAgent / Agentless convention)."""
    return 1.0 if ranks and all(r is not None and r <= k for r in ranks.values()) else 0.0


def recall_at(ranks: Dict[str, Optional[int]], k: int) -> float:
    """Fraction of gold files in the top k."""
    if not ranks:
        return 0.0
    return sum(1 for r in ranks.values() if r is not None and r <= k) / len(ranks)


def reciprocal_rank(ranks: Dict[str, Optional[int]]) -> float:
    """1 / rank of the first gold file; 0 when none is ranked."""
    found = [r for r in ranks.values() if r is not None]
    return 1.0 / min(found) if found else 0.0


def context_scores(context: Sequence[str], gold: Sequence[str]) -> Tuple[float, float]:
    """(precision, recall) of the context files; precision is 0 for an empty context."""
    ctx = list(dict.fromkeys(context))
    hit = len(set(ctx) & set(gold))
    precision = hit / len(ctx) if ctx else 0.0
    recall = hit / len(set(gold)) if gold else 0.0
    return precision, recall


# ---------------------------------------------------------------- trees

def parse_git_dirs(items: Sequence[str]) -> Dict[str, str]:
    """Parse ``owner/name=PATH`` overrides; raise SystemExit on a malformed one."""
    out: Dict[str, str] = {}
    for item in items:
        repo, sep, path = item.partition("=")
        if not sep or "/" not in repo or not path:
            raise SystemExit(f"localize: --git-dir {item!r}: expected owner/name=PATH")
        out[repo] = path
    return out


def git_dir_for(repo: str, mirrors: str, overrides: Dict[str, str]) -> str:
    """Return the bare git dir holding ``repo`` (``owner/name``)."""
    if repo in overrides:
        return overrides[repo]
    name = MIRROR_NAMES.get(repo, repo.replace("/", "+"))
    return os.path.join(mirrors, name, "repo")


def lay_out(git_dir: str, commit: str, dest: str) -> bool:
    """Extract ``commit`` into ``dest`` unless it is already there; True when extracted.

    Extraction goes to a sibling temporary directory that is renamed into place, so a
    tree that exists is always complete.
    """
    if os.path.isdir(dest):
        return False
    parent = os.path.dirname(os.path.abspath(dest))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tmp-" + os.path.basename(dest) + "-", dir=parent)
    try:
        archive = subprocess.Popen(["git", "--git-dir", git_dir, "archive", commit],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        tar = subprocess.run(["tar", "-x", "-C", tmp], stdin=archive.stdout,
                             stderr=subprocess.PIPE)
        archive.stdout.close()
        err = archive.stderr.read().decode("utf-8", "replace").strip()
        if archive.wait() != 0 or tar.returncode != 0:
            msg = err or tar.stderr.decode("utf-8", "replace").strip()
            raise RuntimeError(f"git archive {commit[:12]} from {git_dir}: {msg[:200]}")
        os.rename(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return True


# ---------------------------------------------------------------- systems

@dataclass(frozen=True)
class ToolRun:
    """The tool's final answer for one instance."""

    ranking: List[str]
    context: List[str]
    cycles: int
    seconds: List[float]
    stop_reason: str


def run_tool(cmd: Sequence[str], root: str, task: str, timeout: float = TOOL_TIMEOUT) -> ToolRun:
    """Run the loop as an accepting agent: cycle 1 with --task, then --state alone."""
    state_dir = tempfile.mkdtemp(prefix="localize-state-")
    state = os.path.join(state_dir, "state.json")
    seconds: List[float] = []
    out: dict = {}
    try:
        for cycle in range(1, MAX_CYCLES + 1):
            argv = list(cmd) + ["--root", root, "--state", state]
            if cycle == 1:
                argv += ["--task", task]
            t0 = time.perf_counter()
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
            seconds.append(time.perf_counter() - t0)
            if proc.returncode != 0:
                err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
                raise RuntimeError(f"cycle {cycle} exit {proc.returncode}: "
                                   f"{err[-1][:300] if err else 'no stderr'}")
            try:
                out = json.loads(proc.stdout)
            except json.JSONDecodeError as exc:
                raise RuntimeError(f"cycle {cycle}: stdout is not JSON ({exc})") from None
            if out.get("done"):
                break
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
    return ToolRun(
        ranking=[r["id"] for r in out.get("ranking", [])],
        context=[c["id"] for c in out.get("context", [])],
        cycles=int(out.get("cycle", len(seconds))),
        seconds=seconds,
        stop_reason=str(out.get("stop_reason", "")),
    )


def run_bm25(root: str, text: str) -> Dict[str, Tuple[List[str], float]]:
    """Rank ``root`` with both BM25 variants; return {system: (ids, seconds)}.

    One pass reads every file; a ``.py`` file's reading time counts for both variants,
    any other file's for ``bm25-all`` only, so each variant's time is what it alone costs.
    """
    query = bm25.query_terms(text)
    wanted = list(query)
    files: List[bm25.FileStats] = []
    t_all = t_py = 0.0
    for rel, path in bm25.walk(root):
        t0 = time.perf_counter()
        data = bm25.read_text(path)
        if data is not None:
            files.append(bm25.file_stats(rel, data, wanted))
        dt = time.perf_counter() - t0
        t_all += dt
        if rel.endswith(".py"):
            t_py += dt
    out: Dict[str, Tuple[List[str], float]] = {}
    for name, py_only, t_read in (("bm25-all", False, t_all), ("bm25-py", True, t_py)):
        t0 = time.perf_counter()
        ids = [i for i, _ in bm25.rank(files, query, py_only=py_only)]
        out[name] = (ids, t_read + time.perf_counter() - t0)
    return out


# ---------------------------------------------------------------- one instance

@dataclass(frozen=True)
class Job:
    """Everything a worker process needs for one instance."""

    instance: dict
    git_dir: str
    trees: str
    tool_cmd: Tuple[str, ...]
    run_tool: bool
    run_baseline: bool
    delete_tree: bool


def system_row(ranking: List[str], gold: List[str], seconds: float,
               error: str = "") -> dict:
    """Per-issue record of one system: gold ranks, top 5, time, error."""
    return {"ranks": gold_ranks(ranking, gold), "top5": ranking[:5],
            "seconds": round(seconds, 3), "error": error}


def evaluate(job: Job) -> dict:
    """Lay out, run and score one instance; never raises (errors go in the row)."""
    inst = job.instance
    gold = list(inst["gold_files"])
    row: dict = {"instance": inst["instance_id"], "repo": inst["repo"], "gold": gold,
                 "systems": {}, "error": ""}
    tree = os.path.join(job.trees, inst["instance_id"])
    try:
        lay_out(job.git_dir, inst["base_commit"], tree)
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        row["error"] = f"layout: {exc}"
        return row
    try:
        if job.run_tool:
            row["systems"]["tool"] = tool_row(job, tree, inst["problem_statement"], gold)
        if job.run_baseline:
            try:
                for name, (ids, secs) in run_bm25(tree, inst["problem_statement"]).items():
                    row["systems"][name] = system_row(ids, gold, secs)
            except (OSError, ValueError) as exc:
                for name in ("bm25-all", "bm25-py"):
                    row["systems"][name] = system_row([], gold, 0.0, f"{type(exc).__name__}: {exc}")
    finally:
        if job.delete_tree:
            shutil.rmtree(tree, ignore_errors=True)
    return row


def tool_row(job: Job, tree: str, task: str, gold: List[str]) -> dict:
    """Run the tool on one tree; a failure becomes an error row that scores 0."""
    try:
        run = run_tool(job.tool_cmd, tree, task)
    except (OSError, RuntimeError, subprocess.SubprocessError, KeyError, TypeError,
            ValueError) as exc:
        rec = system_row([], gold, 0.0, f"{type(exc).__name__}: {exc}")
        rec.update(cycles=0, seconds_per_cycle=[], context=[], ctx_precision=0.0,
                   ctx_recall=0.0, stop_reason="")
        return rec
    rec = system_row(run.ranking, gold, sum(run.seconds))
    p, r = context_scores(run.context, gold)
    rec.update(cycles=run.cycles, seconds_per_cycle=[round(s, 3) for s in run.seconds],
               context=run.context, ctx_precision=round(p, 4), ctx_recall=round(r, 4),
               stop_reason=run.stop_reason)
    return rec


# ---------------------------------------------------------------- report

def summarize(rows: Sequence[dict], system: str) -> Optional[dict]:
    """Mean metrics of ``system`` over ``rows``; an instance it lacks scores 0."""
    n = len(rows)
    if n == 0 or not any(system in r["systems"] for r in rows):
        return None
    tot = {f"acc@{k}": 0.0 for k in KS}
    tot.update({"r@5": 0.0, "r@10": 0.0, "mrr": 0.0, "ctx_p": 0.0, "ctx_r": 0.0})
    cycles = seconds = 0.0
    n_cycles = 0
    for row in rows:
        rec = row["systems"].get(system)
        if rec is None:
            continue
        ranks = rec["ranks"]
        for k in KS:
            tot[f"acc@{k}"] += acc_at(ranks, k)
        tot["r@5"] += recall_at(ranks, 5)
        tot["r@10"] += recall_at(ranks, 10)
        tot["mrr"] += reciprocal_rank(ranks)
        tot["ctx_p"] += rec.get("ctx_precision", 0.0)
        tot["ctx_r"] += rec.get("ctx_recall", 0.0)
        if system == "tool":
            cycles += rec.get("cycles", 0)
            n_cycles += len(rec.get("seconds_per_cycle", []))
        seconds += rec.get("seconds", 0.0)
    out = {key: val / n for key, val in tot.items()}
    if system == "tool":
        out["cycles"] = cycles / n
        out["s/cycle"] = seconds / n_cycles if n_cycles else 0.0
    else:
        out["cycles"] = None
        out["s/cycle"] = seconds / n  # one pass = one "cycle"
        out["ctx_p"] = out["ctx_r"] = None
    return out


COLUMNS = (("Acc@1", "acc@1", "pct"), ("Acc@5", "acc@5", "pct"), ("Acc@10", "acc@10", "pct"),
           ("R@5", "r@5", "pct"), ("R@10", "r@10", "pct"), ("MRR", "mrr", "f2"),
           ("ctx precision", "ctx_p", "f2"), ("ctx recall", "ctx_r", "f2"),
           ("cycles", "cycles", "f2"), ("s/cycle", "s/cycle", "f2"))


def fmt(value: Optional[float], kind: str) -> str:
    """Format one table cell."""
    if value is None:
        return "—"
    return f"{100 * value:.1f}%" if kind == "pct" else f"{value:.2f}"


def table(rows: Sequence[dict]) -> str:
    """The markdown report: one row per system, the tool ÷ bm25-py ratio, footnotes."""
    head = "| system | " + " | ".join(c[0] for c in COLUMNS) + " |"
    lines = [head, "|---|" + "---:|" * len(COLUMNS)]
    sums = {s: summarize(rows, s) for s in SYSTEMS}
    for s in SYSTEMS:
        if sums[s] is not None:
            lines.append(f"| {s} | " + " | ".join(fmt(sums[s][key], kind) for _, key, kind in COLUMNS) + " |")
    if sums["tool"] and sums["bm25-py"]:
        cells = []
        for _, key, _kind in COLUMNS:
            a, b = sums["tool"][key], sums["bm25-py"][key]
            cells.append("—" if a is None or b is None or b == 0 else f"{a / b:.2f}×")
        lines.append("| tool ÷ bm25-py | " + " | ".join(cells) + " |")
    n = len(rows)
    repos = sorted({r["repo"] for r in rows})
    lines += ["", f"{n} instances ({', '.join(repos)}). Acc@k: all gold files in the top k; "
              "R@k: mean share of gold files in the top k; MRR: 1/rank of the first gold file "
              "(0 when unranked).",
              "ctx precision: share of the tool's final `context` files that are gold, 0 when "
              "the context is empty; ctx recall: share of gold files in it. BM25 has no context (—).",
              "s/cycle: the tool's mean wall time per call (instances run in parallel with "
              "--jobs, so calls share the CPU); for BM25 one pure-Python pass per issue "
              "(reading, tokenizing, scoring)."]
    failed = [(r["instance"], s, rec["error"]) for r in rows
              for s, rec in sorted(r["systems"].items()) if rec.get("error")]
    failed += [(r["instance"], "all", r["error"]) for r in rows if r.get("error")]
    if failed:
        lines.append("")
        lines.append(f"Failures, scored 0 ({len(failed)}):")
        lines += [f"- {inst} [{sys_}]: {err[:200]}" for inst, sys_, err in failed]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- main

def load_instances(path: str, repos: Sequence[str], ids: Sequence[str],
                   limit: Optional[int]) -> List[dict]:
    """Read the jsonl data file and apply the --repo / --instances / --limit filters."""
    try:
        with open(path, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    except OSError as exc:
        raise SystemExit(f"localize: --data {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise SystemExit(f"localize: --data {path}: line {exc.lineno}: not JSON") from None
    if repos:
        rows = [r for r in rows if r["repo"] in repos]
    if ids:
        known = {r["instance_id"] for r in rows}
        missing = [i for i in ids if i not in known]
        if missing:
            raise SystemExit(f"localize: --instances: unknown {', '.join(missing)}")
        rows = [r for r in rows if r["instance_id"] in ids]
    return rows[:limit] if limit is not None else rows


def progress(done: int, total: int, row: dict, elapsed: float) -> str:
    """One stderr line per finished instance: gold rank per system."""
    parts = []
    for s in SYSTEMS:
        rec = row["systems"].get(s)
        if rec is None:
            continue
        ranks = [r for r in rec["ranks"].values() if r is not None]
        cell = "ERR" if rec.get("error") else (str(min(ranks)) if ranks else "-")
        parts.append(f"{s}={cell}")
    if row.get("error"):
        parts.append("ERROR " + row["error"][:120])
    return f"[{done}/{total}] {row['instance']} rank {' '.join(parts)} ({elapsed:.0f}s)"


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=DEFAULT_DATA, help="jsonl of instances (default: %(default)s)")
    ap.add_argument("--trees", default=DEFAULT_TREES, help="where trees are laid out (default: %(default)s)")
    ap.add_argument("--mirrors", default=DEFAULT_MIRRORS,
                    help="directory of bare clones as <owner>+<name>/repo (default: %(default)s)")
    ap.add_argument("--git-dir", action="append", default=[], metavar="OWNER/NAME=PATH",
                    help="bare git dir for one repository, overriding --mirrors")
    ap.add_argument("--limit", type=int, help="first N selected instances")
    ap.add_argument("--repo", action="append", default=[], metavar="OWNER/NAME",
                    help="only this repository (repeatable)")
    ap.add_argument("--instances", default="", help="comma-separated instance ids")
    ap.add_argument("--out", help="write per-issue rows to this JSON file")
    ap.add_argument("--jobs", type=int, default=2, help="instances run in parallel (default: 2)")
    ap.add_argument("--no-baseline", action="store_true", help="skip BM25 (fast iteration on the tool)")
    ap.add_argument("--no-tool", action="store_true", help="skip the tool (baselines only)")
    ap.add_argument("--tool-cmd", help="command that runs one cycle (default: python3 scripts/retrieve_loop.py)")
    ap.add_argument("--delete-trees", action="store_true", help="remove each tree after scoring it")
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the benchmark; print the table; write --out."""
    args = build_parser().parse_args(argv)
    if args.no_tool and args.no_baseline:
        print("localize: --no-tool and --no-baseline leave nothing to run", file=sys.stderr)
        return 2
    overrides = parse_git_dirs(args.git_dir)
    ids = [i.strip() for i in args.instances.split(",") if i.strip()]
    instances = load_instances(args.data, args.repo, ids, args.limit)
    if not instances:
        print("localize: no instances selected", file=sys.stderr)
        return 1
    tool_cmd = tuple(shlex.split(args.tool_cmd) if args.tool_cmd else DEFAULT_TOOL)
    if not args.no_tool and not args.tool_cmd and not os.path.isfile(DEFAULT_TOOL[1]):
        print(f"localize: {DEFAULT_TOOL[1]} not found (use --no-tool or --tool-cmd)", file=sys.stderr)
        return 1
    jobs = [Job(inst, git_dir_for(inst["repo"], args.mirrors, overrides),
                os.path.abspath(args.trees), tool_cmd, not args.no_tool,
                not args.no_baseline, args.delete_trees) for inst in instances]
    rows = run_all(jobs, max(1, args.jobs))
    order = {inst["instance_id"]: i for i, inst in enumerate(instances)}
    rows.sort(key=lambda r: order[r["instance"]])
    if args.out:
        tmp = args.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"data": os.path.abspath(args.data), "rows": rows}, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, args.out)
    sys.stdout.write(table(rows))
    return 0


def failed_row(job: Job, where: str, exc: BaseException) -> dict:
    """The row of an instance whose evaluation died outright: it scores 0 everywhere."""
    inst = job.instance
    return {"instance": inst["instance_id"], "repo": inst["repo"], "gold": inst["gold_files"],
            "systems": {}, "error": f"{where}: {type(exc).__name__}: {exc}"}


def safe_evaluate(job: Job) -> dict:
    """``evaluate`` with a last-resort catch, so one instance never ends the run."""
    try:
        return evaluate(job)
    except Exception as exc:  # deliberate: any bug in one instance is reported, not fatal
        return failed_row(job, "harness", exc)


def run_all(jobs: List[Job], n_jobs: int) -> List[dict]:
    """Evaluate every job, in a process pool when n_jobs > 1; progress on stderr."""
    t0 = time.perf_counter()
    rows: List[dict] = []
    if n_jobs == 1:
        for job in jobs:
            rows.append(safe_evaluate(job))
            print(progress(len(rows), len(jobs), rows[-1], time.perf_counter() - t0),
                  file=sys.stderr, flush=True)
        return rows
    with ProcessPoolExecutor(max_workers=n_jobs) as pool:
        futures = {pool.submit(safe_evaluate, job): job for job in jobs}
        for fut in as_completed(futures):
            try:
                row = fut.result()
            except Exception as exc:  # a dead worker (BrokenProcessPool) must not end the run
                row = failed_row(futures[fut], "worker", exc)
            rows.append(row)
            print(progress(len(rows), len(jobs), row, time.perf_counter() - t0),
                  file=sys.stderr, flush=True)
    return rows


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
