"""Tests for agentic_search_skill.query: task text and keyword lists -> keywords.

Pins what a user relies on: identifier-aware needles ("rate limit" finds
``rateLimit``), keywords found by file path, what extract_keywords pulls out of
free text (identifiers, paths, module names, traceback frames), stop words,
NFKC normalisation, literal (never regex) matching, determinism.  Weights and
ordering within a kind are tunables and are not pinned.

Matching is checked end to end: a file written in tmp_path, read with
read_document, counted with match_document.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import List, Tuple

import pytest

from agentic_search_skill.match import compile_keywords, match_document, read_document
from agentic_search_skill.query import (
    CODE_ONLY_FACTOR, TITLE_BOOST, Keyword, extract_keywords, installed_tail, keywords_from_list, make_keyword,
    merge_keywords, normalize, prose_of, split_identifier, strip_urls,
)


def write(tmp_path, rel: str, text: str) -> str:
    full = os.path.join(str(tmp_path), *rel.split("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as fh:
        fh.write(text)
    return full


def count_in_file(tmp_path, rel: str, text: str, keyword: str, kind: str = "given") -> Tuple[int, float]:
    """(content count, path match) of one keyword in one real file."""
    doc = read_document(rel, write(tmp_path, rel, text))
    assert doc is not None
    kw = make_keyword(keyword, kind)
    assert kw is not None
    m = match_document(doc, compile_keywords([kw]))
    return m.counts[0], m.in_path[0]


def texts(keywords: List[Keyword], kind: str = "") -> List[str]:
    return [k.text for k in keywords if not kind or k.kind == kind]


# --------------------------------------------------------------------------- #
# Identifier-aware needles
# --------------------------------------------------------------------------- #

RATE_LIMIT_SPELLINGS = [
    ("snake_case", "RATE = rate_limit(5)\n"),
    ("camelCase", "const x = rateLimit(5);\n"),
    ("CamelCase prefix", "class RateLimiter:\n    pass\n"),
    ("kebab-case", "middleware: rate-limit\n"),
    ("SCREAMING_SNAKE", "RATE_LIMIT = 5\n"),
    ("plain words", "# apply a rate limit here\n"),
    ("joined", "ratelimit = 5\n"),
]


@pytest.mark.parametrize("name,content", RATE_LIMIT_SPELLINGS, ids=[c[0] for c in RATE_LIMIT_SPELLINGS])
def test_two_word_keyword_matches_every_identifier_spelling(tmp_path, name, content) -> None:
    count, _ = count_in_file(tmp_path, "src/app.py", content, "rate limit")
    assert count >= 1


def test_two_word_keyword_does_not_match_the_words_apart(tmp_path) -> None:
    count, _ = count_in_file(tmp_path, "src/app.py", "rate = 1\nlimit = 2\n", "rate limit")
    assert count == 0


@pytest.mark.parametrize("keyword", ["rateLimit", "rate_limit", "RateLimit", "rate-limit"])
def test_identifier_keyword_matches_other_spellings_of_itself(tmp_path, keyword) -> None:
    content = "a = rate_limit\nb = rateLimit\nc = RATE-LIMIT\n"
    count, _ = count_in_file(tmp_path, "src/app.ts", content, keyword)
    assert count >= 2  # at least the snake and camel spellings


def test_camelcase_keyword_finds_snake_case_name(tmp_path) -> None:
    count, _ = count_in_file(tmp_path, "storage.py", "class file_system_storage:\n", "FileSystemStorage")
    assert count == 1


PATH_CASES = [
    # keyword, path, expect a path match
    ("token", "src/tokens.ts", True),
    ("token", "src/token.ts", True),
    ("token", "src/token/index.ts", True),
    ("rate limit", "src/rate_limiter.py", True),
    ("rate limit", "src/RateLimit.java", True),
    ("token", "src/session.ts", False),
]


@pytest.mark.parametrize("keyword,rel,expected", PATH_CASES, ids=[f"{c[0]}@{c[1]}" for c in PATH_CASES])
def test_keyword_found_in_the_file_path(tmp_path, keyword, rel, expected) -> None:
    count, in_path = count_in_file(tmp_path, rel, "nothing to see\n", keyword)
    assert count == 0
    assert (in_path > 0) is expected


def test_keyword_naming_the_file_stem_beats_one_inside_the_name(tmp_path) -> None:
    _, exact = count_in_file(tmp_path, "src/token.ts", "x\n", "token")
    _, inside = count_in_file(tmp_path, "src/tokens_cache.ts", "x\n", "token")
    _, directory = count_in_file(tmp_path, "src/token/store.ts", "x\n", "token")
    assert exact > inside > directory > 0


# --------------------------------------------------------------------------- #
# Literal matching: never a regular expression
# --------------------------------------------------------------------------- #

LITERAL_CASES = [
    # keyword, content, expected count
    ("a.*b", "x = 'a.*b'\ny = 'axxb'\n", 1),
    ("(", "f(x)\n", 1),
    ("[a-z]+", "pattern = '[a-z]+'\nabc\n", 1),
    ("a|b", "a b a|b\n", 1),
    ("\\d", "r'\\d' 123\n", 1),
]


@pytest.mark.parametrize("keyword,content,expected", LITERAL_CASES, ids=[c[0] for c in LITERAL_CASES])
def test_regex_looking_keyword_is_matched_literally(tmp_path, keyword, content, expected) -> None:
    count, _ = count_in_file(tmp_path, "src/a.py", content, keyword)
    assert count == expected


def test_regex_looking_keyword_does_not_raise_in_extract() -> None:
    # Must not raise (re.error) and must not invent keywords out of punctuation.
    assert extract_keywords("a.*b ( [ ) \\") == []


# --------------------------------------------------------------------------- #
# split_identifier
# --------------------------------------------------------------------------- #

SPLIT_CASES = [
    ("RateLimiter", ["rate", "limiter"]),
    ("rateLimit", ["rate", "limit"]),
    ("rate_limit", ["rate", "limit"]),
    ("RATE_LIMIT", ["rate", "limit"]),
    ("HTTPServer", ["http", "server"]),
    ("getHTTPResponseCode", ["get", "http", "response", "code"]),
    ("file-upload", ["file", "upload"]),
    ("__init__", ["init"]),
    ("jwt", ["jwt"]),
    ("parse_date2", ["parse", "date2"]),
]


@pytest.mark.parametrize("name,parts", SPLIT_CASES, ids=[c[0] for c in SPLIT_CASES])
def test_split_identifier(name, parts) -> None:
    assert split_identifier(name) == parts


@pytest.mark.parametrize("name,parts", [("XML2Parser", ["xml2", "parser"]),
                                        ("parseXML2Json", ["parse", "xml2", "json"])])
def test_split_identifier_keeps_acronym_with_digit_whole(name, parts) -> None:
    assert split_identifier(name) == parts


def test_acronym_with_digit_keyword_finds_snake_case_spelling(tmp_path) -> None:
    count, _ = count_in_file(tmp_path, "src/a.py", "def xml2_parser():\n", "XML2Parser")
    assert count == 1


# --------------------------------------------------------------------------- #
# extract_keywords
# --------------------------------------------------------------------------- #

EXTRACT_CASES = [
    # name, task, (text, kind) pairs that must be among the keywords
    ("backticked name", "Crash in `parse_date` on empty input", [("parse_date", "identifier")]),
    ("backticked call", "calling `refresh()` twice", [("refresh", "identifier")]),
    ("CamelCase", "The TokenStore forgets entries", [("TokenStore", "identifier")]),
    ("acronym CamelCase", "HTTPServer hangs", [("HTTPServer", "identifier")]),
    ("snake_case", "user_id is lost after login", [("user_id", "identifier")]),
    ("ALL_CAPS", "MAX_RETRIES is ignored", [("MAX_RETRIES", "identifier")]),
    ("called name", "it fails when fetch_user(42) runs", [("fetch_user", "identifier")]),
    ("dotted module", "error in django.db.models when saving", [("django/db/models", "path")]),
    ("quoted file path", 'see "src/auth/login.py" for the check', [("src/auth/login.py", "path")]),
    ("bare file path", "It broke in utils/dates.py.", [("utils/dates.py", "path")]),
    ("error class", "Error: KeyError: 'user_id'", [("KeyError", "identifier"), ("user_id", "identifier")]),
    ("plain words", "session expiry too short", [("session", "word"), ("expiry", "word")]),
    ("error code", "Check E108 does not cover some cases", [("E108", "identifier")]),
    ("name ending in digits", "raising Http404 in a converter", [("Http404", "identifier")]),
    ("upper-case constant", "When DEBUG is True the page is plain", [("DEBUG", "identifier")]),
    ("header name", "Empty If-Modified-Since header raises", [("If-Modified-Since", "identifier")]),
    ("long option", "fd --full-path fails", [("full-path", "identifier")]),
]


@pytest.mark.parametrize("task,word", [
    ("the 404 page (including a helpful message)", "page"),         # a parenthesis, not a call
    ("psql (10.21)\nType help for help.", "psql"),                    # program output
    ("got `RecursionError: maximum recursion depth exceeded`", "maximum"),  # a backticked sentence
    ("Python 3 and x10 (a symbol)", "x10"),                          # too short to be a code
    ("mode 0o644 by default", "o644"),                               # the tail of a number
    ("see `E108: field missing here`", "field"),
    ("the URL and the JSON body of the HTTP reply", "URL"),          # acronyms of prose
    ("the URL and the JSON body of the HTTP reply", "JSON"),
    ("a built-in read-only field", "built-in"),                    # prose compounds
    ("a well-known --- rule", "well-known"),
    ("run it with --verbose", "verbose"),                            # one word: the word already
    ("```\n\u2502 ID \u2502 DIALER \u2502 STATE \u2502\n```", "DIALER"),   # a drawn table's column header
])
def test_prose_is_not_taken_for_code_names(task, word) -> None:
    got = [(k.text, k.kind) for k in extract_keywords(task)]
    assert (word, "identifier") not in got, got


def test_backticked_sentence_still_gives_its_code_names() -> None:
    got = [(k.text, k.kind) for k in extract_keywords("got `RecursionError: maximum recursion depth` in `is_zero`")]
    assert ("RecursionError", "identifier") in got and ("is_zero", "identifier") in got
    got = [(k.text, k.kind) for k in extract_keywords("see `E108: field missing here`")]
    assert ("E108", "identifier") in got


@pytest.mark.parametrize("name,task,expected", EXTRACT_CASES, ids=[c[0] for c in EXTRACT_CASES])
def test_extract_keywords_finds(name, task, expected) -> None:
    got = [(k.text, k.kind) for k in extract_keywords(task)]
    for pair in expected:
        assert pair in got, f"{pair} not in {got}"


def test_traceback_frame_gives_the_path_tail_and_the_function() -> None:
    task = (
        "Traceback (most recent call last):\n"
        '  File "/x/y/site-packages/pkg/mod.py", line 3, in func\n'
        "    return helper()\n"
        "ValueError: bad value\n"
    )
    kws = extract_keywords(task)
    paths = texts(kws, "path")
    assert any(p.endswith("pkg/mod.py") for p in paths), paths
    assert all(not p.startswith("/") and "/x/y/" not in "/" + p for p in paths), paths
    assert "func" in texts(kws, "identifier")


def test_traceback_module_frame_is_not_a_function() -> None:
    task = '  File "/app/src/main.py", line 1, in <module>\n'
    kws = extract_keywords(task)
    assert "src/main.py" in texts(kws, "path") or "app/src/main.py" in texts(kws, "path")
    assert "<module>" not in texts(kws) and "module" not in texts(kws, "identifier")


def test_traceback_frame_from_installed_package_names_the_repo_file(tmp_path) -> None:
    task = '  File "/x/y/site-packages/pkg/mod.py", line 3, in func\n'
    path_kws = [k for k in extract_keywords(task) if k.kind == "path"]
    doc = read_document("pkg/mod.py", write(tmp_path, "pkg/mod.py", "def func():\n    pass\n"))
    m = match_document(doc, compile_keywords(path_kws))
    assert any(p > 0 for p in m.in_path)


STOP_WORD_CASES = [
    "Fix the bug",
    "add the fix",
    "the bug: fix it, add it",
]


@pytest.mark.parametrize("task", STOP_WORD_CASES)
def test_stop_words_alone_give_no_keywords(task) -> None:
    assert extract_keywords(task) == []


def test_stop_words_dropped_content_words_kept() -> None:
    got = texts(extract_keywords("Fix the bug and add token refresh"))
    assert {"token", "refresh"} <= set(got)
    assert not {"the", "fix", "bug", "add", "and"} & set(got)


def test_full_width_text_is_nfkc_normalized() -> None:
    got = texts(extract_keywords("ＪＷＴ expiry is wrong"))
    assert "jwt" in [normalize(t) for t in got]
    assert all("Ｊ" not in t for t in got)


def test_full_width_keyword_matches_ascii_content(tmp_path) -> None:
    # (A word of three letters counts where a word starts: ``verify_jwt``, not ``verifyJwt``.)
    count, _ = count_in_file(tmp_path, "src/jwt_utils.ts", "export function verify_jwt() {}\n", "ＪＷＴ")
    assert count == 1


def test_normalize_is_nfkc_and_casefold() -> None:
    assert normalize("ＪＷＴ") == normalize("jwt") == normalize("JWT") == "jwt"


NOT_MODULE_CASES = [
    ("attribute of self", "self.session is None"),
    ("stdlib call", "call os.path.join here"),
]


@pytest.mark.parametrize("name,task", NOT_MODULE_CASES, ids=[c[0] for c in NOT_MODULE_CASES])
def test_attribute_access_is_not_a_module_path(name, task) -> None:
    assert texts(extract_keywords(task), "path") == []


def test_latin_abbreviations_are_not_module_paths() -> None:
    assert texts(extract_keywords("Use a list, e.g. a tuple, i.e. anything"), "path") == []


def test_extract_keywords_is_deterministic() -> None:
    task = ("`TokenStore.refresh` raises KeyError in src/auth/tokens.py when the JWT expires; "
            "see django.contrib.auth and user_id handling, MAX_AGE too")
    first = [k.to_json() for k in extract_keywords(task)]
    for _ in range(3):
        assert [k.to_json() for k in extract_keywords(task)] == first


def test_extract_keywords_has_no_duplicates() -> None:
    kws = extract_keywords("token Token TOKEN `token` tokens token")
    keys = [normalize(k.text) for k in kws]
    assert len(keys) == len(set(keys))


def test_extract_keywords_output_is_bounded() -> None:
    task = " ".join(f"name_{i}" for i in range(500)) + " " + " ".join(f"w{chr(97 + i % 26)}ord{i}" for i in range(500))
    assert len(extract_keywords(task)) <= 100


# --------------------------------------------------------------------------- #
# Keyword lists
# --------------------------------------------------------------------------- #

def test_keywords_from_list_dedupes_by_normalized_text_keeping_order() -> None:
    kws = keywords_from_list(["JWT", "refresh", "jwt", "ＪＷＴ", "  ", "session"])
    assert texts(kws) == ["JWT", "refresh", "session"]
    assert all(k.kind == "given" for k in kws)


def test_make_keyword_of_blank_text_is_none() -> None:
    assert make_keyword("   ", "given") is None


def test_merge_keywords_first_occurrence_wins() -> None:
    a = keywords_from_list(["token", "auth"])
    b = keywords_from_list(["TOKEN", "session"], kind="learned")
    merged = merge_keywords(a, b)
    assert [(k.text, k.kind) for k in merged] == [("token", "given"), ("auth", "given"), ("session", "learned")]


def test_two_spellings_of_one_name_are_one_keyword() -> None:
    # A trial's agent gave --keywords limit_request_line LimitRequestLine: one search,
    # which credited the exception class holding the name twice for defining it.
    merged = merge_keywords(keywords_from_list(["limit_request_line", "LimitRequestLine", "limit"]))
    assert [k.text for k in merged] == ["limit_request_line", "limit"]
    # Other kinds stay apart: a plain word searched by its stem (``users`` -> ``user``)
    # never stands in for a name the caller or the task quotes, whatever comes first.
    word = make_keyword("users", "word", stemmed=True)
    name = make_keyword("user", "identifier")
    assert set(word.needles) == set(name.needles)
    assert [k.text for k in merge_keywords([word], [name])] == ["users", "user"]
    given = keywords_from_list(["user"])
    assert [k.text for k in merge_keywords([word], given)] == ["users", "user"]
    # The caller's spelling of a name the task quotes is that name once, at the heavier
    # weight of the two (an adversarial check's exception class was credited twice).
    quoted = replace(make_keyword("LimitRequestLine", "identifier"), weight=2.0)
    merged = merge_keywords(keywords_from_list(["limit_request_line"]), [quoted])
    assert [(k.text, k.kind, k.weight) for k in merged] == [("limit_request_line", "given", 2.0)]


# --- weights: the title, and names that only appear in pasted code ----------------------

ISSUE = """Saving a model with parse_header fails
The FormParser calls parse_header on every request.

