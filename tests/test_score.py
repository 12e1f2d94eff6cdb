"""Tests for agentic_search_skill.score (EVALUATE): relevance, roles, reasons.

Scores are being tuned, so exact numbers are pinned only where a formula is the
contract (idf is BM25's idf); otherwise the tests pin orderings and bounds a
user relies on: definitions beat mentions, source beats tests unless the task
asks for tests, synonyms of one gap count once, output order is (-score, path)
and deterministic, relevance stays in 0..MAX_RELEVANCE.
"""
from __future__ import annotations

import itertools
import math
from typing import Dict, List, Sequence

import pytest

from agentic_search_skill.engine import rank_documents
from agentic_search_skill.match import FileMatch
from agentic_search_skill.query import Keyword, keywords_from_list, make_keyword
from agentic_search_skill.score import (
    MAX_RELEVANCE, Corpus, Scored, corpus_stats, file_role, idf, raw_evidence, relevance,
    reason_text, roles_requested, score_matches, task_words,
)
from _trees import read_tree


def build(tmp_path, files: Dict[str, str]):
    return read_tree(tmp_path, files)


def rank(tmp_path, files: Dict[str, str], keywords: Sequence[str], task: str = "") -> List[Scored]:
    scored, _, _ = rank_documents(build(tmp_path, files), keywords_from_list(keywords), task_words(task))
    return scored


def by_rel(scored: Sequence[Scored]) -> Dict[str, Scored]:
    return {s.rel: s for s in scored}


FILLER = {f"src/other{i}.py": f"def helper_{i}():\n    return {i}\n" for i in range(6)}


# --------------------------------------------------------------------------- #
# File roles
# --------------------------------------------------------------------------- #

