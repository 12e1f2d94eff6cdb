"""Task text and keyword lists -> the keywords a cycle searches for.

A keyword is searched as literal, lower-cased bytes (never as a regular expression
built from user input) in several identifier-aware spellings, so that "rate limit"
finds ``rate_limit``, ``rateLimit`` and ``RateLimiter``, and ``FileSystemStorage``
finds ``file_system_storage``.

From free text (an issue, a bug report, a traceback) :func:`extract_keywords` pulls,
strongest first: file paths and traceback frames, dotted module names, code
identifiers (backticked, CamelCase, snake_case, called ``name(``), and plain words
minus stop words (data/stopwords.json). URLs give the repository paths they name, not
their hosts; issue templates and environment reports give nothing (data/boilerplate.json).
Japanese and Chinese text is cut at its glossary terms (data/glossary.json), searched as
itself and as the English words code uses, marked ``translated``; the rest as bigrams.

Example::

    >>> [k.text for k in extract_keywords("Fix `parse_date` in utils/dates.py")]
    ['utils/dates.py', 'parse_date', 'fix', 'dates'] # doctest: +SKIP
"""

from __future__ import annotations

import bisect
import html
import json
import os
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, replace
from enum import Enum
from typing import Callable, Iterable, Sequence

from hints import _nfkc  # (hints.py's own: NFKC linear in a run of combining marks)

from . import lang
from .lazyre import compile_later


class Kind(str, Enum):
    """Where a keyword came from. A ``str`` enum: it compares equal to, and is written to
    JSON as, its value (``Kind.WORD == "word"``)."""

    GIVEN = "given"            # the caller named it explicitly (--keywords)
    PATH = "path"              # a file path or module quoted in the task
    IDENTIFIER = "identifier"  # a code name quoted in the task
    WORD = "word"              # a plain word of the task
    MESSAGE = "message"        # a message the task quotes (an error, a panic), searched as written
    LEARNED = "learned"        # codebase vocabulary learned from high-relevance files
    SYNONYM = "synonym"        # a programming synonym of a keyword that matched nothing

    def __str__(self) -> str:
        return self.value


# The prior weight each kind carries into scoring.
KIND_WEIGHTS = {
    Kind.GIVEN: 1.0,       # named outright: as strong as a quoted name
    Kind.PATH: 1.0,
    Kind.IDENTIFIER: 1.0,
    Kind.MESSAGE: 2.0,     # several words as written: where the task's error is raised (see MESSAGE_MIN_WORDS)
    Kind.WORD: 0.3,        # weak evidence on its own
    Kind.LEARNED: 0.45,    # the codebase's own term, but a guess of the loop's
    Kind.SYNONYM: 0.6,     # default; a synonym usually takes the weight of what it stands for
}
# Kinds the task (or the caller) named outright: a file matching none of them is a gap
# worth reporting, and their total absence from the tree is a critical gap.
NAMED_KINDS = frozenset((Kind.GIVEN, Kind.IDENTIFIER, Kind.PATH))
# Kinds the loop derived itself: dropped again when they match nothing.
DERIVED_KINDS = frozenset((Kind.LEARNED, Kind.SYNONYM))
# A multi-line task's first line is its title (an issue's summary): its keywords weigh
# this much more. Measured on the dev split: +3 points Acc@1, +2 Acc@10 (see bench/HISTORY.md).
TITLE_BOOST = 2.0
# A code name that appears only in pasted code (a fenced block, indented lines, a REPL
# session), never in the prose around it, is mostly the reporter's scaffolding: it weighs
# this much. Names of traceback frames keep their weight. Measured on the dev split:
# +0.9 points Acc@5, +0.9 Acc@10 (see bench/HISTORY.md).
CODE_ONLY_FACTOR = 0.5
# A line of the task that defines a name (``def _print_Float(self, expr):``, ``class
# Meta:``, ``fn drop(&mut self)``, ``func (s *Srv) Close()``, a type: ``type Payload
# struct {``, ``struct Opts {``, ``enum Mode``, a trial's Go task): the reporter's own code,
# a copy of the tree's, or a method they propose. The keyword is marked ``task_defines``;
# score.CONVENTION_DEFINERS says when defining it is evidence.
_OWN_DEFINITION_RE = re.compile(
    r"^[ \t>]*(?:(?:pub(?:\([\w:]+\))?|export|default|async|static|public|private|protected|final|typedef"
    # (Java's ``abstract class``, Kotlin's ``data class``, ``enum class``, ``override fun``:
    # a trial's report pasted ``enum class YesOrNoOrEmpty(...)``, its own type.)
    r"|abstract|sealed|open|internal|override|suspend|inline|partial|unsafe|extern"
    r"|(?:data|enum|annotation|value|inner)(?=[ \t]+class\b)|const(?=[ \t]+fn\b))"
    r"[ \t]+)*(?:def|class|fn|fun|function|func(?:[ \t]*\([^)\n]*\))?"
    # (A type word and its name only as code writes them, not a prose line opening "enum
    # ColorMode should ...": a body, ``=``, ``;``, parameters, or Go's underlying type.)
    r"|(?:struct|enum|interface|trait|type)(?=[ \t]+[A-Za-z_]\w*[ \t]*(?:[{=(<:;]|\r?$"
    r"|(?:struct|interface|func|map|chan|\[|\*|[A-Za-z_][\w.]*[ \t]*\r?$))))"
    r"[ \t]+([A-Za-z_]\w*)", re.M)
# ... and the C family's way (C, C++, Java, C#): a return type and modifiers, the name,
# its parameters and the body's ``{`` ending the line or alone on the next (``static void
# feeder(void* arg) {``, ``int main(void)`` over ``{``,
# ``public static void main(String[] args) throws Exception {``). A statement word
# before the name (``} else if (x) {``, ``return f(x) {``) makes it no definition.
_OWN_C_DEFINITION_RE = re.compile(
    r"^[ \t>]*((?:[A-Za-z_][\w:<>,]*[ \t*&]+)+)([A-Za-z_]\w*)[ \t]*\([^;{}()\n]*\)[ \t]*"
    r"(?:const[ \t]*|noexcept[ \t]*|throws[ \t]+[\w.,][\w., \t]*)?(?:\r?\n[ \t>]*)?\{[ \t]*\r?$", re.M)
# ... with its brace on the next line, after at most this many words of type and modifiers
# (``public static synchronized void``).
MAX_NEXT_LINE_BRACE_HEAD = 4
# ... and a name the task's code assigns at the start of a line (``TOP_RIGHT = (1, 1)``
# in a pasted enum, ``let ctx = ...``, ``seen := 0``, ``const app = express()``): the
# reporter's own variable or member. Only a statement of pasted code (:func:`_assigned`):
# a declaration word, or a space before the ``=``; not a keyword argument of a call
# spread over lines (``max_redirects=5,``: the library's name, and a gap when it has
# none), not a shell's ``RUST_LOG=trace``, not a key of a configuration block.
_OWN_ASSIGNMENT_RE = re.compile(
    r"^[ \t>]*(?:(let(?:[ \t]+mut)?|const|var|val|auto|final)[ \t]+)?([A-Za-z_]\w*)"
    r"([ \t]{0,4}(?::[ \t]{0,4}[\w.\[\]][\w.\[\], |]{0,60}?)?[ \t]{0,4})(?::=|=(?![=>~]))(.*)$", re.M)
# Fenced blocks of a program's settings file (``key = value``, ``key: value``): a key set
# there is the reporter's configuration. Keys the prose never names are the settings the
# reporter ran with, not what the report is about (a trial's rustfmt task pasted its
# ``rustfmt.toml`` and stopped, sure, on the module declaring those options): the keyword
# is marked ``setting`` and its definitions count as mentions (score.without_conventions).
_SETTINGS_FENCES = frozenset("toml ini cfg conf config properties env dotenv yaml yml".split())
# Fenced blocks whose assignments set the program's own options, not the reporter's names:
# those, and shells' and build files' (``RUST_LOG=trace``, ``CC = gcc``), which set no key.
_CONFIG_FENCES = _SETTINGS_FENCES | frozenset("make makefile cmake sh bash zsh shell console terminal dockerfile "
                                              "nginx".split())
_SETTING_KEY_RE = re.compile(r"^[ \t-]*([A-Za-z_][\w.-]*)[ \t]*[=:]", re.M)
# (Rust's ``match f(x) {``, Go's ``go func() {`` and ``defer func() {`` as well.)
_NOT_A_RETURN_TYPE = frozenset(
    "return new else if while for switch catch throw case do await yield delete goto sizeof typeof "
    "match go defer func function".split())
# The languages' own built-in functions and loaders, called in pasted code and defined by
# no codebase (``repr(x)``, ``len(x)``, ``require('yargs')``, ``println!``): only in
# pasted code they are not searched at all. Named in the prose ("the repr is wrong"),
# they are the task's words. (Trials: ``repr(line.plain)`` quoted a ``__repr__`` line
# first; ``require('yargs')`` made "defines require" a reason to stop.) Measured on the
# dev splits: Python Acc@1 60.7 -> 61.2 (django-13448 2nd -> 1st), no rank lost.
# (As spelled: ``Str`` imported from a codebase is its own class.)
CODE_ONLY_BUILTINS = frozenset(
    "super str repr len isinstance issubclass getattr setattr hasattr enumerate zip frozenset "
    "assertEqual assertTrue assertRaises require println printf sprintf cout endl".split())
# A quoted line of code shorter than this says too little to point at one place
# (``return x;``, ``} else {``); a task's longest quoted lines, at most this many, are
# looked for in the results' files.
QUOTED_LINE_MIN_CHARS = 16
# A message the task quotes - in quotes, or after an error's or a panic's name (``panic:
# invalid node type``, ``ValueError: ...``, ``panicked at ...: msg``) - is searched as
# written when it reads as a sentence: at least MESSAGE_MIN_WORDS words, MESSAGE_MIN_CHARS
# characters, letters and spaces in the main, no code punctuation. A file holding it is
# where the error is raised: a message weighs as much as a quoted name and its
# definition together (KIND_WEIGHTS; on the dev splits 2.0 against 1.0: simdjson-1899
# 2nd -> 1st, no other rank moves by more than one place). At most MAX_MESSAGES of them,
# the longest first; a message is cut at its colons, inner quotes and bracketed values,
# each part that reads as a sentence counting (``http: wildcard route conflicts ...``,
# ``msg: Os {...}``, ``[a.txt] -> [b.txt] not in the fence [/srv]``). An error line may
# open with Java's ``Caused by:`` or ``Exception in thread "main"`` or JavaScript's
# ``Uncaught`` (a trial's Java task quoted the cause that names the fix's file; no dev
# rank moved).
MESSAGE_MIN_WORDS = 3
MESSAGE_MIN_CHARS = 12
MESSAGE_MAX_CHARS = 100
MAX_MESSAGES = 3
# No name, path or message of any code is longer: a longer "keyword" (a word of 200,000
# letters in a task) is no keyword. Unbounded, one such word was stored in every result's
# ``missing`` and made a state file of 72 MB that the next call refused to read.
MAX_KEYWORD_CHARS = 256
QUOTED_LINES_KEPT = 40
# A task with at most this many keywords is a short request (stems for its words).
SHORT_TASK_KEYWORDS = 6
# Identifiers shorter than this are too ambiguous to search alone ("id", "q").
MIN_IDENTIFIER_LEN = 3
# Plain words shorter than this are almost always noise.
MIN_WORD_LEN = 3
# A run of more than this many lower-case letters, with no capital, digit or underscore
# to mark its words, is no name a codebase uses (``thequickbrownfoxjumpedover...``, a
# made-up host of a reproduction): it is neither searched nor reported as a gap. In the
# dev trees' code every run this long is test data (``loooo...ong``, ``aaaa...``).
MAX_PLAIN_RUN = 30
# Caps keep a pasted log or `pip freeze` from turning into hundreds of searches.
MAX_IDENTIFIERS = 40
MAX_PATHS = 12
# A forge URL's path keeps at most this many components (the deepest trees of the
# benchmarks nest 12): the path is matched by each of its tails, which a path of
# thousands of components would make cost the square of its length.
URL_PATH_PARTS = 24
MAX_WORDS = 30

_LONG_PLAIN_RUN_RE = re.compile(r"(?<![A-Za-z0-9_])[a-z]{%d,}(?![A-Za-z0-9_])" % (MAX_PLAIN_RUN + 1))

_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def _load(name: str) -> dict:
    """One of the word lists in data/ (read at import: they are small)."""
    with open(os.path.join(_DATA_DIR, name), "rb") as fh:
        return json.loads(fh.read().decode("utf-8"))


# Words of prose that are never keywords; each group's reason is in the data file.
_STOP_WORDS = frozenset(w for g in _load("stopwords.json")["groups"] for w in g["words"].split())
# Web vocabulary: a keyword as a word of the prose ("html escaping is broken"), but no
# quoted identifier, and not a word of pasted code or of a URL's page name.
_CODE_VOCABULARY = frozenset("html http https".split())
# Stop words a report may quote alone as code to name something of the tree (``not``,
# `new`: a keyword, a command; the groups marked ``quoted_names``), unlike a literal
# (`true`, `None`), a placeholder (`foo`) or a count.
_QUOTABLE_STOP_WORDS = frozenset(w for g in _load("stopwords.json")["groups"] if g.get("quoted_names") is True
                                 for w in g["words"].split()) - frozenset("nil undefined this".split())
_NOT_IDENTIFIERS = _STOP_WORDS | _CODE_VOCABULARY
# The placeholder names of examples (``foo``, ``baz``): a name made of them only
# (``FooBaz``, ``HogeFuga``), or one in odd capitals (a trial's ``foO-baR-baZ``, a sample
# of odd capitals, gave ``foO``), is no name of the tree; ``FooBar`` (``bar`` is a word) is.
_PLACEHOLDERS = frozenset(w for g in _load("stopwords.json")["groups"] if g.get("placeholders") is True
                          for w in g["words"].split())


def _is_placeholder(token: str) -> bool:
    """Whether an identifier is a placeholder's (_PLACEHOLDERS): all its parts are, or it
    is one written in odd capitals (``foO``: a part of one letter)."""
    parts = split_identifier(token)
    return all(p in _PLACEHOLDERS for p in parts) or (
        normalize(token) in _PLACEHOLDERS and any(len(p) == 1 for p in parts))
# A member called: ``.Name(`` after a name (see the code spans' rule in extract_keywords).
_QUOTED_MEMBER_CALL_RE = compile_later(r"(?<=[\w)\]])\.([A-Za-z][A-Za-z0-9]*)[ \t]*\(")
# ... a name of at least this many letters (``.do()``, ``.on()`` are everywhere).
MIN_MEMBER_CALL_LEN = 4
_BOILERPLATE = _load("boilerplate.json")


def _phrases(key: str) -> str:
    """The phrases of boilerplate.json's ``key`` as one alternation, longest first."""
    return "|".join(re.escape(p) for p in sorted(_BOILERPLATE[key], key=lambda p: (-len(p), p)))


# Issue templates and environment reports: their words are the template's, not the issue's.
_TEMPLATE_PHRASE_RE = compile_later(r"(?<![\w])(?:%s)(?![\w])" % _phrases("phrases"), re.I)
# The report's words about itself ("feature request") and the sample string ("Hello
# World"), in its prose only: a fenced block, a code span or a double-quoted string on one
# line, matched first, keeps them (``"failed to create feature request"`` is a message the
# tree may hold whole).
_CHATTER_PHRASE_RE = compile_later(
    r"(```.*?(?:```|\Z)|`[^`\n]*`|\"[^\"\n]*\")|(?<![\w])(?:%s)(?![\w])" % _phrases("chatter_phrases"), re.I | re.S)


# (A form's heading may start with an emoji, of a few code points: ``### ⏯ Playground
# Link``. Not ASCII punctuation: ``// Summary`` is a comment, ``$platform`` a variable.)
_HEADING_LINE_RE = compile_later(
    r"^[ \t>#*_-]*(?:[^\x00-\x7f\w\s]{1,8}[ \t]*)?(?:%s)[ \t*_]*(?::[ \t*_]*)?$" % _phrases("headings"),
    re.I | re.M,
)
# (The key may say in parentheses, after a blank, how to get the value: ``Rofi version
# (rofi -v): 1.7.5``; a call, ``if version(dist) == tag:``, is code.)
_ENVIRONMENT_LINE_RE = compile_later(
    r"^[ \t>]*(?:(?:[-*+]|\d+\.)[ \t]*)?(?:\*+[ \t]*)?(?:[\w.+-]+[ \t]+){0,2}(?:%s)[ \t]*(?:(?<=[ \t])\([^()\n]{1,40}\)[ \t]*)?"
    r"(?:\*+[ \t]*)?[:=：|].*$" % _phrases("environment_keys"),
    re.I | re.M,
)
# ... and the terminal or shell the reporter runs, as a ``key: value`` line of its own with a
# short value (``- Terminal: XTerm``, ``**Shell:** zsh 5.9``: a trial's gdu report made
# ``XTerm`` its first keyword). Only at the line's start, outside fenced code, and of at most
# three words: ``Run it in the shell: gdu -x``, an item without a colon (``- the shell
# hangs``), a symptom (``- Terminal: cursor vanishes after resize``), a workflow's ``shell:
# pwsh`` or a field ``shell: bool = False`` in code are the issue's.
_MACHINE_KEY_LINE_RE = compile_later(
    r"^[ \t>]*(?:[-*+][ \t]+)?(?:\*+[ \t]*)?(?:terminal(?:[ \t]+emulator)?|shell)[ \t]*(?:\*+[ \t]*)?:[ \t]*(?:\*+[ \t]*)?"
    r"[^\s`]+(?:[ \t]+[^\s`]+){0,2}[ \t]*$", re.I)
# ... and a short list item that names one without a colon ("- Browser Chrome",
# "- Day.js Version v1.8.14"): at most ENV_ITEM_MAX_WORDS words in all.
ENV_ITEM_MAX_WORDS = 5
_ENVIRONMENT_ITEM_RE = compile_later(
    r"^[ \t>]*[-*+][ \t]+(?:[\w.+-]+[ \t]+){0,2}(?:%s)(?:[ \t]+[^\s:=：|]+){1,3}[ \t]*$" % "|".join(
        re.escape(k) for k in sorted(_BOILERPLATE["environment_keys"], key=lambda k: (-len(k), k))),
    re.I | re.M,
)
_ENVIRONMENT_WORDS = frozenset(_BOILERPLATE["environment_words"])
# A region a pair of comments delimits (``<!-- Issuehunt content --> … <!-- /Issuehunt
# content -->``) is what a bot or a template tool wrote into the issue (badges, bounty
# summaries, sponsors), not the reporter's text.
# (Each opening is paired with the first closing of its label after it, found among the
# closings listed once: a pattern searching on from every opening to a closing read the
# text once per opening, minutes on a task of 40,000 unclosed ones.)
_COMMENT_OPEN_RE = compile_later(r"<!--[ \t]*([A-Za-z][\w .-]{0,40}?)[ \t]*-->")
_COMMENT_CLOSE_RE = compile_later(r"<!--[ \t]*/[ \t]*([A-Za-z][\w .-]{0,40}?)[ \t]*-->")
# HTML comments (a template's instructions). Checklist items stay: reporters list the
# issue's own content that way too ("- [x] In `json_sax_dom_parser`, ...").
_HTML_COMMENT_RE = compile_later(r"<!--.*?(?:-->|$)", re.S)
# Markdown's comment idiom: a link reference definition that points nowhere (``[NOTE]: #
# ( Give a BRIEF summary )``, ``[//]: # (...)``, ``[comment]: <> (...)``) renders as
# nothing, so a template writes its instructions so (a trial's KeePassXC form: ``BRIEF``,
# ``tip``, ``screenshots`` were keywords).
_MARKDOWN_COMMENT_RE = compile_later(
    r"^[ \t]{0,3}\[[^\]\n]{1,80}\]:[ \t]*(?:#|//|<>)[ \t]*(?:\([^\n]*\)|\"[^\n]*\"|'[^\n]*')?[ \t]*$", re.M)