```python
class MyView(View):
    def post(self, request):
        return handle_upload(request)
```

    >>> run_check(ArticleForm)
Traceback (most recent call last):
  File "app/forms.py", line 9, in clean_title
ValueError: bad header
"""


def _weights(task: str) -> dict:
    return {k.text: k.weight for k in extract_keywords(task)}


def test_title_names_weigh_more():
    w = _weights(ISSUE)
    assert w["parse_header"] == TITLE_BOOST * 1.0


def test_names_only_in_pasted_code_weigh_less_than_names_the_prose_uses():
    w = _weights(ISSUE)
    assert w["FormParser"] == 1.0                       # prose
    assert w["MyView"] == CODE_ONLY_FACTOR              # fenced block only
    assert w["handle_upload"] == CODE_ONLY_FACTOR
    assert w["ArticleForm"] == CODE_ONLY_FACTOR         # REPL line only
    assert w["clean_title"] == 1.0                      # a traceback frame keeps its weight


def test_modules_imported_only_in_pasted_code_weigh_less_than_modules_the_prose_names():
    task = ("Saving fails in django.db.models.query for this model.\n"
            "```\nfrom django.utils.translation import gettext\n```\n")
    w = _weights(task)
    assert w["django/db/models/query"] == 1.0
    assert w["django/utils/translation"] == CODE_ONLY_FACTOR


def test_prose_of_drops_fences_code_lines_and_sessions():
    prose = prose_of(ISSUE)
    assert "FormParser calls parse_header" in prose
    for code in ("class MyView", "handle_upload", ">>> run_check", 'File "app/forms.py"'):
        assert code not in prose
    assert "ValueError: bad header" in prose   # the error line is what the user saw


def test_short_name_imported_in_pasted_code_is_a_keyword():
    # "Q" alone is too ambiguous to pick out of prose; imported from a module, it is a
    # name the codebase defines.
    task = ("Combining a Q object fails\nUsing a Q object with | breaks:\n"
            ">>> from app.db.models import Q, F as G\n>>> Q(x__in={}.keys())\n")
    names = {k.text: k for k in extract_keywords(task)}
    assert names["Q"].kind == "identifier"
    assert "F" in names
    assert not {"as", "G"} & set(names)                     # "F as G" imports F
    assert names["Q"].weight == TITLE_BOOST * 1.0          # "Q" is a whole name of the title
    assert not any(k.text == "Q" for k in extract_keywords("Combining a Q object fails"))


def test_import_aliases_and_bare_underscores_are_not_keywords():
    names = {k.text for k in extract_keywords(">>> from app.i18n import gettext_lazy as _\n>>> from app import x as ab\n")}
    assert "gettext_lazy" in names
    assert not {"_", "as", "ab"} & names
    assert "x" in names


def test_short_name_gets_the_title_boost_only_as_a_whole_name_of_the_title():
    task = "Quoting breaks the query\n>>> from app.text import q\n>>> q('a')\n"
    w = _weights(task)
    assert w["q"] == CODE_ONLY_FACTOR    # "q" is inside title words, not one of them


def test_short_imported_name_is_found_where_it_is_defined(tmp_path):
    kw = next(k for k in extract_keywords(">>> from app.models import Q\n>>> Q(a=1)\n") if k.text == "Q")
    doc = read_document("app/query_utils.py", write(tmp_path, "app/query_utils.py",
                                                    "import tree\n\nclass Q(tree.Node):\n    pass\n"))
    assert match_document(doc, compile_keywords([kw])).defines == (1.0,)



def test_code_vocabulary_is_a_word_of_prose() -> None:
    # "html escaping is broken" is about html; print( in pasted code is no quoted name.
    assert "html" in [k.text for k in extract_keywords("html escaping is broken in templates")]
    assert "print" not in [k.text for k in extract_keywords("x\n```\nprint(value)\n```") if k.kind == "identifier"]


def test_stop_words_come_from_the_data_file_without_duplicates() -> None:
    import json
    path = os.path.join(os.path.dirname(__file__), os.pardir, "scripts", "agentic_search_skill", "data", "stopwords.json")
    with open(path, encoding="utf-8") as fh:
        groups = json.load(fh)["groups"]
    words = [w for g in groups for w in g["words"].split()]
    assert all(g["why"] for g in groups)
    assert len(words) == len(set(words))
    assert not {"html", "http"} & set(words)
    assert sum(g.get("placeholders") is True for g in groups) == 1  # (query._PLACEHOLDERS)


# --------------------------------------------------------------------------- #
# URLs, issue templates, environment reports
# --------------------------------------------------------------------------- #

def _texts(task: str) -> List[str]:
    return [k.text for k in extract_keywords(task)]


def _words(task: str) -> set:
    """The task's keywords, normalized."""
    return {normalize(k.text) for k in extract_keywords(task)}


@pytest.mark.parametrize("url,path", [
    ("https://github.com/tokio-rs/tokio/blob/master/tokio/src/sync/semaphore.rs#L377-L382", "tokio/src/sync/semaphore.rs"),
    ("https://github.com/iamkun/dayjs/tree/dev/src/plugin/utc", "src/plugin/utc"),
    ("https://gitlab.com/group/sub/proj/-/blob/v1.2/lib/parser.c#L10", "lib/parser.c"),
    ("https://raw.githubusercontent.com/o/r/main/docs/api.md", "docs/api.md"),
])
def test_forge_url_names_a_path_of_the_repository(url, path) -> None:
    kws = extract_keywords(f"Crash in the reader, see {url}.")
    assert [(k.text, k.kind) for k in kws if k.kind == "path"] == [(path, "path")]


def test_a_forge_url_of_thousands_of_components_keeps_its_last_ones() -> None:
    # Each tail of a quoted path is matched against the tree: a path of N components
    # would cost N*N, so a URL's is cut to URL_PATH_PARTS components (a real one is shorter).
    from agentic_search_skill.query import URL_PATH_PARTS, strip_urls
    _, paths = strip_urls("see https://github.com/o/r/blob/main/" + "a/" * 5000 + "auth.py")
    assert paths == ["/".join(["a"] * (URL_PATH_PARTS - 1) + ["auth.py"])]


def test_url_hosts_images_and_query_strings_are_no_keywords() -> None:
    texts = _texts("Reader breaks ![image](https://user-images.githubusercontent.com/4175/116-fe4b.png) "
                   "see https://example.org/guide/readers?utm_source=chat and https://github.com/o/r/issues/12")
    for junk in ("github", "githubusercontent", "images", "example", "utm_source", "png", "image", "issues", "com"):
        assert junk not in texts, junk
    assert "guide" in texts and "readers" in texts and "reader" in texts


def test_a_forge_page_and_a_playground_link_give_no_owner_project_or_sandbox_words() -> None:
    texts = _texts("Header stays literal: repro at https://github.com/felixhummel/caddy-tls-subject-header-up"
                   "?tab=readme, see https://github.com/gyscos/zstd-rs/issues/100#issuecomment-1553456643 and "
                   "https://stackblitz.com/edit/vitejs-vite-jahlyn?file=app.js; as the README says at "
                   "https://github.com/nlohmann/json#arbitrary-types-conversions")
    for junk in ("felixhummel", "gyscos", "rs", "jahlyn", "vitejs", "issuecomment", "edit"):
        assert junk not in texts, junk
    assert {"arbitrary", "conversions", "header", "literal"} <= set(texts)  # a README's section stays


def test_a_host_without_a_scheme_or_an_email_address_is_no_module_path() -> None:
    kws = extract_keywords("An empty netrc login: `machine api.example.com login user` mails admin@corp.org "
                           "via smtp.corp.net:587; compare com.fasterxml.jackson.core.JsonFactory and scipy.io.loadmat")
    texts = {k.text for k in kws}
    for junk in ("api/example/com", "api", "example", "com", "admin", "corp", "smtp", "corp/net"):
        assert junk not in texts, junk
    # a Java package starts with com., a module may end in .io: both stay module paths
    assert {"com/fasterxml/jackson/core", "scipy/io/loadmat", "netrc", "login"} <= texts


def test_a_long_made_up_host_is_neither_searched_nor_a_gap() -> None:
    host = "thequickbrownfoxjumpedoverthelazydogtofindthelargedangerousdragon"
    kws = extract_keywords(f"Uri fails to parse a long host: `{host}.localhost:1234`, also {host} alone; "
                           "the local test host my.localhost works")
    texts = {k.text for k in kws}
    assert not any(host in t for t in texts), texts
    assert not {"localhost", "my/localhost"} & texts
    assert {"uri", "parse", "host"} <= texts


def test_builtins_called_in_pasted_code_are_no_keywords_but_named_in_prose_they_are() -> None:
    task = ("Wrapped text loses a character\n```python\nfor line in Text('abc').wrap(Console(), 8):\n"
            "    print(repr(line.plain), len(line))\nx = require('yargs')\n```\n")
    texts = {k.text for k in extract_keywords(task)}
    assert not {"repr", "len", "require"} & texts, texts
    assert {"Text", "Console", "wrap"} <= texts
    texts = {k.text for k in extract_keywords(task + "The repr of the line is wrong too.")}
    assert "repr" in texts and "len" not in texts


def test_issue_template_words_are_no_keywords() -> None:
    task = ("Parser drops fields\n\n**Describe the bug**\nA clear and concise description of what the bug is.\n"
            "**To Reproduce**\nSteps to reproduce the behavior:\n1. parse nested fields\n"
            "**Expected behavior**\nfields kept\n**Screenshots**\nIf applicable, add screenshots to help explain your problem.\n"
            "<!-- Thanks for submitting an issue! -->\n- [x] In `json_sax_parser`, not all lines are covered\n"
            "**Environment**\n - OS: NixOS 23.05 x86_64\n - Rust version: 1.70\n - Day.js Version: v1.10.7\n")
    texts = _texts(task)
    for junk in ("describe", "concise", "clear", "screenshots", "applicable", "explain", "thanks", "submitting",
                 "environment", "nixos", "x86_64", "rust", "version", "day"):
        assert junk not in texts, junk
    assert {"parser", "drops", "fields", "nested", "json_sax_parser"} <= set(texts)  # a checklist item is content


def test_a_templates_markdown_comments_give_no_keyword() -> None:
    task = ("Import CSV changes all groups to Root\n\n## Overview\n"
            "[TIP]:  # ( DO NOT include screenshots of your actual database! )\n"
            "[NOTE]: # ( Give a BRIEF summary about your problem )\n"
            "Importing a CSV changes every group name to Root\n"
            "[//]: # (Tell us what you expected)\n[comment]: <> (Provide simple steps)\n"
            "## Context\nDesktop Env: Cinnamon\nWindowing System: X11\n### Configuration\n"
            "See [the docs]: https://example.org/csv-import\n")
    texts = {t.lower() for t in _texts(task)}
    for junk in ("tip", "note", "brief", "summary", "screenshots", "give", "tell", "provide", "simple",
                 "overview", "context", "cinnamon", "x11", "windowing", "configuration"):
        assert junk not in texts, junk
    assert {"csv", "groups", "root", "importing"} <= texts


def test_the_feature_request_templates_words_are_no_keywords() -> None:
    task = ("Unmarshal lacks uuid.UUID\n\n**Is your feature request related to a problem? Please describe.**\n"
            "A clear and concise description of what the problem is. Ex. I'm always frustrated when [...]\n"
            "**Describe the solution you'd like**\nA clear and concise description of what you want to happen.\n")
    texts = _texts(task)
    for junk in ("frustrated", "always", "concise", "ex"):
        assert junk not in texts, junk
    assert "unmarshal" in {t.lower() for t in texts}


# --------------------------------------------------------------------------- #
# Japanese and Chinese
# --------------------------------------------------------------------------- #

def _groups(task: str) -> dict:
    out: dict = {}
    for k in extract_keywords(task):
        out.setdefault(k.group or k.text, []).append((k.text, k.translated))
    return out


def test_japanese_task_becomes_its_terms_and_their_english_words() -> None:
    groups = _groups("認証トークンの期限切れバグを修正する")
    assert groups["認証"] == [("認証", False), ("auth", True), ("authentication", True)]
    assert groups["トークン"] == [("トークン", False), ("token", True)]
    assert ("expiry", True) in groups["期限切れ"]
    # Particles and endings (の, を, する) are grammar; fix and bug are stop words in any language.
    assert all(not k.text.startswith(("の", "を", "する")) for k in extract_keywords("認証トークンの期限切れバグを修正する"))
    assert "fix" not in _texts("認証トークンの期限切れバグを修正する")


def test_chinese_task_keeps_latin_identifiers_and_translates_the_rest() -> None:
    texts = _texts("为API端点添加速率限制")
    assert "api" in texts and "endpoint" in texts and "rate limit" in texts and "throttle" in texts
    assert "为api端点添加速率限制" not in texts


def test_unknown_chinese_text_is_searched_as_bigrams() -> None:
    texts = _texts("渲染标题栏")  # no glossary term: four overlapping pairs
    assert texts == ["渲染", "染标", "标题", "题栏"]


def test_cjk_in_a_fenced_block_is_the_reporters_data_and_indented_cjk_prose_stays() -> None:
    # (trial 37: a nav entry ``测试1.md`` of the reporter's config became the keyword "test")
    texts = _texts("Chinese page names give 404\n```\nnav:\n- 测试1: 测试1.md\n```\n")
    assert not {"测试", "test"} & set(texts)
    assert "认证" in _texts("Token bug\n    认证令牌过期\n")


def test_translated_flag_round_trips_through_json() -> None:
    from agentic_search_skill.query import Keyword
    for kw in extract_keywords("认证令牌过期"):
        assert Keyword.from_json(kw.to_json()) == kw
    assert any(kw.to_json().get("translated") for kw in extract_keywords("认证令牌过期"))


def test_cjk_words_match_cjk_text_in_files(tmp_path) -> None:
    path = tmp_path / "auth.js"
    path.write_text("// 认证令牌的过期时间\nexport function check() {}\n", encoding="utf-8")
    kws = [k for k in extract_keywords("修复认证令牌过期") if not k.translated]
    doc = read_document("auth.js", str(path))
    fm = match_document(doc, compile_keywords(kws))
    assert all(fm.counts), [(k.text, c) for k, c in zip(kws, fm.counts)]


# --------------------------------------------------------------------------- #
# Short quoted names: matched against file stems only
# --------------------------------------------------------------------------- #

def test_short_or_hyphenated_quoted_names_become_stem_only_keywords() -> None:
    kws = {k.text: k for k in extract_keywords(
        "Kurdish locale\n\nThe `ku` locale and `ar-ly (Arabic (Lybia))` throw; `x` is a variable.")}
    assert kws["ku"].stem_only and kws["ar-ly"].stem_only
    assert kws["ku"].needles == ()  # never counted in text: "ku" is inside countless words
    assert "x" not in kws  # one letter is the example's variable


def test_a_long_hyphen_joined_name_is_searched_as_the_code_spells_it() -> None:
    # A CSS pseudo-class, a header, a flag: the code holds "last-of-type" and last_of_type.
    # A short one (a locale's code) and a version stay a file's stem.
    kws = {k.text: k for k in extract_keywords(
        "`:last-of-type` styling lost\n\nWith `max-age` set, `zh-cn` and `pytest-4` in the log.")}
    assert not kws["last-of-type"].stem_only
    assert {b"last-of-type", b"last_of_type", b"lastoftype"} <= set(kws["last-of-type"].needles)
    assert not kws["max-age"].stem_only
    assert kws["zh-cn"].stem_only and kws["pytest-4"].stem_only


def test_quoted_hyphen_names_do_not_crowd_out_the_tasks_code_names() -> None:
    names = " ".join(f"`:nth-pseudo-{chr(97 + i)}{chr(97 + i)}`" for i in range(26))
    kws = {k.text for k in extract_keywords(
        f"Pseudo classes break\n\n{names} all fail in SelectorParser.parse_pseudo_class via PSEUDO_CLASS_TABLE.")}
    assert {"SelectorParser", "parse_pseudo_class", "PSEUDO_CLASS_TABLE"} <= kws
    assert sum("-" in k for k in kws) <= 12


def test_stem_only_keyword_names_only_the_file_whose_stem_it_is(tmp_path) -> None:
    kw = make_keyword("ku", "identifier", stem_only=True)
    assert kw is not None and kw.stem_only
    cases = {"src/locale/ku.js": 1.0, "src/locale/ku/index.js": 1.0, "src/backup.js": 0.0,
             "src/ku_tools.js": 0.0, "ku/main.js": 0.0}
    for rel, want in cases.items():
        doc = read_document(rel, write(tmp_path, rel, "kurdish backup\n"))
        assert doc is not None
        m = match_document(doc, compile_keywords([kw]))
        assert (m.counts[0], m.in_path[0]) == (0, want), rel


