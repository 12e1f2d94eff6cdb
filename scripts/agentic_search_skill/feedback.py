"""EVALUATE with the caller's judgements: relevance feedback (the seed's EVALUATE).

A file the caller judged (``--judge PATH=SCORE``) says more than any keyword: it is
evidence about every other file. Two kinds of feedback, each explained in the reasons
of the files it moves:

- **keywords** (Rocchio on the query): a keyword a file judged relevant holds is
  weighted up; a keyword that drove the score of a file judged irrelevant and that no
  relevant file holds is weighted down, by the share of that file's evidence it gave.
  Every file is scored again with the shifted weights (no file is read again).
- **structure** around a file judged relevant: files it imports or that import it,
  files beside it (less in a large directory), files that use a name the task quotes
  and it defines (its callers) or name its own type, and code files sharing its rare
  names (identifiers frequent in it and in few of the candidates) are lifted - only files of its role
  (source, test, ...) that match the task at all. A derived keyword (learned, synonym)
  that only files judged irrelevant hold is cut in full: it was learned from them.

Files judged irrelevant keep the caller's score (cycle.py applies it): they leave the
ranking's top, and what only they contained no longer carries other files.

Relevant is the rubric's high relevance (0.7) and above; irrelevant is below the
rubric's "related" (0.5); the scores between say neither.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Iterable, Mapping, Optional, Sequence

from . import imports as imports_mod
from . import lang
from .score import file_role
from .match import Document, FileMatch, defines, line_span
from .query import DERIVED_KINDS, NAMED_KINDS, Keyword, is_code_identifier, normalize
from .rubric import HIGH_RELEVANCE, RELATED
from .score import MAX_RELEVANCE, Corpus, Scored, Signal, SignalKind, raw_evidence

# A judged score at or above this is "relevant"; below NEGATIVE_BELOW "irrelevant".
POSITIVE_AT = HIGH_RELEVANCE
NEGATIVE_BELOW = RELATED
# A keyword a relevant file holds weighs up to this much more (scaled by the share of
# that file's evidence it gives): what the right file matched is what the task means.
POSITIVE_GAIN = 1.0
# A keyword that drove an irrelevant file's score (and that no relevant file holds)
# loses up to this share of its weight, by the share of that file's evidence it gave.
NEGATIVE_CUT = 0.8
# Lifts to a file's relevance (0..1) for its relation to a file judged relevant.
LIFT_IMPORTED = 0.5     # a judged file imports it: the fix crosses that edge
LIFT_IMPORTS = 0.4      # it imports a judged file
LIFT_SIBLING = 0.3      # the same directory: the same component
# ... in full for a directory of at most this many files, falling as SIBLING_FULL / n
# beyond: a small directory is one component, a large one many (on the dev splits a
# file beside a relevant one is gold about 5 times as often as others in directories
# of up to 12 files, 1.7 times in those of 13-30 and 1.3 times beyond).
SIBLING_FULL = 12
# A file judged irrelevant still held the task's words: the files around it are more
# likely than others (on the dev splits, of the files ranked 4-20 after three
# irrelevant reads, a gold file imports one of them about 1.6 times as often and is
# imported by one 2.5 times as often), with this share of the lifts above. Fitted on
# the reader's simulation of both dev splits: 0.4 lost 4 of 45 Python issues at 5
# reads, 0.1 loses none and gains one at 10 reads.
NEGATIVE_SHARE = 0.1
NEAR_MISS = "near-miss"
# A lift smaller than this (a file's lifts summed) moves it past no other worth reading:
# it is not given (and so not named as a reason). A near miss in a directory of 400
# files lifted each of them by 0.0009, and a trial's agent read "beside <the miss>"
# first in every reason.
MIN_LIFT = 0.005
_NEAR_MISS_NOTE = "(judged low; a fix often sits beside a miss)"
# Without judgements, the loop's own context files (the rubric's high relevance) stand
# in for relevant ones on a later cycle (pseudo-relevance feedback), with this share.
LEADER_SHARE = 0.6
# ... and a file lifted so stays behind the best file it was lifted from, closing at
# most GAP_SHARE of the gap to it.
BEHIND_LEADER = 0.99
GAP_SHARE = 0.8
LIFT_VOCAB = 0.4        # times the share of its rare names the file holds
# A name the task quotes that a file judged relevant defines: the files that use it are
# where a change to that definition lands next (its callers), as likely as an import.
LIFT_USES = 0.5
# Languages whose names are matched whatever their case (PHP's functions and classes) or
# not known: a user of a judged file's name there need not spell it as the file does.
CASE_BLIND = frozenset(("php", "any", "none"))
# The occurrences of a name in a judged file looked at for its definition's spelling.
DEFINITION_LINES = 200
DEFINITIONS_KEPT = 4
# A file that names a judged file's own type (its file name's stem, a code name of at least
# STEM_MIN_LEN characters: ``LinkReferenceDefinitionParser`` in ``ParagraphParser.java``)
# uses it, import or not - a Java or C# package's classes see each other without one: it
# is lifted as an importer is (LIFT_IMPORTS). A trial's judged parser left its caller,
# the fix's second file, 9th.
STEM_MIN_LEN = 6
# A module a judged file imports and calls on a line that holds a name the task quotes
# (``jQuery.cleanData( getAll( node ) )`` for a task about ``cleanData``) is where that
# line hands the work on: it gets the import lift in full, not shared among the judged
# file's other imports (a trial's jQuery fix was in ``getAll.js``, 73rd, which the judged
# ``manipulation.js`` imports among 13 others). Known by its file's stem, at least this
# long, called (``getAll(``) or used as a module (``getall.x``) on such a line.
# The lift is added whatever the file's own evidence (the module may hold none of the
# task's words: ``getAll.js``), to the rubric's "related" at most.
LIFT_CALLED = 0.3
CALLED_STEM_MIN_LEN = 4
MAX_TASK_LINES = 64
# ... of at most this many bytes (a longer one is minified code: each of the judged file's
# imports would be searched for along all of it).
MAX_TASK_LINE_BYTES = 4096
# ... a name held by at most this share of the matched files (or CALLED_NAME_MIN_HOLDERS).
CALLED_NAME_MAX_SHARE = 0.05
CALLED_NAME_MIN_HOLDERS = 3
# Lifts from several judged files add up to at most this.
LIFT_MAX = 1.0
# A lift amplifies a file's own evidence: it adds ``amount * score ** LIFT_DAMPING``, so a
# file that barely matches the task stays behind. A file that *every* file taken as
# relevant imports (judged relevant, or the loop's leading files; at least
# SHARED_MIN_ANCHORS of them) is their shared dependency: the fix's files all cross the
# edge to it, which is structural evidence of its own, so its own words count less
# (SHARED_DAMPING). The seed's first example: the JWT utilities, imported by the auth
# check, the token module and the session manager, with no word of "fix the auth token
# expiry bug" in them (0.60 -> 0.75 by the last cycle). On both dev splits a rule for a
# file two or more leading files lift (not all of them) cost an issue's gold file two
# places (bench/HISTORY.md); this one changes no dev ranking.
LIFT_DAMPING = 0.5
SHARED_DAMPING = 0.3
SHARED_MIN_ANCHORS = 2
# A relevant file's import neighbours share the import lift once there are more than
# this many of them (a hub's importers are no more likely than any file).
FAN_FULL = 4
# Candidates the structural feedback looks at: the best files of the cycle (every file
# the task matched would cost a parse and a scan each; the rest are far behind).
CANDIDATES = 150
# Rare names of a relevant file: the most frequent identifiers of at least this length
# (shorter ones are loop variables and keywords of the language)...
NAME_MIN_LEN = 5
NAME_CANDIDATES = 40
# ... held by at most this share of the candidates (else they are the codebase's
# common vocabulary, not this unit's), the best NAMES_KEPT of them by frequency x rarity.
NAME_MAX_SHARE = 0.2
NAMES_KEPT = 16
# A file must hold at least this many of them to count as sharing vocabulary.
NAME_MIN_SHARED = 2
# A reason names the judged file it learned from; keyword shifts smaller than this
# factor change (either way) are not worth a line.
SHIFT_SHOWN = 0.1

_IDENT_RE = re.compile(rb"[A-Za-z_][A-Za-z0-9_]{%d,}" % (NAME_MIN_LEN - 1))
_STEM_RE = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class Verdicts:
    """The caller's judgements, split by the rubric."""

    relevant: tuple[str, ...]
    irrelevant: tuple[str, ...]

    @property
    def empty(self) -> bool:
        return not self.relevant and not self.irrelevant