# (Neither part holds its own opener, so a search from one ``![`` stops at the next: a
# task of ``![a](`` repeated was read once per repeat.)
_MARKDOWN_IMAGE_RE = compile_later(r"!\[[^\[\]\n]*\]\([^()\n]*\)")
# Markup of an issue's prose that forges render: images, links, collapsible sections,
# line breaks. Its tag and attribute names (img, alt, src, width) are not the issue's
# words; a link's or image's address is kept for the URL pass. Lower-case names only, and
# never inside code: ``vector<A>`` and a template's ``<select>`` are the task's own text.
# (An unquoted value holds no ``<``: a search from one tag stops at the next one; it read
# the rest of a task of ``<a b=`` repeated from every repeat.)
_HTML_TAG_RE = compile_later(
    r"</?(?:a|img|details|summary|br|hr|p|div|span|sub|sup|kbd|b|i|em|strong|center|picture|source|video|h[1-6])"
    r"(?:\s+[\w:-]+(?:\s*=\s*(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s<>]+))?)*\s*/?>")
_HTML_LINK_RE = compile_later(r"\b(?:href|src|srcset)\s*=\s*[\"']?([^\"'\s>]+)")
# Code first (group 1): a tag inside a code span or fenced block is the task's own text.
_CODE_OR_TAG_RE = compile_later(r"(```.*?(?:```|$)|`[^`\n]*`)|" + _HTML_TAG_RE.pattern, re.S)

_PATH_EXTENSIONS = lang.PATH_EXTENSIONS
_EXT_ALT = "|".join(sorted(_PATH_EXTENSIONS, key=lambda e: (-len(e), e)))

_TRACEBACK_RE = compile_later(r'File "([^"\n]+)", line \d+(?:, in ([A-Za-z_][\w]*))?')
# (A JavaScript or TypeScript file's name may hold dots before its extension:
# ``element.arc.ts``, ``index.d.ts``, ``dayjs.min.js``; those languages name modules by
# their paths, so ``a.b.ts`` is a file. Elsewhere ``django.utils.html`` and
# ``com.fasterxml.jackson.core.json`` are dotted module names, read as such.)
_PATH_RE = compile_later(r"(?<![\w/.-])((?:[\w.-]+/)*(?:[\w-]+\.(?:%s)|[\w-]+(?:\.[\w-]+)+\.(?:[cm]?[jt]sx?|vue|svelte)))"
                         r"(?![\w/])" % _EXT_ALT)
# A dotted key of three parts or more inside a placeholder's braces
# (``{http.request.tls.client.subject}``, ``${server.ssl.key-store}``, ``{{ .Values.image.tag }}``)
# is a key the code resolves by its string, not a module path: the code spells it whole or
# in pieces (a prefix constant ``"http.request.tls."`` and ``case "client.subject":``), so it
# is searched as written, by its last two parts and by what precedes them (a trial's Go
# fix: 19th -> 6th). No dev issue quotes one; ``{self.instance.pk}`` of an f-string is none.
MAX_PLACEHOLDER_KEYS = 3
_PLACEHOLDER_RE = compile_later(r"\{\{?[ \t]*\.?([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*){2,})[ \t]*\}")
_DOTTED_RE = compile_later(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w(])")
_CALL_RE = compile_later(r"(?<![\w.])([A-Za-z_]\w*)\(")  # name(
_BACKTICK_RE = compile_later(r"`([^`\n]{1,120})`")
# A code span as Markdown closes it: by a run of as many backticks as opened it (``not``).
_BALANCED_SPAN_RE = compile_later(r"(?<!`)(`+)([^`\n]{1,120}?)\1(?!`)")
# A message quoted in the prose ('Error: The value you entered was invalid.', "...",
# “...”): the quote opens after no letter (not the apostrophe of "don't") and before a
# letter or sign, and closes before none. (A quote before a space closes a string: with
# the hosts of ``"example.com:443" as a different host than "example.com"`` taken out,
# the prose between the two was read as a quoted message. Nor does one open before a
# sign and a space: between the closing quote of ``'&'`` and the opening one of ``';'``,
# "joined with '&', while everything else uses ';'" holds no message.)
_QUOTED_STRING_RE = compile_later(
    r"(?<!\w)'(?=\S)(?![,.;:!?][ \t])([^'\n]{%d,160})'(?!\w)"
    r"|(?<!\w)\"(?=\S)(?![,.;:!?][ \t])([^\"\n]{%d,160})\"(?!\w)"
    r"|\u201c([^\u201c\u201d\n]{%d,160})\u201d"
    % ((QUOTED_LINE_MIN_CHARS,) * 3))
# A string the task's own code prints (``System.out.println("Area of Circle: " + a)``,
# ``print("done")``, ``console.log('step 2')``) is the reporter's text, not the tree's: a
# trial's javaparser keywords led with two such labels. (On the dev splits no message
# comes from one.)
PRINT_CALL_MAX = 48  # (characters before the quote: the call and a first argument)
_PRINTED_BY_RE = compile_later(
    r"(?:\b(?:print|println|printf|eprintln|puts|Print|Println|Printf|Fprintf|Fprintln)!?"
    r"|\bconsole\.(?:log|error|warn|info|debug)|\bSystem\.(?:out|err)\.print(?:ln|f)?)"
    r"\s*\(\s*(?:[A-Za-z_][\w.]*\s*,\s*)?[fFbBrR]?\Z")
# A backticked span that reads as prose (three words in a row), or that is a command
# line after a shell prompt (``/var/tmp $ javac TestClass.java``, ``$ java -Duser.language=en
# -jar x.jar``: a trial's checkstyle keywords held ``Duser``, ``javac``, ``cat``): its words
# are the task's words, not code names.
_PROSE_SPAN_RE = compile_later(r"[A-Za-z]+ [A-Za-z]+ [A-Za-z]+|(?:^|(?<=[\s~/\w]))\$[ \t]+\S")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A path of the reporter's machine (``/dev/null``, ``/tmp/x``, ``/usr/share``,
# ``~/silesia.tar``): its pieces name the reporter's files, not the code, and are no
# keywords - unless it ends in a source file (``/home/ci/.../dayjs/plugin/utc.js:1:1941``,
# a stack frame whose tail may be the tree's own file: its words stay).
# A Windows path from a drive (``C:/git/testcc/.``, ``-IC:\\src``, a compiler flag's too)
# is the reporter's machine's as well, whole where its folders' names hold blanks
# (``C:\\Program Files (x86)\\Microsoft VS Code\\x.js``, ``C:\\Users\\John Smith\\``).
_MACHINE_PATH_RE = compile_later(
    r"(?<![\w./~-])(?:~|/(?:dev|tmp|home|Users|usr|etc|var|opt|mnt|private|root|proc)(?=/|\s|$))[\w.~/+@-]*"
    r"|(?:(?<![\w./~-])|(?<=-[A-Za-z]))[A-Za-z]:[\\/]+(?:[\w.~+@()-]+(?: [\w.~+@()-]+)*[\\/]+)*[\w.~/\\+@-]*")
# ... and the head of one that ends in a source file, which names the reporter's machine
# and account, not the project: a drive, a home directory and its user's name
# (``C:\\Users\\brian\\``, ``/home/ci/``; a trial's nodemon keywords held ``users`` and
# ``brian``), and a Windows path's backslashes, read as slashes.
_MACHINE_HEAD_RE = compile_later(r"^(?:[A-Za-z]:)?/*(?:(?:home|Users)/[^/]+/|root/|~/|program files(?: \(x86\))?/[^/]+/)?",
                                 re.I)
# A bare name of an archive, an image, a document or a package the reporter has
# (``FOSS-Cannon-v1.3.zip``, ``screenshot.png``, ``app-1.2.jar``): the reporter's file,
# its words no keywords (a trial's ``foss``, ``cannon``). Not a path's tail (``docs/logo.png``
# may be the tree's), nor a dotted name of three lower-case parts or more, a package's
# (``java.util.zip``); URLs are read before. (It starts only where its run of name
# characters starts: ``+a.`` repeated would be scanned from every ``+``.)
_DATA_FILE_RE = compile_later(
    r"(?<![\w./\\+-])(?![a-z_]+(?:\.[a-z_]+){2,}(?![\w.+-]))\w[\w.+-]*\.(?:zip|tar|gz|tgz|7z|rar|xz|bz2|zst|png"
    r"|jpe?g|gif|webp|bmp|pdf|mp4|mov|mkv|avi|mp3|wav|iso|dmg|msi|exe|apk|jar|whl)(?![\w/\\-]|\.\w)", re.I)
# A bare file name that labels the task's own code (``main.go``: then a fenced block): the
# reporter's program, not a file of the tree (a trial's ``main.go`` ranked the tree's four
# ``cmd/*/main.go`` 2nd to 5th). The label goes; the code stays. A heading is such a label
# too (``#### index.ts`` over a block: a trial's ranked the tree's barrel ``index.ts`` files).
_CODE_LABEL_RE = compile_later(
    r"^[ \t>]{0,10}(?P<hash>#{1,6}[ \t]+)?(?P<open>\*\*|__)?(?P<tick>`)?(?P<name>[\w-]{1,100}(?:\.[\w-]{1,40})*\.(?P<ext>[A-Za-z]\w{0,9}))"
    r"(?(tick)`)(?(open)(?:\*\*|__))(?P<colon>[ \t]{0,5}:)?[ \t]{0,10}(?=\n(?:[ \t]*\n)?[ \t]*(?:```|~~~)[ \t]*\w*[ \t]*\n)",
    re.M)


def _unless_not_a_file(m: "re.Match[str]") -> str:
    """A code block's label taken out when it is a file's name: decorated (backticks,
    bold or a colon after it: the last line of a block before its closing fence is none)
    and of a type of file the tree may hold (``torch.compile`` is no file)."""
    decorated = m.group("tick") or m.group("open") or m.group("colon") or m.group("hash")
    return "" if decorated and m.group("ext").lower() in _PATH_EXTENSIONS else m.group(0)
# A file name's extension in pasted code (``a.py``, ``--exclude-patterns "*.tmp"``) names
# a kind of file, not the code: ``py`` named ``py.typed`` by its stem, ``tmp`` was searched.
_FILE_SUFFIX_RE = compile_later(r"(?:(?<=\*)|(?<=\w))\.(?:%s)(?![\w(.])|\*\.\w+" % _EXT_ALT)
# A pasted diff's header lines (``diff --git a/x.go b/x.go``, ``--- a/x.go``, ``+++ b/x.go``):
# git's ``a/`` and ``b/`` stand for the two sides, not a directory (a trial's
# ``a/viper_test.go`` was a path keyword that no file held, reported as a gap).
_DIFF_HEADER_RE = compile_later(r"(?m)^([ \t]*(?:diff --git|---|\+\+\+)[ \t]+)[ab]/(\S+)(?:([ \t]+)[ab]/(\S+))?")


def _diff_header_paths(m: "re.Match[str]") -> str:
    """A diff header line with git's ``a/`` and ``b/`` taken off its paths."""
    return m.group(1) + m.group(2) + (m.group(3) + m.group(4) if m.group(4) else "")


# A runtime's own header of a crash report (Rust's panic line and backtrace note, Go's
# goroutine header): the words of the runtime, not of the code (``thread 'main'`` made
# ``main`` a keyword).
_RUNTIME_HEADER_RE = compile_later(
    r"thread '[^'\n]{0,40}' panicked at|note: run with `?RUST_BACKTRACE=1`? environment variable to display"
    # (and a shell's note on a crashed process, "Aborted (core dumped)": "dumped" is no
    # word of the code, and its synonyms were serialize, serializer, serialization; quoted
    # as the text under report, `(core dumped)`, it stays)
    r" a backtrace|goroutine \d+ \[[a-z ]+\]:|(?<![`'\"])\(core dumped\)(?![`'\"])"
    # (and a browser console's "Uncaught" before an error's class: the console's word)
    r"|(?<!\w)Uncaught(?= (?:[A-Z]\w*Error\b|\(in promise\)))")
# A runtime's own message, which no file of a program's tree raises, is no message to
# search as written: Rust's bounds check, unwrap and overflow panics, Go's runtime errors,
# V8's on undefined and the stack, and CPython's recursion limit (a trial's procs report:
# "index out of bounds: the len is 1 but the index is 1" gave the first keyword, "but the
# index is", and a gap). Its words stay words: a tree that does raise it (a JS engine, a
# fork of Rust's std) still matches them, and a task that is only the message keeps its
# keywords. Quoted by the reporter (the quote or backtick after a blank, closed right
# after it) it is the text under report and stays a message, as a quoted ``(core dumped)``
# does; a runtime's own quotes (Rust's ``panicked at '...'``, ``Error('...')``, a JSON
# log's ``"msg":"..."``) are no reporter's.
_RUNTIME_MESSAGE_RE = compile_later(
    r"(?<!\w)(?:index out of bounds: the len is \d+ but the index is \d+"
    r"|called `(?:Option|Result)::(?:unwrap|expect|unwrap_err)\(\)` on an? `(?:None|Err|Ok)` value"
    r"|attempt to (?:add|subtract|multiply|divide|negate|shift left|shift right|calculate the remainder)"
    r" (?:with overflow|by zero)"
    r"|byte index \d+ is (?:not a char boundary|out of bounds)"
    r"|range (?:start|end) index \d+ out of range for slice of length \d+"
    r"|runtime error: (?:index out of range(?: \[-?\d+\] with length \d+)?|slice bounds out of range"
    r"(?: \[[^\]\n]{0,40}\](?: with (?:length|capacity) \d+)?)?"
    r"|invalid memory address or nil pointer dereference|integer divide by zero)"
    r"|assignment to entry in nil map|all goroutines are asleep - deadlock!"
    r"|concurrent map (?:writes|read and map write)"
    # (V8's, after the console's "Uncaught" and its error's class when they are there: a
    # reporter who quotes the console's line quotes them too.)
    r"|(?:Uncaught )?(?:(?:TypeError|RangeError|InternalError): )?(?:Cannot (?:read|set) propert(?:y|ies)"
    r"(?: '[^'\n]{1,80}')? of (?:undefined|null)|Maximum call stack size exceeded)"
    # (V8's and CPython's on a name the program never bound, and V8's on a value used as
    # what it is not, after the error's class: a trial's chalk report, "ReferenceError:
    # navigator is not defined", was its first keyword and a gap beside the one file
    # holding ``navigator``. The name itself is a keyword: _RUNTIME_NAME_RE.)
    r"|(?:Uncaught )?(?:ReferenceError|NameError): (?:(?:global )?name )?'?[\w$.]{1,80}'? is not defined"
    r"|(?:Uncaught )?TypeError: (?:object )?(?:\([^()\n]{0,80}\)|[\w$.\[\]'\"]){1,40}"
    r" is not (?:a function|a constructor|iterable)"
    r"|maximum recursion depth exceeded(?: while calling a Python object| in comparison)?)(?![\w])")


# The name a runtime's message says is unbound or not callable (``got`` of "TypeError:
# got is not a function", ``useId`` of "(0 , _react.useId) is not a function"): a name of
# the code, kept as one whatever its word (the message was its only place) - but not a
# minified one-letter name, nor what the language calls every value (``t.default``,
# ``x.then``, V8's own ``(intermediate value)``, ``object null``): an adversarial check's
# ``default`` and ``value`` took a ranking's confidence from 0.64 to 0.16.
_RUNTIME_NAME_RE = compile_later(r"([A-Za-z_$][\w$]*)'?\)? is not (?:defined|a function|a constructor|iterable)$")
_RUNTIME_NOT_NAMES = frozenset(("default", "then", "value", "null", "undefined", "this", "self", "prototype",
                                "call", "apply", "bind", "constructor", "length", "object", "function",
                                "iterator", "symbol", "window", "global", "globalthis", "module", "exports",
                                "require"))


def _runtime_words(task: str) -> tuple[list[str], set[str]]:
    """What the runtime's own messages in ``task`` say of the code, in one pass over them:
    the names they are about (:data:`_RUNTIME_NAME_RE`), and the error classes
    (``ReferenceError``, ``NameError``) the task names only at their heads - the runtime's
    words, which no program's file holds (a trial's chalk report listed
    ``ReferenceError`` among its gaps)."""
    names: list[str] = []
    heads: dict[str, int] = {}
    for m in _RUNTIME_MESSAGE_RE.finditer(task):
        head = _RUNTIME_CLASS_RE.match(m.group(0))
        if head is not None:
            heads[head.group(1)] = heads.get(head.group(1), 0) + 1
        named = _RUNTIME_NAME_RE.search(m.group(0))
        if named is None or "intermediate value" in m.group(0):
            continue
        name = named.group(1)
        if len(name.strip("$_")) >= 2 and name.lower() not in _RUNTIME_NOT_NAMES:
            names.append(name)
    classes = {cls for cls, n in heads.items() if len(re.findall(r"(?<!\w)%s(?!\w)" % re.escape(cls), task)) == n}
    return names, classes


# The console's "Uncaught" or an error's class before a runtime's message: the line a
# console or a log prints, whoever quotes it (a quote around it is the reporter's copy of
# that line, not the message as the subject of the report: "TypeError: Cannot read
# property 'length' of undefined" in quotes was a message no file holds, and a gap).
_CONSOLE_PREFIX_RE = compile_later(r"Uncaught |[A-Z]\w*Error: ")
# ... and the error's class there.
_RUNTIME_CLASS_RE = compile_later(r"(?:Uncaught )?([A-Z]\w*Error): ")


def _unless_quoted_by_reporter(m: "re.Match[str]") -> str:
    """A runtime's message (:data:`_RUNTIME_MESSAGE_RE`) as an empty bracket, which cuts a
    message there without reading as code (a program's own message around it stays:
    ``request handler crashed with Maximum call stack size exceeded``), unless the
    reporter quoted it whole."""
    text, start, end = m.string, m.start(), m.end()
    if _CONSOLE_PREFIX_RE.match(m.group(0)):
        return " [] "  # (a console's or a log's line, quoted or not: the runtime's words)
    quote = text[start - 1] if start else ""
    by_reporter = quote in ("\"", "'", "`") and text[end:end + 1] == quote \
        and (start < 2 or text[start - 2].isspace()) \
        and not text[max(0, start - 14):start - 1].rstrip().endswith("panicked at")
    if by_reporter:
        return m.group(0)
    return " [] "


_FENCED_RE = compile_later(r"```.*?(?:```|$)", re.S)
# The language a fenced block's opening names (```` ```python ````, ```` ```console ````):
# the snippet's kind, no word of the report (a trial's ``python``, ``text`` were keywords).
_FENCE_INFO_RE = compile_later(r"^([ \t>]*(?:`{3,}|~{3,}))[ \t]*[\w+#.-]+", re.M)
# The first name of an import line's module (``import a.b``, ``from a.b import c``).
_IMPORTED_HEAD_RE = compile_later(r"^[ \t>]*(?:from|import)[ \t]+([A-Za-z_]\w*)", re.M)
# Lines that are code, not prose: indented blocks, REPL prompts and output, traceback
# frames, shell commands.
_CODE_LINE_RE = compile_later(r"^(?: {4}|\t|>>>|\.\.\.|In \[\d*\]|Out\[\d*\]|\s*File \"|\$ )")
_WORD_RE = re.compile(r"[^\W\d_]+")
# A prose word with a bound prefix (``Sub-list``, ``pre-release``, ``multi-line``, ``non
# existent``) is one word, spelled joined in code (``sublist``, ``prerelease``,
# ``multiline``, ``non_existent``): the prefix alone is in countless names (a trial's
# ``pre`` counted ``prevCapZero``, ``non`` counted ``None``, ``sub`` ``substring``).
# ``non`` is never a word of its own, so a blank joins it too. The word after the prefix
# stays a word as well (``non-boolean`` is about booleans).
_BOUND_PREFIXES = frozenset("anti bi co inter intra mid mis multi pre re semi sub tri un non".split())
_PREFIXED_WORD_RE = compile_later(
    r"(?<![\w-])(?:(%s)-|(non)[ \t]+)([^\W\d_]{2,})(?![\w-])" % "|".join(sorted(_BOUND_PREFIXES)), re.I)


def _prefix_joined(m: "re.Match[str]") -> str:
    """A _PREFIXED_WORD_RE match as one word, normalized: ``Non existent`` -> ``non-existent``."""
    return normalize(m.group(1) or m.group(2)) + "-" + normalize(m.group(3))
