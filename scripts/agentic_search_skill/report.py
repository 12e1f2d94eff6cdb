"""The JSON boundary: scored files -> the seed's normalized result contract.

Each result has ``id`` (POSIX path relative to the root), ``title``, ``summary`` (the
best matching lines, with line numbers), ``tags`` (names the file defines: the
codebase's own vocabulary), ``score`` (0..1), ``related`` (files of the tree it imports
or that import it), plus ``reason`` (the signals behind the score), ``missing`` (what
this file leaves open) and ``matched`` (the keywords it matched).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from functools import lru_cache
from itertools import accumulate
from math import log2
from typing import Callable, Optional, Sequence

from . import lang
from .match import Document, FileMatch, starts_only
from .query import HEADER_LINE_RE, Keyword, Kind, normalize
from .records import ResultView
from .score import Scored, reason_text

# Lines quoted in a summary, and how long each may be.
SUMMARY_LINES = 3
# ... of which the default output shows this many: summary_lines puts its best picks first.
SHOWN_FIRST = 2
SUMMARY_LINE_CHARS = 160
# What an output shows of a quoted line (output.py cuts it there).
LINE_CHARS = 120
# A longer line is shown from WINDOW_LEAD characters before the task's word in it when
# the word would end past LINE_CHARS: a minified file's one line, quoted from its start,
# showed none of the task's words.
WINDOW_LEAD = 30
# What a definition line that names no keyword adds: it wins ties, never a keyword.
DEF_LINE_TIE = 0.01
# A line defining a name that holds a keyword is worth this many times its keywords.
# Measured with bench/lines.py on both dev splits (336 gold files in cycle 1's results,
# the fix's lines from its pull request): 2.0 gives a line within 10 lines of the fix for
# 198 and inside it for 80; 1.5 for 195 and 86; 1.0 for 197 and 84. Neither wins both.
DEF_LINE_FACTOR = 2.0
# What a keyword an earlier summary line quoted is still worth to the next pick.
COVERED_FACTOR = 0.5
# A package, import or include line names what the file uses, not where the task is in
# it: it is quoted only when nothing better holds the keywords.
HEADER_LINE_FACTOR = 0.25
# A comment line says in prose what the code near it does; the code line holding the same
# names is where an agent starts reading (a trial: ``// additional search to perform the
# actual replacement).`` quoted over the code it was looking for). Quoted when nothing in
# code holds the keywords as well.
COMMENT_LINE_FACTOR = 0.5
# A Python docstring is prose about the code, as a comment is (a trial: a docstring's
# line quoted over the code it describes): its lines are quoted with the comment's factor.
# Measured with bench/lines.py on both dev splits: a quoted line within 10 lines of the
# fix for 141 -> 144 of 261 gold files, inside it 52 -> 53.
# A Rust file's own tests follow its ``#[cfg(test)]`` line: code about the task's words,
# but not the code the task is about (a trial: both lines quoted from ``mod tests``, the
# bug far above). Quoted with the comment's factor.
_RUST_TESTS_RE = re.compile(r"^[ \t]*#\[cfg\(test\)\]", re.M)
# A word of the task found only inside a string on a line (a log call's message, ``LOGGER
# .error("Could not save the backup")``) says the line talks about it; the code that does
# it holds the same words as names. Such a keyword counts the comment's factor on that
# line, unless it is a message the task quotes (where an error is raised is the place).
# Measured with bench/lines.py on both dev splits: a quoted line within 10 lines of the
# fix for 145 -> 149 of 261 gold files, inside it 54 -> 56.
STRING_HIT_FACTOR = COMMENT_LINE_FACTOR
# Lines longer than this (a minified bundle's, a data file's) are not scanned for strings:
# their strings say little of where the task is.
STRING_SCAN_MAX_CHARS = 4096
# A string on a line: an opening quote (an apostrophe not between two letters), escaped
# characters, and the closing quote (group ``closed``) unless the line ends first.
_STRING_SPAN_RE = re.compile(r"""(?P<q>"|`|(?<![A-Za-z])'|'(?![A-Za-z]))(?:(?!(?P=q))[^\\\n]|\\.)*(?P<closed>(?P=q))?""")
_COMMENT_LINE_RE = re.compile(r"^[ \t]*(?://|#(?![\w!\[])|/\*|\*(?!\*?[\w(])|--[ \t]|;;|<!--)")
# A file's licence header: the comment at its head, when it names a licence or a copyright.
# It is about the file's terms, not its code (a trial's Java interface quoted ``* WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND`` for the word ``conditions``): never quoted.
# Only the first LICENCE_SCAN_LINES lines are read for it.
LICENCE_SCAN_LINES = 80
_LICENCE_WORD_RE = re.compile(r"licen[cs]|copyright|spdx-", re.I)
_BLOCK_OPEN_RE = re.compile(r"^[ \t]*/\*")
# A keyword is looked for on at most this many lines of a file: one on thousands of
# lines points at no place (its worth there is below a tenth of a rare name's), and a
# generated file must not cost a pass per occurrence.
SPREAD_LINES_MAX = 2000
# Defined names counted one by one for a file's tags (see _most_used).
COUNTED_NAMES = 256
_WORD_TOKEN_RE = re.compile(r"[A-Za-z_$][\w$]*")
# Tags per result: enough to suggest follow-ups, short enough to read.
MAX_TAGS = 5
# Tags a title names after the file name.
TITLE_TAGS = 3
# Tag candidates kept per file for later cycles (ranked_names): the tags and room for
# names a query's keywords may hide.
RANKED_NAMES_KEPT = MAX_TAGS + 16
# Related files listed per result.
MAX_RELATED = 10
# Missing keywords listed per result.
MAX_MISSING = 5

