#!/usr/bin/env python3
"""hints.py - the "next move" primitive of agentic search, independent of any backend.

A search skill searches its own corpus, converts what it found into the normalized
result contract below, and asks this module what the agent should do next. The module
holds no loop of its own: it looks at one step's results and answers with
``next_action`` (broaden / refine / expand / synthesize) plus the material for the next
query. The full protocol lives in ``references/protocol.md``.

Normalized result item (only ``id``, ``title`` and ``score`` are required)::

    {"id": "str", "title": "str", "summary": "str", "tags": ["str"],
     "score": 0.0, "related": ["str"], "text": "str"}

``tags``/``related`` may also be a comma- or newline-separated string; ``score`` may be
a numeric string and is kept as given (hybrid scores above 1 are not clamped).

Library use (what other skills do; they catch only ImportError)::

    sys.path.insert(0, "<skill>/scripts")
    from hints import compute_hints, format_hints
    hints = compute_hints(results, ["JWT", "認証"])
    hints = compute_hints(results, keywords, seen_ids=seen, round=2, max_rounds=3)

CLI use (JSON on stdin or --input, hints JSON on stdout)::

    echo '{"keywords": ["JWT"], "results": [{"id": "a", "title": "JWT", "score": 0.9}]}' \\
        | python3 scripts/hints.py
    python3 scripts/hints.py --input results.json --text

Importing this module prints nothing, parses no arguments and raises nothing; json and
argparse are imported only by the CLI, the synonym table only on first use.
"""

from __future__ import annotations

import math
import os
import re
import sys
import unicodedata

TYPE_CHECKING = False
if TYPE_CHECKING:  # (annotations only: typing and dataclasses cost a process 9 ms at start)
    from typing import Callable, Optional, Sequence

__all__ = [
    "SUFFICIENT_SCORE", "MIN_SUGGEST_SCORE", "MAX_SUGGESTED_QUERIES", "MAX_BROADEN_QUERIES",
    "HintsInputError", "compute_hints", "format_hints", "collect_related_ids",
    "suggest_followup_queries", "suggest_broaden_queries", "gap_keywords", "synonyms_for",
    "synonym_runs",
    "main",
]

# Tunables. The first three are the seed's contract and must keep their values.
SUFFICIENT_SCORE = 0.5      # a top score at least this high means the step found something usable
MIN_SUGGEST_SCORE = 0.15    # results below this are noise: their tags make no follow-up queries
MAX_SUGGESTED_QUERIES = 5   # enough alternatives to choose from, few enough to read at a glance
MAX_BROADEN_QUERIES = 8     # room for two gap words with a few synonyms each, still one screen
_SYNONYM_SPAN = 3           # longest run of adjacent gap keywords looked up as one phrase
# Broadening candidates looked at before giving up on duplicates: 30,000 gap words would
# otherwise build 30,000 queries of 30,000 words to keep eight.
_MAX_BROADEN_ATTEMPTS = 64
# Characters of result text searched for gap keywords, all keywords together (about a
# second): keywords past it are not reported as gaps (a gap is a claim, never a guess).
_MAX_GAP_SCAN_CHARS = 500_000_000
# Bytes of CLI input read: 500,000 results of the seed's contract as retrieve_loop.py
# builds them (id, title, summary, tags, score, related; about 600 bytes each, measured
# on this repository) are about 300 MB; an input beyond this is not a result list.
MAX_INPUT_BYTES = 512 * 1024 * 1024
# Result items the CLI takes: twice the 500,000 above. Past it an input is no result list
# but a flood of tiny items (``{}`` repeated: 42 MB of them took 49 s and 5 GB).
MAX_RESULTS = 1_000_000
# Keywords a query is read for (the first, each once); a longer list is a document.
MAX_KEYWORDS = 1_000
# Longest rendering of a bad value in an error message.
_SHOWN_CHARS = 40
# Invisible characters that steer a terminal or reorder text: escaped in --text output.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

ACTIONS = ("broaden", "refine", "expand", "synthesize")
STOP_REASONS = ("sufficient", "saturated", "max_rounds")

_SYNONYMS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "agentic_search_skill", "data", "synonyms.json")
# (term key -> group numbers, groups); None until synonyms_for() first needs it.
_synonym_table: tuple[dict[str, tuple[int, ...]], tuple[tuple[str, ...], ...]] | None = None

_builtin_round = round  # compute_hints has a parameter named ``round``


class HintsInputError(ValueError):
    """Input that cannot be understood; the message names the problem and where it is."""


class _Results:
    """A parsed result list, one column per field the hints need (row i is result i).

    Columns rather than one record per result: 10,000 results parse in one loop, and
    max(), zip() and str.join() then run over plain sequences at C speed. A slotted class
    set once, not a frozen dataclass: importing dataclasses (and inspect with it) was a
    tenth of hints.py's time as a process.
    """

    __slots__ = ("ids", "scores", "tags", "related", "haystacks")

    def __init__(self, ids: tuple[str, ...], scores: tuple[float, ...],
                 tags: tuple[list[str], ...], related: tuple[list[str], ...],
                 haystacks: tuple[str, ...]) -> None:
        self.ids = ids              # "" where a result has no id
        self.scores = scores
        self.tags = tags
        self.related = related
        self.haystacks = haystacks  # ``text``, or title + summary + tags without it


# ---------------------------------------------------------------------------
# Tolerant parsing of what real callers send


def _norm(text: str) -> str:
    """Fold text for matching: NFKC (full-width ＪＷＴ -> JWT), then casefold."""
    if text.isascii():  # O(1) in CPython; ASCII is NFKC already and lower() == casefold()
        return text.lower()
    return _nfkc(text).casefold()