ROLE_CASES = [
    ("tests/test_auth.py", "test"),
    ("test_x.py", "test"),
    ("pkg/x_test.go", "test"),
    ("src/x.spec.ts", "test"),
    ("src/x.test.ts", "test"),
    ("src/__tests__/x.ts", "test"),
    ("conftest.py", "test"),
    ("tests/conftest.py", "test"),
    ("testcases/t/308-focus_wrapping.t", "test"),  # Perl's t/*.t, a testcases/ folder
    ("t/basic.t", "test"),
    ("src/testcase.c", "source"),
    ("docs/index.py", "docs"),
    ("README.md", "docs"),
    ("guide/usage.rst", "docs"),
    ("CHANGELOG.md", "docs"),
    ("RELEASE_NOTES", "docs"),  # a bare README, RELEASE_NOTES, TODO, COPYING
    ("dunstrc", "data"),  # a run-commands file and a .conf: a configuration, not its reader
    (".npmrc", "data"),
    ("etc/input.conf", "data"),
    ("src/rc", "source"),
    ("COPYING", "docs"),
    ("src/todo.js", "source"),
    ("examples/demo.py", "example"),
    ("app/migrations/0001_initial.py", "migration"),
    ("db/migrate/20190101120000_create_users.rb", "migration"),
    ("app/migrations/versions/2_add_index.py", "migration"),
    # The code of a migration framework is source, not a migration.
    ("orm/migrations/autodetector.py", "source"),
    ("orm/migrations/operations/models.py", "source"),
    ("app/migrations/__init__.py", "source"),
    ("vendor/lib/x.go", "vendored"),
    ("third_party/zlib/a.c", "vendored"),
    ("src/third-party/rapidyaml/ryml_all.hpp", "vendored"),
    ("3rdparty/zlib/a.c", "vendored"),
    ("Source/ThirdParty/zlib/a.c", "vendored"),
    ("src/Vendor/Controller/SecurityController.php", "source"),
    ("src/Infrastructure/External/PaymentClient.cs", "source"),
    ("src/partyline/a.c", "source"),
    ("node_modules/x/index.js", "vendored"),
    ("src/pip/_vendor/pkg_resources/__init__.py", "vendored"),
    ("src/vendors.py", "source"),
    ("include/spdlog/fmt/bundled/core.h", "vendored"),
    ("src/bundler/index.js", "source"),
    ("static/app.min.js", "generated"),
    ("proto/api_pb2.py", "generated"),
    ("sig/v1.3/jq-1.3.tar.gz.asc", "generated"),
    ("jq.1.prebuilt", "generated"),
    ("src/app/core.py", "source"),
    ("src/contest.py", "source"),
    ("src/latest.py", "source"),
    ("src/attestation.py", "source"),
    ("src/protest/handler.py", "source"),
    ("src/build.py", "source"),
    ("src/docstring.py", "source"),
    # Tests as the JVM, .NET, Swift and Ruby name them; names that merely end in "test" are source.
    ("Tests/AppTests/ParserTests.swift", "test"),
    ("src/App.Tests/SessionTests.cs", "test"),
    ("UnitTests/Cache.cs", "test"),
    ("app/src/androidTest/java/Foo.kt", "test"),
    ("src/main/java/FooTest.java", "test"),
    ("spec/models/user_spec.rb", "test"),
    ("lib/user_spec.rb", "test"),
    ("src/UserSpec.scala", "test"),
    ("Sources/App/Parser.swift", "source"),
    ("src/Latest.java", "source"),
    ("src/Contest.cs", "source"),
    ("api/pod_spec.go", "source"),
    ("tokio-test/src/io.rs", "source"),
    # Build scripts and manifests of other ecosystems; a docs site's versions and MDX pages.
    ("detekt-cli/build.gradle.kts", "build"),
    ("src/App/App.csproj", "build"),
    ("Package.swift", "build"),
    ("rubocop.gemspec", "build"),
    ("Gemfile", "build"),
    ("gdu.spec", "build"),
    ("packaging/PKGBUILD", "build"),
    ("Dockerfile", "build"),
    ("debian/rules", "build"),
    ("Dockerfile.alpine", "build"),
    ("docker/app.Dockerfile", "build"),
    ("src/debian/deb822.py", "source"),
    ("src/login.spec.ts", "test"),
    ("src/spec.rs", "source"),
    ("src/debian_version.c", "source"),
    ("website/versioned_docs/version-1.22.0/gettingstarted/gradle.mdx", "docs"),
    ("api-docs/index.html", "docs"),
    ("django/contrib/admindocs/views.py", "source"),
    # A repository's maintenance scripts, frozen old versions of its code.
    ("scripts/generate-theme-doc.js", "build"),
    ("lib/legacy/zstd_v01.c", "legacy"),
    ("src/deprecated/old_api.go", "legacy"),
    ("pkg/scripts/run.py", "source"),
    # A build template plays the part of what it becomes; one of plain source is build input.
    ("assets/manual/bat.1.in", "docs"),
    ("assets/completions/bat.fish.in", "completion"),
    ("src/config.h.in", "build"),
    ("tests/data/case.in", "test"),
    ("src/main.in.rs", "source"),
    # A scaffold copied into a user's project is build input; a page template is not.
    ("django/conf/project_template/project_name/settings.py-tpl", "build"),
    ("tools/gen/main.go.tmpl", "build"),
    ("templates/README.md.template", "docs"),
    ("views/index.tpl", "source"),
    ("src/tpl.py", "source"),
    # Translation catalogues: Qt's .ts XML is no TypeScript; Django's translation package is code.
    ("share/translations/keepassxc_fi.ts", "locale"),
    ("src/i18n/app_de.qm", "locale"),
    ("res/messages.fr.xlf", "locale"),
    ("django/utils/translation/trans_real.py", "source"),
    ("src/translation.ts", "source"),
    # Qt catalogues named by their locale in lang/, gettext's template, Fluent, locales/.
    ("src/lang/qbittorrent_pt_BR.ts", "locale"),
    ("src/lang/zh-cn.ts", "locale"),
    ("src/lang/parser.ts", "source"),
    ("src/lang/index.ts", "source"),
    ("po/xournalpp.pot", "locale"),
    ("src/uu/du/locales/en-US.ftl", "locale"),
    ("app/locales/fr/messages.js", "locale"),
    # Doxygen's set-up is docs; test doubles are tests, a mocking library's own code is not.
    ("Doxyfile", "docs"),
    ("doc/Doxyfile.in", "docs"),
    ("pkg/cmd/extension/manager_mock.go", "test"),
    ("internal/mocks/store.go", "test"),
    ("pkg/mock_client.go", "test"),
    ("src/main/java/org/mockito/mock/MockName.java", "source"),
    ("src/mockito.js", "source"),
    # A C project's root deps/ is vendored; Maven's site and a word list are docs.
    ("deps/sqlite3/sqlite3.h", "vendored"),
    ("src/resolver/deps/graph.py", "source"),
    ("src/site/xdoc/checks/misc/indentation.xml", "docs"),
    ("config/whitelist.words", "docs"),
    ("spotbugsTestCases/src/java/UMAC.java", "test"),
    ("src/xdocs-examples/resources/checks/Example1.java", "example"),
    ("src/counterexamples/x.py", "source"),
    # ... and their files or data: a trial's sample inputs ranked 3rd and 4th
    ("sample_files/r_1.R", "example"),
    ("demo_files/a.js", "example"),
    ("src/sample_filesystem/x.c", "source"),
    ("junit/framework/TestCase.java", "source"),
    # What a code generator writes; a generator's own code is source.
    ("crates/oxc_formatter/src/ast_nodes/generated/ast_nodes.rs", "generated"),
    ("src/__generated__/graphql.ts", "generated"),
    ("pkg/apis/v1/zz_generated.deepcopy.go", "generated"),
    ("src/schema.generated.ts", "generated"),
    ("internal/bindata_generated.go", "generated"),
    ("tools/codegen/generator.rs", "source"),
    ("src/generated.rs", "source"),
    ("src/regenerated/x.py", "source"),
    # Shell completion scripts in a completions folder; a completion engine's code is source.
    ("completions/_dust", "completion"),
    ("completions/dust.fish", "completion"),
    ("completions/_dust.ps1", "completion"),
    ("extra/completions/_alacritty", "completion"),
    ("data/shell-completions/zsh/_meson", "completion"),
    ("completion/zsh/_task", "completion"),
    ("etc/completion/completion.bash", "completion"),
    ("share/bash_completion.d/gdu", "completion"),
    # the build tool's wrappers written into the project (trial 68's gradlew, 3rd)
    ("gradlew", "build"), ("gradlew.bat", "build"), ("mvnw", "build"), ("mvnw.cmd", "build"),
    ("src/gradlew.py", "source"), ("src/dotenv/py.typed", "build"),
    # a help text named for what it is, with no extension (trial 72's sc-im src/doc, first);
    # a module or a folder of that name is code
    ("src/doc", "docs"), ("HELP", "docs"), ("lib/usage", "docs"),
    ("src/help.c", "source"), ("src/helpers/usage.py", "source"), ("cmd/help/main.go", "source"),
    ("src/Generated/Model.cs", "generated"),
    ("crates/ide-completion/src/completions/dot.rs", "source"),
    ("src/completions/mod.rs", "source"),
    ("lib/completion.js", "source"),
    # Python stubs declare what lives elsewhere, as .d.ts files do.
    ("mypy/typeshed/stdlib/ast.pyi", "declarations"),
    ("src/pkg/__init__.pyi", "declarations"),
    # ... and Flow's type stubs beside a module (trial 68's immer stopped on one).
    ("src/types/index.js.flow", "declarations"),
    # A module named tests is one; a module named test may be a command's (Django's test.py).
    ("compiler-core/src/type_/tests.rs", "test"),
    ("app/tests.py", "test"),
    ("django/core/management/commands/test.py", "source"),
    # ... but one at the top of the tree is the package's tests (a trial's slugify ranking
    # led with its test.js, on the report's quoted examples).
    ("test.js", "test"),
    ("spec.ts", "test"),
    ("test.py", "test"),
    ("lib/test.js", "source"),
    ("spec.yaml", "data"),
    ("spec.md", "docs"),
    ("test.json", "data"),
    # End-to-end tests and Jest's snapshots (a trial's fast-glob ranking held a snapshot 4th).
    ("__snapshots__/only-files.e2e.js", "test"),
    ("src/__snapshots__/app.test.ts.snap", "test"),
    ("src/app.e2e.ts", "test"),
    ("src/app.e2e-spec.ts", "test"),
    ("src/lib/e2e/megolm-outbound.ts", "source"),  # (end-to-end encryption's code)
    ("cypress/e2e/login.cy.ts", "test"),
    ("src/login.cy.js", "test"),
    ("test.go", "source"),  # (a Go test.go is part of its package)
    ("src/snapshot.ts", "source"),
    # Markdown by any of its extensions (a trial's linenoise ranking led with its
    # README.markdown at 0.90), AsciiDoc's, Textile's, RDoc's.
    ("README.markdown", "docs"),
    ("readme.markdown", "docs"),
    ("guide/intro.mdown", "docs"),
    ("notes.mkd", "docs"),
    ("manual.asciidoc", "docs"),
    ("README.rdoc", "docs"),
]


