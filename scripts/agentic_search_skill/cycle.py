"""One cycle of the loop as typed stages: plan -> dispatch -> evaluate -> refine -> decide.

:func:`run_cycle` is the library entry point behind ``scripts/retrieve_loop.py``: the
previous :class:`~.state.LoopState` and the caller's :class:`~.request.Request` in, an
:class:`Outcome` out - the cycle's :class:`~.records.CycleView` (what the output shows)
and the next state. Each stage is a function returning a frozen record:

- :func:`plan` -> :class:`Plan`: the query to run (the last proposal plus the caller's flags);
- :func:`dispatch` -> :class:`Dispatched`: the walk and one read of every candidate (DISPATCH);
- :func:`evaluate` -> :class:`Evaluation`: match, score, assess, related files (EVALUATE),
  with the caller's judgements as relevance feedback (:mod:`.feedback`), or on a later
  cycle without them the loop's own context files standing in for judged-relevant ones;
- :func:`~.refine.refine_query` -> the next query (REFINE);
- :func:`~.decide.decide` -> the one decision (LOOP: stop or go on, and how).

No stage touches the state file; :mod:`.cli` loads and saves it.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat as stat_mod
import time
import zlib
from dataclasses import dataclass, replace
from itertools import islice
from types import MappingProxyType
from typing import Any, Callable, Container, Mapping, Optional, Sequence

from . import feedback as feedback_mod
from . import fsafe
from . import handoff as handoff_mod
from . import imports as imports_mod
from .decide import UNSURE_BELOW, Evidence, decide
from .engine import held_by_any, load_documents, rank_documents
from .lang import SOURCE_ROLE, option_table
from .match import Document, FileMatch
from .progress import QUIET, Progress
from .query import DERIVED_KINDS, KIND_WEIGHTS, LONG_OPTION_RE, NAMED_KINDS, Keyword, Kind, base_form, \
    called_in_code, extract_keywords, is_cjk_piece, keywords_from_list, make_keyword, merge_keywords, normalize, \
    quoted_lines, singular_of, split_identifier, task_read, traceback_frames
from .records import Change, CycleView, Decision, ResultView, Stats
from .refine import LEARN_MAX_FILES, LEARN_ROLES, NextQuery, learn_vocabulary, message_pieces, name_pieces, \
    refine_query, synonym_keywords
from .report import CHANGED_IN_CYCLE, build_result, decode_text, ranked_names
from .request import DEFAULT_LIMIT, Request
from .rubric import HIGH_RELEVANCE, IMPLEMENTS, RELATED, UNRELATED_BELOW
from .score import SHORT_QUERY_KEYWORDS, Corpus, Scored, Signal, SignalKind, coverage_share, file_role, idf, \
    reason_text, roles_requested, score_matches, task_words
from .state import HistoryEntry, LoopState, Query, ScoreEntry, ranked_scores, shown_of, shown_scores
from .trust import Assessment, assess
from .walk import EVERY_FILE, MAX_FILE_BYTES, RACY_WINDOW_NS, excluded_by, has_magic, prunes, unescaped, walk

# The best files whose imports are parsed to find related files (both directions).
RELATED_SCAN_FILES = 50
# Evidence a related file gets for being imported by / importing a relevant file, as a
# share of the best file's evidence (scaled down for long task texts).
RELATED_BONUS = 0.15
# The files a cycle weighs for its decisions - which it may set aside (exclude from
# later results), which are new (a cycle with none is saturated), which are already in
# view (not worth an expansion) - are its best this many, the default --limit: the same
# whatever limit the caller reads with (the limit is for reading, never a change to the
# search or to when it stops).
EXCLUDE_WINDOW = DEFAULT_LIMIT
# A file new to that window changes the answer only at this share of the first file's
# score or more: a trial's waitress round added one document at 0.019 beside a first
# file at 0.472, every other place as before, and went on (``refine``) naming the second
# file as the lead, where the answer had not moved (``saturated``).
NEW_FILE_SHARE = 0.25
# ... and wherever it scores, a file new to the places an agent reads first (the
# default output's results) is a change (an adversarial check's new 2nd and 3rd files
# at 0.17 and 0.09 beside 0.90).
NEW_FILE_PLACES = 5
# Files whose imports may be followed (expand): the leaders of the ranking.
EXPAND_FROM_TOP = 3
# Related files proposed for one expansion at most.
MAX_EXPAND = 5
# The roles an expansion goes to: the code the leading files depend on or that depends on
# them, whatever the task says of tests (an issue's "test case:" asks for no more tests
# than the one it pastes). On the dev splits a cycle
# expanded from a test to the tests importing its module (django-16408: tests/basic,
# tests/prefetch_related, tests/model_inheritance for a fix in the query compiler).
EXPAND_ROLES = LEARN_ROLES
# Unjudged files a stop on the caller's judgement names: where a fix of several files goes on.
NEXT_UNJUDGED = 2
NEXT_ROLE_WINDOW = 20
# Files the loop's memory (the state file) keeps scores of: the best by the ranking's
# order, and every file the caller judged. Output shows the first 20 and later cycles
# score every matching file again, so a file beyond these only ever showed as a weak
# old entry; without the bound a tree of 100,000 matching files writes and reads a
# state of that many entries on every cycle.
SCORES_KEPT = 1000


# What the index keeps per file for later cycles (index.FactStore kinds).
NAMES_FACT = "names"      # report.ranked_names: the tags' candidates, most used first
IMPORTS_FACT = "imports"  # imports.imports_of, for one set of tree paths


class CycleError(Exception):
    """Bad input for a cycle (no keywords to search, ...)."""


@dataclass(frozen=True)
class Env:
    """What the calling process lends a cycle: not part of what the caller asked."""

    cache: Optional[Any] = None              # cache.Cache: reuse what earlier cycles read
    progress: Progress = QUIET               # stderr progress on a terminal for long cycles
    skip_paths: tuple[str, ...] = ()         # the tool's own files: never read, never results
    synonym_runs: Callable[..., list] = lambda *_a: []   # hints.synonym_runs: the synonym table
    compute_hints: Optional[Callable[..., dict]] = None


@dataclass(frozen=True)
class Plan:
    """What this cycle runs."""

    cycle: int
    max_cycles: int
    task: str
    query: Query
    judgements: Mapping[str, float]
    limit: int = DEFAULT_LIMIT


@dataclass(frozen=True)
class Dispatched:
    """DISPATCH's outcome: the documents read and what the walk saw."""

    docs: tuple[Document, ...]
    by_rel: Mapping[str, Document]
    walked_rels: tuple[str, ...]
    hidden: frozenset[str]       # read and scored, never shown: exact-file excludes, set-aside files
    stats: Stats
    files: Sequence[Any] = ()    # the walk's entries (walk.FileEntry): the stat it saw
    started: int = 0             # when the walk began (time.time_ns)


@dataclass(frozen=True)
class Evaluation:
    """EVALUATE's outcome."""

    scored: tuple[Scored, ...]          # every matched file, best first, judgements applied
    shown: tuple[Scored, ...]           # the best ``limit`` of them
    relative: tuple[Scored, ...]        # the same with the scorer's own (relative) scores
    matches: Mapping[str, FileMatch]
    corpus: Corpus
    related: Mapping[str, tuple[str, ...]]
    gaps: tuple[Keyword, ...]           # keywords no candidate file holds
    assessment: Assessment
    feedback: Optional[feedback_mod.Feedback] = None  # what the caller's judgements changed
    calibrated: bool = True             # the scores shown are trust.py's (a long task text)
    risen: frozenset[str] = frozenset()  # set-aside files the judgements lifted into view


@dataclass(frozen=True)
class Outcome:
    """A cycle's result: what the output shows, and the state for the next call."""

    view: CycleView
    state: LoopState


# A set-aside file the caller's judgements lift among this many of the best files the
# caller has not judged comes back (the results shown: output.RESULTS_SHOWN).
RISEN_WITHIN = 5
# The most keywords one query holds: each is counted in every file, and calls that each
# add a task or a hundred --keywords would otherwise grow the query without bound.
MAX_QUERY_KEYWORDS = 200
# The share of the query's weight the caller's --keywords carry when they steer a query
# that already holds words (a loop under way, or --task beside them): the caller read the
# code and named its words, which a task's forty words would otherwise outweigh (a trial:
# ``--keywords ZodCheckGreaterThan`` left the two files holding it 3rd and 4th, below a
# file without it; a loop on that name alone put its file first). Fitted on both dev
# splits by steering as an agent that found the code's word would: after cycle 1, on the
# 123 issues whose first gold file was not first and defines a name the task lacks that
# 3-16 files hold, that name as --keywords; the gold file's rank after the steered cycle
# (first / top 3 / top 5 / in the 5 results): weight 1.0 as before 21 / 101 / 113 / 114,
# share 0.3 47 / 110 / 117 / 120, 0.5 47 / 107 / 116 / 116, 0.7 48 / 104 / 114 / 115.
STEER_SHARE = 0.3