# Unicode's stream-safe limit (UAX #15): normalizing a run of more combining marks than
# this reorders the run in time that grows with its square (a task of 200 KB of accents
# took 27 s). No word holds as many; the marks past it are dropped before normalizing.
_MAX_NONSTARTERS = 30
_LONG_NON_ASCII_RE = re.compile(r"[^\x00-\x7f]{%d,}" % (_MAX_NONSTARTERS + 1))
# Characters of combining class 0 whose compatibility decomposition starts with a mark.
_MARK_LED = frozenset("\u0344\u0f73\u0f75\u0f81\uff9e\uff9f")


def _nfkc(text: str) -> str:
    """NFKC of ``text``, every run of combining marks cut to the stream-safe 30 first:
    linear in the text's length whatever it holds."""
    if _LONG_NON_ASCII_RE.search(text) is not None:
        text = _LONG_NON_ASCII_RE.sub(_marks_capped, text)
    return unicodedata.normalize("NFKC", text)


def _marks_capped(m: "re.Match[str]") -> str:
    out = []
    run = 0
    combining = unicodedata.combining
    for ch in m.group():
        if combining(ch) or ch in _MARK_LED:
            run += 1
            if run > _MAX_NONSTARTERS:
                continue
        else:
            run = 0
        out.append(ch)
    return "".join(out)


def _describe(value: object) -> str:
    """A short JSON-like rendering of a bad value for an error message."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        shown = value if len(value) <= _SHOWN_CHARS else value[:_SHOWN_CHARS - 3] + "..."
        shown = shown.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + _printable(shown.replace("\n", "\\n").replace("\r", "\\r")) + '"'
    if not isinstance(value, (int, float)):  # (not JSON: a caller's object, say what it is)
        name = type(value).__name__
        return f"{'an' if name[:1].lower() in 'aeiou' else 'a'} {name}"
    if isinstance(value, float) and not math.isfinite(value):  # as JSON readers write them
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    try:
        shown = str(value)
    except ValueError:  # an integer beyond Python's digit limit for str()
        return "a number too long to show"
    return shown if len(shown) <= _SHOWN_CHARS else shown[:_SHOWN_CHARS - 3] + "..."


def _printable(text: str) -> str:
    """``text`` with control characters (C0, DEL, C1) and bidi overrides escaped as
    ``\\xNN``/``\\uNNNN``, so that input cannot steer the terminal it is shown on."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if code < 0x20 or 0x7f <= code < 0xa0 or ch in _BIDI_CONTROLS:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def _as_list(value: object, where: str) -> list[str]:
    """tags / related / seen_ids as a list of non-empty strings.

    Accepts a list, or a comma- or newline-separated string; a lone number becomes one
    item; anything else (null, an object) is no items. An item of a list is a string, a
    finite number (its decimal string) or null (no item): anything else (a boolean,
    ``NaN``, an object, a list) is refused, as it is for an ``id``, not passed on as
    Python spells it (``True``, ``nan``) for a caller to follow.
    """
    if isinstance(value, str):
        parts = value.replace("\n", ",").split(",")
    elif isinstance(value, (list, tuple, set, frozenset)):
        if isinstance(value, (set, frozenset)):  # (in an order of their own: messages name the same item)
            value = sorted(value, key=lambda v: (type(v).__name__, repr(v)))
        parts = [_id_text(v, f"{where}[{j}]") for j, v in enumerate(value) if v is not None]
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        parts = [_id_text(value, where)]  # (as an item of a list: 7.0 is "7", NaN refused)
    else:
        return []
    return [part for part in map(str.strip, parts) if part]


def _item_list(value: object, index: int, field: str) -> list[str]:
    """``results[index].field`` as _as_list reads it; the message's place is spelled only
    when it is needed (20,000 of them were a tenth of parsing 10,000 results)."""
    if type(value) is list:
        try:  # the common case, a list of strings, in one C-level pass
            return [part for part in map(str.strip, value) if part]
        except TypeError:
            pass
    elif value is None:
        return []
    return _as_list(value, f"results[{index}].{field}")


def _id_text(value: object, where: str, expected: str = "a string or a finite number") -> str:
    """An id, a list item or a keyword as a string: a string as it is, an int or a finite
    float as its decimal string (ValueError past Python's digit limit: compute_hints says
    so); anything else (a boolean, NaN, an object, a list) is refused, naming ``where``."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        # (JSON has one kind of number: 7.0 is the id 7, as a caller in any language
        # writes it, 1e-07 is 0.0000001 and 1e23 is 1 and 23 zeros.)
        if value == 0:
            return "0"  # (-0.0 too)
        from decimal import Decimal  # (only for a float id: importing hints stays light)
        exact = Decimal(repr(value))  # the shortest decimal that reads back as value
        return format(exact.to_integral_value() if value.is_integer() else exact, "f")
    raise HintsInputError(f"{where}: expected {expected}, got {_describe(value)}")


def _as_text(value: object) -> str:
    """A free-text field as a string: a number as written, a list's strings and numbers
    joined with spaces; nothing for a boolean, an object or a nested list (Python's
    spelling of them, ``True`` or ``{'k': None}``, is no text of the result: it made the
    keywords ``true`` and ``none`` look found)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(filter(None, map(_scalar_text, value)))
    return _scalar_text(value)