def test_stem_only_survives_the_json_round_trip() -> None:
    kw = make_keyword("de-ch", "identifier", stem_only=True)
    assert kw is not None
    back = Keyword.from_json(kw.to_json())
    assert back == kw


def test_html_markup_of_the_prose_gives_no_keywords_but_its_links_do():
    # A forge renders <img>, <details>, <br/> in an issue: their tag and attribute names are
    # not the issue's words; a link to a file of the repository still names that file, and
    # code keeps its angle brackets.
    task = ('<img alt="Issuehunt badges" src="https://img.shields.io/badge/IssueHunt-%24100-%237E24E3.svg" />\n'
            'The `Grid<Row>` width is wrong, see <a href="https://github.com/o/r/blob/main/src/grid.js#L3">here</a>.'
            '<br/>\n<details><summary>log</summary>\n\n```html\n<div align="center">cell</div>\n```\n</details>')
    got = [k.text for k in extract_keywords(task)]
    assert "src/grid.js" in got and "width" in got and "align" in got
    assert not {"img", "alt", "summary", "details", "href", "issuehunt", "badges"} & set(got)


def test_member_expressions_and_file_names_are_not_module_paths():
    from agentic_search_skill.query import extract_keywords
    kws = {k.text: k.kind for k in extract_keywords(
        "import.meta.hot.invalidate() fails when run as pip.pyz against libpthread.so; "
        "super.save and window.location too, unlike django.db.models.query; a main.svg template")}
    assert not {"import/meta/hot", "pip/pyz", "libpthread/so", "super/save", "window/location",
                "main/svg"} & set(kws)
    assert kws.get("django/db/models/query") == "path"


def test_the_key_of_a_key_value_pair_is_no_module_path():
    # a trial's syncthing log line: `log.pkg=model` gave the path log/pkg
    from agentic_search_skill.query import extract_keywords
    kws = {k.text: k.kind for k in extract_keywords(
        'Zero byte files fail\n\n```\nINF Lost device connection error="request too small" log.pkg=model\n'
        'server.port=8080\n```\nbut django.db.models == models and myapp.views fine')}
    assert not {"log/pkg", "server/port"} & set(kws)
    assert kws.get("django/db/models") == "path" and kws.get("myapp/views") == "path"


def test_a_test_frameworks_and_nodes_globals_are_objects_not_module_paths():
    # a trial's mocha report: `it.only` was read as the path it/only
    from agentic_search_skill.query import extract_keywords
    kws = {k.text: k.kind for k in extract_keywords(
        "--forbid-only misses `it.only` but catches `describe.only`; expect.extend and "
        "console.warn print process.env.NODE_ENV, unlike mocha.lib.runner")}
    assert not {"it/only", "describe/only", "expect/extend", "console/warn", "process/env"} & set(kws)
    assert kws.get("mocha/lib/runner") == "path"


def test_a_command_asking_a_programs_version_gives_no_keywords():
    # a trial's `difft --version` ranked src/version.rs first
    task = ("Tab characters break layout\n\nTabs on the left side misalign the right side.\n\n"
            "`difft --version`\n```\nDifftastic 0.67.0\n```\n\n$ tmux -V\n\n$ helm version\nv3\n"
            "The `--version` flag of `frobnicate` prints twice.\n\nManifest version\n"
            "The `api version` header; upgrading `pydantic` to version `2.0`.\n")
    texts = _words(task)
    assert not {"difft", "tmux", "helm"} & texts
    # a line of prose, a header's name and the words between two spans stay
    assert {"tab", "layout", "misalign", "frobnicate", "version", "manifest", "api", "pydantic"} <= texts


def test_a_version_command_in_the_title_is_what_the_issue_is_about():
    texts = _words("`black --version` reports 0.0.0\n\nIt did after install.\n")
    assert {"black", "version"} <= texts


def test_a_heading_asking_the_reporter_goes_but_the_reporters_own_plea_stays():
    task = ("Editor crash\n\n## Please help, the editor crashes when saving\n\nIt hangs.\n\n"
            "### Please describe the steps to reproduce the issue\n\nopen, save\n\n"
            "### \U0001F3F3\ufe0f\u200d\U0001F308 Playground Link\n\nnone\n\n```js\n// Summary\n```\n")
    texts = _words(task)
    assert {"help", "crashes", "saving", "summary"} <= texts  # (a comment is no heading)
    assert not {"describe", "steps", "reproduce", "playground", "link"} & texts


def test_a_heading_asking_about_plurals_or_telling_the_reporter_is_the_templates():
    # a trial's form: "What terminal(s) ...?" kept `running`, `experiencing`; "Describe the
    # issue" kept `describe`
    task = ("Cannot highlight text with disable_click set\n\n"
            "### What terminal(s) are you running bottom on that are experiencing the problem?\n\nfoot\n\n"
            "### Describe the issue\n\nClicks are swallowed.\n\n"
            "### Provide a minimal reproduction\n\nRun it.\n\n"
            "### Add a `parse_date` option\n\n### Scrolling menus jump back to the top on resize\n\nThey do.\n")
    texts = _words(task)
    assert not {"running", "experiencing", "describe", "provide", "minimal"} & texts
    # an answer, the report's own text and a heading of the reporter's stay
    assert {"foot", "clicks", "swallowed", "parse_date", "option", "scrolling", "resize"} <= texts


def test_a_javascript_files_name_may_hold_dots_but_a_dotted_module_stays_a_module():
    # a trial's Chart.js fix was in element.arc.ts
    task = "Arc hover is off\n\nIn src/elements/element.arc.ts and types/index.d.ts; django.utils.html escapes it.\n"
    paths = {k.text for k in extract_keywords(task) if k.kind == "path"}
    assert {"src/elements/element.arc.ts", "types/index.d.ts"} <= paths
    assert "django.utils.html" not in paths  # (a module's name, no file's)


def test_a_forms_labels_the_text_never_uses_give_no_keywords():
    # a trial's form: "### Reproducible sample" put a file defining sample() 4th; an empty
    # field prints "_No response_"
    task = ("A tooltip appears after hiding all data\n\n### Expected behavior\n\nNo tooltip.\n\n"
            "### Reproducible sample\n\nhttps://codepen.io/x/pen/y\n\n"
            "### Optional extra steps/info to reproduce\n\n1. Hide the legend items\n\n"
            "### Which shell are you using?\n\n_No response_\n\n"
            "## Tooltip placement\n\nThe tooltip shows over the arc.\n\n"
            "### `computeTooltip` output\n\nnone\n\n### src/plugins/hover.ts\n\nsee there\n\n"
            "```python\n### Quoted section of a script\nx = 1\n```\n# Single hash comment of pasted code\n")
    texts = _words(task)
    assert not {"reproducible", "sample", "optional", "extra", "info", "_no", "response"} & texts
    # a heading sharing the text's words, naming code or a path, in code, or of one #, stays
    assert {"placement", "computetooltip", "src/plugins/hover.ts", "quoted", "single"} <= texts


def test_a_titles_kind_tag_a_fences_language_and_a_forms_hint_in_parentheses_give_no_keywords():
    # trial 61: `[REQUEST]` ranked a JSON-RPC file 3rd, ```python / ```text gave `python`,
    # `text`, and "Operating system version (i.e. 20.04, 11.3, 10)" kept `debian-slim`
    task = ("[REQUEST] Render the initial prompt colon with the Prompt face\n\n"
            "### Operating system version (i.e. 20.04, 11.3, 10)\n\ndebian-slim\n\n"
            "```python\nprompt.render(face)\n```\n```text\nflicker\n```\n")
    texts = _words(task)
    assert not {"request", "operating", "system", "slim", "debian-slim", "python", "text"} & texts
    assert {"render", "prompt", "colon", "face", "flicker"} <= texts
    # a tag naming a part of the project, and the language said in prose, stay
    assert {"subscriber", "python"} <= _words("[tracing-subscriber] fields lost\n\nOnly with python 3.12.\n")


def test_a_short_heading_of_free_text_is_the_reporters_summary():
    # an adversarial check: outside a form a short heading names the issue, whatever the
    # text below it says; a dotted name in it is code
    for task, kept in [
        ("Export fails\n\n## Crash when exporting PDF\n\nSteps:\n1. open a document\n2. boom", {"crash", "exporting", "pdf"}),
        ("Editor problem\n\n**Tokenizer mishandles heredoc**\n\nThe highlighting is wrong.\n", {"tokenizer", "heredoc"}),
        ("Bug\n\n### Expected behavior\n\nIt works.\n\n### Actual behavior\n\nIt hangs.\n\n"
         "### Session.commit hangs\n\nWith autoflush.\n", {"session", "commit"}),
    ]:
        assert kept <= _words(task), task


def test_a_long_slashed_heading_is_read_in_linear_time():
    import time
    task = "T\n\n### Expected behavior\n\nok\n\n### What happened?\n\nx\n\n## " + "abcd/" * 50000 + "\nbody\n"
    started = time.time()
    extract_keywords(task)
    assert time.time() - started < 3.0


def test_a_setup_commands_long_options_and_a_programs_message_stay():
    # an adversarial check: in pnpm's or pip's own tree the option is the subject; `go get:`
    # opens the message go prints
    assert {"frozen-lockfile"} <= _words("Lockfile ignored\n\nRunning `pnpm install --frozen-lockfile` rewrites it.\n")
    assert {"no-build-isolation"} <= _words("Resolver\n\n`pip install --no-build-isolation foo` ignores it\n")
    assert {"upgrade", "contain", "package"} <= _words(
        "Module\n\n```\ngo get: module example.com/foo@upgrade found, but does not contain package bar\n```\n")


def test_commands_setting_up_the_reporters_copy_give_no_keywords():
    # a trial's reproduction steps made `git`, `clone`, `npm`, `cd`, `ci` keywords (`clone`
    # led the ranking), another's `docker`, `postgres`, `letmein`
    task = ("Pagination ignores the collection\n\n"
            "1. Fetch it: `git clone https://example.com/someone/sample-case.git`\n"
            "2. `cd` into the directory and set it up: `npm ci`\n"
            "3. Start a server: `docker run --name some-postgres -e POSTGRES_PASSWORD=letmein postgres:18`\n"
            "```console\n$ mkdir demo && cd demo && cmake -DPAGINATE_TAGS=ON ..\n$ pip install tagger==1.2\n"
            "$ tagger paginate --collections\n```\n"
            "```powershell\n> mkdir test-poetry\n> cd test-poetry\n> poetry new .\n```\n"
            "The `cd` of a path is fine in `chdir`. Run `yarn build` to see it.\n")
    texts = _words(task)
    assert not {"git", "clone", "npm", "ci", "docker", "postgres", "letmein", "postgres_password",
                "some-postgres", "demo", "pip", "install", "test-poetry"} & texts
    # the project's own steps and names stay: a cmake option, its command, a build script
    assert {"cmake", "tagger", "paginate", "collections", "poetry", "chdir", "yarn", "build"} <= texts


def test_a_setup_command_in_the_title_is_what_the_issue_is_about():
    assert {"git", "clone", "submodules"} <= _words("`git clone` skips submodules\n\nIt does.\n")


def test_a_common_word_quoted_alone_as_code_names_a_file_by_its_stem():
    # a trial's JSON-schema report: the ``not`` keyword's file ranked 92nd without it
    task = ("anyOf is ignored in the presence of not\n\nRemoving the ``not`` condition works; "
            "so does `new`, `get`. Values `true`, `None` and `am` are no names; `not a name` is prose.\n")
    kws = {k.text: k for k in extract_keywords(task)}
    assert kws["not"].stem_only and kws["new"].stem_only and kws["get"].stem_only
    assert not {"true", "None", "am"} & set(kws)


def test_long_runs_under_a_traceback_or_after_a_heading_are_read_in_linear_time() -> None:
    import time
    from agentic_search_skill.query import quoted_lines
    carets = ("bug\n```\nTraceback (most recent call last):\n  File \"a.py\", line 1, in f\n    x = g()\n    "
              + "^" * 200_000 + "x\n```\n")
    heading = "title\n### summary" + " " * 200_000 + "x\n"
    start = time.perf_counter()
    quoted_lines(carets)
    extract_keywords(carets)
    extract_keywords(heading)
    assert time.perf_counter() - start < 5.0


def test_short_environment_items_and_bot_regions_give_no_keywords():
    from agentic_search_skill.query import extract_keywords
    task = ("`dayjs.locale()` returns null instead of the current locale\n\n"
            "**Information**\n - Day.js Version v1.8.14\n - Browser Chrome\n - OS: Mac\n"
            " - version negotiation breaks the parser when a locale is missing\n\n"
            "<!-- Issuehunt content -->\n<details><summary>IssueHunt Summary</summary>\n"
            "sponsors rewarded funded\n</details>\n<!-- /Issuehunt content-->\n")
    words = {k.text.lower() for k in extract_keywords(task)}
    assert not {"chrome", "browser", "sponsors", "rewarded", "funded", "issuehunt"} & words
    assert {"locale", "negotiation", "parser"} <= words  # a longer item is the reporter's text


def test_a_blank_to_fill_in_is_no_keyword():
    task = "Which version?\n- [ ] other release - please state the version: ___\n`__init__` breaks on __i"
    texts = {k.text for k in extract_keywords(task)}
    assert "___" not in texts and "__init__" in texts


def test_a_template_option_the_reporter_left_unchecked_gives_no_keyword():
    task = ("Iterator breaks\n\n#### Which version of the library did you use?\n\n"
            "- [x] latest release version 3.10.5\n- [ ] other release - please state the version: ___\n"
            "- [ ] the `develop` branch\n\nThe `iter_impl` post-increment is const.\n")
    texts = _words(task)
    assert "develop" not in texts and "iter_impl" in texts


def test_a_pasted_files_encoding_line_and_shebang_give_no_keyword():
    task = ("Memory leak\n```python\n#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"
            "from marshmallow import Schema\nclass MsgSchema(Schema): pass\n```\nmemory grows")
    texts = _words(task)
    assert not {"coding", "utf", "env", "usr", "bin"} & texts
    assert {"msgschema", "memory", "leak"} <= texts


def test_a_checked_confirmation_of_the_template_gives_no_keyword_but_a_checked_statement_does():
    task = ("Panics on conflicts\n### Checklist\n\n- [x] I have searched the [discussions](https://x.org/d)\n"
            "- [x] For bug reports, I have checked the manual page (`man fzf`)\n"
            "- [x] In `json_sax_dom_parser`, not all lines of `handle_binary` are covered.\n")
    texts = _words(task)
    assert not {"searched", "discussions", "manual", "checklist", "fzf"} & texts
    assert {"json_sax_dom_parser", "handle_binary", "conflicts"} <= texts


@pytest.mark.parametrize("task, absent, present", [
    # an issue form's machine questions and the options checked under them; another
    # heading's option and the prose stay
    ("Jumpy list with a flag\n\n### OS\n\n- [ ] Linux\n- [x] macOS\n\n### Shell\n\n- [ ] bash\n"
     "- [x] zsh\n\n### Output of `tool --version`\n\n0.70.0\n\n### Component\n\n- [x] merger\n\n"
     "### Problem\n\nThe listed items jump when the shell is slow.\n",
     {"macos", "zsh", "os", "output"}, {"merger", "shell", "listed", "jump"}),
    # the short items under a bold environment heading; another heading's item stays
    ("The log tab does not update\n\n**To Reproduce**\n- Checkout a branch\n\n"
     "**Context (please complete the following information):**\n - `macOS 13.5.1`\n - `0.24.1`\n"
     " - `wezterm 20230712-072601-f4abf8fd`\n\n**Additional context**\nthe history appends\n",
     {"macos", "wezterm", "f4abf8fd", "abf"}, {"checkout", "branch", "history", "appends"}),
    # a form's one-line answers under its version and system questions (a trial's libgit2 task)
    ("git_branch_move deletes the reflog\n\n### Actual behavior\nThe reflog is deleted and re-created.\n\n"
     "### Version of libgit2 (release number or SHA1)\nMain (currently `1a94d97e5f` at the time of this writing).\n\n"
     "### Operating system(s) tested\nmacOS 12.4\n",
     {"macos", "1a94d97e5f", "writing", "currently"}, {"git_branch_move", "reflog", "deleted"}),
    # ... but a long line under one is the issue's own prose
    ("Build breaks\n\n### OS\nOn every system the parser drops the trailing separator of a quoted field\n",
     set(), {"separator", "quoted", "trailing"}),
    # a diagnostics table under a machine heading (a trial's ``| Implementation | CPython |``)
    ("Border title colour shows as a background\n\n## Python\n\n| Name | Value |\n|------|-------|\n"
     "| Version | 3.12.5 |\n| Implementation | CPython |\n\nThe border_title renders wrong.\n",
     {"cpython", "implementation"}, {"border_title", "renders", "background"}),
    # ... but a row naming code stays (an adversarial check)
    ("CSV quoting differs\n\n### Output across versions\n| version | output of `df.to_csv(quoting=QUOTE_MINIMAL)` |\n"
     "|---|---|\n| 1.5 | a,b |\n",
     set(), {"quote_minimal", "quoting"}),
])
def test_an_issue_forms_answers_about_the_machine_give_no_keyword(task, absent, present) -> None:
    texts = _words(task)
    assert not absent & texts
    assert present <= texts


