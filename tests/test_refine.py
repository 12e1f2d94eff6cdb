"""Tests for agentic_search_skill.refine (REFINE): the next query.

Pins: synonyms from the table hints.py uses for keywords that matched nothing
("rate limiting" -> throttle), without other spellings of the same word and
capped per gap; vocabulary learned from the best files (the seed's "refresh",
"jwt") that is rare elsewhere and never a keyword already or code noise;
excludes below 0.2, focus areas for gaps and unseen related files, ``dir/**``
patterns for files at 0.7 or more.  Scored records are built by hand so the
tests do not depend on how scoring is tuned.
"""
from __future__ import annotations

import math
import random
from typing import Dict, List, Optional, Sequence

import pytest

import hints
from agentic_search_skill.match import Document
from agentic_search_skill.query import Keyword, extract_keywords, keywords_from_list, make_keyword, normalize
from agentic_search_skill.refine import (
    EXCLUDE_BELOW, MAX_LEARNED, MAX_SYNONYMS, MAX_SYNONYMS_PER_GAP, NextQuery,
    LEARN_MAX_BYTES, LEARN_MAX_SHARE, SYNONYMS_TRIED, SYNONYMS_TRIED_PER_GAP, _rarest, learn_vocabulary,
    refine_query, synonym_keywords,
)
from agentic_search_skill.score import Scored
from _trees import read_tree


def sc(rel: str, score: float) -> Scored:
    return Scored(rel=rel, score=score, raw=score, coverage=1.0, role="source", signals=(), matched_keywords=())


def texts(keywords: Sequence[Keyword]) -> List[str]:
    return [k.text for k in keywords]


def flat(text: str) -> str:
    return "".join(ch for ch in normalize(text) if ch.isalnum())


# --------------------------------------------------------------------------- #
# Synonyms for gaps
# --------------------------------------------------------------------------- #

RATE_LIMIT_GAPS = [
    ("two word keywords", lambda: keywords_from_list(["rate", "limiting"])),
    ("one phrase keyword", lambda: keywords_from_list(["rate limiting"])),
    ("from the task text", lambda: extract_keywords("add rate limiting to API endpoints")),
]


@pytest.mark.parametrize("name,make_gaps", RATE_LIMIT_GAPS, ids=[c[0] for c in RATE_LIMIT_GAPS])
def test_rate_limiting_gap_gives_throttle(name, make_gaps) -> None:
    gaps = make_gaps()
    syns = synonym_keywords(gaps, hints.synonym_runs, gaps)
    assert "throttle" in texts(syns)
    throttle = next(k for k in syns if k.text == "throttle")
    assert throttle.kind == "synonym"
    assert throttle.group  # synonyms of one gap share a group: they count once
    assert all(k.group == throttle.group for k in syns if k.text.startswith("throttl"))


def test_a_crash_is_searched_as_the_code_names_failures_not_as_a_bug_report() -> None:
    # "crashes" in a task is a symptom: code says panic, error, exception, abort - the words
    # of a bug tracker (bug, defect, issue) only match its prose ("bugs can be reported").
    for word in ("crashes", "crashing"):
        gaps = keywords_from_list([word])
        got = set(texts(synonym_keywords(gaps, hints.synonym_runs, gaps)))
        assert {"panic", "exception"} & got and not {"bug", "defect", "issue"} & got, got


def test_a_programming_word_the_tree_lacks_is_searched_by_its_stem_first() -> None:
    # the task said "panics", the code says panic!(...): the stem before other words for it
    gaps = [make_keyword("panics", "word")]
    syns = synonym_keywords(gaps, hints.synonym_runs, gaps)
    assert syns[0].text == "panic" and syns[0].group == "panics"
    assert 1 < len(syns) <= MAX_SYNONYMS_PER_GAP + 1  # the table's synonyms still come
    # a word the table does not know is prose: no stem searched for it
    prose = [make_keyword("misbehaves", "word")]
    assert synonym_keywords(prose, hints.synonym_runs, prose) == []