@dataclass(frozen=True)
class KeywordShift:
    """One keyword's weight change and the judged file behind it."""

    index: int        # the keyword's position in the query
    keyword: str
    factor: float     # new weight / old weight
    source: str       # the judged file that taught it


@dataclass(frozen=True)
class Lift:
    """A relevance lift for one file and why (its relation to a file judged relevant)."""

    rel: str
    amount: float
    why: str
    ceiling: float = MAX_RELEVANCE  # a lift from the loop's own best file never passes that file
    shared: bool = False            # every file taken as relevant imports it (SHARED_DAMPING)
    fixed: float = 0.0              # added whatever the file's own evidence (LIFT_CALLED)


@dataclass(frozen=True)
class Feedback:
    """What the judgements change this cycle."""

    verdicts: Verdicts
    shifts: tuple[KeywordShift, ...]
    lifts: tuple[Lift, ...]


def verdicts(judgements: Mapping[str, float]) -> Verdicts:
    """The judged files split into relevant and irrelevant, each sorted by path."""
    return Verdicts(tuple(sorted(r for r, v in judgements.items() if v >= POSITIVE_AT)),
                    tuple(sorted(r for r, v in judgements.items() if v < NEGATIVE_BELOW)))


def _parts(m: FileMatch, keywords: Sequence[Keyword], corpus: Corpus) -> dict[int, float]:
    """Each keyword's share of a file's evidence (what dropping it would cost)."""
    total, _cov, hits = raw_evidence(m, keywords, corpus)
    if total <= 0:
        return {}
    out = {}
    for i in hits:
        without = replace(m, counts=_zero(m.counts, i), in_path=_zero(m.in_path, i), defines=_zero(m.defines, i))
        out[i] = max(0.0, total - raw_evidence(without, keywords, corpus)[0]) / total
    return out