# A word of the title that ends in a number names a variant (``jline3`` beside ``jline2``,
# ``http2``, ``base64``): kept whole as well as by its letters (a trial's ``jline3`` searched
# as ``jline`` ranked the jline2 module level with the jline3 one the report named).
_NUMBERED_WORD_RE = re.compile(r"(?<![\w.])([A-Za-z]{3,}[0-9]{1,3})(?!\w)")
_PROMPT_RE = compile_later(r"^\s*(?:>>>|\.\.\.|In \[\d*\]:|Out\[\d*\]:|\$)\s?")
_NAME_RUN_RE = compile_later(r"[a-z]{3}")
# A package, import or include line (any language): it names what a file uses, not
# where a task is in it (report.py quotes it last; a pasted one points nowhere).
HEADER_LINE_RE = compile_later(
    r"^[ \t]*(?:package[ \t]|import[ \t{(*]|from[ \t]+[\w.]+[ \t]+import[ \t(]|#[ \t]*include|use[ \t]|using[ \t]|mod[ \t]+\w+;)")
# ``from package.module import Q, F`` in pasted code: the names imported from a module.
_FROM_IMPORT_RE = compile_later(r"^[ \t]*(?:>>>[ \t]*)?from[ \t]+[\w.]+[ \t]+import[ \t]+\(?([\w \t,]+)", re.M)
_CAMEL_SPLIT_RE = re.compile(r"[A-Z]+[0-9]*(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+|[^\W_]+")


@dataclass(frozen=True)
class Keyword:
    """One thing to search for.

    ``text`` is the display form; ``needles`` the lower-cased byte spellings searched
    literally in file contents; ``path_needle`` what is looked for in file paths.
    """

    text: str
    kind: Kind
    weight: float
    needles: tuple[bytes, ...]
    path_needle: str
    group: str = ""  # synonyms of one gap share its text here: they count once, as an OR
    stemmed: bool = False  # a word searched by its stem ("computed" -> "comput")
    translated: bool = False  # an English word the glossary gave for a CJK term of the task
    stem_only: bool = False  # a quoted name too short to count in text: only a file stem it equals counts
    task_defines: bool = False  # the task's own code defines this name (see score.CONVENTION_DEFINERS)
    setting: bool = False  # only a key of the task's pasted settings file (see _SETTINGS_FENCES)
    dotted: bool = False  # a path read from a dotted name (``a.b.c.f``): its last part may be a member

    def to_json(self) -> dict:
        """The keyword as the JSON boundary shows it."""
        out = {"text": self.text, "kind": self.kind.value, "weight": round(self.weight, 3)}
        if self.group:
            out["group"] = self.group
        if self.stemmed:
            out["stemmed"] = True
        if self.translated:
            out["translated"] = True
        if self.stem_only:
            out["stem_only"] = True
        if self.task_defines:
            out["task_defines"] = True
        if self.setting:
            out["setting"] = True
        if self.dotted:
            out["dotted"] = True
        return out

    @classmethod
    def from_json(cls, item: dict) -> "Keyword | None":
        """The keyword :meth:`to_json` gave (None when its text is empty); the kind must be
        one of KIND_WEIGHTS (the caller checks: an unknown kind is bad state, not a guess)."""
        weight = item.get("weight")
        kw = make_keyword(str(item.get("text", "")), item["kind"],
                          float(weight) if isinstance(weight, (int, float)) else None,
                          item.get("group") if isinstance(item.get("group"), str) else "",
                          stemmed=item.get("stemmed") is True, stem_only=item.get("stem_only") is True)
        return replace(kw, translated=item.get("translated") is True, task_defines=item.get("task_defines") is True,
                       setting=item.get("setting") is True and kw.kind == Kind.IDENTIFIER,
                       dotted=item.get("dotted") is True and kw.kind == Kind.PATH) if kw is not None else None


def normalize(text: str) -> str:
    """NFKC + casefold: full-width ``ＪＷＴ`` and ``jwt`` compare equal (hints.py's NFKC:
    linear however many combining marks a run holds)."""
    return _nfkc(text).casefold()


def split_identifier(name: str) -> list[str]:
    """``RateLimiter`` -> ``["rate", "limiter"]``; ``file_upload`` -> ``["file", "upload"]``."""
    parts: list[str] = []
    for chunk in re.split(r"[\W_]+", name):
        parts.extend(p.lower() for p in _CAMEL_SPLIT_RE.findall(chunk) if p)
    return parts


# A whole token of letters then at least two digits: error codes and named constants
# (``E108``, ``W0612``, ``Http404``, ``rfc850``). Prose never spells a word that way; the
# tail of a number (``0o644``, ``0x1F``) is no such token.
_CODE_TOKEN_RE = re.compile(r"(?<![\w.])[A-Za-z]+[0-9]{2,}(?![\w.])")
# ... and at least this long, so ``x10``-style symbols of pasted code stay out.
MIN_CODE_TOKEN_LEN = 4
# A whole upper-case word of at least five letters is a constant or a setting (``DEBUG``,
# ``APPEND``); shorter ones are mostly acronyms of prose (``URL``, ``JSON``, ``HTTP``).
# Measured on the dev split: whole loop +0.5 points Acc@10 (cycle-1 ranking: +0.4 Acc@1,
# +0.4 Acc@5, +0.5 Acc@10).
_CONSTANT_RE = re.compile(r"(?<![\w.])[A-Z]{5,}(?!\w)")
# A row of a table the reporter's program drew (``│ ID │ DIALER │ STATE │``): its capitals
# are column headers of that program's output, not constants of the tree (a trial's
# go-pretty report: ``DIALER``, ``ACCEPTOR``, ``CONNECTIONS`` led its keywords). Its words
# still count as the task's words.
_TABLE_ROW_RE = re.compile(r"^[^\n]*[\u2502\u2503\u2551][^\n]*[\u2502\u2503\u2551][^\n]*$", re.M)
# Capitalised words joined by hyphens name a protocol field or a product (``If-Modified-Since``,
# ``Content-Type``), spelled ``if_modified_since`` in code; prose compounds (``built-in``,
# ``read-only``) are lower-case. Measured on the dev split: 1 of the 6 issues holding one
# moved (9 -> 2), the others kept their rank.
_CAPITALISED_COMPOUND_RE = re.compile(r"(?<![\w-])[A-Z][A-Za-z]*(?:-[A-Z][A-Za-z]*)+(?![\w-])")
# A logged line's level, in capitals (the words of every pattern below that reads one).
_LEVELS = r"(?:ERROR|FATAL|PANIC|CRITICAL|SEVERE|WARNING|WARN)"
# A logger's time at a line's start, maybe a process or a zone after it, up to its level
# (``2024-01-02 10:00:00,123 ERROR``, ``[12:00:00] 4123 WARN``).
# (A date before a clock, a second's fraction and a zone after it: also _TIMESTAMP_RE's.)
_DATE = r"\d{4}-\d{2}-\d{2}[ T]"
_FRACTION = r"(?:[.,]\d{1,9})?"
_ZONE = r"(?:Z|[+-]\d{2}:?\d{2})?"
_LOG_TIME = (r"[ \t]*\[?(?:%s)?\d{2}:\d{2}:\d{2}%s%s\]?" % (_DATE, _FRACTION, _ZONE)
             + r"(?:[ \t]+[^\s\[]{1,40}){0,2}?[ \t]+")
# A logged line's level (``ERROR: config file error: ...``, ``[WARNING] ...``, after a
# logger's time) is the logger's label, not a constant of the tree (a trial's Python
# report: ``ERROR``, merged with the title's "error", led its keywords and ranked the
# console module first).
_LOG_LEVEL_RE = re.compile(r"^([ \t>*\[(-]*)%s(?=[\]:])|^(%s)%s\b" % (_LEVELS, _LOG_TIME, _LEVELS), re.M)
# A command-line option of hyphen-joined words (``--full-path``, ``--collect-only``) names
# a setting the code spells ``full_path`` / ``fullPath``: one name, not two prose words.
LONG_OPTION_RE = re.compile(r"(?<![\w-])--([A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+)(?![\w-])")
# ... and of one word of four letters or more (``--expect``), taken from the title only.
_WORD_OPTION_RE = re.compile(r"(?<![\w-])--([A-Za-z][A-Za-z0-9]{3,})(?![\w-])")
# A quoted name too short to search as text (``ku``, ``mr``: inside countless words) or
# joined by hyphens (``ar-ly``, ``zh-cn``): a locale, a command, a module named by its
# file. It names only a file whose stem it is (a stem_only keyword). Measured on the
# other-language dev split: the locale files an issue names by their code.
# (A version's head is none: ``v0`` of ``"v0.0.1"``; a man page's ``git-rebase.1`` is.)
_STEM_NAME_RE = re.compile(r"(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*(?![\w-]|(?<=\d)\.\d)")
# ... at least this long: a single letter is a variable of the prose's example.
MIN_STEM_NAME_LEN = 2
# A quoted hyphen-joined name this long or longer, its letters joined (``last-of-type``,
# ``max-age``, ``dry-run``), is a name the code spells too (``"last-of-type"``,
# ``last_of_type``, ``lastOfType``): it is searched as an identifier. A shorter one
# (``ar-ly``, ``zh-cn``) stays a file's stem: joined, it is inside common words
# (``arly`` in ``early``). So does a version (``pytest-4``).
MIN_HYPHENED_NAME = 6
# ... and at most this many of them.
MAX_STEM_NAMES = 12


_ACRONYM_PLURAL_RE = re.compile(r"[A-Z]{2,}s")


def is_code_identifier(token: str) -> bool:
    """True for names that only code would contain: snake_case, CamelCase, dunder. A run
    of underscores alone (a form's blank to fill in, ``___``) names nothing, and an
    acronym's plural (``URLs``, ``PINGs``, ``IDs``) is prose: searched as a code name it
    matched nothing and broadened into synonyms (``health`` for ``PINGs``)."""
    if not token.strip("_") or _ACRONYM_PLURAL_RE.fullmatch(token):
        return False
    if "_" in token.strip("_") or token.startswith("__"):
        return True
    inner = token[1:]
    return any(c.isupper() for c in inner) and any(c.islower() for c in token)


# A stem shorter than this matches too much ("us" from "using").
MIN_STEM_LEN = 4


def stem_prefix(word: str) -> str:
    """A light English stem that is always a prefix of the word: ``limiting`` -> ``limit``,
    ``expiry`` -> ``expir``, ``queries`` -> ``quer``; short words are kept whole."""
    for suffix in lang.SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= MIN_STEM_LEN:
            return word[: len(word) - len(suffix)]
    return word


def singular_of(word: str) -> "str | None":
    """A plural English word's singular, at least MIN_STEM_LEN letters (``lists`` ->
    ``list``, ``policies`` -> ``policy``, ``boxes`` -> ``box`` is too short), else None
    (``status``, ``class``, ``analysis`` are no plurals)."""
    if not word.isalpha() or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return None
    if word.endswith("ies"):
        out = word[:-3] + "y"
    elif word.endswith(("ches", "shes", "xes", "zes", "sses")):
        out = word[:-2]
    else:
        out = word[:-1]
    return out if len(out) >= MIN_STEM_LEN else None


def base_form(word: str) -> str:
    """The word a dictionary would list: ``limiting`` -> ``limit``, ``policies`` -> ``policy``
    (for looking synonyms up; :func:`stem_prefix` is for matching)."""
    if word.endswith("ies") and len(word) - 3 >= MIN_STEM_LEN - 1:
        return word[:-3] + "y"
    return stem_prefix(word)


def make_keyword(text: str, kind: "Kind | str", weight: float | None = None, group: str = "",
                 stemmed: bool = False, stem_only: bool = False) -> Keyword | None:
    """Build a keyword with its identifier-aware needles, or None if it is empty.

    ``kind`` is a :class:`Kind` or its value; an unknown kind is a ValueError. A
    ``stem_only`` keyword (an identifier) has no needles: it names only a file whose
    stem it is (``ku`` -> ``locale/ku.js``)."""
    kind = Kind(kind)
    text = text.strip()
    if not text or len(text) > MAX_KEYWORD_CHARS:
        return None
    norm = normalize(text)
    needles: list[str] = []
    if kind in ("path", "message"):
        needles.append(norm)
        path_needle = norm
    else:
        parts = split_identifier(text) if _IDENT_RE.fullmatch(text) else [
            p for p in re.split(r"[\s_\-]+", norm) if p
        ]
        if not parts:
            parts = [norm]
        if len(parts) > 1:
            needles += ["".join(parts), "_".join(parts)]
            if not _IDENT_RE.fullmatch(text):
                needles += [" ".join(parts), "-".join(parts)]
        needles.insert(0, norm)
        path_needle = "".join(parts) if len(parts) > 1 else norm
        stemmed = stemmed and kind == "word" and len(parts) == 1
        if stemmed:
            # A plain word matches its other forms: "computed" finds compute_hints,
            # "expiry" finds expired. The stem is a prefix of the word, so it counts both.
            needles = [stem_prefix(norm)]
            path_needle = needles[0]
    if not text.isascii():
        # A file's text is lower-cased byte by byte (ASCII only), so a keyword whose
        # normalized form differs from how it is written (``straße`` -> ``strasse``,
        # ``ﬁle`` -> ``file``, ``İ``) is also searched as written, ASCII lower-cased:
        # a file holding it verbatim matches, and no gap claims otherwise.
        needles.append(text.encode("utf-8", "surrogateescape").lower().decode("utf-8", "surrogateescape"))
    encoded = tuple(dict.fromkeys(n.encode("utf-8", "surrogateescape") for n in needles if n))
    stem_only = stem_only and kind == "identifier"
    if stem_only:
        encoded, path_needle, stemmed = (), norm, False
    w = KIND_WEIGHTS[kind] if weight is None else weight
    return Keyword(text=text, kind=kind, weight=w, needles=encoded, path_needle=path_needle, group=group,
                   stemmed=stemmed, stem_only=stem_only)


def keywords_from_list(items: Iterable[str], kind: str = "given") -> list[Keyword]:
    """Caller-given keywords, de-duplicated by normalized text, order kept."""
    out: list[Keyword] = []
    seen: set[str] = set()
    for item in items:
        kw = make_keyword(item, kind)
        if kw is not None and normalize(kw.text) not in seen:
            seen.add(normalize(kw.text))
            out.append(kw)
    return out


def _tail_path(path: str, keep: int = 3) -> str:
    """The last ``keep`` components of a (possibly absolute, possibly Windows) path.

    An installed package's frame (``.../site-packages/pkg/mod.py``) keeps only what
    follows the install directory (:func:`installed_tail`): the path inside the package.
    """
    parts = [p for p in re.split(r"[\\/]+", path) if p and p not in (".", "..")]
    inner = installed_tail("/".join(parts))
    return "/".join((inner.split("/") if inner is not None else parts)[-keep:])


# A dotted name starting with one of these is a member expression, never a module path
# (``self.x``, ``import.meta.hot``, ``super.save``, ``window.location``; ``os.path`` and
# ``sys.argv`` are the standard library's, not the tree's).
# (A test framework's globals and Node's are objects too: ``it.only``, ``describe.skip``,
# ``expect.extend``, ``console.log``, ``process.env``; a trial's mocha report read
# ``it.only`` as the path it/only.) So are the names every handler gives its error,
# request, response and context (a trial's ``err.config`` was a gap as the path err/config).
_NOT_MODULE_HEADS = frozenset(("self", "cls", "this", "os", "sys", "import", "super", "new",
                               "window", "document", "globalthis", "it", "describe", "expect",
                               "console", "process", "err", "res", "req", "resp", "ctx"))


# File types that are no module (``pip.pyz``, ``app.jar``, ``libpthread.so``): a dotted
# name ending in one names a file, not a package path (``db``, ``log``, ``lock`` are
# module names too: not here).
_FILE_EXTENSIONS = frozenset(("pyz", "whl", "egg", "zip", "tar", "gz", "tgz", "jar", "war", "exe", "dll",
                              "so", "dylib", "pdf", "png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico",
                              "mp4", "mov", "woff", "woff2", "ttf", "sqlite", "pem", "crt"))


# Python's standard modules whose functions a report quotes (``datetime.strptime``,
# ``json.dumps``, ``re.compile``), and Node's (``url.resolve``, ``fs.readFile``): the call
# names a function of the runtime, not a package path of the tree (a trial's dateparser
# keywords held the path datetime/strptime, a url-parse report's the gap url/resolve).
# Only a module and one name: ``json.exception.parse_error`` is a C++ library's error id.
_STDLIB_HEADS = frozenset(("datetime", "json", "re", "time", "math", "logging", "subprocess", "shutil",
                           "tempfile", "threading", "asyncio", "socket", "random", "string", "struct",
                           "copy", "pickle", "inspect", "warnings", "argparse", "functools", "itertools",
                           "collections", "contextlib", "dataclasses", "typing", "hashlib", "base64",
                           "traceback", "weakref", "signal", "codecs", "locale", "calendar", "uuid",
                           "glob", "fnmatch", "operator", "textwrap", "urllib", "http", "https", "url",
                           "fs", "querystring", "child_process", "zlib", "crypto"))
# ... and the Java runtime's packages, whatever their length (``java.lang.NullPointerException``:
# a trial's keywords held the path java/lang).
_RUNTIME_HEADS = frozenset(("java", "javax", "jdk", "sun"))


def _module_path(dotted: str) -> str | None:
    """``django.db.models.query`` -> ``django/db/models/query`` (None for ``self.x`` and
    for a standard module's function, ``datetime.strptime``)."""
    parts = dotted.split(".")
    if parts[0].lower() in _NOT_MODULE_HEADS or len(parts) < 2 or len(parts) == 2 and parts[0] in _STDLIB_HEADS \
            or parts[0] in _RUNTIME_HEADS:
        return None
    if parts[-1].lower() in _PATH_EXTENSIONS or parts[-1].lower() in _FILE_EXTENSIONS:
        return None
    # Modules are lower-case by convention: django.db.models.Q names django/db/models.
    module = []
    for p in parts:
        if not p.islower() and not p.replace("_", "").isdigit():
            break
        module.append(p)
    if len(module) < 2 or any(len(p) < 2 for p in module) or max(len(p) for p in module) < 3:
        return None  # "e.g", "i.e": abbreviations, not modules; "sy.Matrix": an attribute
    return "/".join(module)


# A call in the task's code: ``name(``, ``obj.name(``, ``Type::name(``.
_CODE_CALL_RE = compile_later(r"(?<![\w$])([A-Za-z_]\w*)[ \t]*\(")


def called_in_code(task: str) -> frozenset[str]:
    """The names the task's own code calls (``req.matches(&v)``, ``parse("<1.2")``), lower
    case: in its fenced blocks, its code lines (indented, a REPL prompt's) and its
    backticked spans (:func:`_code_pieces`). A plain word called there (``matches``) is
    the API the report's code uses even when it is no keyword of its own kind."""
    return frozenset(m.group(1).lower() for piece in _code_pieces(task) for m in _CODE_CALL_RE.finditer(piece))


def _code_pieces(task: str, also: Callable[[str], list[str]] = lambda line: []) -> list[str]:
    """The code the task quotes, in its order: each line of a fenced block, each code
    line (indented, a REPL prompt's or a traceback's; the prompt left out) and each
    backticked span, with what ``also`` takes from each line outside the fences."""
    pieces: list[str] = []
    for block in _FENCED_RE.findall(task):
        pieces += block.strip("`").split("\n")[1:]  # (the opening line names a language)
    for line in _FENCED_RE.sub(" ", task).split("\n"):
        if _CODE_LINE_RE.match(line):
            pieces.append(_PROMPT_RE.sub("", line))
        pieces += _BACKTICK_RE.findall(line)
        pieces += also(line)
    return pieces