def _scalar_text(value: object) -> str:
    """A string, or a number as written; '' for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


# A number as JSON and people write it: ASCII digits, one point, an exponent. float()
# also takes ``0_9`` (9.0), Arabic-Indic digits and ``nan``, which no caller means.
# The whitespace JSON allows around a value.
_JSON_SPACE = " \t\r\n"


_DECIMAL_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _decimal(text: str) -> float:
    """``text`` as a number written the way JSON writes one (``-0`` is 0); a ValueError
    saying what was expected otherwise (``finite`` for the words float() reads as
    infinite or not a number)."""
    bare = text.strip(_JSON_SPACE)
    if not _DECIMAL_RE.fullmatch(bare):
        infinite = bare.lower().lstrip("+-") in ("inf", "infinity", "nan")
        raise ValueError("expected a finite number" if infinite else "expected a number")
    return float(bare) + 0.0


def _as_score(value: object, where: str) -> float:
    """A score as a finite float; missing or null is 0.0, numeric strings are accepted."""
    if value is None:
        return 0.0
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            score = float(value)
        except OverflowError:  # an integer of hundreds of digits
            raise HintsInputError(f"{where}: expected a finite number, got {_describe(value)}") from None
    elif isinstance(value, str):
        try:
            score = _decimal(value)
        except ValueError as exc:
            raise HintsInputError(f"{where}: {exc}, got {_describe(value)}") from None
    else:
        raise HintsInputError(f"{where}: expected a number, got {_describe(value)}")
    if not math.isfinite(score):
        raise HintsInputError(f"{where}: expected a finite number, got {_describe(value)}")
    return score + 0.0  # (-0.0 is 0)


def _as_id(value: object, index: int) -> str:
    """A result id that is not a string: missing or null is "", a finite number its
    decimal string; anything else (NaN, a boolean, an object, a list) is refused."""
    return "" if value is None else _id_text(value, f"results[{index}].id")


def _parse_results(results: object) -> _Results:
    """Parse result items tolerantly; raise HintsInputError for what cannot be read."""
    if results is None:
        results = []
    if not isinstance(results, (list, tuple)):
        raise HintsInputError(f"results: expected a list, got {_describe(results)}")
    ids, scores, tags, related, haystacks = [], [], [], [], []
    for index, raw in enumerate(results):  # the hot loop: common cases are tested first
        if not isinstance(raw, dict):
            raise HintsInputError(f"results[{index}]: expected an object, got {_describe(raw)}")
        get = raw.get
        ident = get("id")
        ids.append(ident.strip() if type(ident) is str else _as_id(ident, index))
        score = get("score")
        if type(score) is not float or score - score != 0.0:  # not already a finite float
            score = _as_score(score, f"results[{index}].score")
        scores.append(score)
        item_tags = _item_list(get("tags"), index, "tags")
        tags.append(item_tags)
        related.append(_item_list(get("related"), index, "related"))
        text = get("text")
        if type(text) is not str:
            text = "" if text is None else _as_text(text)
        if not text:
            title, summary = get("title"), get("summary")
            text = " ".join((title if type(title) is str else _as_text(title),
                             summary if type(summary) is str else _as_text(summary),
                             " ".join(item_tags)))
        haystacks.append(text)
    return _Results(tuple(ids), tuple(scores), tuple(tags), tuple(related), tuple(haystacks))


def _parse_keywords(keywords: object) -> list[str]:
    """Keywords as a list of non-blank strings, each once (in first-seen order) and at
    most MAX_KEYWORDS of them; a plain string is split on whitespace."""
    if keywords is None:
        return []
    if isinstance(keywords, str):
        return _capped_words(keywords.split())
    if not isinstance(keywords, (list, tuple)):
        raise HintsInputError(f"keywords: expected a list of strings, got {_describe(keywords)}")
    words = []
    for i, value in enumerate(keywords):
        word = "" if value is None else _id_text(value, f"keywords[{i}]", "a string").strip()
        if word:
            words.append(word)
    return _capped_words(words)


def _capped_words(words: list[str]) -> list[str]:
    """``words`` without repeats (folded as every comparison here folds them: ``Token``,
    ``TOKEN`` and ``token`` are one keyword, spelled as first given), the first
    MAX_KEYWORDS kept: a query, not a document (ten million words took minutes, each
    looked up for synonyms and gaps)."""
    seen: dict[str, str] = {}
    for word in words:
        key = _norm(word)
        if key not in seen:
            seen[key] = word
            if len(seen) > MAX_KEYWORDS:
                break
    return list(seen.values())[:MAX_KEYWORDS]


def _past_cap(words: list[str]) -> bool:
    """Whether ``words`` hold more than MAX_KEYWORDS distinct keywords (the CLI says so)."""
    seen: set[str] = set()
    for word in words:
        word = word.strip()
        if word:
            seen.add(_norm(word))
            if len(seen) > MAX_KEYWORDS:
                return True
    return False


def _parse_round(value: object, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise HintsInputError(f"{where}: expected a positive integer, got {_describe(value)}")
    return value


def _parse_seen(value: object) -> frozenset[str] | None:
    if value is None:
        return None
    if not isinstance(value, (str, list, tuple, set, frozenset)):
        raise HintsInputError(f"seen_ids: expected a list of ids, got {_describe(value)}")
    return frozenset(_as_list(value, "seen_ids"))


# ---------------------------------------------------------------------------
# The formulas, on parsed items


def _related(parsed: _Results, seen: frozenset[str]) -> list[str]:
    result_ids = set(parsed.ids)
    out: list[str] = []
    taken: set[str] = set()
    for refs in parsed.related:
        for ref in refs:
            if ref not in result_ids and ref not in seen and ref not in taken:
                taken.add(ref)
                out.append(ref)
    return out


def _suggest(parsed: _Results, keywords: list[str], min_score: float,
             max_queries: int) -> list[str]:
    in_query = {_norm(k) for k in keywords}
    in_query.add(_norm(" ".join(keywords)))
    counts: dict[str, int] = {}
    spelling: dict[str, str] = {}  # first-seen spelling of each folded tag
    folded: dict[str, str] = {}  # tags repeat across results: fold each spelling once
    for score, tags in zip(parsed.scores, parsed.tags):
        if score < min_score:
            continue
        for tag in tags:
            key = folded.get(tag)
            if key is None:
                key = folded[tag] = _norm(tag)
            if key in in_query:
                continue
            if key not in counts:
                counts[key] = 0
                spelling[key] = tag
            counts[key] += 1
    # sorted() is stable, so equal counts keep first-seen order.
    ranked = sorted(counts, key=lambda key: -counts[key])
    base = " ".join(keywords)
    out: list[str] = []
    for key in ranked:
        if len(out) >= max_queries:
            break
        query = f"{base} {spelling[key]}" if base else spelling[key]
        if query not in out:
            out.append(query)
    return out


def _gaps(keywords: list[str], parsed: _Results) -> list[str]:
    if not keywords:
        return []
    # One folded haystack for all items: one C-level search per keyword instead of a
    # Python loop over items. A character no item and no keyword holds separates the
    # items (NUL unless one holds it), so no keyword can match across two of them.
    folded_items = list(map(_norm, parsed.haystacks))
    folded_keywords = list(map(_norm, keywords))
    joined = "\0".join(folded_items) if folded_items else None
    if joined is not None and (joined.count("\0") >= len(folded_items) or any("\0" in k for k in folded_keywords)):
        sep = _separator(folded_items, folded_keywords)  # (an item or a keyword holds NUL)
        joined = sep.join(folded_items) if sep is not None else None
    budget = _MAX_GAP_SCAN_CHARS
    known: dict[str, bool] = {}  # folded keyword -> found
    gaps = []
    for keyword, folded in zip(keywords, folded_keywords):
        found = known.get(folded)
        if found is None:
            if not folded_items:
                found = False
            else:
                budget -= len(joined) if joined is not None \
                    else sum(map(len, folded_items)) + _ITEM_SCAN_COST * len(folded_items)
                if budget < 0:
                    break  # past the scan budget: the remaining keywords are not judged
                found = folded in joined if joined is not None else any(folded in item for item in folded_items)
            known[folded] = found
        if not found:
            gaps.append(keyword)
    return gaps


# Characters that may separate the items of _gaps' haystack: NUL, the other controls, and
# the private use area (an input holding all of them is searched item by item, each item
# charged to the scan budget as this many characters: a Python-level step, not a C one).
_ITEM_SCAN_COST = 100
_SEPARATORS = "\0" + "".join(map(chr, range(1, 32))) + "".join(map(chr, range(0xE000, 0xF900)))


def _separator(items: list[str], keywords: list[str]) -> str | None:
    """The first of _SEPARATORS that neither the items nor the keywords hold."""
    used: set[str] = set()
    for text in (*items, *keywords):
        used.update(text)
    return next((c for c in _SEPARATORS if c not in used), None)


def _new_ids(parsed: _Results, seen: frozenset[str]) -> list[str]:
    out: list[str] = []
    taken: set[str] = set()
    for ident in parsed.ids:
        if ident and ident not in seen and ident not in taken:
            taken.add(ident)
            out.append(ident)
    return out


# ---------------------------------------------------------------------------
# Public helpers (the seed's names and signatures)


def collect_related_ids(results: list[dict], *, seen_ids: object = None) -> list[str]:
    """Related references worth following: every ``related`` entry that is not the id of a
    result (nor one of ``seen_ids``), in first-seen order, without repeats."""
    return _related(_parse_results(results), _parse_seen(seen_ids) or frozenset())


def suggest_followup_queries(results: list[dict], keywords: list[str],
                             min_score: float = MIN_SUGGEST_SCORE,
                             max_queries: int = MAX_SUGGESTED_QUERIES) -> list[str]:
    """Refinement queries from the tags of results scoring at least ``min_score``.

    Tags already in the query are skipped (NFKC + casefold comparison); the rest are
    ranked by how often they occur, ties in first-seen order, and each becomes
    ``"<keywords joined by spaces> <tag>"``; at most ``max_queries``, no repeats.
    """
    threshold = MIN_SUGGEST_SCORE if min_score is None else _as_score(min_score, "min_score")
    return _suggest(_parse_results(results), _parse_keywords(keywords), threshold, max_queries)


def gap_keywords(keywords: list[str], results: list[dict]) -> list[str]:
    """Query words found in no result: each keyword is looked for, as a folded substring,
    in each result's ``text`` or, where a result has none, its title + summary + tags."""
    return _gaps(_parse_keywords(keywords), _parse_results(results))