def _steering(given: Sequence[Keyword], keywords: Sequence[Keyword]) -> list[Keyword]:
    """The caller's keywords weighted to carry STEER_SHARE of the query beside
    ``keywords`` (never less than their own weight): each one an equal part."""
    given = merge_keywords(given)  # (two spellings of one name are one part: merge_keywords)
    kept = merge_keywords(given, keywords)
    given_keys = {normalize(k.text) for k in given}
    rest = sum(k.weight for k in kept if normalize(k.text) not in given_keys)
    weight = STEER_SHARE / (1.0 - STEER_SHARE) * rest / len(given) if given else 0.0
    return [replace(k, weight=max(k.weight, weight)) for k in given]


def plan(state: LoopState, request: Request, judgements: Mapping[str, float]) -> Plan:
    """The query to run now: the last proposal, combined with the caller's flags as
    :mod:`.request` documents (patterns replace, keywords and excludes add)."""
    proposal = state.proposal
    keywords: list[Keyword] = list(proposal.keywords) if proposal else []
    patterns = list(proposal.patterns) if proposal else []
    excludes = list(proposal.excludes) if proposal else []
    told = task_read(request.task)  # (a very long task is read to its first MAX_TASK_CHARS)
    if told:
        keywords = merge_keywords(keywords, extract_keywords(told))
    if request.keywords:
        keywords = merge_keywords(_steering(keywords_from_list(request.keywords, Kind.GIVEN), keywords), keywords)
    if request.patterns:
        patterns = list(dict.fromkeys(request.patterns))
    for e in request.excludes:
        if e not in excludes:
            excludes.append(e)
    if not keywords:
        raise CycleError("no keywords: pass --keywords or a --task with searchable words")
    keywords = keywords[:MAX_QUERY_KEYWORDS]  # (the caller's newest first, the loop's own last)
    task = state.task
    if told:
        # (Tasks added call after call: the first is kept whole, the later ones as far as
        # the cap allows; every one's keywords were taken above.)
        task = task_read((task + "\n" + told).strip() if task else told)
    merged = dict(state.judgements)
    merged.update(judgements)
    return Plan(
        cycle=state.cycle + 1,
        max_cycles=request.max_cycles or state.max_cycles,
        task=task,
        # The caller's own --keywords search anew: the files the loop set aside under its
        # old query are shown again (a trial's `--keywords adapter` found its file hidden).
        query=Query(tuple(patterns or EVERY_FILE[:1]), tuple(keywords), tuple(excludes),
                    proposal.set_aside if proposal and not request.keywords else ()),
        judgements=merged,
        limit=request.limit or state.limit or DEFAULT_LIMIT,
    )


def dispatch(root: str, p: Plan, env: Env, max_file_bytes: int) -> Dispatched:
    """DISPATCH: walk the tree (patterns, glob excludes) and read every candidate once.

    Excludes that name a file exactly, and the files the loop set aside (shown below the
    rubric's 0.2), are still read and searched - so a keyword is never reported as
    matching nothing while a file holds it - but never shown; they are counted as
    ``excluded``. Globs, and paths naming a directory, prune the walk.
    """
    pruned = [e for e in p.query.excludes if prunes(root, e)]
    # A pattern naming a directory selects the files below it (``src`` is ``src/**``).
    patterns = tuple(f"{pat}/**" if not has_magic(pat) and _is_dir(root, unescaped(pat)) else pat
                     for pat in p.query.patterns)
    started = time.time_ns()
    walked = walk(root, patterns, pruned, skip_paths=env.skip_paths, max_bytes=max_file_bytes)
    literal = frozenset(unescaped(e) for e in p.query.excludes if e not in pruned)
    aside = frozenset(p.query.set_aside)
    rels = tuple(f.rel for f in walked.files)
    hidden = frozenset(r for r in rels if r in literal or r in aside)
    docs, binary, unreadable = load_documents(walked.files, env.cache, env.progress, max_file_bytes)
    skipped = dict(walked.skipped)
    # (The loop's own set-aside files are read and counted in ``query.set_aside_files``,
    # not as skipped: a trial's agent read "excluded": 15 after a round it had given no
    # --exclude.)
    excluded = sum(1 for r in hidden if r in literal)
    if excluded:
        skipped["excluded"] = skipped.get("excluded", 0) + excluded
    examples = tuple(f"{x.reason}: {x.rel}" + (f" ({x.detail})" if x.detail else "") for x in walked.examples)
    stats = Stats(files_considered=len(walked.files), files_read=len(docs), binary_skipped=binary,
                  unreadable_skipped=unreadable, walk_skipped=tuple(sorted(skipped.items())),
                  skip_examples=examples)
    return Dispatched(tuple(docs), {d.rel: d for d in docs}, rels, hidden, stats, walked.files, started)


def _stat_stamp(size: int, mtime_ns: int, ctime_ns: int, dev: int, ino: int) -> str:
    """A stamp's first part: the stat it was scored at (what a later look compares). The
    device and inode tell apart two files of the same size written in the same tick
    whose directories were swapped."""
    return f"{size}:{mtime_ns}:{ctime_ns}:{dev}:{ino}"


_STAT_FIELDS = 5  # the fields of _stat_stamp; a CRC-32 or "racy" may follow
_OLD_STAT_FIELDS = 3  # an older state's stamps: size, mtime, ctime


def _stamps(d: Dispatched, rels: frozenset[str], earlier: dict[str, ScoreEntry]) -> dict[str, str]:
    """What the loop's memory keeps of each of ``rels`` (files this cycle scored) to see it
    changed: size, mtime, ctime, device and inode; for a file changed within
    RACY_WINDOW_NS of the walk (a second write could keep its stat), or whose ``earlier``
    stamp was taken so, the CRC-32 of its text too (two stamps of one file compare
    alike: a file written just before cycle 1 and left alone is the same file in cycle 2)."""
    horizon = d.started - RACY_WINDOW_NS
    out = {}
    for f in d.files:
        if f.rel not in rels:
            continue
        stamp = _stat_stamp(f.size, f.mtime_ns, f.ctime_ns, f.dev, f.ino)
        prev = earlier.get(f.rel)
        if f.mtime_ns >= horizon or f.ctime_ns >= horizon \
                or (prev is not None and _stamp_parts(prev.stamp)[1] is not None):
            doc = d.by_rel.get(f.rel)
            stamp += f":{zlib.crc32(doc.low):08x}" if doc is not None else ":racy"
        out[f.rel] = stamp
    return out


def _stamp_parts(stamp: str) -> tuple[tuple[str, ...], Optional[str]]:
    """A stamp's stat fields and what follows them (a CRC-32, "racy", or None). A stamp
    of an older state holds size, mtime and ctime alone (no device, no inode)."""
    fields = stamp.split(":")
    n = _OLD_STAT_FIELDS if len(fields) <= _OLD_STAT_FIELDS + 1 else _STAT_FIELDS
    return tuple(fields[:n]), (fields[n] if len(fields) > n else None)


def _stamp_changed(earlier: str, now: str, stat_only: bool = False) -> bool:
    """Whether a file's stamp shows it changed: its stat did (on the fields both stamps
    hold), or - unless ``stat_only`` - its CRC-32 did when both stamps have one, or the
    earlier stamp could not tell (a racy file not read)."""
    (a, was), (b, is_now) = _stamp_parts(earlier), _stamp_parts(now)
    k = min(len(a), len(b))
    if a[:k] != b[:k]:
        return True
    return not stat_only and (was == "racy" or (was is not None and is_now is not None and was != is_now))


@dataclass(frozen=True)
class _IndexedImports(imports_mod.TreeImports):
    """The cycle's import graph, whose answers for files the index serves are the ones an
    earlier cycle or task kept there (a file's imports depend on its bytes and the tree's
    paths only: ``key`` names the paths), and are kept there when made."""

    cache: Any = None
    key: str = ""

    def of(self, rel: str, data: bytes) -> tuple[str, ...]:
        found = self._of.get(rel)
        if found is not None:
            return found
        got = self.cache.fact(rel, IMPORTS_FACT, self.key)
        if isinstance(got, list) and all(isinstance(r, str) for r in got):
            found = self._of[rel] = tuple(got)
            return found
        found = super().of(rel, data)
        self.cache.keep_fact(rel, IMPORTS_FACT, self.key, list(found))
        return found