@pytest.mark.parametrize("task", ["parse_date fails\n### \n", "x:\n\n    def f():\n        # \n        return 1\n",
                                  "y\n> ## \t\n**z**  :  \n"])
def test_an_empty_heading_is_read_without_a_fault(task) -> None:
    extract_keywords(task)


def test_an_environment_sections_list_ends_where_the_issues_own_text_begins() -> None:
    task = ("Dates break\n**Environment**\n- OS: Ubuntu 22.04\n- mylib 2.0\n\n"
            "When I call parse_date with an empty string:\n- it raises `IndexError` from `_split_tokens`\n"
            "- instead of `DateParseError`\n")
    texts = {k.text for k in extract_keywords(task)}
    assert {"IndexError", "_split_tokens", "DateParseError", "parse_date"} <= texts
    assert "Ubuntu" not in texts


def test_a_title_that_holds_the_word_version_is_no_environment_question() -> None:
    texts = _words("Bug\n# Version.parse rejects build metadata\ntext")
    assert {"rejects", "metadata"} <= texts


def test_a_placeholder_path_into_an_install_directory_keeps_the_path_inside_the_package() -> None:
    task = 'Crash\n  File "/path/to/venv/lib/python3.11/site-packages/mylib/core/__init__.py", line 9\n'
    assert "mylib/core/__init__.py" in {k.text for k in extract_keywords(task)}


def test_a_list_of_placeholder_keys_leaves_room_for_the_tasks_own_names() -> None:
    task = ("header_up drops headers\n" + "".join(f"header_up X-{i} {{http.request.tls.client.k{i}}}\n"
                                                   for i in range(32)) + "`handleUpstreamHeaders` and `reverse_proxy`")
    texts = {k.text for k in extract_keywords(task)}
    assert {"handleUpstreamHeaders", "reverse_proxy", "header_up"} <= texts


@pytest.mark.parametrize("url, path", [
    ("https://github.com/o/r/blame/main/src/pkg/parser.py#L10", "src/pkg/parser.py"),
    ("https://github.com/o/r/commits/main/src/pkg/parser.py", "src/pkg/parser.py"),
    ("https://gitlab.com/o/r/-/blame/main/src/pkg/parser.py", "src/pkg/parser.py"),
])
def test_a_blame_or_history_link_names_its_path(url, path) -> None:
    assert path in {k.text for k in extract_keywords(f"Bug\nsee {url} please")}


def test_a_placeholders_dotted_key_is_searched_as_written_and_in_the_pieces_code_spells():
    task = "Header stays literal\nThe value of `{http.request.tls.client.subject}` is sent as written."
    kws = {k.text: k for k in extract_keywords(task)}
    assert {"http.request.tls.client.subject", "client.subject", "http.request.tls"} <= set(kws)
    assert all(k.kind != "path" for k in kws.values())  # a key, not a module's path
    fstring = {k.text for k in extract_keywords("Bad label\nf'{self.instance.pk}' shows None")}
    assert not {"self.instance.pk", "instance.pk"} & fstring  # an f-string's expression


def test_a_placeholder_paths_folders_give_no_words_but_its_file_name_stays() -> None:
    task = ("Comments combined\n```\n--- path/to/cwd/isort_comments.py:before\n"
            "+++ /path/to/project/app/settings.py\n```\nimports share comments")
    texts = {k.text for k in extract_keywords(task)}
    assert not {"path", "cwd", "project", "path/to/cwd/isort_comments.py"} & texts
    assert {"isort_comments.py", "settings.py", "comments"} <= texts


# --------------------------------------------------------------------------- #
# Messages the task quotes
# --------------------------------------------------------------------------- #

@pytest.mark.parametrize("task, message", [
    ('a request to a missing path makes gin panic with "invalid node type" instead of a 404', "invalid node type"),
    ("thread '<unnamed>' panicked at src/walk.rs:529:14: Retrieving absolute path succeeds: Os { code: 2 }",
     "Retrieving absolute path succeeds"),
    ("panic: http: wildcard route conflicts with existing children", "wildcard route conflicts with existing children"),
    ("Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: Imaginary coordinates are not permitted.",
     "Imaginary coordinates are not permitted"),
    # quotes inside a message name the value it was raised for: the words around them are the message
    ("TypeError: 'NoneType' object is not callable", "object is not callable"),
    # words with a hyphen, a digit or a code point still read as a message (a trial's nlohmann task)
    ('parsing fails with "invalid string: ill-formed UTF-8 byte"', "ill-formed UTF-8 byte"),
    ('it says "surrogate U+DC00..U+DFFF must be followed by U+DC00..U+DFFF"',
     "surrogate U+DC00..U+DFFF must be followed by U+DC00..U+DFFF"),
    # a Java cause, its values in brackets: the words between them are the format string's (trial 26)
    ("Caused by: java.lang.IllegalArgumentException: [/srv/a.txt] -> [/srv/a.txt] not in the fence [/srv/app]",
     "not in the fence"),
    ('Exception in thread "main" java.lang.IllegalStateException: Error looking up file [x.txt] with charset [UTF-8].',
     "Error looking up file"),
    ("Uncaught (in promise) TypeError: Invalid locale definition passed", "Invalid locale definition passed"),
    # a command-line program names itself first (a trial's ninja task)
    ("> ./ninja\nninja: fatal: cycle in rule variables: rspfile -> rspfile", "cycle in rule variables"),
    # Ruby names the error's class after the message (a trial's mruby task)
    ("`test.rb:4:in <<: no superclass method 'wrap' (NoMethodError)`", "no superclass method"),
    # a logger's or a compiler's level in capitals or lower case (a trial's dvc task)
    ("```console\nERROR: config file error: Unsupported URL type filena://\n```", "Unsupported URL type"),
    ("```\nerror: could not compile the crate\n```", "could not compile the crate"),
    # an unquoted value of a path's or a link's punctuation ends the message (the code
    # formats it in: ``Unsupported URL type {scheme}://``)
    ("ValueError: cannot open file /tmp/x.csv for reading", "cannot open file"),
    # a build tool's or a linter's bracketed level, the file and line, then the message;
    # a number standing alone is a value the code formats in (a trial's checkstyle task)
    ("[ERROR] /var/tmp/T.java:3: 'try' child has incorrect indentation level 8, expected 12. [Indentation]",
     "child has incorrect indentation level"),
    # a logger's line: time, level, thread, logger, then the message (logback, log4j)
    ("```\n2024-01-02 10:00:00,123 ERROR [main] o.a.c.Server - Unable to bind to port 8080\n```",
     "Unable to bind to port"),
    ("[2023-05-01 12:00:00] ERROR: connection pool exhausted while waiting", "connection pool exhausted while waiting"),
    # a clause in parentheses is cut at, as a quote is (a trial's tmux task)
    ("get `parse error: command resize-pane: too many arguments (need at most 1)`", "too many arguments"),
    # what failed names itself first (a trial's delve task)
    ('```\n(dlv) p []byte(x)\nCommand failed: can not convert "x" to []uint8\n```', "can not convert"),
    # Python's logging in its default format: level, logger, message, joined by colons
    ("```\nERROR:root:Unable to open the session store for writing\n```",
     "Unable to open the session store for writing"),
    ("WARNING:django.request:Not Found: the page was moved away", "the page was moved away"),
    # a backticked chain of wrapped errors, each part raised in its own place (a trial's gh task)
    ("After the upgrade I get `could not query for pull request for current branch: could not determine "
     "current branch: failed to run git: not on any branch` now", "not on any branch"),
])
def test_a_quoted_message_is_searched_as_written(task, message) -> None:
    kws = extract_keywords(task)
    assert message in texts(kws, "message")
    kw = next(k for k in kws if k.text == message)
    assert kw.needles == (normalize(message).encode(),)


def test_a_chains_last_message_where_the_error_was_raised_comes_first() -> None:
    from agentic_search_skill.query import messages
    task = ("`could not query for pull request for current branch: could not determine current branch: "
            "failed to run git: not on any branch`")
    found = messages(task)
    assert found[0] == "not on any branch" and len(found) == 3
    assert "could not query for pull request for current branch" in found  # then the longest


def test_a_bracket_standing_alone_in_a_message_is_its_value() -> None:
    # trial 74's sops: the parser's message was read as code for its ``[`` and lost; the
    # loop stopped on the file that only wraps it (the code writes ``got delimiter %s``)
    from agentic_search_skill.query import messages
    task = ("Error unmarshalling file : Expected JSON object start, got delimiter [ instead\n\nReceive the "
            "error: `Error unmarshalling file: Could not unmarshal input data: Expected JSON object start, "
            "got delimiter [ instead`.")
    found = messages(task)
    assert found[0] == "Expected JSON object start, got delimiter"
    assert {"Could not unmarshal input data", "Error unmarshalling file"} <= set(found)
    # ... but code with braces is still no message, and text in braces is a value
    assert messages("the error reads 'if (x == null) { return; }' and more") == ()
    assert messages("Error: template render failed near { if user is admin }") == ("template render failed near",)
    # ... and a bracket before punctuation or opening a link is one too
    assert messages("SyntaxError: unexpected token }, expected a property name here") == (
        "expected a property name here",)
    assert messages("error: [ is not allowed in a table key here") == ("is not allowed in a table key here",)


def test_a_message_cut_at_a_number_is_no_chain() -> None:
    from agentic_search_skill.query import messages
    found = messages("[ERROR] T.java:3: 'try' child has incorrect indentation level 8, expected level should be 12.")
    assert found == ("child has incorrect indentation level", "expected level should be")


def test_an_xml_prolog_and_a_shell_transcripts_options_give_no_keywords() -> None:
    task = ("Indentation: false positive for try child\n\n`/var/tmp $ java -Duser.language=en -jar cs.jar`:\n\n"
            "```\n<?xml version=\"1.0\"?>\n<!DOCTYPE module PUBLIC\n    \"-//Puppy Crawl//DTD Check Configuration 1.3//EN\"\n"
            "    \"http://checkstyle.sourceforge.net/dtds/configuration_1_3.dtd\">\n<module name=\"TreeWalker\"/>\n```\n")
    kws = {k.text for k in extract_keywords(task)}
    assert not kws & {"DOCTYPE", "PUBLIC", "configuration_1_3", "Duser", "version"}, kws
    assert "TreeWalker" in kws
    idents = texts(extract_keywords("Fails\n\nthe `$ javac Main.java` step, then `parse_header` fails"), "identifier")
    assert "javac" not in idents and "parse_header" in idents


@pytest.mark.parametrize("task", [
    "Export button does nothing\n\nerror:\nwhen I click export with a date filter set, nothing happens at all\n",
    "Regression since `fix(router): normalize trailing slashes before matching`",
    "Font looks off with `font-family: Segoe UI Variable Display, sans-serif` set",
    "```\n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n"
    "[ERROR] Re-run Maven using the -X switch to enable full debug logging.\n```\n",
])
def test_prose_after_a_bare_level_a_commits_subject_and_a_build_tools_footer_are_no_messages(task) -> None:
    assert texts(extract_keywords(task), "message") == []


def test_code_with_versions_in_strings_is_no_report_of_versions() -> None:
    task = ("Sorting is wrong\n\n```js\nconst sorted = sortVersions(['1.0.0-beta.2', '1.0.0-beta.10', '1.0.0']);\n"
            "// expected: ['1.0.0-beta.2', '1.0.0-beta.10', '1.0.0']\n```\n")
    assert "sortVersions" in texts(extract_keywords(task), "identifier")


def test_unescaping_keeps_code_references_and_a_links_encoded_spaces() -> None:
    from agentic_search_skill.query import unescaped
    assert unescaped("let total = &sum; let m = &map; a &lt; b") == "let total = &sum; let m = &map; a < b"
    link = "https://x.org/auth?redirect_uri=http%3A%2F%2Flocalhost%3A8080%2Fcb&scope=openid%20email%20profile&s=xyzzy"
    kws = {k.text for k in extract_keywords("Login loops\n\ngo to " + link + " and back")}
    assert not kws & {"email", "profile", "xyzzy"}, kws


def test_a_terminals_colour_codes_are_no_text() -> None:
    task = "Token expires early\n\n\x1b[31mERROR\x1b[0m: token expired before refresh could complete\n"
    kws = extract_keywords(task)
    assert "token expired before refresh could complete" in texts(kws, "message")
    assert not any("mERROR" in k.text or "0m" in k.text for k in kws)


def test_a_jvm_property_on_a_command_line_is_no_name_but_a_cmake_option_is() -> None:
    kws = {k.text for k in extract_keywords("Build fails\n\n`java -Duser.language=en -Dorg.gradle.jvmargs=-Xmx2g -jar a.jar` "
                                             "and cmake -DJSON_BuildTests=OFF")}
    assert not any(k.startswith(("Duser", "-Dorg", "Dorg")) for k in kws), kws
    assert any("JSON_BuildTests" in k for k in kws)


def test_a_prolog_the_report_quotes_in_a_sentence_stays() -> None:
    kws = {k.text for k in extract_keywords('Formatter crashes on `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN">` input')}
    assert "DOCTYPE" in kws


def test_a_loggers_level_is_no_constant_of_the_tree() -> None:
    task = ("Add fails on a colon\n\n```console\nERROR: config file error\n[WARNING] disk almost full\n"
            "10:00:00.123 ERROR [main] c.e.App - cache entry evicted\n```\nSee DEBUG_MODE.")
    idents = texts(extract_keywords(task), "identifier")
    assert "ERROR" not in idents and "WARNING" not in idents and "DEBUG_MODE" in idents


def test_a_panics_message_is_a_line_a_result_quotes_first() -> None:
    from agentic_search_skill.query import quoted_lines
    task = "thread '<unnamed>' panicked at src/walk.rs:529:14:\nRetrieving absolute path succeeds: Os { code: 2 }"
    assert "retrieving absolute path succeeds" in quoted_lines(task)


@pytest.mark.parametrize("task", [
    "call dayjs('2020-11-02T02:58:28.000-08:00') and read it back",   # data, not a sentence
    'set name="x" and value="y" in the config',                        # short values
    "it raises ValueError: bad",                                      # too short to point anywhere
    "the error reads 'if (x == null) { return; }'",                   # code, not a message
    'locales "en-US en-GB fr-FR pt-BR" load',                         # codes: no plain word
    'versions "1.2.3 4.5.6 7.8.9-rc1" fail',                          # numbers, not words
])
def test_quoted_data_and_code_are_no_messages(task) -> None:
    assert texts(extract_keywords(task), "message") == []


def test_a_file_holding_the_message_verbatim_matches_it_and_one_holding_its_words_apart_does_not(tmp_path) -> None:
    assert count_in_file(tmp_path, "tree.go", 'panic("invalid node type")\n', "invalid node type", "message")[0] == 1
    assert count_in_file(tmp_path, "other.go", "// invalid type of a node\n", "invalid node type", "message")[0] == 0


@pytest.mark.parametrize("task, gone, kept", [
    # a shell session's own paths name the reporter's files, not the code
    ("$ mkdir /tmp/x && cd /tmp/x\n$ fd --full-path pattern /usr/share", {"tmp", "usr", "share"}, {"full"}),
    ("run `./zstd -o /dev/null -7 < ~/silesia.tar --zstd=hlog=29`", {"dev", "null", "silesia", "tar"}, {"hlog"}),
    # ... but a stack frame ending in a source file may be the tree's own: its words stay
    ("TypeError: x\n    at diff (/home/ci/project/node_modules/dayjs/plugin/utc.js:1:1941)", set(), {"plugin", "utc"}),
    # a runtime's header of a crash report is the runtime's, not the code's
    ("thread 'main' panicked at src/time.rs:12:5:\noverflow when adding a duration to an instant",
     {"main", "thread"}, {"overflow", "duration"}),
    ("goroutine 1 [running]:\nmain.handler(0x0)\n\tserver/handler.go:42", {"goroutine", "running"}, {"handler"}),
    # ... and so is a shell's note on a crashed process
    ("$ janet -e '(range 0xFFFFFFFFFF)'\njanet internal error: bad range code\nAborted (core dumped)",
     {"dumped"}, {"range", "aborted"}),
])
def test_the_reporters_machine_and_the_runtimes_words_are_no_keywords(task, gone, kept) -> None:
    found = _words(task)
    assert not gone & found
    assert kept <= found


