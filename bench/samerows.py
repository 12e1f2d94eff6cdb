#!/usr/bin/env python3
"""Do two runs of ``localize.py --out`` agree issue by issue?

    python3 bench/samerows.py RUN_A.json RUN_B.json

Compares what the tool printed for each issue both runs hold: the final ranking with
its scores, cycle 1, the stop, the number of cycles, the characters of each cycle and
the final context. Prints one line per issue that differs (the fields that do) and a
count; exit 0 when every shared issue is equal, 1 when one differs or an issue is in
one run only, 2 on a file that is no run.

The check this is for: a run through the index against one with ``--no-cache`` (every
file read live) must be equal, as must a first run on trees just written against a
second run on them (bench/HISTORY.md, "a first run and a second agree").
"""
from __future__ import annotations

import sys
from typing import Dict, List, Optional, Sequence, Tuple

import localize

FIELDS = ("ranking", "cycle1", "stop_reason", "cycles", "chars_per_cycle", "context")


def tool_rows(path: str) -> Dict[str, dict]:
    """{instance: the tool's record} of one ``--out`` file (read by localize.py's own
    reader, which exits with one line when the file is no run)."""
    out: Dict[str, dict] = {}
    for r in localize.load_rows(path):
        if isinstance(r, dict) and isinstance(r.get("instance"), str):
            tool = r["systems"].get("tool") if isinstance(r["systems"], dict) else None
            out[r["instance"]] = tool if isinstance(tool, dict) else {}
    return out


def differences(a: Dict[str, dict], b: Dict[str, dict]) -> Tuple[List[Tuple[str, List[str]]], List[str]]:
    """(issues both hold whose fields differ, with those fields; issues one run lacks),
    each sorted by instance."""
    differ = []
    for inst in sorted(set(a) & set(b)):
        fields = [f for f in FIELDS if a[inst].get(f) != b[inst].get(f)]
        if fields:
            differ.append((inst, fields))
    return differ, sorted(set(a) ^ set(b))


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or any(a.startswith("-") for a in args):
        print("usage: samerows.py RUN_A.json RUN_B.json", file=sys.stderr)
        return 2
    try:
        a, b = tool_rows(args[0]), tool_rows(args[1])
    except SystemExit as e:  # localize's one line on a file that is no run
        print(e, file=sys.stderr)
        return 2
    differ, alone = differences(a, b)
    for inst, fields in differ:
        print(f"{inst}: {', '.join(fields)} differ")
    for inst in alone:
        print(f"{inst}: in one run only")
    shared = len(set(a) & set(b))
    print(f"{shared - len(differ)} of {shared} shared issues equal"
          + (f"; {len(alone)} in one run only" if alone else ""))
    return 0 if not differ and not alone else 1


if __name__ == "__main__":
    sys.exit(main())
