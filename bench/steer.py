#!/usr/bin/env python3
"""Steering with --keywords: where the fix's file stands after a cycle the caller steers.

    python3 bench/steer.py --split both --tool A="python3 /tmp/a/scripts/retrieve_loop.py" \
        --tool B="python3 /tmp/b/scripts/retrieve_loop.py"

The harness of ``localize.py`` never passes ``--keywords``; this one plays the agent that
read the first files and found the code's word. For each issue of the data (trees laid
out by ``localize.py`` under ``--trees``), with each tool in turn: cycle 1 with the issue's
text, then one cycle with ``--keywords NAME``, where NAME is a name the first gold file
defines that the issue's text does not hold and that ``--min-files`` to ``--max-files``
source files of the tree hold (the code's word, shared by a few files: not a unique
pointer). Issues whose gold file the first tool's cycle 1 already ranks first, with no
such name, or without a tree, are left out (counted). Prints, per tool, in how many
issues the gold file stands 1st, in the top 3 / 5 / 10 of the ranking after the steered
cycle, and among its ``results``, and how often the steered cycle stopped ``sufficient``
and its first file was gold then; exit 0, 1 when no issue qualifies, 2 on usage.

This is the fit of ``agentic_search_skill.cycle.STEER_SHARE`` (bench/HISTORY.md): the tools
are copies of the code that differ in that constant.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Dict, List, Optional, Sequence, Tuple

import localize

sys.path.insert(0, os.path.join(localize.PROJECT, "scripts"))
from agentic_search_skill.lang import defined_names  # noqa: E402

# Source files whose text is searched for the name's other holders.
SOURCE_RE = re.compile(r"\.(py|pyi|js|jsx|mjs|cjs|ts|tsx|go|rs|java|kt|c|h|cc|cpp|cxx|hh|hpp)$")
# A name shorter than this is a word more than the code's name.
MIN_NAME = 6
# The places counted.
PLACES = (1, 3, 5, 10)
RESULTS = "results"


def source_texts(root: str) -> List[bytes]:
    """The lower-cased text of every source file under ``root`` (hidden directories left out)."""
    texts = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if SOURCE_RE.search(name):
                try:
                    with open(os.path.join(here, name), "rb") as fh:
                        texts.append(fh.read().lower())
                except OSError:
                    pass
    return texts


def pick_name(gold_text: bytes, gold_rel: str, task: str, texts: Sequence[bytes],
              min_files: int, max_files: int) -> Optional[str]:
    """The first name (file order) ``gold_text`` defines, at least MIN_NAME long, that
    ``task`` does not hold and that ``min_files``..``max_files`` of ``texts`` hold."""
    low_task = task.lower()
    for name, value in defined_names(gold_text, gold_rel):
        if value < 1.0 or len(name) < MIN_NAME or name.lower() in low_task:
            continue
        needle = name.lower().encode("ascii", "ignore")
        held = sum(1 for t in texts if needle in t)
        if min_files <= held <= max_files:
            return name
    return None


def place(ids: Sequence[str], gold: str) -> Optional[int]:
    """1-based place of ``gold`` in ``ids``, None when absent."""
    return ids.index(gold) + 1 if gold in ids else None


def run_cycle(cmd: Sequence[str], args: Sequence[str]) -> Optional[dict]:
    """One call of the tool; its JSON, or None when it failed."""
    proc = subprocess.run(list(cmd) + list(args), capture_output=True, text=True,
                          timeout=localize.TOOL_TIMEOUT)
    if proc.returncode != 0:
        return None
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return None


Places = Tuple[Optional[int], Optional[int], Optional[int], bool, bool]


def steer_one(tools: Sequence[Tuple[str, List[str]]], root: str, task: str, gold: str,
              name: str) -> Dict[str, Places]:
    """{tool label: (gold's place in cycle 1's ranking, in the steered ranking, in the
    steered results, whether the steered cycle stopped ``sufficient``, whether the
    steered ranking's first file is gold)}."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="steer-") as tmp:
        task_file = os.path.join(tmp, "task.txt")
        with open(task_file, "w", encoding="utf-8") as fh:
            fh.write(task)
        for label, cmd in tools:
            state = os.path.join(tmp, f"{len(out)}.json")
            first = run_cycle(cmd, ["--root", root, "--state", state, "--reset", "--task-file", task_file,
                                    "--max-cycles", str(localize.MAX_CYCLES), "--limit", "50"])
            steered = run_cycle(cmd, ["--state", state, "--keywords", name, "--limit", "50"]) if first else None
            if first is None or steered is None:
                out[label] = (None, None, None, False, False)
                continue
            ranked = [e["id"] for e in steered["ranking"]]
            out[label] = (place([e["id"] for e in first["ranking"]], gold), place(ranked, gold),
                          place([e["id"] for e in steered["results"]], gold),
                          steered.get("stop_reason") == "sufficient", place(ranked, gold) == 1)
    return out


def table(labels: Sequence[str], rows: Sequence[dict]) -> str:
    """The counts per tool, as a Markdown table."""
    head = "| tool | issues | " + " | ".join(f"{'1st' if k == 1 else f'top {k}'}" for k in PLACES) \
        + " | in `results` | stops `sufficient` | … first file gold |"
    lines = [head, "|---|" + "---:|" * (len(PLACES) + 4)]
    for label in labels:
        got = [r["places"][label] for r in rows if r["places"][label][1] is not None]
        cells = [str(sum(1 for g in got if g[1] is not None and g[1] <= k)) for k in PLACES]
        in_results = sum(1 for g in got if g[2] is not None)
        stops = [g for g in got if g[3]]
        lines.append(f"| {label} | {len(got)} | " + " | ".join(cells) + f" | {in_results} | {len(stops)} | "
                     f"{sum(1 for g in stops if g[4])} |")
    return "\n".join(lines) + "\n"


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=sorted(localize.SPLITS), default="both",
                    help="the dev split(s) (default: %(default)s)")
    ap.add_argument("--data", action="append", default=[], metavar="FILE", help="jsonl of instances instead")
    ap.add_argument("--trees", default=localize.DEFAULT_TREES, help="laid-out trees (default: %(default)s)")
    ap.add_argument("--tool", action="append", default=[], metavar="LABEL=CMD", required=True,
                    help="a tool to steer (repeatable; the first selects the issues)")
    ap.add_argument("--min-files", type=int, default=3, help="fewest files holding the name (default: 3)")
    ap.add_argument("--max-files", type=int, default=16, help="most files holding the name (default: 16)")
    ap.add_argument("--limit", type=int, help="first N instances")
    ap.add_argument("--jobs", type=int, default=2, help="instances in parallel (default: 2)")
    ap.add_argument("--out", help="write per-issue places to this JSON file")
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    tools = localize.parse_tools(args.tool, "steer")
    if tools is None:
        return 2
    files = args.data or list(localize.SPLITS[args.split])
    instances = localize.load_instances(files, (), (), args.limit)
    skipped = {"no tree": 0, "no shared name": 0, "gold first in cycle 1": 0, "tool failed": 0}

    def one(inst: dict) -> Optional[dict]:
        root = os.path.join(args.trees, inst["instance_id"])
        gold = inst["gold_files"][0]
        try:
            with open(os.path.join(root, gold), "rb") as fh:
                gold_text = fh.read()
        except OSError:
            skipped["no tree"] += 1
            return None
        name = pick_name(gold_text, gold, inst["problem_statement"], source_texts(root),
                         args.min_files, args.max_files)
        if name is None:
            skipped["no shared name"] += 1
            return None
        places = steer_one(tools, root, inst["problem_statement"], gold, name)
        first = places[tools[0][0]]
        if first[1] is None:
            skipped["tool failed"] += 1
            return None
        if first[0] == 1:
            skipped["gold first in cycle 1"] += 1
            return None
        return {"instance": inst["instance_id"], "gold": gold, "name": name, "places": places}

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        rows = [r for r in pool.map(one, instances) if r is not None]
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"tools": [[label, cmd] for label, cmd in tools], "rows": rows}, fh, indent=1)
    print(f"{len(instances)} instances; left out: " + ", ".join(f"{k} {v}" for k, v in skipped.items()))
    if not rows:
        return 1
    sys.stdout.write(table([label for label, _cmd in tools], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