# A line that starts a definition (any language's keywords, lang.py): summaries prefer it.
# (A Go method's receiver after ``func``: ``func (p *PathSpec) RelURL(``.)
_DEF_NAME_RE = re.compile(
    r"^[ \t]*(?:(?:%s)[ \t]+)*(?:%s)[ \t]+(?:(?<=func[ \t])\([^()\n]{0,200}\)[ \t]*)?\*?([A-Za-z_][A-Za-z0-9_]*)" % (
        "|".join(re.escape(m.decode()) for m in sorted(lang.MODIFIERS, key=lambda m: (-len(m), m))),
        "|".join(re.escape(w.decode().rstrip()) for w in sorted(lang.ANY.words, key=lambda w: (-len(w), w)))),
    re.M,
)
# A header line that opens a list of names over the next lines (``import {``, Go's
# ``import (``, ``from x import (``, Rust's ``use a::{``, ``export {``), and a line that can
# only be an item of such a list (a name, a path string, ``a as b``, ``a::b``, a comma):
# the items are header lines too (``ResolvedUrl,`` names what the file imports).
_HEADER_OPEN_RE = re.compile(r"^[ \t]*(?:import\b|from[ \t]+[\w.]+[ \t]+import\b|use[ \t]|export[ \t]*(?:type[ \t]*)?\{)[^;]*[{(][ \t]*$")
_HEADER_ITEM_RE = re.compile(r"^[ \t]*(?:type[ \t]+)?(?:[\w$.*]+(?:::[\w$*{}]+)*(?:[ \t]+as[ \t]+[\w$]+)?|[\w.]*[ \t]*[\"'`][^\"'`]*[\"'`]),?[ \t]*(?:(?://|#).*)?$")
# How far up a list item looks for the line that opens its list.
HEADER_BLOCK_LINES = 200
_ASSIGN_NAME_RE = re.compile(r"^(?:export[ \t]+)?(?:const|let|var)?[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*=[^=]", re.M)


# The only non-ASCII characters whose lower case holds ASCII (U+0130 -> "i\u0307", the
# Kelvin sign -> "k"); tests/test_report.py checks the list against every code point.
_LOWERS_TO_ASCII = ("\u0130", "\u212a")


def decode_text(data: bytes) -> str:
    """A file's bytes as results quote them (an editor's byte-order mark dropped)."""
    return data.decode("utf-8-sig", errors="replace")


