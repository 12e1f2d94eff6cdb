"""Speed benchmark: what a cycle of the loop costs next to ripgrep over the same tree.

Lays out the django tree at one SWE-bench base commit (``bench/localize.py``'s
layout), takes that issue's keywords from the tool's own cycle 1 (``query.keywords``)
or from ``--keywords``, then, after a warm-up round, alternates in each round:

1. ``rg -l -i -F -e kw ...`` over the tree (GNU ``grep -rilIF`` when rg is absent);
2. cycle 1 without the index (``--no-cache``) and cycle 1 building it from nothing;
3. cycle 1 with a fresh state (a new task) on the tree indexed in the warm-up, then its
   cycles 2 and 3 (steered with one of its keywords when the loop stopped earlier), and cycle 1 of another issue of the repository (keywords the index
   has not seen; one issue per round);
4. once the rounds are done: cycle 1 after editing 10 files of a copy of the tree, and
   whether its output equals a run without the index; the index's size on disk.

It prints medians, ratios to rg and each process's peak RSS (``os.wait4``'s rusage of
that very child), the import time of ``scripts/hints.py`` and
``scripts/retrieve_loop.py`` (timed ``-c import`` minus a bare interpreter, and
``-X importtime``), and ``hints.py`` as a process on 10,000 synthetic results.
``--generated`` instead times cycle 1 against rg on generated trees (many small
files; a few large ones) to show how cost grows with file count and bytes.

Usage::

    python3 bench/speed.py                               # django tree, 5 runs
    python3 bench/speed.py --instance django__django-11099 --runs 7
    python3 bench/speed.py --generated --runs 3
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import localize  # noqa: E402  (bench/ is not a package; the harness runs as a script)

SCRIPTS = os.path.join(localize.PROJECT, "scripts")
STATE_NAME = "state.json"
HINTS_RESULTS = 10_000  # the size for hints.py as a process
IMPORT_RUNS = 9  # import timings are noisy at the millisecond scale
SMALL_FILES = 100_000  # the many-small-files tree
LARGE_FILES = 3  # "a few large files"
LARGE_MB = 20  # "tens of MB" each
GEN_KEYWORDS = ("refresh_token", "session", "expiry")  # words planted in generated trees


# ---------------------------------------------------------------- running things

@dataclass(frozen=True)
class Timed:
    """One child process: wall seconds, its peak RSS in MB, exit code, stdout."""

    seconds: float
    rss_mb: float
    returncode: int
    stdout: bytes
    stderr: bytes


# Runs the measured command and reports its wall time, peak RSS and exit code. A child
# forked straight from this (large) process would count our own RSS as its peak: Linux
# folds the pre-exec memory into ru_maxrss. So a minimal interpreter (-I -S) spawns the
# command and reports wait4's rusage of that very child; the launcher's start-up is
# outside the timed span.
LAUNCHER = """
import os, sys, time
t0 = time.perf_counter()
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, ru = os.wait4(pid, 0)
dt = time.perf_counter() - t0
with open(sys.argv[1], "w") as fh:
    fh.write("%r %d %d" % (dt, ru.ru_maxrss, os.waitstatus_to_exitcode(status)))
"""


def run_timed(argv: Sequence[str], stdin: Optional[bytes] = None, env: Optional[dict] = None) -> Timed:
    """Run ``argv`` through the launcher; return its time, peak RSS, exit code, output.

    Output goes to temporary files (never a pipe we would have to drain).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.TemporaryFile() as inp, tempfile.TemporaryDirectory() as tmp:
        if stdin is not None:
            inp.write(stdin)
            inp.seek(0)
        report = os.path.join(tmp, "report")
        proc = subprocess.run([sys.executable, "-I", "-S", "-c", LAUNCHER, report, *argv],
                              stdin=inp if stdin is not None else subprocess.DEVNULL,
                              stdout=out, stderr=err, env=env)
        out.seek(0)
        err.seek(0)
        try:
            with open(report, encoding="ascii") as fh:
                secs, rss, code = fh.read().split()
        except OSError:  # the launcher itself failed (command not found)
            return Timed(0.0, 0.0, proc.returncode or 127, out.read(), err.read())
        # ru_maxrss is in KiB on Linux, bytes on macOS
        kib = int(rss) / 1024.0 if sys.platform == "darwin" else int(rss)
        return Timed(float(secs), kib / 1024.0, int(code), out.read(), err.read())