def test_a_message_no_file_holds_is_searched_by_its_halves() -> None:
    # the code builds it from a format string: "%v while waiting for connections to become ready"
    from agentic_search_skill.refine import message_pieces
    gap = make_keyword("context deadline exceeded while waiting for connections to become ready", "message")
    pieces = message_pieces([gap], [gap])
    assert [k.text for k in pieces] == ["context deadline exceeded while waiting", "for connections to become ready"]
    assert all(k.group == gap.text and k.weight == gap.weight for k in pieces)  # one group: the better counts
    assert pieces[1].needles == (b"for connections to become ready",)
    # a short message has no halves that still read as one
    assert message_pieces([make_keyword("invalid node type", "message")], []) == []


def test_a_message_printed_with_a_word_added_is_searched_without_it() -> None:
    # the code's "real number overflow", printed as "real number overflow input"
    from agentic_search_skill.refine import message_pieces
    gap = make_keyword("real number overflow input", "message")
    assert [k.text for k in message_pieces([gap], [gap])] == ["real number overflow", "number overflow input"]
    five = make_keyword("failed to parse config value", "message")
    assert [k.text for k in message_pieces([five], [five])] == ["failed to parse", "parse config value"]
    # a part of stop words says nothing: "is not a" of "is not a valid Status"
    four = make_keyword("is not a valid Status", "message")
    assert [k.text for k in message_pieces([four], [four])] == ["a valid Status"]


def test_synonyms_skip_other_spellings_of_the_gap_word() -> None:
    gaps = keywords_from_list(["rate limiting"])
    got = [flat(t) for t in texts(synonym_keywords(gaps, hints.synonym_runs, gaps))]
    assert got
    assert not [t for t in got if t.startswith("ratelimit")], got


def test_synonyms_come_from_the_hints_table() -> None:
    gaps = keywords_from_list(["auth", "delete", "config"])
    syns = synonym_keywords(gaps, hints.synonym_runs, gaps)
    for kw in syns:
        assert kw.text in hints.synonyms_for(kw.group), (kw.text, kw.group)
    groups = {k.group for k in syns}
    assert groups == {"auth", "delete", "config"}


def test_synonyms_capped_per_gap_and_in_all() -> None:
    gaps = keywords_from_list(["auth", "delete", "config", "rate limiting", "cache", "user", "error"])
    syns = synonym_keywords(gaps, hints.synonym_runs, gaps)
    assert len(syns) <= MAX_SYNONYMS
    per_group: Dict[str, int] = {}
    for kw in syns:
        per_group[kw.group] = per_group.get(kw.group, 0) + 1
    assert per_group and max(per_group.values()) <= MAX_SYNONYMS_PER_GAP


def test_synonyms_never_repeat_existing_keywords() -> None:
    gaps = keywords_from_list(["rate limiting"])
    existing = gaps + keywords_from_list(["throttle"])
    got = texts(synonym_keywords(gaps, hints.synonym_runs, existing))
    assert "throttle" not in got
    assert len(got) == len(set(normalize(t) for t in got))


def test_path_gaps_get_no_synonyms() -> None:
    gaps = [make_keyword("src/auth.py", "path")]
    assert synonym_keywords(gaps, hints.synonym_runs, gaps) == []


def test_unknown_gap_gets_no_synonyms() -> None:
    gaps = keywords_from_list(["frobnicator"])
    assert synonym_keywords(gaps, hints.synonym_runs, gaps) == []


def test_a_synonym_no_file_holds_gives_way_to_the_tables_next() -> None:
    # (trial 85: "storage" got db, database and datastore in a tree holding none of them)
    gaps = keywords_from_list(["storage"])
    every = texts(synonym_keywords(gaps, hints.synonym_runs, gaps))
    assert len(every) >= 2
    asked: List[str] = []

    def held(kws: Sequence[Keyword]) -> List[bool]:
        asked.extend(k.text for k in kws)
        return [k.text != every[0] for k in kws]

    got = texts(synonym_keywords(gaps, hints.synonym_runs, gaps, held))
    assert every[0] not in got and got[:len(every) - 1] == every[1:]
    assert every[0] in asked  # (one call for every candidate)
    # ... and none at all when the tree holds none
    assert synonym_keywords(gaps, hints.synonym_runs, gaps, lambda kws: [False] * len(kws)) == []