@pytest.mark.parametrize("rel,role", ROLE_CASES, ids=[c[0] for c in ROLE_CASES])
def test_file_role(rel, role) -> None:
    got, factor = file_role(rel)
    assert got == role
    if role == "source":
        assert factor == 1.0
    else:
        assert 0.0 < factor < 1.0


ROLE_REQUEST_CASES = [
    ("add tests for the token parser", {"test"}),
    ("the test for expiry fails", {"test"}),
    ("update the docs for login", {"docs"}),
    ("typo in README", {"docs"}),
    ("write a migration for the user table", {"migration"}),
    ("fix the token expiry", set()),
    ("contest latest attestation", set()),
    ("the legacy decoder crashes", {"legacy"}),
    ("zsh completion misses the --color flag", {"completion"}),
]


@pytest.mark.parametrize("task,roles", ROLE_REQUEST_CASES, ids=[c[0] for c in ROLE_REQUEST_CASES])
def test_roles_requested(task, roles) -> None:
    assert set(roles_requested(task_words(task))) == roles


ROLE_FILES = [
    # role file, task that asks for it
    ("tests/test_store.py", "add a test for parse_token"),
    ("docs/store.md", "update the docs of parse_token"),
    ("app/migrations/0002_store.py", "write a migration using parse_token"),
    ("completions/_store", "the zsh completions of parse_token"),
]


@pytest.mark.parametrize("role_rel,task", ROLE_FILES, ids=[c[0] for c in ROLE_FILES])
def test_role_files_rank_below_source(tmp_path, role_rel, task) -> None:
    body = "x = parse_token(a)\ny = parse_token(b)\n"
    files = dict(FILLER, **{"src/store.py": body, role_rel: body})
    plain = by_rel(rank(tmp_path, files, ["parse_token"], "fix parse_token"))
    assert plain[role_rel].score < plain["src/store.py"].score
    assert any("file x0." in sig.text() for sig in plain[role_rel].signals), plain[role_rel].signals


def test_a_completion_script_defining_the_quoted_function_is_source(tmp_path) -> None:
    # a shell's own completions are its product: the one defining the function the task
    # quotes is not down-weighted (an adversarial check's fish-shell tree)
    files = dict(FILLER, **{"share/completions/git.fish": "function __fish_git_branches\n  git branch\nend\n",
                            "share/completions/hg.fish": "complete -c hg -a '(__fish_git_branches)'\n"})
    got = by_rel(rank(tmp_path, files, ["__fish_git_branches"], "__fish_git_branches returns refs twice"))
    assert got["share/completions/git.fish"].role == "source"
    assert got["share/completions/hg.fish"].role == "completion"


def test_a_builds_copy_of_a_src_file_is_generated(tmp_path) -> None:
    # (trial 87: moment's root locale/ja.js and bundle moment.js, copies of src/locale/ja.js
    # and src/moment.js, led a ranking on the Japanese eras the task named; the fix was in
    # src/lib/units/era.js)
    era = "export function eraName(m) { return m.startOf('day').era; }\n"
    files = dict(FILLER, **{"src/locale/ja.js": era * 3, "locale/ja.js": era * 3, "src/moment.js": era,
                            "moment.js": era * 4, "lib/moment.js": era, "src/lib/units/era.js": era * 2,
                            "docs/locale/ja.js": era})
    got = by_rel(rank(tmp_path, files, ["eraName", "Japanese"], "the Japanese eraName changes the date"))
    assert {got[r].role for r in ("locale/ja.js", "moment.js", "lib/moment.js")} == {"generated"}
    assert got["src/locale/ja.js"].role == "locale" and got["src/moment.js"].role == "source"
    assert got["src/locale/ja.js"].score > got["locale/ja.js"].score
    assert got["src/lib/units/era.js"].score > got["moment.js"].score
    assert got["docs/locale/ja.js"].role == "docs"  # (a page of docs is no build's copy)


@pytest.mark.parametrize("source", ["configure.ac", "configure.in", "configure.acr"])
def test_configure_beside_its_source_is_generated(tmp_path, source) -> None:
    # autoconf's output holds every option and word of the project: below the code that
    # reads them, with its reason; a project's own configure script (no source beside it)
    # is source, and so is a configure of another directory than the source's.
    body = "x = parse_token(a)\ny = parse_token(b)\n"
    files = dict(FILLER, **{"src/store.py": body, "configure": body * 3, source: "parse_token\n",
                            "sub/configure": body * 3})
    got = by_rel(rank(tmp_path, files, ["parse_token"], "fix parse_token"))
    assert got["configure"].role == "generated"
    assert got["configure"].score < got["src/store.py"].score
    assert any("generated file x0.2" in sig.text() for sig in got["configure"].signals), got["configure"].signals
    assert got["sub/configure"].role == "source"
    alone = by_rel(rank(tmp_path / "own", dict(FILLER, **{"src/store.py": body, "configure": body * 3}),
                        ["parse_token"], "fix parse_token"))
    assert alone["configure"].role == "source"


@pytest.mark.parametrize("role_rel,task", ROLE_FILES, ids=[c[0] for c in ROLE_FILES])
def test_task_about_a_role_weakens_its_down_weighting(tmp_path, role_rel, task) -> None:
    body = "x = parse_token(a)\ny = parse_token(b)\n"
    files = dict(FILLER, **{"src/store.py": body, role_rel: body})
    plain = by_rel(rank(tmp_path, files, ["parse_token"], "fix parse_token"))
    asked = by_rel(rank(tmp_path, files, ["parse_token"], task))
    assert asked[role_rel].score > plain[role_rel].score
    assert asked[role_rel].raw > plain[role_rel].raw