def quoted_lines(task: str) -> tuple[str, ...]:
    """The lines of code the task quotes, lower-cased and stripped, longest first (ties
    in text order): each line of a fenced block, each code line (indented, a REPL
    prompt's, a traceback's), each backticked span, each message quoted in the prose
    (in single, double or typographic quotes) and each message of an error or a panic
    line (:func:`messages`). Only those of at least
    QUOTED_LINE_MIN_CHARS that hold a name (three letters in a row) and are no import or
    include line (those name what a file uses; every file of a package holds them);
    at most QUOTED_LINES_KEPT of them. A file holding one as written is where the task
    points in it: its results quote that line first (report.summary_lines)."""
    pieces = _code_pieces(task, lambda line: ["".join(groups) for groups in _QUOTED_STRING_RE.findall(line)])
    # An error's or a panic's message, quoted or not, unless a piece already holds it.
    low = [p.lower() for p in pieces]
    pieces += [m for m in messages(task) if not any(m.lower() in p for p in low)]
    found: dict[str, int] = {}
    for piece in pieces:
        line = piece.strip().lower()
        if len(line) >= QUOTED_LINE_MIN_CHARS and _NAME_RUN_RE.search(line) and not HEADER_LINE_RE.match(line):
            found.setdefault(line, len(found))
    # (The line a traceback raised at comes first, before longer ones: ``assert
    # isinstance(address, (str, bytes))`` before the call of the frame above it.)
    raised = {line: n for n, line in enumerate(raising_lines(task)) if line in found}
    return tuple(sorted(found, key=lambda t: (t not in raised, raised.get(t, 0), -len(t), found[t]))[:QUOTED_LINES_KEPT])


def raising_lines(task: str) -> tuple[str, ...]:
    """The code line of each Python traceback's last frame (``File "...", line 472, in f``
    and the line below it), where the exception was raised: lower-cased and stripped, in
    the task's order. (A line of carets or tildes under a code line, Python 3.11's, is
    passed over.)"""
    out: list[str] = []
    lines = task.split("\n")
    last = ""
    for i, line in enumerate(lines):
        text = line.lstrip(" \t>")
        if text.startswith("File ") and _TRACEBACK_RE.match(text):
            below = lines[i + 1] if i + 1 < len(lines) else ""
            code = below.lstrip(" \t>")
            # (The frame's code is indented below it; ``File "<stdin>", line 1`` shows none.)
            deeper = len(below) - len(code) > len(line) - len(text)
            last = code.rstrip(" \t>") if deeper and not code.startswith("File ") else ""
            continue
        text = text.rstrip(" \t>")
        if last and text and text != last and text.strip("^~ \t"):
            out.append(last.lower())
            last = ""
    if last:
        out.append(last.lower())
    return tuple(dict.fromkeys(out))


# (A level's message is on its line: a bare ``error:`` over a line of prose gives none.
# A panic's may be on the next, as Rust prints it since 1.73. rustc's ``error[E0502]:``
# names its code.)
# (A command-line program names itself first: ``ninja: fatal: cycle in rule variables``,
# ``git: fatal: ...``; a trial's C++ report. No dev issue's messages change. The name
# starts with a letter or digit: a line of dashes is read once, not once per dash.)
# (What failed names itself first, as a debugger's or a build's line prints it: ``Command
# failed: can not convert "x" to []uint8``; a trial's delve task.)
_ERROR_LINE_RE = compile_later(
    r"^[ \t>*-]*(?:Caused by:\s*|Exception in thread \"[^\"\n]*\"\s*|Uncaught (?:\(in promise\)\s*)?)?"
    r"(?:\w[\w.-]*:[ \t]*)?(?:[\w.]*(?:Error|ERROR|error|Exception|Panic|panic|PANIC|Fatal|fatal|FATAL)(?:\[[A-Z]?\d{1,6}\])?"
    r"[ \t]*:[ \t]*|(?:(?!(?i:it|this|that|everything|something|nothing|which)\b)\w+[ \t]+)?(?:[Ff]ailed|FAILED)[ \t]*:[ \t]*"
    r"|thread '[^'\n]*' panicked at [^:\n]*(?::\d+)*\s*:\s*)(\S.*)$", re.M)
# A build tool's or a linter's line, its level in brackets and then, maybe, the file and
# line it is about (``[ERROR] /var/tmp/T.java:3: 'try' child has incorrect indentation
# level 8 [Indentation]``, ``[WARNING] ...``; a trial's checkstyle report).
_LEVEL_LINE_RE = compile_later(
    r"^[ \t>*-]*\[%s\][ \t]*(?:[^\s:]{1,300}(?::\d+)+:[ \t]*)?(\S.*)$" % _LEVELS, re.M)
# A logger's line: a time, maybe a process or zone, the level, maybe a thread in brackets
# and the logger's name before `` - ``, then the message (logback's and log4j's
# ``2024-01-02 10:00:00,123 ERROR [main] o.a.c.Server - Unable to bind to port 8080``).
_LOGGED_LINE_RE = compile_later(
    r"^%s%s:?[ \t]+(?:\[[^\]\n]{0,80}\][ \t]+)?(?:[\w.$]{1,120}[ \t]+-[ \t]+)?(\S.*)$" % (_LOG_TIME, _LEVELS), re.M)
# Python's logging in its default format, the level, the logger's name and the message
# joined by colons (``ERROR:root:Unable to open the session store``,
# ``WARNING:django.request:Not Found: /admin``): the name is the logger's, not a word of
# the message (read as an error's line, ``root:Unable`` was cut out as a value).
_PY_LOGGED_LINE_RE = compile_later(r"^[ \t>*-]*%s:[\w.-]{1,120}:[ \t]*(\S.*)$" % _LEVELS, re.M)
# Ruby's uncaught error names its class after the message: ``test.rb:4:in 'wrap': no
# superclass method 'wrap' (NoMethodError)`` (a trial's mruby report, whose C interpreter
# raises the message: the fix's file that raises it 21st -> 11th). No dev issue quotes one.
# (Bounded, and the message ends in no space: a long run of spaces is read once, not once
# per space.)
_TRAILING_ERROR_RE = compile_later(
    r": ([^:\n`(]{0,%d}?[^:\n`(\s])[ \t]{1,8}\((?:[A-Z]\w*::)*[A-Z]\w*(?:Error|Exception)\)" % MESSAGE_MAX_CHARS)
_LINE_COLUMN_RE = compile_later(r"(?::\d+)+$")  # a stack frame's :line:column
# (A bracketed value ends before another ``[``: a message of many ``[`` is read once. A
# ``: `` is cut at before: each link of a chain is read on its own. A clause in
# parentheses after a space is cut at as well, its words a message of their own: ``too
# many arguments (need at most 1)``, a trial's tmux task, read as code for its ``(``. So
# is a span in braces (a template's or a struct's text: ``near { if user is admin }``)
# and a bracket or a brace standing alone, after a blank, the value a parser's message
# names: ``Expected JSON object start, got delimiter [ instead``, whose code writes
# ``got delimiter %s instead``; read as code for its ``[``, a trial's sops task lost the
# message the error was raised with, and stopped on the file that only wraps it.)
_INNER_QUOTE_RE = compile_later(
    r"['\"\u2018\u2019\u201c\u201d]|\[[^\[\]\n]*\]|\{[^{}\n]*\}|(?<=[ \t])\(|\)(?=[\s.,;:!?]|$)"
    r"|(?<![^ \t])[\[\]{}](?=[ \t.,;:!?]|$)")
# A word of a message holding a path's, a URL's or an assignment's punctuation is the
# value it was raised for, unquoted (``Unsupported URL type filena://``: the code writes
# ``Unsupported URL type {scheme}://``): the words on either side are the message.
# (A colon only inside the word: ``issues:`` ends a label.)
# A number standing alone is a value too (``incorrect indentation level 8, expected level
# should be 12``: the code writes ``level {1}``). (From a word's start only: tried at
# every letter of a long word it read that word in time that grew with its square.)
_VALUE_WORD_RE = compile_later(r"(?<!\S)[^\s/\\:=@]*(?:[/\\=@]|:(?=\S))\S*|(?<!\S)[-+]?\d+(?:[.,]\d+)*(?=[\s.,;]|$)")
_CODE_PUNCTUATION_RE = compile_later(r"[(){}\[\];=<>`|\\]|::|->|=>")


# A backticked chain of messages, each wrapping the next (``could not query for pull
# request: could not determine current branch: failed to run git: not on any branch``):
# an error as a program printed it, each part raised in its own place (a trial's Go
# report quoted one so). Three links at least, or an error's name first (```TypeError: ...```):
# one ``: `` is a commit's subject (``fix(router): normalize trailing slashes``) or a CSS
# declaration as often.
_BACKTICK_CHAIN_RE = compile_later(r"(?<!`)`([^`\n]{3,400})`(?!`)")
_ERROR_NAME_RE = compile_later(r"[\w.]{0,80}(?:Error|Exception|ERROR|error|Panic|panic|Fatal|fatal|FATAL)[ \t]*: ")


def _file_stems_only(task: str) -> set[str]:
    """The names the task holds only as file names' stems (each occurrence followed by a
    source file's extension: ``__init__`` of ``__init__.py``), in one pass over it."""
    as_stem: set[str] = set()
    elsewhere: set[str] = set()
    for m in _NAME_TOKEN_RE.finditer(task):
        # (After a dot it is a member: ``httpx.Response.json``.)
        stem = _STEM_SUFFIX_RE.match(task, m.end()) and not task.endswith(".", 0, m.start())
        (as_stem if stem else elsewhere).add(m.group(0))
    return as_stem - elsewhere


_NAME_TOKEN_RE = compile_later(r"(?<![\w$])[A-Za-z_$][\w$]*")
_STEM_SUFFIX_RE = compile_later(r"\.(?:%s)(?![\w(])" % _EXT_ALT)


def traceback_frames(task: str) -> frozenset[str]:
    """The functions a Python traceback in the task names as its frames (``File "...",
    line 9, in readLib`` -> ``readLib``)."""
    return frozenset(m.group(2) for m in _TRACEBACK_RE.finditer(task) if m.group(2) and m.group(2) != "<module>")


def messages(task: str) -> tuple[str, ...]:
    """The messages the task quotes (see MESSAGE_MIN_WORDS), at most MAX_MESSAGES: each
    quoted string (not one the task's own code prints), each error, panic or leveled
    line's message and each backticked chain of errors, cut at the values it holds, that
    reads as a sentence. The last link of a chain (``could not query: failed to run git:
    not on any branch``), where the error was raised, comes first; then the longest."""
    pieces = ["".join(g or "" for g in m.groups()) for m in _QUOTED_STRING_RE.finditer(task)
              if not _PRINTED_BY_RE.search(task, max(0, m.start() - PRINT_CALL_MAX), m.start())]
    pieces += [m.group(1) for m in _ERROR_LINE_RE.finditer(task) if not _PY_LOGGED_LINE_RE.match(m.group(0))]
    pieces += [m.group(1) for m in _PY_LOGGED_LINE_RE.finditer(task)]
    pieces += [m.group(1) for m in _LEVEL_LINE_RE.finditer(task)]
    pieces += [m.group(1) for m in _LOGGED_LINE_RE.finditer(task)]
    pieces += [m.group(1) for m in _BACKTICK_CHAIN_RE.finditer(task)
               if m.group(1).count(": ") >= 2 or _ERROR_NAME_RE.match(m.group(1))]
    pieces += _TRAILING_ERROR_RE.findall(task)
    found: dict[str, int] = {}
    origins: set[str] = set()
    for piece in pieces:
        # (Quotes inside a message name the value it was raised for, and a colon joins a
        # prefix or a detail: the words between them are the message as the code writes
        # it, ``'NoneType' object is not callable``.)
        links = []  # (the messages of each link of a chain ``a: b: c``)
        for link in piece.split(": "):
            inside = []
            for part in _INNER_QUOTE_RE.split(link):
                if _CODE_PUNCTUATION_RE.search(part):
                    continue  # (code, not a message: ``</p>`` is no value to cut at)
                for bit in _VALUE_WORD_RE.split(part):
                    text = bit.strip().strip(".,").strip()
                    if _is_message(text):
                        found.setdefault(text, len(found))
                        inside.append(text)
            if inside:
                links.append(inside)
        if len(links) > 1:
            origins.add(links[-1][0])  # (a chain's last link is where it was raised)
    return tuple(sorted(found, key=lambda t: (t not in origins, -len(t), found[t]))[:MAX_MESSAGES])


# Where a package manager installs a copy of a package: what follows names a file of the
# package's own tree. Cargo's registry keeps the crate's name without its version
# (``.cargo/registry/src/<index>/clap_builder-4.4.16/src/parser.rs`` -> ``clap_builder/src/parser.rs``,
# a workspace's member directory or, quoted from outside the root, the crate's own
# ``src/parser.rs``); Go's module cache (``pkg/mod/github.com/o/r@v1.2.0/x.go``), npm's
# ``node_modules/[@scope/]pkg/``, Python's ``site-packages/`` and an egg keep what follows.
_INSTALLED_RE = compile_later(
    r"(?<![^/])(?:\.cargo/registry/src/[^/]+/(?P<crate>[A-Za-z0-9_-]+?)-\d+\.\d+\.\d+[\w.+-]*"
    r"|\.cargo/git/checkouts/[^/]+/[0-9a-f]+"
    r"|pkg/mod/(?:[^/@]+/)*[^/@]+@[^/]+"
    r"|node_modules/(?:@[^/]+/)?[^/]+"
    r"|(?:site|dist)-packages(?:/[^/]+\.egg)?"
    r"|[^/]+\.egg)/")


def installed_tail(path: str) -> str | None:
    """The path inside the package an installed copy's ``path`` is a file of, or None when
    ``path`` is in no package manager's install directory (the last one counts)."""
    last = None
    for last in _INSTALLED_RE.finditer(path):
        pass
    if last is None or last.end() >= len(path):
        return None
    tail = path[last.end():]
    return last.group("crate") + "/" + tail if last.group("crate") else tail


def _unless_source(m: "re.Match[str]") -> str:
    """A machine path's replacement: nothing, unless it ends in a source file.

    A source file's path stays, as a path the tree may end, without the machine's head
    (``/home/ci/proj/src/x.go`` -> ``proj/src/x.go``, ``C:\\Users\\me\\app\\x.js`` ->
    ``app/x.js``, read as a quoted path; :data:`_MACHINE_HEAD_RE`); in a package manager's
    install directory, only the path inside the package stays (:func:`installed_tail`):
    the install directory's words (``cargo``, ``registry``, ``site``, ``packages``) name no
    code. A Python traceback's ``File "..."`` keeps its path as written (read as a frame).
    """
    path = _LINE_COLUMN_RE.sub("", m.group(0))
    if lang.language_of(path) in (lang.ANY, lang.NONE):
        return " "
    if m.string.endswith('File "', 0, m.start()):
        return m.group(0)
    path = re.sub(r"[\\/]+", "/", path)
    inner = installed_tail(path)
    return inner if inner is not None else _MACHINE_HEAD_RE.sub("", path, count=1)


def _is_message(text: str) -> bool:
    """Whether quoted text reads as a message (a sentence of words), not code or data.

    Its words are mostly letters; a word may carry a hyphen, a digit or a code point
    (``ill-formed UTF-8 byte``, ``surrogate U+DC00..U+DFFF must be followed by ...``, a
    trial's nlohmann task, whose lexer holds both as written), but most of the text is
    words and at least one word is plain letters."""
    if not MESSAGE_MIN_CHARS <= len(text) <= MESSAGE_MAX_CHARS or _CODE_PUNCTUATION_RE.search(text):
        return False
    words = text.split()
    letters = [sum(c.isalpha() for c in w) for w in words]
    wordy = [len(w) for w, n in zip(words, letters) if n >= 2 and 2 * n >= len(w)]
    if len(wordy) < MESSAGE_MIN_WORDS or not any(w.isalpha() for w in words):
        return False
    return sum(wordy) >= 0.6 * sum(len(w) for w in words)


def prose_of(task: str) -> str:
    """The task without its pasted code: fenced blocks and code lines removed."""
    text = _FENCED_RE.sub(" ", task)
    return "\n".join(line for line in text.split("\n") if not _CODE_LINE_RE.match(line))


# A colour or a hash written in hex (``#DA627D``, ``#fff``, ``#1a2b3c4d``): data of the
# reporter's, never a name of the code (a trial's title made ``DA627D`` its first keyword).
# (A digit at least: ``#facade`` or ``#add`` may be a name.)
_HEX_LITERAL_RE = compile_later(
    r"(?<![\w&#])#(?=[A-Fa-f]*[0-9])(?:[0-9A-Fa-f]{8}|[0-9A-Fa-f]{6}|[0-9A-Fa-f]{3,4})(?![\w-])")
# A commit's name (``92bfe68c7419``, ``b80059e2``, a full 40-character one): the
# reporter's pointer into history, never a name of the code; split into words it gave the
# task ``bfe`` (a trial's fzf task). Lower-case hex of 7 to 40 characters holding a digit
# and a letter (``deadbeef``, ``1234567`` or ``Cafe1234`` are left as written).
# The word "commit" naming one goes with it (``Commit 3ea458b introduces ...``): the
# history's, not a commit of the code's (a trial's gap line searched synonyms for it).
_COMMIT_NAME_RE = compile_later(r"(?:(?<![\w-])[Cc]ommit[ \t]+)?(?<![\w./#-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])")
# A string's byte or code point escape (``$'bad_name_\xff'``, ``"\u00e9"``): a value the
# reporter typed, whose letters are no word (a trial's broot task searched ``xff``, which
# led with a file of ``0xff`` literals). (A ``\x`` before more letters is a TeX command:
# ``\xdef``, ``\xcancel``.)
_BYTE_ESCAPE_RE = compile_later(r"\\(?:x[0-9A-Fa-f]{2}(?![A-Za-z])|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})")
# Encoded data the reporter pasted (base64 of a ciphertext, a key, an image:
# ``ZmRhVjlLeVJNK3lhU2oyV1crSmFNeUs2ZkI0CkRtY0Rh``): a run of at least 20 letters and
# digits (``+``, ``/``, ``=`` padding; not quoted as code, not a part of a dotted or slashed
# name: ``/usr/local/lib/python3.8``), a letter and a digit among them, whose pieces (a
# capital and its lower-case letters, a capital run, a number) average under
# ENCODED_PIECE_CHARS characters, and that shows base64's own marks: a ``+``, ``=``
# padding, or ENCODED_MIN_LONG characters at least. A trial's age task made eight such
# lines keywords and seven of them gaps, and its public key (``age1c73ql4n652jz79...``)
# four more. A name of the code reads in words (``testBase64EncodeUTF8String`` averages
# 3.7 characters a piece); the short ones that do not (``I32x4TruncSatF64x2UZero``,
# ``glUniformMatrix2x3fv``, ``eA2B10G10R10UnormPack32``) have no such mark.
_ENCODED_DATA_RE = compile_later(r"(?<![\w+/.`])(?=[A-Za-z0-9+/]*[A-Za-z])(?=[A-Za-z0-9+/]*[0-9])"
                                 r"[A-Za-z0-9+][A-Za-z0-9+/]{19,}={0,2}(?![\w+/=`]|\.\w)")