def summary_lines(text: str, keywords: Sequence[Keyword],
                  counts: Optional[Sequence[int]] = None, quoted: Sequence[str] = (),
                  rarity: Optional[Sequence[float]] = None, rel: str = "") -> list[str]:
    """The lines that say most about where the task is in this file: first the line
    holding the longest of ``quoted`` (query.quoted_lines: code the task pasted, lower
    case) when the file holds one as written, then the keyword lines in file order.

    A keyword on a line is worth its weight times how few lines hold it
    (:func:`_spread`): a name on three lines of the file points at a place, one on a
    hundred lines points at none. A line is worth its keywords (each once, however many
    of its spellings it holds); a line that defines a name holding one of them is worth
    twice that (where an agent would open the file: ``def _print_BasisDependent(`` over
    a line of three plain words); any other definition line wins ties. Lines are picked
    one at a time, and a keyword an earlier pick quoted counts COVERED_FACTOR of its
    worth afterwards: three lines show three places, not one name three times. Needles
    are found with one ``find`` pass each over the lower-cased lines joined by newlines
    (a needle never holds a newline once the text is split into lines).

    ``counts`` (the match's, one per keyword, over the file's ASCII-lower-cased bytes)
    lets a keyword the file never holds skip its search: an ASCII needle absent from those
    bytes is absent from the quoted text too, unless the text holds a character whose
    lower case is ASCII (_LOWERS_TO_ASCII).

    ``rarity`` (the cycle's idf per keyword, score.Corpus.idfs) weighs each keyword by
    how few files of the tree hold it, as the ranking does: a word in every file's
    licence header or package line (``express``, the project's name) says less about
    where the task is than a name only three files hold.

    ``rel`` (the file's path) names its language, whose definitions without a keyword
    (``CodeWriter emitAndIndent(String s) {`` in Java, C, C++, a JS method) count as
    definition lines too (:func:`line_definitions`)."""
    lines = text.splitlines()
    joined, starts = lowered_lines(lines)
    if counts is not None and (len(counts) != len(keywords) or any(c in text for c in _LOWERS_TO_ASCII)):
        counts = None
    hits: dict[int, dict[int, str]] = {}  # line -> keyword index -> a needle found there
    spread: dict[int, int] = {}  # keyword index -> lines holding it
    in_string: set[tuple[int, int]] = set()  # (line, keyword): every needle found there is in a string
    strings: dict[int, list[tuple[int, int]]] = {}  # line -> its strings' spans (offsets in the line)
    for k, kw in enumerate(keywords):
        if kw.kind == Kind.PATH:
            continue
        if counts is not None and not counts[k] and all(n and n.isascii() for n in kw.needles):
            continue
        for n in dict.fromkeys(n.decode("utf-8", "ignore") for n in kw.needles):
            if not n or "\n" in n:  # (make_keyword keeps no empty needle)
                continue
            quoted_kind = kw.kind is Kind.MESSAGE
            # (A short needle is where a word starts, as the search counts it: match.count_in.)
            short = starts_only(n.encode("utf-8"))
            pos = joined.find(n)
            while pos >= 0 and spread.get(k, 0) < SPREAD_LINES_MAX:
                if short and pos > 0 and joined[pos - 1].isascii() and joined[pos - 1].isalnum():
                    pos = joined.find(n, pos + 1)
                    continue
                i = bisect_right(starts, pos) - 1
                found = hits.setdefault(i, {})
                nxt = starts[i + 1] if i + 1 < len(starts) else len(joined)
                if not quoted_kind:
                    spans = strings.get(i)
                    if spans is None:
                        spans = strings[i] = _string_spans(joined[starts[i]:nxt])
                    inside = _within(spans, pos - starts[i], len(n))
                else:
                    inside = False
                if k not in found:
                    found[k] = n
                    spread[k] = spread.get(k, 0) + 1
                    if inside:
                        in_string.add((i, k))
                elif not inside:
                    in_string.discard((i, k))
                pos = joined.find(n, nxt)
    if rarity is not None and len(rarity) != len(keywords):
        rarity = None
    value = {k: keywords[k].weight * _spread(n) * (rarity[k] if rarity is not None else 1.0)
             for k, n in spread.items()}
    # Lines by the worth of their keywords alone, best first; a definition can at most
    # double that (or add DEF_LINE_TIE) and a quoted keyword only lowers it, so once that
    # bound falls below the best line of a pick, no later line can beat it: the
    # definition test runs on the few lines that may win.
    base = sorted((-sum(value[k] for k in found), i) for i, found in hits.items())
    # line -> (2 defines a name holding a keyword, 1 another name, 0 none; a header line)
    kinds: dict[int, tuple[int, bool]] = {}
    chosen: list[int] = []
    covered: set[int] = set()  # keywords a chosen line quotes
    texts: set[str] = set()  # the chosen lines' text
    tests_from = len(lines)
    if rel.endswith(".rs"):
        m = _RUST_TESTS_RE.search(joined)
        if m:
            tests_from = bisect_right(starts, m.start()) - 1
    docstrings = _docstring_spans(joined, starts) if rel.endswith((".py", ".pyi")) else []
    licence = _licence_end(lines, rel)

    def aside(i: int) -> bool:
        """A comment line, a docstring's or one of the file's tests: worth less (COMMENT_LINE_FACTOR)."""
        return bool(_COMMENT_LINE_RE.match(lines[i])) or i > tests_from or _in_spans(docstrings, i)

    # (Of the lines holding a quoted line, code first: the test that asserts a message or
    # the comment that quotes it is not where it is raised.)
    pasted = _pasted_line(joined, starts, quoted,
                          lambda i: (not aside(i) and i >= licence, sum(value[k] for k in hits.get(i, ()))))
    if pasted is not None:
        chosen.append(pasted)
        texts.add(lines[pasted].strip())
        covered.update(hits.get(pasted, ()))
    while len(chosen) < min(SUMMARY_LINES, len(base) + (pasted is not None)):
        best: tuple[float, int] = (0.0, -1)
        for neg, i in base:
            plain = -neg
            if best[1] >= 0 and max(DEF_LINE_FACTOR * plain, plain + DEF_LINE_TIE) < best[0]:
                break
            if i in chosen or i < licence or (texts and lines[i].strip() in texts):
                continue  # (the same line again, elsewhere in the file, shows nothing new)
            worth = sum(value[k] * (COVERED_FACTOR if k in covered else 1.0)
                        * (STRING_HIT_FACTOR if (i, k) in in_string else 1.0) for k in hits[i])
            if i not in kinds:
                names = line_definitions(lines, i, rel)
                kinds[i] = (0 if not names else 1 + any(n and n in name for n in hits[i].values() for name in names),
                            _is_header(lines, i))
            defined, header = kinds[i]
            worth = worth * DEF_LINE_FACTOR if defined == 2 else worth + DEF_LINE_TIE * defined
            if header:
                worth *= HEADER_LINE_FACTOR
            elif aside(i):
                worth *= COMMENT_LINE_FACTOR
            if best[1] < 0 or worth > best[0] or (worth == best[0] and i < best[1]):
                best = (worth, i)  # (ties: the earlier line)
        if best[1] < 0:
            break
        chosen.append(best[1])
        texts.add(lines[best[1]].strip())
        covered.update(hits[best[1]])
    # The lines an output shows first are the best picks (the default output shows
    # SHOWN_FIRST), in file order after a pasted line; the rest follow in file order.
    lead = 1 if pasted is not None else 0
    order = chosen[:lead] + sorted(chosen[lead:SHOWN_FIRST]) + sorted(chosen[max(lead, SHOWN_FIRST):])
    out = []
    for i in order:
        head, line = f"L{i + 1}: ", lines[i].strip()
        if len(line) > SUMMARY_LINE_CHARS:
            line = _window(line, [hits[i][k] for k in sorted(hits.get(i, {}), key=lambda k: -value[k])], len(head))
        out.append(head + line)
    return out