@pytest.mark.parametrize("role_rel,task", ROLE_FILES, ids=[c[0] for c in ROLE_FILES])
def test_task_about_a_role_turns_its_down_weighting_off(tmp_path, role_rel, task) -> None:
    body = "x = parse_token(a)\ny = parse_token(b)\n"
    files = dict(FILLER, **{"src/store.py": body, role_rel: body})
    asked = by_rel(rank(tmp_path, files, ["parse_token"], task))
    assert asked[role_rel].score >= asked["src/store.py"].score


def test_long_issue_mentioning_tests_in_passing_keeps_most_of_their_down_weighting(tmp_path) -> None:
    # A pasted issue with a reproduction test is still mostly fixed in source: on a long
    # query the test file keeps well over half of its down-weighting (factor <= 0.55).
    names = [f"name_{i}" for i in range(20)]
    body = "".join(f"{n}()\n" for n in names)
    files = dict(FILLER, **{"src/store.py": body, "tests/test_store.py": body})
    scored = by_rel(rank(tmp_path, files, names, "the test fails"))
    src, test = scored["src/store.py"], scored["tests/test_store.py"]
    factor = test.raw / src.raw
    assert factor <= 0.55, factor
    assert factor > file_role("tests/test_store.py")[1]   # the mention still counts a little
    assert src.score > test.score


# --------------------------------------------------------------------------- #
# idf and relevance: the formulas that are contracts
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("df,n", [(0, 1), (0, 10), (1, 10), (5, 10), (10, 10), (3, 1000)])
def test_idf_is_bm25_idf(df, n) -> None:
    assert idf(df, n) == pytest.approx(math.log(1.0 + (n - df + 0.5) / (df + 0.5)))


def test_idf_is_positive_and_falls_as_keyword_gets_common() -> None:
    values = [idf(df, 20) for df in range(21)]
    assert all(v > 0 for v in values)
    assert values == sorted(values, reverse=True)


GRID = [i / 10 for i in range(11)]


@pytest.mark.parametrize("weight", [0.0, 0.25, 0.5, 1.0])
def test_relevance_is_monotonic_in_strength_and_coverage(weight) -> None:
    for s1, s2 in zip(GRID, GRID[1:]):
        for c in GRID:
            assert relevance(s1, c, weight) <= relevance(s2, c, weight)
            assert relevance(c, s1, weight) <= relevance(c, s2, weight)


@pytest.mark.parametrize("weight", [0.0, 0.25, 0.5, 1.0])
def test_relevance_is_bounded(weight) -> None:
    for s, c in itertools.product(GRID + [1.5, 10.0], repeat=2):
        assert 0.0 <= relevance(s, c, weight) <= MAX_RELEVANCE
    assert MAX_RELEVANCE < 1.0


@pytest.mark.parametrize("weight", [0.0, 0.25, 0.5, 1.0])
def test_relevance_of_nothing_is_zero(weight) -> None:
    assert relevance(0.0, 0.0, weight) == 0.0


def test_best_file_covering_everything_reaches_implements_band() -> None:
    assert relevance(1.0, 1.0, 1.0) >= 0.8
    assert relevance(1.0, 1.0, 0.0) >= 0.8


# --------------------------------------------------------------------------- #
# Synonyms of one gap count once
# --------------------------------------------------------------------------- #

def synonym_keywords(group: str) -> List[Keyword]:
    return [make_keyword(t, "synonym", 1.0, group=group) for t in ("throttle", "throttling", "throttler")]


def fm(rel: str, counts, size: int = 100) -> FileMatch:
    n = len(counts)
    return FileMatch(rel=rel, size=size, counts=tuple(counts), in_path=(0.0,) * n, defines=(0.0,) * n)


def flat_corpus(n_keywords: int) -> Corpus:
    # Same idf for every keyword: the comparison is about grouping alone.
    return Corpus(n_docs=10, avg_size=100.0, idfs=(idf(2, 10),) * n_keywords)


def test_synonyms_of_one_gap_count_once() -> None:
    kws = synonym_keywords("rate limiting")
    corpus = flat_corpus(len(kws))
    all_three, cov_all, hits_all = raw_evidence(fm("a.py", (2, 2, 2)), kws, corpus)
    best_alone, cov_one, _ = raw_evidence(fm("b.py", (2, 0, 0)), kws, corpus)
    assert all_three == pytest.approx(best_alone)
    assert cov_all == pytest.approx(cov_one)
    assert {kws[i].text for i in hits_all} == {"throttle", "throttling", "throttler"}


def test_ungrouped_keywords_add_up() -> None:
    # The contrast: without a group the same counts are three pieces of evidence.
    kws = [make_keyword(t, "synonym", 1.0) for t in ("throttle", "throttling", "throttler")]
    corpus = flat_corpus(len(kws))
    all_three = raw_evidence(fm("a.py", (2, 2, 2)), kws, corpus)[0]
    one = raw_evidence(fm("b.py", (2, 0, 0)), kws, corpus)[0]
    assert all_three > one


def test_synonym_group_does_not_outrank_a_file_holding_another_keyword(tmp_path) -> None:
    kws = keywords_from_list(["router"]) + synonym_keywords("rate limiting")
    matches = [
        fm("src/many_synonyms.py", (0, 2, 2, 2)),
        fm("src/router_and_one.py", (2, 2, 0, 0)),
    ]
    corpus = corpus_stats(matches, 10, 100.0, len(kws))
    out = by_rel(score_matches(matches, kws, corpus))
    assert out["src/router_and_one.py"].score > out["src/many_synonyms.py"].score


# --------------------------------------------------------------------------- #
# Ranking
# --------------------------------------------------------------------------- #

def test_definition_outranks_an_equal_number_of_mentions(tmp_path) -> None:
    files = dict(FILLER, **{
        "src/dates.py": "import os\n\ndef parse_date(s):\n    return parse_date(s) or parse_date(s)\n",
        "src/views.py": "import os\n\nx = parse_date(a)\ny = parse_date(b)\nz = parse_date(c)\n",
    })
    out = rank(tmp_path, files, ["parse_date"])
    assert [s.rel for s in out[:2]] == ["src/dates.py", "src/views.py"]
    assert out[0].score > out[1].score
    assert any(sig.text().startswith("defines parse_date") for sig in out[0].signals)