def suggest_broaden_queries(keywords: list[str], gaps: list[str],
                            max_queries: int = MAX_BROADEN_QUERIES) -> list[str]:
    """Broader queries for when the gap words found nothing.

    In order: the query without its gap words; the query with a gap word (or a run of
    adjacent gap words, so "rate limit" is one phrase) replaced by each of its
    programming synonyms, interleaved across gaps; and, when every keyword is a gap, the
    query with one keyword dropped. Synonyms that merely contain the gap word are skipped
    (they cannot match where the gap word did not). At most ``max_queries``, built
    lazily (at most _MAX_BROADEN_ATTEMPTS candidates are looked at).
    """
    words = _parse_keywords(keywords)
    gap_set = {_norm(g) for g in _parse_keywords(gaps)}
    is_gap = [_norm(w) in gap_set for w in words]
    if not any(is_gap) or max_queries < 1:
        return []
    out: list[str] = []
    folded_seen = {_norm(" ".join(words))}
    for attempt, candidate in enumerate(_broaden_candidates(words, is_gap)):
        if attempt >= _MAX_BROADEN_ATTEMPTS:
            break
        folded = _norm(candidate)
        if candidate and folded not in folded_seen:
            folded_seen.add(folded)
            out.append(candidate)
            if len(out) >= max_queries:
                break
    return out