@pytest.mark.parametrize("task, gone, kept", [
    # a shell prompt's user and machine are the reporter's (trial 35's sh)
    ("`$foo#bar` is parsed as a comment\n```\nemily@yuyuko ~> shfmt test.bash\necho $foo #bar\n```",
     {"emily", "yuyuko"}, {"shfmt", "comment"}),
    ("parse fails\n```\nme@box:~/app$ lexer --strict\n[root@host tmp]# lexer -x\n(venv) me@mac proj % lexer\n```",
     {"box", "host", "mac", "venv"}, {"lexer", "strict"}),
    # a template's instructions left in the issue (trial 35's lsd)
    ("Folder contents not shown for a symlink\nIf applicable, add the output of the classic ls command to show "
     "the buggy file.\nIf it's a graphical error add a screenshot if possible.\nThe symlink target is listed.",
     {"applicable", "classic", "buggy", "graphical", "screenshot"}, {"symlink", "target", "folder"}),
    # a demo page's state in a URL's fragment (trial 36's markdown-it); a docs section stays
    ("Backticks dropped from an image's alt: https://markdown-it.github.io/#md3=%7B%22source%22%3A%22x%22%2C"
     "%22defaults%22%3A%7B%22html%22%3Afalse%7D%7D, see https://docs.example.org/api/#render_inline",
     {"afalse", "source", "defaults"}, {"backticks", "render_inline"}),
    # a bare file name labelling the reporter's own code (trial 36's go-toml) ...
    ("Slices are not reset when unmarshalling\n\n`main.go`:\n```go\nfunc main() { Unmarshal(b, &its) }\n```",
     {"main.go"}, {"Unmarshal", "slices"}),
    # ... or as a heading over it (trial 58's typedoc: `#### index.ts` ranked barrel files)
    ("Enums render as variables\n\n#### enums.ts\n\n```ts\nexport const CustomEnum = {}\n```\n",
     {"enums.ts"}, {"CustomEnum", "enums"}),
    # ... but a path in the prose stays
    ("Slices are not reset in `decode/main.go`:\n```go\nfunc decodeSlice() {}\n```", set(), {"decode/main.go"}),
    # a version's head is no name (trial 36's git-cliff; a pytest header's plugins)
    ('I set `skip_tags = "v0.0.1"`; `platform linux -- pytest-4.4.0, py-1.8.0`', {"v0", "pytest-4", "py-1"},
     {"skip_tags"}),
    # a Windows path from a drive, a compiler flag's too (trial 36's ccache)
    ("base_dir not applied\n`ccache cl.exe -IC:/git/testcc/. -c x.cpp` in D:\\work\\build",
     {"git", "testcc", "work", "build"}, {"base_dir"}),
    # ... under Program Files whole; and a home directory's user, even where the path ends
    # in a source file (trial 69's nodemon: `users`, `brian`, `nodejs`, `exe`)
    ("argv is [ 'C:\\\\Program Files\\\\nodejs\\\\node.exe', 'C:\\\\Users\\\\brian\\\\Code\\\\app\\\\src\\\\server.js' ]",
     {"program", "files", "nodejs", "node", "exe", "users", "brian"}, {"src", "Code/app/src/server.js"}),
    ("crash at /home/brian/app/src/server.js:12:5 when started", {"home", "brian"}, {"app/src/server.js", "started"}),
    # a form's line saying how to get the version, and its field names (trial 69's rofi)
    ("Long list delays listview\n\nRofi version (rofi -v): Version: 1.7.5-65-g34810e72 (makepkg)\n\n"
     "Launch command: seq 10000 | rofi -dmenu\n\nStep to reproduce\n* Set `dynamic: true;` for listview.",
     {"version", "makepkg", "launch", "command", "step"}, {"listview", "dmenu", "dynamic"}),
    # a standard module's function is no package path (trial 68's dateparser)
    ("if `date_formats` is present the module just uses `datetime.strptime` and `json.dumps`",
     {"datetime/strptime", "json/dumps"}, {"date_formats", "strptime"}),
    # ... and Node's (trial 104's url-parse: the gap url/resolve)
    ("parsing '' against a base drops its path, while Node's url.resolve and `fs.readFile` keep it",
     {"url/resolve", "fs/readFile", "fs/readfile"}, {"resolve", "path"}),
    # a themed shell's prompt and the reporter's archive (trial 70's ouch)
    ("Decompress overwrites\n```\nroland@blackrainbow newfolder/test/01 \u276f ouch decompress FOSS-Cannon-v1.3.zip\n"
     "Do you want to overwrite?\n```", {"roland", "blackrainbow", "newfolder", "foss", "cannon"},
     {"decompress", "overwrite"}),
    # the Java runtime's packages and its vendor's name (trial 70's unirest)
    ("NPE on retry\njava.lang.NullPointerException: x is null\n- OpenJDK Runtime Environment Temurin-17.0.1+12",
     {"java/lang", "OpenJDK", "Temurin"}, {"NullPointerException", "retry"}),
    # the reporter's thanks and asides (trial 68's cobra)
    ("Completion of --help is missing. Agreed, yeah, that would be nice. Thanks, TIA!\n",
     {"agreed", "yeah", "thanks", "tia"}, {"completion"}),
    # the report's adverbs of manner and time (trials 91-92: a sums file "happily" verified;
    # dayjs-1209's cycle 1 3rd -> 2nd without "normally")
    # ... and "wrong", a report's word for what it is (trial 93's gap beside "build")
    # (not "eventually" or "whenever", the names of test libraries' helpers and a gem)
    ("Verifier happily accepts mixed lines\nIt completely ignores the tag and, when a "
     "line is normally formed, immediately passes it: wrong.\n",
     {"happily", "completely", "normally", "immediately", "wrong"},
     {"verifier", "accepts", "mixed", "tag", "passes"}),
    # the reporter's praise, its words about the report and the sample string (trials 72
    # and 73: pastel, zxing)
    ("Pick a bunch of colors\nThis great tool would be even more useful if `pick` took a count; "
     "hehe. A feature request: it prints Hello World in the third row.\n",
     {"great", "useful", "hehe", "feature", "hello", "world", "third"},
     {"pick", "count", "colors", "prints", "row", "bunch"}),
    # ... but a quoted praise word is a name, a quoted message keeps its words, and a pull
    # request is what a Git host's client is about
    ('Sync fails\nThe `useful` flag is ignored and it logs "failed to fetch feature requests"; '
     "listing pull requests of a merge request hangs.\n",
     set(), {"useful", "failed to fetch feature requests", "pull", "merge"}),
    # a media type's vendor tree is the reporter's header value, no module path (trial 74's
    # koa); a template's headings and a contraction's stem (its typer, its koa)
    ("Content-Type overwritten\n`ctx.set('Content-Type', 'application/vnd.myapi.v1+json')` gives "
     "application/json; I couldn't find why.\n### Privileged issue\n- [X] asked\n### Issue Content\nIt fails.",
     {"vnd/myapi/v1", "couldn", "privileged", "content"}, {"Content-Type", "json", "application"}),
    # ... its words stay words (a registry's code holds them), and a source file's path
    # through an application/ folder is a path (CodeIgniter's)
    ("unsupported manifest media type application/vnd.oci.image.index.v1+json; see application/vnd.php",
     {"vnd/oci/image/index"}, {"oci", "image", "index", "application/vnd.php"}),
    # a host before its port is no module path (trial 75's ufo)
    ("Hash lost with a port\n`parseURL('https://domain.test:3000#owo')` gives host: 'domain.test:3000#owo'",
     {"domain/test"}, {"parseURL", "host"}),
    # a citation file quoted is a path
    ("`CITATION.cff` still says 1.2.0", set(), {"CITATION.cff"}),
    # ... but a path through a folder named like a media type's is a path
    ("Users lost on save\nSaving in `model/user.py` drops the avatar and the `text/x.py` helper; "
     "sent as image/svg+xml.\n", set(), {"model/user.py", "text/x.py", "svg"}),
    # ... but a process's nice value and an icon font are the code's words
    ("The nice column shows 0\nThe NI column shows 0 for every process whose nice value is set; the "
     "awesome icons are gone too, and a request to the server fails.\n",
     {"set", "every"}, {"nice", "awesome", "request"}),
])
def test_a_reports_own_names_give_no_keywords(task, gone, kept) -> None:
    found = {k.text for k in extract_keywords(task)}
    assert not gone & found, gone & found
    assert kept <= found, kept - found


@pytest.mark.parametrize("task, kept", [
    # a sentence asking for a screenshot that names code is the reporter's
    ("Calling take_screenshot: the method should attach screenshots to the PDF but throws NullPointerException.",
     {"take_screenshot", "NullPointerException"}),
    ("ScreenshotService.capture should attach screenshots to the report but the file is empty.",
     {"ScreenshotService", "capture"}),
    ("Expected: the tool should add a screenshot of the failing test to the JUnit XML report.", {"JUnit", "xml"}),
    # a code block's last line, or a label that names no file, is no file's label
    ("Error:\n```\nTraceback (most recent call last):\nssl.SSLError\n```", {"SSLError"}),
    ("**`torch.compile`**\n```\nx = 1\n```", {"torch/compile"}),
    # a project's own module path stays (only a standard module's function goes)
    ("`django.db.models.query` drops the filter; `dateparser.date.parse` too", {"django/db/models/query",
                                                                              "dateparser/date/parse"}),
    # a route's or a Javadoc anchor's leading name and an id= value stay
    ("As documented at https://docsify.js.org/#/configuration?id=loadsidebar the option is ignored",
     {"configuration", "loadsidebar"}),
    ("see https://docs.oracle.com/HashMap.html#computeIfAbsent%28K%2Cjava.util.function.Function%29", {"computeIfAbsent"}),
    # a man page's name is no version
    ("The `git-rebase.1` man page renders wrong", {"git-rebase"}),
])
def test_a_reports_own_code_names_stay(task, kept) -> None:
    found = {k.text for k in extract_keywords(task)}
    assert kept <= found, kept - found


@pytest.mark.parametrize("task, gone, kept", [
    # names alike but for a 1 and a 2 are stand-ins (trial 69's pipx), in the title too
    ("`pipx install pkg1 pkg2` doesn't install `pkg2` if `pkg1` already installed", {"pkg1", "pkg2"},
     {"pkg", "install"}),
    ("Setting `field_1` and `field_2` on `MyModel` fails", {"field_1", "field_2"}, {"MyModel"}),
    # ... a lone numbered name, or two not counted from one, are names
    ("AutoComplete with jline3 shows hidden commands", set(), {"jline3"}),
    ("Convert `utf8` to `utf16` fails", set(), {"utf8", "utf16"}),
])
def test_numbered_stand_ins_are_no_names(task, gone, kept) -> None:
    found = {k.text for k in extract_keywords(task)}
    assert not gone & found, gone & found
    assert kept <= found, kept - found


def test_a_one_word_option_the_title_names_is_a_name_even_a_stop_words() -> None:
    # trial 71's skim: `expect` was dropped as "expected"; the fix's option file ranked 10th
    task = ("Can't --bind and --expect options be declared together?\n\nwith\n```\n... | sk --bind "
            "\"enter:ignore\" --expect \"f1,f2\"\n```\n")
    found = {k.text: k.kind for k in extract_keywords(task)}
    assert found.get("expect") == "identifier" and found.get("bind") == "identifier"


def test_a_titles_numbered_name_is_searched_whole_and_the_bodys_are_not() -> None:
    found = [k.text for k in extract_keywords("AutoComplete with jline3 shows hidden commands\n"
                                              "app1 = make(); run with python3 and field1")]
    assert "jline3" in found and "jline" in found
    assert not {"app1", "python3", "field1"} & set(found)


@pytest.mark.parametrize("task, path, gone", [
    # Rust's panic location in cargo's registry: the crate's own path, its version dropped
    ("thread 'main' panicked at /root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
     "clap_builder-4.4.16/src/parser/parser.rs:517:53:\ncalled `Option::unwrap()` on a `None` value",
     "clap_builder/src/parser/parser.rs", {"cargo", "registry", "root", "index/crates/io", "crates"}),
    # Go's module cache: the path inside the module
    ("panic: x\n\t/home/u/go/pkg/mod/github.com/spf13/cobra@v1.8.0/command.go:123 +0x1d",
     "command.go", {"home", "pkg", "github/com", "cobra"}),
    # npm's node_modules, scoped or not
    ("    at diff (/home/ci/project/node_modules/@scope/lib/src/utc.js:1:1941)", "src/utc.js",
     {"circleci", "project", "node_modules", "scope"}),
    # pytest's own frame format in site-packages
    ("/usr/local/lib/python3.8/site-packages/_pytest/assertion/rewrite.py:169: in exec_module",
     "_pytest/assertion/rewrite.py", {"usr", "site", "packages"}),
    # ... and on Windows, backslashes and all (trial 69: a Windows path's words were keywords)
    ("  C:\\Users\\me\\AppData\\Local\\Python38\\lib\\site-packages\\_pytest\\tmpdir.py:12: in getbasetemp",
     "_pytest/tmpdir.py", {"users", "appdata", "local", "site", "packages"}),
    # a compiler's error in the reporter's checkout: a path the tree may end
    ("/home/u/json/include/nlohmann/detail/conversions/from_json.hpp:12:3: error: no match",
     "nlohmann/detail/conversions/from_json.hpp", set()),
])
def test_a_stack_frame_or_error_location_outside_the_root_is_a_path(task, path, gone) -> None:
    kws = extract_keywords(task)
    assert path in texts(kws, "path")
    assert not gone & {normalize(k.text) for k in kws}


def test_an_installed_copys_path_is_the_path_inside_its_package() -> None:
    assert installed_tail("/r/.cargo/registry/src/github.com-1ecc6299db9ec823/tokio-1.2.0-alpha.1/src/lib.rs") \
        == "tokio/src/lib.rs"
    assert installed_tail("/h/.cargo/git/checkouts/tokio-2b4ef8a8c4f5b9b1/1a2b3c4/tokio/src/lib.rs") == "tokio/src/lib.rs"
    assert installed_tail("/h/go/pkg/mod/google.golang.org/grpc@v1.50.1/internal/transport/x.go") \
        == "internal/transport/x.go"
    assert installed_tail("/a/node_modules/b/node_modules/c/lib/x.js") == "lib/x.js"  # the last install dir
    assert installed_tail("/p/lib/python2.7/site-packages/requests-2.3.0-py2.7.egg/requests/models.py") \
        == "requests/models.py"
    assert installed_tail("/home/me/project/src/x.rs") is None
    assert installed_tail("/a/node_modules/b") is None  # the package itself, no file of it


def test_a_file_names_extension_in_pasted_code_is_no_keyword() -> None:
    task = 'Running `flask run --exclude-patterns "*.tmp"` (same with `--extra-files a.py`) fails'
    found = _words(task)
    assert not {"tmp", "py"} & found and {"exclude", "patterns", "extra", "files"} <= found
    # an attribute is no extension: request.args keeps args
    assert "args" in _words("read `request.args` in `views.py`")


def test_a_decorator_is_no_module_path() -> None:
    kws = extract_keywords("a teardown registered with `@app.teardown_request` stops the others; see django.db.models.query")
    assert "app/teardown_request" not in texts(kws, "path") and "django/db/models/query" in texts(kws, "path")
    assert "teardown_request" in texts(kws, "identifier")


def test_a_member_of_a_variable_the_tasks_code_assigns_is_no_module_path() -> None:
    task = ("Lists decode wrong from windows-1251 documents\n\n"
            "    let data: Root = quick_xml::de::from_reader(bytes.as_ref()).unwrap();\n"
            "    println!(\"{:?}\", data.list);\n\n"
            "```python\nureg = pint.UnitRegistry()\nureg.define(\"frac = 0.01\")\n```\n"
            "The reader in quick_xml.reader.state is fine.")
    paths = texts(extract_keywords(task), "path")
    assert "data/list" not in paths and "ureg/define" not in paths
    assert "quick_xml/reader/state" in paths
    # ... unless the task imports it too: then it is a module, however it is assigned
    task = ("Crash in django.utils.http.parse_http_date\n\n```python\ndjango = None\n"
            "from django.utils.http import parse_http_date\n```\n")
    assert {"django/utils/http/parse_http_date", "django/utils/http"} <= set(texts(extract_keywords(task), "path"))


def test_a_quoted_core_dumped_is_the_tasks_subject() -> None:
    found = _words("The jobs list prints `(core dumped)` for a killed job")
    assert {"core", "dumped"} <= found


