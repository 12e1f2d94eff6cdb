"""Tests for agentic_search_skill.match: one pass per file, all keywords.

Pins: definitions recognised per language (and not for locals, comments, strings,
prose or data files), the 0.5 for an inflection of the keyword (and nothing for a longer name),
case-insensitive literal counting, binary detection, paths.  Files are written
in tmp_path and read with read_document, as the engine does.
"""
from __future__ import annotations

import os
from dataclasses import replace

import pytest

from agentic_search_skill.match import (
    BINARY_SNIFF_BYTES, FileMatch, compile_keywords, count_needles, definition_words, is_binary, match_document, path_match,
    read_document,
)
from agentic_search_skill.query import keywords_from_list, make_keyword


def write_bytes(tmp_path, rel: str, data: bytes) -> str:
    full = os.path.join(str(tmp_path), *rel.split("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as fh:
        fh.write(data)
    return full


def match_file(tmp_path, rel: str, text: str, *keywords: str) -> FileMatch:
    doc = read_document(rel, write_bytes(tmp_path, rel, text.encode("utf-8")))
    assert doc is not None
    return match_document(doc, compile_keywords(keywords_from_list(keywords)))


def defines(tmp_path, rel: str, text: str, keyword: str) -> float:
    return match_file(tmp_path, rel, text, keyword).defines[0]


# --------------------------------------------------------------------------- #
# Definitions per language
# --------------------------------------------------------------------------- #

# A line before the definition keeps "start of file" out of these cases (pinned apart below).
DEFINES = [
    # name, file, source, keyword
    ("py def", "a.py", "import os\n\ndef parse_date(s):\n    return s\n", "parse_date"),
    ("py async def", "a.py", "import os\n\nasync def fetch_user(i):\n    pass\n", "fetch_user"),
    ("py class", "a.py", "import os\n\nclass TokenStore:\n    pass\n", "TokenStore"),
    ("py method", "a.py", "class A:\n    def refresh(self):\n        pass\n", "refresh"),
    ("py module constant", "a.py", "import os\nMAX_RETRIES = 1\n", "MAX_RETRIES"),
    ("py annotated global", "a.py", "import os\nsession: int = 1\n", "session"),
    ("js function", "a.js", "// x\nfunction refreshToken() {}\n", "refreshToken"),
    ("ts export class", "a.ts", "// x\nexport class AuthService {}\n", "AuthService"),
    ("ts export const", "a.ts", "// x\nexport const apiRouter = express.Router();\n", "apiRouter"),
    ("ts top-level const", "a.ts", "// x\nconst apiRouter = 1;\n", "apiRouter"),
    ("ts export default function", "a.ts", "// x\nexport default function handler() {}\n", "handler"),
    ("ts export async function", "a.ts", "// x\nexport async function refreshToken() {}\n", "refreshToken"),
    ("ts interface", "a.ts", "// x\nexport interface SessionOptions {}\n", "SessionOptions"),
    ("go func", "a.go", "package a\nfunc ParseDate() {}\n", "ParseDate"),
    ("go type struct", "a.go", "package a\ntype Session struct {}\n", "Session"),
    ("rust pub fn", "a.rs", "use x;\npub fn parse_date() {}\n", "parse_date"),
    ("rust struct", "a.rs", "use x;\nstruct Session {}\n", "Session"),
    ("rust trait", "a.rs", "use x;\npub trait Storage {}\n", "Storage"),
    ("java class", "A.java", "package a;\npublic class Session {}\n", "Session"),
    ("java final class", "A.java", "package a;\npublic final class Session {}\n", "Session"),
    ("c struct", "a.h", "#pragma once\nstruct session {int x;};\n", "session"),
    ("c define", "a.h", "#pragma once\n#define MAX_RETRIES 3\n", "MAX_RETRIES"),
    ("kt class", "A.kt", "package a\nclass ProxySelector : Base() {\n}\n", "ProxySelector"),
    ("c function returning a struct", "a.c", "#include <x.h>\nstruct timeval now(void) {\n}\n", "now"),
]


@pytest.mark.parametrize("name,rel,source,keyword", DEFINES, ids=[c[0] for c in DEFINES])
def test_definition_is_recognised(tmp_path, name, rel, source, keyword) -> None:
    assert defines(tmp_path, rel, source, keyword) == 1.0


NOT_DEFINES = [
    ("py call", "a.py", "import os\nprint(parse_date(x))\n", "parse_date"),
    ("py comparison", "a.py", "import os\nSESSION == 1\n", "session"),
    ("py comment", "a.py", "import os\n# def parse_date in a comment\n", "parse_date"),
    ("py string", "a.py", "import os\nx = \"class Session\"\n", "Session"),
    ("py indented assignment", "a.py", "def f():\n    MAX_RETRIES = 1\n", "MAX_RETRIES"),
    ("ts local const", "a.ts", "function f() {\n  const apiRouter = 1;\n}\n", "apiRouter"),
    ("ts local let", "a.ts", "function f() {\n\tlet apiRouter = 1;\n}\n", "apiRouter"),
    ("ts usage", "a.ts", "// x\napp.use(apiRouter);\n", "apiRouter"),
    ("go call", "a.go", "package a\nx := ParseDate()\n", "ParseDate"),
    ("markdown def", "README.md", "# x\ndef parse_date(s):\n", "parse_date"),
    ("markdown class", "notes.md", "# x\nclass Session\n", "Session"),
    ("rst class", "a.rst", "x\nclass Session:\n", "Session"),
    ("json", "a.json", "{\n\"def parse_date\": 1}\n", "parse_date"),
    ("yaml", "a.yaml", "x: 1\nclass Session: 2\n", "Session"),
    ("yaml key", "a.yaml", "x: 1\nsession: 2\n", "session"),
    ("txt", "a.txt", "x\ndef parse_date(s):\n", "parse_date"),
    ("markdown ext", "README.markdown", "# x\ndef parse_date(s):\n", "parse_date"),
    # a supertype's constructor in a Kotlin class header (a trial's okhttp test doubles
    # "defined ProxySelector", the JDK class they extend)
    ("kt supertype", "Fake.kt", "package a\nclass FakeProxySelector : ProxySelector() {\n}\n", "ProxySelector"),
    ("kt object supertype", "Null.kt", "package a\nobject NullSelector : Closeable, ProxySelector() {\n}\n",
     "ProxySelector"),
]


@pytest.mark.parametrize("name,rel,source,keyword", NOT_DEFINES, ids=[c[0] for c in NOT_DEFINES])
def test_mention_is_not_a_definition(tmp_path, name, rel, source, keyword) -> None:
    m = match_file(tmp_path, rel, source, keyword)
    assert m.counts[0] >= 1
    assert m.defines[0] == 0.0


@pytest.mark.parametrize("rel", ["README.md", "a.rst", "a.txt", "a.json", "a.yaml", "a.toml", "a.csv", "a.html"])
def test_prose_and_data_files_define_nothing(rel) -> None:
    assert definition_words(rel) == ()


INFLECTED_DEFINES = [
    # An inflection of the keyword is defined: half a definition.
    ("py def", "a.py", "import os\ndef parse_dates(s):\n", "parse_date"),
    ("py class", "a.py", "import os\nclass RateLimiter:\n", "rate limit"),
    ("py module constant", "a.py", "import os\nFILE_UPLOAD_PERMISSIONS = 1\n", "FILE_UPLOAD_PERMISSION"),
    ("ts function", "a.ts", "// x\nexport function refreshTokens() {}\n", "refreshToken"),
    ("go func", "a.go", "package a\nfunc ParseDates() {}\n", "ParseDate"),
    ("go method", "a.go", "package a\nfunc (p *P) ParseDates() {}\n", "ParseDate"),
]


@pytest.mark.parametrize("name,rel,source,keyword", INFLECTED_DEFINES, ids=[c[0] for c in INFLECTED_DEFINES])
def test_an_inflection_of_the_keyword_gives_half(tmp_path, name, rel, source, keyword) -> None:
    assert defines(tmp_path, rel, source, keyword) == 0.5


LONGER_NAMES = [
    # Another name that merely starts with the keyword is not its definition.
    ("py def", "a.py", "import os\ndef parse_date_strict(s):\n", "parse_date"),
    ("py class", "a.py", "import os\nclass ModelForm:\n", "Model"),
    ("py module constant", "a.py", "import os\nrate_limit_per_minute = 1\n", "rate limit"),
    ("ts function", "a.ts", "// x\nexport function refreshTokenNow() {}\n", "refreshToken"),
    ("go func", "a.go", "package a\nfunc ParseDateStrict() {}\n", "ParseDate"),
    ("go method", "a.go", "package a\nfunc (p *P) ParseDateStrict() {}\n", "ParseDate"),
]


@pytest.mark.parametrize("name,rel,source,keyword", LONGER_NAMES, ids=[c[0] for c in LONGER_NAMES])
def test_a_longer_name_starting_with_the_keyword_is_no_definition(tmp_path, name, rel, source, keyword) -> None:
    assert defines(tmp_path, rel, source, keyword) == 0.0


def test_exact_definition_wins_over_prefix_in_same_file(tmp_path) -> None:
    src = "import os\ndef parse_date_strict(s):\n    pass\n\ndef parse_date(s):\n    pass\n"
    assert defines(tmp_path, "a.py", src, "parse_date") == 1.0


def test_identifier_spelling_of_keyword_is_a_definition(tmp_path) -> None:
    # "rate limit" is defined by RATE_LIMIT, rateLimit, RateLimit.
    assert defines(tmp_path, "a.py", "import os\nRATE_LIMIT = 5\n", "rate limit") == 1.0
    assert defines(tmp_path, "b.ts", "// x\nexport const rateLimit = 5;\n", "rate limit") == 1.0
    assert defines(tmp_path, "c.py", "import os\nclass RateLimit:\n", "rate limit") == 1.0


def test_definitions_are_case_insensitive(tmp_path) -> None:
    assert defines(tmp_path, "a.py", "import os\nclass session:\n", "SESSION") == 1.0


def test_module_constant_on_first_line_is_a_definition(tmp_path) -> None:
    assert defines(tmp_path, "settings.py", "MAX_RETRIES = 1\nTIMEOUT = 3\n", "MAX_RETRIES") == 1.0


def test_definition_keyword_on_first_line_is_a_definition(tmp_path) -> None:
    assert defines(tmp_path, "a.py", "def parse_date(s):\n    pass\n", "parse_date") == 1.0


def test_go_method_is_a_definition(tmp_path) -> None:
    src = "package a\nfunc (s *Server) HandleLogin() {}\n"
    assert defines(tmp_path, "a.go", src, "HandleLogin") == 1.0


@pytest.mark.parametrize("name, value", [("should", 1.0), ("Add", 1.0), ("bool", 0.0), ("error", 0.0)])
def test_a_go_methods_result_type_is_not_defined_there(tmp_path, name, value) -> None:
    # trial 72's zerolog: the reason of log.go said "defines bool" (one name each way,
    # so both the scan of the file and the visit of each occurrence are checked)
    src = ("package a\nfunc (l *Logger) should(lvl Level) bool {\n\treturn true\n}\n"
           "func (s *Set[T]) Add(x T) error {\n\treturn nil\n}\n")
    assert defines(tmp_path, "a.go", src, name) == value
    assert defines(tmp_path, "b.go", src + ("// " + name + "\n") * 20, name) == value


@pytest.mark.parametrize("name, value", [("Method", 1.0), ("run", 1.0), ("bool", 0.0)])
def test_a_go_receiver_with_parentheses_of_its_own(tmp_path, name, value) -> None:
    src = ("package a\nfunc (p (T)) Method() {}\n"
           "func (f func(int) bool) run(n int) bool {\n\treturn f(n)\n}\n")
    assert defines(tmp_path, "a.go", src, name) == value


def test_rust_pub_crate_fn_is_a_definition(tmp_path) -> None:
    assert defines(tmp_path, "a.rs", "use x;\npub(crate) fn parse_date() {}\n", "parse_date") == 1.0


# --------------------------------------------------------------------------- #
# Counting
# --------------------------------------------------------------------------- #

def test_counts_are_case_insensitive(tmp_path) -> None:
    doc = read_document("a.ts", write_bytes(tmp_path, "a.ts", b"JWT jwt Jwt jWt\n"))
    kws = [make_keyword("jwt", "given"), make_keyword("JWT", "given")]
    assert match_document(doc, compile_keywords(kws)).counts == (4, 4)


def test_a_short_word_counts_where_a_word_starts_and_a_longer_anywhere(tmp_path) -> None:
    # trial 68's `Ant` counted 19 times in a file of constants; `sin` in `using`, `git` in `digit`
    text = "constant = important(want)\nant_task = Ant.run()  # an ant\nusing digit; sin(x)\n"
    m = match_file(tmp_path, "src/a.py", text, "Ant", "sin", "git", "task", "portant")
    assert m.counts == (3, 1, 0, 1, 1)  # (longer words count inside others: ``task`` in ``ant_task``)
    # a filter needle of three letters leaves the longer one holding it counted
    m = match_file(tmp_path, "src/b.py", "the constant\n", "ant", "constant")
    assert m.counts == (0, 1)


def test_counts_every_keyword_in_one_pass(tmp_path) -> None:
    m = match_file(tmp_path, "src/auth.py", "token token\nexpiry\n", "token", "expiry", "session")
    assert m.counts == (2, 1, 0)
    assert m.matched


def test_file_matching_nothing_is_not_matched(tmp_path) -> None:
    m = match_file(tmp_path, "src/a.py", "nothing here\n", "token")
    assert m.counts == (0,)
    assert not m.matched


def test_path_match_alone_makes_a_match(tmp_path) -> None:
    m = match_file(tmp_path, "src/tokens.ts", "export {}\n", "token")
    assert m.counts == (0,)
    assert m.in_path[0] > 0
    assert m.matched


def test_match_document_does_not_depend_on_keyword_order(tmp_path) -> None:
    text = "import os\ndef refresh_token(): pass\nJWT = 1\n"
    a = match_file(tmp_path, "src/tokens.py", text, "jwt", "refresh token", "session")
    b = match_file(tmp_path, "src/tokens.py", text, "session", "jwt", "refresh token")
    assert (a.counts[0], a.counts[1], a.counts[2]) == (b.counts[1], b.counts[2], b.counts[0])
    assert (a.defines[0], a.defines[1]) == (b.defines[1], b.defines[2])


QUOTED_PATHS = [
    # quoted path, file, path match > 0
    ("src/auth/login.py", "src/auth/login.py", True),
    ("auth/login.py", "src/auth/login.py", True),
    ("login.py", "src/auth/login.py", True),
    ("src/auth/login.py", "src/auth/logout.py", False),
    ("django/db/models", "src/django/db/models/__init__.py", True),
    ("django/db/models", "django/db/models.py", True),
]


@pytest.mark.parametrize("needle,rel,expected", QUOTED_PATHS, ids=[f"{c[0]}@{c[1]}" for c in QUOTED_PATHS])
def test_quoted_path_names_the_file(tmp_path, needle, rel, expected) -> None:
    kw = make_keyword(needle, "path")
    doc = read_document(rel, write_bytes(tmp_path, rel, b"x = 1\n"))
    m = match_document(doc, compile_keywords([kw]))
    assert (m.in_path[0] > 0) is expected


def test_module_path_names_root_level_package_init(tmp_path) -> None:
    rel = "django/db/models/__init__.py"
    kw = make_keyword("django/db/models", "path")
    doc = read_document(rel, write_bytes(tmp_path, rel, b"x = 1\n"))
    assert match_document(doc, compile_keywords([kw])).in_path[0] > 0


MODULE_PATHS = [
    # module path quoted in the task, file, path match
    ("sympy/printing/pretty", "sympy/printing/pretty.py", 1.0),           # the module itself
    ("sympy/printing/pretty", "sympy/printing/pretty/__init__.py", 0.75),  # the package's own file
    ("sympy/printing/pretty", "sympy/printing/pretty/pretty.py", 0.25),    # a module inside the package
    ("printing/pretty", "sympy/printing/pretty/stringpict.py", 0.25),
    ("sympy/printing/pretty", "sympy/printing/prettyish/x.py", 0.0),       # a longer directory name
    ("sympy/printing/pretty", "sympy/printing/latex.py", 0.0),
    # A dotted name's last part is a member of the module file before it.
    ("django/utils/http/parse_http_date", "django/utils/http.py", 1.0),
    ("django/utils/http/parse_http_date", "django/utils/http.pyi", 1.0),
    ("utils/http/parse_http_date", "src/django/utils/http.py", 1.0),
    ("django/utils/http/parse_http_date", "django/utils/https.py", 0.0),
    ("django/utils/http/parse_http_date", "django/utils/http.js", 0.0),     # not a Python module
    ("expr/args", "sympy/core/expr.py", 0.0),                               # an object's attribute
    ("a/b/http.py", "a/b.py", 0.0),                                         # a file's path, no member
]


@pytest.mark.parametrize("module,rel,expected", MODULE_PATHS, ids=[f"{c[0]}@{c[1]}" for c in MODULE_PATHS])
def test_a_quoted_module_path_names_its_package_and_weakly_what_is_inside(module, rel, expected) -> None:
    assert path_match(rel.lower(), replace(make_keyword(module, "path"), dotted=True)) == expected


def test_a_folders_path_names_no_module_file_beside_it() -> None:
    """``web/static/widgets`` linked or quoted as a folder is no dotted name: ``web/static.py``
    is no module it is a member of (an adversarial check: it ranked first on that alone)."""
    assert path_match("web/static.py", make_keyword("web/static/widgets", "path")) == 0.0
    assert path_match("web/static.py", replace(make_keyword("web/static/widgets", "path"), dotted=True)) == 1.0


NAMED_BY_DIRECTORY = [
    # keyword, file, path match
    ("management", "auth/management/__init__.py", 1.0),   # the package's own file
    ("auth", "src/auth/index.ts", 1.0),
    ("parser", "src/parser/mod.rs", 1.0),
    ("permission", "auth/permissions/__init__.py", 1.0),  # an inflection of the name
    ("auth", "auth/management/__init__.py", 0.25),        # a directory further up
    ("auth", "auth/management/commands.py", 0.25),
    ("init", "auth/management/__init__.py", 0.0),         # the stem itself names nothing
    ("educational_decoder", "doc/educational_decoder/zstd_decompress.c", 0.25),  # a name of several words
    ("educational_decoder", "doc/educational-decoder/harness.c", 0.25),
]


@pytest.mark.parametrize("word,rel,expected", NAMED_BY_DIRECTORY, ids=[f"{c[0]}@{c[1]}" for c in NAMED_BY_DIRECTORY])
def test_a_package_file_is_named_by_its_directory(word, rel, expected) -> None:
    kw = make_keyword(word, "word")
    assert path_match(rel.lower(), kw) == expected


NAMED_BY_A_WORD_OF_THE_NAME = [
    # keyword, file, path match
    ("card", "src/renderRepoCard.js", 0.75),    # a camel-case hump
    ("repo", "src/renderRepoCard.js", 0.75),
    ("log", "lib/log_parser.py", 0.75),         # a word between underscores
    ("log", "ui/dialog.py", 0.5),               # only inside a longer word
    ("jwt", "lib/jwt-utils.ts", 1.0),           # the one word besides a filler
    ("jwt", "lib/JwtHelper.java", 1.0),
    ("session", "lib/session-manager.ts", 0.75),  # "manager" is a word of its own
    ("der", "src/renderRepoCard.js", 0.5),      # inside a hump, not one
]


@pytest.mark.parametrize("word,rel,expected", NAMED_BY_A_WORD_OF_THE_NAME,
                         ids=[f"{c[0]}@{c[1]}" for c in NAMED_BY_A_WORD_OF_THE_NAME])
def test_a_word_of_a_file_name_names_it_more_than_a_substring(word, rel, expected) -> None:
    kw = make_keyword(word, "word")
    assert path_match(rel.lower(), kw, rel) == expected


def test_without_the_path_in_its_own_case_only_separators_split_a_name() -> None:
    # (the lower-cased path alone has no humps: renderrepocard is one word)
    assert path_match("src/renderrepocard.js", make_keyword("card", "word")) == 0.5
    assert path_match("lib/jwt-utils.ts", make_keyword("jwt", "word")) == 1.0


# --------------------------------------------------------------------------- #
# Reading: binary detection, encodings
# --------------------------------------------------------------------------- #

BINARY_CASES = [
    ("NUL first", b"\0token token"),
    ("NUL late in the sniffed prefix", b"token " + b"x" * (BINARY_SNIFF_BYTES - 8) + b"\0"),
    ("image header", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR token"),
    ("PDF opening with text metadata", b"%PDF-1.6\r%\xe2\xe3\r\n<x:xmpmeta> origin token " + b"x" * BINARY_SNIFF_BYTES + b"\0"),
]


@pytest.mark.parametrize("name,data", BINARY_CASES, ids=[c[0] for c in BINARY_CASES])
def test_binary_file_reads_as_none(tmp_path, name, data) -> None:
    assert BINARY_SNIFF_BYTES == 8192
    assert read_document("blob.bin", write_bytes(tmp_path, "blob.bin", data)) is None


def test_nul_after_the_sniffed_prefix_is_text(tmp_path) -> None:
    data = b"token\n" + b"x" * BINARY_SNIFF_BYTES + b"\0"
    doc = read_document("big.txt", write_bytes(tmp_path, "big.txt", data))
    assert doc is not None and doc.size == len(data)


def test_non_utf8_text_is_not_binary(tmp_path) -> None:
    data = "caf\u00e9 token\n".encode("latin-1")
    doc = read_document("a.py", write_bytes(tmp_path, "a.py", data))
    assert doc is not None
    m = match_document(doc, compile_keywords(keywords_from_list(["token"])))
    assert m.counts == (1,)


def test_empty_file_is_text(tmp_path) -> None:
    doc = read_document("empty.py", write_bytes(tmp_path, "empty.py", b""))
    assert doc is not None and doc.size == 0


def test_a_document_keeps_the_lowered_text_and_rereads_the_bytes_when_quoted(tmp_path) -> None:
    path = write_bytes(tmp_path, "a.py", b"class RateLimiter:\n    pass\n")
    doc = read_document("a.py", path)
    assert doc.low == b"class ratelimiter:\n    pass\n"
    assert doc.data == b"class RateLimiter:\n    pass\n"  # as written, for summaries


def test_a_document_whose_file_vanished_quotes_its_lowered_text(tmp_path) -> None:
    path = write_bytes(tmp_path, "a.py", b"JWT = 1\n")
    doc = read_document("a.py", path)
    os.remove(path)
    assert doc.data == b"jwt = 1\n"


def test_missing_file_raises_oserror(tmp_path) -> None:
    with pytest.raises(OSError):
        read_document("gone.py", os.path.join(str(tmp_path), "gone.py"))


@pytest.mark.parametrize("data,expected", [(b"", False), (b"abc", False), (b"a\0b", True), (b"%PDF-1.4\n", True),
                                           (b"# %PDF-1.4 is a header\n", False)])
def test_is_binary(data, expected) -> None:
    assert is_binary(data) is expected


def test_matching_on_several_cores_gives_the_sequential_answer(tmp_path) -> None:
    from agentic_search_skill.match import compile_keywords, match_document, match_many
    from agentic_search_skill.query import make_keyword

    docs = []
    for i in range(40):
        path = tmp_path / f"m{i}.py"
        path.write_bytes((f"def handler_{i}():\n    return rate_limit({i})\n" * (i + 1)).encode())
        docs.append(read_document(f"pkg/m{i}.py", str(path)))
    ck = compile_keywords([make_keyword("rate limit", "given"), make_keyword("handler_7", "identifier")])
    sequential = [match_document(d, ck) for d in docs]
    assert match_many(docs, ck, workers=2, min_bytes=0, min_work=0) == sequential
    assert match_many(docs, ck, workers=2, min_bytes=0) == sequential  # too little work: one process
    assert match_many(docs, ck, workers=1) == sequential


def _match_in_daemon(n: int) -> bool:
    from agentic_search_skill.match import Document, compile_keywords, match_document, match_many
    from agentic_search_skill.query import make_keyword

    docs = [Document(f"m{i}.py", b"rate_limit()\n" * (i + 1), b"rate_limit()\n" * (i + 1), 13 * (i + 1))
            for i in range(n)]
    ck = compile_keywords([make_keyword("rate limit", "given")])
    return match_many(docs, ck, workers=2, min_bytes=0, min_work=0) == [match_document(d, ck) for d in docs]


def test_matching_inside_a_pool_worker_falls_back_to_one_process() -> None:
    # A library caller's multiprocessing worker is daemonic and may not fork children.
    import multiprocessing

    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        pytest.skip("no fork on this platform")
    with ctx.Pool(1) as pool:
        assert pool.map(_match_in_daemon, [12]) == [True]


# --------------------------------------------------------------------------- #
# count_needles: contained needles filter the ones that contain them
# --------------------------------------------------------------------------- #

def test_contained_needle_filters_the_longer_ones() -> None:
    ck = compile_keywords(keywords_from_list(["file", "FileSystemStorage", "file upload", "permissions", "permission"]))
    by_text = dict(zip(ck.needles, ck.filters))
    assert ck.needles[by_text[b"filesystemstorage"]] == b"file"
    assert ck.needles[by_text[b"permissions"]] == b"permission"
    for text in (b"", b"no match here", b"file_upload and filesystemstorage", b"permissions permission permissionss",
                 b"filefile file_upload_permissions fileupload file upload file-upload"):
        got = dict(zip(ck.needles, count_needles(text, ck)))
        assert got == {n: text.count(n) for n in ck.needles}, text


def test_definition_check_by_occurrence_agrees_with_the_search_by_probe() -> None:
    # Both ways of finding a definition must give the same value on every input.
    import random
    from agentic_search_skill.lang import language_of
    from agentic_search_skill.match import _defines_at_occurrences, defines
    rng = random.Random(7)
    pieces = ["def ", "class ", "func ", "type ", "const ", "var ", "let ", "export ", "  ", "\t", "\n",
              "func (r *T) ", ") ", "=", "==", ":", " ", "_", "s", "er", "x", "rate", "limit", "ratelimit",
              "rate_limit", "aa", "fn ", "pub ", "impl ", " for ", "struct ", "(", ")", "{", "}", ";",
              "static int ", "exports.", "async ", "return ", "=>", "::", "<t> ", "<t>(", "self.", ".", "\n\t",
              "const (", "type (", "\n)", "private ", "@x ", "using ", "?", "function m:", "defmodule "]
    languages = [language_of(n) for n in ("a.py", "a.go", "a.js", "a.c", "a.rs", "a.java", "a.unknown", "a.rb",
                                          "a.lua", "a.cs", "a.ex", "a.swift")]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30))).encode()
        for needle in (b"rate", b"ratelimit", b"rate_limit", b"aa"):
            for language in languages:
                assert defines(text, needle, language) == _defines_at_occurrences(text, needle, language), (
                    text, needle, language.name)