def _broaden_candidates(words: list[str], is_gap: list[bool]):
    """suggest_broaden_queries' candidates in order, one at a time."""
    kept = [w for w, gap in zip(words, is_gap) if not gap]
    if kept:
        yield " ".join(kept)
    replacements = synonym_runs(words, is_gap)
    for rank in range(max((len(r[2]) for r in replacements), default=0)):
        for start, length, synonyms in replacements:
            if rank < len(synonyms):
                yield " ".join(words[:start] + [synonyms[rank]] + words[start + length:])
    if not kept and len(words) > 1:
        for i in range(len(words)):
            yield " ".join(words[:i] + words[i + 1:])


def synonym_runs(words: Sequence[str], eligible: Optional[Sequence[bool]] = None,
                 fallback: Optional[Callable[[str], str]] = None) -> list[tuple[int, int, list[str]]]:
    """The one phrase lookup of the synonym table, shared with the retriever's REFINE.

    Returns (start, length, synonyms) for each run of adjacent eligible words (all, when
    ``eligible`` is None) that the table knows, the longest phrase (up to _SYNONYM_SPAN
    words) first at each position, left to right; words a phrase covered are not looked
    up again. Synonyms that merely contain the phrase are left out (they cannot match
    where it did not). ``fallback`` maps a phrase the table does not know to a second
    form to try (the retriever passes its base form: "limiting" -> "limit").
    """
    # (A word that is no string is never looked up; flags missing for the last words
    # leave them out, surplus ones are ignored.)
    flags = [True] * len(words) if eligible is None else list(eligible)[:len(words)]
    flags += [False] * (len(words) - len(flags))
    flags = [bool(f) and isinstance(w, str) for f, w in zip(flags, words)]
    found = []
    i = 0
    while i < len(words):
        if not flags[i]:
            i += 1
            continue
        for length in range(_SYNONYM_SPAN, 0, -1):
            if i + length > len(words) or not all(flags[i:i + length]):
                continue
            phrase = " ".join(words[i:i + length])
            synonyms = _table_synonyms(phrase)
            if not synonyms and fallback is not None:
                synonyms = _table_synonyms(fallback(phrase))
            if synonyms:
                found.append((i, length, synonyms))
                i += length
                break
        else:
            i += 1
    return found


# Lookups already made, per phrase and per term: a long query repeats its words (a
# pasted log, "rate limit" a thousand times), and each lookup folds every synonym of the
# phrase. Bounded: emptied when full.
_MEMO_MAX = 65536
_TABLE_MEMO: dict[str, tuple[str, ...]] = {}
_KEY_MEMO: dict[str, str] = {}


def _table_synonyms(phrase: str) -> list[str]:
    """The table's synonyms of ``phrase`` that do not merely contain it."""
    if not phrase:
        return []
    found = _TABLE_MEMO.get(phrase)
    if found is None:
        key = _synonym_key(phrase)
        compact = key.replace(" ", "")
        found = tuple(s for s in synonyms_for(phrase)
                      if key not in _synonym_key(s) and compact not in _synonym_key(s).replace(" ", ""))
        if len(_TABLE_MEMO) >= _MEMO_MAX:
            _TABLE_MEMO.clear()
        _TABLE_MEMO[phrase] = found
    return list(found)


# ---------------------------------------------------------------------------
# Synonyms (data: agentic_search_skill/data/synonyms.json, shared with the retriever)


def _synonym_key(term: str) -> str:
    """Lookup form of a term: camelCase split, NFKC + casefold, ``_``/``-``/``.`` and runs
    of spaces collapsed to one space, so rateLimit, rate_limit and "Rate  Limit" agree."""
    known = _KEY_MEMO.get(term)
    if known is not None:
        return known
    chars: list[str] = []
    previous = ""
    for ch in term:
        if ch.isupper() and previous.islower():
            chars.append(" ")
        chars.append(ch)
        previous = ch
    folded = _norm("".join(chars))
    for separator in "_-./":
        folded = folded.replace(separator, " ")
    key = " ".join(folded.split())
    if len(_KEY_MEMO) >= _MEMO_MAX:
        _KEY_MEMO.clear()
    _KEY_MEMO[term] = key
    return key


def _load_synonyms(path: str) -> tuple[dict[str, tuple[int, ...]], tuple[tuple[str, ...], ...]]:
    """Read the synonym table; any problem with the file gives an empty table.

    Format: ``{"groups": [["rate limit", "throttle", ...], ...]}``; malformed groups and
    non-string terms are skipped. Returns (key -> group indexes, groups).
    """
    import json  # only the first synonyms_for call pays for this

    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}, ()
    raw_groups = data.get("groups") if isinstance(data, dict) else None
    if not isinstance(raw_groups, list):
        return {}, ()
    groups: list[tuple[str, ...]] = []
    index: dict[str, list[int]] = {}
    for raw in raw_groups:
        if not isinstance(raw, list):
            continue
        terms = tuple(t.strip() for t in raw if isinstance(t, str) and t.strip())
        if len(terms) < 2:
            continue
        number = len(groups)
        groups.append(terms)
        for term in terms:
            key = _synonym_key(term)
            for form in (key, key.replace(" ", "")):
                slots = index.setdefault(form, [])
                if number not in slots:
                    slots.append(number)
    return {k: tuple(v) for k, v in index.items()}, tuple(groups)


def synonyms_for(term: str) -> list[str]:
    """Common programming synonyms of a word or phrase, e.g. "rate limit" -> ["ratelimit",
    "throttle", ...]; [] when the term is unknown.

    Matching ignores case, width, camelCase and ``_``/``-`` separators and spaces
    ("rateLimit", "rate_limit" and "ratelimit" all find the rate-limit group). The result
    lists the other members of every group holding the term, in table order, without
    the term itself (other spellings such as "ratelimit" are kept). The table,
    ``agentic_search_skill/data/synonyms.json``, is read on the first call and cached; if it
    cannot be read the table is empty. Never raises.
    """
    global _synonym_table
    if _synonym_table is None:
        try:
            _synonym_table = _load_synonyms(_SYNONYMS_PATH)
        except Exception:  # the contract is "never raise"; a broken table is no table
            _synonym_table = ({}, ())
    index, groups = _synonym_table
    if not isinstance(term, str):
        return []
    key = _synonym_key(term)
    if not key:
        return []
    numbers = index.get(key, ()) + index.get(key.replace(" ", ""), ())
    out: list[str] = []
    taken = {key}
    for number in sorted(set(numbers)):
        for member in groups[number]:
            member_key = _synonym_key(member)
            if member_key not in taken:
                taken.add(member_key)
                out.append(member)
    return out