def test_path_match_outranks_an_equal_content_match(tmp_path) -> None:
    files = dict(FILLER, **{
        "src/tokens.ts": "export const x = token;\n",
        "src/session.ts": "export const x = token;\n",
    })
    out = by_rel(rank(tmp_path, files, ["token"]))
    assert out["src/tokens.ts"].score > out["src/session.ts"].score
    assert any(sig.text().startswith("path") for sig in out["src/tokens.ts"].signals)


def test_file_covering_more_keywords_ranks_higher(tmp_path) -> None:
    files = dict(FILLER, **{
        "src/auth.py": "token = 1\nexpiry = 2\n",
        "src/user.py": "token = 1\n",
    })
    out = by_rel(rank(tmp_path, files, ["token", "expiry"]))
    assert out["src/auth.py"].score > out["src/user.py"].score


def test_files_matching_nothing_are_not_scored(tmp_path) -> None:
    out = rank(tmp_path, dict(FILLER, **{"src/auth.py": "token\n"}), ["token"])
    assert [s.rel for s in out] == ["src/auth.py"]


def test_scores_are_in_range_and_reasons_named(tmp_path) -> None:
    files = dict(FILLER, **{
        "src/auth.py": "def check_token(t):\n    return token_expiry(t)\n",
        "src/tokens.py": "token = 1\n",
        "tests/test_tokens.py": "token = 1\n",
    })
    for s in rank(tmp_path, files, ["token", "expiry"]):
        assert 0.0 < s.score <= MAX_RELEVANCE
        assert s.signals
        assert s.matched_keywords


def test_score_matches_sorted_by_score_then_path_and_deterministic(tmp_path) -> None:
    kws = keywords_from_list(["token", "expiry"])
    matches = [
        fm("src/b.py", (1, 1)), fm("src/a.py", (1, 1)), fm("src/c.py", (3, 1)),
        fm("src/e.py", (1, 0)), fm("src/d.py", (1, 0)),
    ]
    corpus = corpus_stats(matches, 20, 100.0, len(kws))
    first = score_matches(matches, kws, corpus)
    keys = [(-s.score, s.rel) for s in first]
    assert keys == sorted(keys)
    assert [s.rel for s in first] == ["src/c.py", "src/a.py", "src/b.py", "src/d.py", "src/e.py"]
    for perm in itertools.permutations(matches):
        assert score_matches(list(perm), kws, corpus) == first


def test_no_matches_scores_nothing() -> None:
    kws = keywords_from_list(["token"])
    assert score_matches([], kws, corpus_stats([], 5, 100.0, 1)) == []


@pytest.mark.parametrize("rel,role", [
    ("pkg/reader_test.go", "test"), ("src/test/java/com/x/FooTest.java", "test"), ("tokio/tests/io.rs", "test"),
    ("src/__tests__/a.js", "test"), ("src/a.spec.ts", "test"), ("src/a.test.js", "test"),
    ("internal/testdata/case.json", "test"), ("benches/bench.rs", "example"), ("third_party/x/y.c", "vendored"),
    ("NEWS", "docs"), ("ChangeLog", "docs"), ("release-notes/VERSION-2.x", "docs"), ("programs/zstd.1", "docs"),
    ("Makefile", "build"), ("tests/Makefile", "test"), ("CMakeLists.txt", "build"), ("karma.conf.js", "build"),
    ("contrib/fix.patch", "generated"), ("src/news.py", "source"), ("lib/history.js", "source"),
    ("contrib/linux-kernel/lib/decompress.c", "contrib"), ("django/contrib/admin/options.py", "source"),
    ("caddytest/integration/caddyfile_adapt/proxy.caddyfiletest", "test"), ("fuzzer/timeout.test", "test"),
    ("src/latest.py", "source"), ("src/pytest/__init__.py", "source"),
    ("js_tests/admin/core.test.js", "test"), ("js_tests/qunit/qunit.js", "test"),
    ("tests/installation_tests/find/main.cpp", "test"), ("src/unit_test/a.go", "test"),
    ("lib/contest/a.py", "source"), ("src/my_test_helpers/a.py", "source"),
])
def test_roles_per_ecosystem(rel, role) -> None:
    assert file_role(rel)[0] == role


def test_a_quoted_locale_code_ranks_its_file_first(tmp_path) -> None:
    from agentic_search_skill.query import extract_keywords
    files = {f"src/locale/{code}.js": f"// {name} [{code}]\nconst locale = {{ name: '{code}' }}\nexport default locale\n"
             for code, name in (("ku", "Kurdish"), ("br", "Breton"), ("ar", "Arabic"), ("de", "German"))}
    files.update(FILLER)
    task = "Locale is missing meridiem\n\nThe `ku` locale does not define a meridiem function, so the library falls back."
    scored, _, _ = rank_documents(build(tmp_path, files), extract_keywords(task), task_words(task))
    assert scored[0].rel == "src/locale/ku.js"


def test_a_c_header_follows_its_implementation(tmp_path) -> None:
    files = {
        "lib/lazy.c": "#include \"lazy.h\"\nint row_hash(int hash_log) {\n  return hash_log * 2; /* row hash */\n}\n",
        "lib/lazy.h": "int row_hash(int);\n",
        "lib/fast.c": "int fast(int x) { return x; } /* hash */\n",
        "lib/other.c": "int other(int y) { return y; } /* row */\n",
    }
    files.update(FILLER)
    scored = rank(tmp_path, files, ["row_hash", "hash_log", "row", "hash"])
    order = [s.rel for s in scored]
    assert order[:2] == ["lib/lazy.c", "lib/lazy.h"]
    assert "companion of lib/lazy.c" in "; ".join(sig.text() for sig in scored[1].signals)