@pytest.mark.parametrize("report, gone, kept", [
    ("thread 'main' panicked at src/view.rs:9:5:\nindex out of bounds: the len is 1 but the index is 1\n"
     "with --only pid and --tree", {"but the index is", "the len is", "with --only pid and --tree"},
     {"tree", "pid", "index", "bounds"}),
    ("panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\n"
     "main.parseHeader()", {"index out of range"}, {"parseHeader", "index", "range"}),
    ("TypeError: Cannot read property 'getTime' of null in the range picker", {"cannot read property"},
     {"getTime", "property"}),
    ("Uncaught TypeError: Cannot read properties of undefined (reading 'isValid')",
     {"cannot read properties of undefined"}, {"isValid"}),
    ("RecursionError: maximum recursion depth exceeded while calling a Python object in Mul.flatten",
     {"maximum recursion depth exceeded while calling a python object"}, {"flatten", "recursion", "depth"}),
    # (trial 84: chalk's "navigator is not defined" was the first keyword and a gap)
    ("ReferenceError: navigator is not defined when importing chalk\n\n    ReferenceError: navigator is not defined",
     {"navigator is not defined", "navigator is not defined when importing chalk"}, {"navigator", "chalk"}),
    ("NameError: name 'sympify_expr' is not defined", {"name 'sympify_expr' is not defined"}, {"sympify_expr"}),
    ("Uncaught TypeError: this.$refs.picker.open is not a function", {"this.$refs.picker.open is not a function"},
     {"picker", "open"}),
])
def test_a_runtimes_own_message_is_no_message_to_search_but_its_words_stay(report, gone, kept) -> None:
    # (trial 81: Rust's bounds-check panic gave "but the index is" as the first keyword and a gap)
    found = {t.lower() for t in _texts(report)}
    assert not gone & found
    assert {k.lower() for k in kept} <= found
    # ... while a program's own message is searched as written
    assert any(t.lower().startswith("cannot parse the header block") for t in _texts(
        "Error: cannot parse the header block when --only is given"))


def test_a_runtime_message_the_task_quotes_or_only_holds_keeps_its_keywords() -> None:
    # (an adversarial check: a JS engine's task about its own "Maximum call stack size
    # exceeded", a Rust std fork's about the bounds message, a task that is the message)
    quoted = _texts('The message "index out of bounds: the len is 3 but the index is 5" is wrong in core::slice')
    assert "index out of bounds" in quoted
    assert {"maximum", "call", "stack", "size", "exceeded"} <= set(_texts("Maximum call stack size exceeded"))
    # ... and a name that starts where the message ends is whole
    assert "nullableUser" in _texts("TypeError: Cannot read property 'id' of nullableUser in UserCard")
    assert "overflowing_add" in _texts("thread 'main' panicked: attempt to add with overflowing_add")


def test_a_runtimes_quotes_are_no_reporters_and_the_programs_message_around_it_stays() -> None:
    # (a second adversarial check: Rust's panic before 1.73 quotes its message, as a
    # Python repr and a JSON log do; a program's own message beside a runtime's stays)
    found = {t.lower() for t in _texts(
        "thread 'main' panicked at 'index out of bounds: the len is 1 but the index is 1', src/view.rs:9:5")}
    assert not {"but the index is", "index out of bounds"} & found and "src/view.rs" in found
    assert not any("recursion depth" in t for t in _texts(
        "RecursionError('maximum recursion depth exceeded while calling a Python object')"))
    assert "request handler crashed with" in _texts(
        "2024-01-02 10:00:00,123 ERROR [main] o.a.c.Server - request handler crashed with "
        "Maximum call stack size exceeded")
    assert "while parsing the config header" in _texts(
        "panic: runtime error: index out of range [3] with length 3 while parsing the config header")
    # ... and a program's message that starts as V8's does is the program's
    assert "Cannot read properties file" in _texts("ERROR: Cannot read properties file /etc/app/app.properties")
    # ... and the name a runtime's message is about stays a keyword, however short or
    # common (an adversarial check: "got", "ky" were lost with the message)
    for task, name in (("TypeError: got is not a function", "got"), ("TypeError: ky is not a function", "ky"),
                       ("TypeError: (0 , _react.useId) is not a function", "useId"),
                       ("NameError: global name 'xyz_abc' is not defined", "xyz_abc")):
        found = _texts(task)
        assert name in found and not any(" is not " in t for t in found), (task, found)
    # ... but not a minified letter or what the language calls every value (a second
    # adversarial check: ``default``, ``value`` as names took a ranking's confidence down)
    for task, junk in (("TypeError: t.default is not a function", "default"), ("TypeError: e is not a function", "e"),
                       ("TypeError: (intermediate value) is not iterable", "value"),
                       ("TypeError: object null is not iterable", "null"),
                       ("TypeError: x.then is not a function", "then")):
        assert not any(k.text == junk and k.kind == "identifier" for k in extract_keywords(task)), task
    # ... and a console's or a log's line is the runtime's, quoted or not (its quote is the
    # reporter's copy of the line: the message was a gap no file holds)
    for task in ('I get "Uncaught TypeError: picker.open is not a function" in the console',
                 'crashes with "TypeError: Cannot read property \'length\' of undefined" on hover'):
        assert not any(" is not " in t or "cannot read" in t.lower() for t in _texts(task)), _texts(task)
    assert not any("is not defined" in t for t in _texts("Uncaught ReferenceError: process is not defined"))
    # ... nor is the error's class that heads the runtime's message (chalk's gaps listed
    # ``ReferenceError``), unless the task names it elsewhere too
    assert "referenceerror" not in _words("ReferenceError: navigator is not defined when importing chalk")
    assert "nameerror" not in _words("NameError: name 'cotm' is not defined")
    assert "typeerror" not in _words("Uncaught TypeError: picker.open is not a function")
    assert "typeerror" in _words("A TypeError is raised: TypeError: foo.bar is not a function")
    # ... and the console's "Uncaught" is no word of the code; a report about uncaught errors keeps it
    assert "uncaught" not in _words("Uncaught TypeError: picker.open is not a function")
    assert "uncaught" not in _words('I get "Uncaught TypeError: picker.open is not a function"')
    assert "uncaught" in _words("Uncaught exceptions in workers are swallowed by the pool")
    # ... as is one that says a name is not defined, with no runtime's error class before it
    assert "option --depth is not defined for this command" in _texts(
        "error: option --depth is not defined for this command")


def test_a_pasted_diffs_header_names_its_files_without_gits_a_and_b():
    task = ("Accessing slices fails\n\n```go\ndiff --git a/viper_test.go b/viper_test.go\nindex c41a1e7..536a53d 100644\n"
            "--- a/viper_test.go\n+++ b/viper_test.go\n@@ -1,2 +1,3 @@\n+  originalNetwork: syfy\n```\n"
            "A path of a directory named a stays: see a/b.py\n")
    paths = [k.text for k in extract_keywords(task) if k.kind == "path"]
    assert "viper_test.go" in paths and "a/b.py" in paths
    assert not any(p.startswith(("a/viper", "b/viper")) for p in paths)


def test_a_protocol_relative_url_is_a_url_not_a_module_path() -> None:
    # An HTTP header's ``Location: //failover.example.com/new_thing`` made the path keyword
    # failover/example/com (listed as a gap); a comment's ``//obj.method()`` stays code.
    texts = {k.text for k in extract_keywords(
        "The redirect says\nLocation: //failover.example.com/new_thing_1513\nand the script "
        "loads //cdn.example.com/lib.js; in code: //obj.method()")}
    assert not {"failover/example/com", "failover", "example", "cdn"} & texts, texts
    assert {"new_thing_1513", "lib", "obj", "method"} <= texts


def test_names_the_tasks_own_code_defines_are_marked_and_kept_through_state() -> None:
    task = ("The Mathematica printer MCodePrinter ignores floats\n\nAdd these to MCodePrinter:\n\n"
            "    def _print_Float(self, expr):\n        return str(expr)\n\n"
            "```go\nfunc (s *Server) CloseIdle() {}\n```\n```rust\npub(crate) fn drain_all(&mut self) {}\n```\n")
    kws = {k.text: k for k in extract_keywords(task)}
    assert kws["_print_Float"].task_defines
    assert kws["CloseIdle"].task_defines and kws["drain_all"].task_defines
    assert not kws["MCodePrinter"].task_defines          # named, not defined, by the task
    again = Keyword.from_json(kws["_print_Float"].to_json())
    assert again is not None and again.task_defines


def test_a_path_read_from_a_dotted_name_stays_one_across_cycles() -> None:
    """The loop's next call reads its query from the state file: a dotted name's path must
    come back as one (paths.member_module), a folder's path must not become one."""
    kws = {k.text: k for k in extract_keywords("Crash in django.utils.http.parse_http_date; see lib/tools/run.py")}
    assert kws["django/utils/http/parse_http_date"].dotted and not kws["lib/tools/run.py"].dotted
    for kw in kws.values():
        again = Keyword.from_json(kw.to_json())
        assert again is not None and again.dotted == kw.dotted


def test_a_word_with_a_bound_prefix_is_one_word_and_the_prefix_alone_none():
    # a trial's "Sub-list", "non existent" and "<pre>": ``sub``, ``non`` and ``pre`` counted
    # ``substring``, ``None`` and ``prevCapZero``
    kws = {k.text: k for k in extract_keywords(
        "Sub-list items are wrapped in blocks\n\nfd fails when the cwd is non existent, and a "
        "pre-release or multi-line value is dropped; non-boolean flags too.")}
    assert {"sub-list", "non-existent", "pre-release", "multi-line", "non-boolean"} <= set(kws)
    assert not {"sub", "non", "pre", "multi"} & set(kws)
    assert {b"sublist", b"sub_list"} <= set(kws["sub-list"].needles)
    assert {"list", "existent", "release", "line", "boolean"} <= set(kws)  # the word after it stays
    # a prefix alone, or a word that only starts like one, stays as it was
    assert {"prefix", "subtitle"} <= _words("The prefix and the subtitle are dropped")
    # joined by a blank in the title, it weighs as a title's word (an adversarial check)
    w = _weights("Non existent key crashes the loader\n\nThe loader crashes.")
    assert w["non-existent"] == w["existent"] > 0.3
    assert "non-non" not in _words("non non non values")


def test_a_machines_collapsed_diagnostics_struck_text_and_a_listing_give_no_keyword():
    # trials: picom's <details> diagnostics (XRandR, GeForce, NVIDIA), black's struck
    # "INTERNAL ERROR", lf's ``ls -la`` listing (drwxr, root), textual's "Textual Diagnostics"
    task = ("Relative @include path breaks with symlinks\n\n<details>\n<summary>Diagnostics</summary>\n\n"
            "### Extensions:\n* XRandR: Yes\n* GL renderer: NVIDIA GeForce RTX 2070 SUPER/PCIe\n</details>\n\n"
            "<details><summary>Stack trace</summary>\n\nat resolve_include_dir (config.c:12)\n</details>\n\n"
            "~The resulting error is:~\n~> INTERNAL ERROR: cannot format~\nand ~~RuntimeFault~~ too.\n\n"
            "```\ndrwxr-xr-x 2 root root 4096 Sep  9  2021 public\n```\nThe listing hides inaccessible folders.\n\n"
            "# Textual Diagnostics\n\n| Name | Value |\n|---|---|\n| Implementation | CPython |\n")
    texts = _words(task)
    assert not {"xrandr", "geforce", "nvidia", "internal", "runtimefault", "drwxr", "root", "cpython"} & texts
    assert {"resolve_include_dir", "symlinks", "listing", "inaccessible", "include"} <= texts
    # an adversarial check: an unclosed block swallowed the rest; a backtrace or a warning
    # under "Diagnostics and backtrace" was dropped; ``~~`` in code and a ``~~~~`` fence erased
    kept = _words("Crash parsing nested tuples\n\n<details><summary>Environment</summary>\nOS: Arch\n\n"
                  "Run `parse_nested_tuple` on the input.\n\n<details><summary>Diagnostics and backtrace</summary>\n\n"
                  "#0 win_update_bounding_shape (../src/win.c:88)\n</details>\n\n<details><summary>Diagnostics</summary>\n"
                  "warning: unused variable in check_pattern_bindings\n</details>\n\n```js\nconst half = ~~(width / 2);\n```\n"
                  "~~~~\nlet quarter_width = 1;\n~~~~\n")
    assert {"parse_nested_tuple", "win_update_bounding_shape", "check_pattern_bindings", "half", "width",
            "quarter_width"} <= kept
    # a home directory's tilde, or an operator's, is no strikethrough
    assert {"loader", "drops", "negation", "operator"} <= _words(
        "Config lost\n\n~/.cache/app is read, then the loader drops ~\nThe ~ operator and ~x negation both fail ~")


def test_the_names_every_handler_gives_its_values_are_no_module():
    # a trial's ``err.config`` was a gap as the path err/config, ``req.url`` as req/url
    kws = _texts("Retry loops\n\nIn the interceptor I run `axios.request(err.config)`; `req.url` and "
                 "`res.destroy()` differ.")
    assert not {"err/config", "req/url", "res/destroy"} & set(kws)
    assert {"config", "url", "destroy"} <= {k.lower() for k in kws}


def test_a_family_of_numbered_files_a_timestamp_and_an_odd_cased_placeholder_give_one_keyword_or_none():
    # trials: a pasted listing's file_1.txt ... file_20.txt took twelve of the 24 keywords
    # shown; ``2019-05-25T06:58:00`` gave ``T06``; ``foO-baR-baZ`` gave ``foO``; "Sorry for ..."
    listing = "  ".join(f"file_{i}.txt" for i in range(1, 21))
    kws = _texts("`--grid` does not work when piped\n\nSorry for the noise.\n\n```\n$ eza --grid ./test\n"
                 f"{listing}\n```\nSaved as `2019-05-25T06:58:00.103904+00:00`, e.g. `foO-baR-baZ`; see "
                 "src/options/view.rs and src/output/grid.rs.\n")
    assert [k for k in kws if k.startswith("file_")] == ["file_1.txt"]
    assert {"src/options/view.rs", "src/output/grid.rs", "grid", "piped"} <= set(kws)
    assert not {"T06", "foO", "sorry"} & set(kws)
    # ... but three files alike are as often the tree's own, and a name with a word in it
    # is a name (an adversarial check: sha256.c, the broken one, and FooBar were lost)
    kws = _texts("FooBar digest wrong\n\nsrc/crypto/sha1.c and src/crypto/sha512.c agree, but "
                 "src/crypto/sha256.c returns a wrong digest in `FooBar`; see FooBaz.")
    assert {"src/crypto/sha1.c", "src/crypto/sha512.c", "src/crypto/sha256.c", "FooBar"} <= set(kws)
    assert "FooBaz" not in kws
    # a logger's time still marks its level as the logger's (no ``ERROR`` constant)
    assert "ERROR" not in _texts("Span leaks\n\n2022-03-01T12:00:00.123Z ERROR tracing: span closed twice\n")


def test_a_common_word_quoted_as_a_member_called_is_a_name():
    # a trial's only code name, Go's `zap.Time()`, was dropped as the filler word "time"
    assert "Time" in _texts("Incorrect value with zap.Time()\n\nI log with `zap.Time()` and get 1754.")
    assert "Time" in _texts("Wrong\n\nCalling `logger.With(f).Time(k, v)` panics.")
    # not outside code, not short, not a literal
    assert not {"time", "do", "true"} & _words("Wrong at that time\n\nIt fails `p.do()` and `x.true()`.")
    # a language's own methods the prose says too (an adversarial check: ``then``,
    # ``expect`` at full weight)
    assert not {"then", "expect"} & _words("Fetch then fails\n\nI expect `api.fetch(u).then(r => r.json())` "
                                           "and `toml::from_str(&s).expect(\"bad\")` to work.")


@pytest.mark.parametrize("task,declared,not_declared", [
    # A trial's Go reproduction declared ``type Payload struct {``: listed as a gap.
    ("cmp.Diff prints []byte as hex\n\n```go\ntype Payload struct {\n\tBody []byte\n}\n```\n"
     "```rust\npub struct OptsHolder {}\nenum WireMode { A }\n```\n```c\ntypedef struct ring_buf {} ring_t;\n```\n"
     "```ts\ninterface PropsShape {}\ntype AliasName = string\n```\nOutput:\n```\n  main.Payload{\n- \tBody: nil,\n```\n"
     "but DiffReporter is not declared here",
     ("Payload", "OptsHolder", "WireMode", "ring_buf", "PropsShape", "AliasName"), ("DiffReporter",)),
    # a trial's report pasted ``enum class YesOrNoOrEmpty(...)`` and ``data class Example(``:
    # Kotlin's and Java's class modifiers declare the report's own types
    ("Coercion of an empty string\n\n```kotlin\nenum class YesOrNoMaybe(val value: String) {\n    YES(\"yes\");\n}\n"
     "data class ExampleHolder(\n    val example: YesOrNoMaybe\n)\noverride fun readHolder(x: Int) = x\n```\n"
     "```java\npublic abstract class BaseReaderThing extends JsonDeserializer {\n}\n```\n"
     "Reading it through ObjectMapperFacade fails.\n",
     ("YesOrNoMaybe", "ExampleHolder", "readHolder", "BaseReaderThing"), ("ObjectMapperFacade", "JsonDeserializer")),
    # a trial's unfenced C++ reproduction, its body's brace on the next line
    ("Long key not handled\n\nint main(void)\n{\n    YAML::Node nn;\n    return 0;\n}\n\nstatic Node* build_tree(int n)\n"
     "  {\n  return 0;\n}\nThen LoadDocument(nn) fails.\n",
     ("main", "build_tree"), ("LoadDocument",)),
    # ... but not a sentence over a pasted JSON body (an adversarial check), and in a quote
    ("Webhook retried\n\nWhen the delivery is retried the server sends this payload (abridged)\n{\n"
     '  "action": "opened"\n}\n\n> public void closeAll()\n> {\n>   pool.close();\n> }\n',
     ("closeAll",), ("payload",)),
])
def test_types_the_tasks_code_declares_are_its_own(task, declared, not_declared) -> None:
    kws = {k.text: k for k in extract_keywords(task)}
    for name in declared:
        assert name in kws and kws[name].task_defines, name
    for name in not_declared:
        assert not kws[name].task_defines, name