def _zero(values: tuple, i: int) -> tuple:
    return values[:i] + (type(values[i])(0),) + values[i + 1:]


def keyword_shifts(v: Verdicts, matches: Mapping[str, FileMatch], keywords: Sequence[Keyword],
                   corpus: Corpus) -> tuple[KeywordShift, ...]:
    """Rocchio on the query's weights: up for what relevant files hold, down for what
    drove irrelevant files alone."""
    gain: dict[int, tuple[float, str]] = {}
    cut: dict[int, tuple[float, str]] = {}
    for rel in v.relevant:
        m = matches.get(rel)
        for i, share in (_parts(m, keywords, corpus) if m else {}).items():
            if share > gain.get(i, (0.0, ""))[0]:
                gain[i] = (share, rel)
    holders = _holders(matches, len(keywords))
    for rel in v.irrelevant:
        m = matches.get(rel)
        for i, share in (_parts(m, keywords, corpus) if m else {}).items():
            # Only what is theirs: a keyword many other files hold is the task's, not
            # the irrelevant files' (it is cut by the irrelevant files' share of them).
            mine = sum(1 for r in v.irrelevant if _holds(matches.get(r), i)) / max(holders[i], 1)
            # A word the loop derived (learned from its own best files, or a synonym) that
            # a file judged irrelevant holds and no relevant file does was a guess from the
            # wrong files: it is cut in full, however many other files hold it.
            share = 1.0 if keywords[i].kind in DERIVED_KINDS else share * mine
            if i not in gain and share > cut.get(i, (0.0, ""))[0]:
                cut[i] = (share, rel)
    out = []
    for i in sorted(set(gain) | set(cut)):
        if i in gain:
            share, src = gain[i]
            factor = 1.0 + POSITIVE_GAIN * math.sqrt(share)
        else:
            share, src = cut[i]
            factor = 1.0 - NEGATIVE_CUT * share
        out.append(KeywordShift(i, keywords[i].text, round(factor, 4), src))
    return tuple(out)


def _holds(m: "FileMatch | None", i: int) -> bool:
    return m is not None and bool(m.counts[i] or m.in_path[i] or m.defines[i])


def _holders(matches: Mapping[str, FileMatch], n: int) -> list[int]:
    """Per keyword, how many files hold it (content, path or definition)."""
    out = [0] * n
    for m in matches.values():
        for i in range(n):
            if m.counts[i] or m.in_path[i] or m.defines[i]:
                out[i] += 1
    return out