def _string_spans(line: str) -> list[tuple[int, int]]:
    """The spans ``(start, end)`` of the strings a line of code holds: from a quote (``"``,
    ``'`` or a backtick) to the same quote unescaped, or to the line's end. An apostrophe
    between letters (``don't`` in a comment) opens none; a line longer than
    STRING_SCAN_MAX_CHARS holds none that counts."""
    if len(line) > STRING_SCAN_MAX_CHARS:
        return []
    return [(m.start(), m.end() - 1 if m.group("closed") is not None else m.end())
            for m in _STRING_SPAN_RE.finditer(line)]


def _within(spans: Sequence[tuple[int, int]], at: int, length: int) -> bool:
    """Whether ``[at, at + length)`` lies inside one of ``spans``."""
    return any(a < at and at + length <= b for a, b in spans)


def _window(line: str, needles: Sequence[str], head: int = 0) -> str:
    """A long line cut to SUMMARY_LINE_CHARS, from WINDOW_LEAD characters before the
    first of ``needles`` (best first) it holds when that would end past what an output
    shows after a ``head`` of ``head`` characters (LINE_CHARS, its last one an ellipsis).
    The needle is looked for in the line itself, case-insensitively, so that its place
    is the line's (a lower-cased ``İ`` is two characters)."""
    found = (re.search(re.escape(n), line, re.IGNORECASE) for n in needles if n)
    m = next((x for x in found if x is not None), None)
    pos, end = (m.start(), m.end()) if m is not None else (-1, 0)
    start = max(0, pos - WINDOW_LEAD) if end > LINE_CHARS - head - 1 else 0
    mark = "…" if start else ""
    body = line[start:start + SUMMARY_LINE_CHARS - len(mark) - 1]
    return mark + body + ("…" if start + len(body) < len(line) else "")


