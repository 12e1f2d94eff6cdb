"""Localization benchmark: does the loop land on the files a real issue's fix changed?

For each instance of a dev split the harness lays out the repository at ``base_commit``
(``git archive | tar -x`` into ``--trees/<instance_id>``, reused when present), runs
``scripts/retrieve_loop.py`` the way an agent that accepts the tool's own proposals
would (cycle 1 with ``--task <problem statement>``, then ``--state`` alone until
``done`` or 3 cycles), and scores the final ``ranking`` and ``context``. On the same
tree it scores whole-file BM25 (``bench/bm25.py``) over every text file (``bm25-all``)
and over the issue's language's files (``bm25-lang``), and prints the markdown tables:
all issues with the tool's ratio to ``bm25-lang``, per language, and the loop's own
tables (``bench/loopreport.py``: score reliability, cycle-1 decisions, characters
printed, cycles that add and, with ``--reader``, a simulated reader that judges files).

Usage::

    python3 bench/localize.py                       # Python dev split, tool + baselines
    python3 bench/localize.py --split both --out /tmp/rows.json
    python3 bench/localize.py --repo psf/requests --no-baseline
    python3 bench/localize.py --split multilang --reader --no-baseline
    python3 bench/localize.py --from-rows /tmp/rows.json      # the tables of a saved run

The tables go to stdout, progress to stderr, per-issue rows to ``--out``. A failing
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
import loopreport  # noqa: E402

PROJECT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def find_shared_bench(project: str) -> str:
    """The nearest ``shared/bench`` in an ancestor of the checkout (the main checkout has
    it at ``../shared``, a worktree under ``wt/`` at ``../../shared``); else ``../shared``."""
    here = project
    while os.path.dirname(here) != here:
        here = os.path.dirname(here)
        cand = os.path.join(here, "shared", "bench")
        if os.path.isdir(cand):
            return cand
    return os.path.join(os.path.dirname(project), "shared", "bench")


SHARED_BENCH = find_shared_bench(PROJECT)
SPLITS = {"python": (os.path.join(SHARED_BENCH, "swebench-lite-dev.jsonl"),),
          "multilang": (os.path.join(SHARED_BENCH, "multilang-dev.jsonl"),)}
SPLITS["both"] = SPLITS["python"] + SPLITS["multilang"]
DEFAULT_DATA = SPLITS["python"][0]
DEFAULT_LANGUAGE = "python"  # the first split has no ``language`` field: all its issues are Python
DEFAULT_TREES = "/work/trees"  # outside the project: trees are never committed
DEFAULT_MIRRORS = "/work/.mirror"  # bare clones laid out as <owner>+<name>/repo
DEFAULT_TOOL = [sys.executable, os.path.join(PROJECT, "scripts", "retrieve_loop.py")]
# repo field -> mirror directory name, where it is not <owner>+<name> (SWE-bench's own mirror)
MIRROR_NAMES = {"django/django": "swe-bench+django__django"}
MAX_CYCLES = 3  # the agent stops after three cycles at most
TOOL_TIMEOUT = 900.0  # seconds per tool call before the instance counts as failed
READS_PER_CYCLE = 3  # the simulated reader opens the three best unread files after each cycle
SYSTEMS = ("tool", "bm25-all", "bm25-lang")
OLD_NAMES = {"bm25-py": "bm25-lang"}  # older rows' *.py baseline: bm25-lang on a Python issue
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
    """Return the bare git dir holding ``repo`` (``owner/name``).

    Overrides and the mirror names compare case-insensitively: GitHub names do, and the
    data spells some in lower case (``fasterxml/jackson-core`` is ``FasterXML+jackson-core``
    on disk). An exact directory wins; otherwise the one whose name matches ignoring case.
    """
    folded = {k.lower(): v for k, v in overrides.items()}
    if repo in overrides or repo.lower() in folded:
        return overrides.get(repo) or folded[repo.lower()]
    names = {k.lower(): v for k, v in MIRROR_NAMES.items()}
    name = names.get(repo.lower(), repo.replace("/", "+"))
    if not os.path.isdir(os.path.join(mirrors, name)):
        try:
            found = sorted(d for d in os.listdir(mirrors) if d.lower() == name.lower())
        except OSError:
            found = []
        if found:
            name = found[0]
    return os.path.join(mirrors, name, "repo")


def missing_blobs(git_dir: str, commit: str) -> List[str]:
    """Paths of ``commit``'s tree whose blobs the clone lacks (a partial snapshot).

    ``git ls-tree -r -z`` lists the blobs, ``git cat-file --batch-check`` says which are
    missing. Returns [] when git fails here: ``git archive`` then reports the real error.
    """
    ls = subprocess.run(["git", "--git-dir", git_dir, "ls-tree", "-r", "-z", commit],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if ls.returncode != 0:
        return []
    blobs: List[Tuple[bytes, bytes]] = []
    for entry in ls.stdout.split(b"\0"):
        meta, _tab, path = entry.partition(b"\t")
        fields = meta.split()
        if len(fields) == 3 and fields[1] == b"blob":
            blobs.append((fields[2], path))
    if not blobs:
        return []
    check = subprocess.run(["git", "--git-dir", git_dir, "cat-file", "--batch-check"],
                           input=b"".join(sha + b"\n" for sha, _ in blobs),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    answers = check.stdout.split(b"\n")
    return [os.fsdecode(path) for (_sha, path), line in zip(blobs, answers)
            if line.endswith(b" missing")]


def lay_out(git_dir: str, commit: str, dest: str) -> bool:
    """Extract ``commit`` into ``dest`` unless it is already there; True when extracted.

    Extraction goes to a sibling temporary directory that is renamed into place, so a
    tree that exists is always complete. Blobs missing from the clone (snapshots that
    leave out very large files) are left out of the archive with ``:(exclude,literal)``
    pathspecs, and their paths listed on stderr.
    """
    if os.path.isdir(dest):
        return False
    parent = os.path.dirname(os.path.abspath(dest))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tmp-" + os.path.basename(dest) + "-", dir=parent)
    try:
        missing = missing_blobs(git_dir, commit)
        spec = ["--", "."] + [":(exclude,literal)" + p for p in missing] if missing else []
        if missing:
            print(f"localize: {os.path.basename(dest)}: {len(missing)} blob(s) missing from "
                  f"{git_dir}, left out: {', '.join(missing[:3])}{' …' if len(missing) > 3 else ''}",
                  file=sys.stderr)
        archive = subprocess.Popen(["git", "--git-dir", git_dir, "archive", commit] + spec,
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
class Cycle:
    """What one call printed that the reports need."""

    ranking: Tuple[Tuple[str, Optional[float]], ...]
    next_action: str
    done: bool
    chars: int
    why: str = ""


@dataclass(frozen=True)
class ToolRun:
    """The tool's final answer for one instance, with cycle 1's and the reader's trace."""

    ranking: Tuple[Tuple[str, Optional[float]], ...]
    context: List[str]
    cycles: int
    seconds: List[float]
    stop_reason: str
    chars: List[int]
    first: Cycle
    reads: Tuple[str, ...]
    judged: Tuple[int, ...]


