"""REFINE: the next query, built from what this cycle's evaluation showed.

- keywords: the query's keywords plus the codebase's own vocabulary learned from the
  high-relevance files (identifier parts that are frequent there and rare elsewhere:
  the seed's "learn the codebase terminology"; names the best files import and use on
  a line about the task count most, since they lead to files not found yet), plus
  programming synonyms of keywords that matched nothing (rate limit -> throttle), from
  the table hints.py uses;
- patterns: the query's patterns, unchanged (every relevant file lies inside them, so
  proposing their directories could only widen a query the caller narrowed);
- excludes: the query's excludes (the caller's), unchanged;
- set_aside: the loop's earlier set-aside files plus the files weighed (the best of the
  cycle) whose standing (the scorer's relevance against the best file; a judged file's
  is the caller's score) is below the rubric's 0.2: later cycles read and rank them but
  never show them in results;
- focus_areas: the gaps - keywords nothing matched, related files not yet seen.

Keywords that matched nothing are dropped from the next query (searching the same tree
for them again cannot find them) and reported as gaps; the synonyms found for them
take their place.
"""

from __future__ import annotations

import math
import re
from itertools import islice
from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence

from .match import Document, line_span
from .query import DERIVED_KINDS, MESSAGE_MIN_WORDS, MIN_STEM_LEN, Keyword, Kind, base_form, is_cjk_piece, \
    make_keyword, merge_keywords, normalize, split_identifier, _STOP_WORDS
from .rubric import HIGH_RELEVANCE, RELATED, UNRELATED_BELOW
from .score import Scored

# Files at or above the seed's "high relevance" teach vocabulary; with none that high,
# the best few at or above "related".
LEARN_FROM_SCORE = HIGH_RELEVANCE
LEARN_FALLBACK_SCORE = RELATED
# Files larger than this teach nothing: a file that big is many units (an amalgamated
# single-header library, a generated module), and its frequent names are the whole
# codebase's, not the topic's (nlohmann's 600 KB json.hpp taught token, adapter, sax,
# cbor). On the dev splits 7 issues learn otherwise; no Acc@1/5/10 changes.
LEARN_MAX_BYTES = 256 * 1024
# How many files to learn from at most (the best ones).
LEARN_MAX_FILES = 3
# The roles of the files vocabulary is learned from (lang.file_role): what the code calls
# things is in its code. A locale file, a readme or a data file teaches its prose and data
# (month names from a locale file, version strings from release notes), not the names
# other files use.
LEARN_ROLES = frozenset(("source", "declarations"))
# How many new terms a cycle may add: enough to shift vocabulary, few enough to stay on topic.
MAX_LEARNED = 4
# Learned terms shorter than this are mostly noise (get, set, val).
MIN_LEARNED_LEN = 3
# Candidate terms whose rarity is measured (the most widespread in the source files).
MAX_CANDIDATES = 24
# Documents sampled (every k-th, deterministic) to estimate how rare a candidate term is.
RARITY_SAMPLE = 1500
# A term held by more than this share of the sampled files is never learned: it tells
# no file apart, and the next cycle would match and score every file for it (on
# 100,000 generated files whose every module says ``func`` and ``arg``, cycle 2 took
# 5.9 s against 2.1 s without them). No dev issue learns such a term (bench/HISTORY.md);
# at half the files, two dev issues lost a rank.
LEARN_MAX_SHARE = 0.9
# Synonyms per keyword that matched nothing, and in all: a broadened query stays focused.
MAX_SYNONYMS_PER_GAP = 3
MAX_SYNONYMS = 9
# The synonyms looked for in the tree, per gap and in all, to pick those caps' worth from:
# one no file holds costs a search of every file's text when there is no index (an
# adversarial check's 63 candidates took a 118 MB tree's cycle from 3 s to 20 s).
SYNONYMS_TRIED_PER_GAP = MAX_SYNONYMS_PER_GAP + 1
SYNONYMS_TRIED = MAX_SYNONYMS + 3
# Focus areas listed at most.
MAX_FOCUS = 8
# How a focus area that is a gap (a keyword no file holds) begins.
GAP_FOCUS = "no file matches "
# Shown files below the rubric's "unrelated" line are excluded next cycle.
EXCLUDE_BELOW = UNRELATED_BELOW