def shifted(keywords: Sequence[Keyword], shifts: Sequence[KeywordShift]) -> tuple[Keyword, ...]:
    """The query's keywords with the shifted weights (same order, same needles)."""
    factor = {s.index: s.factor for s in shifts}
    return tuple(replace(kw, weight=kw.weight * factor[i]) if i in factor else kw for i, kw in enumerate(keywords))


def _fan(n: int) -> float:
    """The share of a relation's lift each of ``n`` neighbours gets: full up to
    FAN_FULL of them, then falling as FAN_FULL / n."""
    return min(1.0, FAN_FULL / max(n, 1))


def _names_of(doc: Document, known: set[str]) -> list[tuple[bytes, int]]:
    """The most frequent identifiers of a file (lower-cased), not already keywords."""
    freq: dict[bytes, int] = {}
    for tok in _IDENT_RE.findall(doc.data):
        low = tok.lower()
        freq[low] = freq.get(low, 0) + 1
    ranked = sorted(((t, n) for t, n in freq.items() if t.decode("ascii", "ignore") not in known),
                    key=lambda tn: (-tn[1], tn[0]))
    return ranked[:NAME_CANDIDATES]


def rare_names(doc: Document, pool: Sequence[Document], known: set[str]) -> tuple[tuple[bytes, float], ...]:
    """A relevant file's own names: frequent in it, held by few of the candidates;
    each with its rarity (idf over the candidates)."""
    n = max(len(pool), 1)
    out = []
    for tok, count in _names_of(doc, known):
        df = sum(1 for d in pool if d.rel != doc.rel and tok in d.low)
        if df / n > NAME_MAX_SHARE:
            continue
        rarity = math.log(1.0 + n / (1.0 + df))
        out.append((tok, rarity, (1.0 + math.log(count)) * rarity))
    out.sort(key=lambda t: (-t[2], t[0]))
    return tuple((t, r) for t, r, _v in out[:NAMES_KEPT])