_STRING_PREFIX = frozenset("rRuUbB")


def _licence_end(lines: Sequence[str], rel: str = "") -> int:
    """The line after a licence header (0 when the file has none): the file's first
    comment (after blank lines and a ``#!`` line) - a ``/* ... */`` block, or a run of line
    comments up to a blank line - when it holds a licence word (_LICENCE_WORD_RE). A
    block's closing line with code after ``*/`` is not in it; prose files (Markdown, a
    README) have none; ``#`` starts a comment only where it does (not C's ``# define``)."""
    language = lang.language_of(rel)
    if language is lang.NONE or lang.file_role(rel)[0] == "docs":
        return 0
    hash_comments = language not in (lang.C, lang.JVM, lang.JS, lang.GO, lang.RUST, lang.CSHARP)
    i, n = 0, min(len(lines), LICENCE_SCAN_LINES)
    while i < n and (not lines[i].strip() or (i == 0 and lines[i].startswith("#!"))):
        i += 1
    start = i
    if i < n and _BLOCK_OPEN_RE.match(lines[i]):
        first = lines[i].strip()[2:]
        while i < n and "*/" not in (first if i == start else lines[i]):
            i += 1
        if i >= n:
            return 0
        closing = lines[i] if i > start else first
        end = i if closing.split("*/", 1)[1].strip() else i + 1
    else:
        while i < n and _line_comment(lines[i], hash_comments):
            i += 1
        end = i
    return end if any(_LICENCE_WORD_RE.search(line) for line in lines[start:end]) else 0


def _line_comment(line: str, hash_comments: bool) -> bool:
    """Whether ``line`` is a line comment (``//``, ``--``, ``;;``, and ``#`` where it is one)."""
    code = line.lstrip()
    return code.startswith(("//", "-- ", ";;")) or (hash_comments and code.startswith("#") and not code.startswith("#!"))


def _docstring_spans(joined: str, starts: Sequence[int]) -> list[tuple[int, int]]:
    """The first and last line of each string of a Python file that stands alone as a
    statement (a docstring: prose about the code, quoted as a comment is), in file order.
    ``joined``/``starts``: the file's lines joined by newlines and where each begins. The
    text is searched for triple quotes only (a file holds few)."""
    spans: list[tuple[int, int]] = []
    pos = 0
    nxt = {d: joined.find(d) for d in ('"""', "'''")}  # each delimiter's next place (-1: none left)
    while True:
        for d, x in nxt.items():
            if 0 <= x < pos:
                nxt[d] = joined.find(d, pos)
        at = min((x for x in nxt.values() if x >= 0), default=-1)
        if at < 0:
            return spans
        delim = joined[at:at + 3]
        first = bisect_right(starts, at) - 1
        lead = joined[starts[first]:at]
        end = joined.find(delim, at + 3)
        if end < 0:
            end = len(joined)
        if len(lead.strip(" \t")) <= 2 and set(lead.strip(" \t")) <= _STRING_PREFIX:
            spans.append((first, bisect_right(starts, end) - 1))
        pos = end + 3


def _in_spans(spans: Sequence[tuple[int, int]], i: int) -> bool:
    """Whether line ``i`` lies in one of ``spans`` (first and last lines, in order)."""
    k = bisect_right(spans, (i, math.inf)) - 1
    return k >= 0 and i <= spans[k][1]


def line_definitions(lines: Sequence[str], i: int, rel: str) -> list[str]:
    """The names (lower case) line ``i`` defines: after a definition word (``def``,
    ``func``, ``class``), or, in a language whose functions need none (lang.Language.calls),
    as lang finds them - a type before the name, a body after the parameters (looked for
    on the next line too)."""
    m = _DEF_NAME_RE.match(lines[i])
    if m:
        return [m.group(1).lower()]
    if not rel or not lang.language_of(rel).calls or "(" not in lines[i]:
        return []
    here = lines[i].lower()
    chunk = "\n".join(lines[i:i + 2]).encode("utf-8", "replace")
    return [n.lower() for n, _v in lang.defined_names(chunk, rel) if n.lower() in here]