def scored_ids(items) -> Tuple[Tuple[str, Optional[float]], ...]:
    """``[{"id", "score"}, ...]`` (or plain ids) as (id, score) pairs; odd entries skipped."""
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str):
            out.append((item, None))
        elif isinstance(item, dict) and isinstance(item.get("id"), str):
            score = item.get("score")
            out.append((item["id"], float(score) if isinstance(score, (int, float)) else None))
    return tuple(out)


def next_action_of(out: dict) -> str:
    """The call's decision: a top-level ``next_action``, else ``hints.next_action``.

    A decision given as an object is named by its ``action`` (or ``name``) field.
    """
    value = out.get("next_action")
    if value is None and isinstance(out.get("hints"), dict):
        value = out["hints"].get("next_action")
    if isinstance(value, dict):
        value = value.get("action", value.get("name"))
    return "" if value is None else str(value)


def parse_cycle(stdout: bytes, cycle: int) -> Tuple[dict, Cycle]:
    """Decode one call's stdout; RuntimeError when it is not a JSON object."""
    text = stdout.decode("utf-8", "replace")
    try:
        out = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RuntimeError(f"cycle {cycle}: stdout is not JSON ({exc})") from None
    if not isinstance(out, dict):
        raise RuntimeError(f"cycle {cycle}: stdout is JSON but not an object")
    return out, Cycle(ranking=scored_ids(out.get("ranking")), next_action=next_action_of(out),
                      done=bool(out.get("done")), chars=len(text),
                      why=out["why"] if isinstance(out.get("why"), str) else "")