def lifts(v: Verdicts, scored: Sequence[Scored], docs: Mapping[str, Document], rels: Sequence[str],
          keywords: Sequence[Keyword], leaders: Sequence[str] = (),
          matches: Mapping[str, FileMatch] = MappingProxyType({}),
          imports: Optional[imports_mod.TreeImports] = None) -> tuple[Lift, ...]:
    """Lifts for the candidates related to a judged file (best lift per file, its
    reason naming the judged file). ``leaders`` are the loop's own best files when the
    caller judged nothing (pseudo-relevance feedback): only their import edges count,
    with LEADER_SHARE of the lifts. ``imports`` is the cycle's import graph of ``rels``
    and ``docs`` when the caller shares one (else it is built here)."""
    if v.empty and not leaders:
        return ()
    judged = set(v.relevant) | set(v.irrelevant)
    cands = [s.rel for s in scored[:CANDIDATES] if s.rel not in judged]
    matched = {s.rel for s in scored if s.rel not in judged}
    graph_of = (imports if imports is not None else imports_mod.TreeImports(rels)).of
    pool = [docs[r] for r in cands if r in docs]
    known = {normalize(k.text) for k in keywords}
    best: dict[tuple[str, str], Lift] = {}  # (file, anchor) -> the strongest relation between them

    own = {s.rel: s.score for s in scored}
    roles = {s.rel: s.role for s in scored}

    def offer(rel: str, amount: float, why: str, fixed: float = 0.0) -> None:
        key = (rel, anchor)
        # A judgement lifts files of the judged file's own role (source to source, test
        # to test): the rest of a fix plays the part of the file judged, and a test or
        # a doc that imports or names it is its reader, not its twin.
        if label != "best file" and roles.get(rel, "source") != anchor_role:
            return
        if rel in matched and rel != anchor and amount > 0 and amount > best.get(key, Lift(rel, 0.0, "")).amount:
            ceiling = own.get(anchor, MAX_RELEVANCE) * BEHIND_LEADER if label == "best file" else MAX_RELEVANCE
            best[key] = Lift(rel, round(amount, 4), why, ceiling, fixed=fixed)

    graph = {r: graph_of(r, docs[r].head) for r in cands if r in docs}
    sizes: dict[str, int] = {}
    for r in rels:
        folder = r.rpartition("/")[0]
        sizes[folder] = sizes.get(folder, 0) + 1
    positive = list(v.relevant) + [r for r in leaders if r not in judged]
    # (A file judged low lifts its neighbours as a near miss: the reason says why, so that
    # "beside x (judged low)" is read neither as a reason to sink nor as the tool calling
    # the judged file close: a trial's agent read "beside near-miss x" so.)
    anchors = [(r, 1.0, "judged") for r in v.relevant] + [(r, NEGATIVE_SHARE, NEAR_MISS)
                                                          for r in v.irrelevant] \
        + [(r, LEADER_SHARE, "best file") for r in leaders if r not in judged]
    rare: Optional[tuple[tuple[int, str], ...]] = None
    for anchor, strength, label in anchors:
        doc = docs.get(anchor)
        if doc is None:
            continue
        anchor_role = roles[anchor] if anchor in roles else file_role(anchor)[0]
        # A hub (imported by many, importing many) says little about each neighbour.
        targets = [r for r in graph_of(anchor, doc.head) if r in matched]
        # (Go imports a package, a directory: the edge is to every file of it.)
        go = lang.language_of(anchor) is lang.GO
        if label == "judged" and rare is None:
            rare = _rare_named(keywords, matches)  # (once: every judged file reads the same names)
        called = _called_on_task_lines(anchor, doc, targets, matches, rare) if label == "judged" else {}
        who = f"{anchor} {_NEAR_MISS_NOTE}" if label == NEAR_MISS else f"{label} {anchor}"
        for r in targets:
            if r in called:
                offer(r, strength * LIFT_IMPORTED, f"called by {who} beside {called[r]}",
                      fixed=strength * LIFT_CALLED)
                continue
            offer(r, strength * LIFT_IMPORTED * _fan(len(targets)),
                  f"in a package {who} imports" if go else f"imported by {who}")
        importers = [r for r, out in graph.items() if anchor in out]
        if label == NEAR_MISS and sum(1 for r in importers if roles.get(r, "source") == anchor_role) > FAN_FULL:
            # (A miss many files of its role import is a utility: its importers are no
            # nearer the fix than any file, and a trial's every result read "imports
            # color.py (judged low)". Its tests, never lifted, do not count.)
            importers = []
        for r in importers:
            offer(r, strength * LIFT_IMPORTS * _fan(len(importers)),
                  f"imports the package of {who}" if go else f"imports {who}")
        if label == "best file":
            continue  # a directory of the loop's own guesses says too little
        folder = anchor.rpartition("/")[0]
        size = sizes.get(folder, 1)
        for r in cands:
            if r.rpartition("/")[0] == folder:
                offer(r, strength * LIFT_SIBLING * min(1.0, SIBLING_FULL / size), f"beside {who}")
        if label != "judged":
            continue
        _offer_users(anchor, cands, matches, keywords, docs, offer)
        _offer_type_users(anchor, pool, offer)
        doc = docs[anchor]
        pos = anchor
        names = rare_names(doc, pool, known)
        total = sum(r for _t, r in names)
        if total <= 0:
            continue
        for d in pool:
            if lang.language_of(d.rel) is lang.NONE:
                continue  # prose and data name everything; sharing names says nothing
            held = [(t, r) for t, r in names if t in d.low]
            if len(held) >= NAME_MIN_SHARED:
                share = sum(r for _t, r in held) / total
                offer(d.rel, LIFT_VOCAB * share,
                      f"shares {len(held)} rare names with judged {pos} ({held[0][0].decode('ascii', 'ignore')}, ...)")
    return _summed(best.values(), _shared_dependencies(positive, graph_of, docs, matched))


def _rare_named(keywords: Sequence[Keyword], matches: Mapping[str, FileMatch]) -> tuple[tuple[int, str], ...]:
    """(index, text) of the names the task quotes that few matched files hold (at most
    CALLED_NAME_MAX_SHARE of them, or CALLED_NAME_MIN_HOLDERS): the project's own name,
    ``jQuery`` in every file, says nothing about where a line hands the work on."""
    most = max(CALLED_NAME_MIN_HOLDERS, int(CALLED_NAME_MAX_SHARE * len(matches)))
    holders = _holders(matches, len(keywords))
    return tuple((i, kw.text) for i, kw in enumerate(keywords) if kw.kind in NAMED_KINDS and holders[i] <= most)


