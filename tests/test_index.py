"""index.py: one index per tree, shared by every task, always fresh, never changing a result.

Most tests run two loops side by side over the same tree, one with the index and one
with ``--no-cache``, and require every cycle's stdout and the final state to be
byte-for-byte equal -- across edits that keep size and mtime, deletions, renames,
symlink swaps, branch switches, damaged index files and concurrent processes. In-process
runs set the racy window to zero (the trees were written moments ago, so nothing would be
recorded otherwise); subprocess runs wait it out once.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Optional

import pytest

from agentic_search_skill import engine
from agentic_search_skill import index as index_mod
from agentic_search_skill import lang
from agentic_search_skill.match import count_in, defines
from agentic_search_skill.paths import path_match
from agentic_search_skill.progress import Progress
from agentic_search_skill.query import Kind, keywords_from_list, make_keyword
from _trees import write_tree

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "retrieve_loop.py"
OLD = 1_600_000_000  # seconds: mtimes far outside the racy window

TREE = {
    "api/endpoints.py": "from middleware.throttle import Throttle\n\n"
                        "def list_users(request):\n    return Throttle().check(request)\n",
    "middleware/throttle.py": "class Throttle:\n    \"\"\"Throttle API requests per client.\"\"\"\n"
                              "    def check(self, request):\n        return self.bucket.take(request.client)\n",
    "middleware/__init__.py": "from .throttle import Throttle\n",
    "middleware/bucket.py": "class TokenBucket:\n    def take(self, client):\n        return True\n",
    "app/router.py": "from api.endpoints import list_users\n\ndef setup(app):\n"
                     "    app.route('/users', list_users)\n",
    "web/client.js": "export function fetchUsers(api) {\n  return api.get('/users');\n}\n"
                     "const throttle = (fn) => fn;\nmodule.exports = { rate_limit: function () {} };\n",
    "docs/api.md": "# API\nEndpoints are throttled per client (rate limit).\n",
    "util/strings.py": "def slug(text):\n    return text.lower()\n",
    "assets/logo.png": b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
}
STEPS = {1: ["--keywords", "RateLimiter", "endpoints", "rate limit"], 2: [], 3: ["--keywords", "TokenBucket"]}


@pytest.fixture
def instant(monkeypatch):
    """In-process runs record files written moments ago (no racy window)."""
    monkeypatch.setattr(index_mod, "RACY_WINDOW_NS", 0)


def make_tree(root: Path, files: dict = TREE) -> Path:
    return write_tree(root, files, mtime=OLD)


def main(*args) -> str:
    """One in-process call (the racy window as the test set it); returns stdout."""
    import retrieve_loop

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        code = retrieve_loop.main([str(a) for a in args])
    finally:
        sys.stdout, sys.stderr = saved
    assert code == 0, err.getvalue()
    main.stderr = err.getvalue()
    return out.getvalue()


def run(*args, env: Optional[dict] = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc


def side_by_side(tmp_path: Path, tree: Path, cycles: int = 3,
                 between: Optional[Callable[[int], None]] = None, steps: dict = STEPS) -> list[dict]:
    """``cycles`` in-process cycles with and without the index; equal stdout each time,
    equal state at the end; stderr quiet. ``between(n)`` changes the tree after cycle n."""
    states = {"on": tmp_path / "on" / "s.json", "off": tmp_path / "off" / "s.json"}
    for s in states.values():
        s.parent.mkdir(parents=True, exist_ok=True)
    outs = []
    for n in range(1, cycles + 1):
        texts = {}
        for mode, state in states.items():
            args = ["--state", state] + (["--no-cache"] if mode == "off" else [])
            args += (["--root", tree] if n == 1 else []) + steps[n]
            texts[mode] = main(*args)
            assert main.stderr == "" or "loop is done" in main.stderr
        assert texts["on"] == texts["off"], f"cycle {n} differs with the index"
        outs.append(json.loads(texts["on"]))
        if between is not None:
            between(n)
    assert states["on"].read_bytes() == states["off"].read_bytes()
    return outs


def index_dir(tree: Path) -> Path:
    return Path(index_mod.index_path(str(tree)))


def segments(tree: Path) -> list[str]:
    man = json.loads((index_dir(tree) / index_mod.MANIFEST).read_text())
    return man["segments"]


def ranked(out: dict) -> list[str]:
    return [r["id"] for r in out["ranking"]]


def same_size_edit(path: Path, old: bytes, new: bytes, keep_mtime: bool = True) -> None:
    data = path.read_bytes()
    assert old in data and len(old) == len(new)
    st = os.stat(path)
    path.write_bytes(data.replace(old, new))
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


# --------------------------------------------------------------------------- same results


def test_three_cycles_identical_and_the_index_is_used(tmp_path, instant):
    tree = make_tree(tmp_path / "tree")
    outs = side_by_side(tmp_path, tree)
    assert len(outs) == 3 and "TokenBucket" in outs[2]["query"]["keywords"]
    assert len(segments(tree)) == 1
    assert (index_dir(tree) / index_mod.STORE_NAME).is_file()  # answers kept for later tasks


def test_a_path_quoted_from_outside_the_root_names_its_file_with_the_index_too(tmp_path, instant):
    """A diff's ``a/middleware/throttle.py`` ends with a file's path: that file is named
    by it, read live or through the index alike (the index once made it a gap)."""
    tree = make_tree(tmp_path / "tree")
    task = ("Fix the rate limit check.\n--- a/middleware/throttle.py\n+++ b/middleware/throttle.py\n"
            "see also checkout/app/api/endpoints.py")
    outs = side_by_side(tmp_path, tree, cycles=1, steps={1: ["--task", task]})
    assert outs[0]["ranking"][0]["id"] == "middleware/throttle.py"
    assert not any("throttle.py" in g or "endpoints.py" in g for g in outs[0].get("gaps", []))


def test_a_new_task_reads_no_file_and_agrees(tmp_path, instant, monkeypatch):
    tree = make_tree(tmp_path / "tree")
    main("--root", tree, "--state", tmp_path / "a.json", *STEPS[1])
    reads: list[str] = []
    real = engine.read_document
    monkeypatch.setattr(engine, "read_document", lambda rel, path, **kw: reads.append(rel) or real(rel, path, **kw))
    on = main("--root", tree, "--state", tmp_path / "b.json", "--keywords", "Throttle", "slug", "client")
    assert reads == []
    off = main("--root", tree, "--state", tmp_path / "c.json", "--no-cache", "--keywords", "Throttle", "slug",
               "client")
    assert on == off
    (tree / "util/strings.py").write_text("def slug(text):\n    return text.upper()\n")
    os.utime(tree / "util/strings.py", (OLD + 5, OLD + 5))
    main("--root", tree, "--state", tmp_path / "d.json", *STEPS[1])
    assert reads == ["util/strings.py"]  # only what changed is read again


def test_counts_and_definitions_equal_the_matcher_on_every_token(tmp_path):
    """For every token and prefix of a multi-language corpus: the segment's count is
    the matcher's (match.count_in: bytes.count, a short needle's where a word starts) and every file ``match.defines`` finds a definition in is a
    definition-site holder (the pruning never hides one)."""
    files = dict(CORPUS)
    files["u.txt"] = "caf\u00e9ant \u00e9t\u00e9_ant a\u00efe xant_ant\n"  # (a short needle after a byte past ASCII)
    rng = random.Random(7)
    words = ["alpha", "beta_gamma", "delta1", "e", "zz"]
    for i in range(30):  # random text: definitions words, line starts, calls, impls
        lines = []
        for _ in range(40):
            w = rng.choice(words) + rng.choice(["", "s", "er", "_x"])
            lines.append(rng.choice(["def ", "class ", "fn ", "func (r *T) ", "  ", "", "impl ", "x.", "\t",
                                     "const (", ")", "def self.", "function m:", "  private ", "using "]) + w
                         + rng.choice(["(a) {", " = 1", ": int", "(;", " ", "::new", "\r", "<t>(a) {", "?: t;",
                                       " = () => {", ".x", " { get; }", " => x;", "\n{ set", " {"]))
        files[f"r{i}.{rng.choice(['py', 'js', 'rs', 'go', 'c', 'java', 'txt', 'xyz', 'rb', 'lua', 'cs', 'ex'])}"] = \
            "\n".join(lines)
    entries = [(rel, (1, 1, 1, 1, i + 1), text.lower().encode()) for i, (rel, text) in enumerate(sorted(files.items()))]
    seg = index_mod.build_segment("seg-test.idx", entries)
    for fi, (rel, _st, low) in enumerate(entries):
        language = lang.language_of(rel)
        needles = set(index_mod._TOKEN_RE.findall(low))
        needles |= {t[:k] for t in list(needles) for k in range(1, len(t))}
        for n in sorted(needles):
            assert seg.count(n).get(fi, 0) == count_in(low, n), (rel, n)
            if low.count(n) and defines(low, n, language, low.count(n)):
                assert fi in seg.def_holders(n), (rel, n)


@pytest.mark.parametrize("odd", ["", "we\nird/new_line.py"])
def test_path_hits_found_all_at_once_equal_the_path_test_of_each_file(odd):
    """The index searches every path at once (lower-cased and flattened in one piece):
    what it finds is the path test of each file, whatever case rules or separators
    the names hold, a name with a newline in it too."""
    rels = ["api/Rate-Limit.py", "İstanbul/TOKEN_bucket.go", "ΣΑΣ/σας.js", "lib/jwt-utils.ts",
            "a/ratelimit/__init__.py", "x/RateLimiter.java", "deep/rate_limit/tokens/bucket.rs", odd]
    rels += [f"pkg{k}/{'Token_Bucket' if k % 37 == 0 else 'mod'}_{k}.py" for k in range(300)]
    docs = [engine.Document(r, b"", b"", size=0, path="/nowhere") for r in rels if r]
    kws = keywords_from_list(["rate_limit", "token", "ratelimit", "σας", "jwt", "istanbul", "limit",
                              "rate-limit", "bucket.go", "i̇stanbul"])
    # Quoted paths, two of them from outside the root (a diff's ``a/``, a checkout's
    # directory): the file whose path ends them is named as surely as by its own path.
    kws += [make_keyword(t, Kind.PATH) for t in ("a/lib/jwt-utils.ts", "work/app/deep/rate_limit/tokens/bucket.rs",
                                                  "x/RateLimiter.java", "b/pkg74/Token_Bucket_74.py", "pkg1/mod_1/x")]
    # ... and dotted names, whose last part may be a member of a module file
    kws += [replace(make_keyword(t, Kind.PATH), dotted=True) for t in ("pkg1/mod_1/handle", "lib/jwt-utils/sign")]
    in_path: dict = {}
    hit = [False] * len(docs)
    index_mod.Index._paths(docs, kws, in_path, hit, skip=[])
    for p, doc in enumerate(docs):
        want = [path_match(doc.rel.lower(), kw, doc.rel) for kw in kws]
        assert in_path.get(p, [0.0] * len(kws)) == want, doc.rel
        assert hit[p] == any(want)
    assert any(hit)


def test_presence_counts_from_postings_equal_the_texts(tmp_path, instant, monkeypatch):
    """How many documents hold a needle (learned vocabulary's rarity): from postings for
    the files the index serves, from the text for a changed one, equal to ``in`` on the
    texts for every token, prefix and inner piece, and for needles of other bytes; the
    roles the index recorded are lang.file_role's."""
    from agentic_search_skill.walk import walk

    tree = make_tree(tmp_path / "tree", {**TREE, **CORPUS})
    main("--root", tree, "--state", tmp_path / "a.json", *STEPS[1])
    (tree / "util/strings.py").write_text("def slug(text):\n    return text.upper()  # limiter\n")
    os.utime(tree / "util/strings.py", (OLD + 5, OLD + 5))
    index = index_mod.open_index(str(tree))
    docs, _, _ = engine.load_documents(walk(str(tree)).files, index)
    holding = index.presence(docs)
    lows = [d.low for d in docs]
    needles = set()
    for low in lows:
        for t in index_mod._TOKEN_RE.findall(low):
            needles |= {t[a:b] for a in range(len(t)) for b in range(a + 1, len(t) + 1)}
    needles |= {b"rate limit", b"a.py", b"zzz_absent", b"", b"(a)"}
    for n in sorted(needles):
        want = sum(n in low for low in lows) if index_mod._IDENT_NEEDLE.match(n) else None
        assert holding(n) == want, n  # (None: other needles are left to the texts)
    from agentic_search_skill import score

    served = [d.rel for d in docs if d.rel != "util/strings.py"]
    assert served and all(score.KNOWN_ROLES[r] == lang.file_role(r) for r in served)  # roles kept
    index.match(docs, keywords_from_list(["slug"]))  # the changed file now in a new segment
    holding = index.presence(docs)
    for n in sorted(needles):
        want = sum(n in low for low in lows) if index_mod._IDENT_NEEDLE.match(n) else None
        assert holding(n) == want, n  # (None: other needles are left to the texts)
    index.save()
    index.close()
    # A later process reads the answers back from the needle store: no vocabulary search.
    index = index_mod.open_index(str(tree))
    docs, _, _ = engine.load_documents(walk(str(tree)).files, index)

    def no_search(*_a):
        raise AssertionError("counted again")

    monkeypatch.setattr(index_mod.Segment, "count", no_search)
    holding = index.presence(docs)
    for n in (b"tokenbucket", b"e", b"limit"):
        assert holding(n) == sum(n in low for low in lows), n
    index.close()


CORPUS = {
    "a.py": "class Throttle:\n    def check(self):\n        pass\nLIMIT = 3\nlimit_s: int = 4\npubdef foo\n",
    "b.js": "export default class Api {}\nfunction go() {}\nconst x = {\n  fetchUsers: function () {},\n"
            "  rate(a) { return 1 }\n};\nexports.limit = 3;\nproto.format = (a) => a;\nmodule.exports = api\n",
    "c.c": "static int rate_limit(int a);\nint rate_limit(int a) {\n  return a;\n}\nstruct bucket;\n"
           "struct bucket { int n; };\n#define MAX_RATE 4\nvoid\nrun(void)\n{\n}\n",
    "d.rs": "pub fn take(&self) -> bool {\n    true\n}\nimpl<T> Throttle for Bucket<T> {\n}\n"
            "unsafe impl Send for Bucket {}\ntrait Limit { fn limit(&self); }\nmacro_rules! limiter {}\n",
    "e.go": "package x\nfunc (b *Bucket) Take() bool {\n\treturn true\n}\ntype Limiter struct{}\n",
    "f.java": "public class RateLimiter {\n  public boolean tryAcquire(int n) {\n    return true;\n  }\n}\n",
    "g.md": "# limit\nrate limit notes\n",
    "h.go": "package x\nconst (\n\tMaxRate = 3\n\tlimit\n)\ntype (\n\tBucket struct{}\n)\nvar (\n\tErrLimit = 1\n",
    "i.ts": "class Api {\n  private readonly limit?: number;\n  check = async (a) => {\n  };\n"
            "  static take<T>(a: T): T {\n  }\n  abstract rate(): void;\n}\n",
    "j.rb": "module Throttle\n  def self.limit(a)\n  end\n  def Bucket::take\n  end\nend\n",
    "k.lua": "function M.limit(a)\nend\nfunction Bucket:take()\nend\nlocal function rate() end\n",
    "l.cs": "public class Bucket {\n    public int Take<T>(T a) => 1;\n    using Limit = Rate;\n}\n",
}


# --------------------------------------------------------------------------- freshness


def test_edits_additions_and_deletions_between_cycles(tmp_path, instant):
    tree = make_tree(tmp_path / "tree")

    def change(n: int) -> None:
        if n == 1:
            same_size_edit(tree / "util/strings.py", b"slug(text)", b"throttle()", keep_mtime=False)
            os.utime(tree / "util/strings.py", (OLD + 1, OLD + 1))
            make_tree(tree, {"middleware/ratelimit.py": "def throttle_endpoint(api):\n    return api\n"})
        if n == 2:
            (tree / "middleware/bucket.py").unlink()

    outs = side_by_side(tmp_path, tree, between=change)
    assert "middleware/ratelimit.py" in ranked(outs[1]) and "util/strings.py" in ranked(outs[1])
    assert "middleware/bucket.py" not in [r["id"] for r in outs[2]["results"]]  # it held TokenBucket
    assert outs[2]["stats"]["files_read"] == outs[1]["stats"]["files_read"] - 1


@pytest.mark.parametrize("how", ["size and mtime kept", "renamed", "replaced by a symlink", "turned binary"])
def test_a_stale_entry_is_never_served(tmp_path, instant, how):
    tree = make_tree(tmp_path / "tree")
    target = tree / "util/strings.py"

    def change(n: int) -> None:
        if n != 1:
            return
        time.sleep(0.01)  # a new ctime tick
        if how == "size and mtime kept":
            same_size_edit(target, b"def slug(text)", b"def bucket(ab)")
        elif how == "turned binary":
            same_size_edit(target, b"def slug(text)", b"bucket\0\0\0\0\0\0\0\0")
        elif how == "renamed":
            os.rename(target, tree / "util/bucket_names.py")
        else:
            target.unlink()
            os.symlink("../middleware/bucket.py", target)

    side_by_side(tmp_path, tree, cycles=3, between=change)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_branch_switched_under_the_index(tmp_path, instant):
    tree = make_tree(tmp_path / "tree")
    git = ["git", "-C", str(tree), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q", "-b", "main"], check=True)
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "one"], check=True)
    subprocess.run(git + ["checkout", "-qb", "other"], check=True)
    (tree / "middleware/bucket.py").write_text("class LeakyBucket:\n    pass\n")
    (tree / "middleware/tokens.py").write_text("class TokenBucket:\n    def take(self):\n        return 1\n")
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "two"], check=True)
    subprocess.run(git + ["checkout", "-q", "main"], check=True)

    def switch(n: int) -> None:
        if n == 1:
            subprocess.run(git + ["checkout", "-q", "other"], check=True)

    outs = side_by_side(tmp_path, tree, between=switch)
    assert "middleware/tokens.py" in [r["id"] for r in outs[2]["results"]]
    later = side_by_side(tmp_path / "back", tree, cycles=1, steps={1: ["--keywords", "TokenBucket"]},
                         between=lambda n: None)
    subprocess.run(git + ["checkout", "-q", "main"], check=True)
    again = side_by_side(tmp_path / "main", tree, cycles=1, steps={1: ["--keywords", "TokenBucket"]})
    assert [r["id"] for r in later[0]["results"]] != [r["id"] for r in again[0]["results"]]