def test_a_typescript_declaration_file_only_declares(tmp_path) -> None:
    source = "export function parseDate(s: string): Date\nexport interface Session { id: string }\n"
    assert defines(tmp_path, "types/index.d.ts", source, "parseDate") == 0.5
    assert defines(tmp_path, "types/index.d.ts", source, "Session") == 0.5
    assert defines(tmp_path, "src/index.ts", "export function parseDate(s: string): Date {\n  return new Date(s)\n}\n",
                   "parseDate") == 1.0


def test_a_rust_module_declared_by_mod_name_semicolon_is_defined_elsewhere(tmp_path) -> None:
    # `mod semaphore;` points at semaphore.rs, where the module's body is; matching is
    # case-blind, so counting it would make the parent "define" a struct Semaphore.
    assert defines(tmp_path, "a.rs", "mod semaphore;\npub use semaphore::Semaphore;\n", "Semaphore") == 0.5
    assert defines(tmp_path, "b.rs", "mod tests {\n    fn t() {}\n}\n", "tests") == 1.0
    assert defines(tmp_path, "c.rs", "pub struct Marker;\n", "Marker") == 1.0  # a unit struct is whole


def test_a_c_type_word_before_another_name_uses_the_type(tmp_path) -> None:
    # `struct timeval tv;` is a variable of a type defined elsewhere; a trial's
    # adapters/poll.h was said to "declare timeval" for one.
    assert defines(tmp_path, "a.c", "void f(void) {\n    struct timeval tv;\n}\n", "timeval") == 0.0
    assert defines(tmp_path, "b.c", "struct session *make(void) {\n  return 0;\n}\n", "session") == 0.0
    assert defines(tmp_path, "c.h", "struct session;\n", "session") == 0.5            # forward declaration
    assert defines(tmp_path, "d.h", "struct session {\n  int id;\n};\n", "session") == 1.0
    assert defines(tmp_path, "e.hpp", "class Session final {\n};\n", "Session") == 1.0
    assert defines(tmp_path, "f.hpp", "class Session : public Base {\n};\n", "Session") == 1.0