# The lines holding a quoted line that are weighed for the one to show first.
PASTED_SITES = 50


def _pasted_line(joined: str, starts: Sequence[int], quoted: Sequence[str],
                 worth: Callable[[int], tuple[bool, float]] = lambda i: (True, 0.0)) -> Optional[int]:
    """The line (index) holding the first of ``quoted`` (longest first) that the
    lower-cased text ``joined`` holds; None when it holds none. Of the first
    PASTED_SITES lines holding it, the one ``worth`` ranks highest (a line of code before
    a comment's, a test's or the licence's, then the worth of its other keywords), the
    first on a tie: a message raised in several places is shown where the task's other
    words are too (a trial's "bad huffman code" showed the JPEG decoder's line, first in
    the file, for a report about PNG files, where the zlib decoder raises it too)."""
    for q in quoted:
        pos = joined.find(q)
        best: Optional[tuple[tuple[bool, float], int]] = None
        seen = 0
        while pos >= 0 and seen < PASTED_SITES:
            i = bisect_right(starts, pos) - 1
            w = worth(i)
            if best is None or w > best[0]:
                best = (w, i)
            seen += 1
            pos = joined.find(q, starts[i + 1] if i + 1 < len(starts) else len(joined))
        if best is not None:
            return best[1]
    return None


def _is_header(lines: Sequence[str], i: int) -> bool:
    """Whether line ``i`` is a package, import or include line, or an item of an import
    list that an earlier line opened (``import {`` ... ``  ResolvedUrl,``)."""
    if HEADER_LINE_RE.match(lines[i]):
        return True
    if not _HEADER_ITEM_RE.match(lines[i]):
        return False
    j = i - 1
    stop = max(-1, i - HEADER_BLOCK_LINES)
    while j > stop and _HEADER_ITEM_RE.match(lines[j]):
        j -= 1
    return j > stop and _HEADER_OPEN_RE.match(lines[j]) is not None


def _spread(lines_holding: int) -> float:
    """What a keyword held by this many lines of a file says about where to look: 1 on
    one line, halving as the lines double (1 / (1 + log2 n))."""
    return 1.0 / (1.0 + log2(lines_holding))


def lowered_lines(lines: Sequence[str]) -> tuple[str, list[int]]:
    """The lower-cased lines joined by newlines, and where each starts in that string.

    ASCII text (almost every source file) keeps its length when lower-cased: the join is
    lower-cased in one call and the starts follow from the lines' own lengths. Other text
    is lower-cased line by line (a lower-cased character may be longer)."""
    joined = "\n".join(lines)
    lengths = map(len, lines) if joined.isascii() else None
    if lengths is not None:
        joined = joined.lower()
    else:
        low = [line.lower() for line in lines]
        joined = "\n".join(low)
        lengths = map(len, low)
    starts = [0]
    starts.extend(accumulate(n + 1 for n in lengths))
    del starts[len(lines) or 1:]
    return joined, starts


def _first_defined(text: str, rel: str) -> dict[str, int]:
    """Each name the file defines or declares (lang.defined_names, by the file's
    extension) with its rank in file order; a file with none gives the names it assigns
    at a line's start."""
    names: dict[str, int] = {}
    for name, _ in lang.defined_names(text.encode("utf-8", "replace"), rel):
        names.setdefault(name, len(names))
    if not names:
        for m in _ASSIGN_NAME_RE.finditer(text):
            names.setdefault(m.group(1), len(names))
    return names


def _most_used(text: str, names: dict[str, int], of: Optional[int] = None) -> list[str]:
    """``names`` most used in ``text`` first (ties: first defined). Uses are counted as
    substrings (``text.count``) for up to COUNTED_NAMES names; a file defining more (a
    generated table of constants) has its names counted as whole words in one pass, so
    its cost is the file's size, not its size times its names. ``of``: how many names
    the file has when ``names`` are some of them (the way of counting is the file's, so
    that the tags are the same whichever the keywords took out)."""
    if (len(names) if of is None else of) <= COUNTED_NAMES:
        uses = {n: text.count(n) for n in names}
    else:
        words: dict[str, int] = {}
        for w in _WORD_TOKEN_RE.findall(text):
            words[w] = words.get(w, 0) + 1
        uses = {n: words.get(n, 0) for n in names}
    return sorted(names, key=lambda n: (-uses[n], names[n]))