def launcher_floor() -> float:
    """Peak RSS reported for a command that does nothing: the launcher's own share."""
    return run_timed(["true"]).rss_mb if shutil.which("true") else 0.0


def grep_cmd(root: str, keywords: Sequence[str]) -> Tuple[List[str], str]:
    """The ripgrep listing of files holding any keyword, or GNU grep's; and its name."""
    pats: List[str] = []
    for kw in keywords:
        pats += ["-e", kw]
    if shutil.which("rg"):
        return ["rg", "-l", "-i", "-F", *pats, root], "rg -l -i -F"
    return ["grep", "-rilIF", *pats, root], "grep -rilIF"


def tool_argv(cmd: Sequence[str], root: str, state: str, task: Optional[str],
              keywords: Sequence[str]) -> List[str]:
    """One cycle's command line; cycle 1 when ``task`` or ``keywords`` is given."""
    argv = list(cmd) + ["--root", root, "--state", state]
    if task is not None:
        argv += ["--task", task]
    elif keywords:
        argv += ["--keywords", *keywords]
    return argv


def check(t: Timed, what: str) -> dict:
    """Parse a tool run's JSON; raise SystemExit naming ``what`` when it failed."""
    if t.returncode != 0:
        err = t.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SystemExit(f"speed: {what}: exit {t.returncode}: {err[-1] if err else ''}")
    try:
        return json.loads(t.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"speed: {what}: stdout is not JSON") from None


# ---------------------------------------------------------------- the tree benchmark

@dataclass
class Series:
    """Timings of one measurement across rounds."""

    name: str
    seconds: List[float]
    rss_mb: List[float]

    def add(self, t: Timed) -> None:
        """Record one run."""
        self.seconds.append(t.seconds)
        self.rss_mb.append(t.rss_mb)


FLOOR_NAME = "floor: python3 + import, no work"


def floor_argv() -> List[str]:
    """A process that starts the interpreter and imports the retriever, then stops: the
    least any cycle costs, since every cycle is a new process."""
    return [sys.executable, "-c",
            f"import sys; sys.path.insert(0, {SCRIPTS!r}); import agentic_search_skill.cli"]


BARE_NAME = "bare interpreter: python3 -c pass"
WALK_FLOOR_NAME = "python3 + a bare stat walk, no import"
# What an always-fresh cycle must do at least besides starting: list every directory and
# stat every file (os.scandir and DirEntry.stat, .git left out; no ignore rules, no
# import of the tool). With the bare interpreter it bounds from below what any cycle of
# a process-per-cycle tool in Python can cost on the tree.
WALK_CODE = """import os, sys
def walk(p):
    with os.scandir(p) as it:
        for e in it:
            if e.is_dir(follow_symlinks=False):
                if e.name != ".git":
                    walk(e.path)
            else:
                e.stat(follow_symlinks=False)
walk(sys.argv[1])
"""


def bare_argv() -> List[str]:
    """The interpreter starting and stopping (site and all, as the tool runs)."""
    return [sys.executable, "-c", "pass"]


def walk_floor_argv(root: str) -> List[str]:
    """The interpreter plus :data:`WALK_CODE` over ``root``."""
    return [sys.executable, "-c", WALK_CODE, root]


NO_INDEX = "cycle 1, no index (--no-cache)"
FIRST = "cycle 1, first ever (index built)"
INDEXED = "cycle 1, new task, indexed tree"
OTHER = "cycle 1, another task, indexed tree (unseen keywords)"
NO_BYTECODE_FLOOR = "floor, bytecode not cached"
NO_BYTECODE_INDEXED = "cycle 1, new task, indexed tree, bytecode not cached"
INDEX_ENV = "AGENTIC_SEARCH_INDEX_DIR"
# Python's own switches for compiled bytecode: a normal install caches it (``__pycache__``
# beside the scripts, written once); a machine that sets PYTHONDONTWRITEBYTECODE=1 makes
# every process compile every module again. The headline rows run as a normal install,
# with the cache under PYCACHE_DIR (set by main: a temporary directory, never the tree's
# or the project's); the "bytecode not cached" rows as this kind of machine.
NO_WRITE_ENV = "PYTHONDONTWRITEBYTECODE"
PREFIX_ENV = "PYTHONPYCACHEPREFIX"
PYCACHE_DIR: list = []  # [directory] once main made it