def _paths_key(rels: Sequence[str]) -> str:
    """A name for the set of tree paths (what resolving an import depends on)."""
    return hashlib.sha256("\0".join(rels).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _related_graph(scored: Sequence[Scored], docs: Mapping[str, Document],
                   imports: imports_mod.TreeImports) -> dict[str, tuple[str, ...]]:
    """Imports of the best files, and the reverse edges among them."""
    graph: dict[str, tuple[str, ...]] = {}
    for s in scored[:RELATED_SCAN_FILES]:
        doc = docs.get(s.rel)
        if doc is not None:
            graph[s.rel] = imports.of(s.rel, doc.head)
    importers = imports_mod.importers_of(graph, graph)
    return {rel: tuple(sorted(set(graph[rel]) | set(importers.get(rel, ())))) for rel in graph}


def _rubric_scores(scored: Sequence[Scored], assessment: Assessment, keywords: Sequence[Keyword],
                   corpus: Corpus) -> tuple[float, ...]:
    """The scores to show. On a short request (at most SHORT_QUERY_KEYWORDS keywords of
    the task's own that matched, not counting what the loop derived) the scorer's
    relevance is already a claim on the rubric - how much of what was asked a file
    holds - and stands; on a long task text it only says how close a file comes to the
    best one, so the assessment's calibrated scores (fitted on issue texts) replace it."""
    asked = {kw.group or f"#{i}" for i, kw in enumerate(keywords)
             if kw.kind not in DERIVED_KINDS and corpus.idfs and i < len(corpus.idfs)
             and corpus.idfs[i] < idf(0, max(corpus.n_docs, 1)) - 1e-12}
    if len(asked) <= SHORT_QUERY_KEYWORDS:
        return tuple(s.score for s in scored)
    return assessment.scores


def _rescored(s: Scored, score: float, signals: tuple[Signal, ...] = ()) -> Scored:
    return Scored(rel=s.rel, score=score, raw=s.raw, coverage=s.coverage, role=s.role,
                  signals=signals + s.signals, matched_keywords=s.matched_keywords)


def evaluate(p: Plan, d: Dispatched, state: LoopState, env: Env) -> Evaluation:
    """EVALUATE: score every file read, assess the ranking, find related files."""
    bonuses = {r: RELATED_BONUS for r in state.pending_related if r in d.by_rel}
    scored, matches, corpus = rank_documents(d.docs, p.query.keywords, task_words(p.task), bonuses,
                                             env.cache, env.progress)
    env.progress.finish()
    # One graph for the lifts and the related files (through the index when there is one).
    imports = imports_mod.TreeImports(d.walked_rels) if env.cache is None \
        else _IndexedImports(d.walked_rels, cache=env.cache, key=_paths_key(d.walked_rels))
    fb = None
    if p.judgements:
        scored, fb = _with_feedback(p, d, scored, matches, corpus, bonuses, imports)
    elif p.cycle > 1:
        scored, fb = _with_leaders(p, d, scored, state, imports)
    # (No file read, no claim: a keyword is a gap only when files were searched for it.)
    gaps = _gaps(p.query.keywords, corpus, matches, d.docs, env.cache) if d.docs else ()
    # A cycle the caller's judgements inform ranks every file it read on one scale: the
    # files the loop set aside (weak in an earlier cycle) stay out of ``shown`` but take
    # this cycle's scores in the loop's memory, where the judgements may have lifted them
    # (else their stale entries of an earlier scale would stand beside this cycle's).
    # Without judgements they keep their entries: a later query is partly the loop's
    # guess, and scoring them again with it lost more than it found (bench/HISTORY.md).
    informed = fb is not None and not fb.verdicts.empty
    visible = list(scored) if informed else [s for s in scored if s.rel not in d.hidden]
    assessment = assess(visible, matches, p.query.keywords, corpus)
    rubric = _rubric_scores(visible, assessment, p.query.keywords, corpus)
    calibrated = [_rescored(s, score) if score != s.score else s for s, score in zip(visible, rubric)]
    judged = _judged(calibrated, p.judgements)
    related = _related_graph(judged, d.by_rel, imports)
    # A file the loop set aside that the caller's judgements lift among the best it has
    # not judged is offered again and no longer set aside: a trial's viper.go judged, the
    # fix's util.go stood 2nd in the ranking while results (and the next rounds) hid it.
    risen: frozenset[str] = frozenset()
    if informed and p.query.set_aside:
        aside = frozenset(p.query.set_aside)
        left_out = d.hidden - aside
        best = islice((s for s in judged if s.rel not in p.judgements and s.rel not in left_out), RISEN_WITHIN)
        risen = frozenset(s.rel for s in best if s.rel in aside)
    shown = [s for s in judged if s.rel not in d.hidden or s.rel in risen][:p.limit]
    return Evaluation(tuple(judged), tuple(shown), tuple(_judged(visible, p.judgements)), matches,
                      corpus, related, gaps, assessment, fb,
                      calibrated=rubric is assessment.scores and bool(visible), risen=risen)


def _with_leaders(p: Plan, d: Dispatched, scored: Sequence[Scored],
                  state: LoopState, imports: imports_mod.TreeImports
                  ) -> tuple[list[Scored], Optional[feedback_mod.Feedback]]:
    """A later cycle without judgements: the loop's context so far (files shown at
    the rubric's high relevance) stands in for files judged relevant, and the files
    they import or that import them, matching the task, are lifted (feedback.py).
    With none that high, the loop's best file does, when the rubric calls it more
    than unrelated (:func:`_best_unjudged`): an unsure loop's one lead. On the dev
    splits (bench/HISTORY.md) the cycles after the first then raise Acc@5 where they
    run, 72.5% -> 73.2% (dayjs-1010's `src/constant.js`, imported by the leading
    plugin, 8th -> 5th), and Acc@10 81.7% -> 83.7%."""
    leaders = tuple(sorted(r for r, e in state.scores.items() if not e.judged and e.score >= HIGH_RELEVANCE))
    weak = not leaders
    if weak:
        leaders = _best_unjudged(state)
    if not leaders:
        return list(scored), None
    empty = feedback_mod.Verdicts((), ())
    lifted = feedback_mod.lifts(empty, scored, d.by_rel, d.walked_rels, p.query.keywords, leaders,
                                imports=imports)
    if weak:
        # A weak lead's package layout is no evidence: its own package index (which
        # re-exports it) is not lifted for that edge (the expansion rule, imports.py).
        lifted = tuple(x for x in lifted if not imports_mod.own_package_index(x.rel, leaders[0]))
    return feedback_mod.apply_lifts(scored, lifted), feedback_mod.Feedback(empty, (), lifted)


def _best_unjudged(state: LoopState) -> tuple[str, ...]:
    """The loop's best file the caller has not judged, when the rubric calls it more than
    unrelated (UNRELATED_BELOW): with no file at high relevance, the one lead an unsure
    loop has. Its own score caps what it lifts (feedback.BEHIND_LEADER), and the merge of
    an unsure loop only raises files (:func:`merge_scores`)."""
    best = next(((rel, sc) for rel, sc, e in ranked_scores(state.scores) if not e.judged), None)
    return (best[0],) if best is not None and best[1] >= UNRELATED_BELOW else ()


def _with_feedback(p: Plan, d: Dispatched, scored: Sequence[Scored], matches: Mapping[str, FileMatch],
                   corpus: Corpus, bonuses: Mapping[str, float],
                   imports: imports_mod.TreeImports) -> tuple[list[Scored], feedback_mod.Feedback]:
    """The caller's judgements as relevance feedback (feedback.py): every file scored
    again with the keyword weights they shift, then the files around the relevant ones
    lifted. Judged files themselves take the caller's score later (:func:`_judged`)."""
    v, shifts = feedback_mod.build(p.judgements, matches, p.query.keywords, corpus)
    out = list(scored)
    if shifts:
        again = score_matches(list(matches.values()), feedback_mod.shifted(p.query.keywords, shifts), corpus,
                              roles_requested(task_words(p.task)), dict(bonuses))
        out = feedback_mod.shift_signals(out, again, shifts)
    lifted = feedback_mod.lifts(v, out, d.by_rel, d.walked_rels, p.query.keywords, matches=matches,
                                imports=imports)
    out = feedback_mod.apply_lifts(out, lifted)
    return out, feedback_mod.Feedback(v, shifts, lifted)


def _gaps(keywords: Sequence[Keyword], corpus: Corpus, matches: Mapping[str, FileMatch],
          docs: Sequence[Document], cache: Optional[Any]) -> tuple[Keyword, ...]:
    """The keywords no file read holds, in path or content. A module path made from a
    dotted name (``cur_model._meta`` -> ``cur_model/_meta``: no file extension) is a gap
    only when the dotted spelling is in no file either - a gap is a claim, and the task
    wrote it so; a plural word only when its singular is in none (``lists`` where files
    say ``list``). That spelling is counted like any keyword (through the index if any)."""
    if not corpus.idfs:
        return ()
    # (A stem-only name that names no file is no gap: it was a guess at a file name,
    # with no words to miss and no synonyms to try. Nor is a name the task's own code
    # defines - a reproduction's ``feeder()``: that no file holds it says nothing.)
    missing = [i for i, kw in enumerate(keywords)
               if not kw.stem_only and not kw.task_defines
               and not any(m.counts[i] or m.in_path[i] for m in matches.values())]
    others = {i: alt for i, alt in ((i, _other_spelling(keywords[i])) for i in missing) if alt is not None}
    held = held_by_any(docs, list(others.values()), cache) if others else ()
    spelled = {i for i, h in zip(others, held) if h}
    return tuple(keywords[i] for i in missing if i not in spelled)


def _other_spelling(kw: Keyword) -> Optional[Keyword]:
    """The spelling that, held by a file, makes ``kw`` no gap: a module path made from a
    dotted name, as the task wrote it (``cur_model._meta``); a plain plural word's
    singular (a file holding ``list`` holds a form of ``lists``: searching synonyms of
    it would leave the task's own word for guesses). Only a plural's: a stem cut from
    any word lands inside others (``retry`` -> ``retr`` in ``retrieve``, ``ready`` ->
    ``read`` in ``thread``), and a true gap would go unsaid. None: ``kw`` has no other."""
    text = kw.text
    if kw.kind == Kind.PATH and "/" in text and "." not in text.rsplit("/", 1)[-1]:
        return make_keyword(normalize(text).replace("/", "."), Kind.PATH)
    if kw.kind == Kind.WORD and not kw.stemmed:
        singular = singular_of(normalize(text))
        if singular is not None:
            return make_keyword(singular, Kind.WORD)
    return None


def _judged(scored: Sequence[Scored], judgements: Mapping[str, float]) -> list[Scored]:
    """The caller's scores replace the tool's for the files it judged; best first."""
    out = []
    for s in scored:
        if s.rel in judgements:
            v = judgements[s.rel]
            s = _rescored(s, v, (Signal(SignalKind.JUDGED, value=v),))
        out.append(s)
    out.sort(key=lambda s: (-s.score, -s.raw, s.rel))
    return out


def _names_the_task(m: FileMatch, keywords: Sequence[Keyword]) -> bool:
    """The file defines, or its path names, a keyword the task named outright: following
    an import to it is likely to pay (any import of a large tree matches some word)."""
    return any(kw.kind in NAMED_KINDS and (m.defines[i] >= 1.0 or m.in_path[i] >= 1.0)
               for i, kw in enumerate(keywords))


def _in_view(ev: Evaluation, d: Dispatched) -> tuple[str, ...]:
    """The best EXCLUDE_WINDOW files the cycle may show (not set aside, or lifted back by
    judgements), best first."""
    return tuple(s.rel for s in islice((s for s in ev.scored if s.rel not in d.hidden or s.rel in ev.risen),
                                       EXCLUDE_WINDOW))


def _expand_targets(ev: Evaluation, keywords: Sequence[Keyword], seen: set[str],
                    in_view: Sequence[str]) -> tuple[str, ...]:
    """Files the leading files import or are imported by that name the task, never in
    view (``in_view``: :func:`_in_view` of this cycle, ``seen``: of earlier ones), and
    code (EXPAND_ROLES): a test that imports the leading test's module is the next
    test, not the fix."""
    shown = set(in_view)
    out: list[str] = []
    for s in ev.scored[:EXPAND_FROM_TOP]:
        if s.score < RELATED:
            continue
        for r in ev.related.get(s.rel, ()):
            m = ev.matches.get(r)
            if m is not None and r not in seen and r not in shown and r not in out \
                    and _names_the_task(m, keywords) and file_role(r)[0] in EXPAND_ROLES \
                    and not imports_mod.own_package_index(r, s.rel):
                out.append(r)
    return tuple(out[:MAX_EXPAND])


def _refine(p: Plan, ev: Evaluation, d: Dispatched, env: Env, expand_to: Sequence[str]) -> NextQuery:
    """REFINE: learned vocabulary, synonyms for gaps, excludes, focus areas.

    Vocabulary is learned from the files that lead the ranking by the scorer's own
    standing (how close each comes to the best file), whatever the calibrated score says
    about the ranking as a whole: a ranking the tool is unsure of is where the codebase's
    own terms are needed most."""
    top = list(islice((s.rel for s in ev.relative if s.role in LEARN_ROLES), LEARN_MAX_FILES))
    learned = learn_vocabulary(ev.relative, {r: d.by_rel[r].head for r in top if r in d.by_rel}, d.docs,
                               p.query.keywords, presence=getattr(env.cache, "presence", None))
    syns = synonym_keywords(ev.gaps, env.synonym_runs, p.query.keywords,
                            lambda kws: held_by_any(d.docs, kws, env.cache)) if ev.gaps else []
    syns += message_pieces(ev.gaps, list(p.query.keywords) + syns)
    syns += name_pieces(ev.gaps, list(p.query.keywords) + syns)
    lam = coverage_share(p.query.keywords, ev.corpus)
    # Excludes follow the standing, not the calibrated score: on a ranking the tool is
    # unsure of every shown file scores below 0.2, and the best of them are still the
    # candidates to search again (a judged-irrelevant file stands at the caller's score).
    # The files weighed are the best EXCLUDE_WINDOW not yet set aside, whatever --limit
    # shows: the limit is for reading, never a change to the search.
    window = set(_in_view(ev, d))
    # A file holding a keyword the caller gave is never set aside: the caller named it.
    given = [i for i, k in enumerate(p.query.keywords) if k.kind == Kind.GIVEN]
    named = {rel for rel, m in ev.matches.items()
             if any(m.counts[i] or m.in_path[i] or m.defines[i] for i in given)} if given else set()
    standing = [s for s in ev.relative if s.rel in window and s.rel not in named]
    return refine_query(p.query.patterns, p.query.keywords, p.query.excludes, standing, ev.gaps, learned,
                        syns, expand_to, learned_weight=KIND_WEIGHTS[Kind.LEARNED] * lam,
                        set_aside=tuple(r for r in p.query.set_aside if r not in ev.risen))


def _change(p: Plan, nq: NextQuery) -> Change:
    """What the next query does differently from this one, in words."""
    have = {normalize(k.text) for k in p.query.keywords}
    nxt = {normalize(k.text) for k in nq.keywords}
    adds = []
    for k in nq.keywords:
        if normalize(k.text) in have:
            continue
        adds.append(_added(k))
    drops = tuple(k.text for k in p.query.keywords if normalize(k.text) not in nxt)
    new_excludes = tuple(e for e in nq.set_aside if e not in p.query.set_aside)
    return Change(tuple(adds), drops, new_excludes, nq.focus_areas)


def _added(k: Keyword) -> str:
    """A keyword the next query adds, with where it came from."""
    if k.translated and k.group:
        return _translation(k)
    if k.kind != Kind.SYNONYM or not k.group:
        return f"{k.text} ({k.kind.value})"
    text, group = normalize(k.text), normalize(k.group)
    if text == base_form(group):
        return f"{k.text} (stem of {k.group})"
    if " " in text and text in group:
        return f"{k.text} (part of the message {k.group!r})"
    if _is_piece(k.text, k.group):
        # (a trial read "HTTP_PORT_NUMBER (synonym of SERVER_HTTP_PORT_NUMBER)" as a claim)
        return f"{k.text} (part of {k.group})"
    return f"{k.text} (synonym of {k.group})"


def _is_piece(text: str, group: str) -> bool:
    """Whether ``text``'s words are a run of ``group``'s, fewer (``HTTP_PORT_NUMBER`` of
    ``SERVER_HTTP_PORT_NUMBER``, ``HttpPort`` of ``ServerHttpPort``; never ``id`` of
    ``uuid`` or ``ctor`` of ``factory``)."""
    part, whole = split_identifier(text), split_identifier(group)
    return 0 < len(part) < len(whole) and any(whole[i:i + len(part)] == part
                                              for i in range(len(whole) - len(part) + 1))


def _translation(k: Keyword) -> str:
    """A keyword the CJK glossary gave, with the task's term: "token (from 令牌)"."""
    return f"{k.text} (from {k.group})"


def _translations(keywords: Sequence[Keyword]) -> tuple[str, ...]:
    return tuple(_translation(k) for k in keywords if k.translated and k.group)


def _declared_option(doc: Optional[Document], task: str) -> str:
    """The task's long option (``--files-without-match``) that ``doc`` declares among the
    program's options (lang.option_table), or "". Not when the task names the file: a
    report about the declaration (``declared with BoolVar in cmd/flags.go``) points at it."""
    if doc is None or not task or "--" not in task or doc.rel.rpartition("/")[2] in task:
        return ""
    quoted = [o for o in LONG_OPTION_RE.findall(task) if o.isascii()]
    if not quoted:
        return ""
    table = option_table(doc.data)
    return next((o for o in quoted if o.lower().encode() in table), "")


def _stop_notes(ev: Evaluation, d: Dispatched, top: str, state: LoopState, judgements: Mapping[str, float],
                task: str, keywords: Sequence[Keyword]
                ) -> tuple[Optional[handoff_mod.Handoff], Optional[handoff_mod.Readers]]:
    """What a clear stop's note names beside the first file (handoff.py), among the files
    ranked after it that the caller neither left out nor judged: where the first file's
    definitions of the task's quoted names send the work (a file an import links to it
    first on a tie), else where the values they only store are read (a setter's readers).
    A name the task's traceback shows as a frame is not read: the traceback already says
    where its work went (a trial's ``readLib`` raised in its own line, and the hint named
    the module it would have called next)."""
    first = d.by_rel.get(top)
    frames = traceback_frames(task)
    quoted = tuple(q for q in ev.assessment.evidence.defines if q not in frames) \
        if ev.assessment.evidence is not None else ()
    # ... and the plain words the task's own code calls that the first file defines (a
    # trial's ``req.matches(&v)``: semver's ``matches`` hands its work to ``eval.rs``)
    called = called_in_code(task)
    m = ev.matches.get(top)
    if called and m is not None and len(m.defines) == len(keywords):
        quoted += tuple(k.text for i, k in enumerate(keywords) if m.defines[i] >= 1.0
                        and k.text.lower() in called and k.text not in quoted and k.text not in frames)
    if first is None or not quoted or first.changed:
        return None, None  # (edited while the cycle ran: its text is not what was ranked)
    judged = frozenset(judgements).union(rel for rel, e in state.scores.items() if e.judged)
    after = [(s.rel, d.by_rel[s.rel].low) for s in ev.scored[1:handoff_mod.CANDIDATES + 1]
             if s.rel in d.by_rel and s.rel not in d.hidden and s.rel not in judged]
    text = decode_text(first.data)
    title = frozenset(w.lower() for w in re.findall(r"\w+", task.lstrip().split("\n", 1)[0]))
    handed = handoff_mod.find(top, text, first.low, quoted, after, linked=frozenset(ev.related.get(top, ())),
                              titled=title)
    if handed is not None:
        return handed, None
    spellings = {k.text: tuple(dict.fromkeys(n.decode("utf-8", "ignore") for n in k.needles if n))
                 for k in keywords if k.text in quoted}
    return None, handoff_mod.find_readers(top, text, spellings, after)


def _results(p: Plan, ev: Evaluation, d: Dispatched, cache: Optional[Any] = None) -> tuple[ResultView, ...]:
    quoted = quoted_lines(p.task)
    return tuple(build_result(s, d.by_rel.get(s.rel), p.query.keywords, ev.matches.get(s.rel),
                              ev.related.get(s.rel, ()), _ranked(cache, d.by_rel.get(s.rel)), quoted,
                              ev.corpus.idfs)
                 for s in ev.shown)


def _ranked(cache: Optional[Any], doc: Optional[Document]) -> Optional[tuple[list[str], bool]]:
    """report.ranked_names of a file the index serves: kept there by an earlier cycle or
    task, else made now and kept (None without the index: build_result makes the tags)."""
    if cache is None or doc is None:
        return None
    got = cache.fact(doc.rel, NAMES_FACT)
    if isinstance(got, list) and len(got) == 2 and isinstance(got[0], list) and isinstance(got[1], bool) \
            and all(isinstance(n, str) for n in got[0]):
        return got[0], got[1]
    made = ranked_names(decode_text(doc.head), doc.rel)
    cache.keep_fact(doc.rel, NAMES_FACT, "", [made[0], made[1]])
    return made


# An unjudged cycle after the first, on the loop's own query, moves a file it scores
# this share of the way from its standing so far to its new one: the new query is partly
# learned (a guess), the first was the task's own words, and one guess should not undo
# their order. A file new to the loop moves as far from nothing (no keyword of the earlier
# queries found it): else a learned term's new files would pass the files the task's own
# words ranked, as the seed's learned ``logger`` and ``cors`` passed its middleware index.
# The caller's judgements and words (--judge, --keywords, --task) replace the old
# standing as before. On the dev splits (bench/localize.py, against taking the new
# standing whole): Python final Acc@1 / @5 / @10 60.7 / 83.2 / 88.3 -> 61.7 / 83.2 / 88.3
# (11905 and 16503 keep their first file, 14667, 18057 and 5413 their place), other
# languages unchanged at 36.1 / 80.6 / 88.0 with fewer losses (readme-stats-99's second
# file 17th -> 10th); new files moved from nothing or taking their standing whole rank
# every gold file alike. A share of 1/3 kept Python's figures and lost a file of
# dayjs-1010 from the top 5; moving only up, never down, the same.
LATER_CYCLE_SHARE = 0.5


def _later(before: float, new: float) -> float:
    """Where an unjudged, unsteered later cycle moves a value: LATER_CYCLE_SHARE of the
    way from ``before`` to ``new`` (a file's standing, a lowered confidence)."""
    return before + LATER_CYCLE_SHARE * (new - before)


def merge_scores(state: LoopState, ev: Evaluation, judgements: Mapping[str, float],
                 cycle_no: int, steered: bool = False,
                 stamps: Mapping[str, str] = MappingProxyType({}),
                 left_out: Optional[Callable[[str], bool]] = None) -> dict[str, ScoreEntry]:
    """The loop's memory of every file scored so far (the seed's mergeContext).

    Across cycles files are ordered by their standing (the scorer's relevance against
    the best file of the cycle that scored them): a file once at the rubric's high
    relevance by standing keeps its best entry; others move LATER_CYCLE_SHARE of the way
    to the latest (a weak match of cycle 1 that the refined query no longer supports
    sinks, without one guessed query undoing the task's order). The caller's
    judgements override both and are never lost. ``stamps`` (:func:`_stamps` of the files
    scored) are kept with each entry: a file changed since its entry was made is scored
    as if new (its old entry was about content that may be gone).
    """
    standing = {s.rel: s.score for s in ev.relative}
    scores = dict(state.scores)
    # A cycle that used the caller's judgements knows more than the cycles before it:
    # its entries replace theirs (a file it moves down is not held up by an old entry).
    informed = ev.feedback is not None and not ev.feedback.verdicts.empty
    # The calibration is of a first cycle's evidence: a later, partly guessed query may
    # reorder files but never claims more than the loop already did - a file keeps at
    # most its earlier rubric score, a new file at most the best score so far.
    # A short request's scores are the scorer's own claim of coverage, not calibrated:
    # a later cycle's stands as it is. So does a cycle the caller ``steered`` with words
    # of its own (--keywords, --task): its query is no guess of the loop's, and a file
    # those words find shows what they give it (a trial's `--keywords adapter` found
    # adapters.js first by standing, shown at its cycle-1 0.03).
    best_so_far = max((e.score for e in state.scores.values() if not e.judged), default=None)
    # When the loop is unsure of its ranking (the last cycle's confidence below the
    # rubric's "related"), an unjudged cycle's query is a guess learned from files that
    # are likely wrong: it may add files and raise them, never demote what the loop found.
    # (decide.UNSURE_BELOW; on the dev splits, bench/localize.py: Python final Acc@5 / @10
    # 81.8 / 88.3 -> 82.2 / 88.8, other languages Acc@5 75.9 -> 75.0, R@10 93.0 -> 93.3;
    # the final ranking is then never below cycle 1's.) A cycle the caller steered is no
    # such guess: its ranking replaces what an unsure loop held (a trial's ``--keywords``
    # cycle showed three files at their cycle-1 scores above its own second file).
    unsure = not informed and not steered and state.last is not None \
        and state.last.decision.confidence < UNSURE_BELOW
    renewed: set[str] = set()
    for s in ev.scored:
        prev = scores.get(s.rel)
        stamp = stamps.get(s.rel, "")
        changed = prev is not None and not prev.judged and bool(prev.stamp and stamp) \
            and _stamp_changed(prev.stamp, stamp)
        if changed:
            prev = None
        new_standing = standing.get(s.rel, s.score)
        if prev is not None and (prev.judged or (not informed and prev.rank_key >= new_standing
                                                  and (unsure or prev.rank_key >= HIGH_RELEVANCE))):
            if stamp and not prev.stamp and not prev.judged:
                scores[s.rel] = replace(prev, stamp=stamp)  # (an entry of an older state: seen from now on)
            continue
        cap = prev.score if prev is not None else best_so_far
        shown = s.score if cap is None or s.rel in judgements or not ev.calibrated or steered or informed \
            else min(s.score, cap)
        # (A file changed on disk since is read afresh: its earlier standing was about text
        # that may be gone, and it did not stand nowhere: the file being edited is often
        # the task's. It takes its new standing.)
        if not changed and not informed and not steered and cycle_no > 1:  # (a judged entry was kept above)
            before = prev.rank_key if prev is not None else 0.0  # (a file new to the loop stood nowhere)
            new_standing = _later(before, new_standing)
        scores[s.rel] = ScoreEntry(shown, cycle_no, reason_text(s.signals), standing=new_standing, stamp=stamp)
        if changed:
            renewed.add(s.rel)
    if not informed and not steered and not judgements and cycle_no > 1:
        scores = _first_kept_first(shown_scores(state.scores, left_out), scores, {s.rel for s in ev.scored},
                                   renewed)
    return apply_judgements(scores, judgements, cycle_no)


def _first_kept_first(before: Mapping[str, ScoreEntry], scores: dict[str, ScoreEntry],
                      read: Container[str], renewed: Container[str]) -> dict[str, ScoreEntry]:
    """``scores`` with the loop's first file still first: in an unjudged, unsteered later
    cycle it keeps the better of its entries, and when another file rises past it, its
    standing is raised just above that file's (the others keep theirs, and their order).
    The first file is where the caller starts reading, and the later query is partly a
    guess learned from the best files, which lifts them most: on the dev splits the only
    first files it replaced were a near tie it flipped (tokio-6339's macro file, 0.9485 ->
    0.974 against the leader's kept 0.97, on proc-macro words learned from the rival) and
    a pair of fix files it swapped. ``before`` is the answer the caller saw (less its
    ``--exclude``); a first file this cycle did not ``read`` (outside narrowed patterns,
    set aside, gone) keeps its entry and holds no other, and one changed on disk since
    (``renewed``: read afresh) is not held. Standings stay at most 1.0 (a state's loader
    refuses more)."""
    first = next((rel for rel, _shown, e in ranked_scores(before) if not e.judged), None)
    if first is None or first not in read or first in renewed or first not in scores:
        return scores
    now, old = scores[first], before[first]
    lead = now if now.rank_key >= old.rank_key else replace(old, stamp=now.stamp or old.stamp)
    rival = max((e.rank_key for rel, e in scores.items() if rel != first and rel in read and not e.judged),
                default=None)  # (a file this round did not read kept its place: it rose past none)
    if rival is not None and rival >= lead.rank_key:
        # (At 1.0, only an older or edited state's, the tie goes to the earlier cycle.)
        lead = replace(lead, standing=min(math.nextafter(rival, math.inf), 1.0))
    return {**scores, first: lead}


def _is_dir(root: str, rel: str) -> bool:
    """Whether ``rel`` (a tree path) names a directory under ``root`` now."""
    return os.path.isdir(os.path.join(root, *rel.split("/")))


def with_changes_marked(state: LoopState) -> tuple[LoopState, int]:
    """A finished loop's answer with the results whose file changed since it was scored
    (size, mtime or ctime no longer what its memory kept) marked: their quoted ``lines``
    left out (they may quote code that is no longer there) and ``reason`` saying so; and
    how many. A replay shows what the loop found, never a quote the file no longer holds."""
    last = state.last
    if last is None:
        return state, 0
    root_real = fsafe.resolved(state.root)
    changed = set()
    for r in last.results:
        entry = state.scores.get(r.id)
        if entry is None or not entry.stamp:
            continue
        try:
            st = _tree_stat(state.root, root_real, r.id)
        except (OSError, ValueError):
            st = None
        if st is None or _stat_changed(entry.stamp, st):
            changed.add(r.id)
    if not changed:
        return state, 0
    results = tuple(replace(r, lines=(), reason=f"{r.reason}; changed since this answer")
                    if r.id in changed and not r.reason.endswith(CHANGED_IN_CYCLE) else r for r in last.results)
    return state.with_(last=replace(last, results=results)), len(changed)


def _still_a_file(root: str, root_real: str, rel: str, max_bytes: int) -> bool:
    """Whether ``rel`` (a tree path) is still a file a walk could return: it exists, is
    (or links, inside the tree ``root_real``, the resolved root, to) a regular file, and
    is within ``max_bytes``. A file replaced by a directory, a FIFO or a link leading
    out, or grown past the size limit, is no longer what its entry says. One that cannot
    be looked at now (a folder's permissions taken away for a while) is not gone: the
    caller's judgements of it stay in the answer."""
    try:
        st = _tree_stat(root, root_real, rel)
    except PermissionError:
        return True
    except (OSError, ValueError):
        return False
    return st is not None and stat_mod.S_ISREG(st.st_mode) and st.st_size <= max_bytes


def _tree_stat(root: str, root_real: str, rel: str) -> Optional[os.stat_result]:
    """The stat of what the tree path ``rel`` leads to, None when it leads out of the tree
    (``root_real``, the resolved root) or nowhere; OSError when it cannot be looked at."""
    real = fsafe.resolve(os.path.join(root, *rel.split("/")))
    if real is None or not fsafe.inside(real, root_real):
        return None
    return os.stat(real)


def forget_stale(scores: Mapping[str, ScoreEntry], ev: Evaluation, d: Dispatched, root: str,
                 max_bytes: int = MAX_FILE_BYTES) -> dict[str, ScoreEntry]:
    """The loop's memory less what the tree no longer supports: a file this cycle read
    that now matches nothing (its evidence was edited away; a file the caller judged
    keeps the judgement), and a file that no longer is one a walk could return (judged
    or not): gone, replaced by a directory, a FIFO or a link leading out of the tree, or
    grown past the size limit. A file the walk did not reach but that still is such a
    file (outside narrowed patterns, ignored since) keeps its entry - unless it changed
    since it was scored and is not judged (its score was of content that may be gone: an
    emptied file stood in ``context`` at 0.98; the walk scores it again when it reaches
    it), or it now is a link to a file the walk read, put in its place, and not judged:
    one file, one id, and the file's own entry is its walked name's. (A plain file is
    never dropped so, nor a judged one: the walk may read another name of it, a link or
    a hard link, when ``--patterns`` select that one.)"""
    walked = set(d.walked_rels)
    scored = {s.rel for s in ev.scored}
    root_real = fsafe.resolved(root)
    read_ids: list[set] = []  # (made on first need: a remembered file that now is a link)

    def read(identity: tuple[int, int]) -> bool:
        if not read_ids:
            read_ids.append({doc.identity for doc in d.docs if doc.identity is not None})
        return identity in read_ids[0]

    out: dict[str, ScoreEntry] = {}
    for rel, e in scores.items():
        if rel in ev.matches or rel in scored:
            out[rel] = e
        elif rel in walked:
            if e.judged:
                out[rel] = e
        elif _still_a_file(root, root_real, rel, max_bytes) and (
                e.judged or not (_links_to(root, rel, read) or _changed_since(root, root_real, rel, e.stamp))):
            out[rel] = e
    return out


def _changed_since(root: str, root_real: str, rel: str, stamp: str) -> bool:
    """Whether the file ``rel`` is no longer what its entry's ``stamp`` saw (size, mtime
    or ctime); an entry without one (an older state's) or a file that cannot be looked at
    now is not known to have changed."""
    if not stamp:
        return False
    try:
        st = _tree_stat(root, root_real, rel)
    except (OSError, ValueError):
        return False
    return st is not None and _stat_changed(stamp, st)


def _stat_changed(stamp: str, st: os.stat_result) -> bool:
    """Whether a file's stat now differs from its entry's ``stamp`` on the stat fields."""
    return _stamp_changed(stamp, _stat_stamp(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_dev, st.st_ino),
                          stat_only=True)


def _links_to(root: str, rel: str, read: Callable[[tuple[int, int]], bool]) -> bool:
    """Whether ``rel`` is now a symbolic link to a file the walk read (``read``: whether a
    (device, inode) is one of those)."""
    path = os.path.join(root, *rel.split("/"))
    try:
        if not os.path.islink(path):
            return False
        st = os.stat(path)
    except (OSError, ValueError):
        return False
    return read((st.st_dev, st.st_ino))


def _guessed_confidence(confidence: float, state: LoopState, cycle_no: int, callers: bool) -> float:
    """The confidence of a cycle after the first that only the loop's own guesses drive:
    its query adds terms learned from its best files and synonyms of gap words, whose
    evidence the calibration never saw (trust.py is fitted on a task's own words). Such a
    query lowers the confidence the way it moves a score (LATER_CYCLE_SHARE of the way),
    and never raises it above the last cycle's estimate: a trial's plain second call left
    every score as it was and took the confidence from 0.405 to 0.601. On the dev splits'
    283 later cycles, 251 of them raised it (to 0.534 on average, 0.506 before) with the
    first file right in 47.8%; capped, the Brier score 0.2303 -> 0.2268. A cycle the
    caller drives (``callers``: --judge, --keywords, --task, --patterns, --exclude) sets
    it afresh, and so does any cycle after one that found no file to estimate."""
    if cycle_no <= 1 or callers or state.last is None or not state.last.results:
        return confidence
    earlier = state.last.decision.confidence
    if confidence >= earlier:
        return earlier
    return round(_later(earlier, confidence), 3)


def apply_judgements(scores: Mapping[str, ScoreEntry], judgements: Mapping[str, float],
                     cycle_no: int) -> dict[str, ScoreEntry]:
    """The caller's scores replace the heuristic ones, with the reason saying so."""
    out = dict(scores)
    for rel, v in judgements.items():
        prev = out.get(rel)
        out[rel] = ScoreEntry(v, prev.cycle if prev else cycle_no, Signal(SignalKind.JUDGED, value=v).text(),
                              judged=True)
    return out


def _hint_item(r: ResultView) -> dict:
    """The seed's result contract for hints.py: text stands for what the file matched."""
    return {"id": r.id, "title": r.title, "summary": "\n".join(r.lines), "tags": list(r.tags),
            "score": r.score, "related": list(r.related),
            "text": r.id + " " + " ".join(r.matched) + " " + " ".join(r.tags)}


def run_cycle(root: str, state: LoopState, request: Request, judgements: Mapping[str, float],
              env: Env = Env()) -> Outcome:
    """Run the next cycle over ``root``: plan, dispatch, evaluate, refine, decide."""
    p = plan(state, request, judgements)
    d = dispatch(root, p, env, state.max_file_bytes)
    ev = evaluate(p, d, state, env)
    seen = set(state.seen_ids)
    in_view = _in_view(ev, d)
    left_out = excluded_by(root, p.query.excludes)
    expand_to = tuple(x for x in _expand_targets(ev, p.query.keywords, seen, in_view)
                      if left_out is None or not left_out(x))  # (never a file the caller left out)
    nq = _refine(p, ev, d, env, expand_to)
    results = _results(p, ev, d, env.cache)
    new_ids = [rel for rel in in_view if rel not in seen]
    named_gaps = tuple(k.text for k in ev.gaps if k.kind in NAMED_KINDS)
    # The decision reads the scores the loop will show (this cycle merged with earlier
    # ones), so that "sufficient" never stands beside a best file the rubric calls weak.
    steered = p.cycle > 1 and bool(request.keywords or request.task)
    stamps = _stamps(d, frozenset(s.rel for s in ev.scored), state.scores)
    scores = forget_stale(merge_scores(state, ev, p.judgements, p.cycle, steered, stamps, left_out), ev, d, root,
                          state.max_file_bytes)
    ranked = ranked_scores(scores)
    # The decision reads the ranking as the answer shows it: without the files the
    # caller's excludes cover (a glob's too), which the loop remembers but never shows.
    shown = shown_scores(scores, left_out)
    ranked_shown = ranked_scores(shown) if shown is not scores else ranked
    judged_lead = ranked_shown[0] if ranked_shown and ranked_shown[0][2].judged else None
    # (The file that led before, for a cycle the caller's words start: did they put a new one first?)
    before = next((rel for rel, _s, e in ranked_scores(shown_scores(state.scores, left_out))
                   if not e.judged), "") if steered else ""
    # The files to judge next: the best of the ranking the caller has not judged. A file
    # the loop set aside (shown weak in an earlier cycle) keeps its place in the ranking:
    # when it stands among the next best, it is the next to read.
    # Of the role of the files judged relevant first, then source files, among the
    # NEXT_ROLE_WINDOW best (a fix's next file plays the part of its first: a trial's
    # judged ``src/manipulation.js`` named a test copy of the library next, another's only
    # source file its tests and changelog); any, when none was judged relevant.
    window = list(islice((rel for rel, _s, e in ranked_shown if not e.judged), NEXT_ROLE_WINDOW))
    roles = {file_role(rel)[0] for rel, _s, e in ranked_shown if e.judged and e.score >= HIGH_RELEVANCE}
    if roles:
        window = sorted((rel for rel in window if file_role(rel)[0] in roles | {SOURCE_ROLE[0]}),
                        key=lambda rel: file_role(rel)[0] not in roles)  # (stable: rank order kept)
    unjudged = tuple(window[:NEXT_UNJUDGED])
    shown_score = {rel: sc for rel, sc, _e in ranked_shown if rel in unjudged}  # (as ``ranking`` shows it)
    # (A cycle informed by judgements scores every file it read, the caller's exact
    # excludes too: the file the decision names is never one the caller left out.)
    top = next((s.rel for s in ev.scored if s.rel in shown), "")
    # The confidence and a clear lead are about the cycle's first file: when the caller
    # excluded that one, the file the decision names shows its own score instead.
    assessed = not ev.scored or ev.scored[0].rel == top
    confidence = ev.assessment.confidence if assessed else round(shown[top].score, 3) if top in shown else 0.0
    confidence = _guessed_confidence(confidence, state, p.cycle, request.steers_query or bool(p.judgements))
    runner_up = next(((rel, sc) for rel, sc, e in ranked_shown if rel != top and not e.judged), ("", 0.0))
    if runner_up[1] < RELATED:
        runner_up = ("", 0.0)
    # (Only where the decision can stop on a clear first file: the note belongs to that stop.)
    stop_note = ev.assessment.clear and assessed and not ev.assessment.generic and not steered
    handed, read_in = _stop_notes(ev, d, top, state, p.judgements, p.task, p.query.keywords) \
        if stop_note else (None, None)
    decision = decide(Evidence(
        cycle=p.cycle, max_cycles=p.max_cycles, results=len(ev.scored), searched=len(d.docs),
        narrowed=not any(q in EVERY_FILE for q in p.query.patterns) or bool(p.query.excludes),
        confidence=confidence, clear=ev.assessment.clear and assessed, generic=ev.assessment.generic,
        program_top=ev.assessment.evidence is None or ev.assessment.evidence.program,
        crowd=max(ev.assessment.evidence.crowd - 1, 0) if ev.assessment.evidence is not None else 0,
        high=sum(1 for e in shown.values() if e.score >= HIGH_RELEVANCE),
        best=max((e.score for e in shown.values()), default=0.0), critical_gaps=named_gaps,
        new_ids=len(_new_in_answer(ranked_shown, d.hidden, seen)), synonyms=nq.synonyms, learned=nq.learned,
        expand_to=expand_to,
        top=top, top_why=ev.assessment.why, runner_up=runner_up[0], runner_up_score=runner_up[1],
        steered=steered, steered_lead=steered and top != before, judged_now=bool(judgements),
        judged_top=judged_lead[0] if judged_lead else "", judged_score=judged_lead[1] if judged_lead else 0.0,
        # (Every file the caller judged at the rubric's top, not the first alone: a trial's
        # two judged files read as one of them lost.)
        judged_also=tuple((rel, sc) for rel, sc, e in ranked_shown[1:] if e.judged and sc >= IMPLEMENTS)
        if judged_lead else (),
        unjudged_next=unjudged, unjudged_scores=tuple(shown_score[rel] for rel in unjudged),
        # (Its place in the ranking as shown, judged files counted: when a judged file
        # leads, the sentence is the caller's own word and gives no place.)
        top_rank=next((i for i, (rel, _s, _e) in enumerate(ranked_shown, 1) if rel == top), 0) if p.cycle > 1 else 0,
        handoff=handed.target if handed else "", handoff_names=handed.names if handed else (),
        handoff_callers=handed.callers if handed else (),
        readers=read_in.files if read_in else (), reader_names=read_in.names if read_in else (),
        declared_option=_declared_option(d.by_rel.get(top), p.task),
    ))
    hints = env.compute_hints([_hint_item(r) for r in results], [k.text for k in p.query.keywords]) \
        if env.compute_hints else {}
    replaced = {w for k in nq.keywords if k.kind == Kind.SYNONYM and k.group for w in
                (normalize(k.group), *normalize(k.group).split())}
    gaps_shown, prose_gaps = _gaps_shown(ev.gaps, replaced, has_body="\n" in p.task.strip())
    view = CycleView(
        cycle=p.cycle, max_cycles=p.max_cycles, patterns=p.query.patterns,
        keywords=tuple(k.text for k in p.query.keywords), excludes=p.query.excludes, set_aside=p.query.set_aside,
        stats=replace(d.stats, files_matched=len(ev.matches)),
        results=results, decision=decision, change=_change(p, nq),
        gaps=gaps_shown, prose_gaps=prose_gaps,
        related=expand_to if decision.action == "expand" else (), hints=hints,
        translated=_translations(p.query.keywords),
    )
    return Outcome(view, next_state(state, p, nq, view, new_ids, kept_scores(scores, ranked, SCORES_KEPT)))


def _gaps_shown(gaps: Sequence[Keyword], replaced: Container[str] = (),
                has_body: bool = True) -> tuple[tuple[str, ...], int]:
    """The gaps as the answer lists them: the task's names and messages first (a quoted
    name no file holds is news), then its words, the title's before the body's (a
    trial's agent saw only ``sorry``, ``strange`` there and read the field as noise);
    and how many at the end are plain words of the body, which the default output
    leaves to --full: prose no file holds (``practically``, ``incredible``,
    ``peculiar``: two trials' agents read them as noise) - unless the next query
    searches another spelling of it (``replaced``: the seed's "rate limiting", searched
    as ``throttle``). A task of one line is all title: none of its words is prose."""
    def named(k: Keyword) -> bool:
        return k.kind in NAMED_KINDS or k.kind == Kind.MESSAGE

    def prose(k: Keyword) -> bool:  # (a title's word weighs more than its kind's weight)
        return has_body and not named(k) and k.weight <= KIND_WEIGHTS.get(k.kind, 1.0) + 1e-9 \
            and normalize(k.text) not in replaced

    kept = [(i, k) for i, k in enumerate(gaps) if k.kind not in DERIVED_KINDS and not is_cjk_piece(k)]
    kept.sort(key=lambda ik: (not named(ik[1]), prose(ik[1]), -ik[1].weight, ik[0]))
    return tuple(k.text for _i, k in kept), sum(1 for _i, k in kept if prose(k))


def _new_in_answer(ranked: Sequence[tuple[str, float, ScoreEntry]], hidden: frozenset[str],
                   seen: set[str]) -> list[str]:
    """The files the loop's answer (its ranking, earlier cycles merged in) shows in its
    best EXCLUDE_WINDOW that no cycle showed before, among its first NEW_FILE_PLACES or at
    NEW_FILE_SHARE of its first file's score or more: a later cycle whose answer holds
    none changed nothing an agent reads (``saturated``), whatever its own query turned up
    below the answer's window or at its tail."""
    window = list(islice(((rel, sc, e.judged) for rel, sc, e in ranked if rel not in hidden), EXCLUDE_WINDOW))
    floor = window[0][1] * NEW_FILE_SHARE if window else 0.0
    out, places = [], 0
    for rel, sc, judged in window:
        # (The places the results show: the best files the caller has not judged.)
        if rel not in seen and (places < NEW_FILE_PLACES or sc >= floor):
            out.append(rel)
        places += not judged
    return out


def kept_scores(scores: Mapping[str, ScoreEntry], ranked: Sequence[tuple[str, float, ScoreEntry]],
                keep: int) -> dict[str, ScoreEntry]:
    """The scores the state keeps: the first ``keep`` files of ``ranked`` (the ranking of
    ``scores``, state.ranked_scores) and every judged file."""
    if len(scores) <= keep:
        return dict(scores)
    out = {rel: e for rel, _s, e in ranked[:keep]}
    out.update((rel, e) for rel, e in scores.items() if e.judged)
    return out


def next_state(state: LoopState, p: Plan, nq: NextQuery, view: CycleView, new_ids: Sequence[str],
               scores: Mapping[str, ScoreEntry]) -> LoopState:
    """The state after a cycle: the old state and the cycle's outcome (``scores``: the
    loop's memory merged with this cycle's, :func:`merge_scores`)."""
    return state.with_(
        task=p.task, max_cycles=p.max_cycles, cycle=p.cycle, done=view.decision.done,
        proposal=Query(nq.patterns, nq.keywords, nq.excludes, nq.set_aside),
        scores=dict(scores),
        judgements=dict(p.judgements),
        seen_ids=state.seen_ids + tuple(new_ids),
        pending_related=view.related,
        history=state.history + (HistoryEntry(p.cycle, view.keywords, view.stats.files_read, len(new_ids),
                                              view.results[0].score if view.results else 0.0),),
        last=view,
    )


def without_vanished(state: LoopState) -> tuple[LoopState, int]:
    """A finished loop's answer less the files that no longer exist under its root (its
    memory and its last results), and how many went; a file that is no longer one a walk
    could return (a directory, a FIFO, a link leading out, over the size limit) counts as
    gone. Files changed since are shown as scored: a finished answer is replayed, not
    searched again (``--reset`` does that)."""
    root_real = fsafe.resolved(state.root)

    def gone(rel: str) -> bool:
        return not _still_a_file(state.root, root_real, rel, state.max_file_bytes)

    lost = {rel for rel in state.scores if gone(rel)}
    last = state.last
    if last is not None:
        lost.update(r.id for r in last.results if gone(r.id))
        # (Files named only as related ones - matching no keyword, never scored - too.)
        lost_related = {x for x in {x for r in last.results for x in r.related} | set(last.related)
                        if x not in state.scores and gone(x)}
    else:
        lost_related = set()
    if not lost and not lost_related:
        return state, 0
    scores = {rel: e for rel, e in state.scores.items() if rel not in lost}
    if last is not None:
        named = sorted(rel for rel in lost if rel in last.decision.why)
        decision = last.decision if not named else \
            replace(last.decision, why=f"{last.decision.why}; since then {', '.join(named)} are gone"
                    if len(named) > 1 else f"{last.decision.why}; since then {named[0]} is gone")
        before = ranked_scores(shown_of(state))
        if before and before[0][0] in lost:
            # The confidence was the estimate for the file that is gone: the file that
            # leads now is shown with its own score, which says the same on the rubric's scale.
            now = ranked_scores(shown_of(state, scores))
            leader = now[0] if now else None
            decision = replace(decision, confidence=round(leader[1], 3) if leader else 0.0)
        out_too = lost | lost_related
        results = tuple(r if not out_too.intersection(r.related) else
                        replace(r, related=tuple(x for x in r.related if x not in out_too))
                        for r in last.results if r.id not in lost)
        last = replace(last, results=results, decision=decision,
                       related=tuple(x for x in last.related if x not in out_too))
    return state.with_(scores=scores, last=last), len(lost)


def with_hints(state: LoopState, compute_hints: Optional[Callable[..., dict]]) -> LoopState:
    """The last answer's hints computed again from its results as they stand now (files
    gone since, judgements given since): hints.py's view of what the agent is shown."""
    last = state.last
    if last is None or compute_hints is None:
        return state
    hints = compute_hints([_hint_item(r) for r in last.results], list(last.keywords))
    return state if hints == last.hints else state.with_(last=replace(last, hints=hints))


def rejudge(state: LoopState, judgements: Mapping[str, float]) -> LoopState:
    """Judgements on a finished loop: scores and the last results take the caller's
    scores; no cycle runs and the cycle count does not move."""
    merged = dict(state.judgements)
    merged.update(judgements)
    scores = apply_judgements(state.scores, merged, state.cycle)
    last = state.last
    if last is not None:
        results = sorted((r.with_score(merged[r.id], Signal(SignalKind.JUDGED, value=merged[r.id]).text()
                                       + "; " + _unjudged_reason(r.reason, state.judgements.get(r.id)))
                          if r.id in judgements else r for r in last.results), key=lambda r: (-r.score, r.id))
        # (The file that leads is the ranking's, as shown: a result's score is its own
        # cycle's, which the ranking may show lower; the sentence names what the agent sees.)
        before = ranked_scores(shown_of(state))
        now = ranked_scores(shown_of(state, scores))
        was_first = before[0][0] if before else ""
        leader = now[0][:2] if now else None
        last = replace(last, results=tuple(results), decision=_rejudged(last.decision, leader, merged, was_first))
    return state.with_(scores=scores, judgements=merged, last=last)


def _unjudged_reason(reason: str, before: Optional[float]) -> str:
    """A result's reason without the judgement an earlier call put first (a file judged
    again says the new judgement once, not each one in turn)."""
    if before is None:
        return reason
    head = Signal(SignalKind.JUDGED, value=before).text() + "; "
    return reason[len(head):] if reason.startswith(head) else reason


def _rejudged(decision: Decision, leader: Optional[tuple[str, float]], judged: Mapping[str, float],
              was_first: str = "") -> Decision:
    """A finished loop's decision once the caller judged files: the sentence says which
    file leads the ranking now (``leader``: its id and shown score), and a judged first
    file's score is the confidence."""
    if leader is None:
        return decision
    rel, shown = leader
    if rel in judged:
        why = f"after your judgements {rel} leads (judged {judged[rel]:g}); read the context"
        return replace(decision, why=why, confidence=round(judged[rel], 3))
    # A file the caller did not judge leads now: the old confidence was the estimate for
    # the file the caller overruled; the new leader's rubric score is the same estimate.
    confidence = decision.confidence if rel == was_first else round(shown, 3)
    return replace(decision, why=f"after your judgements {rel} leads ({shown:g}); read the context",
                   confidence=confidence)


def final_decision(state: LoopState) -> Optional[Decision]:
    """The decision the loop stopped with, if it stopped."""
    return state.last.decision if state.done and state.last is not None else None