def test_the_synonyms_looked_for_in_the_tree_are_bounded() -> None:
    # (an adversarial check: 63 candidates, each absent one a search of every file's
    # text without an index, took a 118 MB tree's cycle from 3 s to 20 s)
    gaps = keywords_from_list(["read", "storage", "authentication", "rate limiting", "notification", "invoice",
                               "encryption", "cipher", "config", "delete", "cache", "user"])
    asked: List[Keyword] = []

    def held(kws: Sequence[Keyword]) -> List[bool]:
        asked.extend(kws)
        return [False] * len(kws)

    assert synonym_keywords(gaps, hints.synonym_runs, gaps, held) == []
    assert 0 < len([k for k in asked if normalize(k.text) != k.group.rstrip("s")]) <= SYNONYMS_TRIED
    per_group: Dict[str, int] = {}
    for kw in asked:
        per_group[kw.group] = per_group.get(kw.group, 0) + 1
    assert max(per_group.values()) <= SYNONYMS_TRIED_PER_GAP + 1  # (and the gap word's stem)


def test_a_later_gaps_own_stem_is_looked_for_whatever_the_budget() -> None:
    # (a second adversarial check: the budget went to the first gaps' absent synonyms and
    # "panics" never tried its stem "panic", which the tree held)
    gaps = [make_keyword(w, "word") for w in ("storage", "authentication", "caching", "panics")]
    got = texts(synonym_keywords(gaps, hints.synonym_runs, gaps, lambda kws: [k.text == "panic" for k in kws]))
    assert got == ["panic"]


def test_synonyms_are_deterministic() -> None:
    gaps = extract_keywords("add rate limiting to API endpoints, delete stale config")
    first = synonym_keywords(gaps, hints.synonym_runs, gaps)
    assert synonym_keywords(gaps, hints.synonym_runs, gaps) == first


# --------------------------------------------------------------------------- #
# Learning the codebase's vocabulary
# --------------------------------------------------------------------------- #

AUTH_CORPUS = {
    "src/auth.py": (
        "from .jwt_utils import decode_jwt\n\n"
        "def check_token_expiry(self, token):\n"
        "    if isinstance(token, str):\n"
        "        claims = decode_jwt(token)\n"
        "        return refresh_session(claims)\n\n"
        "def refresh_session(self, claims):\n"
        "    return refresh_jwt(claims)\n"
    ),
    "src/tokens.py": (
        "def token_expiry(self, token):\n"
        "    jwt = parse_jwt(token)\n"
        "    if isinstance(jwt, dict):\n"
        "        return refresh_token(jwt)\n\n"
        "def refresh_token(self, jwt):\n"
        "    return jwt\n"
    ),
    "src/user.py": "def get_user(self, token):\n    return self.users[token]\n",
    "src/pages.py": "def refresh_page(self):\n    return None\n",
}
for _i in range(8):
    AUTH_CORPUS[f"src/mod{_i}.py"] = (
        f"def handler_{_i}(self, request):\n    if isinstance(request, dict):\n        return request.user\n"
    )

AUTH_SCORES = [sc("src/auth.py", 0.95), sc("src/tokens.py", 0.85), sc("src/user.py", 0.3)]


def load(tmp_path, files: Dict[str, str]) -> List[Document]:
    return read_tree(tmp_path, files)


def learn(tmp_path, scored, keywords: Sequence[str]) -> List[str]:
    docs = load(tmp_path, AUTH_CORPUS)
    return learn_vocabulary(scored, {d.rel: d.data for d in docs}, docs, keywords_from_list(keywords))


def learn_around(tmp_path, before: str = "", after: str = "", limit: int = MAX_LEARNED,
                 extra: Optional[Dict[str, str]] = None) -> List[str]:
    """What the auth/token/expiry task learns when the two best files (auth.py, tokens.py)
    hold ``before`` and ``after`` around their own text, with ``extra`` files in the tree."""
    files = {**AUTH_CORPUS, **(extra or {})}
    for rel in ("src/auth.py", "src/tokens.py"):
        files[rel] = before + files[rel] + after
    docs = load(tmp_path, files)
    return learn_vocabulary(AUTH_SCORES, {d.rel: d.data for d in docs}, docs,
                            keywords_from_list(["auth", "token", "expiry"]), limit=limit)