def _env(index_dir: Optional[str] = None, bytecode: bool = True) -> dict:
    """The environment of a Python run: its index in ``index_dir`` (when given), its
    bytecode cached outside every tree (``bytecode``) or compiled afresh each time."""
    env = dict(os.environ)
    if index_dir is not None:
        env[INDEX_ENV] = index_dir
    if bytecode and PYCACHE_DIR:
        env.pop(NO_WRITE_ENV, None)
        env[PREFIX_ENV] = PYCACHE_DIR[0]
    else:
        env[NO_WRITE_ENV] = "1"
        env.pop(PREFIX_ENV, None)
    return env


def time_cycles(cmd: Sequence[str], root: str, task: Optional[str], keywords: Sequence[str],
                runs: int, warmup: int = 1, floor: Optional[Sequence[str]] = None,
                others: Sequence[str] = (), index_dir: Optional[str] = None) -> Tuple[List[Series], str]:
    """Alternate, each round: rg; the start-up floor (when ``floor`` is given); cycle 1
    without the index; cycle 1 building the index from nothing; cycle 1 of a new task
    (fresh state) on the tree indexed in the warm-up; the same with another task's text
    (``others``, one per round, so its keywords are new to the index); cycles 2-3 of the
    new task. The index of the warm-up is kept in ``index_dir`` (a temporary directory
    when not given)."""
    grep, grep_name = grep_cmd(root, keywords)
    names = (grep_name, BARE_NAME, WALK_FLOOR_NAME, FLOOR_NAME, NO_INDEX, FIRST, INDEXED, OTHER,
             "cycle 2", "cycle 3", NO_BYTECODE_FLOOR, NO_BYTECODE_INDEXED)
    series = {n: Series(n, [], []) for n in names}
    own_dir = index_dir is None
    warm = index_dir or tempfile.mkdtemp(prefix="speed-index-")
    try:
        for i in range(warmup + runs):
            keep = i >= warmup
            t = run_timed(grep)
            if keep:
                series[grep_name].add(t)
            if floor:
                for name, argv in ((BARE_NAME, bare_argv()), (WALK_FLOOR_NAME, walk_floor_argv(root))):
                    t = run_timed(argv, env=_env())
                    if keep and t.returncode == 0:
                        series[name].add(t)
                t = run_timed(floor, env=_env())
                if keep and t.returncode == 0:
                    series[FLOOR_NAME].add(t)
                t = run_timed(floor, env=_env(bytecode=False))
                if keep and t.returncode == 0:
                    series[NO_BYTECODE_FLOOR].add(t)
            with tempfile.TemporaryDirectory(prefix="speed-state-") as tmp:
                state = os.path.join(tmp, STATE_NAME)
                t = run_timed(tool_argv(cmd, root, state, task, keywords) + ["--no-cache"], env=_env())
                check(t, NO_INDEX)
                if keep:
                    series[NO_INDEX].add(t)
                os.remove(state)
                fresh = os.path.join(tmp, "index")
                t = run_timed(tool_argv(cmd, root, state, task, keywords), env=_env(fresh))
                check(t, FIRST)
                if keep:
                    series[FIRST].add(t)
                if i == 0 and not os.listdir(warm) and os.path.isdir(fresh):
                    shutil.rmtree(warm)
                    shutil.move(fresh, warm)  # the warm-up's index is the indexed tree's
                os.remove(state)
                if not keep:  # a tree over the index's build step is indexed over cycles
                    for _ in range(WARM_CYCLES):
                        check(run_timed(tool_argv(cmd, root, state, task, keywords), env=_env(warm)), INDEXED)
                        os.remove(state)
                if floor:  # (the tool's own: its start-up is what the bytecode cache changes)
                    t = run_timed(tool_argv(cmd, root, state, task, keywords), env=_env(warm, bytecode=False))
                    check(t, NO_BYTECODE_INDEXED)
                    if keep:
                        series[NO_BYTECODE_INDEXED].add(t)
                    os.remove(state)
                t = run_timed(tool_argv(cmd, root, state, task, keywords), env=_env(warm))
                out = check(t, INDEXED)
                if keep:
                    series[INDEXED].add(t)
                for n in (2, 3):
                    steer: List[str] = []
                    if out.get("done"):  # a loop that stopped is steered on: the cost of a later cycle
                        steer = ["--keywords", (out.get("query", {}).get("keywords") or list(keywords) or ["x"])[0]]
                    t = run_timed(tool_argv(cmd, root, state, None, ()) + steer, env=_env(warm))
                    out = check(t, f"cycle {n}")
                    if keep:
                        series[f"cycle {n}"].add(t)
                if keep and others:
                    os.remove(state)
                    other = others[(i - warmup) % len(others)]
                    t = run_timed(tool_argv(cmd, root, state, other, ()), env=_env(warm))
                    check(t, OTHER)
                    series[OTHER].add(t)
    finally:
        if own_dir:
            shutil.rmtree(warm, ignore_errors=True)
    return [s for s in series.values() if s.seconds], grep_name