def judge_args(judgements: Sequence[Tuple[str, float]]) -> List[str]:
    """``--judge PATH=SCORE ...``; a path starting with ``-`` is written ``./-…``."""
    if not judgements:
        return []
    return ["--judge"] + [("./" + p if p.startswith("-") else p) + f"={v:.1f}" for p, v in judgements]


def unsatisfied(out: dict, pending: Sequence[Tuple[str, float]], gold: set, reads: Sequence[str]) -> bool:
    """A simulated reader goes on after ``done`` while it has not read every gold file,
    has judgements to send and the loop has cycles left (the tool then runs a feedback
    cycle with them); an accepting agent (no gold) stops at ``done``."""
    if not gold or not pending or gold <= set(reads):
        return False
    cycle, limit = out.get("cycle"), out.get("max_cycles")
    return isinstance(cycle, int) and isinstance(limit, int) and cycle < limit


def run_tool(cmd: Sequence[str], root: str, task: str, timeout: float = TOOL_TIMEOUT,
             gold: Optional[Sequence[str]] = None) -> ToolRun:
    """Run the loop as an accepting agent: cycle 1 with --task, then --state alone.

    ``reads`` is the order in which a reader opens files: after each cycle the
    READS_PER_CYCLE best files of the ranking it has not read, after the loop down the
    final ranking. With ``gold`` the agent is that simulated reader and judges what it read
    on the next call (``--judge PATH=1.0`` for a gold file, ``PATH=0.0`` otherwise), and
    it is not satisfied by ``done`` while a gold file is unread: it judges on, and the
    tool runs its remaining cycles with the judgements (:func:`unsatisfied`). Without
    ``gold`` the same reads are recorded, nothing is sent and the loop ends at ``done``.
    """
    state_dir = tempfile.mkdtemp(prefix="localize-state-")
    state = os.path.join(state_dir, "state.json")
    seconds: List[float] = []
    cycles: List[Cycle] = []
    reads: List[str] = []
    judged: List[int] = []
    pending: List[Tuple[str, float]] = []
    out: dict = {}
    gold_set = set(gold or ())
    try:
        for cycle in range(1, MAX_CYCLES + 1):
            argv = list(cmd) + ["--root", root, "--state", state]
            if cycle == 1:
                argv += ["--task", task]
            argv += judge_args(pending)
            if cycle > 1:
                judged.append(len(pending))
            t0 = time.perf_counter()
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
            seconds.append(time.perf_counter() - t0)
            if proc.returncode != 0:
                err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
                raise RuntimeError(f"cycle {cycle} exit {proc.returncode}: "
                                   f"{err[-1][:300] if err else 'no stderr'}")
            out, info = parse_cycle(proc.stdout, cycle)
            cycles.append(info)
            new = [fid for fid, _ in info.ranking if fid not in reads][:READS_PER_CYCLE]
            reads += new
            if gold is not None:
                pending = [(fid, 1.0 if fid in gold_set else 0.0) for fid in new]
            if info.done and not unsatisfied(out, pending, gold_set, reads):
                break
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
    final = cycles[-1].ranking
    reads += [fid for fid, _ in final if fid not in reads]
    cycle_no = out.get("cycle", len(seconds))
    return ToolRun(
        ranking=final,
        context=[fid for fid, _ in scored_ids(out.get("context"))],
        cycles=int(cycle_no) if isinstance(cycle_no, (int, float)) else len(seconds),
        seconds=seconds,
        stop_reason=str(out.get("stop_reason") or ""),
        chars=[c.chars for c in cycles],
        first=cycles[0],
        reads=tuple(reads),
        judged=tuple(judged),
    )


