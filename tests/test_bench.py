"""Tests for bench/: metrics, the BM25 baseline, tree layout and the harness end to end.

Everything runs on a small codebase committed to a git repository in ``tmp_path``;
the real benchmark (214 issues over four large repositories) is not part of the tests.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
if BENCH not in sys.path:
    sys.path.insert(0, BENCH)

import bm25  # noqa: E402
import localize  # noqa: E402
import loopreport  # noqa: E402
import published  # noqa: E402
import samerows  # noqa: E402
import speed  # noqa: E402

TOOL = os.path.join(ROOT, "scripts", "retrieve_loop.py")
HAS_GIT = shutil.which("git") is not None
needs_git = pytest.mark.skipif(not HAS_GIT, reason="git is not installed")

FILES = {
    "src/auth/tokens.py": '''
        """Access and refresh tokens."""
        TOKEN_TTL = 3600

        def refresh_token(token):
            """Issue a new token when the old one reached its expiry."""
            return issue_token(token.user, ttl=TOKEN_TTL)

        class TokenExpiry(Exception):
            pass
        ''',
    "src/db/models.py": '''
        class UserModel:
            def save(self, connection):
                connection.execute("insert into users")
        ''',
    "src/http/router.py": '''
        from src.auth.tokens import refresh_token

        def route(path, handler):
            ROUTES[path] = handler
        ''',
    "docs/guide.txt": "How to configure the router and the database connection.\n",
    "README.md": "A tiny service.\n",
    ".hidden/secret.py": "def refresh_token(): pass\n",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\0\0binary refresh_token",
}

ISSUES = [
    ("demo__svc-1", "refresh_token raises TokenExpiry too early\nThe token expiry check in "
                    "refresh_token uses the wrong TOKEN_TTL.", ["src/auth/tokens.py"]),
    ("demo__svc-2", "UserModel.save fails: the connection execute call for users is wrong.",
     ["src/db/models.py"]),
    ("demo__svc-3", "route() overwrites ROUTES when the same path is given a new handler.",
     ["src/http/router.py"]),
]


def write_tree(root) -> None:
    """Write FILES under ``root``."""
    for rel, body in FILES.items():
        path = os.path.join(str(root), *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        mode = "wb" if isinstance(body, bytes) else "w"
        with open(path, mode) as fh:
            fh.write(body if isinstance(body, bytes) else textwrap.dedent(body).lstrip())


@pytest.fixture
def repo(tmp_path):
    """A committed git repository, its bare-ish git dir, head commit and a jsonl file."""
    work = tmp_path / "work"
    work.mkdir()
    write_tree(work)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(git[:3] + ["init", "-q"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "init"], check=True)
    commit = subprocess.run(git[:3] + ["rev-parse", "HEAD"], check=True,
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    data = tmp_path / "issues.jsonl"
    with open(data, "w", encoding="utf-8") as fh:
        for iid, text, gold in ISSUES:
            fh.write(json.dumps({"instance_id": iid, "repo": "demo/svc", "base_commit": commit,
                                 "problem_statement": text, "gold_files": gold}) + "\n")
    return {"git_dir": str(work / ".git"), "commit": commit, "data": str(data),
            "trees": str(tmp_path / "trees"), "tmp": tmp_path}


# ---------------------------------------------------------------- metrics

RANKING = ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]


@pytest.mark.parametrize("gold, ranks", [
    (["a.py"], {"a.py": 1}),
    (["c.py", "f.py"], {"c.py": 3, "f.py": 6}),
    (["zz.py"], {"zz.py": None}),
])
def test_gold_ranks(gold, ranks):
    assert localize.gold_ranks(RANKING, gold) == ranks


@pytest.mark.parametrize("gold, k, acc, recall", [
    (["a.py"], 1, 1.0, 1.0),
    (["b.py"], 1, 0.0, 0.0),
    (["b.py"], 5, 1.0, 1.0),
    (["a.py", "f.py"], 5, 0.0, 0.5),   # Acc@k needs every gold file in the top k
    (["a.py", "f.py"], 10, 1.0, 1.0),
    (["a.py", "zz.py"], 10, 0.0, 0.5),
    (["zz.py"], 10, 0.0, 0.0),
])
def test_acc_and_recall_at_k(gold, k, acc, recall):
    ranks = localize.gold_ranks(RANKING, gold)
    assert localize.acc_at(ranks, k) == acc
    assert localize.recall_at(ranks, k) == recall


@pytest.mark.parametrize("gold, rr", [
    (["a.py"], 1.0), (["c.py"], 1 / 3), (["f.py", "b.py"], 0.5), (["zz.py"], 0.0),
])
def test_reciprocal_rank_uses_first_gold_file(gold, rr):
    assert localize.reciprocal_rank(localize.gold_ranks(RANKING, gold)) == pytest.approx(rr)


@pytest.mark.parametrize("context, gold, precision, recall", [
    (["a.py", "b.py", "c.py"], ["a.py"], 1 / 3, 1.0),
    (["a.py"], ["a.py", "b.py"], 1.0, 0.5),
    ([], ["a.py"], 0.0, 0.0),               # empty context: precision 0 by convention
    (["x.py", "x.py"], ["a.py"], 0.0, 0.0),
])
def test_context_scores(context, gold, precision, recall):
    assert localize.context_scores(context, gold) == (pytest.approx(precision), pytest.approx(recall))


def test_summarize_counts_failures_as_zero():
    rows = [
        {"instance": "i1", "repo": "r", "systems": {"bm25-py": {"ranks": {"g": 1}, "seconds": 1.0}}},
        {"instance": "i2", "repo": "r", "systems": {"bm25-py": {"ranks": {"g": 4}, "seconds": 3.0}}},
        {"instance": "i3", "repo": "r", "systems": {}, "error": "layout: boom"},
    ]
    s = localize.summarize(rows, "bm25-py")
    assert s["acc@1"] == pytest.approx(1 / 3)
    assert s["acc@5"] == pytest.approx(2 / 3)
    assert s["mrr"] == pytest.approx((1 + 0.25) / 3)
    assert s["s/cycle"] == pytest.approx(4 / 3)
    assert localize.summarize(rows, "tool") is None
    assert "i3 [all]: layout: boom" in localize.table(rows)


# ---------------------------------------------------------------- BM25

@pytest.mark.parametrize("word, terms", [
    (b"token", (b"token",)),
    (b"refresh_token", (b"refresh_token", b"refresh", b"token")),
    (b"getHTTPResponse_code", (b"gethttpresponse_code", b"get", b"http", b"response", b"code")),
    (b"TokenExpiry", (b"tokenexpiry", b"token", b"expiry")),
    (b"TOKEN_TTL", (b"token_ttl", b"token", b"ttl")),
    (b"utf8", (b"utf8", b"utf", b"8")),
    (b"_private", (b"_private", b"private")),
])
def test_expand_keeps_whole_word_and_parts(word, terms):
    assert bm25.expand(word) == terms


def test_tokenize_splits_on_non_word_bytes():
    assert bm25.tokenize(b"a.b-c d\xc3\xa9e") == [b"a", b"b", b"c", b"d", b"e"]


def test_bm25_score_matches_the_formula(tmp_path):
    (tmp_path / "one.py").write_text("alpha beta beta")
    (tmp_path / "two.py").write_text("gamma")
    q = bm25.query_terms("beta")
    files = bm25.index_tree(str(tmp_path), q)
    ranked = bm25.rank(files, q)
    n, df, tf, dl, avgdl = 2, 1, 2, 3, 2.0
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    want = idf * tf * (bm25.K1 + 1) / (tf + bm25.K1 * (1 - bm25.B + bm25.B * dl / avgdl))
    assert ranked == [("one.py", pytest.approx(want))]


def test_bm25_skips_hidden_dirs_binary_and_big_files(tmp_path, monkeypatch):
    write_tree(tmp_path)
    (tmp_path / "big.txt").write_text("refresh_token " * 40)
    monkeypatch.setattr(bm25, "MAX_BYTES", 400)
    ids = [f.id for f in bm25.index_tree(str(tmp_path), [b"refresh_token"])]
    assert ".hidden/secret.py" not in ids and "assets/logo.png" not in ids and "big.txt" not in ids
    assert "src/auth/tokens.py" in ids and "docs/guide.txt" in ids


@pytest.mark.parametrize("iid, text, gold", ISSUES)
def test_bm25_ranks_the_obvious_file_first(tmp_path, iid, text, gold):
    write_tree(tmp_path)
    q = bm25.query_terms(text)
    files = bm25.index_tree(str(tmp_path), q)
    assert bm25.rank(files, q)[0][0] == gold[0]
    py = bm25.rank(files, q, py_only=True)
    assert py[0][0] == gold[0] and all(i.endswith(".py") for i, _ in py)


def test_bm25_cli(tmp_path):
    write_tree(tmp_path)
    out = subprocess.run([sys.executable, os.path.join(BENCH, "bm25.py"), "--root", str(tmp_path),
                          "--query", ISSUES[0][1], "--limit", "1"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert out.returncode == 0 and out.stderr == ""
    assert [r["id"] for r in json.loads(out.stdout)["ranking"]] == ["src/auth/tokens.py"]


# ---------------------------------------------------------------- trees

def test_git_dir_mapping_and_overrides():
    assert localize.git_dir_for("psf/requests", "/m", {}) == os.path.join("/m", "psf+requests", "repo")
    assert localize.git_dir_for("django/django", "/m", {}) == \
        os.path.join("/m", "swe-bench+django__django", "repo")
    over = localize.parse_git_dirs(["django/django=/x/d.git"])
    assert localize.git_dir_for("django/django", "/m", over) == "/x/d.git"
    with pytest.raises(SystemExit):
        localize.parse_git_dirs(["nonsense"])


@needs_git
def test_lay_out_extracts_then_reuses(repo):
    dest = os.path.join(repo["trees"], "demo__svc-1")
    assert localize.lay_out(repo["git_dir"], repo["commit"], dest) is True
    assert os.path.isfile(os.path.join(dest, "src", "auth", "tokens.py"))
    assert not os.path.exists(os.path.join(dest, ".git"))
    assert localize.lay_out(repo["git_dir"], repo["commit"], dest) is False
    with pytest.raises(RuntimeError):
        localize.lay_out(repo["git_dir"], "0" * 40, os.path.join(repo["trees"], "bad"))
    assert os.listdir(repo["trees"]) == ["demo__svc-1"]  # no temporary left behind


# ---------------------------------------------------------------- the harness

FAKE_TOOL = '''
import argparse, json, os, sys
ap = argparse.ArgumentParser()
ap.add_argument("--root"); ap.add_argument("--state"); ap.add_argument("--task")
ap.add_argument("--keywords", nargs="*"); ap.add_argument("--judge", nargs="*", default=[])
ap.add_argument("--log"); ap.add_argument("--no-cache", action="store_true")
a = ap.parse_args()
if a.log:
    with open(a.log, "a") as fh:
        fh.write(json.dumps(sys.argv[1:]) + "\\n")
if a.task and "overwrites" in a.task:
    sys.exit("fake: cannot handle this one")
state = {"cycle": 0, "root": a.root, "judged": {}}
if os.path.exists(a.state) and not a.task and not a.keywords:
    state = json.load(open(a.state))
state["cycle"] += 1
state["judged"].update(j.rsplit("=", 1) for j in a.judge)
json.dump(state, open(a.state, "w"))
root = state["root"]
ids = sorted(os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
             for d, _, fs in os.walk(root) for f in fs)
ids.sort(key=lambda i: state["judged"].get(i) == "0.0")  # files judged irrelevant go last
print(json.dumps({"cycle": state["cycle"], "done": state["cycle"] >= 2, "stop_reason": "fake",
                  "query": {"keywords": ["token", "route"]}, "hints": {"next_action": "expand"},
                  "ranking": [{"id": i, "score": 0.5} for i in ids],
                  "context": [{"id": "src/auth/tokens.py", "score": 0.9, "reason": "fake"},
                              {"id": "README.md", "score": 0.8, "reason": "fake"}]}))
'''


def run_localize(repo, *extra):
    """Run bench/localize.py as a subprocess over the fixture."""
    argv = [sys.executable, os.path.join(BENCH, "localize.py"), "--data", repo["data"],
            "--trees", repo["trees"], "--git-dir", f"demo/svc={repo['git_dir']}", *extra]
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@needs_git
def test_harness_baselines_only(repo):
    out_json = os.path.join(str(repo["tmp"]), "rows.json")
    proc = run_localize(repo, "--no-tool", "--out", out_json, "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "| bm25-all | 100.0% | 100.0% | 100.0% |" in proc.stdout
    assert "| bm25-lang | 100.0% |" in proc.stdout and "| tool |" not in proc.stdout
    assert "| python | 3 | 0 | bm25-lang | 100.0% |" in proc.stdout  # no language field: Python
    rows = json.load(open(out_json))["rows"]
    assert [r["instance"] for r in rows] == [i[0] for i in ISSUES]
    assert rows[0]["systems"]["bm25-lang"]["ranks"] == {"src/auth/tokens.py": 1}
    assert rows[0]["language"] == "python"
    assert proc.stderr.count("[") >= 3  # one progress line per instance


@needs_git
def test_harness_scores_the_tool_and_survives_its_failure(repo):
    fake = repo["tmp"] / "fake_tool.py"
    fake.write_text(FAKE_TOOL)
    out_json = os.path.join(str(repo["tmp"]), "rows.json")
    proc = run_localize(repo, "--no-baseline", "--jobs", "1", "--out", out_json,
                        "--tool-cmd", f"{sys.executable} {fake}", "--delete-trees")
    assert proc.returncode == 0, proc.stderr
    rows = {r["instance"]: r["systems"]["tool"] for r in json.load(open(out_json))["rows"]}
    # the fake ranks every file alphabetically: .hidden/secret.py, README.md, assets/logo.png,
    # docs/guide.txt, src/auth/tokens.py, src/db/models.py, src/http/router.py
    assert rows["demo__svc-1"]["ranks"] == {"src/auth/tokens.py": 5}
    assert rows["demo__svc-1"]["cycles"] == 2 and len(rows["demo__svc-1"]["seconds_per_cycle"]) == 2
    assert rows["demo__svc-1"]["ctx_precision"] == 0.5 and rows["demo__svc-1"]["ctx_recall"] == 1.0
    assert rows["demo__svc-3"]["error"] and rows["demo__svc-3"]["ranks"] == {"src/http/router.py": None}
    # 3 issues: ranks 5, 6, failed -> Acc@5 1/3, Acc@10 2/3, MRR (1/5 + 1/6) / 3
    assert "| tool | 0.0% | 33.3% | 66.7% |" in proc.stdout
    assert f"| {(1 / 5 + 1 / 6) / 3:.2f} |" in proc.stdout
    assert "demo__svc-3 [tool]" in proc.stdout
    assert not os.path.exists(os.path.join(repo["trees"], "demo__svc-1"))  # --delete-trees


@needs_git
def test_speed_runs_on_a_fixture(repo, tmp_path):
    fake = tmp_path / "fake_tool.py"
    fake.write_text(FAKE_TOOL)
    t = speed.run_timed([sys.executable, "-c", "print('x')"])
    assert t.returncode == 0 and t.stdout.strip() == b"x" and t.rss_mb > 0
    series, name = speed.time_cycles([sys.executable, str(fake)], str(tmp_path), None,
                                     ["token"], runs=2, others=["another task"])
    got = {s.name: len(s.seconds) for s in series}
    assert got[name] == 2 and got[speed.INDEXED] == 2 and got["cycle 2"] == 2
    assert got[speed.NO_INDEX] == got[speed.FIRST] == got[speed.OTHER] == 2
    assert got["cycle 3"] == 2  # the fake stops after cycle 2: it is steered on
    assert speed.FLOOR_NAME not in got  # only measured when asked for
    series, _ = speed.time_cycles([sys.executable, str(fake)], str(tmp_path), None, ["token"], runs=1,
                                  warmup=0, floor=speed.floor_argv())
    got = {s.name: len(s.seconds) for s in series}
    assert got[speed.FLOOR_NAME] == got[speed.BARE_NAME] == got[speed.WALK_FLOOR_NAME] == 1
    small = tmp_path / "gen"
    speed.gen_small(str(small), 50)
    assert speed.tree_size(str(small))[0] == 50


@needs_git
@pytest.mark.skipif(not os.path.isfile(TOOL), reason="scripts/retrieve_loop.py not written yet")
def test_harness_runs_the_real_tool(repo):
    out_json = os.path.join(str(repo["tmp"]), "rows.json")
    proc = run_localize(repo, "--out", out_json, "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    rows = json.load(open(out_json))["rows"]
    errors = [(r["instance"], r["systems"]["tool"]["error"]) for r in rows]
    assert all(not e for _, e in errors), errors
    assert all(1 <= r["systems"]["tool"]["cycles"] <= 3 for r in rows)
    assert "| tool |" in proc.stdout and "| tool ÷ bm25-lang |" in proc.stdout
    assert "#### Score reliability" in proc.stdout and "#### Cycle-1 decisions" in proc.stdout
    assert all(r["systems"]["tool"]["chars_per_cycle"] for r in rows)


# ---------------------------------------------------------------- languages, mirrors, snapshots

def test_bm25_lang_ranks_only_the_languages_files(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "lib.rs").write_text("fn refresh_token() {}\n")
    (tmp_path / "src" / "token.h").write_text("int refresh_token(void);\n")
    (tmp_path / "NOTES.md").write_text("refresh_token refresh_token refresh_token\n")
    q = bm25.query_terms("refresh_token")
    files = bm25.index_tree(str(tmp_path), q)
    assert [i for i, _ in bm25.rank(files, q, suffixes=bm25.LANG_SUFFIXES["rust"])] == ["src/lib.rs"]
    assert [i for i, _ in bm25.rank(files, q, suffixes=bm25.LANG_SUFFIXES["c/c++"])] == ["src/token.h"]
    assert bm25.rank(files, q)[0][0] == "NOTES.md"  # every text file: the note repeats it most
    out = subprocess.run([sys.executable, os.path.join(BENCH, "bm25.py"), "--root", str(tmp_path),
                          "--query", "refresh_token", "--lang", "rust"],
                         stdout=subprocess.PIPE, text=True, check=True)
    assert [r["id"] for r in json.loads(out.stdout)["ranking"]] == ["src/lib.rs"]


def test_mirror_lookup_ignores_case(tmp_path):
    (tmp_path / "FasterXML+jackson-core" / "repo").mkdir(parents=True)
    want = os.path.join(str(tmp_path), "FasterXML+jackson-core", "repo")
    assert localize.git_dir_for("fasterxml/jackson-core", str(tmp_path), {}) == want
    assert localize.git_dir_for("FasterXML/jackson-core", str(tmp_path), {}) == want
    over = localize.parse_git_dirs(["FasterXML/Jackson-Core=/x.git"])
    assert localize.git_dir_for("fasterxml/jackson-core", str(tmp_path), over) == "/x.git"


@needs_git
def test_lay_out_leaves_out_blobs_the_snapshot_lacks(repo):
    work = os.path.dirname(repo["git_dir"])
    big = os.path.join(work, "data", "huge file.json")
    os.makedirs(os.path.dirname(big))
    with open(big, "w") as fh:
        fh.write('{"big": true}\n')
    git = ["git", "-C", work, "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-q", "-m", "big"], check=True)
    head = subprocess.run(git[:3] + ["rev-parse", "HEAD"], check=True, stdout=subprocess.PIPE,
                          text=True).stdout.strip()
    sha = subprocess.run(git[:3] + ["rev-parse", "HEAD:data/huge file.json"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout.strip()
    os.remove(os.path.join(repo["git_dir"], "objects", sha[:2], sha[2:]))  # as a snapshot lacks it
    assert localize.missing_blobs(repo["git_dir"], head) == ["data/huge file.json"]
    dest = os.path.join(repo["trees"], "partial")
    assert localize.lay_out(repo["git_dir"], head, dest) is True
    assert os.path.isfile(os.path.join(dest, "src", "auth", "tokens.py"))
    assert not os.path.exists(os.path.join(dest, "data", "huge file.json"))
    assert localize.missing_blobs(repo["git_dir"], repo["commit"]) == []


def test_load_instances_reads_several_files_and_checks_languages(tmp_path):
    def write(name, *insts):
        path = tmp_path / name
        path.write_text("".join(json.dumps(i) + "\n" for i in insts))
        return str(path)
    base = {"repo": "Own/Proj", "base_commit": "c", "problem_statement": "t", "gold_files": ["a.rs"]}
    a = write("a.jsonl", dict(base, instance_id="p-1"))
    b = write("b.jsonl", dict(base, instance_id="r-1", language="rust"))
    rows = localize.load_instances([a, b], [], [], None)
    assert [localize.language_of(r) for r in rows] == ["python", "rust"]
    assert len(localize.load_instances([a, b], ["own/proj"], [], None)) == 2  # --repo ignores case
    with pytest.raises(SystemExit, match="is also in"):
        localize.load_instances([a, a], [], [], None)
    bad = write("c.jsonl", dict(base, instance_id="x-1", language="cobol"))
    with pytest.raises(SystemExit, match="line 1: language 'cobol'"):
        localize.load_instances(bad, [], [], None)
    with pytest.raises(SystemExit, match="line 1: no gold_files"):
        localize.load_instances(write("d.jsonl", {"instance_id": "y", "repo": "o/n", "base_commit": "c",
                                                   "problem_statement": "t"}), [], [], None)


# ---------------------------------------------------------------- the loop's tables

def tool_rec(ranking, cycle1=None, cycles=1, chars=(100,), **extra):
    """A tool record as localize writes it; ranking is [[id, score], ...]."""
    rec = {"ranks": {}, "error": "", "ranking": ranking, "cycles": cycles,
           "chars_per_cycle": list(chars),
           "cycle1": cycle1 or {"ranking": ranking, "next_action": "expand", "done": cycles == 1}}
    rec.update(extra)
    return rec


def loop_rows():
    """Three issues: a confident right answer, a confident wrong one, and no evidence."""
    return [
        {"instance": "i1", "repo": "r", "language": "go", "gold": ["a.go"], "systems": {"tool": tool_rec(
            [["a.go", 0.95], ["b.go", 0.6]],
            cycle1={"ranking": [["a.go", 0.95]], "next_action": "synthesize", "done": True},
            chars=(300,))}},
        {"instance": "i2", "repo": "r", "language": "go", "gold": ["c.go", "d.go"], "systems": {"tool": tool_rec(
            [["b.go", 0.85], ["c.go", 0.75], ["d.go", 0.3]],
            cycle1={"ranking": [["b.go", 0.9], ["x.go", 0.5], ["c.go", 0.4]], "next_action": "expand",
                    "done": False},
            cycles=3, chars=(1000, 200, 100), reader=True, reads=["b.go", "x.go", "c.go", "d.go"])}},
        {"instance": "i3", "repo": "r", "language": "rust", "gold": ["z.rs"], "systems": {"tool": tool_rec(
            [["q.rs", 0.1]], cycles=2, chars=(50, 50))}},
        {"instance": "i4", "repo": "r", "language": "rust", "gold": ["z.rs"],
         "systems": {"tool": {"ranks": {}, "error": "boom"}}},
    ]


def test_reliability_table_bands_and_claims():
    out = loopreport.reliability_table(loop_rows())
    assert "| 0.8–1.0 | 2 | 1 | 50.0% |" in out       # a.go (gold), b.go
    assert "| 0.7–0.8 | 1 | 1 | 100.0% |" in out      # c.go
    assert "| 0.5–0.7 | 1 | 0 | 0.0% |" in out
    assert "| 0.2–0.5 | 1 | 1 | 100.0% |" in out      # d.go
    assert "| < 0.2 | 1 | 0 | 0.0% |" in out
    assert "top file scores ≥ 0.8 | 2 of 3 (66.7%) |" in out   # the failed issue is left out
    assert "whose top file is gold | 1 of 2 (50.0%) |" in out
    assert "scoring < 0.5 that are gold | 1 of 2 (50.0%) |" in out
    assert "no gold file in the top 20 | 1 of 3 |" in out
    assert "their top score: median; by band | 0.10; < 0.2: 1 |" in out


def test_decision_table_counts_cycle_one_decisions():
    out = loopreport.decision_table(loop_rows())
    assert "| expand | no | 2 (66.7%) | 0.0% | 0.0% |" in out     # i2 and i3; i3 uses its final ranking
    assert "| synthesize | yes | 1 (33.3%) | 100.0% | 100.0% |" in out
    assert "| stopped after cycle 1 | | 1 (33.3%) | 100.0% | |" in out


def test_chars_cycles_and_reader_tables():
    rows = loop_rows()
    chars = loopreport.chars_table(rows)
    assert "| per cycle | 6 | 150 | 1,000 |" in chars        # 50 50 100 200 300 1000
    assert "| per issue (whole loop) | 3 | 300 | 1,300 |" in chars
    cyc = loopreport.cycles_table(rows)
    assert "| cycle 1, issues where cycle 2+ ran | 2 | 0.0% | 0.0% | 0.0% |" in cyc
    assert "| final, issues where cycle 2+ ran | 2 | 0.0% | 50.0% | 50.0% |" in cyc
    assert "| final, all issues | 3 | 33.3% | 66.7% | 66.7% |" in cyc
    reader = loopreport.reader_table(rows)   # only i2 ran with the reader: all gold at read 4
    assert "| all | 1 | 0.0% | 0.0% | 0.0% | 0.0% | 100.0% | 100.0% |" in reader
    assert "| multi-file fixes | 1 |" in reader
    assert loopreport.reader_table(rows[:1]) == ""  # no reader run: no table
    assert loopreport.reads_needed(["a", "b", "a"], ["b"]) == 2
    assert loopreport.reads_needed(["a"], ["a", "b"]) is None


def test_next_action_read_from_top_level_then_hints():
    assert localize.next_action_of({"next_action": "synthesize", "hints": {"next_action": "expand"}}) == "synthesize"
    assert localize.next_action_of({"hints": {"next_action": "expand"}}) == "expand"
    assert localize.next_action_of({"next_action": {"action": "refine", "why": "x"}}) == "refine"
    assert localize.next_action_of({}) == ""
    _out, cyc = localize.parse_cycle(b'{"ranking": [{"id": "a", "score": 1}, "b", 3], "done": true}', 1)
    assert cyc.ranking == (("a", 1.0), ("b", None)) and cyc.done and cyc.chars == 60
    with pytest.raises(RuntimeError, match="not an object"):
        localize.parse_cycle(b"[1]", 2)


def test_an_unsatisfied_reader_judges_on_after_done_while_cycles_remain():
    done_early = {"cycle": 1, "max_cycles": 3, "done": True}
    pending = [("a.py", 0.0)]
    assert localize.unsatisfied(done_early, pending, {"b.py"}, ["a.py"])          # gold unread: go on
    assert not localize.unsatisfied(done_early, pending, {"a.py"}, ["a.py"])      # every gold file read
    assert not localize.unsatisfied(done_early, pending, set(), ["a.py"])         # an accepting agent
    assert not localize.unsatisfied(done_early, [], {"b.py"}, ["a.py"])           # nothing to judge
    assert not localize.unsatisfied(dict(done_early, cycle=3), pending, {"b.py"}, ["a.py"])  # the limit


@needs_git
def test_reader_judges_the_top_three_unread_files_on_the_next_call(repo):
    fake = repo["tmp"] / "fake_tool.py"
    fake.write_text(FAKE_TOOL)
    log = repo["tmp"] / "calls.jsonl"
    out_json = os.path.join(str(repo["tmp"]), "rows.json")
    proc = run_localize(repo, "--no-baseline", "--jobs", "1", "--out", out_json, "--reader",
                        "--instances", "demo__svc-1", "--tool-cmd", f"{sys.executable} {fake} --log {log}")
    assert proc.returncode == 0, proc.stderr
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 2 and "--judge" not in calls[0]
    judged = calls[1][calls[1].index("--judge") + 1:]
    assert judged == [".hidden/secret.py=0.0", "README.md=0.0", "assets/logo.png=0.0"]
    rec = json.load(open(out_json))["rows"][0]["systems"]["tool"]
    # cycle 2 ranks the judged files last; the reader reads 3 more, then down the final ranking
    assert rec["reads"][:6] == [".hidden/secret.py", "README.md", "assets/logo.png",
                                "docs/guide.txt", "src/auth/tokens.py", "src/db/models.py"]
    assert rec["judged_per_call"] == [3] and rec["cycle1"]["next_action"] == "expand"
    assert len(rec["chars_per_cycle"]) == 2 and rec["ranking"][-1] == ["assets/logo.png", 0.5]
    assert "#### Simulated reader" in proc.stdout and "| all | 1 | 0.0% | 100.0% | 100.0% |" in proc.stdout


def test_from_rows_reads_an_older_harness_file(tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"instance_id": "g-1", "repo": "o/g", "language": "go", "base_commit": "c",
                                "problem_statement": "t", "gold_files": ["a.go"]}) + "\n")
    old = {"data": str(data), "rows": [{"instance": "g-1", "repo": "o/g", "gold": ["a.go"], "systems": {
        "tool": {"ranks": {"a.go": 1}, "error": ""}, "bm25-py": {"ranks": {"a.go": None}, "error": ""}}}]}
    (tmp_path / "rows.json").write_text(json.dumps(old))
    out = subprocess.run([sys.executable, os.path.join(BENCH, "localize.py"), "--from-rows",
                          str(tmp_path / "rows.json")], stdout=subprocess.PIPE, text=True, check=True).stdout
    assert "| go | 1 | 0 | tool | 100.0% |" in out
    assert "| bm25-py |" not in out and "| bm25-lang |" not in out  # *.py is no baseline for Go


@needs_git
def test_without_reader_the_same_reads_are_recorded_and_nothing_is_judged(repo):
    fake = repo["tmp"] / "fake_tool.py"
    fake.write_text(FAKE_TOOL)
    log = repo["tmp"] / "calls.jsonl"
    out_json = os.path.join(str(repo["tmp"]), "rows.json")
    proc = run_localize(repo, "--no-baseline", "--jobs", "1", "--out", out_json,
                        "--instances", "demo__svc-2", "--tool-cmd", f"{sys.executable} {fake} --log {log}")
    assert proc.returncode == 0, proc.stderr
    assert not any("--judge" in json.loads(line) for line in log.read_text().splitlines())
    rec = json.load(open(out_json))["rows"][0]["systems"]["tool"]
    assert rec["reader"] is False and "judged_per_call" not in rec
    assert rec["reads"][5] == "src/db/models.py"  # unjudged, cycle 2 ranks as cycle 1 did
    assert "no judgments sent" in proc.stdout


def test_reliability_of_cycle_one_ranking():
    out = loopreport.reliability_table(loop_rows(), "cycle1")
    assert "| 0.8–1.0 | 2 | 1 | 50.0% |" in out      # a.go (gold) and b.go at 0.9
    assert "| 0.5–0.7 | 1 | 0 | 0.0% |" in out       # x.go at 0.5: a band holds its lower bound
    assert "| 0.2–0.5 | 1 | 1 | 100.0% |" in out     # c.go (gold) at 0.4 in cycle 1
    assert "top file scores ≥ 0.8 | 2 of 3 (66.7%) |" in out


def _run_file(path, rows):
    path.write_text(json.dumps({"rows": [{"instance": i, "systems": {"tool": t}} for i, t in rows]}))
    return str(path)


def test_samerows_names_each_issue_that_differs_and_the_fields(tmp_path, capsys):
    """Two runs compared issue by issue: equal runs exit 0; a score that moved, a stop
    that changed or an issue in one run only is named, exit 1; a file that is no run
    gets one line and exit 2."""
    row = {"ranking": [["a.py", 0.9]], "cycle1": {"ranking": [["a.py", 0.9]]}, "stop_reason": "sufficient",
           "cycles": 1, "chars_per_cycle": [100], "context": ["a.py"]}
    moved = dict(row, ranking=[["a.py", 0.5]], cycles=3)
    a = _run_file(tmp_path / "a.json", [("x-1", row), ("x-2", row)])
    assert samerows.main([a, a]) == 0
    assert "2 of 2 shared issues equal" in capsys.readouterr().out
    b = _run_file(tmp_path / "b.json", [("x-1", moved), ("x-3", row)])
    assert samerows.main([a, b]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == ["x-1: ranking, cycles differ", "x-2: in one run only", "x-3: in one run only",
                   "0 of 1 shared issues equal; 2 in one run only"]
    (tmp_path / "bad.json").write_text("[1, 2]")
    assert samerows.main([a, str(tmp_path / "bad.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err and "Traceback" not in err
    assert samerows.main([a]) == 2


# ---------------------------------------------------------------- steer.py

import steer  # noqa: E402


def test_steer_picks_a_name_the_fix_defines_that_a_few_files_share_and_the_task_lacks():
    gold = b"def parse_header(x):\n    pass\n\ndef frobnicate_widget(w):\n    pass\n\ndef seldom_used(y):\n    pass\n"
    texts = [b"frobnicate_widget()", b"frobnicate_widget()", b"seldom_used()", b"x = 1"]
    # parse_header is in the task; frobnicate_widget is held by 2 files (+ the fix: 3 with it)
    assert steer.pick_name(gold, "a.py", "parse_header fails", texts + [gold.lower()], 3, 16) == "frobnicate_widget"
    assert steer.pick_name(gold, "a.py", "parse_header fails", texts, 9, 16) is None
    assert steer.place(["a", "b"], "b") == 2 and steer.place(["a"], "c") is None


def test_steer_runs_the_real_tool_and_counts_places(tmp_path):
    tree = tmp_path / "trees" / "o__r-1"
    files = {"pkg/core.py": "def frobnicate_widget(w):\n    return w\n",
             "pkg/a.py": "from .core import frobnicate_widget\nfrobnicate_widget(1)\n# token expiry\n",
             "pkg/b.py": "from .core import frobnicate_widget\nfrobnicate_widget(2)\n# token expiry\n",
             "pkg/other.py": "def token_expiry():\n    '''the token expiry'''\n"}
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"instance_id": "o__r-1", "repo": "o/r", "base_commit": "x",
                                "problem_statement": "token expiry is wrong\n\nthe token expiry breaks",
                                "gold_files": ["pkg/core.py"]}) + "\n")
    out = tmp_path / "o.json"
    code = steer.main(["--data", str(data), "--trees", str(tmp_path / "trees"), "--tool",
                       f"t={sys.executable} {TOOL}", "--jobs", "1", "--out", str(out)])
    assert code == 0
    row = json.loads(out.read_text())["rows"][0]
    assert row["name"] == "frobnicate_widget"
    cycle1, steered, results, stopped, first_gold = row["places"]["t"]
    assert cycle1 != 1 and steered is not None and results is not None
    assert first_gold == (steered == 1) and isinstance(stopped, bool)


# ---------------------------------------------------------------- lines.py

import lines as lines_bench  # noqa: E402


def test_lines_finds_the_fix_after_the_base_and_its_changed_ranges(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()

    def git(*args):
        return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                              capture_output=True, text=True, check=True).stdout.strip()

    git("init", "-q")
    (repo / "a.py").write_text("".join(f"line {i}\n" for i in range(1, 31)))
    (repo / "b.py").write_text("x = 1\n")
    git("add", "."), git("commit", "-qm", "base")
    base = git("rev-parse", "HEAD")
    (repo / "b.py").write_text("x = 2\n")  # an unrelated commit first
    git("commit", "-qam", "other")
    text = (repo / "a.py").read_text().replace("line 12\n", "line twelve\n").replace("line 25\n", "")
    (repo / "a.py").write_text(text)
    git("commit", "-qam", "the fix")
    got = lines_bench.fix_ranges(str(repo / ".git"), base, ["a.py"])
    assert got == {"a.py": [[12, 12], [25, 25]]}
    assert lines_bench.fix_ranges(str(repo / ".git"), base, ["a.py", "c.py"]) is None


def test_lines_scores_the_quoted_lines_of_gold_results():
    out = {"results": [{"id": "a.py", "lines": ["L3: x", "L40: y"]}, {"id": "b.py", "lines": ["L100: z"]},
                       {"id": "c.py", "lines": ["L1: w"]}]}
    ranges = {"a.py": [[45, 47]], "b.py": [[100, 100]]}
    assert lines_bench.quoted_lines(["L3: x", "no number", "L40: y"]) == [3, 40]
    assert lines_bench.score(out, ranges, 10) == [(True, False), (True, True)]
    assert lines_bench.score(out, ranges, 2) == [(False, False), (True, True)]


def test_published_puts_cycle_one_the_final_ranking_and_bm25_beside_the_papers(tmp_path, capsys):
    """Acc@1/3/5/10 of the tool's cycle 1, its final ranking and the same run's BM25,
    each also divided by that BM25; the published rows divided by their own BM25."""
    def tool(final, first):
        return {"ranks": localize.gold_ranks(final, ["g.py"]),
                "cycle1": {"ranking": [[p, 0.5] for p in first]}}
    rows = [{"instance": "x-1", "gold": ["g.py"], "systems": {
                "tool": tool(["g.py"], ["a.py", "b.py", "g.py"]),
                "bm25-lang": {"ranks": {"g.py": 4}}}},
            {"instance": "x-2", "gold": ["g.py"], "systems": {
                "tool": tool(["a.py", "g.py"], ["a.py", "g.py"]),
                "bm25-lang": {"ranks": {"g.py": 1}}}}]
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"rows": rows}))
    assert published.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "| tool, cycle 1 | 0.0 | 100.0 | 100.0 | 100.0 | 0.00× | 2.00× | 1.00× | 1.00× |" in out
    assert "| tool, final ranking | 50.0 | 100.0 | 100.0 | 100.0 | 1.00× | 2.00× | 1.00× | 1.00× |" in out
    assert "| bm25-lang | 50.0 | 50.0 | 100.0 | 100.0 | 1.00× | 1.00× | 1.00× | 1.00× |" in out
    assert "| CodeRankEmbed (137M) | 52.5 | 77.7 | 84.7 | — | 1.36× | 1.50× | 1.37× |" in out
    assert published.main([]) == 2