def _called_on_task_lines(anchor: str, doc: Document, targets: Sequence[str],
                          matches: Mapping[str, FileMatch], rare: Sequence[tuple[int, str]]) -> dict[str, str]:
    """{imported file: the task's name it is called beside} for the ``targets`` of the
    judged ``anchor`` whose stem (CALLED_STEM_MIN_LEN) is called or used as a module on a
    line of ``anchor`` holding one of the ``rare`` names (:func:`_rare_named`) it holds
    (its first MAX_TASK_LINES such lines)."""
    m = matches.get(anchor)
    if m is None or not targets:
        return {}
    names = {text.lower().encode("utf-8", "ignore"): text for i, text in rare if m.counts[i] > 0}
    if not names:
        return {}
    lines: list[tuple[bytes, bytes]] = []
    for line in doc.low.split(b"\n"):
        if len(line) > MAX_TASK_LINE_BYTES:
            continue
        name = next((n for n in names if n and n in line), None)
        if name is not None:
            lines.append((line, name))
            if len(lines) >= MAX_TASK_LINES:
                break
    out: dict[str, str] = {}
    for r in targets:
        stem = r.rpartition("/")[2].split(".", 1)[0].lower()
        if len(stem) < CALLED_STEM_MIN_LEN or stem in lang.PACKAGE_STEMS or not _STEM_RE.fullmatch(stem):
            continue  # (``index``, ``__init__``, ``mod``: a package's, named by its directory)
        use = re.compile(rb"(?<![A-Za-z0-9_$.])%s\s*[(.]" % re.escape(stem.encode("ascii")))
        hit = next((name for line, name in lines if name != stem.encode("ascii") and use.search(line)), None)
        if hit is not None:
            out[r] = names[hit]
    return out


def _offer_type_users(anchor: str, pool: Sequence[Document], offer) -> None:
    """Lift the files that name the judged ``anchor``'s own type, its file name's stem
    (STEM_MIN_LEN; not a private or special module's, ``__init__``), sharing the lift when
    many do (:func:`_fan`)."""
    stem = anchor.rpartition("/")[2].split(".", 1)[0]
    if len(stem) < STEM_MIN_LEN or not is_code_identifier(stem) or not stem.isascii() or stem.startswith("_"):
        return
    word = re.compile(rb"(?<![A-Za-z0-9_$])%s(?![A-Za-z0-9_$])" % re.escape(stem.lower().encode("ascii")))
    users = [d.rel for d in pool if d.rel != anchor and word.search(d.low)]
    for r in users:
        offer(r, LIFT_IMPORTS * _fan(len(users)), f"names judged {anchor}'s {stem}")


def _offer_users(anchor: str, cands: Sequence[str], matches: Mapping[str, FileMatch],
                 keywords: Sequence[Keyword], docs: Mapping[str, Document], offer) -> None:
    """Lift the files that use a name the task quotes and the judged ``anchor`` defines
    (a definition's callers), sharing the lift when many do (:func:`_fan`). A user spells
    the name as the definition does: the task's ``load_default`` is searched as
    ``loadDefault`` too, but a file holding only ``loadDefault`` names another method
    (a trial's C++ header was lifted as a user of the judged file's ``load_default``)."""
    m, doc = matches.get(anchor), docs.get(anchor)
    if m is None or doc is None:
        return
    language = lang.language_of(anchor)
    for i, kw in enumerate(keywords):
        if kw.kind not in NAMED_KINDS or m.defines[i] < 1.0:
            continue
        spelled = [n for n in kw.needles if n in doc.low and defines(doc.low, n, language) >= 1.0]
        if not spelled:
            continue
        # (A file that defines the name too is a rival definition, not a caller; a user
        # spells the whole name, or one of its family joined by ``_``: ``walk_langs(`` is
        # no use of ``walk_lang``, ``ZSTD_FRAMEHEADERSIZE_MIN`` one of ``ZSTD_frameHeaderSize``.)
        alternation = b"|".join(re.escape(n) for n in spelled)
        word = re.compile(rb"(?<![A-Za-z0-9$])(?:%s)(?![A-Za-z0-9$])" % alternation)
        users = [r for r in cands if r in matches and matches[r].counts[i] > 0 and matches[r].defines[i] < 1.0
                 and r in docs and word.search(docs[r].low)]
        if users and language.name not in CASE_BLIND:
            # (A use spells the name as the judged file's definition does, or is one of its
            # family: ``fileNames`` is no use in a comment's "filenames", which lifted a
            # trial's truststore_linux.go.)
            spellings = _defined_spellings(doc, word, language)
            if spellings:
                family = re.compile(rb"(?<![A-Za-z0-9$])(?:%s)_" % alternation)
                users = [r for r in users if family.search(docs[r].low)
                         or _spells(docs[r], word, spellings)]
        for r in users:
            offer(r, LIFT_USES * _fan(len(users)), f"uses {kw.text}, defined by judged {anchor}")


