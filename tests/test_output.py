"""output.py: the default output is bounded and repeats nothing; --full adds the rest; a
golden file pins the complete stdout of one cycle on a small tree."""

from __future__ import annotations

import difflib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _trees import write_tree

from agentic_search_skill.output import LINE_CHARS, QUERY_KEYWORDS_SHOWN, RESULTS_SHOWN, render_json, render_text

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "retrieve_loop.py"
GOLDEN = Path(__file__).resolve().parent / "golden"
TREE = {
    "lib/throttle.py": 'class Throttle:\n    """Throttle requests per client."""\n'
                       "    def allow(self, client):\n        return True\n",
    "app/router.py": "from lib.throttle import Throttle\n\ndef setup_routes(app):\n    app.use(Throttle())\n",
    "app/views.py": 'def index(request):\n    return "hello"\n',
}


def run(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, timeout=120,
                          env=env)


def test_golden_stdout_of_one_cycle(tmp_path):
    root = write_tree(tmp_path / "repo", TREE)
    proc = run("--root", root, "--state", tmp_path / "s.json", "--keywords", "route", "throttle")
    assert proc.returncode == 0 and proc.stderr == b""
    got = proc.stdout.decode("utf-8")
    want = (GOLDEN / "router-cycle1.json").read_text(encoding="utf-8")
    if got != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "stdout"))
        pytest.fail("stdout differs from tests/golden/router-cycle1.json:\n" + diff)


def test_default_output_describes_a_few_results_and_nothing_twice(tmp_path):
    files = {f"pkg{i}/widget_{i}.py": f"def widget_{i}():\n    widget = {i}\n" + "# widget\n" * i for i in range(30)}
    root = write_tree(tmp_path / "repo", files)
    out = json.loads(run("--root", root, "--state", tmp_path / "s.json", "--keywords", "widget").stdout)
    assert len(out["results"]) == RESULTS_SHOWN
    assert len(out["ranking"]) == 20
    for r in out["results"]:
        assert set(r) == {"id", "score", "reason", "lines"}
        assert all(len(line) <= LINE_CHARS for line in r["lines"])
    assert "hints" not in out and "matched" not in json.dumps(out["results"])