def run_bm25(root: str, text: str, language: str = DEFAULT_LANGUAGE) -> Dict[str, Tuple[List[str], float]]:
    """Rank ``root`` with both BM25 variants; return {system: (ids, seconds)}.

    ``bm25-lang`` ranks the files with one of ``language``'s suffixes (``bm25.LANG_SUFFIXES``).
    One pass reads every file; a language file's reading time counts for both variants,
    any other file's for ``bm25-all`` only, so each variant's time is what it alone costs.
    """
    suffixes = bm25.LANG_SUFFIXES[language]
    query = bm25.query_terms(text)
    wanted = list(query)
    files: List[bm25.FileStats] = []
    t_all = t_lang = 0.0
    for rel, path in bm25.walk(root):
        t0 = time.perf_counter()
        data = bm25.read_text(path)
        if data is not None:
            files.append(bm25.file_stats(rel, data, wanted))
        dt = time.perf_counter() - t0
        t_all += dt
        if rel.endswith(suffixes):
            t_lang += dt
    out: Dict[str, Tuple[List[str], float]] = {}
    for name, ends, t_read in (("bm25-all", None, t_all), ("bm25-lang", suffixes, t_lang)):
        t0 = time.perf_counter()
        ids = [i for i, _ in bm25.rank(files, query, suffixes=ends)]
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
    reader: bool = False


def language_of(inst: dict) -> str:
    """The instance's ``language`` field; the first split has none and is Python."""
    return str(inst.get("language") or DEFAULT_LANGUAGE)


def system_row(ranking: List[str], gold: List[str], seconds: float,
               error: str = "") -> dict:
    """Per-issue record of one system: gold ranks, top 5, time, error."""
    return {"ranks": gold_ranks(ranking, gold), "top5": ranking[:5],
            "seconds": round(seconds, 3), "error": error}


def evaluate(job: Job) -> dict:
    """Lay out, run and score one instance; never raises (errors go in the row)."""
    inst = job.instance
    gold = list(inst["gold_files"])
    row: dict = {"instance": inst["instance_id"], "repo": inst["repo"],
                 "language": language_of(inst), "gold": gold, "systems": {}, "error": ""}
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
                ranked = run_bm25(tree, inst["problem_statement"], row["language"])
                for name, (ids, secs) in ranked.items():
                    row["systems"][name] = system_row(ids, gold, secs)
            except (OSError, ValueError) as exc:
                for name in ("bm25-all", "bm25-lang"):
                    row["systems"][name] = system_row([], gold, 0.0, f"{type(exc).__name__}: {exc}")
    finally:
        if job.delete_tree:
            shutil.rmtree(tree, ignore_errors=True)
    return row


def pairs(ranking: Sequence[Tuple[str, Optional[float]]]) -> List[list]:
    """A ranking as JSON ``[[id, score], ...]`` (score rounded, or null)."""
    return [[fid, None if sc is None else round(sc, 4)] for fid, sc in ranking]


def tool_row(job: Job, tree: str, task: str, gold: List[str]) -> dict:
    """Run the tool on one tree; a failure becomes an error row that scores 0."""
    try:
        run = run_tool(job.tool_cmd, tree, task, gold=gold if job.reader else None)
    except (OSError, RuntimeError, subprocess.SubprocessError, KeyError, TypeError,
            ValueError) as exc:
        rec = system_row([], gold, 0.0, f"{type(exc).__name__}: {exc}")
        rec.update(cycles=0, seconds_per_cycle=[], context=[], ctx_precision=0.0,
                   ctx_recall=0.0, stop_reason="", reader=job.reader)
        return rec
    rec = system_row([fid for fid, _ in run.ranking], gold, sum(run.seconds))
    p, r = context_scores(run.context, gold)
    rec.update(cycles=run.cycles, seconds_per_cycle=[round(s, 3) for s in run.seconds],
               context=run.context, ctx_precision=round(p, 4), ctx_recall=round(r, 4),
               stop_reason=run.stop_reason, chars_per_cycle=run.chars,
               ranking=pairs(run.ranking),
               cycle1={"ranking": pairs(run.first.ranking), "next_action": run.first.next_action,
                       "done": run.first.done, "why": run.first.why},
               reader=job.reader, reads=list(run.reads))
    if job.reader:
        rec.update(judged_per_call=list(run.judged))
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