def _defined_spellings(doc: Document, word: "re.Pattern[bytes]", language: lang.Language) -> frozenset[bytes]:
    """The spellings of the names ``word`` finds (lower-cased) at their definitions in
    ``doc``, as its bytes write them: the first occurrence on a line (with the next, where
    a body's brace may stand, unless that line holds the name too) that :func:`defines`
    it (``export const fileNames = (filenames) =>`` spells ``fileNames``). At most
    DEFINITION_LINES lines are looked at, none longer than MAX_TASK_LINE_BYTES (a
    minified line), and at most DEFINITIONS_KEPT definitions. Empty when none is found or
    the file's bytes are no longer what was searched (then any spelling goes)."""
    data, low = _as_searched(doc), doc.low
    if data is None:
        return frozenset()
    found: set[bytes] = set()
    looked = definitions = 0
    pos = 0
    while looked < DEFINITION_LINES and definitions < DEFINITIONS_KEPT:
        m = word.search(low, pos)
        if m is None:
            break
        start, end = line_span(low, m.start(), m.end())
        pos = end + 1
        looked += 1
        if end - start > MAX_TASK_LINE_BYTES:
            continue
        after = line_span(low, pos, pos)[1] if pos <= len(low) else end
        if after - end > MAX_TASK_LINE_BYTES or word.search(low, end, after):
            after = end
        if defines(low[start:after], m.group(0), language) >= 1.0:
            found.add(data[m.start(): m.end()])
            definitions += 1
    return frozenset(found)


def _spells(doc: Document, word: "re.Pattern[bytes]", spellings: frozenset[bytes]) -> bool:
    """Whether ``doc`` holds one of ``spellings`` as written (``word``, lower-cased, finds
    the places; a file changed since it was searched is taken at its word)."""
    data = _as_searched(doc)
    return data is None or any(data[m.start(): m.end()] in spellings for m in word.finditer(doc.low))


def _as_searched(doc: Document) -> Optional[bytes]:
    """The file's bytes, when they are still the text that was searched (else None: the
    file changed since, and its offsets say nothing of them)."""
    data = doc.data
    return None if doc.changed or len(data) != len(doc.low) else data


def _shared_dependencies(anchors: Sequence[str], graph_of, docs: Mapping[str, Document],
                         matched: Iterable[str]) -> frozenset[str]:
    """The matched files that every one of ``anchors`` (the files taken as relevant)
    imports, when there are at least SHARED_MIN_ANCHORS of them (see SHARED_DAMPING)."""
    present = [a for a in anchors if a in docs]
    if len(present) < SHARED_MIN_ANCHORS or len(present) != len(anchors):
        return frozenset()
    common: Optional[set[str]] = None
    for a in present:
        out = set(graph_of(a, docs[a].head))
        common = out if common is None else common & out
        if not common:
            return frozenset()
    return frozenset((common or set()) & set(matched))


def _summed(found: Iterable[Lift], shared: frozenset[str] = frozenset()) -> tuple[Lift, ...]:
    """One lift per file: its relations to distinct judged (or leading) files add up,
    to LIFT_MAX; the reason names the strongest and how many more there are. A file in
    ``shared`` is marked so (:func:`_shared_dependencies`)."""
    per: dict[str, list[Lift]] = {}
    for x in found:
        per.setdefault(x.rel, []).append(x)
    out = []
    for rel in sorted(per):
        xs = sorted(per[rel], key=lambda x: (-x.amount, x.why))
        amount, fixed = min(LIFT_MAX, sum(x.amount for x in xs)), min(LIFT_CALLED, sum(x.fixed for x in xs))
        if max(amount, fixed) < MIN_LIFT:
            continue  # (too small to move the file past one worth reading: no reason to name)
        more = f" (+{len(xs) - 1} more)" if len(xs) > 1 else ""
        out.append(Lift(rel, round(amount, 4), xs[0].why + more, max(x.ceiling for x in xs), rel in shared,
                        round(fixed, 4)))
    return tuple(out)