def test_the_default_query_lists_the_first_keywords_and_counts_the_rest(tmp_path):
    root = write_tree(tmp_path / "repo", TREE)
    words = [f"word{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(40)]
    args = ("--root", root, "--state", tmp_path / "s.json", "--keywords", "throttle", *words)
    out = json.loads(run(*args).stdout)
    full = json.loads(run("--state", tmp_path / "s.json", "--show", "--full").stdout)
    assert full["query"]["keywords"] == ["throttle", *words] and "keywords_left_out" not in full["query"]
    assert out["query"]["keywords"] == full["query"]["keywords"][:QUERY_KEYWORDS_SHOWN]
    assert out["query"]["keywords_left_out"] == 41 - QUERY_KEYWORDS_SHOWN
    text = run("--state", tmp_path / "s.json", "--show", "--text").stdout.decode()
    assert "(41 keywords)" in text


def test_text_honours_limit_and_stays_short(tmp_path):
    files = {f"pkg{i}/widget_{i}.py": "widget = 1\n" * (i + 1) for i in range(30)}
    root = write_tree(tmp_path / "repo", files)
    for limit in (3, 25):
        text = run("--root", root, "--state", tmp_path / f"s{limit}.json", "--keywords", "widget", "--text",
                   "--limit", limit).stdout.decode()
        listed = [line for line in text.splitlines() if line.startswith("  0.") or line.startswith("  1.")]
        assert len(listed) == limit
        assert len(text) <= 3000


def test_text_escapes_terminal_control_sequences_from_names_and_contents(tmp_path):
    root = write_tree(tmp_path / "repo", {"evil\x1b[2Jname.py": "widget = '\x1b]0;pwned\x07'\n",
                                          "txt.\u202eyp.py": "widget = 2  # \u2066isolated\u2069\n"})
    text = run("--root", root, "--state", tmp_path / "s.json", "--keywords", "widget", "--text").stdout.decode()
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b" in text
    # A right-to-left override in a name shows "txt.\u202eyp.py" as "txt.py.py": escaped.
    assert not set(text) & {"\u202e", "\u2066", "\u2069"}
    assert "txt.\\u202eyp.py" in text


def test_text_shows_a_tab_in_a_name_as_an_escape_and_keeps_a_tab_in_quoted_code(tmp_path):
    root = write_tree(tmp_path / "repo", {"a\tb.py": "widget\t= 1\n"})
    text = run("--root", root, "--state", tmp_path / "s.json", "--keywords", "widget", "--text").stdout.decode()
    assert "a\\x09b.py" in text and "a\tb.py" not in text
    assert "L1: widget\t= 1" in text


def test_json_survives_an_ascii_only_stdout(tmp_path):
    root = write_tree(tmp_path / "repo", {"caf\u00e9.py": "widget = 1  # \u2014 dash\n"})
    env = dict(os.environ, PYTHONIOENCODING="ascii", LC_ALL="C")
    proc = run("--root", root, "--state", tmp_path / "s.json", "--keywords", "widget", env=env)
    assert proc.returncode == 0, proc.stderr
    proc.stdout.decode("ascii")
    out = json.loads(proc.stdout)
    assert out["ranking"][0]["id"] == "caf\u00e9.py"
    text = run("--state", tmp_path / "s.json", "--text", env=env)
    assert text.returncode == 0 and b"Traceback" not in text.stderr


def test_render_json_is_one_object_with_a_line_per_entry():
    out = {"a": 1, "b": [{"x": 1}, {"x": 2}], "c": [], "d": {"k": "v"}}
    text = render_json(out)
    assert json.loads(text) == out
    assert text.splitlines()[3:6] == ['    {"x": 1},', '    {"x": 2}', "  ],"]
    with pytest.raises(ValueError):
        render_json({"a": float("nan")})


def test_render_text_reports_the_decision_first():
    out = {"cycle": 1, "max_cycles": 3, "done": True, "stop_reason": "sufficient", "next_action": "synthesize",
           "why": "one file stands out", "confidence": 0.9, "query": {"keywords": ["a"]},
           "stats": {"files_read": 3, "files_matched": 1}, "results": [], "ranking": [{"id": "a.py", "score": 0.9}],
           "context": [{"id": "a.py", "score": 0.9}], "next_query": {"adds": []}, "gaps": []}
    lines = render_text(out).splitlines()
    assert lines[0] == "cycle 1/3 - done (sufficient): synthesize (confidence 0.90)"
    assert "context (read these): a.py" in lines
    # the confidence to two places as the scores are, cut (a trial read 0.906 as "0.91"
    # beside a score of 0.9398 as "0.93")
    assert render_text(dict(out, confidence=0.906)).splitlines()[0].endswith("(confidence 0.90)")


def test_text_scores_below_the_context_line_never_read_as_at_it():
    out = {"cycle": 1, "max_cycles": 3, "done": False, "stop_reason": None, "next_action": "refine",
           "why": "unsure", "confidence": 0.5, "query": {"keywords": ["a"]},
           "stats": {"files_read": 3, "files_matched": 2}, "results": [],
           "ranking": [{"id": "a.py", "score": 0.7}, {"id": "b.py", "score": 0.69999999999}, {"id": "c.py", "score": 0.29}],
           "context": [{"id": "a.py", "score": 0.7}], "next_query": {"adds": []}, "gaps": []}
    text = render_text(out)
    assert "  0.70  a.py" in text and "  0.69  b.py" in text and "  0.29  c.py" in text


def test_a_finished_loop_prints_no_next_query_unless_full(tmp_path):
    """Once done, the proposal is nothing to act on: the default output leaves it out."""
    import json
    import subprocess
    import sys
    from pathlib import Path
    root = tmp_path / "repo"
    root.mkdir()
    (root / "throttle.py").write_text("def throttle(limit):\n    return limit\n")
    script = str(Path(__file__).resolve().parents[1] / "scripts" / "retrieve_loop.py")
    base = [sys.executable, script, "--root", str(root), "--state", str(tmp_path / "s.json"),
            "--keywords", "throttle", "--max-cycles", "1"]
    out = json.loads(subprocess.run(base, capture_output=True, text=True, check=True).stdout)
    assert out["done"] and "next_query" not in out
    full = json.loads(subprocess.run(base + ["--full"], capture_output=True, text=True, check=True).stdout)
    assert "next_query" in full


def test_a_judged_file_stands_where_its_score_puts_it_and_scores_read_downward():
    # The tool's files lead on standing (its own scale) while showing low rubric scores; a
    # caller's 0.9 is on the rubric: it goes before every file shown lower, and in context.
    from agentic_search_skill.output import context_entries, ranking_entries
    from agentic_search_skill.state import ScoreEntry
    scores = {
        "a.ts": ScoreEntry(1.0, 2, "judged", judged=True),
        "ws.ts": ScoreEntry(0.32, 1, "listen x3", standing=0.95),
        "http.ts": ScoreEntry(0.9, 2, "judged", judged=True),
        "env.ts": ScoreEntry(0.23, 1, "port x1", standing=0.6),
        "cfg.ts": ScoreEntry(0.3, 1, "judged", judged=True),
        "hmr.ts": ScoreEntry(0.0, 1, "judged", judged=True),
    }
    ranking = ranking_entries(scores, 10)
    assert [r["id"] for r in ranking] == ["a.ts", "http.ts", "ws.ts", "cfg.ts", "env.ts", "hmr.ts"]
    shown = [r["score"] for r in ranking]
    assert shown == sorted(shown, reverse=True)
    assert [c["id"] for c in context_entries(scores, 10, with_reason=False)] == ["a.ts", "http.ts"]
    # ... and a judged file says so: reading on down the ranking is about the others (a
    # trial's agent was sent back to two files it had judged 0.2, above the fix's file)
    assert [r["id"] for r in ranking if r.get("judged")] == ["a.ts", "http.ts", "cfg.ts", "hmr.ts"]
    assert set(ranking[2]) == {"id", "score"}
    assert [c["id"] for c in context_entries(scores, 10, with_reason=False) if c.get("judged")] == ["a.ts", "http.ts"]


def test_a_shortened_reason_ends_after_a_whole_signal():
    from agentic_search_skill.output import _cut_reason
    reason = "defines reverse_proxy; path names health; reverse_proxy x45; port x105; upstream x3"
    assert _cut_reason(reason, 40) == "defines reverse_proxy; …"
    assert _cut_reason(reason, 200) == reason
    assert _cut_reason("x" * 50, 10) == "x" * 9 + "…"  # one long signal: cut as text


def test_the_default_query_counts_the_single_files_the_loop_excluded():
    from agentic_search_skill.output import _excludes_shown
    assert _excludes_shown(["**/*.test.ts", "src/a.py", "src/b.py", "docs/[ab].md"], False) == \
        (["**/*.test.ts", "docs/[ab].md"], 2)
    assert _excludes_shown(["**/*.test.ts", "src/a.py"], True) == (["**/*.test.ts", "src/a.py"], 0)



def test_the_callers_excludes_and_the_loops_set_aside_files_are_counted_apart():
    # a trial's agent excluded lib/** (3 files) and read "excluded_files": 13 as its glob's
    # doing: ten were files the loop had set aside itself
    from agentic_search_skill.output import FULL, to_output
    from agentic_search_skill.records import Change, CycleView, Decision, Stats
    from agentic_search_skill.state import LoopState
    aside = tuple(f"src/f{i}.js" for i in range(10))
    view = CycleView(cycle=2, max_cycles=3, patterns=("**",), keywords=("list",), excludes=("lib/**", "bin/x.js"),
                     stats=Stats(10, 9, 4), results=(), decision=Decision("refine", False, None, "again", 0.3),
                     change=Change((), (), (), ()), set_aside=aside)
    state = LoopState(root="/r", cycle=2)
    query = to_output(view, state, 20)["query"]
    assert (query["excludes"], query["excluded_files"], query["set_aside_files"]) == (["lib/**"], 1, 10)
    full = to_output(view, state, 20, FULL)["query"]
    assert full["excludes"] == ["lib/**", "bin/x.js"] and full["set_aside"] == list(aside)
    assert "set_aside_files" not in full and "excluded_files" not in full
    assert CycleView.from_json(view.to_json()).set_aside == aside  # kept in the state as shown
    # a view an older state kept holds both in excludes: the loop's are told by its next query
    # (an adversarial check: ``--show`` on such a state said "excluded_files": 20)
    from agentic_search_skill.state import Query
    old = CycleView.from_json({k: v for k, v in view.to_json().items() if k != "set_aside"} | {
        "excludes": ["lib/**", "bin/x.js", *aside]})
    state = LoopState(root="/r", cycle=2, proposal=Query(("**",), (), ("lib/**", "bin/x.js"), aside))
    query = to_output(old, state, 20)["query"]
    assert (query["excludes"], query["excluded_files"], query["set_aside_files"]) == (["lib/**"], 1, 10)


def test_results_offer_no_file_the_same_output_sets_aside():
    # A trial's second round offered four translation files beside one real candidate,
    # while next_query set the four aside: the default results keep the candidate only.
    from agentic_search_skill.output import FULL, to_output
    from agentic_search_skill.records import Change, CycleView, Decision, ResultView, Stats
    from agentic_search_skill.state import LoopState, ScoreEntry
    weak = ("locales/es.ts", "locales/hr.ts", "locales/ro.ts")

    def view(results, aside):
        return CycleView(cycle=2, max_cycles=3, patterns=("**",), keywords=("origin",), excludes=(),
                         stats=Stats(10, 9, 4), results=tuple(ResultView(r, s, "origin x1") for r, s in results),
                         decision=Decision("refine", False, None, "searching again", 0.3),
                         change=Change((), (), aside, ()))

    scores = {r: ScoreEntry(s, 2, "origin x1") for r, s in [("mini/schemas.ts", 0.21)] + [(w, 0.07) for w in weak]}
    state = LoopState(root="/r", cycle=2, scores=scores)
    mixed = view([("mini/schemas.ts", 0.21)] + [(w, 0.07) for w in weak], weak)
    out = to_output(mixed, state, 20)
    assert [r["id"] for r in out["results"]] == ["mini/schemas.ts"]
    assert "excluded" not in json.dumps(out["ranking"])  # the loop's bookkeeping: --full only
    assert [r["id"] for r in to_output(mixed, state, 20, FULL)["results"]] == ["mini/schemas.ts", *weak]
    # a round whose every file is set aside still shows where to start reading
    only_weak = view([(w, 0.07) for w in weak], weak)
    assert [r["id"] for r in to_output(only_weak, state, 20)["results"]] == list(weak)


def test_results_read_in_the_rankings_order_at_its_scores():
    # A round's own order beside the ranking's scores read as out of order (0.74 before 0.86).
    from agentic_search_skill.output import to_output
    from agentic_search_skill.records import Change, CycleView, Decision, ResultView, Stats
    from agentic_search_skill.state import LoopState, ScoreEntry
    view = CycleView(cycle=2, max_cycles=3, patterns=("**",), keywords=("regexvalidator",), excludes=(),
                     stats=Stats(10, 9, 2), results=(ResultView("core/validators.py", 0.9, "defines x"),
                                                     ResultView("auth/validators.py", 0.8, "x x1")),
                     decision=Decision("refine", False, None, "searching again", 0.7), change=Change())
    state = LoopState(root="/r", cycle=2, scores={"core/validators.py": ScoreEntry(0.7361, 2, "defines x"),
                                                   "auth/validators.py": ScoreEntry(0.8612, 1, "x x1")})
    out = to_output(view, state, 20)
    assert [(r["id"], r["score"]) for r in out["results"]] == [("auth/validators.py", 0.8612),
                                                                ("core/validators.py", 0.7361)]