def test_a_file_written_moments_ago_is_not_recorded(tmp_path):
    tree = make_tree(tmp_path / "tree")
    time.sleep(index_mod.RACY_WINDOW_NS / 1e9)
    (tree / "util/fresh.py").write_text("x = 1\n")  # mtime: now
    run("--root", tree, "--state", tmp_path / "s.json", *STEPS[1])
    seg = index_mod.Segment.load(str(index_dir(tree) / segments(tree)[0]), os.path.realpath(tree),
                                 index_mod.matcher_fingerprint())
    assert "util/fresh.py" not in seg.rels and "util/strings.py" in seg.rels
    seg.close()


# --------------------------------------------------------------------------- growth and bounds


def test_segments_are_merged_when_there_are_too_many(tmp_path, instant, monkeypatch):
    monkeypatch.setattr(index_mod, "MAX_SEGMENTS", 2)
    tree = make_tree(tmp_path / "tree")

    def touch(n: int) -> None:
        make_tree(tree, {f"extra/m{n}.py": f"def bucket_{n}():\n    return {n}\n"})

    steps = {n: ["--keywords", f"bucket_{n - 1}", "Throttle"] for n in range(1, 6)}
    steps[1] += ["--max-cycles", "9"]
    outs = side_by_side(tmp_path, tree, cycles=5, between=touch, steps=steps)
    assert [o["cycle"] for o in outs] == [1, 2, 3, 4, 5]
    names = segments(tree)
    assert len(names) <= 2
    rels = set()
    for name in names:
        seg = index_mod.Segment.load(str(index_dir(tree) / name), os.path.realpath(tree),
                                     index_mod.matcher_fingerprint())
        rels |= set(seg.rels)
        seg.close()
    assert {f"extra/m{n}.py" for n in range(1, 5)} <= rels and "util/strings.py" in rels