def test_c_family_definitions_in_the_tasks_code_are_its_own() -> None:
    task = ("Reading a pty reports EOF early with uv_read_start\n\n```c\n"
            "static void on_read_cb(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {\n"
            "  if (nread < 0) uv_close_handle(s);\n  else if (nread > 0) {\n    count_bytes(nread);\n  }\n}\n"
            "int main(void) {\n  return run_repro(loop) ;\n}\n```\n"
            "```java\npublic static void parseAll(String[] args) throws Exception {\n}\n```\n")
    kws = {k.text: k for k in extract_keywords(task)}
    assert kws["on_read_cb"].task_defines and kws["parseAll"].task_defines
    assert not kws["uv_read_start"].task_defines and not kws["uv_close_handle"].task_defines
    assert not kws["count_bytes"].task_defines  # a call inside an `else if (...) {` block


def test_names_the_tasks_code_assigns_are_its_own_but_not_names_in_prose() -> None:
    # A pasted enum's members and a reproduction's variables (a trial's ``TOP_RIGHT`` and
    # ``seen_host`` were listed as gaps); a prose line shaped like an assignment is prose.
    task = ("Enum with tuple values validates wrong\n\nLegacyMode = on in our config breaks it.\n\n"
            "```python\nclass Corner(Point, Enum):\n    TOP_RIGHT = (1, 1)\n"
            "    BOTTOM_LEFT: Point = (0, 0)\n```\n\n    seen_host := lookup_host(req)\n\n"
            "```js\nconst appRouter = express.Router()\nif (ready_flag == true) start_server()\n```\n"
            "Then `Corner.TOP_RIGHT` is not kept.\n")
    kws = {k.text: k for k in extract_keywords(task)}
    assert all(kws[n].task_defines for n in ("TOP_RIGHT", "BOTTOM_LEFT", "seen_host", "appRouter")), kws
    assert not any(kws[n].task_defines for n in ("LegacyMode", "lookup_host", "ready_flag") if n in kws)



def test_an_environment_setting_in_a_shell_line_is_not_the_tasks_own() -> None:
    # ``RUST_LOG=trace cargo run`` sets the program's own setting; ``LIMIT = 5`` in code
    # is the reporter's constant.
    task = "Logs vanish with RUST_LOG\n\n```sh\nRUST_LOG=trace cargo run\n```\n```python\nBATCH_LIMIT = 5\n```\n"
    kws = {k.text: k for k in extract_keywords(task)}
    assert not kws["RUST_LOG"].task_defines and kws["BATCH_LIMIT"].task_defines


def test_a_rust_match_or_a_go_closure_in_the_tasks_code_defines_nothing() -> None:
    task = ("parse_manifest fails on an empty file\n\n```rust\nlet m = match parse_manifest(&text) {\n"
            "    Ok(m) => m,\n};\n```\n```go\ngo func() {\n\trunWorker(ch)\n}()\n```\n")
    kws = {k.text: k for k in extract_keywords(task)}
    assert not kws["parse_manifest"].task_defines


def test_long_runs_of_spaces_around_an_assignments_colon_are_read_in_linear_time() -> None:
    # A name, 50,000 spaces, a colon, 50,000 more: the assignment pattern's type part once
    # tried every split of the runs (minutes); now its spaces are bounded.
    task = "Parser hangs\n\n```\nx" + " " * 50000 + ":" + " " * 50000 + "\n```\n"
    assert extract_keywords(task)


def test_a_long_run_of_spaces_after_throws_is_read_in_linear_time() -> None:
    # ``throws`` then 50,000 spaces: the definition pattern once tried every split of the
    # run between its two parts (about 15 s here); now one pass.
    task = "Parser hangs\n\n```java\nvoid parseAll() throws" + " " * 50000 + "x\n```\n"
    assert extract_keywords(task)


def test_an_acronyms_plural_is_a_word_not_a_code_name() -> None:
    # "PINGs" searched as a code name (needles pings, pin_gs) matched nothing and was
    # broadened into synonyms of a health check; URLs and IDs are prose as well.
    kws = {k.text: k for k in extract_keywords(
        "Reply callback for PING never runs\n\nIf I send several PINGs, or fetch URLs by IDs, "
        "the replies pile up; getURLs and HTTPServer are names of my code.")}
    assert not {"PINGs", "URLs", "IDs"} & {t for t, k in kws.items() if k.kind == "identifier"}
    assert kws["getURLs"].kind == "identifier" and kws["HTTPServer"].kind == "identifier"


def test_prose_between_two_quoted_hosts_is_no_quoted_message() -> None:
    # The hosts go (they name no code); the quotes around them must still pair as written.
    task = ('WebSocket Host header carries the default port\n\nOur proxy treats "example.com:443" as a '
            'different virtual host than "example.com", and "https://example.com/ws" as another one than '
            '"https://example.com:443/ws".')
    texts = {k.text for k in extract_keywords(task)}
    assert not any(k.kind == "message" for k in extract_keywords(task)), texts
    assert "as a different virtual host than" not in texts and "as another one than" not in texts


def test_a_quoted_message_ending_in_a_url_keeps_its_words() -> None:
    msgs = [k.text for k in extract_keywords('Install fails\n\nit says "could not resolve host '
                                             'api.example.com" and "unable to access https://github.com/" then')
            if k.kind == "message"]
    assert sorted(msgs) == ["could not resolve host", "unable to access"], msgs


def test_a_long_token_joined_by_plus_signs_is_read_in_linear_time() -> None:
    # 64 KB of ``a+a+...``: the host pattern once read to the token's end from every ``+``
    # (3.8 s here); an address and a host are still taken out.
    assert extract_keywords("Crash on long input\n\n" + "a+" * 32000)
    text, _ = strip_urls("mail a+b@example.com or api.example.com:443 now")
    assert "example" not in text and "mail" in text and "now" in text


def test_a_long_run_of_dotted_plus_joined_names_is_read_in_linear_time() -> None:
    # 99 KB of ``+a.``: the reporter's-file pattern once started after every ``+`` and read
    # to the run's end (2.5 minutes)
    import time
    start = time.perf_counter()
    extract_keywords("Crash on long input\n\n" + "+a." * 33000 + "\n" + "a+" * 50000)
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize("task, gone, kept", [
    # a Windows install directory whose folders' names hold blanks, in any case
    ("crash in C:\\Program Files\\Microsoft VS Code\\resources\\app\\out\\main.js: error",
     {"program", "files", "microsoft"}, {"resources/app/out/main.js"}),
    ("c:\\program files\\nodejs\\node_modules\\npm\\lib\\cli.js breaks", {"program", "files", "nodejs", "npm"},
     {"lib/cli.js"}),
    ("at C:\\Users\\John Smith\\proj\\src\\app.py line 3 it crashes", {"users", "john", "smith"},
     {"proj/src/app.py"}),
    # a package's dotted name is no reporter's archive
    ("java.util.zip and apache.commons.compress.archivers.zip fail on FOSS-Cannon-v1.3.zip", {"foss", "cannon"},
     {"commons", "compress", "archivers"}),
    # a call in code is no machine's `key (how to get it): value`
    ("```\nif version(installed_dist) == latest_release_tag: skip_upgrade_notice(installed_dist)\n```",
     set(), {"skip_upgrade_notice", "installed_dist"}),
    # themed prompts: words between host and mark, the mark repeated or first, oh-my-zsh's
    ("```\nemily@yuyuko ~/code (main) \u276f gdu\nemily@yuyuko:~/code \u276f\u276f\u276f gdu --flag\n"
     "\u03bb emily@yuyuko ~ \u00bb gdu\n\u279c  blackrainbow git:(master) \u2717 gdu -x\n```",
     {"emily", "yuyuko", "blackrainbow", "master", "main"}, {"gdu"}),
    # a standard's versions, or a run past 2, are names, not stand-ins
    ("Hangs when both http1 and http2 are enabled", set(), {"http1", "http2"}),
    ("`Vector1`, `Vector2` and `Vector3` lose their z", set(), {"Vector1", "Vector3"}),
])
def test_a_reports_machine_files_and_prompts_go_and_its_code_stays(task, gone, kept) -> None:
    found = {k.text for k in extract_keywords(task)} | _words(task)
    assert not gone & found, gone & found
    assert kept <= found, kept - found


def test_hex_colours_placeholders_and_a_title_label_are_no_keywords() -> None:
    # A trial's report: ``#DA627D`` in its title was the first keyword, ``#9A348E`` gave
    # ``A348E``, ``[foo](fg:prev_fg)`` ranked a file for its foo, ``Title:`` gave title.
    task = ("Title: An empty styled group like `[](bg:#DA627D)` is ignored\n\n"
            "`[](fg:#9A348E)[foo](fg:prev_fg)` prints `foo` with the default colour; see #1234.\n")
    texts = {k.text for k in extract_keywords(task)}
    assert not {"DA627D", "A348E", "9A348E", "foo", "title"} & texts, texts
    assert {"prev_fg", "styled", "empty"} <= texts
    # (A hex constant's digits stay: ``0xFF`` gives ``xFF``, which the parser's ``0xff`` holds.)
    assert "xFF" in {k.text for k in extract_keywords("The marker byte 0xFF is read as a size")}


def test_a_commits_name_gives_no_keyword_and_hex_looking_names_stay() -> None:
    # A trial's fzf report: "jumpy ... behavior that began with 92bfe68c7419" gave ``bfe``.
    task = ("Jumpiness with `--no-sort` flag\nThe listed items are jumpy since 92bfe68c7419 "
            "(fzf 0.70.0 (b80059e2)); see https://github.com/o/r/commit/48ef15fb47395dcb57900cd7c247f2dd5af2d5cd\n"
            "`deadbeef` and `Cafe1234` are names of the code.")
    texts = {k.text for k in extract_keywords(task)}
    assert not {t for t in texts if any(h in t.lower() for h in ("bfe", "b80059e2", "48ef15", "fb47"))}, texts
    assert {"jumpy", "no-sort", "deadbeef", "Cafe1234"} <= texts, texts


def test_encoded_data_gives_no_keyword_and_names_with_digits_stay() -> None:
    # Trial 77's age report pasted an armored ciphertext and a public key: eight base64
    # lines became keywords and seven of them gaps.
    task = ("\"invalid armor closing line\" on inputs with specific lengths\n```\n"
            "Public key: age1c73ql4n652jz792gwfvyxx53086kyfu95p9t458pqhk8te85yg2qpwcfqg\n"
            "-----BEGIN AGE ENCRYPTED FILE-----\n"
            "YWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IFgyNTUxOSBIZlV5Ly8yL05tYVZ5ZnJG\n"
            "eMFGurvx6Y9ylAQjIV93WwSJqWDVraeIRpzZfXWeF+yPszZvT75GjNuJuZjsoKo=\n"
            "-----END AGE ENCRYPTED FILE-----\n```\n"
            "`testBase64EncodeUTF8String` fails, see /usr/local/lib/python3.8/base64.py and "
            "HTTPSConnectionPool2Manager.\n")
    texts = _texts(task)
    assert not [t for t in texts if any(p in t.lower() for p in ("ywdl", "emfg", "yps", "gwfv", "kyfu", "c73"))], texts
    assert {"invalid armor closing line", "armor", "testBase64EncodeUTF8String",
            "HTTPSConnectionPool2Manager"} <= set(texts), texts
    assert any("base64.py" in t for t in texts), texts
    # (the adversarial check: SIMD, graphics and fp8 names read in few words but carry no
    # base64 mark; a web token and a key after ``=`` are data)
    for name in ("I32x4TruncSatF64x2UZero", "eA2B10G10R10UnormPack32", "glUniformMatrix2x3fv",
                 "semFloat8E4M3B11FNUZ", "CSSValue"):
        assert name in _texts(f"Operator::{name} is not validated in org/w3c/dom/css/CSSValue"), name
    jwt = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
           "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c is rejected by verify_token; "
           "token=ZmRhVjlLeVJNK3lhU2oyV1crSmFNeUs2ZkI0CkRtY0Rh too")
    assert set(_texts(jwt)) <= {"verify_token", "rejected", "verify", "token"}, _texts(jwt)


def test_keyword_arguments_and_configuration_keys_are_not_the_tasks_own() -> None:
    # ``max_redirects=5,`` on a call's continuation line is the library's name (a gap
    # when the library lacks it: a feature request); so is a key of a TOML block.
    task = ("Allow max_redirects on Session.get\n\n```python\nresp = session.get(\n    url,\n"
            "    max_redirects=5,\n    verify_hostname=False)\n```\n```toml\nasyncio_mode = \"auto\"\n```\n")
    kws = {k.text: k for k in extract_keywords(task)}
    assert not any(kws[n].task_defines for n in ("max_redirects", "verify_hostname", "asyncio_mode") if n in kws)
    assert "verify_hostname" in kws and "asyncio_mode" in kws


def test_a_name_may_follow_a_hash_and_subject_may_be_a_class() -> None:
    texts = {k.text for k in extract_keywords("Subject: next() called after complete()\n\nThe `#facade` selector "
                                              "and `Subject` misbehave")}
    assert "Subject" in texts and "facade" in texts


def test_a_web_word_is_looked_up_in_the_prose_once_however_often_the_task_holds_it(monkeypatch) -> None:
    """A long log where ``http`` occurs only in URLs and names looked the word up in the
    whole prose at every occurrence: a 740 KB task took two minutes (a tester's)."""
    from agentic_search_skill import query
    calls = []
    real = query._in_text
    monkeypatch.setattr(query, "_in_text", lambda w, text: calls.append(w) or real(w, text))
    query.extract_keywords("Http2Stream reset, see https://a.b/c\n" * 500)
    assert calls.count("http") <= 1


def test_an_escaped_newline_before_a_name_is_no_part_of_it() -> None:
    # A trial's Rust test string ``"Some(\nNoneSelected)"`` made the keyword ``nNoneSelected``.
    texts = {k.text for k in extract_keywords('from_str("Some(\\nNoneSelected)\\tWireMode") fails\n'
                                              '..\\new_dir\\Tool.exe')}
    assert {"NoneSelected", "WireMode", "new_dir"} <= texts and not {"nNoneSelected", "tWireMode"} & texts


def test_a_drawn_tables_header_counts_as_words_and_constants_elsewhere_stay() -> None:
    task = ("Empty tables lose their bottom border with DEBUG on\n```\n"
            "\u256d\u2500\u2500\u252c\u2500\u2500\u256e\n\u2502 ID \u2502 DIALER \u2502 STATUS \u2502\n```")
    got = {(k.text, k.kind) for k in extract_keywords(task)}
    assert ("DEBUG", "identifier") in got
    assert ("dialer", "word") in got and ("DIALER", "identifier") not in got



def test_a_string_the_tasks_own_code_prints_is_no_message() -> None:
    task = ("Switch and var\n\n`var` is not allowed in this case:\n```\ncase Circle(var radius) -> {\n"
            "    System.out.println(\"Area of Circle: \" + area);\n    print('Area of the square')\n"
            "    fmt.Fprintf(os.Stderr, \"could not read the shape\")\n}\n```\n"
            "The compiler says \"var is not allowed here\".\n")
    texts = _texts(task)
    for printed in ("Area of Circle", "Area of the square", "could not read the shape"):
        assert printed not in texts, printed
    assert "var is not allowed here" in texts


def test_a_pasted_report_of_versions_gives_no_keyword() -> None:
    task = ("add: file names with a colon fail\n\n### Environment information\n\n**Output of `dvc doctor`:**\n\n"
            "```console\nDVC version: 2.38.1 (conda)\n---------------------------------\n"
            "Platform: Python 3.11.0 on macOS-13.1-arm64-arm-64bit\nSubprojects:\n\tdvc_data = 0.28.4\n"
            "\tdvc_objects = 0.14.0\nSupports:\n\thttp (aiohttp = 3.8.3, aiohttp-retry = 2.8.3),\n"
            "Caches: local\nRemotes: None\n```\n")
    kws = {k.text for k in extract_keywords(task)}
    assert not kws & {"dvc_data", "dvc_objects", "aiohttp", "Platform", "conda", "caches", "remotes"}, kws
    assert "colon" in kws