def system_lines(rows: Sequence[dict], lead: str = "") -> List[str]:
    """One table row per system present in ``rows``; ``lead`` prefixes each row's cells."""
    lines = []
    for s in SYSTEMS:
        summ = summarize(rows, s)
        if summ is not None:
            lines.append(f"| {lead}{s} | " + " | ".join(fmt(summ[key], kind) for _, key, kind in COLUMNS) + " |")
    return lines


def ratio_line(rows: Sequence[dict]) -> Optional[str]:
    """The tool's figures divided by ``bm25-lang``'s, or None when either is missing."""
    tool, base = summarize(rows, "tool"), summarize(rows, "bm25-lang")
    if not tool or not base:
        return None
    cells = []
    for _, key, _kind in COLUMNS:
        a, b = tool[key], base[key]
        cells.append("—" if a is None or b is None or b == 0 else f"{a / b:.2f}×")
    return "| tool ÷ bm25-lang | " + " | ".join(cells) + " |"


LANG_COLUMNS = COLUMNS[:6]  # Acc@1/5/10, R@5, R@10, MRR: what compares across languages


def language_table(rows: Sequence[dict]) -> str:
    """Per language: issues, multi-file fixes, and each system's accuracy and recall."""
    langs = sorted({r.get("language", DEFAULT_LANGUAGE) for r in rows})
    lines = ["| language | issues | multi-file | system | " + " | ".join(c[0] for c in LANG_COLUMNS)
             + " | tool ÷ bm25-lang, Acc@10 |",
             "|---|---:|---:|---|" + "---:|" * (len(LANG_COLUMNS) + 1)]
    for lang in langs:
        group = [r for r in rows if r.get("language", DEFAULT_LANGUAGE) == lang]
        multi = sum(1 for r in group if len(r.get("gold", [])) > 1)
        sums = {s: summarize(group, s) for s in SYSTEMS}
        tool, base = sums["tool"], sums["bm25-lang"]
        ratio = (f"{tool['acc@10'] / base['acc@10']:.2f}×" if tool and base and base["acc@10"]
                 else "—")
        for s in SYSTEMS:
            if sums[s] is None:
                continue
            cells = " | ".join(fmt(sums[s][key], kind) for _, key, kind in LANG_COLUMNS)
            lines.append(f"| {lang} | {len(group)} | {multi} | {s} | {cells} | "
                         f"{ratio if s == 'tool' else ''} |")
    return "\n".join(lines) + "\n"