# Names every codebase of a language uses: never the codebase's own vocabulary.
_CODE_NOISE = frozenset(
    """
    isinstance str int dict list len bool float tuple set get args kwargs value values data
    type object string number boolean void any null undefined none true false const function return export
    import async await this self new var let def elif else try except finally raise assert
    super init str repr main test tests todo fixme xxx param params returns err res req next
    public private protected static final class interface extends implements package
    """.split()
    # Each language's reserved words and preprocessor directives: every file of it says
    # them (``func`` in Go, ``impl`` in Rust, ``ifdef`` in C), whatever it is about.
    + """
    func struct chan defer range goroutine fallthrough nil iota
    impl pub mut enum trait crate dyn unsafe
    include define ifdef ifndef endif undef pragma typedef unsigned signed sizeof inline extern
    template typename namespace nullptr noexcept constexpr virtual override explicit
    throws throw synchronized volatile transient instanceof abstract
    """.split()
    # The derives, attributes, annotations and decorators a language puts on every type:
    # about the type's plumbing, never its topic (a trial's tealdeer loop proposed ``serde``,
    # ``serialize``, ``deserialize``, ``debug`` from ``#[derive(...)]`` lines).
    + """
    derive serde serialize deserialize partialeq partialord clone copy debug
    deprecated nullable nonnull suppresswarnings staticmethod classmethod dataclass
    """.split()
    # Linters' and coverage tools' comment directives (``// eslint-disable-next-line``,
    # ``# noqa``, ``//nolint``, ``/* istanbul ignore next */``): about the tools, never the task.
    + """
    eslint tslint jshint jslint pylint noqa nolint istanbul prettier clippy rubocop
    nocov pragma disable
    """.split()
)
_WORD_IN_RAW_RE = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{2,}")
# A URL in a file (a link in a comment, a licence header) and the host part of an import
# path (``github.com/google/uuid`` in Go, ``com.fasterxml.jackson`` in Java) name where
# code comes from, not what it does: their words are never the codebase's vocabulary.
# (Each starts only where its run of scheme or host characters starts: started inside
# one, every start scanned to the run's end, the square of its length - a file holding
# a 120 KB hex string and one link took 7 s, a crafted 250 KB one minutes.)
_URL_IN_RAW_RE = re.compile(rb"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>)]*")
_IMPORT_HOST_RE = re.compile(rb"(?<![A-Za-z0-9.-])(?:[A-Za-z0-9-]+\.)+(?:com|org|net|io|dev|in|co|me)/[A-Za-z0-9_.-]+"
                             rb"|\b(?:com|org|net|io|dev)\.[A-Za-z0-9_]+\.")
# A linter's or coverage tool's directive comment with the rules it names, to the end of
# its line or of its block comment (``eslint-disable-line prefer-spread``, ``# noqa: E501``,
# ``# pylint: disable=too-many-locals``, ``// NOLINT(readability-...)``, ``# type:
# ignore[attr-defined]``): it speaks to the tools, so its words (prefer, spread, line,
# locals) are never the codebase's vocabulary. (dayjs-602 learned ``line`` and ``prefer``
# from one such comment.)
_LINT_DIRECTIVE_RE = re.compile(
    rb"(?://|#|/\*|--)[ \t]*(?:(?:eslint|tslint|jshint|jslint|jscs|pylint|noqa|nolint|istanbul|"
    rb"prettier-ignore|rubocop|clang-format|pyright|mypy)\b|@ts-(?:ignore|expect-error|nocheck)\b|"
    rb"type:[ \t]*ignore\b|pragma:[ \t]*no[ \t]*cover\b)(?:[^\n*]|\*(?!/))*(?:\*/)?",
    re.IGNORECASE)