def defined_names(text: str, rel: str = "") -> list[str]:
    """Names the file defines or declares, as ``match`` finds them (lang.defined_names,
    by the file's extension), most used first (ties: first defined); a file with none
    gives the names it assigns at a line's start."""
    return _most_used(text, _first_defined(text, rel))


@lru_cache(maxsize=8)
def _known(texts: tuple[str, ...]) -> frozenset[str]:
    """The normalized keywords (the same for every result of a cycle: made once)."""
    return frozenset(normalize(t) for t in texts)


def _tag_candidates(text: str, rel: str) -> dict[str, int]:
    """The defined names that may be tags (not private, not too short), with their rank
    in file order."""
    return {n: i for n, i in _first_defined(text, rel).items() if not (n.startswith("_") or len(n) < 3)}


def ranked_names(text: str, rel: str = "") -> tuple[list[str], bool]:
    """The names that may be tags whatever the keywords, most used first (the order of
    ``tags_for``): the first RANKED_NAMES_KEPT, and whether there were more. Depends on
    the file alone, so the index keeps it for later cycles (cycle.py)."""
    order = _most_used(text, _tag_candidates(text, rel))
    return order[:RANKED_NAMES_KEPT], len(order) > RANKED_NAMES_KEPT


def tags_for(text: str, keywords: Sequence[Keyword], rel: str = "",
             ranked: Optional[tuple[Sequence[str], bool]] = None) -> list[str]:
    """Defined names that are not already keywords: the codebase's own terms.

    Only the names that may be tags are counted (counting a name costs a pass over the
    text); their order is the one they hold in ``defined_names``. ``ranked`` is
    :func:`ranked_names` of the text when known: the tags are its first names that are
    not keywords, unless the keywords hide so many that the names left out could count."""
    known = _known(tuple(k.text for k in keywords))
    if ranked is not None:
        top, more = ranked
        tags = [n for n in top if normalize(n) not in known]
        if len(tags) >= MAX_TAGS or not more:
            return tags[:MAX_TAGS]
    every = _tag_candidates(text, rel)
    return _most_used(text, {n: i for n, i in every.items() if normalize(n) not in known}, len(every))[:MAX_TAGS]


# A result whose file was edited while the cycle ran: its reason ends so, and it quotes nothing.
CHANGED_IN_CYCLE = "changed during this cycle"


def build_result(
    s: Scored,
    doc: Optional[Document],
    keywords: Sequence[Keyword],
    match: Optional[FileMatch],
    related: Sequence[str],
    ranked: Optional[tuple[Sequence[str], bool]] = None,
    quoted: Sequence[str] = (),
    rarity: Optional[Sequence[float]] = None,
) -> ResultView:
    """One result in the seed's contract (plus reason, missing, matched); ``ranked``:
    :func:`ranked_names` of the file when known; ``quoted``: the code lines the task
    pasted (query.quoted_lines), the first of which the file holds is quoted first;
    ``rarity``: the cycle's idf per keyword (see :func:`summary_lines`)."""
    text = decode_text(doc.head) if doc is not None else ""
    changed = doc is not None and doc.changed  # (its text is then the searched, lower-cased one)
    tags = tags_for(text, keywords, s.rel, ranked) if text else []
    title = s.rel.rsplit("/", 1)[-1]
    if tags:
        title += " — " + ", ".join(tags[:TITLE_TAGS])
    matched = set(s.matched_keywords)
    missing = [k.text for k in keywords if k.text not in matched and k.kind != Kind.WORD][:MAX_MISSING]
    return ResultView(
        id=s.rel, score=s.score, reason=reason_text(s.signals) + (f"; {CHANGED_IN_CYCLE}" if changed else ""),
        lines=tuple(summary_lines(text, keywords, match.counts if match is not None else None, quoted, rarity,
                                  s.rel))
        if text and not changed else (),
        title=title, tags=tuple(tags), related=tuple(related[:MAX_RELATED]),
        missing=tuple(missing), matched=tuple(s.matched_keywords),
    )