# ... and a JSON web token: its header is base64 of ``{"``, so it starts ``eyJ``.
_WEB_TOKEN_RE = compile_later(r"(?<![\w.-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]+)?")
_PIECE_RE = compile_later(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
ENCODED_PIECE_CHARS = 3.0
ENCODED_MIN_LONG = 40


def _unless_a_name(m: "re.Match[str]") -> str:
    """A blank for encoded data (_ENCODED_DATA_RE), the text as it was for a name."""
    run = m.group()
    if len(run) < ENCODED_MIN_LONG and "+" not in run and not run.endswith("="):
        return run
    pieces = _PIECE_RE.findall(run)
    return " " if sum(map(len, pieces)) < ENCODED_PIECE_CHARS * len(pieces) else run


# A file ``main.<ext>`` named without its folder is the reporter's program: every
# program's entry file is named so, and a tree holds many (a trial's delve task: ``c
# main.go:7`` in a debugger session led the ranking with one of the tree's 40 ``main.go``).
_BARE_ENTRY_FILE_RE = compile_later(r"main\.[A-Za-z0-9]{1,5}")
# A JVM's system property set on a command line (``-Duser.language=en``,
# ``-Dorg.gradle.jvmargs=-Xmx2g``): the reporter's run, not a name of the tree (a trial's
# keywords held ``Duser``; ``.gradle`` read it as a path). Dotted: ``-DNDEBUG`` or CMake's
# ``-DJSON_BuildTests=OFF`` name the tree's own macros and options.
_JVM_PROPERTY_RE = compile_later(r"(?<![\w-])-D[A-Za-z_][\w-]*\.[\w.-]*(?:=\S*)?")
# A media type in a vendor's or a person's tree (``application/vnd.myapi.v1+json``,
# ``application/vnd.oci.image.index.v1+json``): a header's value, whose dotted name is no
# module path (a trial's koa keywords and gaps held ``vnd/myapi/v1``). Its words stay words
# and the type stays as written, for a quoted line (a registry's code holds it whole); a
# path through a folder so named (``model/user.py``, ``application/vnd.php``) is a path.
_MEDIA_TYPE_RE = compile_later(
    r"(?<![\w/.-])(?:application|audio|font|image|message|model|multipart|text|video)/(?:vnd|prs)\.[\w.+-]+", re.I)
# A form's label before the title on the first line (``Title: …``; not ``Subject:``, which
# may name the class a report is about).
_TITLE_LABEL_RE = compile_later(r"\A[ \t]*title[ \t]*:[ \t]*", re.I)
# ... and the kind of issue a template or a reporter tags it with (``[REQUEST] Render the
# prompt ...``, ``[Bug]: crash when ...``): a trial's ``REQUEST`` was read as a constant and
# ranked a JSON-RPC file 3rd. A tag naming a part of the project (``[tracing-subscriber]``)
# stays.
_TITLE_KIND_TAG_RE = compile_later(
    r"\A[ \t]*\[[ \t]*(?:bug(?:[ \t]+report)?|feature(?:[ \t]+request)?|request|question|enhancement|proposal"
    r"|rfc|help(?:[ \t]+wanted)?|idea|suggestion|fr|discussion|regression|improvement|docs?|documentation)"
    r"[ \t]*\][ \t]*:?[ \t]*", re.I)


def _fenced_blocks(task: str) -> "list[tuple[str, str]]":
    """(its info string, lower case; its code) of each fenced block of the task."""
    out = []
    for m in _FENCED_RE.finditer(task):
        info, _, code = m.group(0).strip("`").partition("\n")
        out.append((info.strip().lower(), code))
    return out


def _setting_keys(task: str) -> set[str]:
    """The keys the task's pasted settings files set (:data:`_SETTINGS_FENCES`)."""
    return {key for info, code in _fenced_blocks(task) if info in _SETTINGS_FENCES
            for key in _SETTING_KEY_RE.findall(code)}


def _assigned(task: str) -> set[str]:
    """The names the task's pasted code assigns as statements (:data:`_OWN_ASSIGNMENT_RE`):
    in fenced blocks other than configuration, and in the code lines of the rest."""
    blocks = [code for info, code in _fenced_blocks(task) if info not in _CONFIG_FENCES]
    rest = _FENCED_RE.sub("\n", task)
    code = "\n".join(blocks + [line for line in rest.split("\n") if _CODE_LINE_RE.match(line)])
    return {m.group(2) for m in _OWN_ASSIGNMENT_RE.finditer(code)
            if (m.group(1) or m.group(3)) and not m.group(4).rstrip().endswith(",")}


def _in_text(key: str, text_norm: str) -> bool:
    """Whether the normalized name ``key`` occurs in ``text_norm`` as a whole name."""
    return re.search(r"(?<![a-z0-9_])" + re.escape(key) + r"(?![a-z0-9_])", text_norm) is not None


# A string's escaped newline, tab or return before a capitalised name (``"Some(\\nSomething)"``
# in a pasted Rust test): the name starts after the escape, not at its letter (a trial's
# ``nSomething``). Not before a lower-case letter, nor in a Windows path (a backslash
# after the name): ``\\new_dir``, ``lib\\nUnit\\Runner.cs``.
_ESCAPE_BEFORE_NAME_RE = compile_later(r"\\[ntr](?=[A-Z][A-Za-z0-9_]*(?:[^\w\\]|$))")


# Keywords come from at most this many characters of a task, cut at a line end: an issue
# is a few kilobytes (the dev splits' longest, 23k characters), and reading a 4 MiB paste
# line by line took half a minute (an adversarial check). The caller says when it cuts.
MAX_TASK_CHARS = 256 * 1024


def task_read(task: str) -> str:
    """The part of ``task`` keywords are taken from: all of it, or its first
    MAX_TASK_CHARS characters up to the last line end among them - or, when that is in
    their first half (a long line after a short one), the last space, so that the long
    line is read too and no word is cut."""
    if len(task) <= MAX_TASK_CHARS:
        return task
    head = task[:MAX_TASK_CHARS]
    for end in ("\n", " ", "\t"):
        cut = head.rfind(end)
        if cut >= MAX_TASK_CHARS // 2:
            return head[:cut]
    return head


def extract_keywords(task: str) -> list[Keyword]:
    """Pull searchable keywords out of free text, strongest kinds first.

    URLs are read for the repository paths they name (:func:`strip_urls`), issue-template
    and environment text is dropped (:func:`strip_boilerplate`), and text in CJK scripts
    becomes glossary terms and their English words (:func:`cjk_keywords`). Only
    :func:`task_read`'s part of a very long task is read.
    """
    task = task_read(task)
    task, url_paths = strip_urls(strip_boilerplate(unescaped(
        _TITLE_KIND_TAG_RE.sub("", _TITLE_LABEL_RE.sub("", task.lstrip("\n"))))))
    task = _JVM_PROPERTY_RE.sub(" ", _COMMIT_NAME_RE.sub(" ", _HEX_LITERAL_RE.sub(" ", task)))
    task = _ENCODED_DATA_RE.sub(_unless_a_name, _WEB_TOKEN_RE.sub(" ", _BYTE_ESCAPE_RE.sub(" ", task)))
    task = split_scripts(task)
    # (An empty bracket in its place, not a blank: a panic's message may be on the line
    # after its header, and with the line blank the next line of the report was read as
    # the message.)
    quoted_messages = messages(_RUNTIME_MESSAGE_RE.sub(_unless_quoted_by_reporter, task))
    task = _ESCAPE_BEFORE_NAME_RE.sub(" ", task)
    task = _DIFF_HEADER_RE.sub(_diff_header_paths, task)
    task = _DATA_FILE_RE.sub(" ", _MACHINE_PATH_RE.sub(_unless_source, _RUNTIME_HEADER_RE.sub(" ", task)))
    paths: dict[str, None] = dict.fromkeys(url_paths)
    idents: dict[str, None] = {}
    words: dict[str, int] = {}
    modules: dict[str, str] = {}  # module path -> the dotted name it came from

    frames = traceback_frames(task)
    for m in _TRACEBACK_RE.finditer(task):
        if not _BARE_ENTRY_FILE_RE.fullmatch(m.group(1)):
            paths[_tail_path(m.group(1))] = None
        if m.group(2) in frames:
            idents[m.group(2)] = None
    for m in _PATH_RE.finditer(task):
        tail = _tail_path(m.group(1), keep=4)
        if ("/" in tail or len(tail) > 6) and not _BARE_ENTRY_FILE_RE.fullmatch(tail):
            paths[tail] = None
    # A backticked sentence (an error message) is prose: only its code names count, and
    # those are taken from the whole text below.
    # (File extensions are no words: ``a.py``, ``*.tmp``; taken out once for the code spans
    # and the plain words.)
    unsuffixed = _FILE_SUFFIX_RE.sub(" ", task)
    code_spans = " ".join(m.group(2) for m in _BALANCED_SPAN_RE.finditer(unsuffixed)
                          if not _PROSE_SPAN_RE.search(m.group(2)))
    # Names the task's own code assigns: ``data.list`` after ``let data = ...`` is that
    # variable's member, no module path (a trial's ``data/list`` was a gap line).
    # (A name the task also imports is a module, whatever it is assigned: ``django = None``
    # beside ``from django.utils import http``.)
    own_assigned = _assigned(task)
    settings = _setting_keys(task)
    variables = own_assigned - set(_IMPORTED_HEAD_RE.findall(task))
    placeholders = set()
    for m in _PLACEHOLDER_RE.finditer(task):
        parts = m.group(1).split(".")
        if len(parts) < 3 or parts[0].lower() in _NOT_MODULE_HEADS:
            continue  # (``{sys.prefix}``, ``{self.instance.pk}``: an f-string's expression)
        placeholders.add(m.start(1))
        if len(placeholders) > MAX_PLACEHOLDER_KEYS:
            continue  # (not a module path either; but a list of keys crowds out the task's names)
        idents[m.group(1)] = None
        idents[".".join(parts[-2:])] = None
        if len(parts) >= 4:
            idents[".".join(parts[:-2])] = None
    media_types = {m.start() + m.group(0).index("/") + 1 for m in _MEDIA_TYPE_RE.finditer(task)}
    for m in _DOTTED_RE.finditer(task):
        # (A decorator, ``@app.teardown_request``, is an object's attribute, no module.)
        decorator = m.start(1) > 0 and task[m.start(1) - 1] == "@"
        member = m.group(1).split(".", 1)[0] in variables
        # (A key of a ``key=value`` pair, ``log.pkg=model`` in a log line, ``server.port=80``
        # in a properties file, is a key: a trial's syncthing log gave the path log/pkg.)
        after = task[m.end(1):m.end(1) + 2]
        # (... and a name before a port, ``domain.test:3000``, a host: a trial's ufo task
        # gave the path and gap domain/test.)
        keyed = after[:1] == "=" and after != "==" or after[:1] == ":" and after[1:].isdigit()
        mod = None if decorator or member or keyed or m.start(1) in placeholders or m.start(1) in media_types \
            or _BARE_ENTRY_FILE_RE.fullmatch(m.group(1)) else _module_path(m.group(1))
        if mod and not _PATH_RE.fullmatch(m.group(1)):
            paths[mod] = None
            modules[mod] = m.group(1)
        for part in m.group(1).split("."):
            if len(part) >= MIN_IDENTIFIER_LEN and normalize(part) not in _NOT_IDENTIFIERS:
                if is_code_identifier(part) or part[0].isupper():
                    idents[part] = None
    for m in _CALL_RE.finditer(task):
        name = m.group(1)
        if len(name) >= MIN_IDENTIFIER_LEN and normalize(name) not in _NOT_IDENTIFIERS:
            idents[name] = None
    for token in _IDENT_RE.findall(code_spans):
        if len(token) >= MIN_IDENTIFIER_LEN and normalize(token) not in _NOT_IDENTIFIERS:
            idents[token] = None
    # A common word quoted as a member called (`zap.Time()`, `` `q.Set(k, v)` ``) is a
    # function of the tree's API, spelled as the tree defines it: a trial's only code name
    # (Go's ``zap.Time``) was dropped as the filler word "time".
    # (Capitalised, as an exported Go or C# name is, or not a word of the prose: a
    # language's own ``.then(``, ``.once(``, ``.expect(`` are the prose's words too.)
    member_calls = [m.group(1) for m in _QUOTED_MEMBER_CALL_RE.finditer(code_spans)
                    if len(m.group(1)) >= MIN_MEMBER_CALL_LEN and normalize(m.group(1)) in _QUOTABLE_STOP_WORDS]
    stem_names: dict[str, None] = {}
    hyphened: dict[str, None] = {}  # (searched as identifiers, after the others, capped as stems are)
    for token in _STEM_NAME_RE.findall(code_spans):
        short = MIN_STEM_NAME_LEN <= len(token) < MIN_IDENTIFIER_LEN
        if (short or "-" in token) and normalize(token) not in _NOT_IDENTIFIERS:
            if "-" in token and len(token) - token.count("-") >= MIN_HYPHENED_NAME \
                    and not token.rsplit("-", 1)[1].isdigit():
                hyphened[token] = None
            else:
                stem_names[token] = None
    # A common word quoted alone as code (``the ``not`` condition``, `` `new` ``) is a name
    # the report points at, a keyword, command or option the tree may keep in a file of
    # that name (``not.ts``, ``new.py``): searched as a file's stem only, as in the text it
    # is everywhere (a trial's JSON-schema report lost ``not`` and its file ranked 92nd).
    # Of three letters or more (``am``, ``Do`` are a format's tokens and locales' codes).
    for m in _BALANCED_SPAN_RE.finditer(unsuffixed):
        token = m.group(2).strip()
        if len(token) >= MIN_IDENTIFIER_LEN and token.isalpha() and token.isascii() \
                and normalize(token) in _QUOTABLE_STOP_WORDS:
            stem_names.setdefault(token, None)
    for token in _IDENT_RE.findall(task):
        if len(token) >= MIN_IDENTIFIER_LEN and is_code_identifier(token) and normalize(token) not in _ENVIRONMENT_WORDS \
                and not _is_placeholder(token):
            idents[token] = None
    for m in _FROM_IMPORT_RE.finditer(task):
        # A short name is too ambiguous to pick out of prose ("a Q object"), but one the
        # reporter imports from a module is a name the codebase defines.
        # The imported name is the first word of each item (``gettext as _`` imports gettext).
        for item in m.group(1).split(","):
            name = (item.split() or [""])[0]
            if len(name) < MIN_IDENTIFIER_LEN and _IDENT_RE.fullmatch(name) and name.strip("_"):
                idents[name] = None
    for token in _CODE_TOKEN_RE.findall(task):
        if len(token) >= MIN_CODE_TOKEN_LEN and normalize(token) not in _ENVIRONMENT_WORDS:
            idents[token] = None
    for token in _CAPITALISED_COMPOUND_RE.findall(task):
        if not all(_is_placeholder(part) for part in token.split("-")):  # (``Foo-Baz``)
            idents[token] = None
    for token in LONG_OPTION_RE.findall(task):
        idents[token] = None
    runtime_names, runtime_classes = _runtime_words(task)
    for token in runtime_names:
        if not _is_placeholder(token):
            idents.setdefault(token, None)
    # A one-word option the title names (``Can't --bind and --expect options be declared
    # together?``) is what the issue is about, a name the code's option table spells, even
    # when its word is a stop word: a trial's ``expect`` was dropped as "expected" and the
    # fix's option file ranked 10th.
    # (A task of one line has no title: ``run it with --verbose`` is prose.)
    title_line, body_follows, _body = task.strip().partition("\n")
    title_line = title_line if body_follows else ""
    for token in _WORD_OPTION_RE.findall(title_line):
        if normalize(token) not in _ENVIRONMENT_WORDS:
            idents[token] = None
    for token in _CONSTANT_RE.findall(_LOG_LEVEL_RE.sub(lambda m: m.group(1) or m.group(2), _TABLE_ROW_RE.sub("", task))):
        if normalize(token) not in _NOT_IDENTIFIERS:
            idents[token] = None
    prose_once: list[str] = []

    def prose_norm() -> str:
        """The task's prose, normalized: computed once (a long task is long to scan)."""
        if not prose_once:
            prose_once.append(normalize(prose_of(task)))
        return prose_once[0]

    for name in member_calls:
        if name[0].isupper() or not _in_text(normalize(name), prose_norm()):
            idents.setdefault(name, None)
    web_in_prose: dict[str, bool] = {}
    prose_text = _FENCE_INFO_RE.sub(r"\1", unsuffixed)
    for m in _PREFIXED_WORD_RE.finditer(prose_text):
        rest = normalize(m.group(3))
        if rest not in _STOP_WORDS and rest not in _ENVIRONMENT_WORDS and rest.isalpha() \
                and rest not in _BOUND_PREFIXES:
            w = _prefix_joined(m)
            words[w] = words.get(w, 0) + 1
    # (The word after the prefix stays a word: ``non-boolean`` is about booleans.)
    for token in _WORD_RE.findall(_PREFIXED_WORD_RE.sub(r" \3", prose_text)):
        w = normalize(token)
        if len(w) >= MIN_WORD_LEN and w not in _STOP_WORDS and w.isalpha() and w not in _ENVIRONMENT_WORDS \
                and not _is_cjk(w):
            if w in _CODE_VOCABULARY:
                if w not in web_in_prose:  # (looked up once: a long task holds it often)
                    web_in_prose[w] = _in_text(w, prose_norm())
                if not web_in_prose[w]:
                    continue
            words[w] = words.get(w, 0) + 1
    # (Of the title only: in the body they are mostly the reporter's own names, ``app1``,
    # ``expr2``, and their tools', ``python3``.)
    numbered = _NUMBERED_WORD_RE.findall(task.lstrip().split("\n", 1)[0])
    stand_ins = _numbered_stand_ins(list(numbered) + list(idents))
    for token in numbered:
        w = normalize(token)
        letters = w.rstrip("0123456789")
        if letters not in _STOP_WORDS and letters not in _ENVIRONMENT_WORDS and token not in stand_ins:
            words[w] = words.get(w, 0) + 1

    for cls in runtime_classes:  # (neither a name nor a word of the code)
        idents.pop(cls, None)
        words.pop(normalize(cls), None)
    out: list[Keyword] = []
    seen: set[str] = set()
    title = normalize(title_line)
    title = _PREFIXED_WORD_RE.sub(_prefix_joined, title)  # (``non existent`` there is the word ``non-existent``)
    prose = prose_norm()
    own_defined = set(_OWN_DEFINITION_RE.findall(task))
    own_defined.update(m.group(2) for m in _OWN_C_DEFINITION_RE.finditer(task)
                       if m.group(2) not in _NOT_A_RETURN_TYPE
                       and not _NOT_A_RETURN_TYPE.intersection(re.findall(r"\w+", m.group(1)))
                       # (A body's brace on the next line follows a short head: a sentence
                       # over a pasted JSON body's ``{`` defines nothing.)
                       and ("\n" not in m.group(0) or len(m.group(1).split()) <= MAX_NEXT_LINE_BRACE_HEAD))
    own_defined_words = {normalize(n) for n in own_defined}  # (``Payload`` as the word ``payload``)

    def add(text: str, kind: str, stem_only: bool = False) -> None:
        key = normalize(text)
        if key in seen or (kind == "word" and _LONG_PLAIN_RUN_RE.search(text)):
            return
        kw = make_keyword(text, kind, stem_only=stem_only)
        if kw is not None:
            # (A short name must be a whole name of the title: "q" is inside many words.)
            if title and (_in_text(key, title) if len(key) < MIN_IDENTIFIER_LEN else key in title):
                kw = replace(kw, weight=kw.weight * TITLE_BOOST)
            if kind == "path" and text in modules:
                kw = replace(kw, dotted=True)
                if not _in_text(normalize(modules[text]), prose):
                    kw = replace(kw, weight=kw.weight * CODE_ONLY_FACTOR)
            if (kind == "identifier" and (text in own_defined or text in own_assigned)) \
                    or (kind == "word" and key in own_defined_words):
                kw = replace(kw, task_defines=True)
            if kind == "identifier" and text not in frames and not _in_text(key, prose):
                if text in CODE_ONLY_BUILTINS:
                    seen.add(key)  # (nor as a plain word of the pasted code)
                    return
                kw = replace(kw, weight=kw.weight * CODE_ONLY_FACTOR, setting=text in settings)
            seen.add(key)
            out.append(kw)

    for p in _one_of_each_numbered(list(paths))[:MAX_PATHS]:
        add(p, "path")
    for text in quoted_messages:
        add(text, "message")
    # (A name found only as a file's stem, ``__init__`` of ``designspaceLib/__init__.py``
    # or a reporter's ``load_designspace.py``, is that file's: its path is the keyword.)
    stems = _file_stems_only(task) | stand_ins
    for name in [n for n in idents if n not in stems][:MAX_IDENTIFIERS]:
        add(name, "identifier")
    for name in [n for n in hyphened if normalize(n) not in seen][:MAX_STEM_NAMES]:
        add(name, "identifier")
    for name in [n for n in stem_names if normalize(n) not in seen][:MAX_STEM_NAMES]:
        add(name, "identifier", stem_only=True)
    # Title words first, then by frequency (stable: first-seen order on ties).
    ranked_words = sorted(words, key=lambda w: (not (title and w in title), -words[w]))
    for w in ranked_words[:MAX_WORDS]:
        add(w, "word")
    # (Not from a fenced block: CJK in pasted code or data names the reporter's files and
    # values, a trial's ``测试1.md`` became the keyword "test". An indented line of CJK is
    # the prose of a report indented whole.)
    for kw in cjk_keywords(_FENCED_RE.sub(" ", task)):
        key = normalize(kw.text)
        if key not in seen:
            seen.add(key)
            out.append(kw)
    if len({k.group or normalize(k.text) for k in out}) <= SHORT_TASK_KEYWORDS:
        # A short request needs recall: its words also match their other forms. A long
        # issue has words enough; stems there only add noise (measured: -2 points Acc@5).
        out = [replace(make_keyword(k.text, k.kind, k.weight, k.group, stemmed=True), translated=k.translated)
               if k.kind == "word" else k for k in out]
    return out


# --- URLs --------------------------------------------------------------------------------

# (Also a protocol-relative one, ``//cdn.example.com/x`` or an HTTP header's
# ``Location: //failover.example.com/path``: a host name right after ``//``.)
_URL_RE = re.compile(r"\b(?:https?://|www\.)[^\s<>()\[\]{}\"'`]+"
                     r"|(?:(?<=[\s(\"'=<])|^)//[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,6}(?=[/:\s]|$)"
                     r"[^\s<>()\[\]{}\"'`]*", re.M)
# A file or directory of a repository on a forge: github.com/<owner>/<repo>/blob/<ref>/<path>,
# gitlab.example.org/<group>/<repo>/-/tree/<ref>/<path>, raw.githubusercontent.com/<o>/<r>/<ref>/<path>.
_REPO_URL_RE = re.compile(
    r"^(?:https?://)?(?:www\.)?(?:"
    r"(?:github\.com|bitbucket\.org)/[^/]+/[^/]+/(?:blob|tree|raw|src|blame|edit|commits)/[^/]+/"
    r"|[^/]*gitlab[^/]*/(?:[^/]+/)+-/(?:blob|tree|raw|blame|edit|commits)/[^/]+/"
    r"|raw\.githubusercontent\.com/[^/]+/[^/]+/[^/]+/)"
    r"([^?#]+)",
    re.I,
)
# An image or a video of a repository embedded in the report is its picture, no code a
# report is about (a trial's ``<img src="https://raw.githubusercontent.com/derailed/k9s/
# master/assets/k9s_err.png">``, a template's logo, was its first keyword). A ``/blob/``
# link to one points at the file (an icon set's ``icons/x-circle.svg``): it stays.
_IMAGE_FILE = r"\.(?:png|jpe?g|gif|svg|webp|bmp|ico|mp4|mov)(?:[?#]|$)"
_IMAGE_FILE_RE = re.compile(_IMAGE_FILE, re.I)
# Links that only point somewhere (images, issues, commits): nothing in them names code.
_IMAGE_URL_RE = re.compile(_IMAGE_FILE + r"|githubusercontent\.com/(?!.*/blob/)|/assets/", re.I)
# Links whose path holds no word of any code: a forge's page of a repository, an issue, a
# pull request or a user (``github.com/felixhummel/caddy-tls-subject-header-up``,
# ``github.com/gyscos/zstd-rs/issues/100``: owners, other projects, numbers; its files and
# folders are read above; a README section's anchor stays), and a playground's or a paste's id
# (``stackblitz.com/edit/vitejs-vite-jahlyn``, ``godbolt.org/z/W5febq6x3``, a gist).
_NO_WORDS_URL_RE = re.compile(
    r"^(?:https?://)?(?:www\.)?(?:(?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)(?=[/?#]|$)"
    r"|(?:[\w-]+\.)*(?:stackblitz\.com|codesandbox\.io|jsfiddle\.net|codepen\.io|godbolt\.org|jsbin\.com"
    r"|gist\.github\.com|play\.golang\.org|play\.rust-lang\.org|replit\.com)(?=[/?#]|$))", re.I)
# ... and any other app's link to a saved state: a path segment that is an opaque id (at
# least 8 letters and digits, two of each: ``svelte.dev/playground/9e45fd9f78974bb6...``,
# ``jsfiddle.net/qy2tx8za``): the rest of its path is the app's (a trial's svelte task had
# ``playground`` as a keyword, which named the repository's own ``playgrounds/`` first).
_OPAQUE_ID_SEGMENT_RE = re.compile(r"^(?=(?:[a-z]*\d){2})(?=(?:\d*[a-z]){2})[a-z\d]{8,}$", re.I)
# ... or a saved state encoded whole in the path or the fragment: base64 of at least 24
# characters, mixed case and digits (a playground's ``#N4Igxg9gdgLgprEAuEASAZh...``: a
# trial's prettier keywords held three such "identifiers" and twenty pieces).
_BLOB_RE = re.compile(r"^(?=(?:[^A-Z]*[A-Z]){2})(?=(?:[^a-z]*[a-z]){2})(?=(?:\D*\d){2})[A-Za-z0-9+/_-]{24,}={0,2}$")
# Trailing punctuation of the sentence a URL ends.
_URL_TAIL = ".,;:!?)]}>'\""
# A host name without a scheme (``api.example.com``, ``pypi.org:443``) or an e-mail
# address: it names a machine, not code; read as a dotted module name it made the path
# keyword ``api/example/com`` and the word ``api`` (a trial: ``requests/api.py`` 2nd for
# a netrc task). Only the generic top-level domains: ``scipy.io`` and ``x.dev`` may be
# modules, and a Java package starts with ``com.``, never ends with it. (It starts at a
# token's start, never after a ``+`` inside one: on ``a+a+a+...`` the address part read
# to the token's end from every ``+``, the square of its length.)
_BARE_HOST_RE = re.compile(r"(?<![\w./@+-])(?:[\w.+-]+@)?(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+"
                           r"(?:com|org|net|edu|gov|localhost)(?::\d+)?(?![\w-])", re.I)


# A URL's fragment that holds a key, a value or a percent-escape is an app's state (a demo
# page's ``#md3=%7B%22source%22%3A...``), not a section's name: its words are the state's
# (``afalse``, ``bfoo``), not the tree's.
_DATA_FRAGMENT_RE = re.compile(r"[=&]|%[0-9A-Fa-f]{2}")
# ... whose leading name (a route's ``/configuration``, a Javadoc anchor's ``computeIfAbsent``
# before ``%28K%2C...``) and a route's ``id=`` value stay.
_FRAGMENT_LEAD_RE = re.compile(r"[/\w.-]*")
_FRAGMENT_ID_RE = re.compile(r"(?:^|[?&])id=([\w-]+)")


def _fragment_words(fragment: str) -> str:
    """What a URL's fragment says about the tree: all of it, or only its leading name and
    an ``id=`` value when it holds an app's state (_DATA_FRAGMENT_RE)."""
    if not _DATA_FRAGMENT_RE.search(fragment):
        return fragment
    lead = _FRAGMENT_LEAD_RE.match(fragment).group(0)
    if "=" in fragment[len(lead):len(lead) + 1]:
        lead = ""  # (``md3=...``: a key of the state, not a name)
    return " ".join([lead] + _FRAGMENT_ID_RE.findall(fragment))


# Text escaped for a web page or a link, pasted as it was shown: an HTML entity
# (``&amp;``, ``&lt;``, ``&#39;``) and a percent-encoded link (``https%3A%2F%2Fdocs.x.org%2Fa.html``)
# are the characters they stand for (a trial's report of an escaped link made ``amp``, ``fpmd``
# and ``2Fpmd_rules_java_design.html`` keywords). Only a link is percent-decoded: ``%2d``
# elsewhere is a format of printf's.
# (The entities of escaping only: ``&sum;`` or ``&map;`` in pasted Rust is a reference.)
_ENTITY_RE = compile_later(r"&(?:amp|lt|gt|quot|apos|nbsp|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_ENCODED_LINK_RE = compile_later(r"\b[A-Za-z][A-Za-z0-9+.-]{0,20}%3[Aa]%2[Ff]%2[Ff][^\s\"'<>`()]*")
_PERCENT_RE = compile_later(r"%([0-9A-Fa-f]{2})")


def _entity(m: "re.Match[str]") -> str:
    text = html.unescape(m.group(0))
    return m.group(0) if text == m.group(0) or not text.isprintable() or "\ufffd" in text else text


def _decoded_link(m: "re.Match[str]") -> str:
    return _PERCENT_RE.sub(_percent, m.group(0))


def _percent(m: "re.Match[str]") -> str:
    c = chr(int(m.group(1), 16))
    return c if c.isprintable() and not c.isspace() else m.group(0)  # (a space would end the link)


# A terminal's colour codes pasted with its output (``\x1b[31mERROR\x1b[0m:``): no text.
_ANSI_RE = compile_later(r"\x1b\[[0-9;?]{0,32}[A-Za-z]")


def unescaped(task: str) -> str:
    """``task`` with HTML entities and percent-encoded links read as what they stand for
    (an unknown entity, or one standing for a control character, is left as written) and
    a terminal's colour codes taken out."""
    return _ENTITY_RE.sub(_entity, _ENCODED_LINK_RE.sub(_decoded_link, _ANSI_RE.sub("", task)))


def strip_urls(task: str) -> tuple[str, list[str]]:
    """(the text with its URLs taken out, the repository paths they name).

    A forge URL of a file or directory (``/blob/<ref>/src/x.js#L377-L382``) names that
    path, as strong as a quoted path; the line anchor is dropped. Image and attachment
    links are dropped whole; any other URL leaves its path and fragment words (a
    documentation link's ``ref/models/querysets`` and ``#django.db.models.Q``), never its
    host (``github.com``, ``githubusercontent``), its query string or a fragment that holds
    an app's state (``#md3=%7B...``). A host without a
    scheme (``api.example.com``) and an e-mail address go too.
    """
    paths: dict[str, None] = {}  # (a dict: a task of 100,000 links checked each in a list took 92 s)

    def one(m: "re.Match[str]") -> str:
        url = m.group(0).rstrip(_URL_TAIL)
        rest = m.group(0)[len(url):]
        if _GUIDE_NAME_RE.match(url.split("#", 1)[0].split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]):
            return " " + rest
        repo = _REPO_URL_RE.match(url)
        if repo and not (_IMAGE_FILE_RE.search(url) and "/blob/" not in url):
            # (No repository nests deeper: a longer path is cut to its last components.)
            path = "/".join(p for p in repo.group(1).split("/") if p)
            path = "/".join(path.split("/")[-URL_PATH_PARTS:])
            if path:
                paths.setdefault(path)
            return " " + rest
        if _IMAGE_URL_RE.search(url):
            return " " + rest
        if _NO_WORDS_URL_RE.match(url):
            # (A README's section, ``github.com/nlohmann/json#arbitrary-types-conversions``,
            # names a feature; an ``#issuecomment-1553456643`` nothing.)
            fragment = url.partition("#")[2]
            return " " + ("" if re.search(r"\d{3}", fragment) else _fragment_words(fragment)) + rest
        body = url[2:] if url.startswith("//") else url.split("://", 1)[-1]
        tail = body.split("/", 1)[1] if "/" in body else ""
        path, _, fragment = tail.partition("#")
        path = path.split("?", 1)[0]
        if any(_OPAQUE_ID_SEGMENT_RE.match(p) or _BLOB_RE.match(p) for p in path.split("/")) \
                or _BLOB_RE.match(fragment):
            return " " + rest
        fragment = _fragment_words(fragment)
        if "." in path.rsplit("/", 1)[-1]:
            path = path.rsplit(".", 1)[0]  # a page's .html / .php says nothing
        return " " + " ".join(p for p in path.split("/") if p) + " " + fragment + rest

    text = _BARE_HOST_RE.sub(" ", _URL_RE.sub(one, task))
    return text, list(paths)


def strip_html(task: str) -> str:
    """The task without the HTML markup of its prose (``<img alt=... src=...>``,
    ``<details>``, ``<br/>``): each tag leaves only the addresses it links to. Code spans
    and fenced blocks are left as written."""
    def one(m: "re.Match[str]") -> str:
        if m.group(1) is not None:
            return m.group(1)  # code, as written
        return " " + " ".join(_HTML_LINK_RE.findall(m.group(0))) + " "

    return _CODE_OR_TAG_RE.sub(one, task)


# An unchecked item of a task list (``- [ ] the `develop` branch``): an option of the
# issue template that the reporter did not pick, so none of its words are the reporter's.
_UNCHECKED_ITEM_RE = compile_later(r"^[ \t>]*[-*+][ \t]+\[[ \t]\][ \t]")
# A checked item that is the reporter's first-person confirmation (``- [x] I have searched
# the existing issues``, ``- [x] For bug reports, I have checked ...``, ``- [x] I can
# successfully compile and run the unit tests``, ``- [x] I made a backup of my libraries
# ...``): the template's checklist, whose words
# (``searched``, ``discussions``, ``manual``) are no more the issue's than an unchecked
# one's; so is a template's imperative one pointing at its docs or issues (``- [x] Check
# [common issues](https://katex.org/docs/issues.html).``). A checked item that says
# something else stays (``- [x] In `json_sax_dom_parser`, not all lines of
# `handle_binary` are covered``).
_CONFIRMED_ITEM_RE = compile_later(
    r"^[ \t>]*[-*+][ \t]+\[[xX]\][ \t]+(?:(?:[^,\n]{0,40},[ \t]*)?I(?:'ve|'m| have| am| can| agree| confirm"
    r"| searched| checked| read| understand| tested| tried| did| will| made)\b"
    r"|(?:Check|Search|Read|Confirm|Verify|Ensure|Make sure)\b[^\n]*(?:\]\(|\b(?:issues?|docs|documentation|FAQ|latest)\b))")


# ... unless it names code (``- [x] Verify that `ConnectionPool.release_conn` is called``):
# a name with ``_`` or a call, outside the links' targets (not a command, ``man fzf``).
_ITEM_CODE_RE = compile_later(r"\w_\w|\w\(")
_LINK_TARGET_RE = compile_later(r"\]\([^)\s]*\)")


# A source file's header pasted with a reproducer: an encoding declaration
# (``# -*- coding: utf-8 -*-``) or a shebang (``#!/usr/bin/env python``). Every such file
# may start so; its words (``coding``, ``utf``, ``env``) are the language's, not the issue's
# (a trial: four of five quoted lines were ``# -*- coding: utf-8 -*-``).
_FILE_HEADER_LINE_RE = compile_later(
    r"^[ \t]*(?:#[^\n]*?-\*-[ \t]*(?:en)?coding[:=][ \t]*[\w.-]+[ \t]*-\*-[^\n]*|#![ \t]*/[^\n]*)$", re.M)


# An issue form's question about the reporter's machine, as a heading of its own (``### OS``,
# ``### Shell``, ``### What version of gRPC are you using?``, ``**Context (please complete
# the following information):**``, at most 8 words): neither it nor the options checked
# below it (``- [x] macOS``, ``- [x] zsh``, ``- [x] latest release version 3.10.2``) nor its
# short items (``- `wezterm 20230712-072601-f4abf8fd` ``) are the code's words. A checked
# option under any other heading (``### Component``) stays, and so does other text under
# the question (a version's ``cargo tree`` names the crates the issue is about).
# (The heading's text as it runs to the line's end, its closing ``#``s stripped by
# _is_environment_heading's word split: a lazy text before them was read once per ``#``.)
_MARKDOWN_HEADING_RE = compile_later(r"^[ \t>]*(?:#{1,6}[ \t]+(.*)|\*\*([^*\n]+?):?\*\*[ \t]*(?::[ \t]*)?$)")


# A form's label starts its line, indented at most 3 (deeper, or after ``>``, it is code or a quote).
_LABEL_START_RE = compile_later(r"[ ]{0,3}[#*]")


def _heading_text(line: str) -> "str | None":
    """A Markdown heading's text (``### Text``, ``**Text:**``), or None for another line."""
    m = _MARKDOWN_HEADING_RE.match(line)
    return None if m is None else m.group(1) if m.group(1) is not None else m.group(2)


def _asks(text: str) -> bool:
    """Whether a heading's text is a question (``What happened?``, ``**Which OS?**``)."""
    return text.rstrip(" \t*_:").endswith("?")


ENV_HEADING_MAX_WORDS = 8
# An issue form's answer under such a heading is one short line, its first (``macOS
# 12.4``, ``Main (currently 1a94d97 at the time of this writing).``): the reporter's
# machine, not the issue (a trial's libgit2 task made ``macOS`` a name of weight 1). A
# longer line, or one after the section's list, is the issue's own prose and ends it.
ENV_ANSWER_MAX_WORDS = 12
# ... and names no code: ``All of them; it crashes in `ZipFile.extractall_members` `` under
# ``### OS`` is the issue's (a name with ``_``, a call; in a heading a camel-case hump too).
# (A plural's ``(s)`` is no call: ``### What terminal(s) are you running bottom on?``, a
# trial's form, kept its ``running``, ``experiencing`` as keywords.)
_ANSWER_CODE_RE = compile_later(r"\w_\w|[a-z][A-Z][a-z]|\w\((?!e?s\))")
# (An answer's capitalised camel-case word is a product's name as often as code's:
# ``OpenSuse Tumbleweed``, ``PowerShell 7``; a trial's JabRef form made ``OpenSuse`` its
# second keyword. There a name with ``_``, a call or a lower-case camel name
# (``useSearchParams``) names code.)
_ENV_ANSWER_CODE_RE = compile_later(r"\w_\w|\w\((?!e?s\))|(?<![\w.])[a-z]+[A-Z][a-z]")
_CHECKED_ITEM_RE = compile_later(r"^[ \t>]*[-*+][ \t]+\[[xX]\][ \t]")
# A Markdown table's line (``| Version | 3.12.5 |``, ``|---|---|``): under a question about
# the machine, the answer's rows (a trial's diagnostics table made ``CPython`` a name).
_MARKDOWN_TABLE_LINE_RE = compile_later(r"^[ \t>]*\|.*\|[ \t]*$")
_SHORT_ITEM_RE = compile_later(r"^[ \t>]*[-*+][ \t]+\S")
# (Shell and terminal only as such a heading: ``- the shell hangs`` is an item of the issue.)
_ENVIRONMENT_HEADINGS = frozenset(_BOILERPLATE["environment_keys"]) | {"shell", "terminal"}


_PARENTHESES_RE = compile_later(r"\([ \t]*(?:i\.?e\.?|e\.?g\.?|for example|such as)[ \t,:][^()\n]*\)", re.I)


def _is_environment_heading(heading: str) -> bool:
    """A question or a label about the reporter's machine: a key (``OS``, ``Library
    version``), a question with ``version`` (``Which version ...?``, ``Output of `x
    --version` ``), a form's ``Version of libgit2 (release number or SHA1)``, not a title
    that only holds the word (``Version.parse rejects ...``). An example in parentheses is
    no part of the label (``Operating system version (i.e. 20.04, 11.3, 10)``, a trial's
    form, gave ``debian-slim``'s ``slim``)."""
    words = re.findall(r"\w+", _PARENTHESES_RE.sub(" ", heading).lower())
    asked = heading.rstrip(" \t*_:`").endswith("?") or words[:1] in (["which"], ["what"], ["output"])
    return len(words) <= ENV_HEADING_MAX_WORDS and (
        " ".join(words) in _ENVIRONMENT_HEADINGS
        or ("version" in words or "versions" in words) and (asked or len(words) <= 3 or words[1:2] == ["of"])
        or "operating" in words and "system" in words
        or "diagnostics" in words and len(words) <= 3
        or "please complete the following information" in " ".join(words))


# The report ``npx envinfo`` prints (``System:`` / ``Binaries:`` / ``Browsers:`` /
# ``npmPackages:``, each over indented ``Name: version`` lines): the reporter's machine
# (a trial's svelte task had ``memory``, ``zsh``, ``pnpm``, ``chrome``, ``safari`` as keywords).
_ENVINFO_SECTION_RE = compile_later(
    r"^([ \t]*)(?:System|Binaries|Browsers|npmPackages|npmGlobalPackages|Utilities|Languages|IDEs|SDKs"
    r"|Managers|Monorepos|Virtualization|Databases):[ \t]*$")
_ENVINFO_ITEM_RE = compile_later(r"^([ \t]+)[^:\n]{1,60}:[ \t]")


def _without_envinfo(lines: "list[str]") -> "list[str]":
    """The lines without an envinfo report's sections (_ENVINFO_SECTION_RE): a section's
    name and the ``key: value`` lines indented below it."""
    kept, depth = [], -1
    for line in lines:
        section = _ENVINFO_SECTION_RE.match(line)
        if section:
            depth = len(section.group(1).expandtabs())
            continue
        item = _ENVINFO_ITEM_RE.match(line) if depth >= 0 else None
        if item and len(item.group(1).expandtabs()) > depth:
            continue
        if depth >= 0 and not line.strip():
            continue  # (a line whose item went before it: ``OS: ...`` is an environment line)
        depth = -1
        kept.append(line)
    return kept


# A pasted report of versions (``dvc doctor``, ``pip freeze``, ``go version -m``, a
# dependency list): a fenced block whose lines are nearly all ``key: value``, ``name =
# value`` or ``name==value`` (or rules of dashes) and which holds at least
# VERSION_DUMP_MIN versions of three parts (``2.38.1``; a float of the task's code has
# one dot). Its names are the reporter's installed packages, not the tree's (a trial's
# ``dvc doctor`` output made ``dvc_data``, ``dvc_objects``, ``aiohttp`` keywords and led
# the ranking with the module that prints the report).
VERSION_DUMP_MIN = 3
VERSION_DUMP_KEY_SHARE = 0.8
_VERSION_TOKEN_RE = compile_later(r"(?<![\w.])v?\d{1,4}\.\d{1,4}\.\d{1,6}(?![\w.]*[A-Za-z_/])")
_CODE_LINE_MARK_RE = compile_later(r"['\"`;\[\]{}]|^[ \t]*(?://|/\*|#(?!#))")
_KEY_VALUE_LINE_RE = compile_later(
    r"[ \t]*(?:[-*][ \t]+)?[^\s:=][^:=\n]{0,60}?[ \t]*(?::(?:[ \t]|$)|==?)|[ \t]*[-=_*]{3,}[ \t]*$")


def _without_version_dumps(lines: "list[str]") -> "list[str]":
    """The lines without the fenced blocks that are reports of versions (VERSION_DUMP_MIN)."""
    kept: list[str] = []
    block: "list[str] | None" = None
    for line in lines:
        fence = line.lstrip(" \t>").startswith("```")
        if block is None:
            if fence:
                block = [line]
            else:
                kept.append(line)
            continue
        block.append(line)
        if fence:
            if not _is_version_dump(block[1:-1]):
                kept += block
            block = None
    return kept + (block or [])


def _is_version_dump(body: "list[str]") -> bool:
    """Whether a fenced block's lines are a report of versions (VERSION_DUMP_MIN). A line
    of code is no report's line: a string's quotes, a statement's ``;``, a list's or a
    block's bracket, a comment (``sortVersions(['1.0.0-beta.2', ...])``, ``// expected:``)."""
    filled = [line for line in body if line.strip()]
    if not filled:
        return False
    if sum(len(_VERSION_TOKEN_RE.findall(line)) for line in filled) < VERSION_DUMP_MIN:
        return False
    keyed = sum(1 for line in filled if _KEY_VALUE_LINE_RE.match(line) and not _CODE_LINE_MARK_RE.search(line))
    return keyed >= VERSION_DUMP_KEY_SHARE * len(filled)


# A heading that starts by asking the reporter to do something (``⏯ Please read ...``,
# ``Please describe the steps``), not the reporter's own plea (``Please help, ...``).
# Some verbs ask it without a "please": no reporter heads their own text ``Describe the
# issue`` or ``Provide a minimal reproduction`` (a trial's form kept ``describe``; ``Add
# ...`` or ``Use ...`` may be the reporter's own heading).
_PLEASE_RE = compile_later(
    r"[^\w]{0,8}(?:please[ \t]+(?:read|check|search|provide|describe|fill|include|make[ \t]+sure|confirm|ensure"
    r"|attach|paste|complete|answer|explain|list|specify|share|tell|give|select|enter|write|add|use)"
    r"|(?:describe|provide|explain|paste|attach|specify)[ \t]+(?:the|a|an|any|your|what|how)[ \t])\b", re.I)


def _without_form_sections(lines: "list[str]") -> "list[str]":
    """The lines less an issue form's questions about the machine with their answers (the
    options checked or listed under ``### OS``, a table's rows, a one-line answer,
    :data:`ENV_ANSWER_MAX_WORDS`)
    and the headings that ask (:data:`_ANSWER_CODE_RE` keeps those naming code); fenced
    code and the title are left as they are."""
    kept, environment, fenced, answered = [], False, False, False
    for n, line in enumerate(lines):
        if line.lstrip(" \t>").startswith("```"):
            fenced = not fenced
        heading = None if fenced else _MARKDOWN_HEADING_RE.match(line)  # (``# version`` in code is code)
        if environment and not heading and not fenced and _MARKDOWN_TABLE_LINE_RE.match(line) \
                and not _ENV_ANSWER_CODE_RE.search(line):
            answered = True  # (a table answers it, row by row: ``| Implementation | CPython |``)
            continue
        if environment and not heading and (fenced or line.strip() and not _SHORT_ITEM_RE.match(line)):
            if not (fenced or answered) and len(line.split()) <= ENV_ANSWER_MAX_WORDS \
                    and not _ENV_ANSWER_CODE_RE.search(line):
                answered = True  # (the form's answer: ``macOS 12.4`` under ``### Operating system``)
                continue
            environment = False  # (the section's list ends at prose or code: the issue's own)
        if heading:
            text = heading.group(1) if heading.group(1) is not None else heading.group(2)
            environment = _is_environment_heading(text)
            answered = False
            if environment:
                continue
            # A heading that asks (``### What did you expect to see?``, ``**What happened?**``)
            # is the template's question: its words are the template's, the answer below
            # it the reporter's. Not the title, nor one naming code (``# Why does
            # `parse_date` ignore the offset?``; a template's ``(`go version`)`` names a
            # command, no code).
            # So does one that asks the reporter to do something (``### Please read the FAQ
            # for the bug you encountered.``: a trial's ``faq``, ``encountered``).
            if n > 0 and (_asks(text) or _PLEASE_RE.match(text)) \
                    and not _ANSWER_CODE_RE.search(text):
                continue
        elif environment and (_CHECKED_ITEM_RE.match(line) or _SHORT_ITEM_RE.match(line)
                              and len(line.split()) <= ENV_ITEM_MAX_WORDS + 1):
            answered = True  # (a list answers it: a line after the list is the issue's)
            continue
        kept.append(line)
    return kept


# A shell prompt that names its user and machine (``emily@yuyuko ~>``, ``me@box:~/app$``,
# ``[root@host tmp]#``, ``(venv) me@mac proj %``; a themed shell's ``me@box dir ❯``, ``➜``,
# ``✗``, ``λ``, ``»``): those names are the reporter's, not the tree's (trials' ``emily``,
# ``yuyuko``, ``roland``, ``blackrainbow`` were keywords). The command after it stays.
# Themes put a mark before the user, a few words between host and mark (``emily@yuyuko
# ~/code (main) ❯``, ``... in ~/code on main ❯``) and repeat the mark (``❯❯❯``); oh-my-zsh's
# default shows no user: ``➜  blackrainbow git:(master) ✗ gdu``.
_SHELL_PROMPT_RE = compile_later(
    r"^[ \t>]{0,20}(?:[\u03bb\u279c\u276f\u00bb][ \t]{1,5})?(?:\([\w.-]{1,60}\)[ \t]{0,5})?\[?[\w.-]{1,64}@[\w.-]{1,253}"
    r"(?:[: \t][^\s\]$#%>\u276f\u279c\u2717\u03bb\u00bb]{0,200}){0,5}\]?"
    r"[ \t]{0,5}[$#%>\u276f\u279c\u2717\u03bb\u00bb]{1,3}(?=[ \t]|$)"
    r"|^[ \t>]{0,20}\u279c[ \t]{1,5}[^\s]{1,200}(?:[ \t]{1,5}git:\([^)\s]{1,100}\))?(?:[ \t]{1,5}\u2717)?(?=[ \t])", re.M)
# A command that asks a program its version (``difft --version``, ``tmux -V``, ``$ helm
# version``), backticked, or on a line of its own with the flag or after a prompt (a line
# ``Wrong version`` is prose): how the reporter tells the version, as an environment
# heading asks it. Its words are no keywords (a trial's ``difft --version`` ranked
# ``src/version.rs`` first), except in the title: there it is what the issue is about
# (a title "black --version reports 0.0.0").
# (A span starts at a backtick followed by no space: a closing one is followed by prose.
# A bare ``version`` counts only after a prompt: `` `api version` `` is a header's name.)
_VERSION_COMMAND_RE = compile_later(
    r"`(?:\$[ \t]*)?(?:\./)?[\w.+-]{1,40}[ \t]+(?:--version|-V)[ \t]*`"
    r"|^[ \t>]*(?:\$[ \t]*)?(?:\./)?[\w.+-]{1,40}[ \t]+(?:--version|-V)[ \t]*$"
    r"|^[ \t>]*\$[ \t]*(?:\./)?[\w.+-]{1,40}[ \t]+version[ \t]*$", re.M)
# A command that sets up the reporter's copy (``git clone <url>``, ``cd <dir>``, ``mkdir
# <dir>``, ``npm ci``, ``pip install <pkg>``, ``docker run --name <x> -e <VAR>=<value>
# <image>``): its words are the reporter's machine, folders, packages and containers, not
# the tree's (a trial's reproduction steps made ``git``, ``clone``, ``npm``, ``cd``, ``ci``
# keywords, ``clone`` leading the ranking with a file that clones objects; another's
# ``docker``, ``postgres``, ``letmein``). A backticked span, or a command line in fenced
# code or after a prompt, to the next ``&&``, ``;`` or ``|`` (``mkdir b && cd b && cmake
# -DX=ON ..`` keeps the cmake step). Not in the title: there it is what the issue is about.
_SETUP_COMMAND = (
    r"(?:sudo[ \t]+)?(?:git[ \t]+(?:clone|pull|fetch|checkout|switch)\b[^`\n;&|]*"
    r"|cd(?:[ \t]+[^\s=;&|`(){}]+)?[ \t]*(?=$|[;&|`])|mkdir(?:[ \t]+[^\s=;&|`(){}]+)+[ \t]*(?=$|[;&|`])"
    r"|(?:npm|pnpm|yarn|bun)[ \t]+(?:ci|install|i|add)\b[^`\n;&|]*|yarn[ \t]*(?=$|[;&|`])"
    r"|(?:python3?[ \t]+-m[ \t]+)?pip3?[ \t]+install\b[^`\n;&|]*|uv[ \t]+(?:pip[ \t]+install|add|sync)\b[^`\n;&|]*"
    r"|conda[ \t]+(?:install|create|activate)\b[^`\n;&|]*|brew[ \t]+install\b[^`\n;&|]*"
    r"|(?:apt|apt-get|dnf|yum)[ \t]+install\b[^`\n;&|]*|gem[ \t]+install\b[^`\n;&|]*"
    r"|cargo[ \t]+install\b[^`\n;&|]*|go[ \t]+(?:install|get)\b[^`\n;&|]*"
    r"|(?:docker|podman)(?:[ \t]+compose)?[ \t]+(?:run|pull|up|exec|build)\b[^`\n;&|]*)")
# ... in a chain: at the start, or after ``&&``, ``||``, ``;`` or ``|``.
# (Not a line a program prints naming itself first: ``go get: module ... found, but does not
# contain package ...`` is its message.)
_SETUP_STEP_RE = compile_later(r"(?:(?<=^)|(?<=[;&|]))([ \t]*)(?![\w./-]+(?:[ \t]+[\w-]+)?:[ \t])%s" % _SETUP_COMMAND)
_SPAN_RE = compile_later(r"`([^`\n]+)`")
# A line's head before its command: a quote's or a list's mark and a prompt (``$``, ``%``,
# ``❯``, ``>``, PowerShell's ``PS C:\dir>``).
_COMMAND_HEAD_RE = compile_later(
    r"[ \t>]*(?:(?:[-*+]|\d{1,3}[.)])[ \t]+)?(?P<prompt>(?:[$%\u276f>]|PS[ \t][^>\n]{0,120}>)[ \t]*)?")


def _without_setup_steps(command: str) -> str:
    """A command (line) less its setup steps; blank when nothing else is left. A step's
    hyphen-joined options stay (``pnpm install --frozen-lockfile``, ``pip install
    --no-build-isolation``): in the tree of the very tool they are its own names."""
    rest = _SETUP_STEP_RE.sub(_setup_step_options, command)
    return rest if rest.strip(" \t;&|") else ""


def _setup_step_options(m: "re.Match[str]") -> str:
    """A setup step's replacement: its hyphen-joined long options (``--frozen-lockfile``)."""
    options = LONG_OPTION_RE.findall(m.group(0))
    return m.group(1) + " ".join("--" + o for o in options) if options else m.group(1)


def _span_without_setup(m: "re.Match[str]") -> str:
    inner = m.group(1)
    head = re.match(r"[ \t]*(?:\$[ \t]*)?", inner).end()
    rest = _without_setup_steps(inner[head:])
    return m.group(0) if rest == inner[head:] else ("`%s`" % rest if rest else " ")


def _without_setup_commands(text: str) -> str:
    """The task less the commands that set up the reporter's copy (_SETUP_COMMAND), the
    title aside."""
    lines = text.split("\n")
    code = _fenced_lines(lines)
    for n in range(1, len(lines)):
        line = _SPAN_RE.sub(_span_without_setup, lines[n]) if "`" in lines[n] else lines[n]
        head = _COMMAND_HEAD_RE.match(line)
        if (code[n] or head.group("prompt")) and not line.lstrip(" \t>").startswith("```"):
            line = line[:head.end()] + _without_setup_steps(line[head.end():])
        lines[n] = line
    return "\n".join(lines)


# A template's instruction to the reporter, left in the issue: a sentence that starts "If
# applicable", or starts "If" and asks for a screenshot (``If it's a graphical error add a
# screenshot if possible.``). Its words are the template's (``applicable``, ``graphical``, ``screenshot``).
_INSTRUCTION_RE = compile_later(
    r"(?:^|(?<=[.!?:][ \t]))[ \t>*_-]{0,20}if\b(?:(?P<applicable>[ \t]+applicable\b)"
    r"|[^.!?:\n]{0,120}\b(?:add|attach|include|paste|provide)[ \t]{1,5}(?:(?:an?|some|any|the)[ \t]{1,5})?"
    r"screenshots?\b)[^.!?\n]{0,200}[.!?]?", re.I | re.M)
# ... unless it names code (``If take_screenshot() fails, add a screenshot ...``: the reporter's).
_CODE_NAME_IN_PROSE_RE = compile_later(r"`|\w_\w|[a-z][A-Z]|\w\(|\w\.\w")


def _unless_code(m: "re.Match[str]") -> str:
    """A template's instruction taken out: an "If applicable" sentence always (its
    example command is the template's, ``\\ls -la``), one asking for a screenshot unless it
    names code."""
    if m.group("applicable"):
        return " "
    return m.group(0) if _CODE_NAME_IN_PROSE_RE.search(m.group(0)) else " "


# A path that starts ``path/to/`` is the docs' and reports' placeholder for "wherever it
# is" (``path/to/cwd/isort_comments.py``): only its file's name is the reporter's; the
# folders' words (``path``, ``cwd``) named a trial's CLI module first. (One that holds an
# install directory is left to it: the path inside the package names the tree's file.)
_PLACEHOLDER_PATH_RE = compile_later(
    r"(?<![\w./-])/?path/to/(?![^\s\"'`]*(?:site|dist)-packages/|[^\s\"'`]*node_modules/)(?:[\w.-]+/)*")


def _without_delimited_blocks(text: str) -> str:
    """The text without the regions a pair of comments delimits (``<!-- x -->`` ...
    ``<!-- /x -->``, the label's case aside), each opening paired with the first closing
    of its label after it."""
    closes: dict[str, list[tuple[int, int]]] = {}
    for m in _COMMENT_CLOSE_RE.finditer(text):
        closes.setdefault(m.group(1).lower(), []).append((m.start(), m.end()))
    if not closes:
        return text
    out, pos = [], 0
    for m in _COMMENT_OPEN_RE.finditer(text):
        ends = closes.get(m.group(1).lower())
        if m.start() < pos or not ends:
            continue
        i = bisect.bisect_left(ends, (m.end(), -1))
        if i < len(ends):
            out += [text[pos:m.start()], " "]
            pos = ends[i][1]
    out.append(text[pos:])
    return "".join(out)


# A project's guides for its contributors, which an issue template links to (``refer our
# [Contributing](.github/CONTRIBUTING.md) section``; a trial's Java report made the path
# and ``CONTRIBUTING`` keywords): never the code a report is about. A Markdown link's
# relative target goes here, a URL in strip_urls; a guide the report names in its own
# words (``CONTRIBUTING.md tells people to run make lint``) stays.
_GUIDE_NAMES = r"(?:CONTRIBUTING|CODE_OF_CONDUCT|ISSUE_TEMPLATE|PULL_REQUEST_TEMPLATE)"
_GUIDE_LINK_RE = compile_later(
    r"(?<=\]\()[ \t]*(?:\.{0,2}/)?(?:[\w.-]+/){0,6}%s(?:\.(?:md|rst|txt|adoc))?(?:#[\w-]*)?(?=[ \t]*\))" % _GUIDE_NAMES,
    re.I)
_GUIDE_NAME_RE = compile_later(r"%s(?:\.(?:md|rst|txt|adoc|html?))?$" % _GUIDE_NAMES, re.I)


# An XML file's prolog (``<?xml version="1.0"?>``, ``<!DOCTYPE module PUBLIC "-//Puppy
# Crawl//DTD ..." "http://...dtd">``) is the format's, never the tree's (a trial's
# pasted configuration made ``DOCTYPE``, ``PUBLIC``, ``configuration_1_3`` keywords). At a
# line's start only: a prolog quoted inside a sentence is what the report is about.
_XML_PROLOG_RE = compile_later(r"^([ \t>]*)(?:<\?xml\b[^>\n]{0,300}\?>|<!DOCTYPE\b[^<>]{0,1000}>)", re.I | re.M)


# A heading underlined (Markdown's "setext" form: a line of text over ``-----`` or
# ``=====``), as older issue templates write theirs (a trial's restic report: ``Output of
# `restic version``` over dashes): read as the ``##`` heading it is. Outside fenced code,
# after a blank line or the text's start, and not a list item's line.
_SETEXT_HEADING_RE = compile_later(r"(?:^|(?<=\n\n))[ \t]{0,3}([^\s\-=*+>#|`][^\n]*)\n[ \t]{0,3}(?:-{3,}|={3,})[ \t]*(?=\n|$)")


def _setext_as_atx(text: str) -> str:
    """The text with its underlined headings written ``## heading`` (fenced code left as is)."""
    if "---" not in text and "===" not in text:
        return text
    out, pos = [], 0
    for m in _FENCED_RE.finditer(text):
        out += [_SETEXT_HEADING_RE.sub(_as_atx, text[pos:m.start()]), m.group(0)]
        pos = m.end()
    out.append(_SETEXT_HEADING_RE.sub(_as_atx, text[pos:]))
    return "".join(out)


def _as_atx(m: "re.Match[str]") -> str:
    return "## " + m.group(1)


def _template_item(line: str) -> bool:
    """Whether a line is an item of the template's: a short ``- Browser Chrome`` item about
    the machine, an option left unchecked, a checked first-person confirmation naming no code."""
    return bool(_ENVIRONMENT_ITEM_RE.match(line) and len(line.split()) <= ENV_ITEM_MAX_WORDS + 1
                or _UNCHECKED_ITEM_RE.match(line)
                or _CONFIRMED_ITEM_RE.match(line) and not _ITEM_CODE_RE.search(_LINK_TARGET_RE.sub("", line)))


def _fenced_lines(lines: "list[str]") -> "list[bool]":
    """For each line, whether it is inside fenced code (its fences included)."""
    out, fenced = [], False
    for line in lines:
        fence = line.lstrip(" \t>").startswith("```")
        out.append(fenced or fence)
        if fence:
            fenced = not fenced
    return out


def _heading_words(line: str) -> set[str]:
    """The words of four letters or more of a line, lower-cased, stop words left out."""
    return {w for w in re.findall(r"[a-z]{4,}", line.lower()) if w not in _STOP_WORDS}


def _without_emptied_sections(lines: "list[str]", dropped: "list[bool]") -> "list[str]":
    """The lines less the ``dropped`` ones, and less the heading of a section they emptied
    when the heading speaks of what its items said: a section that held only the template's
    items, under a heading sharing their words (``### Checked with the latest development
    build`` over ``- [x] I made a backup ... testing the latest development version``), was
    the template's, its heading too (a trial's JabRef form gave ``checked``, ``development``,
    ``dialog`` as keywords). The title, a heading over anything else, one that names other
    things (``### Crash when exporting to PDF`` over ``- [x] I searched the issues``: the
    reporter's summary) and a heading over a deeper one stay; fenced code is no heading."""
    kept: list[str] = []
    heading_at, emptied, said = -1, False, set()
    code = _fenced_lines(lines)
    for n, (line, drop) in enumerate(zip(lines, dropped)):
        if not code[n] and n > 0 and _MARKDOWN_HEADING_RE.match(line):
            if heading_at >= 0 and emptied and _heading_words(kept[heading_at]) & said \
                    and _heading_depth(line) <= _heading_depth(kept[heading_at]):
                del kept[heading_at]
            heading_at, emptied, said = len(kept), False, set()
            kept.append(line)
            continue
        if drop:
            if heading_at >= 0:
                emptied = True
                said |= _heading_words(line)
            continue
        if line.strip():
            heading_at = -1
        kept.append(line)
    if heading_at >= 0 and emptied and _heading_words(kept[heading_at]) & said:
        del kept[heading_at]
    return kept


# A form's label is a few words; a longer heading is the reporter's own summary (``## Please
# help, the editor crashes when saving``), whatever the text below it says.
FORM_LABEL_MAX_WORDS = 6
# ... and a report is a form's when at least this many of its headings are a template's.
FORM_HEADINGS_MIN = 2
# A dotted name in a heading is code (``### Session.commit hangs``).
_DOTTED_NAME_RE = compile_later(r"\w\.[A-Za-z_]")
# A path of the tree, a folder and a file with its extension (``src/foo/bar.py``), not a
# pair of words (``steps/info``).
_SLASHED_PATH_RE = compile_later(r"[\w.-]+/(?:[\w.-]+/)*[\w-]+\.(?:%s)\b" % _EXT_ALT)


def _without_foreign_headings(lines: "list[str]", form: bool) -> "list[str]":
    """The lines less the headings whose words the text never uses: a form's labels
    (``### Reproducible sample``, ``### Optional extra steps/info to reproduce``: a
    trial's ``sample`` ranked a file defining ``sample()`` 4th), of at most
    FORM_LABEL_MAX_WORDS words. A heading that names code
    or a path, or shares a word of four letters or more with the text below it is the reporter's;
    the title and fenced code are no heading, nor is a line of one ``#`` (a comment of
    pasted Python or shell code as often) or one indented as code. Only in a report that
    is a ``form`` (:func:`_looks_like_form`): in free text a short heading is the
    reporter's summary (``## Crash when exporting PDF``, ``**Tokenizer mishandles
    heredoc**``), whatever the text below it says."""
    if not form:
        return lines
    code = _fenced_lines(lines)
    # (As a form prints its labels: ``##`` or deeper, or a bold line, indented at most 3.)
    heads = {n: text for n, line in enumerate(lines)
             if n > 0 and not code[n] and _LABEL_START_RE.match(line) and _heading_depth(line) >= 2
             and (text := _heading_text(line)) is not None}
    if not heads:
        return lines
    said = _heading_words(" ".join(line for n, line in enumerate(lines) if n not in heads))
    drop = set()
    for n, text in heads.items():
        words = _heading_words(text)
        if words and len(text.split()) <= FORM_LABEL_MAX_WORDS and not words & said and "`" not in text \
                and not _ANSWER_CODE_RE.search(text) and not _DOTTED_NAME_RE.search(text) \
                and not any(_SLASHED_PATH_RE.fullmatch(w.strip("*_()[]:,.")) for w in text.split() if len(w) <= 300):
            drop.add(n)
    return [line for n, line in enumerate(lines) if n not in drop]


def _looks_like_form(lines: "list[str]") -> bool:
    """Whether the report is an issue form's (or a template's) output: at least
    FORM_HEADINGS_MIN of its headings are a template's (``### Expected behavior``), ask about
    the machine (``### Operating system``) or ask the reporter (``### What happened?``)."""
    code = _fenced_lines(lines)
    known = 0
    for n, line in enumerate(lines):
        text = None if n == 0 or code[n] else _heading_text(line)
        if text is None:
            continue
        if _HEADING_LINE_RE.match(line) or _is_environment_heading(text) or _asks(text):
            known += 1
            if known >= FORM_HEADINGS_MIN:
                return True
    return False


def _heading_depth(line: str) -> int:
    """A Markdown heading's level: its ``#``s (a bold line, ``**Heading**``, counts 6)."""
    hashes = len(line.lstrip(" \t>")) - len(line.lstrip(" \t>").lstrip("#"))
    return hashes or 6


# Text the reporter struck through (``~~it was X~~``, or a line wrapped in ``~``: GitHub's
# strikethrough) is what they took back: a trial's ``~The resulting error is:~`` over a
# struck ``INTERNAL ERROR`` gave ``internal``, ``error``. (``~`` alone: a home, ``~/.cache``.)
# (Not in code: ``~~(x / 2)`` truncates in JavaScript; never a ``~~~~`` fence.)
_STRUCK_RE = compile_later(r"~~(?=[^\s~])[^~\n`]*(?<=[^\s~])~~|^[ \t>]*~(?![~/\s^])[^~\n`]*(?<=[^\s~])~[ \t]*$", re.M)
# A line of ``ls -l``'s listing (``drwxr-xr-x 2 root root 4096 Sep 9 2021 public``): the
# reporter's files, owners and dates (a trial's ``drwxr``, ``root``, ``public`` keywords).
_LISTING_LINE_RE = compile_later(r"^[ \t>]*[-dlcbps][-rwxsStT]{9}[.@+]?[ \t]+\d+[ \t][^\n]*$", re.M)


# A collapsed block (``<details><summary>Diagnostics</summary> ... </details>``) whose
# summary is about the machine is the reporter's machine, whatever its headings inside say
# (a trial's picom diagnostics gave ``XRandR``, ``GeForce``, ``NVIDIA`` as names).
# Only a block closed before the next one opens (an unclosed or nested one stays), and
# none holding a trace or a message (a backtrace under "Versions & backtrace" is the issue's).
_DETAILS_OPEN_RE = compile_later(r"<details\b[^>\n]*>\s*<summary\b[^>\n]*>(?:<[a-z]+>)?([^<\n]{0,200})"
                                 r"(?:</[a-z]+>)?</summary>", re.I)
_DETAILS_TAG_RE = compile_later(r"<(/?)details\b", re.I)
_TRACE_OR_MESSAGE_RE = compile_later(
    r"\.\w{1,6}:\d+|^[ \t]*at[ \t]|^[ \t]*#\d+[ \t]|traceback|panicked|exception|error|warning", re.I | re.M)


def _without_struck(text: str) -> str:
    """The text less what the reporter struck through (_STRUCK_RE), outside fenced code."""
    if "~" not in text:
        return text
    lines = text.split("\n")
    for n, fenced in enumerate(_fenced_lines(lines)):
        if not fenced and "~" in lines[n]:
            lines[n] = _STRUCK_RE.sub(" ", lines[n])
    return "\n".join(lines)


def _without_machine_details(text: str) -> str:
    """The text less its collapsed blocks whose summary is about the machine (the
    summary a question about it, _is_environment_heading) and that hold no trace or
    message: each block closed before the next opens (linear: one pass over the tags)."""
    tags = [(m.start(), m.group(1) == "/") for m in _DETAILS_TAG_RE.finditer(text)]
    if len(tags) < 2:
        return text
    cut: list[tuple[int, int]] = []
    for (start, closing), (end, next_closing) in zip(tags, tags[1:]):
        if closing or not next_closing:
            continue
        stop = text.find(">", end)
        head = _DETAILS_OPEN_RE.match(text, start, end)
        if stop < 0 or head is None or not _is_environment_heading(head.group(1).strip()) \
                or _TRACE_OR_MESSAGE_RE.search(text, head.end(), end):
            continue
        cut.append((start, stop + 1))
    out, at = [], 0
    for a, b in cut:
        out += [text[at:a], " "]
        at = b
    return "".join(out) + text[at:]


# Names of a generic noun numbered 1 and 2 (``pkg1`` and ``pkg2``, ``field_1`` and
# ``field_2``): the reporter's stand-ins for any two of a kind, not the tree's names (a
# trial's ``pipx install pkg1 pkg2`` made them its first keywords). A lone numbered name
# (``jline3``), a pair from elsewhere (``utf8``, ``utf16``), a standard's versions
# (``http1``, ``http2``, ``oauth1``) or a run past 2 (``Vector1`` ... ``Vector3``) are names.
_NUMBERED_NAME_RE = re.compile(r"([A-Za-z]{2,}?)_?([0-9]{1,2})")
_STAND_IN_NOUNS = frozenset((
    "pkg", "package", "app", "file", "field", "item", "user", "name", "value", "key", "obj", "object", "var",
    "node", "task", "thing", "module", "lib", "project", "repo", "dir", "folder", "table", "col", "column",
    "row", "model", "func", "fn", "arg", "param", "host", "server", "client", "service", "env", "branch",
    "job", "container", "image", "volume", "db", "schema", "widget", "component", "page", "view", "form",
    "input", "output", "test", "example", "sample", "my", "foo", "bar", "baz", "word", "string", "str",
    "list", "entry", "record", "doc", "document", "tab", "window", "account", "group", "plugin", "target"))


def _numbered_stand_ins(names: Iterable[str]) -> set[str]:
    """The names of ``names`` that are such stand-ins: a noun of _STAND_IN_NOUNS numbered
    1 and 2, and no other number."""
    kinds: dict[str, list[str]] = {}
    for name in names:
        m = _NUMBERED_NAME_RE.fullmatch(name)
        if m and m.group(1).lower() in _STAND_IN_NOUNS:
            kinds.setdefault(m.group(1).lower(), []).append(name)
    out: set[str] = set()
    for members in kinds.values():
        numbers = {int(_NUMBERED_NAME_RE.fullmatch(n).group(2)) for n in members}  # type: ignore[union-attr]
        if numbers == {1, 2}:
            out.update(members)
    return out


# A run of numbered names (``file_1.txt`` ... ``file_20.txt``): at least this many
# paths alike but for their numbers are one family, the reporter's generated sample (a
# trial's pasted listing took twelve of the 24 keywords shown).
NUMBERED_FAMILY = 6  # (three are as often the tree's own: utf8.c, utf16.c, utf32.c; v1/, v2/, v3/)
_DIGITS_RE = re.compile(r"\d+")


def _one_of_each_numbered(paths: "list[str]") -> "list[str]":
    """The paths with each family of NUMBERED_FAMILY or more names alike but for their
    numbers kept as its first member (order kept)."""
    keys = [_DIGITS_RE.sub("#", path) for path in paths]
    families = Counter(keys)
    seen: set[str] = set()
    out = []
    for path, key in zip(paths, keys):
        if families[key] >= NUMBERED_FAMILY and "#" in key:
            if key in seen:
                continue
            seen.add(key)
        out.append(path)
    return out


# A timestamp (``2019-05-25T06:58:00.103904+00:00``): the reporter's moment, whose pieces
# read as names (a trial's ``T06``).
_TIMESTAMP_RE = compile_later(r"\b%s\d{2}:\d{2}(?::\d{2}%s)?%s\b" % (_DATE, _FRACTION, _ZONE))


def strip_boilerplate(task: str) -> str:
    """The task without its issue template and environment report: regions a bot wrote
    between a pair of comments, HTML and Markdown comments and prose markup, template
    headings and instructions, ``OS: …`` / ``Version: …`` lines and an envinfo report,
    short ``- Browser Chrome`` items, the options checked under an issue form's ``### OS``
    or ``### Shell`` and a form's one-line answer to a question about the machine, a
    heading that asks (underlined headings read as ``##`` ones), the folders of a
    ``path/to/...`` placeholder, a template's "If applicable, ..." and "add a screenshot"
    sentences, a shell prompt's user and machine names, and a bare file name labelling the
    task's own code."""
    text = _XML_PROLOG_RE.sub(r"\1 ", _GUIDE_LINK_RE.sub(" ", _without_delimited_blocks(_setext_as_atx(task))))
    text = _MARKDOWN_COMMENT_RE.sub("", _HTML_COMMENT_RE.sub(" ", text))
    text = _LISTING_LINE_RE.sub("", _without_struck(_without_machine_details(text)))
    text = _TIMESTAMP_RE.sub("00:00:00", text)  # (still a logger's time before its level)
    text = strip_html(_MARKDOWN_IMAGE_RE.sub(" ", text))
    text = _FILE_HEADER_LINE_RE.sub("", _ENVIRONMENT_LINE_RE.sub("", text))
    lines = _without_envinfo(_without_version_dumps(text.split("\n")))
    lines = _without_foreign_headings(_without_form_sections(lines), _looks_like_form(lines))
    code = _fenced_lines(lines)
    text = "\n".join(_without_emptied_sections(lines, [_template_item(line) or not code[n] and bool(
        _MACHINE_KEY_LINE_RE.match(line)) for n, line in enumerate(lines)]))
    title, newline, body = text.partition("\n")
    text = _PLACEHOLDER_PATH_RE.sub("", _HEADING_LINE_RE.sub("", _without_setup_commands(
        title + newline + _VERSION_COMMAND_RE.sub(" ", body))))
    text = _INSTRUCTION_RE.sub(_unless_code, _SHELL_PROMPT_RE.sub("", _CODE_LABEL_RE.sub(_unless_not_a_file, text)))
    return _CHATTER_PHRASE_RE.sub(lambda m: m.group(1) or " ", _TEMPLATE_PHRASE_RE.sub(" ", text))


# --- Text in CJK scripts ---------------------------------------------------------------------
#
# Japanese and Chinese are written without spaces. A task's CJK text is cut with the
# glossary (data/glossary.json) first, longest term first: a known term is searched as
# itself (it matches CJK comments, docs and strings) and as the English words code uses
# for it. What the glossary does not know is cut at script boundaries (kanji / katakana /
# hiragana): hiragana runs are Japanese grammar (particles, endings: の, を, する) and are
# dropped; katakana runs are loanwords, kept whole; a kanji run of two characters is kept,
# a longer one becomes its character bigrams, since most Chinese words are two characters
# and a bigram needs no dictionary (a literal bigram matches every word containing it).

# The glossary: CJK term -> its English words; every Japanese/Chinese spelling of a concept.
_GLOSSARY: dict[str, tuple[str, ...]] = {}
for _cjk_terms, _english in _load("glossary.json")["terms"]:
    for _term in _cjk_terms:
        _GLOSSARY.setdefault(unicodedata.normalize("NFKC", _term), tuple(_english))
_MAX_TERM_LEN = max((len(t) for t in _GLOSSARY), default=1)
# A CJK run of unknown text shorter than this is too ambiguous to search (one kanji).
MIN_CJK_LEN = 2
# Unknown CJK runs longer than this become bigrams (Chinese words are mostly two characters).
CJK_WHOLE_MAX_LEN = 2
# Caps keep a wholly Chinese issue from turning into hundreds of bigram searches.
MAX_CJK_KEYWORDS = 24


def _script(ch: str) -> str:
    """'han', 'kata' (katakana and the long-vowel mark), 'hira', or '' for other text."""
    o = ord(ch)
    if 0x3040 <= o <= 0x309F:
        return "hira"
    if 0x30A0 <= o <= 0x30FF or 0x31F0 <= o <= 0x31FF or 0xFF66 <= o <= 0xFF9F:
        return "kata"
    if 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0xF900 <= o <= 0xFAFF or o == 0x3005:
        return "han"
    return ""


def _is_cjk(text: str) -> bool:
    return any(_script(c) for c in text)


def is_cjk_piece(kw: Keyword) -> bool:
    """Whether a keyword is a piece of CJK text the glossary does not know (a bigram of a
    longer run, see cjk_keywords): searched, but no word the task wrote, so no gap to report."""
    return kw.kind == Kind.WORD and not kw.group and _is_cjk(kw.text)


_CJK_CHAR_CLASS = "\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\u3005"
_SCRIPT_BOUNDARY_RE = compile_later(r"(?<=[%s])(?=[^\W_%s])|(?<=[^\W_%s])(?=[%s])" % ((_CJK_CHAR_CLASS,) * 4))
_CJK_RUN_RE = compile_later("[%s]+" % _CJK_CHAR_CLASS)


def split_scripts(task: str) -> str:
    """Spaces between CJK text and Latin letters or digits: ``为API端点`` -> ``为 API 端点``,
    so that Latin identifiers inside CJK text are words and names of their own."""
    return _SCRIPT_BOUNDARY_RE.sub(" ", task) if _is_cjk(task) else task


def segment_cjk(run: str) -> list[tuple[str, bool]]:
    """(segment, known) pieces of one run of CJK text: glossary terms (known, longest
    first) and the searchable rest (unknown), in order; grammar (hiragana) dropped."""
    out: list[tuple[str, bool]] = []
    unknown = ""
    i = 0
    while i < len(run):
        for size in range(min(_MAX_TERM_LEN, len(run) - i), 0, -1):
            if run[i:i + size] in _GLOSSARY:
                break
        else:
            size = 0
        if size:
            out.extend(_unknown_pieces(unknown))
            unknown = ""
            out.append((run[i:i + size], True))
            i += size
        else:
            unknown += run[i]
            i += 1
    out.extend(_unknown_pieces(unknown))
    return out


def _unknown_pieces(text: str) -> list[tuple[str, bool]]:
    """Text the glossary does not know, cut at script boundaries (see the section note)."""
    pieces: list[tuple[str, bool]] = []
    j = 0
    while j < len(text):
        k = j
        while k < len(text) and _script(text[k]) == _script(text[j]):
            k += 1
        run, script = text[j:k], _script(text[j])
        j = k
        if script == "hira" or len(run) < MIN_CJK_LEN:
            continue
        if script == "han" and len(run) > CJK_WHOLE_MAX_LEN:
            pieces.extend((run[n:n + 2], False) for n in range(len(run) - 1))
        else:
            pieces.append((run, False))
    return pieces


def cjk_keywords(task: str) -> list[Keyword]:
    """Keywords of the task's CJK text: each glossary term as itself and as its English
    words (one group, the English ones ``translated``; stop words left out as in English
    text), and the unknown rest as CJK text (kind ``word``)."""
    out: list[Keyword] = []
    seen: set[str] = set()
    for m in _CJK_RUN_RE.finditer(_nfkc(task)):
        for segment, known in segment_cjk(m.group(0)):
            if segment in seen:
                continue
            seen.add(segment)
            english = [e for e in _GLOSSARY.get(segment, ()) if normalize(e) not in _STOP_WORDS] if known else []
            if known and not english and _GLOSSARY.get(segment):
                continue  # a term that stands for a stop word (修正 -> fix) is one too
            group = segment if english else ""
            kw = make_keyword(segment, "word", group=group)
            if kw is not None:
                out.append(kw)
            for e in english:
                tk = make_keyword(e, "word", group=group)
                if tk is not None:
                    out.append(replace(tk, translated=True))
            if len(out) >= MAX_CJK_KEYWORDS:
                return out[:MAX_CJK_KEYWORDS]
    return out


def merge_keywords(*groups: Sequence[Keyword]) -> list[Keyword]:
    """Concatenate keyword lists, first occurrence wins: by normalized text, and by the
    needles searched when one of the caller's own (``--keywords``) searches the same
    needles as a name given or quoted: ``limit_request_line`` and ``LimitRequestLine``
    are one search (a trial's agent gave both, and the exception class holding the name
    was credited twice for defining it, above the setting's readers); the one kept
    carries the heavier weight. A plain word's stem stays apart from a name (``users``
    searched as ``user`` is weaker evidence than a quoted ``user``)."""
    out: list[Keyword] = []
    seen: set[str] = set()
    named: dict[frozenset, int] = {}  # needles of a given or quoted name -> its place in ``out``
    for group in groups:
        for kw in group:
            key = normalize(kw.text)
            if key in seen:
                continue
            same = frozenset(kw.needles) if kw.needles and kw.kind in (Kind.GIVEN, Kind.IDENTIFIER) else None
            at = named.get(same) if same is not None else None
            if at is not None and Kind.GIVEN in (kw.kind, out[at].kind):
                if kw.weight > out[at].weight:
                    out[at] = replace(out[at], weight=kw.weight)
                continue
            seen.add(key)
            if same is not None and same not in named:
                named[same] = len(out)
            out.append(kw)
    return out
