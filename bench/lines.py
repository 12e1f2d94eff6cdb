#!/usr/bin/env python3
"""Lines near the fix: do the `lines` a result quotes point where the fix went?

    python3 bench/lines.py --split both --tool A="python3 /tmp/a/scripts/retrieve_loop.py" \
        --tool B="python3 /tmp/b/scripts/retrieve_loop.py"

The dev data names each issue's base commit and gold files, not its fix. For each issue
this finds, in the repository's mirror (laid out as ``localize.py`` expects), the first
commit after the base that changes every gold file, and keeps the line ranges its diff
changes in each gold file - only when the file it changed is the base's own, so that the
line numbers are the base tree's (``--hunks FILE`` caches them). Each tool then runs
cycle 1 on the issue's tree (laid out by ``localize.py`` under ``--trees``), as an agent
reads it by default; for every gold file among its ``results`` the table says whether a
quoted line lies within ``--near`` lines of a changed range, or inside one, and gives the
characters printed per cycle (median, p90). Exit 0; 1 when no issue has a known fix; 2 on
usage.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional, Sequence, Tuple

import localize

# How many commits after the base are looked at for the fix.
MAX_CANDIDATES = 40
_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+", re.M)
_LINE_RE = re.compile(r"L(\d+):")

Ranges = Dict[str, List[List[int]]]


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, text=True).stdout


def changed_ranges(diff: str) -> List[List[int]]:
    """The old-side line ranges ``[first, last]`` of a ``git diff -U0``'s hunks (a pure
    insertion counts as the line it follows)."""
    out = []
    for m in _HUNK_RE.finditer(diff):
        start, n = int(m.group(1)), int(m.group(2) or 1)
        out.append([start, start + max(n, 1) - 1])
    return out


def fix_ranges(git_dir: str, base: str, gold: Sequence[str]) -> Optional[Ranges]:
    """The changed ranges per gold file of the first commit after ``base`` that changes
    every gold file, or None (no such commit, or a gold file changed in between)."""
    cands = _git(git_dir, "log", "--format=%H", "--reverse", "--ancestry-path", f"{base}..HEAD", "--",
                 *gold).split()[:MAX_CANDIDATES]
    if not cands:
        cands = _git(git_dir, "log", "--all", "--format=%H", "--reverse", f"{base}..", "--",
                     *gold).split()[:MAX_CANDIDATES]
    for commit in cands:
        changed = set(_git(git_dir, "diff-tree", "--no-commit-id", "--name-only", "-r", commit).split())
        if not set(gold) <= changed:
            continue
        out: Ranges = {}
        for g in gold:
            if _git(git_dir, "rev-parse", f"{commit}^:{g}").strip() != _git(git_dir, "rev-parse", f"{base}:{g}").strip():
                return None
            out[g] = changed_ranges(_git(git_dir, "diff", "-U0", f"{commit}^", commit, "--", g))
        return out
    return None


def quoted_lines(lines: Sequence[str]) -> List[int]:
    """The line numbers of a result's ``lines`` (``L12: text``)."""
    return [int(m.group(1)) for m in (_LINE_RE.match(x) for x in lines) if m]


def near(numbers: Sequence[int], ranges: Sequence[Sequence[int]], k: int) -> bool:
    """Whether a number lies within ``k`` lines of a range."""
    return any(a - k <= n <= b + k for n in numbers for a, b in ranges)


def run_cycle1(cmd: Sequence[str], root: str, task: str) -> Tuple[Optional[dict], int]:
    """The tool's first cycle on ``task`` (its JSON, or None) and the characters printed."""
    with tempfile.TemporaryDirectory(prefix="lines-") as tmp:
        task_file = os.path.join(tmp, "task.txt")
        with open(task_file, "w", encoding="utf-8") as fh:
            fh.write(task)
        proc = subprocess.run(list(cmd) + ["--root", root, "--state", os.path.join(tmp, "s.json"),
                                           "--task-file", task_file],
                              capture_output=True, text=True, timeout=localize.TOOL_TIMEOUT)
    try:
        return json.loads(proc.stdout), len(proc.stdout)
    except json.JSONDecodeError:
        return None, len(proc.stdout)