def test_a_c_header_stronger_on_its_documentation_follows_its_implementation(tmp_path) -> None:
    # (trials 78 and 83: ini.h and yyjson.h led on the doc comments repeating the task's
    # words; the fixes were in the .c beside them)
    doc = ("/* Parse an INI file: each line is name=value; an inline comment starts with ';'.\n"
           "   A continuation line (leading whitespace) extends the value of the line before;\n"
           "   an inline comment on a continuation line is stripped as on the first line. */\n")
    files = {
        "ini.h": doc + "#define INI_MAX_LINE 200\nint ini_parse(const char* name);\n",
        "ini.c": "#include \"ini.h\"\nint ini_parse(const char* name) {\n"
                 "    /* continuation of the value */\n    strip_inline(line);\n    return 0;\n}\n",
        "other.c": "int other(int y) { return y; } /* value */\n",
    }
    files.update(FILLER)
    scored = rank(tmp_path, files, ["inline", "comment", "continuation", "value", "line"])
    order = [s.rel for s in scored]
    assert order[:2] == ["ini.c", "ini.h"]
    assert "companion of ini.c" in "; ".join(sig.text() for sig in scored[1].signals)
    # ... unless the header defines a name the task quotes that the implementation does not
    scored = rank(tmp_path / "b", files, ["INI_MAX_LINE", "inline", "comment", "continuation", "value", "line"])
    assert [s.rel for s in scored][:2] == ["ini.h", "ini.c"]


def test_a_header_only_librarys_driver_or_inline_part_leads_nothing(tmp_path) -> None:
    # (an adversarial check: a header-only library's same-stem driver, ``#define
    # X_IMPLEMENTATION`` and ``#include``, took the lead at 0.98 on three hits)
    header = ("/* json: parse a string of JSON into values. Strings, numbers, arrays. */\n"
              "static int json_parse_string(const char *s) { /* string value parse */ return 0; }\n"
              "static int json_parse_number(const char *s) { /* number value parse */ return 0; }\n")
    files = {"json.h": header, "json.c": "#define JSON_IMPLEMENTATION\n#include \"json.h\"\nint main() { return 0; } /* json */\n",
             "inc/dom-inl.h": header.replace("json", "dom"), "inc/dom.cc": "#include \"dom-inl.h\"\n/* dom */\n"}
    files.update(FILLER)
    scored = rank(tmp_path, files, ["parse", "string", "value", "number", "json", "dom"])
    order = [s.rel for s in scored]
    assert order.index("json.h") < order.index("json.c")
    assert order.index("inc/dom-inl.h") < order.index("inc/dom.cc")
    # ... nor does a template implementation's file (.tpp, .inl, .ipp) yield to its .cpp
    files = {"ini.tpp": header.replace("json", "ini"), "ini.cpp": "#include \"ini.tpp\"\n/* ini parse string */\n"
             "int ini_parse_string(const char *s) { /* ini */ return 0; }\n"}
    files.update(FILLER)
    order = [s.rel for s in rank(tmp_path / "b", files, ["parse", "string", "value", "number", "ini"])]
    assert order.index("ini.tpp") < order.index("ini.cpp")


@pytest.mark.parametrize("rel,key", [
    ("lib/fileio.c", "lib/fileio"), ("lib/fileio.h", "lib/fileio"), ("inc/dom-inl.h", "inc/dom"),
    ("src/a.cpp", "src/a"), ("src/a.py", ""), ("src/a.go", ""),
])
def test_companion_key(rel, key) -> None:
    from agentic_search_skill import lang
    assert lang.companion_key(rel) == key


def test_a_task_naming_a_human_language_asks_for_its_locale() -> None:
    assert "locale" in roles_requested(task_words("Spanish days and months should be lowercase"))
    assert "locale" not in roles_requested(task_words("The English docs say the value is cached"))


@pytest.mark.parametrize("rel,key", [
    ("docs/en/API-reference.md", "api-reference.md"), ("docs/ko/API-reference.md", "api-reference.md"),
    ("docs/readme_pt-BR.md", "readme.md"), ("README.zh-CN.md", "readme.md"), ("readme.md", "readme.md"),
    ("docs/ref/settings.txt", "settings.txt"),
])
def test_document_key(rel, key) -> None:
    from agentic_search_skill import lang
    assert lang.document_key(rel) == key


def test_translations_of_one_page_count_once(tmp_path) -> None:
    page = "# Parsing\nThe parser reads a date string in strict mode.\n"
    files = {f"docs/{code}/parsing.md": page for code in ("en", "ja", "ko", "zh")}
    files["docs/en/other.md"] = "# Other\nThe parser reads a date.\n"
    files.update(FILLER)
    scored = by_rel(rank(tmp_path, files, ["parser", "date", "string", "strict"]))
    copies = sorted(scored[f"docs/{c}/parsing.md"].raw for c in ("en", "ja", "ko", "zh"))
    assert copies[-1] > 0 and all(abs(c - copies[-1] / 2) < 1e-9 for c in copies[:-1])

def test_a_test_holding_every_word_of_a_long_issue_ranks_below_the_source(tmp_path) -> None:
    # The test holds all 20 words, the source 4 with as much evidence: coverage is
    # scaled by the role factor as evidence is.
    words = [f"alpha{i}" for i in range(20)]
    files = {
        "tests/test_engine.py": "def test_all():\n" + "".join(f"    check({w})\n" for w in words),
        "src/engine.py": "".join(f"x = [{w}]\n" for w in words[:4]),
    }
    files.update(FILLER)
    order = [s.rel for s in rank(tmp_path, files, words)]
    assert order.index("src/engine.py") < order.index("tests/test_engine.py")


def test_a_role_word_inside_a_hyphenated_name_asks_for_nothing() -> None:
    assert "docs" not in roles_requested(task_words("paste the github-readme-stats link as an image"))
    assert "docs" in roles_requested(task_words("the docs say the wrong flag"))


def test_the_readme_is_a_file_a_task_names_not_the_docs_role() -> None:
    # "readme" names README.md by its path; it does not lift the licence and the
    # contributing guide with it.
    assert "docs" not in roles_requested(task_words("the readme says the wrong flag"))


def test_go_module_files_are_build_files() -> None:
    assert file_role("go.mod")[0] == "build" and file_role("tools/go.sum")[0] == "build"


@pytest.mark.parametrize("rel", ["package.json", "tracing/Cargo.toml", "pyproject.toml", "setup.py",
                                 "setup.cfg", "tox.ini", "composer.json", "tsconfig.build.json"])
def test_package_manifests_are_build_files(rel) -> None:
    # They hold the project's name and version, which issues quote: not where fixes land.
    assert file_role(rel)[0] == "build"