def test_over_the_step_a_large_tree_is_indexed_over_several_cycles(tmp_path, instant, monkeypatch):
    monkeypatch.setattr(index_mod, "BUILD_STEP_BYTES", 150)
    tree = make_tree(tmp_path / "tree")
    side_by_side(tmp_path, tree)
    covered = set()
    for name in segments(tree):
        seg = index_mod.Segment.load(str(index_dir(tree) / name), os.path.realpath(tree),
                                     index_mod.matcher_fingerprint())
        assert seg.size <= 150
        covered |= set(seg.rels)
        seg.close()
    assert len(segments(tree)) >= 2 and len(covered) > 3


def test_the_size_cap_leaves_files_unindexed(tmp_path, instant, monkeypatch):
    monkeypatch.setenv(index_mod.ENV_MAX_MB, "0")
    tree = make_tree(tmp_path / "tree")
    side_by_side(tmp_path, tree, cycles=2)
    assert not list(index_dir(tree).glob("seg-*.idx")) or all(
        index_mod.Segment.load(str(p), os.path.realpath(tree), index_mod.matcher_fingerprint()).size == 0
        for p in index_dir(tree).glob("seg-*.idx"))


def test_indexing_shows_progress_on_a_terminal_only(monkeypatch):
    from agentic_search_skill import progress as progress_mod

    monkeypatch.setattr(progress_mod, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(progress_mod, "PROGRESS_EVERY", 0.0)
    entries = [(f"f{i}.py", (1, 1, 1, 1, i + 1), b"def f():\n    pass\n") for i in range(200)]
    shown = io.StringIO()
    index_mod.build_segment("seg-x.idx", entries, Progress(shown, enabled=True))
    assert "indexing 64/200 files" in shown.getvalue()
    quiet = io.StringIO()
    index_mod.build_segment("seg-x.idx", entries, Progress(quiet))  # a StringIO is no terminal
    assert quiet.getvalue() == ""


# --------------------------------------------------------------------------- damage


def _garbage(p: Path) -> None:
    p.write_bytes(b"\x00\xffnot an index at all")


def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[:-9])