# Module-naming words every codebase uses for its files, and code files' extensions
# (``hpp`` from ``#include "x.hpp"`` lines): never a topic of their own.
_MODULE_NOISE = frozenset("utils util helper helpers common core lib src index misc mod "
                          "hpp cpp cxx hxx inl tsx jsx mjs cjs".split())
# The import lines of a file, in any of the languages the tool reads (import, from,
# use, using, #include, require(...)): the names a file takes from other files.
_IMPORT_LINE_RE = re.compile(rb"^[ \t]*(?:import|from|use|using|#[ \t]*include|export[^\n]*\bfrom)\b[^\n]*"
                             rb"|^[^\n]*\brequire\([^\n]*", re.MULTILINE)
# The module an import line names, in the syntaxes that name one by its path: C's
# ``#include <sys/stat.h>``, Python's ``import a.b`` / ``from a.b import``, JS's
# ``from './x'`` / ``require('x')`` (groups 1, 2, 3).
_MODULE_PATH_RE = re.compile(rb"^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"\n]+)[>\"]"
                             rb"|^[ \t]*(?:from|import)[ \t]+([A-Za-z_][\w.]*)"
                             rb"|(?:\bfrom|\brequire\()[ \t]*['\"]([^'\"\n]+)['\"]", re.MULTILINE)
# The alias an import line gives (``import collections.abc as cabc``, ``import * as ns``,
# ``use a::b as c``): the importing file's own name for it, which no other file defines.
_IMPORT_ALIAS_RE = re.compile(rb"\bas[ \t]+[A-Za-z_$][\w$]*")
# A term the best files import (a name another file defines) and that the code uses on
# a line about the task leads the next cycle to files not found yet: its value is
# multiplied by 1 + LINKED_GAIN per best file importing it. Without it a local name (payload, sub) outranks the codebase's own
# cross-file vocabulary (refresh, jwt in the seed's example 1).
LINKED_GAIN = 2.0
# Two words sharing this many first letters are one word inflected (expiry, expired):
# an inflection of a keyword is not new vocabulary.
SAME_WORD_PREFIX = 5


@dataclass(frozen=True)
class NextQuery:
    """What the next cycle will run unless the caller steers otherwise."""

    patterns: tuple[str, ...]
    keywords: tuple[Keyword, ...]
    excludes: tuple[str, ...]
    focus_areas: tuple[str, ...]
    learned: tuple[str, ...]
    synonyms: tuple[str, ...]
    set_aside: tuple[str, ...] = ()  # the loop's own excludes (state.Query.set_aside)