EDITED_FILES = 10  # the "after editing 10 files"
# Extra indexed cycles of the warm-up: a tree over index.BUILD_STEP_BYTES of text is
# indexed over several cycles; timed rounds measure the tree once wholly indexed.
WARM_CYCLES = 2


def time_edits(cmd: Sequence[str], tree: str, task: Optional[str], keywords: Sequence[str],
               runs: int, base: str) -> Tuple[Series, bool]:
    """Cycle 1 of a new task right after editing EDITED_FILES files of a copy of the tree
    (indexed before the edits), and whether its output equals a run without the index."""
    copy = os.path.join(base, "tree")
    shutil.copytree(tree, copy, symlinks=True)
    index_dir = os.path.join(base, "index")
    time.sleep(2.1)  # the copy's ctimes leave the racy window, so the copy is indexed
    with tempfile.TemporaryDirectory(prefix="speed-state-") as tmp:
        check(run_timed(tool_argv(cmd, copy, os.path.join(tmp, STATE_NAME), task, keywords),
                        env=_env(index_dir)), "indexing the copy")
    targets = sorted(os.path.join(d, f) for d, _, fs in os.walk(copy) for f in fs
                     if f.endswith(".py") and "/." not in d)[::97][:EDITED_FILES]
    series = Series(f"cycle 1 after editing {len(targets)} files", [], [])
    equal = True
    for r in range(runs):
        for path in targets:
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(f"\n# edited {r}: upload permission storage\n")
        with tempfile.TemporaryDirectory(prefix="speed-state-") as tmp:
            t = run_timed(tool_argv(cmd, copy, os.path.join(tmp, "a.json"), task, keywords), env=_env(index_dir))
            check(t, series.name)
            series.add(t)
            plain = run_timed(tool_argv(cmd, copy, os.path.join(tmp, "b.json"), task, keywords) + ["--no-cache"],
                              env=_env())
            check(plain, "the same without the index")
            equal = equal and t.stdout == plain.stdout
    return series, equal


def index_size(index_dir: str) -> Tuple[float, float]:
    """(MB on disk of the indexes under ``index_dir``, MB of text they cover)."""
    disk = text = 0
    for d, _, fs in os.walk(index_dir):
        for f in fs:
            p = os.path.join(d, f)
            disk += os.path.getsize(p)
            if f.endswith(".idx") and f.startswith("seg-"):
                with open(p, "rb") as fh:
                    first = fh.readline()
                    head = json.loads(fh.read(int(first.split()[2])))
                text += head["sections"]["text"][1]
    return disk / 2**20, text / 2**20


def cycles_table(series: List[Series], grep_name: str) -> str:
    """Markdown: median, min, ratio to the grep median, peak RSS."""
    base = statistics.median(next(s for s in series if s.name == grep_name).seconds)
    lines = ["| measurement | runs | median s | min s | × " + grep_name.split()[0] + " | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|"]
    for s in series:
        med = statistics.median(s.seconds)
        lines.append(f"| {s.name} | {len(s.seconds)} | {med:.3f} | {min(s.seconds):.3f} | "
                     f"{med / base:.2f} | {max(s.rss_mb):.1f} |")
    return "\n".join(lines)