def test_learns_terms_shared_by_the_best_files(tmp_path) -> None:
    got = learn(tmp_path, AUTH_SCORES, ["auth", "token", "expiry"])
    assert {"refresh", "jwt"} <= set(got), got
    assert len(got) <= MAX_LEARNED


def test_never_learns_existing_keywords_or_their_parts(tmp_path) -> None:
    got = learn(tmp_path, AUTH_SCORES, ["auth", "token expiry", "jwt"])
    assert not {"auth", "token", "expiry", "jwt", "tokenexpiry", "token_expiry"} & set(got), got
    assert "refresh" in got


def test_never_learns_code_noise(tmp_path) -> None:
    got = learn(tmp_path, AUTH_SCORES, ["auth", "token", "expiry"])
    assert not {"isinstance", "self", "def", "return", "dict", "str", "import", "from"} & set(got), got


def test_never_learns_a_languages_literals(tmp_path) -> None:
    # Go's nil, Python's None, every language's true and false: in every file of the
    # language, whatever it is about (a trial's round proposed "nil" and "found").
    got = learn_around(tmp_path, after=("\ndef token_ok(token):\n    if token is nil or token is None:\n"
                                        "        return false\n    return true\n") * 3, limit=12)
    assert not {"nil", "none", "true", "false"} & set(got), got
    assert {"refresh", "jwt"} <= set(got), got


def test_learns_from_the_code_not_from_a_locale_or_readme_that_leads(tmp_path) -> None:
    # A locale file and a readme lead the ranking; their words (month names, prose) are
    # not what the code calls things: the terms come from the code files behind them.
    files = dict(AUTH_CORPUS)
    files["src/locale/en.py"] = "MONTHS = 'January_February_March_April'.split('_')\n" * 3
    files["README.md"] = "Install with pip. Sponsors and contributors welcome.\n" * 3
    docs = load(tmp_path, files)
    lead = [Scored(rel="src/locale/en.py", score=1.0, raw=1.0, coverage=1.0, role="locale", signals=(),
                   matched_keywords=()),
            Scored(rel="README.md", score=0.98, raw=1.0, coverage=1.0, role="docs", signals=(),
                   matched_keywords=())] + AUTH_SCORES
    got = learn_vocabulary(lead, {d.rel: d.data for d in docs}, docs, keywords_from_list(["auth", "token", "expiry"]))
    assert {"refresh", "jwt"} <= set(got), got
    assert not {"january", "february", "march", "april", "sponsors", "install"} & set(got), got


def test_never_learns_a_term_nearly_every_file_holds(tmp_path) -> None:
    # A generated tree whose every module says "widget": the term tells no file apart,
    # and the next cycle would match and score every file for it.
    files = {rel: text + "\nwidget_factory = widget_registry\n" for rel, text in AUTH_CORPUS.items()}
    docs = load(tmp_path, files)
    got = learn_vocabulary(AUTH_SCORES, {d.rel: d.data for d in docs}, docs,
                           keywords_from_list(["auth", "token", "expiry"]))
    assert not {"widget", "factory", "registry"} & set(got), got
    assert {"refresh", "jwt"} <= set(got), got


def test_a_terms_rarity_is_the_same_with_the_index_and_without(tmp_path) -> None:
    # a term is held wherever it stands, with the index and without (a part of names: the
    # search counts ``tok`` where a word starts, the rarity of ``tok`` is of ``stokes`` too)
    from agentic_search_skill import index as index_mod
    from agentic_search_skill.refine import _rarest
    texts = [b"tok = next_tok()\n"] + [b"stokes_level = restoke(lexer)\n"] * 2 + [b"stokes_level = restoke(x)\n"] * 6
    docs = [Document(rel=f"f{i}.py", data=t, low=t.lower(), size=len(t)) for i, t in enumerate(texts)]
    args = (["tok", "lexer"], {"tok": 2, "lexer": 2}, {"tok": 1.0, "lexer": 1.0}, docs, 1)
    seg = index_mod.build_segment("seg.idx", [(d.rel, (1, 1, 1, 1, i + 1), d.low) for i, d in enumerate(docs)])
    by_index = _rarest(*args, lambda needle: len(seg.holders(needle)))
    assert _rarest(*args, None) == by_index == ["lexer"]