def test_code_with_numbers_and_a_traceback_are_no_report_of_versions() -> None:
    code = ("Slow fit\n\n```python\nx = fit_curve(1.5, 2.5)\ny = fit_curve(3.5, 4.5)\nz = scale_all(5.5)\n```\n"
            "```\nTraceback (most recent call last):\n  File \"/usr/lib/python3.8/site.py\", line 1, in <module>\n"
            "ValueError: bad 1.2.3 and 4.5.6 and 7.8.9\n```\n")
    idents = texts(extract_keywords(code), "identifier")
    assert "fit_curve" in idents and "scale_all" in idents


@pytest.mark.parametrize("link", [
    "refer our [Contributing](.github/CONTRIBUTING.md) section",
    "see https://github.com/o/r/blob/main/CONTRIBUTING.md#setup first",
    "and the https://example.org/docs/CODE_OF_CONDUCT.html too",
])
def test_a_templates_link_to_the_contributors_guide_gives_no_name(link) -> None:
    kws = extract_keywords("Parser drops the last row\n\n" + link)
    names = {k.text.lower() for k in kws if k.kind != "word"}
    assert not any("contributing" in k or "conduct" in k for k in names), names
    assert "parser" in {k.text for k in kws}


@pytest.mark.parametrize("task,name", [
    ("CONTRIBUTING.md tells people to run `make lint`, but the Makefile has no lint target", "CONTRIBUTING.md"),
    ("rendered by `site/pages/contributing.tsx` wrongly", "site/pages/contributing.tsx"),
    ("see https://github.com/acme/site/blob/main/src/pages/contributing.tsx here", "src/pages/contributing.tsx"),
])
def test_a_guide_or_a_page_the_report_is_about_stays(task, name) -> None:
    assert name in {k.text for k in extract_keywords("Title\n\n" + task)}


def test_a_link_holding_a_saved_state_encoded_whole_gives_no_words() -> None:
    task = ("Nested keys are lowercased\n\n[Playground link](https://prettier.io/playground/#N4Igxg9gdgLgprEAuEASAZh"
            "CSAEBiAQwICNiwwBuAHShqTgA8AHCAJxh2Bpx0wgCECrXBizUoPKHADO8ACa4uEnryyDhOURHE8AvjV0gANCAhMYAS2jTk)\n"
            "See https://github.com/o/r#arbitrary-types-conversions too.")
    kws = {k.text for k in extract_keywords(task)}
    assert all(len(k) < 20 for k in kws) and "nested" in kws and "arbitrary" in " ".join(kws), kws


def test_html_entities_and_a_percent_encoded_link_are_read_as_what_they_stand_for() -> None:
    from agentic_search_skill.query import unescaped
    task = ('Links in the HTML report are broken\n\n<a href="https%3A%2F%2Fdocs.example.org%2Fdoc-7.2%2Frules_design.html">'
            "replace with `return !{condition} &amp;&amp; {elseBranch};`</a> and 100%2d stays")
    assert "https://docs.example.org/doc-7.2/rules_design.html" in unescaped(task)
    assert "100%2d stays" in unescaped(task) and "&&" in unescaped(task)
    assert unescaped("a &bogus; b &#0; c") == "a &bogus; b &#0; c"
    kws = {k.text for k in extract_keywords(task)}
    assert not kws & {"amp", "2Frules_design.html", "Frules_design"}, kws
    assert "elseBranch" in kws


def test_an_envinfo_report_and_an_apps_saved_state_link_give_no_keyword() -> None:
    task = ("onintrostart does not respect delay\n\n### Reproduction\n\n"
            "https://svelte.dev/playground/9e45fd9f78974bb6a4b7714b1eed5417?version=5.1.3\n\n"
            "### System Info\n\n```shell\nSystem:\n    OS: macOS 14.6.1\n    Memory: 107.25 MB / 8.00 GB\n"
            "    Shell: 5.9 - /bin/zsh\n  Binaries:\n    Node: 20.10.0 - ~/bin/node\n    pnpm: 9.4.0 - ~/pnpm\n"
            "  Browsers:\n    Chrome: 130.0.6723.70\n    Safari: 17.6\n```\n\n### Severity\n\nannoyance\n"
            "See https://svelte.dev/docs/svelte/transition for the delay option.\n")
    texts = {t.lower() for t in _texts(task)}
    for junk in ("playground", "reproduction", "system", "memory", "zsh", "binaries", "pnpm", "browsers",
                 "chrome", "safari", "severity", "info"):
        assert junk not in texts, junk
    assert {"onintrostart", "delay", "transition"} <= texts  # a documentation link's words stay


def test_a_strings_byte_escape_gives_no_word() -> None:
    task = "Show files whose name is invalid UTF-8\n\n`mkdir $'bad_name_\\xff'` then `ls` shows nothing (\\u00e9 too)\n"
    texts = _words(task)
    assert not {"xff", "u00e9"} & texts
    assert "invalid" in texts
    assert "bad_name_" not in texts  # (what ``mkdir`` makes is the reporter's folder)


def test_a_main_file_without_its_folder_is_the_reporters_program() -> None:
    task = ("Cannot convert a slice type\n\n```\n(dlv) c main.go:7\n```\n"
            "and in the tree `cmd/dlv/main.go` starts it.\n"
            'Traceback (most recent call last):\n  File "main.py", line 3, in <module>\n')
    paths = {k.text for k in extract_keywords(task) if k.kind.value == "path"}
    assert "main.go" not in paths and "main.py" not in paths
    assert "cmd/dlv/main.go" in paths


def test_an_underlined_heading_and_a_question_heading_are_the_templates() -> None:
    # older templates underline their headings; a heading that asks is the template's question
    task = ("Mountpoint shows an old `latest` symlink\n\nOutput of `restic version`\n--------------------------\n"
            "`restic 0.18.0 compiled with go1.24.4 on linux/arm64`\n\n"
            "What backend/service did you use to store the repository?\n-----------------------------------\n"
            "Local filesystem\n\nProblem description\n===================\n"
            "The snapshot shows up in the mountpoint but the symlink still points to the old one.\n\n"
            "**What did you expect to see?**\nThe newest snapshot.\n")
    texts = _words(task)
    assert not {"compiled", "linux", "arm", "version", "backend", "service", "store", "expect"} & texts
    assert {"latest", "snapshot", "mountpoint", "symlink", "newest", "filesystem"} <= texts


def test_a_heading_that_asks_the_reporter_or_starts_with_an_emoji_is_the_templates() -> None:
    task = ("[bug] `--globs` flag overridden by `--lang`\n\n"
            "### Please read the FAQ for the bug you encountered.\n\n- [x] I have read the existing FAQ\n\n"
            "### \u23ef Playground Link\n\nN/A\n\n### Additional information about the issue\n\n"
            "The glob is ignored when a language is given; please keep both.\n")
    texts = _words(task)
    assert not {"faq", "encountered", "playground", "link", "additional"} & texts
    assert {"globs", "lang", "glob", "ignored", "language"} <= texts


def test_counts_spelled_out_and_chat_shorthand_are_no_keywords() -> None:
    task = ("Flex items overlap\n\nThe cells two, three and four are drawn at the same place, "
            "idk why; imo the flexbox layout resets their offset.\n")
    texts = _words(task)
    assert not {"two", "three", "four", "idk", "imo"} & texts
    assert {"flex", "cells", "flexbox", "layout", "offset"} <= texts


def test_dashes_under_a_list_or_inside_code_are_no_heading() -> None:
    from agentic_search_skill.query import strip_boilerplate
    text = "Bug\n\n- item one\n---\n\n```\nfrontmatter_key: 1\n---\n```\n"
    assert strip_boilerplate(text).count("## ") == 0


def test_a_name_found_only_as_a_files_stem_is_that_files_not_a_quoted_name() -> None:
    task = ('Empty lib raises\n\n  File "/site/fontTools/designspaceLib/__init__.py", line 9, in readLib\n'
            "I ran `python load_designspace.py`; `sympy_parser` is fine, and sympy_parser.py too.\n")
    kws = {k.text: k for k in extract_keywords(task)}
    assert "__init__" not in kws and "load_designspace" not in kws
    assert "readLib" in kws and "sympy_parser" in kws        # named on their own as well
    assert "fontTools/designspaceLib/__init__.py" in kws and "load_designspace.py" in kws


def test_an_image_of_the_repository_is_no_path_to_search() -> None:
    task = ('Unable to switch namespace\n\n<img src="https://raw.githubusercontent.com/derailed/k9s/master/assets/k9s_err.png"/>\n'
            "See https://raw.githubusercontent.com/derailed/k9s/master/internal/view/command.go too.\n")
    paths = {k.text for k in extract_keywords(task) if k.kind.value == "path"}
    assert "assets/k9s_err.png" not in paths
    assert "internal/view/command.go" in paths


def test_a_templates_imperative_checklist_item_gives_no_keywords() -> None:
    task = ("Hat accent is shifted on mathbb letters\n\n> Before reporting a bug\n"
            "- [x] Check [common issues](https://katex.org/docs/issues.html).\n"
            "- [x] Search for [existing issues](https://github.com/KaTeX/KaTeX/issues).\n"
            "- [x] Check the bug is reproducible in the demo. If not, check KaTeX is up-to-date and installed correctly.\n"
            "- [x] Check that `getBaseElem` keeps the font\n\nThe hat is off centre.\n")
    texts = _words(task)
    assert not {"common", "existing", "search"} & texts
    assert {"getbaseelem", "hat", "mathbb"} <= texts


def test_the_word_commit_before_a_commits_name_goes_with_it() -> None:
    texts = _words(
        "Parser not backward compatible\n\nCommit 3ea458b introduces a breaking change in the parser.\n")
    assert not {"3ea458b", "commit"} & texts and "introduces" in texts
    texts = _words("Hook fails\n\nSince commit 3ea458b the commit hook fails.\n")
    assert "commit" in texts  # the other "commit" is the text's own


@pytest.mark.parametrize("task, present, absent", [
    # a title that asks, and a question in a code comment, are the reporter's
    ("# Why does `parse_date` ignore the timezone offset?\n\nThe result is UTC.", {"parse_date", "timezone"}, set()),
    ("Cache is stale\n\n```python\n# is CacheStore.invalidate_entry called here?\nstore.get(k)\n```\n",
     {"CacheStore", "invalidate_entry"}, set()),
    # a template's question naming a command still goes
    ("Dial fails\n\n### What version of Go are you using (`go version`)?\n\nThe dialer never retries.\n",
     {"dialer", "retries"}, {"go"}),
    # a form's short answer that names code is the issue's
    ("Crash\n\n### OS\nAll of them; it crashes in `ZipFile.extractall_members`\n", {"extractall_members"}, set()),
    ("Bug report\n\n## Version parsing\n`parse_semver('1.0.0-rc.1')` returns None\n", {"parse_semver"}, set()),
    # a checked item naming code stays
    ("Pool leaks\n\n- [x] Verify that `ConnectionPool.release_conn` is called on the latest connection\n",
     {"release_conn"}, set()),
    # TeX commands are no byte escapes
    ("TeX\n\n`\\xdef` does not expand and `\\xcancel` draws thin\n", {"xdef", "xcancel"}, {"ncel"}),
    # a member after a dot is no file's stem; an option holding "commit" is no commit
    ("Resp\n\n`httpx.Response.json` raises JSONDecodeError\n", {"Response"}, set()),
    ("Revert\n\n`git revert --no-commit 3ea458b` leaves the index dirty\n", {"no-commit"}, set()),
    # a blob link to an image is a file of the tree; a bare main.dart is the reporter's
    ("Icon\n\nhttps://github.com/feathericons/feather/blob/main/icons/x-circle.svg has a stray point.\n",
     {"icons/x-circle.svg"}, set()),
    ("Dart\n\nrunning main.dart crashes\n", set(), {"main/dart", "main.dart"}),
])
def test_the_new_rules_leave_what_a_report_means(task, present, absent) -> None:
    texts = {k.text for k in extract_keywords(task)}
    assert present <= texts and not absent & texts


def test_prose_after_a_pronoun_and_failed_is_no_message() -> None:
    from agentic_search_skill.query import messages
    found = messages("It failed: the uploader never retries after a timeout.\nBuild failed: could not resolve the graph\n")
    assert found == ("could not resolve the graph",)


def test_a_heading_of_spaces_without_a_question_is_read_in_linear_time() -> None:
    import time
    start = time.perf_counter()
    extract_keywords("title\n\n#" + " " * 200_000 + "x\n")
    assert time.perf_counter() - start < 5.0


def test_a_forms_camel_case_answer_about_the_machine_and_an_emptied_checklist_give_no_keyword():
    # a trial's JabRef form: `OpenSuse Tumbleweed` under a heading asking the operating
    # system, and a heading over nothing but a first-person checked item of the template
    from agentic_search_skill.query import extract_keywords
    task = ("@string removed while restoring backups\n\n### Details on version and operating system\n\n"
            "OpenSuse Tumbleweed\n\n### Checked with the latest development build (copy version output from About dialog)\n\n"
            "- [x] I made a backup of my libraries before testing the latest development version.\n\n"
            "### Steps to reproduce the behaviour\n\n1. Open a bib file with `@string` entries\n\n"
            "### Dialog handling\n\n- [x] I made sure the backup dialog closes\n\nThe dialog restores entries.\n")
    texts = _words(task)
    assert not {"opensuse", "tumbleweed", "checked", "development", "libraries", "copy"} & texts
    # a heading over the reporter's own prose stays, and so does an answer naming code
    assert {"entries", "dialog", "handling", "restores"} <= texts
    kept = _words(
        "Crash on start\n\n### Operating system\n\nAll of them: `BackupManager.perform_backup()` fails\n")
    assert "perform_backup" in kept


def test_the_terminal_and_shell_the_reporter_runs_give_no_keyword():
    # a trial's gdu report: `- Terminal: XTerm` under `**System:**` made XTerm its first keyword
    from agentic_search_skill.query import extract_keywords
    task = ("deleting wrong files\n\ngdu deletes the wrong files after a sort.\n\n**System:**\n"
            " - OS: Gentoo Linux\n - Terminal: XTerm\n - **Shell:** zsh 5.9\n - Version: v5.29.0\n\n"
            "Run it in the shell: `gdu --sort-order` prints ConsoleWriter output.\n- the terminal hangs\n")
    texts = _words(task)
    assert not {"xterm", "gentoo", "zsh", "system"} & texts
    # the issue's own lines that merely say "shell" or "terminal" stay
    assert {"consolewriter", "hangs", "sort"} <= texts


def test_the_reporters_own_lines_near_the_forms_rules_stay():
    # an adversarial check's cases: each rule above leaves the reporter's own words
    # a "what I tried" list of checked items is the reporter's (only the template's verbs go)
    got = _words("Export hangs\n\n### What I tried\n\n- [x] I disabled hardware acceleration\n"
                 "- [x] I reverted the pdf renderer\n- [x] I searched the existing issues\n")
    assert {"disabled", "acceleration", "reverted", "renderer"} <= got and "searched" not in got
    # a lower-case camel name under a question about the machine is code
    assert "usesearchparams" in _words("Params lost\n\n### Environment\n\nuseSearchParams in the app router\n")
    # a workflow's `shell:` in fenced code and a symptom of four words are the issue's
    got = _words("act fails with pwsh\n\n```yaml\njobs:\n  build:\n    steps:\n      - run: echo\n"
                 "        shell: pwsh\n```\n\n- Terminal: cursor vanishes after resize\n")
    assert {"shell", "cursor", "vanishes", "resize"} <= got
    # the reporter's heading over nothing but a template item names the issue
    assert {"crash", "exporting", "dialog"} <= _words(
        "Title here\n\n### Crash when exporting to PDF from the print dialog\n\n- [x] I searched existing issues\n")


def test_the_names_the_tasks_code_calls_are_read_from_its_code_only():
    from agentic_search_skill.query import called_in_code
    task = ("VersionReq matches pre-releases (see parse(x) in prose)\n\n    let req = VersionReq::parse(\"<1.2\");\n"
            "    assert!(!req.matches(&v));\n\n```js\nconst out = chalk.red('hi')\n```\nand `Styled.fromAnsi(s)`.\n")
    assert called_in_code(task) == {"parse", "matches", "red", "fromansi"}  # (a macro's `assert!(` is no call)


def test_prose_between_two_short_quoted_literals_is_no_message() -> None:
    # (a trial's qs report: "joined to the rest with '&', while everything else uses ';'"
    # made "while everything else uses" a quoted message, and a gap)
    task = ("The marker is always joined to the rest with '&', while everything else uses ';'. "
            "Parsing this string back with the same ';' separator fails with 'could not parse the pair'.")
    from agentic_search_skill.query import messages
    assert messages(task) == ("could not parse the pair",)

