"""Tests for scripts/hints.py: the seed's formulas, the added keys, the CLI, the import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

import hints
from hints import (
    MAX_SUGGESTED_QUERIES,
    MIN_SUGGEST_SCORE,
    SUFFICIENT_SCORE,
    HintsInputError,
    collect_related_ids,
    compute_hints,
    format_hints,
    gap_keywords,
    suggest_broaden_queries,
    suggest_followup_queries,
    synonyms_for,
)

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
HINTS = os.path.join(SCRIPTS, "hints.py")
SEVEN_KEYS = ["sufficient", "max_score", "result_count", "next_action",
              "suggested_queries", "related_ids", "gap_keywords"]
ALL_KEYS = SEVEN_KEYS + ["new_ids", "stop_reason", "broaden_queries"]


def item(ident, score, **fields):
    """A result item with a title defaulting to its id."""
    return {"id": ident, "title": fields.pop("title", ident), "score": score, **fields}


def run_cli(*args, stdin=""):
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    proc = subprocess.run([sys.executable, HINTS, *args], input=data,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


# --------------------------------------------------------------------------- constants


def test_constants_keep_the_seed_values():
    assert (SUFFICIENT_SCORE, MIN_SUGGEST_SCORE, MAX_SUGGESTED_QUERIES) == (0.5, 0.15, 5)


def test_keys_seed_seven_first_then_the_new_ones():
    assert list(compute_hints([], ["x"])) == ALL_KEYS


# --------------------------------------------------------------------------- decision


@pytest.mark.parametrize("results, threshold, sufficient, max_score, action", [
    pytest.param([], 0.5, False, 0.0, "broaden", id="no-results-broaden"),
    pytest.param([item("a", 0.3)], 0.5, False, 0.3, "refine", id="below-threshold-refine"),
    pytest.param([item("a", 0.5)], 0.5, True, 0.5, "synthesize", id="at-threshold-is-sufficient"),
    pytest.param([item("a", 0.9, related=["b"])], 0.5, True, 0.9, "expand", id="unseen-related-expand"),
    pytest.param([item("a", 0.9, related=["b"]), item("b", 0.2)], 0.5, True, 0.9, "synthesize",
                 id="related-already-a-result-synthesize"),
    pytest.param([item("a", 0.3, related=["b"])], 0.5, False, 0.3, "refine", id="refine-before-expand"),
    pytest.param([item("a", 0.49996)], 0.49999, False, 0.5, "refine",
                 id="compare-unrounded-score"),
    pytest.param([item("a", 0.12345)], 0.1, True, 0.123, "synthesize", id="max-score-rounded-3"),
    pytest.param([item("a", 1.2), item("b", 0.4)], 0.5, True, 1.2, "synthesize", id="above-1-not-clamped"),
    pytest.param([item("a", "0.8")], 0.5, True, 0.8, "synthesize", id="numeric-string-score"),
    pytest.param([item("a", 0.7)], 0.8, False, 0.7, "refine", id="custom-threshold"),
    pytest.param([{"id": "a", "title": "t"}], 0.5, False, 0.0, "refine", id="missing-score-is-zero"),
    pytest.param([item("b", 0.2), item("a", 0.9)], 0.5, True, 0.9, "synthesize", id="order-free-max"),
])
def test_decision_order(results, threshold, sufficient, max_score, action):
    got = compute_hints(results, ["q"], threshold)
    assert (got["sufficient"], got["max_score"], got["result_count"], got["next_action"]) == (
        sufficient, max_score, len(results), action)


# --------------------------------------------------------------------------- suggested_queries


@pytest.mark.parametrize("results, keywords, expected", [
    pytest.param([item("a", 0.9, tags=["x", "y"]), item("b", 0.8, tags=["y", "z"])], ["k"],
                 ["k y", "k x", "k z"], id="by-frequency-ties-first-seen"),
    pytest.param([item("a", 0.9, tags=["JWT", "refresh"])], ["jwt"], ["jwt refresh"],
                 id="query-tags-skipped-case-insensitive"),
    pytest.param([item("a", 0.15, tags=["in"]), item("b", 0.149, tags=["out"])], ["k"], ["k in"],
                 id="min-score-boundary"),
    pytest.param([item("a", 0.9, tags=list("abcdefg"))], ["k"], ["k a", "k b", "k c", "k d", "k e"],
                 id="at-most-five"),
    pytest.param([item("a", 0.9, tags=["x"])], [], ["x"], id="no-keywords-tag-alone"),
    pytest.param([item("a", 0.9, tags=["Auth"]), item("b", 0.9, tags=["auth", "ＡＵＴＨ"])], ["k"],
                 ["k Auth"], id="deduplicated-folded-first-spelling"),
    pytest.param([item("a", 0.9, tags="session, refresh\ncookie")], ["a", "b"],
                 ["a b session", "a b refresh", "a b cookie"], id="tags-as-string"),
    pytest.param([item("a", 0.9, tags=["rate limit"])], ["rate", "limit"], [],
                 id="tag-equal-to-whole-query-skipped"),
])
def test_suggested_queries(results, keywords, expected):
    assert suggest_followup_queries(results, keywords) == expected
    assert compute_hints(results, keywords)["suggested_queries"] == expected


def test_suggest_followup_queries_parameters():
    results = [item("a", 0.3, tags=["x", "y", "z"])]
    assert suggest_followup_queries(results, ["k"], min_score=0.5) == []
    assert suggest_followup_queries(results, ["k"], max_queries=2) == ["k x", "k y"]


# --------------------------------------------------------------------------- related_ids


@pytest.mark.parametrize("results, seen, expected", [
    pytest.param([item("a", 0.9, related=["c", "b", "c"]), item("b", 0.5, related=["d", "a"])], None,
                 ["c", "d"], id="first-seen-no-repeats-no-result-ids"),
    pytest.param([item("a", 0.9, related="x, y\nz")], None, ["x", "y", "z"], id="related-as-string"),
    pytest.param([item("a", 0.9, related=["x", "y"])], ["x"], ["y"], id="seen-ids-excluded"),
    pytest.param([item("a", 0.9, related=[" x ", "", None, 7])], None, ["x", "7"], id="blank-null-number"),
    pytest.param([item(1, 0.9, related=["1", "2"])], None, ["2"], id="numeric-id"),
])
def test_related_ids(results, seen, expected):
    assert collect_related_ids(results, seen_ids=seen) == expected
    assert compute_hints(results, ["q"], seen_ids=seen)["related_ids"] == expected


# --------------------------------------------------------------------------- gap_keywords


@pytest.mark.parametrize("keywords, results, expected", [
    pytest.param(["token", "expiry"], [item("a", 0.9, title="Token refresh")], ["expiry"],
                 id="case-insensitive-substring"),
    pytest.param(["token"], [item("a", 0.9, title="token", text="nothing here")], ["token"],
                 id="text-wins-over-title"),
    pytest.param(["token"], [item("a", 0.9, title="x", text="")], ["token"], id="empty-text-falls-back"),
    pytest.param(["auth", "jwt", "exp"], [item("a", 0.9, title="x", summary="auth", tags=["jwt"])],
                 ["exp"], id="fallback-title-summary-tags"),
    pytest.param(["JWT", "認証"], [item("a", 0.9, title="ＪＷＴ の認証")], [], id="nfkc-full-width"),
    pytest.param(["ｊｗｔ"], [item("a", 0.9, text="uses JWT")], [], id="full-width-keyword"),
    pytest.param(["STRASSE"], [item("a", 0.9, title="straße")], [], id="casefold"),
    pytest.param(["a", "b"], [], ["a", "b"], id="no-results-all-gaps"),
    pytest.param(["ab"], [item("x", 0.9, title="a"), item("y", 0.9, title="b")], ["ab"],
                 id="no-match-across-items"),
])
def test_gap_keywords(keywords, results, expected):
    assert gap_keywords(keywords, results) == expected
    assert compute_hints(results, keywords)["gap_keywords"] == expected


# --------------------------------------------------------------------------- seed examples


def test_seed_example_jwt_ninsho():
    results = [
        {"id": "m1", "title": "ＪＷＴ 認証の設計", "summary": "トークン検証", "tags": ["auth", "JWT"],
         "score": 0.82, "related": ["m3"]},
        {"id": "m2", "title": "セッション管理", "tags": "session, auth", "score": "0.4"},
    ]
    assert compute_hints(results, ["JWT", "認証"]) == {
        "sufficient": True, "max_score": 0.82, "result_count": 2, "next_action": "expand",
        "suggested_queries": ["JWT 認証 auth", "JWT 認証 session"], "related_ids": ["m3"],
        "gap_keywords": [], "new_ids": ["m1", "m2"], "stop_reason": None, "broaden_queries": []}


def test_seed_example_auth_token_expiry_cycle_one():
    results = [
        item("src/auth.ts", 0.9, tags=["refresh", "jwt"], related=["src/session-manager.ts"],
             text="export function checkAuth(token) { if (isExpired(token)) refresh() }"),
        item("src/tokens.ts", 0.8, tags=["jwt", "expiry"], text="token expiry helpers"),
        item("src/user.ts", 0.3, tags=["profile"], text="class User"),
    ]
    got = compute_hints(results, ["token", "auth", "expiry"], seen_ids=[], round=1, max_rounds=3)
    assert got["next_action"] == "expand"
    assert got["related_ids"] == ["src/session-manager.ts"]
    assert got["suggested_queries"][:2] == ["token auth expiry jwt", "token auth expiry refresh"]
    assert got["new_ids"] == ["src/auth.ts", "src/tokens.ts", "src/user.ts"]


def test_seed_example_rate_limit_finds_nothing_then_broadens_to_throttle():
    got = compute_hints([], ["rate", "limit", "api"], round=1, max_rounds=3)
    assert got["next_action"] == "broaden"
    assert got["gap_keywords"] == ["rate", "limit", "api"]
    assert got["broaden_queries"][0] == "throttle api"
    assert any("throttle" in q for q in got["broaden_queries"])


def test_a_broadened_word_gets_words_of_any_codebase_not_a_frameworks_or_a_bug_reports():
    # (a trial's Rust CLI was offered ``express`` and ``flask`` for "application")
    got = compute_hints([], ["application"], round=1, max_rounds=3)
    assert got["broaden_queries"] and "server" in got["broaden_queries"]
    assert not {"express", "flask", "django", "fastapi"} & set(got["broaden_queries"])
    # ... and the words of a bug report are no code's words ("regression": bug, defect, issue)
    assert not {"bug", "defect", "issue"} & set(compute_hints([], ["regression"], round=1, max_rounds=3)["broaden_queries"])


# --------------------------------------------------------------------------- new keys


@pytest.mark.parametrize("results, seen, rnd, limit, action, reason", [
    pytest.param([item("a", 0.9)], None, None, None, "synthesize", "sufficient", id="sufficient"),
    pytest.param([item("a", 0.3)], None, None, None, "refine", None, id="no-stop"),
    pytest.param([item("a", 0.3)], ["a"], 2, 3, "synthesize", "saturated", id="saturated"),
    pytest.param([item("a", 0.9, related=["x"])], ["a"], None, None, "synthesize", "saturated",
                 id="saturated-beats-expand"),
    pytest.param([item("a", 0.3), item("b", 0.3)], ["a"], 2, 3, "refine", None, id="one-new-id"),
    pytest.param([item("a", 0.3)], [], 1, 3, "refine", None, id="first-round-empty-seen"),
    pytest.param([item("a", 0.3)], None, 3, 3, "synthesize", "max_rounds", id="last-round"),
    pytest.param([item("a", 0.3)], None, 4, 3, "synthesize", "max_rounds", id="past-last-round"),
    pytest.param([item("a", 0.3)], None, 3, None, "refine", None, id="round-without-limit"),
    pytest.param([], [], 2, 3, "broaden", None, id="no-results-still-broaden"),
    pytest.param([], ["a"], 3, 3, "synthesize", "max_rounds", id="no-results-last-round"),
    pytest.param([item("a", 0.3)], ["a"], 3, 3, "synthesize", "saturated", id="saturated-before-max"),
    pytest.param([item("a", 0.9)], ["a"], 3, 3, "synthesize", "sufficient", id="sufficient-first"),
])
def test_convergence(results, seen, rnd, limit, action, reason):
    got = compute_hints(results, ["q"], seen_ids=seen, round=rnd, max_rounds=limit)
    assert (got["next_action"], got["stop_reason"]) == (action, reason)


def test_new_ids_deduplicated_and_without_seen():
    results = [item("a", 0.9), item("b", 0.8), item("a", 0.7), item("", 0.1)]
    got = compute_hints(results, ["q"], seen_ids="b")
    assert (got["new_ids"], got["result_count"]) == (["a"], 4)


@pytest.mark.parametrize("keywords, gaps, expected", [
    pytest.param(["token", "expiry"], ["expiry"],
                 ["token", "token expire", "token expiration"], id="reduced-then-synonyms"),
    pytest.param(["foo", "bar"], ["foo", "bar"], ["bar", "foo"], id="all-gaps-drop-one"),
    pytest.param(["foo"], ["foo"], [], id="single-unknown-word"),
    pytest.param(["token"], [], [], id="no-gaps"),
    pytest.param(["rate_limit"], ["rate_limit"], ["throttle"], id="identifier-form"),
])
def test_broaden_queries(keywords, gaps, expected):
    got = suggest_broaden_queries(keywords, gaps)
    assert got[:len(expected)] == expected
    if not expected:
        assert got == []


def test_broaden_queries_bounded_and_distinct():
    got = suggest_broaden_queries(["delete", "config", "error"], ["delete", "config", "error"])
    assert 0 < len(got) <= hints.MAX_BROADEN_QUERIES
    assert len(set(got)) == len(got)
    assert got[:3] == ["remove config error", "delete settings error", "delete config exception"]


# --------------------------------------------------------------------------- synonyms


@pytest.mark.parametrize("term, includes", [
    ("rate limit", ["throttle", "ratelimit"]),
    ("rateLimit", ["throttle"]),
    ("RATE-LIMIT", ["throttling"]),
    ("auth", ["login", "credential"]),
    ("delete", ["remove"]),
    ("config", ["settings"]),
    ("ＪＷＴ", ["token", "bearer"]),
    ("expiry", ["ttl", "timeout"]),
    # a trial's "unrecognized" sections: the code says "Unknown key"
    ("unrecognized", ["unknown"]),
    # a trial's "smallest" and "largest" element by a key: the code says min_by, max_by
    ("smallest", ["min", "minimum"]),
    ("largest", ["max", "maximum"]),
    # a trial's "unsigned" and "hexadecimal" numbers: the code says uint_slice, ParseUint, 0x
    ("unsigned", ["uint", "usize"]),
    ("hexadecimal", ["hex"]),
])
def test_synonyms_for_known_terms(term, includes):
    got = synonyms_for(term)
    assert all(word in got for word in includes)
    assert term not in got and len(set(got)) == len(got)


@pytest.mark.parametrize("term", ["", "   ", "zzzunknown", None, 3])
def test_synonyms_for_unknown_is_empty(term):
    assert synonyms_for(term) == []


def test_synonyms_for_returns_a_fresh_list():
    synonyms_for("auth").clear()
    assert synonyms_for("auth")


@pytest.mark.parametrize("content", [None, b"{not json", b"[1, 2]", b'{"groups": 3}', b"\xff\xfe",
                                     b'{"groups": [["a"], "b", [1, 2], ["x", "y"]]}'])
def test_broken_synonym_table_is_empty_never_raises(tmp_path, monkeypatch, content):
    path = tmp_path / "synonyms.json"
    if content is not None:
        path.write_bytes(content)
    monkeypatch.setattr(hints, "_SYNONYMS_PATH", str(path))
    monkeypatch.setattr(hints, "_synonym_table", None)
    assert synonyms_for("auth") == []
    expected = ["y"] if content and b'"x"' in content else []
    assert synonyms_for("x") == expected


def test_synonym_table_is_well_formed():
    path = os.path.join(SCRIPTS, "agentic_search_skill", "data", "synonyms.json")
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    assert data["_comment"] and data["version"] == 1
    groups = data["groups"]
    assert 60 <= len(groups)
    for group in groups:
        assert len(group) >= 2 and all(isinstance(t, str) and t == t.strip() and t for t in group)
        assert len({t.casefold() for t in group}) == len(group), group


# --------------------------------------------------------------------------- tolerant input


def test_tolerant_items():
    results = [
        {"id": "a", "title": "Alpha", "score": "0.6", "tags": "x\ny", "related": "b, c"},
        {"id": "a", "title": "dup", "score": 2},
        {"id": "d", "title": None, "score": 0.1, "tags": None, "related": None, "text": None},
        {"id": "e", "score": 0.2, "summary": ["list", "summary"]},
    ]
    got = compute_hints(results, ["alpha", "summary", "zzz"])
    assert got["max_score"] == 2.0 and got["result_count"] == 4
    assert got["related_ids"] == ["b", "c"]
    assert got["gap_keywords"] == ["zzz"]
    assert got["new_ids"] == ["a", "d", "e"]


def test_numbers_and_nulls_in_lists_are_read_as_ids():
    got = compute_hints([item("a", 0.9, related=["b", 7, 2.5, None, " "])], [5, None, "q"])
    assert got["related_ids"] == ["b", "7", "2.5"] and got["gap_keywords"] == ["5", "q"]


def test_a_number_is_one_id_however_json_spells_it():
    """7.0 is the id 7 (JSON has one kind of number), 1e-07 is 0.0000001: an id seen as
    1.0 is the result 1, not a new one (a tester's)."""
    got = compute_hints([item(7.0, 0.9, related=[1e-7, 2.50]), item(1, 0.8)], ["a"], seen_ids=[1.0, "7"])
    assert got["related_ids"] == ["0.0000001", "2.5"] and got["new_ids"] == []
    # 1e23 is the decimal it reads as, not its binary value's digits; -0.0 is 0.
    got = compute_hints([item(1e23, 0.9), item(-0.0, 0.8)], ["a"], seen_ids=[10 ** 23, 0])
    assert got["new_ids"] == []


def test_a_keyword_that_is_no_string_or_number_is_refused_in_the_library():
    with pytest.raises(HintsInputError, match=r"^keywords\[0\]: expected a string, got a bytes$"):
        compute_hints([], [b"rate", "limit"])


def test_format_hints_reads_a_lone_string_as_one_item():
    text = format_hints({"suggested_queries": "rate limiter", "related_ids": "b.py"})
    assert "    - rate limiter" in text and "  related_ids: b.py" in text


def test_keywords_as_string_are_split_in_the_library():
    assert compute_hints([], "rate  limit")["gap_keywords"] == ["rate", "limit"]


@pytest.mark.parametrize("results, kwargs, message", [
    pytest.param([item("a", 0.1), item("b", 0.2), item("c", 0.3), item("d", "high")], {},
                 'results[3].score: expected a number, got "high"', id="score-word"),
    pytest.param([item("a", True)], {}, "results[0].score: expected a number, got true", id="bool"),
    pytest.param([item("a", [1])], {}, "results[0].score: expected a number, got an array", id="list"),
    pytest.param([item("a", float("nan"))], {}, "results[0].score: expected a finite number", id="nan"),
    pytest.param([item("a", "inf")], {}, "results[0].score: expected a finite number", id="inf"),
    pytest.param(["a"], {}, 'results[0]: expected an object, got "a"', id="not-object"),
    pytest.param({"a": 1}, {}, "results: expected a list, got an object", id="results-dict"),
    pytest.param([], {"round": 0}, "round: expected a positive integer, got 0", id="round-zero"),
    pytest.param([], {"max_rounds": "3"}, 'max_rounds: expected a positive integer, got "3"', id="max-str"),
    pytest.param([], {"seen_ids": 5}, "seen_ids: expected a list of ids, got 5", id="seen-number"),
    # An item of tags / related / seen_ids is an id: a boolean or NaN is refused, not
    # passed on as ``True`` / ``nan`` for the caller to follow; a caller's object is
    # named by its type, never by its address.
    pytest.param([item("a", 0.9, related=["b", True])], {},
                 "results[0].related[1]: expected a string or a finite number, got true", id="related-bool"),
    pytest.param([item("a", 0.9, tags=[float("nan")])], {},
                 "results[0].tags[0]: expected a string or a finite number, got NaN", id="tag-nan"),
    pytest.param([item("a", 0.9, related=[{"k": "v"}])], {},
                 "results[0].related[0]: expected a string or a finite number, got an object", id="related-object"),
    pytest.param([], {"seen_ids": ["a", ["b"]]}, "seen_ids[1]: expected a string or a finite number, got an array",
                 id="seen-array"),
    pytest.param([], {"seen_ids": iter(["a"])}, "seen_ids: expected a list of ids, got a list_iterator",
                 id="seen-iterator"),
])
def test_library_errors_name_the_place(results, kwargs, message):
    with pytest.raises(HintsInputError) as info:
        compute_hints(results, ["q"], **kwargs)
    assert str(info.value).startswith(message)
    assert isinstance(info.value, ValueError)


# --------------------------------------------------------------------------- format_hints


def test_format_hints_exact():
    got = format_hints(compute_hints([], ["rate", "limit"], round=1, max_rounds=3))
    assert got == (
        "agentic search hints\n"
        "  sufficient: false (max_score=0.0, results=0)\n"
        "  next_action: broaden - nothing found: drop gap words or try synonyms (broaden_queries)\n"
        "  broaden_queries:\n"
        "    - throttle\n"
        "    - throttling\n"
        "    - throttler\n"
        "    - limit\n"
        "    - rate\n"
        "  gap_keywords: rate, limit")


def test_format_hints_accepts_the_seed_seven_keys():
    seven = {"sufficient": True, "max_score": 0.9, "result_count": 1, "next_action": "expand",
             "suggested_queries": ["a b"], "related_ids": ["x"], "gap_keywords": []}
    assert format_hints(seven) == (
        "agentic search hints\n"
        "  sufficient: true (max_score=0.9, results=1)\n"
        "  next_action: expand - good matches with unseen references: follow related_ids\n"
        "  suggested_queries:\n"
        "    - a b\n"
        "  related_ids: x")


# --------------------------------------------------------------------------- CLI

CLI_INPUT = json.dumps({"keywords": ["JWT", "認証"], "results": [
    {"id": "a", "title": "ＪＷＴ 認証", "score": "0.8", "tags": "auth", "related": ["b"]}]},
    ensure_ascii=False)
CLI_JSON = """{
  "sufficient": true,
  "max_score": 0.8,
  "result_count": 1,
  "next_action": "expand",
  "suggested_queries": [
    "JWT 認証 auth"
  ],
  "related_ids": [
    "b"
  ],
  "gap_keywords": [],
  "new_ids": [
    "a"
  ],
  "stop_reason": null,
  "broaden_queries": []
}
"""


def test_cli_stdin_json_exact():
    assert run_cli(stdin=CLI_INPUT) == (0, CLI_JSON, "")


def test_cli_input_file(tmp_path):
    path = tmp_path / "in.json"
    path.write_text(CLI_INPUT, encoding="utf-8")
    assert run_cli("--input", str(path)) == (0, CLI_JSON, "")


def test_cli_text_exact():
    assert run_cli("--text", stdin=CLI_INPUT) == (0, (
        "agentic search hints\n"
        "  sufficient: true (max_score=0.8, results=1)\n"
        "  next_action: expand - good matches with unseen references: follow related_ids\n"
        "  suggested_queries:\n"
        "    - JWT 認証 auth\n"
        "  related_ids: b\n"
        "  new_ids: a\n"), "")


def test_cli_query_split_when_keywords_absent_and_threshold_flag():
    payload = json.dumps({"query": "token  expiry", "results": [item("a", 0.6, title="token")]})
    code, out, err = run_cli("--sufficient-score", "0.7", stdin=payload)
    got = json.loads(out)
    assert (code, err, got["gap_keywords"], got["next_action"]) == (0, "", ["expiry"], "refine")


def test_cli_convergence_fields():
    payload = json.dumps({"keywords": ["q"], "results": [item("a", 0.3)], "seen_ids": ["a"],
                          "round": 2, "max_rounds": 3})
    code, out, err = run_cli(stdin=payload)
    assert (code, err) == (0, "")
    assert (json.loads(out)["next_action"], json.loads(out)["stop_reason"]) == ("synthesize", "saturated")


def test_cli_utf8_bom_accepted():
    assert run_cli(stdin=b"\xef\xbb\xbf" + CLI_INPUT.encode("utf-8")) == (0, CLI_JSON, "")


@pytest.mark.parametrize("stdin, message", [
    pytest.param("{bad", "input: malformed JSON at line 1 column 2", id="malformed"),
    pytest.param("", "input: empty; expected a JSON object", id="empty"),
    pytest.param(" \n", "input: empty; expected a JSON object", id="blank"),
    pytest.param("[]", "input: expected a JSON object, got an array", id="top-level-array"),
    pytest.param('"x"', 'input: expected a JSON object, got "x"', id="top-level-string"),
    pytest.param('{"results": {}}', "results: expected a list, got an object", id="results-object"),
    pytest.param('{"results": "a,b"}', 'results: expected a list, got "a,b"', id="results-string"),
    pytest.param('{"results": [1]}', "results[0]: expected an object, got 1", id="item-number"),
    pytest.param('{"results": [{"id": "a"}, []]}', "results[1]: expected an object, got an array",
                 id="item-array"),
    pytest.param('{"results": [{}, {}, {}, {"id": "d", "score": "high"}]}',
                 'results[3].score: expected a number, got "high"', id="score-not-number"),
    pytest.param('{"results": [{"score": NaN}]}', "results[0].score: expected a finite number, got NaN",
                 id="score-nan"),
    pytest.param('{"keywords": "a b"}', 'keywords: expected a list of strings, got "a b"',
                 id="keywords-string"),
    pytest.param('{"keywords": ["a", 3]}', "keywords[1]: expected a string, got 3", id="keyword-number"),
    pytest.param('{"query": ["a"]}', "query: expected a string, got an array", id="query-list"),
    pytest.param('{"round": "2"}', 'round: expected a positive integer, got "2"', id="round-string"),
    pytest.param('{"max_rounds": 0}', "max_rounds: expected a positive integer, got 0", id="max-zero"),
    pytest.param('{"seen_ids": [{}]}', "seen_ids[0]: expected a string or a finite number, got an object",
                 id="seen-item"),
    pytest.param(b"\xff{}", "input: not valid UTF-8 (byte 0)", id="not-utf8"),
    pytest.param("[" * 100000, "input: JSON nested too deeply", id="deep-nesting"),
])
def test_cli_bad_input_one_line_exit_1(stdin, message):
    code, out, err = run_cli(stdin=stdin)
    assert (code, out) == (1, "")
    assert err.startswith("hints.py: error: " + message)
    assert err.count("\n") == 1 and "Traceback" not in err


def test_cli_malformed_input_file_is_named(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("{bad")
    code, out, err = run_cli("--input", str(path))
    assert (code, out) == (1, "") and err.startswith(f"hints.py: error: --input {path}: malformed JSON at line 1")


@pytest.mark.parametrize("make_path, message", [
    pytest.param(lambda tmp: tmp / "missing.json", "cannot read: No such file or directory", id="missing"),
    pytest.param(lambda tmp: tmp, "cannot read: Is a directory", id="directory"),
])
def test_cli_unreadable_input_exit_1(tmp_path, make_path, message):
    path = make_path(tmp_path)
    code, out, err = run_cli("--input", str(path))
    assert (code, out, err) == (1, "", f"hints.py: error: --input {path}: {message}\n")


@pytest.mark.parametrize("args", [["--bogus"], ["--sufficient-score", "high"],
                                  ["--sufficient-score", "nan"], ["--input"]])
def test_cli_usage_errors_exit_2(args):
    code, out, err = run_cli(*args, stdin=CLI_INPUT)
    assert (code, out) == (2, "")
    # one line: what is wrong, and where help is
    assert err.startswith("hints.py: error: ") and err.endswith("(see --help)\n")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_cli_help_documents_schema_and_exit_codes():
    code, out, err = run_cli("--help")
    assert (code, err) == (0, "")
    for word in ("--input", "--text", "--sufficient-score", "keywords", "results", "seen_ids",
                 "round", "max_rounds", "broaden_queries", "stop_reason", "exit codes", "usage error"):
        assert word in out


def test_cli_main_returns_codes_in_process(capsys, monkeypatch, tmp_path):
    path = tmp_path / "in.json"
    path.write_text(CLI_INPUT, encoding="utf-8")
    assert hints.main(["--input", str(path), "--text"]) == 0
    assert hints.main(["--nope"]) == 2
    assert hints.main(["--input", str(tmp_path / "none")]) == 1
    captured = capsys.readouterr()
    assert "hints.py: error: --input" in captured.err


def test_cli_closed_pipe_is_quiet(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"keywords": ["k"], "results": [
        item(f"id{i}", 0.9, related=[f"r{i}"]) for i in range(20000)]}), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, HINTS, "--input", str(path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 0
    assert err == b""


# --------------------------------------------------------------------------- import and speed


def test_import_has_no_side_effects():
    code = ("import sys; before = set(sys.modules); import hints; "
            "assert 'argparse' not in set(sys.modules) - before")
    proc = subprocess.run([sys.executable, "-c", code, "--bogus", "x"], cwd=SCRIPTS,
                          stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def test_output_schema_lists_exactly_the_keys_in_order():
    path = os.path.join(os.path.dirname(SCRIPTS), "references", "hints-output.schema.json")
    with open(path, encoding="utf-8") as handle:
        schema = json.load(handle)
    assert list(schema["properties"]) == ALL_KEYS == schema["required"]
    assert schema["properties"]["next_action"]["enum"] == list(hints.ACTIONS)
    assert schema["properties"]["stop_reason"]["enum"] == [*hints.STOP_REASONS, None]


# --------------------------------------------------------------------------- hostile input (issue 14)


def test_lone_surrogates_in_keywords_and_ids_become_json_escapes():
    stdin = '{"keywords": ["a\\ud800"], "results": [{"id": "x\\udc80", "title": "t", "score": 0.9}]}'
    code, out, err = run_cli(stdin=stdin)
    assert (code, err) == (0, "")
    hints_out = json.loads(out)
    assert hints_out["new_ids"] == ["x\udc80"] and hints_out["gap_keywords"] == ["a\ud800"]


@pytest.mark.parametrize("stdin, message", [
    ('{"results": [{"id": "a", "title": "t", "score": ' + "9" * 400 + "}]}",
     "results[0].score: expected a finite number"),
    ('{"round": ' + "9" * 5001 + ', "results": []}', "input: a number with too many digits"),
])
def test_numbers_too_large_give_one_error_line(stdin, message):
    code, out, err = run_cli(stdin=stdin)
    assert (code, out) == (1, "") and err.count("\n") == 1 and message in err and "Traceback" not in err


def test_thirty_thousand_gap_keywords_are_read_for_the_first_thousand():
    words = [f"w{i}" for i in range(30_000)]
    out = compute_hints([], words)
    assert out["gap_keywords"] == words[:hints.MAX_KEYWORDS]
    assert len(out["broaden_queries"]) == hints.MAX_BROADEN_QUERIES
    assert out["broaden_queries"][0] == " ".join(words[1:hints.MAX_KEYWORDS])


def test_repeated_keywords_count_once():
    out = compute_hints([], ["same"] * 30_000)
    assert out["gap_keywords"] == ["same"] and out["broaden_queries"] == []
    assert compute_hints([], "JWT token JWT")["gap_keywords"] == ["JWT", "token"]
    # (folded as every comparison folds them: the first spelling stands for the rest)
    assert compute_hints([], ["Token", "token", " token ", "TOKEN", "refresh", "Refresh"])["gap_keywords"] \
        == ["Token", "refresh"]


def test_the_cli_says_when_keywords_past_the_cap_were_not_read():
    payload = json.dumps({"keywords": [f"w{i}" for i in range(hints.MAX_KEYWORDS + 2)]})
    proc = subprocess.run([sys.executable, HINTS], input=payload, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and len(json.loads(proc.stdout)["gap_keywords"]) == hints.MAX_KEYWORDS
    assert proc.stderr.count("\n") == 1 and "only the first 1,000 were read" in proc.stderr
    proc = subprocess.run([sys.executable, HINTS], input=json.dumps({"keywords": ["a", "A"] * 600}),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""


def test_a_query_of_ten_million_words_is_read_as_its_distinct_first_thousand():
    # (an adversarial check: 20 MB of "a a a ..." took 55 s and printed 110 MB)
    out = compute_hints([], "a " * 10_000_000)
    assert out["gap_keywords"] == ["a"]


def test_gap_scan_is_bounded_and_never_claims_an_unchecked_gap(monkeypatch):
    monkeypatch.setattr(hints, "_MAX_GAP_SCAN_CHARS", 1000)
    results = [item("a", 0.9, text="alpha " * 50)]  # 300 characters: three keywords' worth
    out = compute_hints(results, ["zz1", "alpha", "zz2", "zz3", "zz4"])
    assert out["gap_keywords"] == ["zz1", "zz2"]


def test_ascii_only_stdout_survives(tmp_path):
    stdin = '{"keywords": ["em\\u2014dash"], "results": [{"id": "x", "title": "t \\u2014 u", "score": 0.9}]}'
    env = dict(os.environ, PYTHONIOENCODING="ascii", LC_ALL="C")
    for args in ((), ("--text",)):
        proc = subprocess.run([sys.executable, HINTS, *args], input=stdin.encode(), env=env,
                              capture_output=True, timeout=60)
        assert (proc.returncode, proc.stderr) == (0, b"")
        assert "em\u2014dash" in proc.stdout.decode("utf-8")


def test_text_escapes_terminal_control_sequences():
    stdin = json.dumps({"keywords": ["x\x1b[31mred"], "results": [],
                        "seen_ids": ["\u202e"]})
    code, out, err = run_cli("--text", stdin=stdin)
    assert (code, err) == (0, "")
    assert "\x1b" not in out and "x\\x1b[31mred" in out


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_unwritable_stdout_is_one_error_line(tmp_path):
    path = tmp_path / "in.json"
    path.write_text('{"keywords": ["a"], "results": []}')
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, HINTS, "--input", str(path)], stdout=full,
                              stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 1 and proc.stderr.count(b"\n") == 1 and b"cannot write" in proc.stderr


def test_bad_input_with_a_closed_stderr_is_still_exit_1(tmp_path):
    # The error line cannot be written: the exit code still says bad input, no crash.
    proc = subprocess.run([sys.executable, HINTS, "--input", str(tmp_path / "missing.json")],
                          stdout=subprocess.PIPE, timeout=60, preexec_fn=lambda: os.close(2))
    assert proc.returncode == 1 and proc.stdout == b""


@pytest.mark.skipif(not hasattr(sys, "get_int_max_str_digits"), reason="no digit limit before Python 3.11")
@pytest.mark.parametrize("field", ["title", "summary", "tags", "related", "text", "keywords", "seen_ids"])
def test_an_integer_too_long_to_print_is_a_hints_input_error(field):
    big = 10 ** (sys.get_int_max_str_digits() + 10)
    kwargs = {"results": [{"id": "a.py", "score": 0.5}], "keywords": ["x"]}
    if field == "keywords":
        kwargs["keywords"] = [big]
    elif field == "seen_ids":
        kwargs["seen_ids"] = [big]
    else:
        kwargs["results"][0][field] = [big] if field in ("tags", "related") else big
    with pytest.raises(HintsInputError, match="digits"):
        compute_hints(**kwargs)


def test_format_hints_of_something_else_than_a_dict_is_a_type_error():
    with pytest.raises(TypeError, match="format_hints"):
        format_hints(["synthesize"])


def test_a_long_repetitive_query_gets_the_hints_of_a_short_one_quickly():
    """Lookups are kept per phrase: a query repeating its words costs about its length
    (the pytest timeout guards a quadratic or per-word-heavy regression)."""
    short = compute_hints([], ["rate", "limit"])
    long = compute_hints([], ["rate", "limit"] * 50_000)
    assert long["next_action"] == short["next_action"] == "broaden"
    assert set(long["gap_keywords"]) == {"rate", "limit"}


def test_cli_refuses_a_flood_of_results_and_a_payload_too_large_for_memory_in_one_line(capsys, monkeypatch,
                                                                                       tmp_path):
    # 42 MB of ``{}`` items took 49 s and 5 GB; under a memory limit it ended in a traceback.
    path = tmp_path / "flood.json"
    path.write_text(json.dumps({"keywords": ["a"], "results": [{}] * 4}))
    monkeypatch.setattr(hints, "MAX_RESULTS", 3)
    assert hints.main(["--input", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == f"hints.py: error: --input {path}: results: 4 items, more than 3; pass the best ones\n"

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(hints, "MAX_RESULTS", 1_000_000)
    monkeypatch.setattr(hints, "hints_from_payload", no_memory)
    assert hints.main(["--input", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == "hints.py: error: input: too large to hold in memory; pass fewer or smaller results\n"


def test_cli_seen_ids_take_what_the_schema_allows():
    # Nulls are dropped and numbers read as ids, as for tags and related (the schema's
    # string, integer or number), on the command line as in the library.
    payload = {"keywords": ["a"], "results": [{"id": "7", "title": "a", "score": 0.9}], "seen_ids": ["x", None, 7]}
    code, out, err = run_cli(stdin=json.dumps(payload))
    assert (code, err) == (0, "")
    assert json.loads(out)["new_ids"] == []  # (7 was seen)


def test_a_bad_item_of_a_set_is_named_the_same_way_every_run():
    messages = set()
    for seed in ("1", "2", "3"):
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import hints\n"
             "try: hints.compute_hints([], ['a'], seen_ids={'a', 'b', 'c', 'd', True})\n"
             "except hints.HintsInputError as e: print(e)", os.path.dirname(HINTS)],
            capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONHASHSEED": seed})
        messages.add(proc.stdout)
    assert len(messages) == 1 and "got true" in messages.pop()


def test_format_hints_lists_a_set_sorted_and_a_generator_item_by_item():
    text = format_hints({"related_ids": {"b", "a"}, "gap_keywords": (g for g in ("x", "y"))})
    assert "  related_ids: a, b" in text and "  gap_keywords: x, y" in text


@pytest.mark.parametrize("field, value", [("related", "Infinity"), ("tags", "NaN"), ("related", "-Infinity")])
def test_a_lone_non_finite_number_for_a_list_is_bad_input(field, value):
    code, out, err = run_cli(stdin='{"keywords": ["x"], "results": [{"id": "b", "title": "x", "score": 1, '
                                   f'"{field}": {value}}}]}}')
    assert code == 1 and out == "" and err.count("\n") == 1 and f"results[0].{field}" in err


def test_a_lone_number_for_a_list_is_read_as_an_id_is():
    # 7.0 names the result 7 already seen, and 1e23 the result whose id is 1e23: no expand.
    seen = compute_hints([item("b", 1.0, related=7.0)], ["x"], seen_ids=[7])
    assert seen["related_ids"] == [] and seen["next_action"] != "expand"
    own = compute_hints([item(1e23, 1.0), item("b", 1.0, related=1e23)], ["x"])
    assert own["related_ids"] == []


def test_the_library_keeps_its_limits_and_reads_only_text_as_text() -> None:
    import hints as h
    assert h.suggest_broaden_queries(["a", "b"], ["a"], max_queries=0) == []
    results = [{"id": "a", "score": 0.9, "tags": ["x"]}]
    assert h.suggest_followup_queries(results, ["k"], min_score="0.1") == ["k x"]
    assert h.suggest_followup_queries(results, ["k"], min_score=None) == ["k x"]
    assert h.synonym_runs(["rate", "limit", "x"], [True]) == []  # flags missing: not looked up
    assert h.synonym_runs([1, 2]) == []
    text = h.format_hints({"max_score": 10 ** 5000, "suggested_queries": [10 ** 5000]})
    assert "max_score=" in text
    # Python's spelling of a boolean or an object is no text of the result: the keywords are gaps
    got = h.compute_hints([{"id": "a", "title": {"k": None}, "summary": True, "score": 0.9}], ["none", "true"])
    assert got["gap_keywords"] == ["none", "true"]
    assert h.compute_hints([{"id": "a", "title": [7, "x"], "score": 0.9}], ["7"])["gap_keywords"] == []


def test_scripts_on_sys_path_shadows_no_module_a_consumer_may_have():
    """Skills put ``scripts/`` first on sys.path to import hints: every top-level name
    there must be this skill's own. ``agentic_search`` is the top-level package of
    PyPI's ``agentic-search`` distribution (12.0.1), so the retriever's is not."""
    names = {os.path.splitext(n)[0] for n in os.listdir(SCRIPTS)
             if not n.startswith((".", "__")) and (n.endswith(".py") or os.path.isdir(os.path.join(SCRIPTS, n)))}
    assert names == {"hints", "retrieve_loop", "agentic_search_skill"}
    stdlib = getattr(sys, "stdlib_module_names", frozenset())
    assert not names & (set(stdlib) | {"agentic_search"})