# ---------------------------------------------------------------------------
# The hints


def compute_hints(results: list[dict], keywords: list[str],
                  sufficient_score: float = SUFFICIENT_SCORE, *,
                  seen_ids: object = None, round: int | None = None,
                  max_rounds: int | None = None) -> dict:
    """The hints for one search step.

    Args:
        results: normalized result items (any order).
        keywords: the query words (a plain string is split on whitespace).
        sufficient_score: the threshold for ``sufficient``.
        seen_ids: ids the loop has already seen in earlier rounds (optional).
        round, max_rounds: this round (1-based) and the loop's limit (optional).

    Returns a dict with, in this order, the seed's seven keys ``sufficient``,
    ``max_score``, ``result_count``, ``next_action``, ``suggested_queries``,
    ``related_ids``, ``gap_keywords``, then ``new_ids``, ``stop_reason`` and
    ``broaden_queries``. ``next_action`` is, in this order: ``broaden`` without results,
    ``refine`` when the top score is below the threshold, ``expand`` when an unseen
    related id exists, else ``synthesize``. The convergence rules then turn a
    non-synthesize answer into ``synthesize`` when the round brought no new id
    (``stop_reason`` "saturated") or is the last one ("max_rounds"); a plain synthesize
    has ``stop_reason`` "sufficient"; otherwise ``stop_reason`` is None.

    Raises:
        HintsInputError: an item is not an object, a score is not a number, or an
            argument has the wrong type; the message says where.
    """
    try:
        parsed = _parse_results(results)
        words = _parse_keywords(keywords)
        seen = _parse_seen(seen_ids)
    except HintsInputError:
        raise
    except ValueError:  # str() of an integer past Python's digit limit, as a title or a tag
        raise HintsInputError("input: an integer of more digits than Python turns into text "
                              "(sys.get_int_max_str_digits()); send it as a string") from None
    this_round = _parse_round(round, "round")
    limit = _parse_round(max_rounds, "max_rounds")
    threshold = SUFFICIENT_SCORE if sufficient_score is None else _as_score(
        sufficient_score, "sufficient_score")

    count = len(parsed.ids)
    top = max(parsed.scores, default=0.0)
    related = _related(parsed, seen or frozenset())
    gaps = _gaps(words, parsed)
    new_ids = _new_ids(parsed, seen or frozenset())

    if count == 0:
        action = "broaden"
    elif top < threshold:
        action = "refine"
    elif related:
        action = "expand"
    else:
        action = "synthesize"

    stop_reason = None
    if action == "synthesize":
        stop_reason = "sufficient"
    elif seen is not None and count and not new_ids and any(parsed.ids):
        action, stop_reason = "synthesize", "saturated"
    elif this_round is not None and limit is not None and this_round >= limit:
        action, stop_reason = "synthesize", "max_rounds"

    return {
        "sufficient": count > 0 and top >= threshold,
        "max_score": _builtin_round(top, 3),
        "result_count": count,
        "next_action": action,
        "suggested_queries": _suggest(parsed, words, MIN_SUGGEST_SCORE, MAX_SUGGESTED_QUERIES),
        "related_ids": related,
        "gap_keywords": gaps,
        "new_ids": new_ids,
        "stop_reason": stop_reason,
        "broaden_queries": suggest_broaden_queries(words, gaps) if gaps else [],
    }


_ACTION_LABELS = {
    "broaden": "broaden - nothing found: drop gap words or try synonyms (broaden_queries)",
    "refine": "refine - weak matches only: search again with a suggested query",
    "expand": "expand - good matches with unseen references: follow related_ids",
    "synthesize": "synthesize - stop searching and answer from the results",
}


def format_hints(hints: dict) -> str:
    """The hints as a few lines of text for people (keys that are absent or empty are
    left out, so the seed's seven-key dicts format too). TypeError for anything but a dict."""
    if not isinstance(hints, dict):
        raise TypeError(f"format_hints: expected the dict compute_hints returns, got {_describe(hints)}")
    sufficient = "true" if hints.get("sufficient") else "false"
    action = _printable(_str(hints.get("next_action", "")))
    lines = [
        "agentic search hints",
        f"  sufficient: {sufficient} (max_score={_str(hints.get('max_score', 0.0))}, "
        f"results={_str(hints.get('result_count', 0))})",
        f"  next_action: {_ACTION_LABELS.get(action, action)}",
    ]
    if hints.get("stop_reason"):
        lines.append(f"  stop_reason: {_printable(_str(hints['stop_reason']))}")
    for key in ("suggested_queries", "broaden_queries"):
        if hints.get(key):
            lines.append(f"  {key}:")
            lines.extend(f"    - {_printable(_str(query))}" for query in _items(hints[key]))
    for key in ("related_ids", "gap_keywords", "new_ids"):
        if hints.get(key):
            lines.append(f"  {key}: {_printable(', '.join(_str(v) for v in _items(hints[key])))}")
    return "\n".join(lines)


def _str(value: object) -> str:
    """``str(value)``, or a note for an integer past Python's digit limit (str() refuses it)."""
    try:
        return str(value)
    except ValueError:
        return "(an integer too long to print)"