def score(out: Optional[dict], ranges: Ranges, k: int) -> List[Tuple[bool, bool]]:
    """(near, inside) per gold file among the output's ``results``."""
    got = []
    for r in (out or {}).get("results", []):
        if r.get("id") in ranges:
            nums = quoted_lines(r.get("lines", []))
            got.append((near(nums, ranges[r["id"]], k), near(nums, ranges[r["id"]], 0)))
    return got


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=sorted(localize.SPLITS), default="both", help="the dev split(s)")
    ap.add_argument("--data", action="append", default=[], metavar="FILE", help="jsonl of instances instead")
    ap.add_argument("--trees", default=localize.DEFAULT_TREES, help="laid-out trees (default: %(default)s)")
    ap.add_argument("--mirrors", default=localize.DEFAULT_MIRRORS, help="bare clones (default: %(default)s)")
    ap.add_argument("--tool", action="append", default=[], metavar="LABEL=CMD", required=True,
                    help="a tool to measure (repeatable)")
    ap.add_argument("--near", type=int, default=10, help="lines of slack around a changed range (default: 10)")
    ap.add_argument("--hunks", help="cache of the fixes' changed ranges (JSON; read if present, else written)")
    ap.add_argument("--limit", type=int, help="first N instances")
    ap.add_argument("--jobs", type=int, default=2, help="instances in parallel (default: 2)")
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    tools = localize.parse_tools(args.tool, "lines")
    if tools is None:
        return 2
    instances = localize.load_instances(args.data or list(localize.SPLITS[args.split]), (), (), args.limit)
    if args.hunks and os.path.exists(args.hunks):
        with open(args.hunks, encoding="utf-8") as fh:
            known: Dict[str, Optional[Ranges]] = json.load(fh)
    else:
        def find(inst: dict) -> Optional[Ranges]:
            git_dir = localize.git_dir_for(inst["repo"], args.mirrors, {})
            return fix_ranges(git_dir, inst["base_commit"], inst["gold_files"])
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            known = dict(zip((i["instance_id"] for i in instances), pool.map(find, instances)))
        if args.hunks:
            with open(args.hunks, "w", encoding="utf-8") as fh:
                json.dump(known, fh)
    chosen = [i for i in instances if known.get(i["instance_id"])
              and os.path.isdir(os.path.join(args.trees, i["instance_id"]))]
    print(f"{len(instances)} instances; the fix's lines known for {len(chosen)}")
    if not chosen:
        return 1
    print(f"| tool | gold files in `results` | a line within {args.near} lines of the fix | a line inside it "
          "| characters, median / p90 |")
    print("|---|---:|---:|---:|---:|")
    for label, cmd in tools:
        def one(inst: dict) -> Tuple[List[Tuple[bool, bool]], int]:
            out, chars = run_cycle1(cmd, os.path.join(args.trees, inst["instance_id"]), inst["problem_statement"])
            return score(out, known[inst["instance_id"]], args.near), chars
        with ThreadPoolExecutor(max(1, args.jobs)) as pool:
            got = list(pool.map(one, chosen))
        files = [x for xs, _c in got for x in xs]
        chars = sorted(c for _xs, c in got)
        n_near, n_in = sum(1 for a, _b in files if a), sum(1 for _a, b in files if b)
        share = lambda n: f"{n} ({100 * n / len(files):.1f}%)" if files else "0"  # noqa: E731
        print(f"| {label} | {len(files)} | {share(n_near)} | {share(n_in)} | "
              f"{statistics.median(chars):,.0f} / {chars[int(0.9 * (len(chars) - 1))]:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