def test_a_document_read_again_is_the_text_searched_never_more(tmp_path) -> None:
    """The bytes as written are read again for the few files quoted; a file grown or
    rewritten since the search gives its searched text back, never its new bytes (a file
    grown to gigabytes is not read whole)."""
    from agentic_search_skill.match import read_document
    f = tmp_path / "a.py"
    f.write_bytes(b"Token Expiry\n")
    doc = read_document("a.py", str(f))
    f.write_bytes(b"Token Expiry\n" + b"grown " * 10000)
    assert doc.data == b"token expiry\n"
    same = read_document("a.py", str(f))
    f.write_bytes(b"Token Expirx\n" + b"grown " * 10000)  # same size, other text
    assert same.data == same.low
    kept = read_document("a.py", str(f))
    assert kept.data == b"Token Expirx\n" + b"grown " * 10000  # unchanged: the bytes as written


# --------------------------------------------------------------------------- #
# held_anywhere: is a keyword in some file at all (the gap check), without counting
# --------------------------------------------------------------------------- #

def _held_by_matching(docs, keywords) -> tuple[bool, ...]:
    from agentic_search_skill.match import match_many

    found = match_many(docs, compile_keywords(keywords), workers=1)
    return tuple(any(m.counts[i] or m.in_path[i] for m in found) for i in range(len(keywords)))