def build(judgements: Mapping[str, float], matches: Mapping[str, FileMatch], keywords: Sequence[Keyword],
          corpus: Corpus) -> tuple[Verdicts, tuple[KeywordShift, ...]]:
    """The verdicts and the keyword shifts they imply (before any file is re-scored)."""
    v = verdicts(judgements)
    return v, (keyword_shifts(v, matches, keywords, corpus) if not v.empty else ())


def lifted(score: float, amount: float, damping: float = LIFT_DAMPING) -> float:
    """A relevance with a lift: the lift scaled by the file's own evidence (to the power
    ``damping``, its square root by default), so a relation amplifies what the task
    already found there and a file that barely matches stays behind; capped as the
    scorer caps relevance."""
    return min(MAX_RELEVANCE, score + amount * max(score, 0.0) ** damping)


def _capped(score: float, new: float, ceiling: float) -> float:
    """A lift under a ceiling closes at most GAP_SHARE of the gap to it, so files lifted
    toward the same leader keep their order (no ties at the ceiling)."""
    if score >= ceiling:
        return score
    return min(new, score + GAP_SHARE * (ceiling - score))


def apply_lifts(scored: Sequence[Scored], found: Sequence[Lift]) -> list[Scored]:
    """Scored rows with the lifts applied to their relevance (:func:`lifted`),
    re-sorted best first; each lifted file's reason says why first."""
    by_rel = {x.rel: x for x in found}
    out = []
    for s in scored:
        x = by_rel.get(s.rel)
        if x is not None:
            damping = SHARED_DAMPING if x.shared else LIFT_DAMPING
            new = lifted(s.score, x.amount, damping)
            if x.fixed:
                new = max(new, min(RELATED, s.score + x.fixed))
            s = replace(s, score=round(_capped(s.score, new, x.ceiling), 4),
                        signals=(Signal(SignalKind.FEEDBACK, x.why, x.amount),) + s.signals)
        out.append(s)
    out.sort(key=lambda s: (-s.score, -s.raw, s.rel))
    return out


def shift_signals(before: Sequence[Scored], after: Sequence[Scored],
                  shifts: Sequence[KeywordShift]) -> list[Scored]:
    """The re-scored rows, each moved file's reason naming the shift that moved it most
    (the keyword it matched whose weight changed most, and the judged file behind it)."""
    old = {s.rel: s.score for s in before}
    shown = [x for x in shifts if abs(x.factor - 1.0) >= SHIFT_SHOWN]
    out = []
    for s in after:
        if s.rel in old and abs(s.score - old[s.rel]) >= 0.01:
            why = _shift_reason(s, shown, up=s.score > old[s.rel])
            if why:
                s = replace(s, signals=(Signal(SignalKind.FEEDBACK, why),) + s.signals)
        out.append(s)
    return out


def _shift_reason(s: Scored, shifts: Sequence[KeywordShift], up: bool) -> str:
    """Why a re-scored file moved: up, the keyword it holds that gained most; down, the
    keyword it holds that lost most, else the gaining keyword it lacks."""
    held = set(s.matched_keywords)
    if up:
        cands = [x for x in shifts if x.factor > 1 and x.keyword in held]
        if cands:
            x = max(cands, key=lambda x: (x.factor, x.keyword))
            return f"up: holds {x.keyword}, as judged {x.source} does"
        return ""
    cuts = [x for x in shifts if x.factor < 1 and x.keyword in held]
    if cuts:
        x = min(cuts, key=lambda x: (x.factor, x.keyword))
        # (A trial's agent could not read "module weighs less, it drove X, judged low".)
        return f"down: holds {x.keyword}, like judged-low {x.source}"
    lacks = [x for x in shifts if x.factor > 1 and x.keyword not in held]
    if lacks:
        x = max(lacks, key=lambda x: (x.factor, x.keyword))
        # (A trial's agent read "no X, which judged Y holds" as a penalty for nothing: a
        # name one file defines is absent from the others. It is the word's new weight.)
        return f"down: lacks {x.keyword}, which weighs more as judged {x.source} holds it"
    return ""