def _items(value: object) -> list:
    """A list-valued key of a hints dict as a list: a lone string or number is one item
    (not one item per character); a set's items in sorted order, a dict's keys."""
    if isinstance(value, (str, bytes, int, float)) or value is None:
        return [value]
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    try:
        return list(value)  # type: ignore[call-overload]
    except TypeError:
        return [value]


# ---------------------------------------------------------------------------
# CLI

_HELP_EPILOG = """\
input (a JSON object):
  keywords     list of strings; when absent, "query" (a string) is split on whitespace
  query        string, used only when "keywords" is absent
  results      list of result items: {"id" (string or number), "title", "score"} required,
               "summary", "tags", "related", "text" optional; tags/related may be
               a comma- or newline-separated string; score may be a numeric string
  seen_ids     optional: ids seen in earlier rounds (list or comma-separated string)
  round        optional: this round, 1-based
  max_rounds   optional: the loop's round limit

output (a JSON object, keys in this order):
  sufficient, max_score, result_count, next_action (broaden|refine|expand|synthesize),
  suggested_queries, related_ids, gap_keywords, new_ids,
  stop_reason (sufficient|saturated|max_rounds|null), broaden_queries

exit codes:
  0  hints written
  1  bad input: unreadable file, empty input, malformed JSON, wrong types
     (one line on stderr saying what and where, nothing on stdout)
  2  usage error

example:
  echo '{"keywords": ["jwt"], "results": [{"id": "a", "title": "JWT", "score": 0.9}]}' \\
    | python3 scripts/hints.py --text
"""