def learn_vocabulary(
    scored: Sequence[Scored],
    raw_texts: dict[str, bytes],
    docs: Sequence[Document],
    keywords: Sequence[Keyword],
    limit: int = MAX_LEARNED,
    presence: Optional[Callable[[Sequence[Document]], Callable[[bytes], Optional[int]]]] = None,
) -> list[str]:
    """Identifier parts frequent in the best files, on their lines that hold a query's
    word (else anywhere in them), and rare across the codebase.

    ``presence`` (the index's, when there is one) makes a counter of how many of the
    sampled documents hold a term, from postings instead of the documents' texts; the
    terms are the same either way."""
    def best_code(floor: float) -> list[Scored]:
        return list(islice((s for s in scored if s.role in LEARN_ROLES and s.score >= floor
                            and len(raw_texts.get(s.rel, b"")) <= LEARN_MAX_BYTES), LEARN_MAX_FILES))

    sources = best_code(LEARN_FROM_SCORE) or best_code(LEARN_FALLBACK_SCORE)
    if not sources:
        return []
    known = set()
    for kw in keywords:
        known.add(normalize(kw.text))
        known.update(split_identifier(kw.text))
        known.update(n.decode("utf-8", "ignore") for n in kw.needles)
    long_known = [k for k in known if len(k) >= MIN_LEARNED_LEN]
    prefixes = {k[:SAME_WORD_PREFIX] for k in known if len(k) >= SAME_WORD_PREFIX}
    eligible: dict[str, bool] = {}  # part -> may be learned (decided once per distinct part)
    parts_of: dict[bytes, list[str]] = {}
    in_files: dict[str, int] = {}
    freq: dict[str, int] = {}
    # (A source whose text is not at hand has none to learn from: b"".)
    texts = [_without_urls(raw_texts.get(s.rel, b"")) for s in sources]
    import_lines = [_IMPORT_LINE_RE.findall(text) for text in texts]
    for alias in _import_aliases(import_lines):
        eligible[alias] = False  # a file's own name for a module (``cabc``) is no vocabulary
    for name in _library_modules(texts, import_lines, docs):
        eligible[name] = False  # the standard library's or a dependency's (``functools``, ``stdatomic``)
    for text in texts:
        seen_here: set[str] = set()
        for token in _WORD_IN_RAW_RE.findall(text):
            parts = parts_of.get(token)
            if parts is None:
                parts = parts_of[token] = split_identifier(token.decode("ascii", "ignore"))
            for part in parts:
                ok = eligible.get(part)
                if ok is None:
                    ok = eligible[part] = not (
                        len(part) < MIN_LEARNED_LEN or not part.isalpha() or part in _STOP_WORDS
                        or part in _CODE_NOISE or part in _MODULE_NOISE or part in known
                        or part[:SAME_WORD_PREFIX] in prefixes
                        or any(part in k or k in part for k in long_known))
                if not ok:
                    continue
                freq[part] = freq.get(part, 0) + 1
                if part not in seen_here:
                    seen_here.add(part)
                    in_files[part] = in_files.get(part, 0) + 1
    if not freq:
        return []
    near = _parts_near(texts, [n for kw in keywords for n in kw.needles])
    linked = {t: n for t, n in _imported_parts(import_lines).items() if t in near}
    # Candidates: present in most source files or imported by one, then most frequent;
    # rarity decides.
    need = 2 if len(sources) >= 2 else 1
    # Learned only from the lines that hold a query's word, where the code speaks of the
    # task, when any part is there (trials: the whole file's frequent parts were noise every
    # time). Measured on the dev splits: no rank lower, dayjs-1160's final 3rd -> 2nd.
    pool = [t for t in freq if t in near] or list(freq)
    cands = sorted(
        (t for t in pool if in_files[t] >= need or len(sources) == 1 or linked.get(t)),
        key=lambda t: (-in_files[t] * (1 + LINKED_GAIN * linked.get(t, 0)), -freq[t], t),
    )[:MAX_CANDIDATES]
    step = max(1, len(docs) // RARITY_SAMPLE)
    sample = docs[::step]
    gain = {t: 1.0 + LINKED_GAIN * linked.get(t, 0) for t in cands}
    return _rarest(cands, freq, {t: in_files[t] * gain[t] for t in cands}, sample, limit,
                   presence(sample) if presence is not None else None)


def _without_urls(text: bytes) -> bytes:
    """The text with its URLs, module hosts and linter directives blanked out
    (_URL_IN_RAW_RE, _IMPORT_HOST_RE, _LINT_DIRECTIVE_RE)."""
    if b"://" in text:
        text = _URL_IN_RAW_RE.sub(b" ", text)
    return _LINT_DIRECTIVE_RE.sub(b" ", _IMPORT_HOST_RE.sub(b" ", text))


def _parts_near(texts: Sequence[bytes], needles: Sequence[bytes]) -> set[str]:
    """Identifier parts on the lines of the texts that hold one of the query's needles:
    the words the code uses where it speaks of the task. (The needles are searched
    together, once per line that holds one: each line against each needle took 90 s on
    three files of 780,000 short lines.)"""
    wanted = sorted({n for n in needles if n and b"\n" not in n and b"\r" not in n}, key=lambda n: (-len(n), n))
    out: set[str] = set()
    if not wanted:
        return out
    found = re.compile(b"|".join(re.escape(n) for n in wanted))
    for text in texts:
        if b"\r" in text:  # (a line ends at either; one byte for one keeps the offsets)
            text = text.replace(b"\r", b"\n")
        low = text.lower()
        pos = 0
        while True:
            m = found.search(low, pos)
            if m is None:
                break
            start, end = line_span(low, m.start(), m.end())
            for token in _WORD_IN_RAW_RE.findall(text[start:end]):
                out.update(split_identifier(token.decode("ascii", "ignore")))
            pos = end + 1
    return out


# One word: a module name that can be vocabulary (``stdatomic``, not ``sys/stat``'s parts
# joined or ``v8``).
_ONE_WORD_RE = re.compile(r"[A-Za-z]+")
# A name used as a qualifier: ``functools.`` / ``std::`` (a module's or namespace's name
# before what it holds).
_QUALIFIER_RE = re.compile(rb"\b[A-Za-z_]\w*[ \t]*(?:\.|::)(?=[ \t]*[A-Za-z_])")


def _library_modules(texts: Sequence[bytes], import_lines: Sequence[Sequence[bytes]],
                     docs: Sequence[Document]) -> set[str]:
    """The one-word modules the texts import (their ``import_lines``, as
    :data:`_MODULE_PATH_RE` reads them) that name no file or directory of the tree (of
    ``docs``, the files this cycle read) and that the texts name only on import lines or
    as a qualifier (``functools.partial``, ``std::``): the
    standard library's and dependencies' (``functools``, ``stdarg.h``), whose names say
    where code comes from, not what this codebase calls things. A module whose name the
    code also uses as a word of its own (``<mutex>`` beside ``registry_mutex``) stays
    vocabulary. Lower case."""
    named: set[str] = set()
    for m in (m for lines in import_lines for line in lines for m in _MODULE_PATH_RE.finditer(line)):
        path = (m.group(1) or m.group(2) or m.group(3)).decode("ascii", "ignore")
        for piece in re.split(r"[/.\\]+", path):
            if piece and _ONE_WORD_RE.fullmatch(piece):
                named.add(piece.lower())
    if not named:
        return named
    in_tree: set[str] = set()
    for doc in docs:
        for piece in doc.rel.split("/"):
            in_tree.add(piece.split(".", 1)[0].lower())
    named -= in_tree
    for text in texts:
        if not named:
            break
        # (The code's own uses: the text less its import lines and qualifiers.)
        rest = _QUALIFIER_RE.sub(b" ", _IMPORT_LINE_RE.sub(b" ", text))
        for token in _WORD_IN_RAW_RE.findall(rest):
            word = token.decode("ascii", "ignore")
            low = word.lower()
            if any(n in low for n in named):
                named.difference_update(split_identifier(word))
    return named


def _import_aliases(import_lines: Sequence[Sequence[bytes]]) -> set[str]:
    """The one-word names the import lines (per text) give as aliases (``as cabc``),
    lower case."""
    out: set[str] = set()
    for lines in import_lines:
        for line in lines:
            for alias in _IMPORT_ALIAS_RE.findall(line):
                parts = split_identifier(alias.split()[-1].decode("ascii", "ignore"))
                if len(parts) == 1:  # (a compound alias's parts may be the code's words)
                    out.update(parts)
    return out


def _imported_parts(import_lines: Sequence[Sequence[bytes]]) -> dict[str, int]:
    """Per identifier part, how many of the texts name it on one of their import lines
    (``import_lines``, per text); an alias a line gives (``as cabc``) aside: it is the
    importing file's own name."""
    out: dict[str, int] = {}
    for lines in import_lines:
        parts: set[str] = set()
        for line in lines:
            for token in _WORD_IN_RAW_RE.findall(_IMPORT_ALIAS_RE.sub(b" ", line)):
                parts.update(split_identifier(token.decode("ascii", "ignore")))
        for part in parts:
            out[part] = out.get(part, 0) + 1
    return out


def _rarest(cands: Sequence[str], freq: dict[str, int], in_files: dict[str, float],
            sample: Sequence[Document], limit: int,
            holding: Optional[Callable[[bytes], Optional[int]]] = None) -> list[str]:
    """The ``limit`` candidates of highest rarity * (1 + log freq) * files, rarity being
    log(1 + n / (1 + df)) over the sample, files counting the linked gain; ties by term.

    Counting df is the cost (a rare term is looked for in every sampled file), so it is
    bounded: a candidate's value at df 0 is the most it can reach, candidates are
    counted best bound first, and counting stops once the candidate, or every one
    after it, can no longer reach the current ``limit``-th value. Strict comparisons
    only: the result is exactly what counting every candidate in full gives.
    ``holding`` (needle -> how many sampled documents hold it, from the index, or None:
    count it here) gives the full df at once: the value only falls as df grows, so a df whose value is below the
    floor is exactly the one the early stop gives up on.
    """
    n = max(len(sample), 1)

    def value(t: str, df: int) -> float:
        return math.log(1.0 + n / (1.0 + df)) * (1.0 + math.log(freq[t])) * in_files[t]

    ranked: list[tuple[float, str]] = []  # (-value, term), kept sorted
    for bound, t in sorted((-value(t, 0), t) for t in cands):
        floor = -ranked[limit - 1][0] if len(ranked) >= limit else None
        if floor is not None and -bound < floor:
            break  # this bound and every later one fall short
        needle = t.encode()
        known = holding(needle) if holding is not None else None
        if known is not None:
            v = value(t, known)
            if known > LEARN_MAX_SHARE * n:
                continue  # a term nearly every file holds (LEARN_MAX_SHARE)
            if floor is None or v >= floor:
                ranked.append((-v, t))
                ranked.sort()
            continue
        df = 0
        for doc in sample:
            if needle in doc.low:  # (held anywhere, as the index's presence says)
                df += 1
                if floor is not None and value(t, df) < floor:
                    break
        else:
            if df > LEARN_MAX_SHARE * n:
                continue  # a term nearly every file holds (LEARN_MAX_SHARE)
            ranked.append((-value(t, df), t))
            ranked.sort()
    return [t for _, t in ranked[:limit]]


def _flat(text: str) -> str:
    return "".join(ch for ch in normalize(text) if ch.isalnum())


def _is_variant(candidate: str, original: str) -> bool:
    """True for another spelling of the same word (ratelimit for "rate limiting")."""
    a, b = _flat(candidate), _flat(base_form(original)) or _flat(original)
    return bool(a and b) and (a.startswith(b) or b.startswith(a))


def synonym_keywords(
    gaps: Sequence[Keyword], synonym_runs: Callable[..., list], existing: Sequence[Keyword],
    held: Optional[Callable[[Sequence[Keyword]], Sequence[bool]]] = None,
) -> list[Keyword]:
    """Programming synonyms for keywords that matched nothing.

    ``synonym_runs`` is hints.synonym_runs, the one phrase lookup of the table: adjacent
    gap words are looked up as a phrase first ("rate limiting" -> throttle), a word a
    phrase covered is not looked up again, and a phrase the table does not know is tried
    in its base form. A gap word the table knows has its own stem searched first
    (``panics`` -> ``panic``: a task's words are searched as written); other spellings
    from the table are skipped; each gap gets at most MAX_SYNONYMS_PER_GAP synonyms
    besides its stem, weighted like the keyword(s) they stand for. ``held`` (when given)
    says, in one call for all of them, whether some file of the tree holds each
    candidate: one no file holds is no term to search, and the table's next is taken (a
    trial's destr round proposed ``db``, ``database`` and ``datastore`` for "storage"
    in a tree holding none of them) - of at most SYNONYMS_TRIED_PER_GAP per gap and
    SYNONYMS_TRIED in all, besides each gap word's stem.
    """
    originals = [g for g in gaps if g.kind not in DERIVED_KINDS and g.kind not in (Kind.PATH, Kind.MESSAGE)]
    runs = synonym_runs([g.text for g in originals], None, lambda t: base_form(normalize(t)))
    # Each run's candidates in the order they are taken: (the gap's text, its stem's
    # keyword or None, the synonyms' keywords).
    planned: list[tuple[str, Optional[Keyword], list[Keyword]]] = []
    for start, length, found in runs:
        group = originals[start:start + length]
        text = " ".join(g.text for g in group)
        weight = min(1.0, sum(g.weight for g in group))
        # A word the table knows is a programming term: its own stem first (the tree may
        # say "panic" where the task says "panics"; a task's words are searched as written).
        stem = base_form(normalize(text))
        stem_kw = make_keyword(stem, Kind.SYNONYM, weight, group=text) \
            if found and length == 1 and group[0].kind == Kind.WORD and stem != normalize(text) \
            and len(stem) >= MIN_STEM_LEN else None
        syns = [made for syn in found if not _is_variant(syn, text)
                for made in (make_keyword(syn, Kind.SYNONYM, weight, group=text),) if made is not None]
        planned.append((text, stem_kw, syns[:SYNONYMS_TRIED_PER_GAP]))
    # (A gap word's own stem is always looked for: one per gap, the first thing it tries.)
    tried = 0
    for n, (text, stem_kw, syns) in enumerate(planned):
        planned[n] = (text, stem_kw, syns[:max(0, SYNONYMS_TRIED - tried)])
        tried += len(planned[n][2])
    have = {normalize(k.text) for k in existing}
    # (Each spelling looked for once, and none the query already searches.)
    asked: dict[str, Keyword] = {}
    for _t, stem_kw, syns in planned:
        for k in ([stem_kw] if stem_kw else []) + syns:
            if normalize(k.text) not in have:
                asked.setdefault(normalize(k.text), k)
    flags = held(list(asked.values())) if held is not None and asked else [True] * len(asked)
    in_tree = {key: bool(f) for key, f in zip(asked, flags)}
    out: list[Keyword] = []
    for _text, stem_kw, syns in planned:
        stem = normalize(stem_kw.text) if stem_kw is not None else ""
        if stem_kw is not None and stem not in have and len(out) < MAX_SYNONYMS and in_tree[stem]:
            have.add(stem)
            out.append(stem_kw)
        picked = 0
        for made in syns:
            if len(out) >= MAX_SYNONYMS or picked >= MAX_SYNONYMS_PER_GAP:
                break
            key = normalize(made.text)
            if key in have or not in_tree[key]:
                continue
            have.add(key)
            out.append(made)
            picked += 1
    return out


def message_pieces(gaps: Sequence[Keyword], existing: Sequence[Keyword]) -> list[Keyword]:
    """A quoted message no file holds as written, searched again by its halves: the code's
    format string may put a placeholder where the task shows a value (``"%v while waiting
    for connections to become ready"`` for ``context deadline exceeded while waiting for
    connections to become ready``, a trial's gRPC task), or the program may add words
    around it (``real number overflow`` printed as ``real number overflow input``, a
    trial's C task). Each half keeps at least MESSAGE_MIN_WORDS words and is shorter than
    the message; in a message of four or five words, where the two share words, a half
    counts only with two words that are no stop word (``is not a`` says nothing).
    The halves stand for the message as one group (the better counts), weighted like it."""
    have = {normalize(k.text) for k in existing}
    out: list[Keyword] = []
    for g in gaps:
        if g.kind != Kind.MESSAGE:
            continue
        words = g.text.split()
        half = max((len(words) + 1) // 2, MESSAGE_MIN_WORDS)
        if half >= len(words):
            continue
        for part in (words[:half], words[len(words) - half:]):
            if len(words) < 2 * MESSAGE_MIN_WORDS and sum(w.lower() not in _STOP_WORDS for w in part) < 2:
                continue
            text = " ".join(part)
            # (Searched as written, as its message is; derived, as a synonym is.)
            made = make_keyword(text, Kind.MESSAGE, g.weight, group=g.text)
            if made is not None and normalize(text) not in have:
                have.add(normalize(text))
                out.append(replace(made, kind=Kind.SYNONYM))
    return out


# A quoted upper-case name of parts joined by ``_`` that no file holds, searched again
# without its first part: the code may spell it with another prefix or one part more (a
# trial's ``JSON_INT_AS_REAL``, which jansson calls ``JSON_DECODE_INT_AS_REAL``: the
# agent's grep for ``INT_AS_REAL`` found it at once, the loop called it a gap). Only a
# name of at least NAME_PIECE_MIN_PARTS parts whose rest is at least NAME_PIECE_MIN_CHARS
# long: ``MAX_SIZE`` of ``MY_MAX_SIZE`` is anyone's.
NAME_PIECE_MIN_PARTS = 3
NAME_PIECE_MIN_CHARS = 9
_JOINED_NAME_RE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+){2,}")


def name_pieces(gaps: Sequence[Keyword], existing: Sequence[Keyword]) -> list[Keyword]:
    """A quoted ``A_B_C`` constant no file holds, searched again as ``B_C`` (one group with
    the name, weighted like it: :data:`NAME_PIECE_MIN_PARTS`). Only an upper-case name (a
    macro's, a constant's, an enum value's: a namespace prefix is what varies); the rest
    of a function's or a variable's (``my_config_file``) is anyone's ``config_file``."""
    have = {normalize(k.text) for k in existing}
    out: list[Keyword] = []
    for g in gaps:
        if g.kind != Kind.IDENTIFIER or not _JOINED_NAME_RE.fullmatch(g.text):
            continue
        parts = g.text.split("_")
        rest = "_".join(parts[1:])
        if len(parts) < NAME_PIECE_MIN_PARTS or len(rest) < NAME_PIECE_MIN_CHARS or normalize(rest) in have:
            continue
        made = make_keyword(rest, Kind.IDENTIFIER, g.weight, group=g.text)
        if made is not None:
            have.add(normalize(rest))
            out.append(replace(made, kind=Kind.SYNONYM))
    return out


def refine_query(
    patterns: Sequence[str],
    keywords: Sequence[Keyword],
    excludes: Sequence[str],
    shown: Sequence[Scored],
    gap_keywords: Sequence[Keyword],
    learned: Sequence[str],
    synonyms: Sequence[Keyword],
    unseen_related: Sequence[str],
    learned_weight: float | None = None,
    set_aside: Sequence[str] = (),
) -> NextQuery:
    """Assemble the next query (the seed's refineQuery).

    The keywords are merged (each normalized keyword once, the first occurrence's kind
    and weight kept): the query's keywords minus its gaps, then the learned terms, then
    the synonyms. ``learned_weight`` scales the learned terms: a short query needs the
    codebase's vocabulary, a long task text already carries its own and only drifts
    with more.
    """
    gap_keys = {normalize(g.text) for g in gap_keywords}
    kept = [k for k in keywords if normalize(k.text) not in gap_keys]
    learned_kws = [k for k in (make_keyword(t, Kind.LEARNED, learned_weight) for t in learned) if k is not None]
    next_keywords = merge_keywords(kept, learned_kws, synonyms)
    have = {normalize(k.text) for k in kept}
    new_set_aside = list(set_aside)
    for s in shown:
        if s.score < EXCLUDE_BELOW and s.rel not in new_set_aside and s.rel not in excludes:
            new_set_aside.append(s.rel)
    focus: list[str] = []
    for kw in gap_keywords:
        if kw.kind not in DERIVED_KINDS and not is_cjk_piece(kw):
            focus.append(f"{GAP_FOCUS}{kw.text!r}")
    for rel in unseen_related:
        focus.append(f"related file not yet read: {rel}")
    return NextQuery(
        patterns=tuple(patterns),
        keywords=tuple(next_keywords),
        excludes=tuple(excludes),
        focus_areas=tuple(focus[:MAX_FOCUS]),
        learned=tuple(k.text for k in learned_kws if normalize(k.text) not in have),
        synonyms=tuple(k.text for k in synonyms if normalize(k.text) not in have),
        set_aside=tuple(new_set_aside),
    )