@pytest.mark.parametrize("rel,codes", [
    ("src/locale/es-us.js", {"es"}), ("src/locale/hu.js", {"hu"}),
    ("django/conf/locale/pt_BR/formats.py", {"pt", "formats"}), ("po/de.po", {"de"}),
    ("src/format.js", set()),
])
def test_locale_codes(rel, codes) -> None:
    from agentic_search_skill import lang
    assert lang.locale_codes(rel) == codes


def test_the_locale_of_a_language_the_task_names_leads() -> None:
    # "Hungarian" names locale/hu.js by its code: it outranks source that merely holds
    # more of the task's words, and the other locales stay down-weighted.
    from agentic_search_skill.engine import rank_documents
    from agentic_search_skill.match import Document
    from agentic_search_skill.query import extract_keywords
    task = "Improve hungarian localization: past relative times (3 years ago) are not handled"
    files = {
        "src/locale/hu.js": b"// Hungarian [hu]\nconst locale = { name: 'hu', relativeTime: {} }\n",
        "src/locale/cs.js": b"const locale = { name: 'cs', relativeTime: { past: 'pred %s', y: 'rok', yy: 'years' } }\n",
        "test/locale/hu.test.js": b"import '../../src/locale/hu'\nit('hungarian past relative times', () => {})\n",
        "src/plugin/relativeTime/index.js": b"export default (o, c, d) => { // relative times: past, years ago\n"
                                            b"  const relative = (input, past) => years\n}\n",
    }
    docs = [Document(rel=r, data=b, low=b.lower(), size=len(b)) for r, b in files.items()]
    scored, _, _ = rank_documents(docs, extract_keywords(task), task_words(task))
    assert scored[0].rel == "src/locale/hu.js"
    from agentic_search_skill.score import reason_text
    assert "path names hu (locale)" in reason_text(scored[0].signals)
    assert [s.rel for s in scored].index("src/locale/cs.js") > 0
    test = next(s for s in scored if s.rel == "test/locale/hu.test.js")
    assert "(locale)" not in reason_text(test.signals)  # a test of the locale stays a test


def test_a_typescript_declaration_ranks_below_the_implementation_it_declares(tmp_path) -> None:
    # The declaration file counts less than code; the declaration of the module that
    # leads is lifted behind it (above the declaration of a module that holds a word).
    files = {
        "src/plugin/utc/index.js": "export default (option, Dayjs) => {\n  const utcOffset = (input) => input\n"
                                   "  Dayjs.prototype.utcOffset = utcOffset // offset\n}\n",
        "types/plugin/utc.d.ts": "declare module 'dayjs' {\n  interface Dayjs {\n    utcOffset(): number\n  }\n}\n",
        "types/plugin/other.d.ts": "declare module 'dayjs' {\n  interface Dayjs { offset(): number }\n}\n",
        "src/plugin/other/index.js": "export default (x) => x.offset\n",
    }
    files.update(FILLER)
    scored = rank(tmp_path, files, ["utcOffset", "offset"])
    order = [s.rel for s in scored]
    assert order[0] == "src/plugin/utc/index.js"
    assert order.index("types/plugin/utc.d.ts") < order.index("types/plugin/other.d.ts")
    lifted = by_rel(scored)["types/plugin/utc.d.ts"]
    assert "companion of src/plugin/utc/index.js" in "; ".join(sig.text() for sig in lifted.signals)


def test_a_flow_type_stub_ranks_below_the_code_it_declares(tmp_path) -> None:
    # Flow's stub declares the whole API in one file and implements none of it: the
    # module that implements the task's functions leads (trial 68's immer loop stopped
    # on src/types/index.js.flow, "defines produceWithPatches, enablePatches").
    files = {
        "src/types/index.js.flow": "declare export function produceWithPatches(base: any): [any, Patch[]]\n"
                                   "declare export function enablePatches(): void\n"
                                   "declare export var nothing: typeof undefined\n",
        "src/core/immerClass.js": "export class Immer {\n  produceWithPatches = (base) => {\n"
                                  "    return [base, []]\n  }\n}\n",
        "src/plugins/patches.js": "export function enablePatches() {\n  loadPlugin('Patches', {})\n}\n",
    }
    files.update(FILLER)
    order = [s.rel for s in rank(tmp_path, files, ["produceWithPatches", "enablePatches"])]
    assert order.index("src/types/index.js.flow") > order.index("src/core/immerClass.js")
    assert order.index("src/types/index.js.flow") > order.index("src/plugins/patches.js")


def test_a_task_about_typescript_typings_keeps_declarations_whole() -> None:
    assert file_role("types/index.d.ts")[0] == "declarations"
    assert file_role("types/index.d.ts")[1] < 1.0
    assert "declarations" in roles_requested(task_words("The TypeScript typings of format() are wrong"))
    assert file_role("test/index.d.ts")[0] == "test"


@pytest.mark.parametrize("rel,name", [
    ("types/plugin/utc.d.ts", "utc"), ("src/plugin/utc/index.js", "utc"), ("lib/utc.ts", "utc"),
    ("index.d.ts", ""), ("src/index.js", "src"), ("src/utc.py", ""),
])
def test_module_name(rel, name) -> None:
    from agentic_search_skill import lang
    assert lang.module_name(rel) == name


def test_a_root_contrib_copy_ranks_below_the_product(tmp_path) -> None:
    # A port kept under the root's contrib/ holds the same words as the library: the
    # library's own file leads; a task about contrib lifts the down-weighting.
    body = "size_t frame_header_size(int format) {\n  return format ? 5 : 6; /* frame header */\n}\n"
    files = {"lib/decompress.c": body, "contrib/kernel/decompress.c": body + "/* frame */\n"}
    files.update(FILLER)
    order = [s.rel for s in rank(tmp_path, files, ["frame_header_size", "frame", "header"])]
    assert order.index("lib/decompress.c") < order.index("contrib/kernel/decompress.c")
    assert "contrib" in roles_requested(task_words("The contrib port fails to build"))