# ---------------------------------------------------------------- imports and hints

def import_times(modules: Sequence[str], runs: int = IMPORT_RUNS) -> List[Tuple[str, float, float]]:
    """(module, timed-import ms minus bare interpreter, -X importtime cumulative ms)."""
    prefix = f"import sys; sys.path.insert(0, {SCRIPTS!r})"
    bare = [sys.executable, "-c", prefix]
    out = []
    for mod in modules:
        with_mod = [sys.executable, "-c", f"{prefix}; import {mod}"]
        a: List[float] = []
        b: List[float] = []
        for _ in range(runs):  # alternate so drift hits both alike
            a.append(run_timed(with_mod, env=_env()).seconds)
            b.append(run_timed(bare, env=_env()).seconds)
        diff = (statistics.median(a) - statistics.median(b)) * 1000
        t = run_timed([sys.executable, "-X", "importtime", "-c", f"{prefix}; import {mod}"], env=_env())
        cum = float("nan")
        for line in t.stderr.decode("utf-8", "replace").splitlines():
            m = re.match(r"import time:\s*(\d+)\s*\|\s*(\d+)\s*\|\s*(\S+)\s*$", line)
            if m and m.group(3) == mod:
                cum = int(m.group(2)) / 1000.0
        if t.returncode != 0:  # the module is missing or fails to import
            diff = cum = float("nan")
        out.append((mod, diff, cum))
    return out


def synthetic_results(n: int) -> dict:
    """``n`` results in the seed's contract, deterministic, for hints.py's CLI."""
    rng = random.Random(0)
    words = ["auth", "token", "session", "refresh", "jwt", "cache", "router", "user", "db", "api"]
    results = []
    for i in range(n):
        tags = rng.sample(words, 3)
        results.append({
            "id": f"src/pkg{i // 100}/mod{i}.py", "title": f"mod{i}",
            "summary": f"{i}: def {tags[0]}_{tags[1]}(): ...", "tags": tags,
            "score": round(rng.random(), 3),
            "related": [f"src/pkg{i // 100}/mod{(i + 1) % n}.py", f"lib/ext{i % 50}.py"],
        })
    return {"keywords": ["auth", "token", "expiry"], "results": results}


def hints_time(runs: int) -> Optional[Tuple[float, float, float]]:
    """(median ms of hints.py on 10,000 results, bare interpreter ms, peak RSS MB)."""
    path = os.path.join(SCRIPTS, "hints.py")
    if not os.path.isfile(path):
        return None
    payload = json.dumps(synthetic_results(HINTS_RESULTS)).encode()
    secs, bare, rss = [], [], []
    for i in range(runs + 1):
        t = run_timed([sys.executable, path], stdin=payload, env=_env())
        if t.returncode != 0:
            raise SystemExit(f"speed: hints.py exit {t.returncode}: "
                             f"{t.stderr.decode('utf-8', 'replace').strip()[:200]}")
        b = run_timed([sys.executable, "-c", "pass"], env=_env())
        if i:
            secs.append(t.seconds)
            bare.append(b.seconds)
            rss.append(t.rss_mb)
    return statistics.median(secs) * 1000, statistics.median(bare) * 1000, max(rss)


# ---------------------------------------------------------------- generated trees

def gen_small(root: str, n_files: int, seed: int = 0) -> None:
    """``n_files`` small Python-like files, 1,000 per directory, keywords in ~1%."""
    rng = random.Random(seed)
    body = "".join(f"def func_{j}(arg):\n    return arg + {j}\n\n" for j in range(6))
    for i in range(n_files):
        d = os.path.join(root, f"pkg{i // 1000:03d}")
        if i % 1000 == 0:
            os.makedirs(d, exist_ok=True)
        text = f'"""module {i}."""\n' + body
        if rng.random() < 0.01:
            text += f"\n# {rng.choice(GEN_KEYWORDS)} handling\n"
        with open(os.path.join(d, f"mod{i:06d}.py"), "w", encoding="ascii") as fh:
            fh.write(text)