@pytest.mark.parametrize("block", [1, 40, 1 << 20])
def test_held_anywhere_says_what_counting_every_file_says(monkeypatch, block: int) -> None:
    # Whatever the block size: a word in one file's content, a name only a path holds,
    # a quoted path named from outside the root, and words in no file.
    from agentic_search_skill import match as match_mod
    from agentic_search_skill.match import Document, held_anywhere

    monkeypatch.setattr(match_mod, "HELD_BLOCK_BYTES", block)
    texts = {"src/app.py": b"def widget():\n    return 1\n", "src/throttle_util.py": b"x = 1\n",
             "lib/a.py": b"gadget = 2\n", "lib/b.py": b"nothing here\n"}
    docs = [Document(rel, data, data.lower(), len(data)) for rel, data in texts.items()]
    keywords = [make_keyword("widget", "word"), make_keyword("throttle", "word"), make_keyword("gadget", "word"),
                make_keyword("sprocket", "word"), make_keyword("repo/lib/a.py", "path"),
                make_keyword("lib/c.py", "path")]
    assert held_anywhere(docs, keywords) == _held_by_matching(docs, keywords) \
        == (True, True, True, False, True, False)


def test_held_anywhere_finds_no_word_across_two_files() -> None:
    # Files are searched joined, but a word split between one file's end and the next
    # file's start is in neither.
    from agentic_search_skill.match import Document, held_anywhere

    docs = [Document("a.py", b"x = wid", b"x = wid", 7), Document("b.py", b"get = 1", b"get = 1", 7)]
    assert held_anywhere(docs, [make_keyword("widget", "word")]) == (False,)


def test_a_definition_on_the_first_line_after_a_byte_order_mark_counts():
    """An editor on Windows saves a byte-order mark before the first line: it hid a
    first-line ``def`` (no ``defines``, no name in the title; a tester's)."""
    from agentic_search_skill import lang
    from agentic_search_skill.match import defines
    from agentic_search_skill.report import decode_text, defined_names
    data = b"\xef\xbb\xbfdef throttle_requests(x):\n    return x\n"
    assert defines(data, b"throttle_requests", lang.PYTHON) == 1.0
    assert defined_names(decode_text(data), "a.py") == ["throttle_requests"]