def test_a_root_scripts_directory_holding_the_only_code_is_the_product(tmp_path) -> None:
    # A Claude skill keeps its code in scripts/: there it is source, not tooling.
    skill = rank(tmp_path / "skill", {
        "scripts/hints.py": "def compute_hints(results):\n    return hints\n",
        "README.md": "hints are computed by compute_hints\n",
        "references/schema.json": '{"title": "hints output", "hints": "computed"}\n',
    }, ["hints", "compute_hints"])
    assert skill[0].rel == "scripts/hints.py" and skill[0].role == "source"
    # Beside the product's own code elsewhere, a root scripts/ stays tooling.
    project = rank(tmp_path / "project", {
        "scripts/release_hints.py": "def compute_hints():\n    pass\n",
        "pkg/hints.py": "def compute_hints(results):\n    return results\n",
    }, ["hints", "compute_hints"])
    assert {s.rel: s.role for s in project}["scripts/release_hints.py"] == "build"


def test_a_packages_errors_module_counts_less_unless_it_defines_a_quoted_name(tmp_path):
    """errors.go declares every error of its package: an issue reporting an error holds
    its words, yet the fix is where the error is raised. A task quoting an error type
    the module defines is about that type: no down-weighting then."""
    files = {
        "pkg/errors.go": "package pkg\n\nvar ErrTimeout = errors.New(\"request timeout exceeded\")\n"
                         "type TimeoutError struct{}\n",
        "pkg/client.go": "package pkg\n\nfunc (c *Client) Do() error {\n\treturn ErrTimeout // timeout\n}\n",
        **FILLER,
    }
    plain = by_rel(rank(tmp_path / "a", files, ["timeout", "exceeded", "request"]))
    assert plain["pkg/errors.go"].role == "errors"
    assert "errors file x0.8" in reason_text(plain["pkg/errors.go"].signals)
    assert plain["pkg/client.go"].role == "source"
    quoted = by_rel(rank(tmp_path / "b", files, ["TimeoutError", "timeout"]))
    assert quoted["pkg/errors.go"].role == "source"
    assert quoted["pkg/errors.go"].score >= quoted["pkg/client.go"].score


def test_a_role_word_in_pasted_code_asks_for_nothing() -> None:
    # ``type Test struct`` or ``import pytest`` in a pasted snippet names code, not a role;
    # the same word in the prose still asks for it.
    pasted = "mapping rejects uuid.UUID\n\n```go\ntype Test struct {\n\tUid uuid.UUID\n}\n```\n"
    assert "test" not in roles_requested(task_words(pasted))
    assert "test" not in roles_requested(task_words("crash\n\n    >>> import pytest\n    >>> pytest.main()\n"))
    assert "test" in roles_requested(task_words(pasted + "\nThe tests do not cover it.\n"))


def test_a_convention_the_tasks_code_defines_is_no_evidence_of_which_definer(tmp_path) -> None:
    # Three printers define _print_Float; the task proposes adding one to the printer it
    # names. Defining the convention must not put the other printers first.
    from agentic_search_skill.query import extract_keywords
    files = {f"printing/{n}.py": f"class {n.title()}Printer(Printer):\n    def _print_Float(self, expr):\n"
                                 f"        return str(expr)\n\n    def _print_Derivative(self, expr):\n        return ''\n"
             for n in ("str", "latex", "pretty")}
    files["printing/mathematica.py"] = "class MCodePrinter(CodePrinter):\n    def _print_Mul(self, expr):\n        return ''\n"
    files.update(FILLER)
    task = ("Mathematica printer drops floats\n\nThe printer is wrong. Add this to MCodePrinter:\n\n"
            "    def _print_Float(self, expr):\n        return str(expr)\n\n"
            "    def _print_Derivative(self, expr):\n        return 'D'\n")
    scored, _, _ = rank_documents(build(tmp_path, files), extract_keywords(task), task_words(task))
    assert scored[0].rel == "printing/mathematica.py"
    assert "defines _print_Float" not in reason_text(by_rel(scored)["printing/str.py"].signals)


def test_a_name_the_task_copies_from_one_file_keeps_its_definition_weight(tmp_path) -> None:
    from agentic_search_skill.query import extract_keywords
    files = {"forms/boundfield.py": "class BoundWidget:\n    def id_for_label(self):\n        return 'id'\n",
             "forms/widgets.py": "class Widget:\n    def render(self):\n        return 'BoundWidget id'\n"}
    files.update(FILLER)
    task = "Wrong id for label\n\nThe label id is wrong here:\n\n    class BoundWidget:\n        def id_for_label(self):\n"
    scored, _, _ = rank_documents(build(tmp_path, files), extract_keywords(task), task_words(task))
    assert scored[0].rel == "forms/boundfield.py"
    assert "defines BoundWidget" in reason_text(scored[0].signals)


def test_the_keys_of_a_pasted_settings_file_the_prose_never_names_are_no_evidence_of_their_declaration(tmp_path) -> None:
    # The reporter pasted the settings they ran with; the report is about comments. The
    # module declaring those options must not lead on their definitions; a key the prose
    # names is the report's subject and keeps them.
    from agentic_search_skill.query import extract_keywords
    files = {"src/config/mod.rs": "pub struct Config {\n    error_on_line_overflow: bool,\n    wrap_comments: bool,\n}\n"
                                  "fn error_on_line_overflow() -> bool { false }\nfn wrap_comments() -> bool { false }\n",
             "src/comment.rs": "// a doc comment between generic params is dropped here\nfn rewrite_comment() {}\n"}
    files.update(FILLER)
    toml = "```toml\nerror_on_line_overflow = true\nwrap_comments = true\n```\n"
    task = "Removes a comment between generic params\n\nWith this config:\n\n" + toml + "a doc comment is dropped.\n"
    kws = {k.text: k for k in extract_keywords(task)}
    assert kws["error_on_line_overflow"].setting and kws["wrap_comments"].setting
    again = type(kws["wrap_comments"]).from_json(kws["wrap_comments"].to_json())
    assert again is not None and again.setting
    scored, _, _ = rank_documents(build(tmp_path, files), list(kws.values()), task_words(task))
    reasons = reason_text(by_rel(scored)["src/config/mod.rs"].signals)
    assert "defines error_on_line_overflow" not in reasons and "defines wrap_comments" not in reasons
    named = task + "The same with `wrap_comments` off.\n"
    kws = {k.text: k for k in extract_keywords(named)}
    assert not kws["wrap_comments"].setting and kws["error_on_line_overflow"].setting
    scored, _, _ = rank_documents(build(tmp_path / "b", files), list(kws.values()), task_words(named))
    assert "defines wrap_comments" in reason_text(by_rel(scored)["src/config/mod.rs"].signals)