def test_never_learns_a_types_derives_or_decorators(tmp_path) -> None:
    # trial 69's tealdeer loop proposed serde, serialize, deserialize, debug from derives
    plumbing = ("\n@dataclass\nclass TokenState:  # derive(Serialize, Deserialize, Debug, Clone)\n"
                "    token: str  # serde(default)\n    @staticmethod\n    def refresh(token): return token\n") * 4
    got = learn_around(tmp_path, after=plumbing, limit=12)
    assert not {"derive", "serialize", "deserialize", "debug", "clone", "serde", "dataclass",
                "staticmethod"} & set(got), got
    assert {"refresh", "jwt"} <= set(got), got


def test_never_learns_linter_directives(tmp_path) -> None:
    directives = ("\nx = 1  # pylint: disable=invalid-name  # noqa\n# eslint-disable-next-line\n"
                  "token.refresh = spread(token)  # eslint-disable-line prefer-spread, no-plusplus\n"
                  "/* istanbul ignore next */ renew(token)  # type: ignore[attr-defined]\n") * 4
    got = learn_around(tmp_path, after=directives)
    # Neither the tools' names nor the rules a directive names ...
    assert not {"pylint", "disable", "noqa", "eslint", "prefer", "plusplus", "invalid", "ignore",
                "attr", "defined", "istanbul"} & set(got), got
    # ... while the code before and after a directive still teaches.
    assert {"refresh", "jwt"} <= set(got), got
    assert {"spread", "renew"} & set(learn_around(tmp_path, after=directives, limit=12)), got


def test_never_learns_the_alias_an_import_gives(tmp_path) -> None:
    # "import collections.abc as cabc", used where the best files check tokens: the
    # alias is each file's own name for a module, not the codebase's vocabulary.
    got = learn_around(tmp_path, before="import collections.abc as cabc\n",
                       after="\ndef token_list(token):\n    return isinstance(token, cabc.Sequence) and cabc.Sized\n")
    assert "cabc" not in got, got
    assert {"refresh", "jwt"} <= set(got), got


def test_never_learns_a_module_the_tree_does_not_hold(tmp_path) -> None:
    # The best files import the standard library's functools and a C header where they
    # speak of tokens, and name them only there or as a qualifier: those names say where
    # code comes from. A module of the tree (src/session.py) imported the same way, and a
    # library module the code also names as a word of its own (<mutex>, token_mutex), are
    # the codebase's words.
    got = learn_around(tmp_path,
                       before=("import functools\n#include <stdatomic.h>\n#include <mutex>\n"
                               "from .session import renew\n"),
                       after="\n@functools.cache\ndef token_cache(token):\n    with token_mutex:\n"
                             "        return functools.reduce(token) or session.renew(token)\n",
                       limit=12, extra={"src/session.py": "def renew(token):\n    return token\n"})
    assert not {"functools", "stdatomic"} & set(got), got
    assert {"session", "mutex", "refresh", "jwt"} <= set(got), got


def test_learns_nothing_without_a_relevant_file(tmp_path) -> None:
    scored = [sc("src/auth.py", 0.3), sc("src/tokens.py", 0.25)]
    assert learn(tmp_path, scored, ["auth", "token"]) == []


def test_learned_terms_are_deterministic(tmp_path) -> None:
    first = learn(tmp_path, AUTH_SCORES, ["auth", "token", "expiry"])
    assert learn(tmp_path, AUTH_SCORES, ["auth", "token", "expiry"]) == first


def test_learned_term_common_everywhere_is_not_preferred(tmp_path) -> None:
    # "request" is in both best files and in every other file: "jwt" is rarer.
    files = dict(AUTH_CORPUS)
    files["src/auth.py"] += "\ndef a(request):\n    return request\n"
    files["src/tokens.py"] += "\ndef b(request):\n    return request\n"
    docs = load(tmp_path, files)
    got = learn_vocabulary(AUTH_SCORES, {d.rel: d.data for d in docs}, docs,
                           keywords_from_list(["auth", "token", "expiry"]), limit=1)
    assert got != ["request"]