def _finite_float(text: str) -> float:
    import argparse

    try:
        value = _decimal(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{exc}, got {_describe(text)}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {_describe(text)}")
    return value


def _parser(**kwargs):
    """An argparse parser that takes no abbreviated flags (``--stat`` is not ``--state``)
    and reports a usage error in one line, ``PROG: error: WHAT (see --help)``, exit 2
    (retrieve_loop.py's too)."""
    import argparse

    class OneLineParser(argparse.ArgumentParser):
        def error(self, message: str):  # type: ignore[override]
            _say(f"{self.prog}: error: {message} (see --help)")
            raise SystemExit(2)

    return OneLineParser(allow_abbrev=False, **kwargs)


def _build_parser():
    import argparse

    parser = _parser(
        prog="hints.py",
        description="Compute agentic-search hints (the next move) from normalized search results.",
        epilog=_HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--input", metavar="FILE",
                        help="read the input JSON from FILE instead of stdin ('-': stdin)")
    parser.add_argument("--sufficient-score", metavar="X", type=_finite_float,
                        default=SUFFICIENT_SCORE,
                        help=f"threshold for 'sufficient' (default: {SUFFICIENT_SCORE})")
    parser.add_argument("--text", action="store_true",
                        help="print a human-readable summary instead of JSON")
    return parser


def _read_input(path: str | None) -> str:
    """The CLI input's text: stdin (no --input, or ``--input -``) or a regular file, at
    most MAX_INPUT_BYTES; HintsInputError otherwise (a FIFO or device is never read)."""
    if path is None or path == "-":
        where = "input" if path is None else "--input -"
        try:
            data = _read_stdin(MAX_INPUT_BYTES + 1)
        except (OSError, ValueError) as error:
            raise HintsInputError(f"{where}: cannot read: {getattr(error, 'strerror', None) or error}") from None
    else:
        where = f"--input {path}"
        data = _read_regular(path, where)
    if len(data) > MAX_INPUT_BYTES:
        raise HintsInputError(f"{where}: larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB; "
                              "not a result list")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise HintsInputError(f"{where}: not valid UTF-8 (byte {error.start})") from None
    if not text.strip():
        raise HintsInputError(f"{where}: empty; expected a JSON object")
    return text


def _read_stdin(limit: int) -> bytes:
    """At most ``limit`` bytes of stdin, to its end. A pipe its writer left non-blocking
    is waited on piece by piece, as a blocking read would, never cut at what had arrived."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # (a replaced sys.stdin with no descriptor)
        return sys.stdin.read(limit).encode("utf-8", "surrogateescape")
    return _read_to_end(fd, limit)


def _read_to_end(fd: int, limit: int, wait: bool = True) -> bytes:
    """At most ``limit`` bytes of the open descriptor ``fd``, to its end (the retriever's
    too: fsafe.read_stream). A descriptor left non-blocking is read as a blocking one
    would be, waiting for each next piece until the writer closes; with ``wait`` false
    such a read raises BlockingIOError instead."""
    parts: list[bytes] = []
    left = limit
    while left > 0:
        try:
            piece = os.read(fd, min(left, 1 << 20))
        except BlockingIOError:
            if not wait:
                raise
            import select  # (only here: most reads never need it)
            select.select([fd], [], [])
            continue
        except InterruptedError:
            continue
        if not piece:
            break
        parts.append(piece)
        left -= len(piece)
    return b"".join(parts)


def _read_regular(path: str, where: str) -> bytes:
    """At most MAX_INPUT_BYTES + 1 bytes of the regular file ``path``; opened without
    blocking, so a FIFO with no writer is refused, not waited on."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise HintsInputError(f"{where}: cannot read: {error.strerror or error}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise HintsInputError(f"{where}: cannot read: Is a directory")
        raise HintsInputError(f"{where}: not a regular file (a FIFO or device); "
                              "pass a file, or - for stdin")
    if os.fstat(fd).st_size > MAX_INPUT_BYTES:  # refused before a byte is read
        os.close(fd)
        raise HintsInputError(f"{where}: larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB; "
                              "not a result list")
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(MAX_INPUT_BYTES + 1)
        except OSError as error:
            raise HintsInputError(f"{where}: cannot read: {error.strerror or error}") from None
    if data is None:  # a file that says it is regular yet would block (``/proc/kmsg``)
        raise HintsInputError(f"{where}: would block (a kernel or device file); pass a file")
    return data


def _load_payload(text: str, where: str = "input") -> dict:
    """The JSON object of the CLI's input; ``where`` names it in errors (``--input F``)."""
    import json

    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        raise HintsInputError(
            f"{where}: malformed JSON at line {error.lineno} column {error.colno}: {error.msg}") from None
    except RecursionError:
        raise HintsInputError(f"{where}: JSON nested too deeply") from None
    except ValueError:  # an integer beyond Python's digit limit (int_max_str_digits)
        raise HintsInputError(f"{where}: a number with too many digits") from None
    if not isinstance(payload, dict):
        raise HintsInputError(f"{where}: expected a JSON object, got {_describe(payload)}")
    return payload


def _payload_keywords(payload: dict) -> list[str]:
    keywords = payload.get("keywords")
    if keywords is None:
        query = payload.get("query")
        if query is None:
            return []
        if not isinstance(query, str):
            raise HintsInputError(f"query: expected a string, got {_describe(query)}")
        return query.split()
    if not isinstance(keywords, list):
        raise HintsInputError(f"keywords: expected a list of strings, got {_describe(keywords)}")
    for i, keyword in enumerate(keywords):
        if not isinstance(keyword, str):
            raise HintsInputError(f"keywords[{i}]: expected a string, got {_describe(keyword)}")
    return keywords


def hints_from_payload(payload: dict, sufficient_score: float = SUFFICIENT_SCORE) -> dict:
    """compute_hints for a decoded CLI input object (validated strictly: keywords must be
    strings, results a list of objects); raises HintsInputError naming the field."""
    keywords = _payload_keywords(payload)
    results = payload.get("results")
    if results is not None and not isinstance(results, list):
        raise HintsInputError(f"results: expected a list, got {_describe(results)}")
    seen = payload.get("seen_ids")
    return compute_hints(results or [], keywords, sufficient_score, seen_ids=seen,
                         round=payload.get("round"), max_rounds=payload.get("max_rounds"))


def _write(text: str) -> None:
    """Write UTF-8 bytes whatever the locale (an ASCII-only stdout cannot break them);
    a lone surrogate from the input becomes its JSON escape (``\\ud800``)."""
    out = sys.stdout.buffer if hasattr(sys.stdout, "buffer") else None
    if out is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        out.write(text.encode("utf-8", "backslashreplace"))
        out.flush()


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 bad input, 2 usage)."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse has printed usage or help already
        return exit_.code if isinstance(exit_.code, int) else 2
    try:
        if args.input is None and sys.stdin is not None and sys.stdin.isatty():
            _say(parser.format_usage().rstrip("\n"))
            _say("hints.py: error: no input: pipe a JSON object on stdin or pass --input FILE")
            return 2
        if sys.stdin is None and args.input in (None, "-"):
            raise HintsInputError("input: no stdin; pass --input FILE")
        where = "input" if args.input in (None, "-") else f"--input {args.input}"
        payload = _load_payload(_read_input(args.input), where)
        results = payload.get("results")
        if isinstance(results, list) and len(results) > MAX_RESULTS:
            raise HintsInputError(f"{where}: results: {len(results)} items, more than {MAX_RESULTS:,}; "
                                  "pass the best ones")
        hints = hints_from_payload(payload, args.sufficient_score)
        beyond = _past_cap(_payload_keywords(payload))
    except MemoryError:
        _say("hints.py: error: input: too large to hold in memory; pass fewer or smaller results")
        return 1
    except HintsInputError as error:
        message = " ".join(str(error).splitlines())
        _say(f"hints.py: error: {message}")
        return 1
    if args.text:
        rendered = format_hints(hints) + "\n"
    else:
        import json

        rendered = json.dumps(hints, ensure_ascii=False, indent=2) + "\n"
    if sys.stdout is None:
        _say("hints.py: error: no stdout to write the hints to")
        return 1
    try:
        _write(rendered)
    except BrokenPipeError:
        # The reader has gone (e.g. `| head`): silence the interpreter's final flush.
        _silence_stdout()
    except OSError as error:  # /dev/full, a closed descriptor
        _say(f"hints.py: error: cannot write the hints: {error.strerror or error}")
        _silence_stdout()
        return 1
    if beyond:
        _say(f"hints.py: more than {MAX_KEYWORDS:,} distinct keywords: only the first {MAX_KEYWORDS:,} were read")
    return 0


def _say(line: str) -> None:
    """One line of diagnostics on stderr, best effort (retrieve_loop.py's too).

    A diagnostic never decides how a call ends: when stderr is closed, full or a pipe
    nobody reads, the line is dropped, stderr is pointed at the null device (so that
    neither a later line nor the interpreter's last flush fails again), and the call goes
    on - its answer on stdout, its exit code what it would be with a working stderr.
    """
    stream = sys.stderr
    if stream is None:
        return
    try:
        # one line whatever it quotes: a path with a newline or a control character
        # shows them escaped
        stream.write(_printable(line) + "\n")
        stream.flush()
    except (OSError, ValueError):
        _silence_stderr()


def _to_null(fd: int) -> bool:
    """Point descriptor ``fd`` at the null device; False when that cannot be done."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return False
    try:
        os.dup2(devnull, fd)
        return True
    except OSError:
        return False
    finally:
        os.close(devnull)


def _silence_stderr() -> None:
    """Point stderr (the descriptor and ``sys.stderr``) at the null device."""
    if _to_null(2):
        try:
            sys.stderr = open(2, "w", closefd=False)  # the process's stderr, kept open
        except OSError:
            pass


def _silence_stdout() -> None:
    """Point stdout at the null device so the interpreter's last flush cannot fail again
    (the reader has gone, ``| head``, or the output could not be written)."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return
    _to_null(fd)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