def gen_large(root: str, n_files: int, mb: int, seed: int = 0) -> None:
    """``n_files`` Python-like files of ``mb`` MiB each, a keyword every ~10,000 lines."""
    rng = random.Random(seed)
    os.makedirs(root, exist_ok=True)
    lines = [f"    value_{j} = compute(value_{j - 1}, {j})  # step {j}\n" for j in range(1, 10_001)]
    for i in range(n_files):
        with open(os.path.join(root, f"big{i}.py"), "w", encoding="ascii") as fh:
            written = 0
            while written < mb << 20:
                block = f"def block_{written}():\n" + "".join(lines) + \
                        f"    # {rng.choice(GEN_KEYWORDS)}\n"
                fh.write(block)
                written += len(block)


def tree_size(root: str) -> Tuple[int, int]:
    """(files, bytes) under ``root``."""
    n = size = 0
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            n += 1
            size += os.path.getsize(os.path.join(dirpath, f))
    return n, size


def generated(cmd: Sequence[str], runs: int, base: str, keywords: Sequence[str],
              small: int = SMALL_FILES, large: int = LARGE_FILES, mb: int = LARGE_MB) -> str:
    """Time cycle 1 (without the index, building it, on the indexed tree) vs grep on
    generated trees of growing file count and bytes."""
    specs = [("small", small // 4, 0), ("small", small, 0)] + ([("large", 1, mb), ("large", large, mb)] if large else [])
    lines = ["| tree | files | MB | no index s | first ever s | indexed s | grep s | indexed × grep | "
             "first ever × grep | index MB | RSS MB (indexed) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for kind, n, size_mb in specs:
        root = os.path.join(base, f"{kind}-{n}-{size_mb}")
        t0 = time.perf_counter()
        if not os.path.isdir(root):
            (gen_small(root, n) if kind == "small" else gen_large(root, n, size_mb))
            time.sleep(2.1)  # written moments ago: out of the racy window before indexing
        files, size = tree_size(root)
        print(f"speed: generated {root}: {files} files, {size / 2**20:.1f} MB "
              f"({time.perf_counter() - t0:.0f}s)", file=sys.stderr, flush=True)
        run_cmd = list(cmd)
        if kind == "large" and list(cmd) == list(localize.DEFAULT_TOOL):
            run_cmd += ["--max-file-kb", str((size_mb + 1) * 1024)]  # past the 2 MiB default
        index_dir = tempfile.mkdtemp(prefix="speed-index-")
        try:
            series, grep_name = time_cycles(run_cmd, root, None, keywords, runs, index_dir=index_dir)
            disk, _text = index_size(index_dir)
        finally:
            shutil.rmtree(index_dir, ignore_errors=True)
        med = {s.name: statistics.median(s.seconds) for s in series}
        rss = max(next(s for s in series if s.name == INDEXED).rss_mb)
        grep = med[grep_name]
        label = f"{n:,} small files" if kind == "small" else f"{n} × {size_mb} MiB files"
        lines.append(f"| {label} | {files} | {size / 2**20:.1f} | {med[NO_INDEX]:.3f} | {med[FIRST]:.3f} | "
                     f"{med[INDEXED]:.3f} | {grep:.3f} | {med[INDEXED] / grep:.2f} | {med[FIRST] / grep:.2f} | "
                     f"{disk:.1f} | {rss:.1f} |")
    return "\n".join(lines) + f"\n\ngrep = `{grep_cmd('.', keywords)[1]}`; keywords: {', '.join(keywords)}"


# ---------------------------------------------------------------- main

def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=localize.DEFAULT_DATA, help="jsonl of instances (default: %(default)s)")
    ap.add_argument("--instance", help="instance whose tree and issue to use (default: first django one)")
    ap.add_argument("--keywords", nargs="+", help="keywords for rg and the tool (default: the tool's own)")
    ap.add_argument("--trees", default=localize.DEFAULT_TREES, help="where trees are laid out (default: %(default)s)")
    ap.add_argument("--mirrors", default=localize.DEFAULT_MIRRORS, help="bare clones (default: %(default)s)")
    ap.add_argument("--git-dir", action="append", default=[], metavar="OWNER/NAME=PATH",
                    help="bare git dir for one repository, overriding --mirrors")
    ap.add_argument("--runs", type=int, default=5, help="timed rounds after one warm-up (default: 5)")
    ap.add_argument("--tool-cmd", help="command that runs one cycle (default: python3 scripts/retrieve_loop.py)")
    ap.add_argument("--generated", action="store_true", help="time generated trees instead of django")
    ap.add_argument("--tree", help="time this tree instead (with --keywords): e.g. a large monorepo laid out "
                                   "outside any repository; no edit round (it would copy the tree)")
    ap.add_argument("--no-bytecode", action="store_true",
                    help=f"every Python run compiles afresh ({NO_WRITE_ENV}=1), as on this machine; "
                         "default: bytecode cached once in a temporary directory, as a normal install")
    ap.add_argument("--gen-dir", help="where to build generated trees (default: a temp dir, removed)")
    ap.add_argument("--small-files", type=int, default=SMALL_FILES,
                    help="files in the larger many-small-files tree (default: %(default)s)")
    ap.add_argument("--large-files", type=int, default=LARGE_FILES,
                    help="files in the larger big-files tree (default: %(default)s; 0: no big-file trees)")
    ap.add_argument("--large-mb", type=int, default=LARGE_MB, help="MiB per big file (default: %(default)s)")
    return ap


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the speed benchmark and print its tables."""
    args = build_parser().parse_args(argv)
    cmd = shlex.split(args.tool_cmd) if args.tool_cmd else list(localize.DEFAULT_TOOL)
    if args.runs < 1:
        print("speed: --runs must be at least 1", file=sys.stderr)
        return 2
    if args.tree and not args.keywords:
        print("speed: --tree needs --keywords", file=sys.stderr)
        return 2
    pycache = tempfile.mkdtemp(prefix="speed-pycache-")
    if not args.no_bytecode:
        PYCACHE_DIR.append(pycache)
    try:
        return _main(args, cmd)
    finally:
        shutil.rmtree(pycache, ignore_errors=True)


def _main(args: argparse.Namespace, cmd: List[str]) -> int:
    """main() once the bytecode cache is settled."""
    if not args.tool_cmd and not os.path.isfile(cmd[1]):
        print(f"speed: {cmd[1]} not found (use --tool-cmd); timing imports and hints.py only",
              file=sys.stderr)
        imports_and_hints(args.runs)
        return 1
    if args.generated:
        base = args.gen_dir or tempfile.mkdtemp(prefix="speed-gen-")
        try:
            print(generated(cmd, args.runs, base, args.keywords or GEN_KEYWORDS,
                            args.small_files, args.large_files, args.large_mb))
        finally:
            if not args.gen_dir:
                shutil.rmtree(base, ignore_errors=True)
        return 0
    if args.tree:
        return tree_run(args, cmd)
    return django_run(args, cmd)


def timed_tree(cmd: List[str], tree: str, task: Optional[str], keywords: Sequence[str], runs: int,
               others: Sequence[str] = (), edits: bool = False) -> Tuple[list, str, str, bool]:
    """The cycles against grep over ``tree`` with a fresh index (and, with ``edits``, the
    round after editing files of a copy): (series, grep's name, the index-size sentence,
    whether the edited round's output equalled a run without the index)."""
    own = list(cmd) == list(localize.DEFAULT_TOOL)
    work = tempfile.mkdtemp(prefix="speed-work-")
    equal = True
    try:
        index_dir = os.path.join(work, "index")
        os.mkdir(index_dir)
        series, grep_name = time_cycles(cmd, tree, task, keywords, runs, floor=floor_argv() if own else None,
                                        others=others, index_dir=index_dir)
        disk, text = index_size(index_dir)
        if edits:
            edited, equal = time_edits(cmd, tree, task, keywords, runs, os.path.join(work, "edits"))
            series.append(edited)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    line = f"Index on disk: {disk:.1f} MB for {text:.1f} MB of text ({disk / max(text, 1e-9):.2f}×)."
    return series, grep_name, line, equal


def tree_run(args: argparse.Namespace, cmd: List[str]) -> int:
    """Any tree (``--tree``) with ``--keywords``: the cycles against grep, the index's size."""
    tree = os.path.abspath(args.tree)
    if not os.path.isdir(tree):
        print(f"speed: --tree {args.tree}: not a directory", file=sys.stderr)
        return 2
    files, size = tree_size(tree)
    print(f"speed: tree {tree}: {files} files, {size / 2**20:.1f} MB; {len(args.keywords)} keywords",
          file=sys.stderr, flush=True)
    series, grep_name, index_line, _equal = timed_tree(cmd, tree, None, args.keywords, args.runs)
    print(f"## {tree} ({files} files, {size / 2**20:.1f} MB)\n")
    print(cycles_table(series, grep_name))
    print(f"\n{index_line} "
          f"grep = `{grep_name}` with the same {len(args.keywords)} keywords: {', '.join(args.keywords)}; "
          f"{'bytecode compiled afresh in every process' if args.no_bytecode else 'bytecode cached'}.")
    return 0


def django_run(args: argparse.Namespace, cmd: List[str]) -> int:
    """The django-tree benchmark: cycles vs grep, imports, hints.py."""
    rows = localize.load_instances(args.data, [], [args.instance] if args.instance else [], None)
    if not args.instance:
        rows = [r for r in rows if r["repo"] == "django/django"][:1] or rows[:1]
    inst = rows[0]
    overrides = localize.parse_git_dirs(args.git_dir)
    tree = os.path.join(os.path.abspath(args.trees), inst["instance_id"])
    localize.lay_out(localize.git_dir_for(inst["repo"], args.mirrors, overrides),
                     inst["base_commit"], tree)
    files, size = tree_size(tree)
    task: Optional[str] = None
    keywords = args.keywords
    if not keywords:
        tmp = tempfile.mkdtemp(prefix="speed-kw-")
        try:
            out = check(run_timed(tool_argv(cmd, tree, os.path.join(tmp, STATE_NAME),
                                            inst["problem_statement"], ()) + ["--no-cache"], env=_env()),
                        "keyword run")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        keywords = list(out.get("query", {}).get("keywords", []))
        task = inst["problem_statement"]
        if not keywords:
            raise SystemExit("speed: the tool's cycle 1 reported no query.keywords; pass --keywords")
    print(f"speed: {inst['instance_id']} tree {tree}: {files} files, {size / 2**20:.1f} MB; "
          f"{len(keywords)} keywords", file=sys.stderr, flush=True)
    # Other issues of the same repository, as new tasks whose keywords the index has not seen.
    others = [r["problem_statement"] for r in localize.load_instances(args.data, [], [], None)
              if r["repo"] == inst["repo"] and r["instance_id"] != inst["instance_id"]][:args.runs]
    series, grep_name, index_line, equal = timed_tree(cmd, tree, task, keywords, args.runs,
                                                      others=others if task is not None else (), edits=True)
    print(f"## {inst['instance_id']} ({files} files, {size / 2**20:.1f} MB)\n")
    print(cycles_table(series, grep_name))
    print(f"\n{index_line} "
          f"After editing {EDITED_FILES} files (a copy of the tree): output "
          f"{'identical to' if equal else 'DIFFERENT from'} a run without the index.")
    how = "--task <issue text>" if task is not None else "--keywords"
    print(f"\nTool cycle 1 run with {how}; grep = `{grep_name}` with the same {len(keywords)} "
          f"keywords: {', '.join(keywords)}. Peak RSS is the child's own (wait4 from a "
          f"minimal launcher), so about {launcher_floor():.0f} MB is the floor any command shows. "
          f"{'Every Python run compiles its modules afresh (--no-bytecode).' if args.no_bytecode else 'Python runs use bytecode cached once (a normal install); the rows marked bytecode not cached compile every module in every process, as with ' + NO_WRITE_ENV + '=1.'}\n")
    imports_and_hints(args.runs)
    return 0


def imports_and_hints(runs: int) -> None:
    """Print import times of the scripts and hints.py's time as a process."""
    print("| import | timed `-c import` − bare ms | `-X importtime` cumulative ms |")
    print("|---|---:|---:|")
    for mod, diff, cum in import_times(["hints", "retrieve_loop"]):
        print(f"| {mod} | {diff:.1f} | {cum:.1f} |")
    h = hints_time(runs)
    if h is None:
        print("\nscripts/hints.py: absent")
    else:
        print(f"\nhints.py on {HINTS_RESULTS:,} results (stdin JSON): median {h[0]:.0f} ms "
              f"(bare interpreter {h[1]:.0f} ms), peak RSS {h[2]:.1f} MB")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