def _overwrite_store_data(p: Path) -> None:
    """The needle store's answers (after its header) overwritten with 01 00 00 00 repeated."""
    data = p.read_bytes()
    nl = data.index(b"\n")
    base = nl + 1 + int(data[:nl].split(b" ")[2])
    body = len(data) - base
    assert body > 0
    p.write_bytes(data[:base] + (b"\x01\0\0\0" * (body // 4 + 1))[:body])


def _shift_fact_digits(p: Path) -> None:
    """Every digit of the fact lines moved by one: file numbers and values name others."""
    first, _, body = p.read_bytes().partition(b"\n")
    assert body
    p.write_bytes(first + b"\n" + body.translate(bytes.maketrans(b"0123456789", b"1234567890")))


def _edit_manifest(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def damage(d: Path) -> None:
        p = d / index_mod.MANIFEST
        man = json.loads(p.read_text())
        change(man)
        p.write_text(json.dumps(man))
    return damage


def _huge_header_length(p: Path) -> None:
    """The first line's length field made larger than any file (or any C size)."""
    first, nl, rest = p.read_bytes().partition(b"\n")
    parts = first.split(b" ")
    assert len(parts) == 3 and parts[2].isdigit()
    p.write_bytes(b" ".join(parts[:2] + [b"99999999999999999999"]) + nl + rest)


def _segment_section(name: str, fill: Callable[[bytearray, int, int], None]) -> Callable[[Path], None]:
    """A segment's section ``name`` changed in place by ``fill(data, start, end)``: the
    file's structure (sizes, offsets, tables) stays sound, only its values change."""
    def damage(d: Path) -> None:
        for p in d.glob("seg-*.idx"):
            data = bytearray(p.read_bytes())
            nl = data.index(b"\n")
            hlen = int(data[:nl].split(b" ")[2])
            o, n = json.loads(data[nl + 1:nl + 1 + hlen])["sections"][name]
            base = nl + 1 + hlen + o
            fill(data, base, base + n)
            p.write_bytes(bytes(data))
    return damage


def _counts_of_one(data: bytearray, start: int, end: int) -> None:
    data[start:end] = (b"\x01\0\0\0" * ((end - start) // 4 + 1))[:end - start]


def _every_seventh_byte(data: bytearray, start: int, end: int) -> None:
    for k in range(start, end, 7):
        data[k] = ord("z") if data[k] != ord("z") else ord("y")


def _segment_head(value: object) -> Callable[[Path], None]:
    """Each segment's header JSON replaced by ``value`` (its length field kept true)."""
    def damage(d: Path) -> None:
        for p in d.glob("seg-*.idx"):
            data = p.read_bytes()
            nl = data.index(b"\n")
            parts = data[:nl].split(b" ")
            hlen = int(parts[2])
            head = json.dumps(value).encode()
            p.write_bytes(b" ".join(parts[:2] + [str(len(head)).encode()]) + b"\n" + head + data[nl + 1 + hlen:])
    return damage


DAMAGE = {
    "segment header a list": (_segment_head([]), True),
    "segment header without sections": (_segment_head({"sections": []}), True),
    # (A third adversarial check: counts rewritten with the structure intact served other
    # scores, silently, until segments carried checksums.)
    "segment counts rewritten": (_segment_section("post_cnt", _counts_of_one), True),
    "segment texts rewritten": (_segment_section("text", _every_seventh_byte), False),
    "huge segment header length": (lambda d: [_huge_header_length(p) for p in d.glob("seg-*.idx")], True),
    "huge needle store header length": (lambda d: _huge_header_length(d / index_mod.STORE_NAME), True),
    "garbage manifest": (lambda d: _garbage(d / index_mod.MANIFEST), True),
    "empty manifest": (lambda d: (d / index_mod.MANIFEST).write_bytes(b""), True),
    "deep manifest": (lambda d: (d / index_mod.MANIFEST).write_bytes(b"[" * 100_000 + b"]" * 100_000), True),
    "foreign manifest": (_edit_manifest(lambda m: m.update(format="something-else")), True),
    # (An update's rebuild says nothing: the results are the same, and agents read the
    # line as something gone wrong.)
    "other version": (_edit_manifest(lambda m: m.update(version=999)), False),
    "other root": (_edit_manifest(lambda m: m.update(root="/elsewhere")), True),
    "other matcher": (_edit_manifest(lambda m: m.update(matcher="0" * 16)), False),
    "segment path escapes": (_edit_manifest(lambda m: m.update(segments=["../x.idx"])), True),
    "missing segment": (lambda d: [p.unlink() for p in d.glob("seg-*.idx")], False),
    "garbage segment": (lambda d: [_garbage(p) for p in d.glob("seg-*.idx")], True),
    "truncated segment": (lambda d: [_truncate(p) for p in d.glob("seg-*.idx")], True),
    "garbage needle store": (lambda d: _garbage(d / index_mod.STORE_NAME), True),
    "truncated needle store": (lambda d: _truncate(d / index_mod.STORE_NAME), True),
    "garbage fact store": (lambda d: _garbage(d / index_mod.FACTS_NAME), True),
    "truncated fact store": (lambda d: _truncate(d / index_mod.FACTS_NAME), True),
    "overwritten needle store data": (lambda d: _overwrite_store_data(d / index_mod.STORE_NAME), True),
    "shifted fact store digits": (lambda d: _shift_fact_digits(d / index_mod.FACTS_NAME), True),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_index_is_rebuilt_with_one_line(tmp_path, instant, kind):
    tree = make_tree(tmp_path / "tree")
    clean = main("--root", tree, "--state", tmp_path / "off.json", "--no-cache", *STEPS[1])
    main("--root", tree, "--state", tmp_path / "a.json", *STEPS[1])
    damage, says = DAMAGE[kind]
    damage(index_dir(tree))
    assert main("--root", tree, "--state", tmp_path / "b.json", *STEPS[1]) == clean
    assert main.stderr.count("\n") == (1 if says else 0), main.stderr
    assert not says or main.stderr.startswith("retrieve_loop.py: index ")
    assert main("--root", tree, "--state", tmp_path / "c.json", *STEPS[1]) == clean
    assert main.stderr == ""  # rebuilt: the next run has nothing to say


def test_an_index_that_cannot_be_saved_says_so_every_cycle(tmp_path, instant):
    # A directory where the manifest goes: "rebuilt" alone promised what could not be
    # done; each cycle now also says the index was not saved, and answers the same.
    tree = make_tree(tmp_path / "tree")
    clean = main("--root", tree, "--state", tmp_path / "off.json", "--no-cache", *STEPS[1])
    main("--root", tree, "--state", tmp_path / "a.json", *STEPS[1])
    manifest = index_dir(tree) / index_mod.MANIFEST
    manifest.unlink()
    manifest.mkdir()
    for name in ("b.json", "c.json"):
        assert main("--root", tree, "--state", tmp_path / name, *STEPS[1]) == clean
        lines = main.stderr.splitlines()
        assert len(lines) == 2 and lines[0].endswith("a directory; not used (remove it to let the index be saved)"), \
            main.stderr
        assert "not all saved (" in lines[1] and lines[1].endswith("(answers are the same)")


def test_a_crash_mid_write_leaves_the_previous_index(tmp_path, instant, monkeypatch):
    tree = make_tree(tmp_path / "tree")
    clean = main("--root", tree, "--state", tmp_path / "off.json", "--no-cache", *STEPS[1])
    main("--root", tree, "--state", tmp_path / "a.json", *STEPS[1])
    before = segments(tree)
    make_tree(tree, {"extra/new.py": "def rate_limit():\n    pass\n"})
    real = index_mod.atomic_write

    def crash(path, pieces, **kw):
        if path.endswith(index_mod.MANIFEST):
            raise KeyboardInterrupt  # killed between the new segment and the manifest
        return real(path, pieces, **kw)

    monkeypatch.setattr(index_mod, "atomic_write", crash)
    with pytest.raises(KeyboardInterrupt):
        index = index_mod.open_index(str(tree))
        docs, _, _ = engine.load_documents(__import__("agentic_search_skill.walk", fromlist=["walk"]).walk(str(tree)).files,
                                           index)
        index.match(docs, [])
        index.save()
    monkeypatch.setattr(index_mod, "atomic_write", real)
    assert segments(tree) == before  # the previous manifest, still sound
    clean2 = main("--root", tree, "--state", tmp_path / "off2.json", "--no-cache", *STEPS[1])
    assert main("--root", tree, "--state", tmp_path / "b.json", *STEPS[1]) == clean2 != clean
    assert main.stderr == ""


def test_two_processes_at_once_on_one_index(tmp_path):
    """Two tasks start together on an unindexed tree: both finish, agree with a run without
    the index, and leave a sound index a third run uses quietly."""
    files = dict(TREE)
    for i in range(300):
        files[f"pkg/m{i}.py"] = f"def handler_{i}(request):\n    return throttle(request, {i})\n" * 20
    tree = make_tree(tmp_path / "tree", files)
    time.sleep(index_mod.RACY_WINDOW_NS / 1e9)
    clean = run("--root", tree, "--state", tmp_path / "off.json", "--no-cache", *STEPS[1]).stdout
    procs = [subprocess.Popen([sys.executable, str(SCRIPT), "--root", str(tree), "--state",
                               str(tmp_path / f"p{i}.json"), *STEPS[1]], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs) and all(err == "" for _, err in outs), outs
    assert all(out == clean for out, _ in outs)
    third = run("--root", tree, "--state", tmp_path / "p3.json", *STEPS[1])
    assert third.stdout == clean and third.stderr == ""
    assert 1 <= len(segments(tree)) <= 2


# --------------------------------------------------------------------------- where it lives


def test_never_inside_the_tree_and_no_cache_writes_nothing(tmp_path, instant, monkeypatch):
    tree = make_tree(tmp_path / "tree")
    listing = sorted(str(p.relative_to(tree)) for p in tree.rglob("*"))
    main("--root", tree, "--state", tmp_path / "s.json", *STEPS[1])
    main("--state", tmp_path / "s.json")
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*")) == listing
    assert sorted(os.listdir(tmp_path)) == ["s.json", "s.json.lock", "tree"]
    base = tmp_path / "elsewhere"
    monkeypatch.setenv(index_mod.ENV_DIR, str(base))
    main("--root", tree, "--state", tmp_path / "n.json", "--no-cache", *STEPS[1])
    assert not base.exists()
    monkeypatch.setenv(index_mod.ENV_DIR, str(tree / ".cache"))  # pointed inside the tree: refused
    out = main("--root", tree, "--state", tmp_path / "i.json", *STEPS[1])
    assert main.stderr.count("\n") == 1 and "inside --root" in main.stderr
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*")) == listing
    assert out == main("--root", tree, "--state", tmp_path / "j.json", "--no-cache", *STEPS[1])


def test_the_index_dir_flag_and_the_xdg_default(tmp_path, instant, monkeypatch):
    tree = make_tree(tmp_path / "tree")
    main("--root", tree, "--state", tmp_path / "s.json", "--index-dir", tmp_path / "mine", *STEPS[1])
    assert list((tmp_path / "mine").glob("*/seg-*.idx"))
    monkeypatch.delenv(index_mod.ENV_DIR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert index_mod.base_dir() == str(tmp_path / "xdg" / "agentic-search")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert index_mod.base_dir() == str(tmp_path / "home" / ".cache" / "agentic-search")


@pytest.mark.parametrize("how", ["a file", "another owner", "not writable"])
def test_an_unusable_index_dir_is_not_an_error(tmp_path, instant, monkeypatch, how):
    tree = make_tree(tmp_path / "tree")
    base = tmp_path / "base"
    monkeypatch.setenv(index_mod.ENV_DIR, str(base))
    target = Path(index_mod.index_path(str(tree)))
    base.mkdir()
    if how == "a file":
        target.write_text("not a directory")
    elif how == "another owner":
        if os.geteuid() != 0:
            pytest.skip("needs root to give a directory away")
        target.mkdir()
        os.chown(target, 4242, 4242)
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes anywhere")
        target.mkdir()
        target.chmod(0o500)
    clean = main("--root", tree, "--state", tmp_path / "off.json", "--no-cache", *STEPS[1])
    for n in range(2):
        assert main("--root", tree, "--state", tmp_path / f"s{n}.json", *STEPS[1]) == clean
        assert main.stderr.count("\n") <= 1
    if how != "not writable":
        assert "not" in main.stderr


def test_a_large_first_build_on_several_cores_agrees(tmp_path, instant, monkeypatch):
    """Forked workers each write a part of the first build as a segment of its own."""
    from agentic_search_skill import match as match_mod

    monkeypatch.setattr(match_mod, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    tree = make_tree(tmp_path / "tree")
    side_by_side(tmp_path, tree)
    assert len(segments(tree)) == 2


def test_eviction_drops_old_indexes_and_nothing_else_of_the_directory(tmp_path, monkeypatch):
    # Over the size bound the least recently used trees' indexes go; a folder of state
    # files the user keeps beside them (a trusted directory, not named like an index) stays.
    # A folder named like an index without an index's manifest is the user's too, and a
    # file of the user's inside an index folder outlives the index.
    base = tmp_path / "cache"
    old = base / ("a" * index_mod.KEY_DIGITS)
    mine = base / ("b" * index_mod.KEY_DIGITS)
    kept = base / ("c" * index_mod.KEY_DIGITS)
    shared = base / ("d" * index_mod.KEY_DIGITS)
    states = base / "states"
    manifest = json.dumps({"format": index_mod.FORMAT_NAME, "version": 1})
    for d in (old, mine, kept, shared, states):
        d.mkdir(parents=True)
        (d / index_mod.MANIFEST).write_text(manifest if d != kept else "{}")
        d.chmod(0o700)
    (states / "task.json").write_text("{}")
    (kept / "notes.txt").write_text("mine")
    (shared / "seg-0.idx").write_text("x")
    (shared / "notes.txt").write_text("mine")
    piped = base / ("e" * index_mod.KEY_DIGITS)  # a FIFO for a manifest is never waited on
    piped.mkdir(mode=0o700)
    os.mkfifo(piped / index_mod.MANIFEST)
    monkeypatch.setattr(index_mod, "TOTAL_MAX_MB", 0)
    index_mod._evict_others(str(base), str(mine))
    assert not old.exists()
    assert (mine / index_mod.MANIFEST).exists()
    assert (states / "task.json").exists() and (states / index_mod.MANIFEST).exists()
    assert (kept / "notes.txt").exists() and (kept / index_mod.MANIFEST).exists()
    assert sorted(p.name for p in shared.iterdir()) == ["notes.txt"]
    assert (piped / index_mod.MANIFEST).exists()


def test_eviction_counts_what_files_take_on_disk_and_spares_an_index_being_saved(tmp_path, monkeypatch):
    # A sparse 9 GB file in one index made every other index "too large" and deleted;
    # an index whose lock another process holds (it is saving) is in use and stays.
    fcntl = pytest.importorskip("fcntl")
    base = tmp_path / "cache"
    manifest = json.dumps({"format": index_mod.FORMAT_NAME, "version": 1})
    dirs = {}
    for key, name in (("a", "sparse"), ("b", "mine"), ("c", "busy"), ("d", "old")):
        d = base / (key * index_mod.KEY_DIGITS)
        d.mkdir(parents=True)
        (d / index_mod.MANIFEST).write_text(manifest)
        d.chmod(0o700)
        dirs[name] = d
    with open(dirs["sparse"] / "seg-0.idx", "wb") as fh:
        fh.truncate(9 << 30)
    (dirs["old"] / "seg-0.idx").write_bytes(b"x" * 4096)
    monkeypatch.setattr(index_mod, "TOTAL_MAX_MB", 1)
    index_mod._evict_others(str(base), str(dirs["mine"]))
    assert all(d.exists() for d in dirs.values())  # holes take no room: nothing over the bound
    monkeypatch.setattr(index_mod, "TOTAL_MAX_MB", 0)
    with open(dirs["busy"] / index_mod.LOCK_NAME, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        index_mod._evict_others(str(base), str(dirs["mine"]))
    assert not dirs["old"].exists() and not dirs["sparse"].exists()
    assert (dirs["busy"] / index_mod.MANIFEST).exists() and (dirs["mine"] / index_mod.MANIFEST).exists()


# --------------------------------------------------------------------------- kept facts


def test_facts_kept_for_later_tasks_never_outlive_the_file(tmp_path, instant, monkeypatch):
    """The tags' candidates and the imports a cycle derives from an indexed file are kept
    for later cycles and tasks (not derived again), and never served for another version
    of the file: an edit that keeps size and mtime gives what a run without the index
    gives."""
    from agentic_search_skill import cycle
    from agentic_search_skill import imports as imports_mod

    tree = make_tree(tmp_path / "tree")
    args = ["--full", *STEPS[1]]
    first = main("--root", tree, "--state", tmp_path / "a.json", *args)
    kinds = {line.split(b"\t")[2] for line in (index_dir(tree) / index_mod.FACTS_NAME).read_bytes().splitlines()[1:]}
    assert kinds == {b"names", b"imports"}
    derived: list[str] = []
    real_names, real_imports = cycle.ranked_names, imports_mod.imports_of
    monkeypatch.setattr(cycle, "ranked_names", lambda text, rel: derived.append(rel) or real_names(text, rel))
    monkeypatch.setattr(imports_mod, "imports_of", lambda rel, *a: derived.append(rel) or real_imports(rel, *a))
    assert main("--root", tree, "--state", tmp_path / "b.json", *args) == first
    assert derived == []  # all read back
    monkeypatch.undo()
    endpoints = json.loads(first)["results"]
    assert any(r["id"] == "api/endpoints.py" and "list_users" in r["tags"]
               and "middleware/throttle.py" in r["related"] for r in endpoints)
    time.sleep(0.01)  # a new ctime tick
    same_size_edit(tree / "api/endpoints.py", b"from middleware.throttle import", b"from middleware.bucket   import")
    same_size_edit(tree / "api/endpoints.py", b"def list_users(", b"def list_items(")
    on = main("--root", tree, "--state", tmp_path / "c.json", *args)
    assert on == main("--root", tree, "--state", tmp_path / "d.json", "--no-cache", *args)
    result = next(r for r in json.loads(on)["results"] if r["id"] == "api/endpoints.py")
    assert "list_items" in result["tags"] and "middleware/bucket.py" in result["related"]


def test_the_fact_store_is_kept_across_changes_to_code_that_makes_no_fact(tmp_path):
    # An update that changes only how files are scored or what the output says leaves the
    # facts (a file's imports and defined names) true: their fingerprint stays; a change to
    # the code that makes them, or to the data it reads, is a new fingerprint.
    package = tmp_path / "pkg"
    shutil.copytree(os.path.dirname(index_mod.__file__), package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    before = index_mod.facts_fingerprint("m", str(package))
    assert before and before == index_mod.facts_fingerprint("m", str(package))
    for name in ("score.py", "decide.py", "output.py", "data/stopwords.json"):
        (package / name).write_bytes((package / name).read_bytes() + b"\n")
    assert index_mod.facts_fingerprint("m", str(package)) == before
    assert index_mod.facts_fingerprint("other matcher", str(package)) != before
    for name in index_mod.FACT_MODULES + tuple("data/" + d for d in index_mod.FACT_DATA):
        original = (package / name).read_bytes()
        (package / name).write_bytes(original + b"\n")
        assert index_mod.facts_fingerprint("m", str(package)) != before, name
        (package / name).write_bytes(original)
    assert index_mod.facts_fingerprint("m", str(package)) == before


def test_the_matcher_fingerprint_covers_the_modules_whose_facts_are_kept(tmp_path, monkeypatch):
    # The fact store keeps report.ranked_names' tags and imports.imports_of's imports: a
    # change to either module must make the index's stored facts unused, not stale.
    assert set(index_mod._FACT_MODULES) >= {"report.py", "imports.py"}
    module = tmp_path / "facts.py"
    module.write_text("VERSION = 1\n")
    monkeypatch.setattr(index_mod, "_FACT_MODULES", (str(module),))
    before = index_mod.matcher_fingerprint()
    module.write_text("VERSION = 2\n")
    assert index_mod.matcher_fingerprint() not in (before, None)


def test_an_empty_or_relative_home_is_not_where_indexes_go(monkeypatch):
    import pwd

    monkeypatch.delenv(index_mod.ENV_DIR, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    home = pwd.getpwuid(os.getuid()).pw_dir
    for value in ("", "rel/home"):
        monkeypatch.setenv("HOME", value)  # "" made it /.cache, "rel/home" the working directory's
        assert index_mod.base_dir() == os.path.join(home, ".cache", index_mod.DIR_NAME)


@pytest.mark.parametrize("indexed", [False, True])
def test_a_file_grown_past_the_size_limit_after_the_walk_is_not_read_whole(tmp_path, indexed) -> None:
    """The walk let a small file in; it grew past the limit before the read (a writer at
    work): it is unreadable this cycle, with the index and without, never counted whole."""
    from agentic_search_skill.walk import walk

    tree = tmp_path / "tree"
    write_tree(tree, {"a.txt": "token\n", "b.txt": "token expiry\n"})
    files = walk(str(tree), max_bytes=64).files
    (tree / "a.txt").write_bytes(b"token expiry\n" * 1000)
    index = index_mod.open_index(str(tree), str(tmp_path / "idx")) if indexed else None
    docs, _, unreadable = engine.load_documents(files, index, max_bytes=64)
    assert [d.rel for d in docs] == ["b.txt"] and unreadable == 1
    if index is not None:
        index.close()


def test_too_few_open_files_allowed_runs_without_the_index(tmp_path, monkeypatch, capsys):
    # With a segment held open each, a very low ``ulimit -n`` made an indexed call fail
    # ("cannot write" its state) where --no-cache worked.
    resource = pytest.importorskip("resource")
    monkeypatch.setattr(resource, "getrlimit", lambda which: (12, 12))
    monkeypatch.setattr(resource, "setrlimit", lambda which, limits: None)
    (tmp_path / "tree").mkdir()
    tree, where = str(tmp_path / "tree"), str(tmp_path / "idx")
    assert index_mod.open_index(tree, where) is None
    err = capsys.readouterr().err
    assert "not used: 12 open files allowed (ulimit -n)" in err and len(err.splitlines()) == 1
    raised = []
    monkeypatch.setattr(resource, "getrlimit", lambda which: (12, 4096))
    monkeypatch.setattr(resource, "setrlimit", lambda which, limits: raised.append(limits))
    opened = index_mod.open_index(tree, where)
    assert opened is not None and raised == [(index_mod.MIN_OPEN_FILES, 4096)]
    opened.close()


@pytest.mark.parametrize("how", ["--no-cache", "refused"])
def test_a_folder_of_the_tree_named_as_the_index_dir_is_still_searched(tmp_path, instant, monkeypatch, how):
    """(An adversarial check: ``--index-dir TREE/middleware`` with ``--no-cache`` left
    ``middleware/`` out of the search, without a word.) Only a directory that holds an
    index the tool made is its own cache."""
    tree = make_tree(tmp_path / "tree")
    monkeypatch.setenv(index_mod.ENV_DIR, str(tmp_path / "elsewhere"))
    ask = ["--keywords", "Throttle", "check"]
    clean = json.loads(main("--root", tree, "--state", tmp_path / "c.json", "--no-cache", *ask))
    assert "middleware/throttle.py" in [r["id"] for r in clean["ranking"]]
    extra = ["--no-cache"] if how == "--no-cache" else []
    out = json.loads(main("--root", tree, "--state", tmp_path / "s.json", "--index-dir", tree / "middleware",
                          *extra, *ask))
    assert out["ranking"] == clean["ranking"]
    assert not list((tree / "middleware").glob("*/seg-*.idx"))  # (nothing written in the tree)


def test_holds_indexes_knows_the_tools_own_directories(tmp_path):
    assert not index_mod.holds_indexes(str(tmp_path / "missing"))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\n")
    assert not index_mod.holds_indexes(str(tmp_path / "src"))
    (tmp_path / "src" / ("0" * index_mod.KEY_DIGITS)).mkdir()  # (an object id's folder)
    assert not index_mod.holds_indexes(str(tmp_path / "src"))
    kept = tmp_path / "cache" / ("0" * index_mod.KEY_DIGITS)
    kept.mkdir(parents=True)
    (kept / index_mod.MANIFEST).write_text("{}")
    assert index_mod.holds_indexes(str(tmp_path / "cache"))


def test_a_generated_file_is_known_by_its_mark_with_and_without_the_index(tmp_path, instant):
    # a trial's stringer output ranked 5th on its one line of token names; the mark is
    # read when the file is indexed and when it is read, and follows an edit that drops it
    files = {
        "lexer/token_string.go": "// Code generated by stringer -type Token; DO NOT EDIT.\n\npackage lexer\n\n"
                                 "const _Token_name = \"TokenOQuoteTokenCQuoteTokenHeredoc\"\n"
                                 "func (i Token) String() string { return _Token_name }\n",
        "lexer/scan.go": "package lexer\n\n// Scan reads a TokenOQuote and its TokenCQuote.\n"
                         "func Scan(src []byte) []Token { return nil }\n",
    }
    tree = write_tree(tmp_path / "tree", files, mtime=OLD)
    steps = {1: ["--task", "TokenOQuote TokenCQuote TokenHeredoc misaligned", "--max-cycles", "3"],
             2: ["--reset", "--root", tree, "--task", "TokenOQuote TokenCQuote TokenHeredoc misaligned"]}
    gen = tree / "lexer" / "token_string.go"

    def between(n):
        if n == 1:
            same_size_edit(gen, b"// Code generated by", b"// Code written by  ")

    outs = side_by_side(tmp_path, tree, cycles=2, between=between, steps=steps)
    first = {r["id"]: r["score"] for r in outs[0]["ranking"]}
    assert ranked(outs[0])[0] == "lexer/scan.go"
    assert first["lexer/token_string.go"] < 0.5 * first["lexer/scan.go"]
    assert ranked(outs[1])[0] == "lexer/token_string.go"  # (no mark now: its evidence counts in full)