def test_bounded_rarity_ranking_equals_counting_every_candidate() -> None:
    # _rarest stops counting candidates that can no longer make the top; the terms it
    # returns must be exactly those a full count of every candidate ranks first.
    rng = random.Random(7)
    alphabet = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta"]
    for _ in range(300):
        sample = [Document(f"f{i}.py", b"", " ".join(rng.sample(alphabet, rng.randint(0, 5))).encode())
                  for i in range(rng.randint(0, 12))]
        cands = rng.sample(alphabet, rng.randint(1, len(alphabet)))
        freq = {t: rng.randint(1, 4) for t in cands}
        in_files = {t: rng.randint(1, 3) for t in cands}
        limit = rng.randint(1, 5)
        n = max(len(sample), 1)
        df = {t: sum(t.encode() in d.low for d in sample) for t in cands}
        full = sorted(
            (-(math.log(1.0 + n / (1.0 + df[t])) * (1.0 + math.log(freq[t])) * in_files[t]), t)
            for t in cands if df[t] <= LEARN_MAX_SHARE * n)  # (never one nearly every file holds)
        assert _rarest(cands, freq, in_files, sample, limit) == [t for _, t in full[:limit]]


# --------------------------------------------------------------------------- #
# Patterns, excludes, focus areas
# --------------------------------------------------------------------------- #

def refine(**over) -> NextQuery:
    args = dict(
        patterns=["**"],
        keywords=keywords_from_list(["auth", "token", "rate limit"]),
        excludes=[],
        shown=[sc("src/auth/tokens.py", 0.9), sc("src/user.py", 0.1), sc("src/db.py", 0.2),
               sc("src/util.py", 0.19)],
        gap_keywords=keywords_from_list(["rate limit"]),
        learned=["refresh", "jwt"],
        synonyms=[make_keyword("throttle", "synonym", 1.0, group="rate limit")],
        unseen_related=["src/session/manager.py"],
    )
    args.update(over)
    return refine_query(**args)


def test_refine_sets_aside_shown_files_below_0_2() -> None:
    assert EXCLUDE_BELOW == 0.2
    q = refine()
    assert "src/user.py" in q.set_aside and "src/util.py" in q.set_aside
    assert "src/db.py" not in q.set_aside and "src/auth/tokens.py" not in q.set_aside
    assert not q.excludes  # the caller's excludes stay the caller's


def test_refine_keeps_existing_excludes_and_set_aside_without_duplicates() -> None:
    q = refine(excludes=["build/**", "src/user.py"], set_aside=["src/old.py"])
    assert q.excludes == ("build/**", "src/user.py")
    assert "src/user.py" not in q.set_aside  # the caller left it out already
    assert q.set_aside[0] == "src/old.py" and list(q.set_aside).count("src/util.py") == 1


def test_refine_focus_areas_name_gaps_and_unseen_related_files() -> None:
    q = refine()
    assert any("rate limit" in f for f in q.focus_areas)
    assert any("src/session/manager.py" in f for f in q.focus_areas)


def test_refine_focus_areas_skip_learned_and_synonym_gaps_and_are_bounded() -> None:
    gaps = [make_keyword("throttle", "synonym"), make_keyword("refresh", "learned")]
    q = refine(gap_keywords=gaps, unseen_related=[f"src/r{i}.py" for i in range(50)])
    assert not any("throttle" in f or "refresh" in f for f in q.focus_areas)
    assert 1 <= len(q.focus_areas) <= 10


def test_refine_adds_learned_terms_and_synonyms_after_the_keywords() -> None:
    q = refine()
    got = [(k.text, k.kind) for k in q.keywords]
    # "rate limit" matched nothing: its synonym takes its place.
    assert got[:2] == [("auth", "given"), ("token", "given")]
    assert ("rate limit", "given") not in got
    assert ("refresh", "learned") in got and ("jwt", "learned") in got
    assert ("throttle", "synonym") in got
    assert q.learned == ("refresh", "jwt")
    assert q.synonyms == ("throttle",)


def test_refine_keeps_the_patterns_as_they_are() -> None:
    # Every relevant file lies inside the query's patterns: adding its directory can only
    # widen a query the caller narrowed (or do nothing beside "**").
    assert refine().patterns == ("**",)
    assert refine(patterns=["core/mapping/*.go"]).patterns == ("core/mapping/*.go",)