def table(rows: Sequence[dict]) -> str:
    """The markdown report: all issues by system with the ratio to bm25-lang, footnotes,
    then per language and the loop's tables (``loopreport``) where the rows allow them."""
    head = "| system | " + " | ".join(c[0] for c in COLUMNS) + " |"
    lines = [head, "|---|" + "---:|" * len(COLUMNS)] + system_lines(rows)
    ratio = ratio_line(rows)
    if ratio:
        lines.append(ratio)
    n = len(rows)
    repos = sorted({r["repo"] for r in rows})
    lines += ["", f"{n} instances ({', '.join(repos)}). Acc@k: all gold files in the top k; "
              "R@k: mean share of gold files in the top k; MRR: 1/rank of the first gold file "
              "(0 when unranked). bm25-lang: BM25 over the issue's language's files only.",
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
    judged = any(r["systems"].get("tool", {}).get("reader") for r in rows)
    # a reader run's final ranking carries the reader's 1.0 / 0.0: its cycle 1 is the tool's own
    which = "cycle1" if judged else "final"
    sections = [("Per language", language_table(rows)),
                ("Score reliability (tool, " + ("cycle 1's ranking" if judged else "final ranking") + ")",
                 loopreport.reliability_table(rows, which)),
                ("Cycle-1 decisions", loopreport.decision_table(rows)),
                ("Cycles that add (cycle 1's ranking against the final one)", loopreport.cycles_table(rows)),
                ("Characters printed (the tool's stdout)", loopreport.chars_table(rows)),
                ("Simulated reader: all gold files read within k reads"
                 + (", judging what it reads" if judged else ", no judgments sent"),
                 loopreport.reader_table(rows))]
    for title, body in sections:
        if body:
            lines += ["", f"#### {title}", "", body.rstrip("\n")]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- main

REQUIRED = ("instance_id", "repo", "base_commit", "problem_statement", "gold_files")


def read_jsonl(path: str) -> List[dict]:
    """The instances of one data file, checked: required fields, a known language."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.readlines()
    except OSError as exc:
        raise SystemExit(f"localize: --data {path}: {exc.strerror}") from None
    rows = []
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            inst = json.loads(line)
        except json.JSONDecodeError:
            raise SystemExit(f"localize: --data {path}: line {no}: not JSON") from None
        lacking = [f for f in REQUIRED if not isinstance(inst, dict) or f not in inst]
        if lacking:
            raise SystemExit(f"localize: --data {path}: line {no}: no {', '.join(lacking)}")
        if language_of(inst) not in bm25.LANG_SUFFIXES:
            raise SystemExit(f"localize: --data {path}: line {no}: language {language_of(inst)!r} "
                             f"is none of {', '.join(sorted(bm25.LANG_SUFFIXES))}")
        rows.append(inst)
    return rows


def parse_tools(specs: Sequence[str], prog: str) -> Optional[List[Tuple[str, List[str]]]]:
    """``--tool LABEL=CMD`` values as (label, argv) pairs; None after one line on stderr
    for a value that is not LABEL=CMD (steer.py and lines.py compare tools so)."""
    tools = []
    for spec in specs:
        label, sep, cmd = spec.partition("=")
        if not sep or not label or not cmd.strip():
            print(f"{prog}: --tool {spec!r}: expected LABEL=CMD", file=sys.stderr)
            return None
        tools.append((label, shlex.split(cmd)))
    return tools


def load_instances(paths, repos: Sequence[str], ids: Sequence[str],
                   limit: Optional[int]) -> List[dict]:
    """Read the jsonl data file(s) and apply the --repo / --instances / --limit filters.

    ``paths`` is one path or a list of them (instances in file order); ``--repo``
    compares case-insensitively, like GitHub.
    """
    rows: List[dict] = []
    seen: Dict[str, str] = {}
    for path in [paths] if isinstance(paths, str) else list(paths):
        for inst in read_jsonl(path):
            iid = inst["instance_id"]
            if iid in seen:
                raise SystemExit(f"localize: --data {path}: instance {iid} is also in {seen[iid]}")
            seen[iid] = path
            rows.append(inst)
    if repos:
        wanted = {r.lower() for r in repos}
        rows = [r for r in rows if r["repo"].lower() in wanted]
    if ids:
        known = {r["instance_id"] for r in rows}
        missing = [i for i in ids if i not in known]
        if missing:
            raise SystemExit(f"localize: --instances: unknown {', '.join(missing)}")
        rows = [r for r in rows if r["instance_id"] in ids]
    return rows[:limit] if limit is not None else rows


def load_rows(path: str) -> List[dict]:
    """Per-issue rows of a saved run (``--out``), in this harness's names.

    Rows of the harness before ``bm25-lang`` have no language (it is read from the data
    file the rows name; Python when that file is gone) and a ``bm25-py`` system, which
    is ``bm25-lang`` on a Python issue and is dropped on any other.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise SystemExit(f"localize: --from-rows {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise SystemExit(f"localize: --from-rows {path}: line {exc.lineno}: not JSON") from None
    rows = data.get("rows") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise SystemExit(f"localize: --from-rows {path}: no \"rows\" list (not an --out file)")
    langs: Dict[str, str] = {}
    if any("language" not in row for row in rows):
        recorded = data.get("data")
        for src in [recorded] if isinstance(recorded, str) else list(recorded or []):
            try:
                langs.update((i["instance_id"], language_of(i)) for i in read_jsonl(src))
            except SystemExit:  # the data file moved: fall back to the default below
                pass
    for row in rows:
        row.setdefault("language", langs.get(row.get("instance"), DEFAULT_LANGUAGE))
        row.setdefault("systems", {})
        for old, new in OLD_NAMES.items():
            rec = row["systems"].pop(old, None)  # *.py only: bm25-lang on a Python issue alone
            if rec is not None and new not in row["systems"] and row["language"] == DEFAULT_LANGUAGE:
                row["systems"][new] = rec
    return rows


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
    ap.add_argument("--data", action="append", default=[], metavar="FILE",
                    help="jsonl of instances (repeatable; default: the --split's files)")
    ap.add_argument("--split", choices=sorted(SPLITS),
                    help="the dev split(s) to run: python, multilang or both (default: python)")
    ap.add_argument("--reader", action="store_true",
                    help="simulated reader: judge the top 3 unread files after each cycle, "
                         "and go on after done while a gold file is unread")
    ap.add_argument("--from-rows", action="append", default=[], metavar="FILE",
                    help="print the tables of saved --out file(s) instead of running")
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


def data_files(args) -> List[str]:
    """The data files to read: every --data, then the --split's (python when neither)."""
    files = list(args.data)
    if args.split:
        files += [f for f in SPLITS[args.split] if f not in files]
    return files or list(SPLITS["python"])


def write_rows(path: str, files: Sequence[str], args, tool_cmd: Sequence[str],
               rows: Sequence[dict]) -> None:
    """Write the per-issue rows and how they were made, atomically."""
    tmp = path + ".tmp"
    meta = {"data": [os.path.abspath(f) for f in files], "tool_cmd": list(tool_cmd),
            "reader": bool(args.reader), "rows": list(rows)}
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, path)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the benchmark; print the tables; write --out."""
    args = build_parser().parse_args(argv)
    if args.from_rows:
        rows = [row for path in args.from_rows for row in load_rows(path)]
        if not rows:
            print("localize: --from-rows: no rows", file=sys.stderr)
            return 1
        sys.stdout.write(table(rows))
        return 0
    if args.no_tool and args.no_baseline:
        print("localize: --no-tool and --no-baseline leave nothing to run", file=sys.stderr)
        return 2
    if args.reader and args.no_tool:
        print("localize: --reader needs the tool (drop --no-tool)", file=sys.stderr)
        return 2
    overrides = parse_git_dirs(args.git_dir)
    ids = [i.strip() for i in args.instances.split(",") if i.strip()]
    files = data_files(args)
    instances = load_instances(files, args.repo, ids, args.limit)
    if not instances:
        print("localize: no instances selected", file=sys.stderr)
        return 1
    tool_cmd = tuple(shlex.split(args.tool_cmd) if args.tool_cmd else DEFAULT_TOOL)
    if not args.no_tool and not args.tool_cmd and not os.path.isfile(DEFAULT_TOOL[1]):
        print(f"localize: {DEFAULT_TOOL[1]} not found (use --no-tool or --tool-cmd)", file=sys.stderr)
        return 1
    jobs = [Job(inst, git_dir_for(inst["repo"], args.mirrors, overrides),
                os.path.abspath(args.trees), tool_cmd, not args.no_tool,
                not args.no_baseline, args.delete_trees, args.reader) for inst in instances]
    rows = run_all(jobs, max(1, args.jobs))
    order = {inst["instance_id"]: i for i, inst in enumerate(instances)}
    rows.sort(key=lambda r: order[r["instance"]])
    if args.out:
        write_rows(args.out, files, args, tool_cmd, rows)
    sys.stdout.write(table(rows))
    return 0


def failed_row(job: Job, where: str, exc: BaseException) -> dict:
    """The row of an instance whose evaluation died outright: it scores 0 everywhere."""
    inst = job.instance
    return {"instance": inst["instance_id"], "repo": inst["repo"], "language": language_of(inst),
            "gold": inst["gold_files"], "systems": {}, "error": f"{where}: {type(exc).__name__}: {exc}"}


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