def test_refine_never_repeats_a_normalized_keyword() -> None:
    # A learned term that is also a synonym (the throttle fixture) is searched once.
    q = refine(learned=["throttle", "Throttle"], synonyms=[make_keyword("throttle", "synonym", 1.0, group="rate limit")])
    keys = [k.text.lower() for k in q.keywords]
    assert len(keys) == len(set(keys))
    assert keys.count("throttle") == 1


def test_refine_drops_every_gap_whether_or_not_it_has_synonyms() -> None:
    gaps = keywords_from_list(["rate limit", "QuuxWidgetFactory"])
    q = refine(gap_keywords=gaps, synonyms=[])
    assert {k.text for k in q.keywords} == {"auth", "token", "refresh", "jwt"}
    # ...and each named gap is still reported, so the caller knows.
    assert any("QuuxWidgetFactory" in f for f in q.focus_areas)


def test_refine_is_deterministic() -> None:
    assert refine() == refine()


def test_never_learns_a_language_keyword_or_where_code_comes_from(tmp_path) -> None:
    # Every Go file says ``func`` and ``struct``; a module path names its host and owner
    # (github.com/google/uuid) and a comment's link its site: none is what the code calls
    # things. The name a module path ends in (uuid) may still be learned, where the code
    # uses it beside the task's words.
    got = learn_around(tmp_path, after=('\nimport "github.com/google/uuid"\n'
                                        "// see https://gitlab.example.org/docs/page token\n"
                                        "func f() struct{} { return uuid(token) }\n") * 3, limit=8)
    assert not {"func", "struct", "github", "google", "gitlab", "example", "docs", "page"} & set(got), got
    assert "uuid" in got and {"refresh", "jwt"} <= set(got), got


def test_never_learns_from_a_file_that_is_many_units(tmp_path) -> None:
    # An amalgamated single-header library leads: its frequent names are the whole
    # codebase's, so the terms come from the best files of a readable size.
    files = dict(AUTH_CORPUS)
    files["src/amalgamated.py"] = "def sax_adapter_cbor(x):\n    return sax_adapter_cbor(x)\n" * 5000
    docs = load(tmp_path, files)
    assert len(files["src/amalgamated.py"]) > LEARN_MAX_BYTES
    lead = [sc("src/amalgamated.py", 0.97)] + AUTH_SCORES
    got = learn_vocabulary(lead, {d.rel: d.data for d in docs}, docs, keywords_from_list(["auth", "token", "expiry"]))
    assert not {"sax", "adapter", "cbor"} & set(got), got
    assert {"refresh", "jwt"} <= set(got), got


def test_learns_from_the_lines_that_speak_of_the_task_not_the_rest_of_the_file(tmp_path) -> None:
    # Both best files repeat ``widget_gadget`` far from any word of the task: what the
    # code calls the task's things is on the lines that hold its words.
    got = learn_around(tmp_path, after="\ndef render_widget_gadget():\n    return widget_gadget\n" * 6)
    assert not {"widget", "gadget", "render"} & set(got), got
    assert {"refresh", "jwt"} <= set(got), got


def test_a_joined_name_no_file_holds_is_searched_without_its_first_part() -> None:
    # trial 68's jansson: the task's JSON_INT_AS_REAL is JSON_DECODE_INT_AS_REAL in the code
    from agentic_search_skill.refine import name_pieces
    gap = make_keyword("JSON_INT_AS_REAL", "identifier")
    pieces = name_pieces([gap], [gap])
    assert [k.text for k in pieces] == ["INT_AS_REAL"]
    assert pieces[0].group == gap.text and pieces[0].weight == gap.weight  # one group: the better counts
    # a short rest is anyone's name; two parts have no rest worth a search; a word is none;
    # a function's or variable's rest is anyone's (``my_config_file`` -> ``config_file``)
    assert name_pieces([make_keyword("MY_MAX_SIZE", "identifier")], []) == []
    assert name_pieces([make_keyword("my_config_file", "identifier")], []) == []
    assert name_pieces([make_keyword("json_dumps", "identifier")], []) == []
    assert name_pieces([make_keyword("int as real", "message")], []) == []
