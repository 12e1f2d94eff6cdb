"""TRUST: how far a cycle's ranking can be believed, as rubric scores and one flag.

score.py's relevance is relative to the best file, so the best file always scores high
and the number says nothing about whether the tree holds an answer at all. This module
reads the same evidence (each file's raw evidence, what it matched, defines or names in
its path) and answers what an agent acts on:

* ``confidence``: the probability that the first file is one the fix changes (a
  logistic model of the first file's evidence against its rivals, fitted on dev);
* ``scores``: every file's score on the seed's rubric (0.8+ implements the target,
  below 0.5 related at most), the first file's from its probability, the others' from
  their standing against it (a monotone map of the input, so the ranking is unchanged);
* ``clear``: the answer is clear, the loop can stop after this cycle;
* ``generic``: the first file holds only plain or common words (no definition, path or
  uncommon hit of a quoted name), and it is no program file (source in a programming
  language) or another program file scores at least half as high on them; such evidence
  is never ``clear``. Plain words on which no other program file scores half as high do
  single a program file out: a report that names nothing of the code (the trials' users)
  has nothing else, and in a tree with one program file (inflect's ``__init__.py`` at
  0.93 against a changelog at 0.10) "refine" sent agents to search on.

Features of the first file (Evidence): its lead over the best rival, how many files
hold half its evidence, whether it defines a quoted name, its share of the heaviest
keywords, of the title's keywords and of the whole query, what its path names, on how
many signals it is first, whether it is source, and how short the query is.

Use: call :func:`assess` on ``rank_documents``' output (before judgements reorder it)
and :func:`calibrated` for the Scored rows with the rubric scores. The model was fitted
on cycle 1 (``bench/trust_features.py``: ``dump`` caches cycle 1 of both dev splits,
``fit`` prints the parameters, ``report`` the targets before and after); a change to
score.py or query.py shifts the features, so re-dump and refit after one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Mapping, Optional, Sequence

from .lang import language_of
from .match import FileMatch
from .query import KIND_WEIGHTS, Keyword
from .score import Corpus, Scored, coverage_share, idf, query_mass

# Keyword kinds that name something in the code outright: their hits are specific
# evidence; hits on plain words (and on learned words and synonyms) are generic.
QUOTED_KINDS = ("identifier", "path", "given", "message")
# The first file is compared with this many files after it (rival definitions, crowd).
RIVALS = 20
# A file holding at least this share of the first file's raw evidence is in its crowd:
# an answer shared with many files is no answer (counted over the first CROWD_FILES).
CROWD_SHARE = 0.5
CROWD_FILES = 200
# Plain words single out a program file no other program file scores this share of
# (score.py's relevance, to which the rubric scores shown are proportional): below it a
# rival stands at most "indirectly related" beside a first file at 0.8 or more.
RIVAL_SHARE = 0.5
# The margin (log of first raw / second raw) is capped: a lone matching file leads by this.
MARGIN_CAP = 2.0
# The rarest keywords (by idf-weighted mass) whose coverage is a feature of its own.
RARE_KEYWORDS = 3
# A quoted keyword found in more than this share of the files read is common: hitting
# it is no more specific than hitting a plain word (``self``, ``error``).
COMMON_SHARE = 0.2

# The fitted logistic model of "the first file is one the fix changes": intercept and
# one weight per Evidence.features() entry. Fit (bench/trust_features.py fit, L2 = 1) on
# cycle 1 of both dev splits together (322 issues), after this stop's ranking changes.
# With the knots below (KNOT_PRECISION 0.86), on that data: first file >= 0.8 in 52% of
# issues, gold in 86%; clear in 49%, gold in 86%. Held out (10-fold, `report --cv 10`):
# clear in 48%, gold in 83%. The features are correlated (a lead over the rivals, a
# defined quoted name, a path hit and agreement go together), so single weights are not
# readable on their own: margin and defines come out slightly negative once crowd,
# path_cov and agreement are in.
WEIGHTS = (
    ("bias", -0.226),
    ("margin", -0.106),      # a lead over the best rival
    ("crowd", -0.758),      # many files with half its evidence
    ("defines", -0.402),     # defines a quoted name
    ("rare_cov", 0.240),    # holds the heaviest keywords
    ("source", 0.921),      # is source, not a test/doc/data file
    ("short", -0.309),      # short queries give less to go on
    ("coverage", 0.501),    # holds much of the query
    ("path_cov", 0.569),    # its path names the query
    ("heavy_cov", 0.219),   # holds the title's keywords
    ("agreement", 0.337),   # first by several signals at once
)
# The rubric's bands are claims about a band, not a point: the first file's probability
# is mapped piecewise linearly onto the rubric so that a first file at 0.8+ ("implements
# the target") is right about 85% of the time on dev and one below 0.5 ("related at
# most") is where the issues without real evidence fall. The probability that scores 0.5:
P_RELATED = 0.581
# ... and the probability that scores 0.8 (fit: bench/trust_features.py fit).
P_IMPLEMENTS = 0.689
# Other files score the first file's score times (their score / its score) to this
# power; of 1, 2 and 4 tried on dev, 1 keeps the 0.5-0.8 and 0.2-0.5 bands closest to
# the rubric (41% and 10% gold against 43% and 16% with 2).
STANDING_EXP = 1.0
# Clear: the first file's rubric score reaches this and its evidence is not generic ...
CLEAR_AT = 0.8
# ... and its raw evidence leads the next file's by at least this factor: files tied on
# evidence name no single answer (on dev no clear first file leads by less than 1.02).
CLEAR_LEAD = 1.01
# Relevance never exceeds this (as in score.py: certainty is for files an agent has read).
MAX_SCORE = 0.98


@dataclass(frozen=True)
class Evidence:
    """What the first file's evidence looks like, against the files after it."""

    margin: float          # log(first raw / best rival raw), 0..MARGIN_CAP
    crowd: int             # files (first included) with >= CROWD_SHARE of its raw evidence
    defines: tuple[str, ...]        # quoted names the first file defines
    defines_alone: tuple[str, ...]  # ... that none of the next RIVALS files defines
    path: tuple[str, ...]           # quoted paths its path names
    coverage: float        # its share of the query's idf mass (score.Scored.coverage)
    rare_cov: float        # its share of the RARE_KEYWORDS heaviest keywords' mass
    heavy_cov: float       # its share of the boosted keywords' mass (the task's title)
    path_cov: float        # share of the query's mass its path names
    agreement: int         # signals on which it is first among RIVALS (see _agreement)
    source: bool           # its role is source (not test, docs, data, ...)
    short: float           # score.coverage_share: 1.0 on short queries, less on long texts
    generic: bool          # no definition, path or uncommon hit of a quoted keyword, and shared
    program: bool = False  # a program's source (_program)

    def features(self) -> dict[str, float]:
        """The model's inputs by name (WEIGHTS weighs them)."""
        return {
            "margin": self.margin, "crowd": math.log(self.crowd),
            "defines": float(bool(self.defines)), "rare_cov": self.rare_cov,
            "source": float(self.source), "short": self.short, "coverage": self.coverage,
            "path_cov": self.path_cov, "heavy_cov": self.heavy_cov,
            "agreement": float(self.agreement),
        }


@dataclass(frozen=True)
class Assessment:
    """How far this cycle's ranking can be trusted."""

    scores: tuple[float, ...]   # rubric scores, one per input Scored, same order, non-increasing
    confidence: float           # fitted probability that the first file is one the fix changes
    clear: bool                 # the answer is clear: stop after this cycle
    generic: bool               # the first file's evidence is only plain or common words, shared
    why: tuple[str, ...]        # short reasons behind confidence and clear
    evidence: Optional[Evidence] = None  # the features, for the loop's decision


def evidence(scored: Sequence[Scored], matches: Mapping[str, FileMatch],
             keywords: Sequence[Keyword], corpus: Corpus) -> Optional[Evidence]:
    """The first file's evidence against its rivals; None when nothing was scored."""
    if not scored:
        return None
    top = scored[0]
    rivals = list(scored[1:RIVALS + 1])
    second = max((s.raw for s in rivals), default=0.0)
    if top.raw <= 0:
        margin = 0.0
    elif second <= 0:
        margin = MARGIN_CAP
    else:
        margin = max(0.0, min(MARGIN_CAP, math.log(top.raw / second)))
    crowd = 1 + sum(1 for s in scored[1:CROWD_FILES] if top.raw > 0 and s.raw >= CROWD_SHARE * top.raw)
    short = coverage_share(keywords, corpus)
    m = matches.get(top.rel)
    if m is None:
        return Evidence(margin, crowd, (), (), (), top.coverage, 0.0, 0.0, 0.0, 0,
                        top.role == "source", short, True, _program(top))
    n = max(corpus.n_docs, 1)
    live = [i for i in range(min(len(keywords), len(corpus.idfs))) if _live(corpus, i)]
    quoted = [i for i in live if keywords[i].kind in QUOTED_KINDS]
    hits = {i for i in live if m.counts[i] or m.in_path[i]}
    defines = [i for i in quoted if m.defines[i] >= 1.0]
    rival_defs = {i for s in rivals if s.rel in matches for i in defines
                  if matches[s.rel].defines[i] >= 1.0}
    path = [i for i in quoted if keywords[i].kind == "path" and m.in_path[i] >= 1.0]
    uncommon = [i for i in quoted if i in hits and corpus.idfs[i] >= idf(COMMON_SHARE * n, n)]
    # Plain words single out a program file when no other program file scores half as
    # high on them (RIVAL_SHARE of its score, as the calibrated scores show it: a doc or a
    # test matching them is no rival answer). A file of prose the roles call source (a
    # Gherkin scenario, ``INSTALL``, ``README.org``) holds a story's words as prose does.
    program = _program(top)
    generic = not (defines or path or uncommon) and (
        not program or any(s.score >= RIVAL_SHARE * top.score and _program(s) for s in scored[1:CROWD_FILES]))
    mass = {i: keywords[i].weight * corpus.idfs[i] for i in live}
    rare = sorted(live, key=lambda i: (-mass[i], keywords[i].text))[:RARE_KEYWORDS]
    heavy = [i for i in live if keywords[i].weight > KIND_WEIGHTS.get(keywords[i].kind, 1.0) + 1e-9]
    total = query_mass(keywords, corpus) or 1.0
    return Evidence(
        margin=margin, crowd=crowd,
        defines=tuple(keywords[i].text for i in defines),
        defines_alone=tuple(keywords[i].text for i in defines if i not in rival_defs),
        path=tuple(keywords[i].text for i in path),
        coverage=top.coverage,
        rare_cov=_share(rare, hits, mass),
        heavy_cov=_share(heavy, hits, mass),
        path_cov=min(1.0, sum(mass[i] * m.in_path[i] for i in hits) / total),
        agreement=_agreement(m, [matches[s.rel] for s in rivals if s.rel in matches],
                             live, quoted, rare, heavy, mass),
        source=top.role == "source",
        short=short,
        generic=generic,
        program=program,
    )


# Languages whose definitions lang.py does not read, and whose files are programs all
# the same: a shell script's, a Vue or Svelte component's words are a program's.
PROGRAM_EXTENSIONS = frozenset(("sh", "bash", "zsh", "fish", "ps1", "vue", "svelte", "el", "lisp", "clj", "cljs",
                                "pl", "pm", "hs", "r", "jl", "erl", "ml", "mli", "nim", "zig", "fs", "fsx",
                                "vb", "pas", "d", "cr", "sql"))


def _program(s: Scored) -> bool:
    """Whether a scored file is a program's source: its role is, and it is written in a
    language lang.py reads or one of PROGRAM_EXTENSIONS (a file of prose or data the
    roles leave as source - ``INSTALL``, a ``.feature``, ``.strings``, ``.tmpl``, a
    notebook - is not: an adversarial check's plain-word reports stopped on them)."""
    if s.role != "source":
        return False
    if language_of(s.rel).name not in ("any", "none"):
        return True
    name = s.rel.rsplit("/", 1)[-1]
    return "." in name.lstrip(".") and name.rsplit(".", 1)[-1].lower() in PROGRAM_EXTENSIONS


def _agreement(first: FileMatch, rivals: Sequence[FileMatch], live: Sequence[int],
               quoted: Sequence[int], rare: Sequence[int], heavy: Sequence[int],
               mass: Mapping[int, float]) -> int:
    """On how many of four signals the first file is (jointly) first among its rivals:
    query mass held, heaviest keywords held, quoted names defined, title keywords held."""
    def profile(fm: FileMatch) -> tuple[float, ...]:
        hit = {i for i in live if fm.counts[i] or fm.in_path[i]}
        return (
            sum(mass[i] for i in hit),
            sum(mass[i] for i in rare if i in hit),
            float(sum(1 for i in quoted if fm.defines[i] >= 1.0)),
            sum(mass[i] for i in heavy if i in hit),
        )
    mine = profile(first)
    others = [profile(fm) for fm in rivals]
    return sum(1 for j, v in enumerate(mine) if v > 0 and all(v >= o[j] for o in others))


def confidence_of(ev: Evidence) -> float:
    """The fitted probability that the first file is an answer."""
    f = ev.features()
    z = WEIGHTS[0][1] + sum(w * f[name] for name, w in WEIGHTS[1:])
    return 1.0 / (1.0 + math.exp(-z))


def rubric_score(p: float) -> float:
    """The first file's score on the seed's rubric from its probability: piecewise
    linear through (0, 0), (P_RELATED, 0.5), (P_IMPLEMENTS, 0.8), (1, 1)."""
    knots = ((0.0, 0.0), (P_RELATED, 0.5), (P_IMPLEMENTS, 0.8), (1.0, 1.0))
    p = min(max(p, 0.0), 1.0)
    for (x0, y0), (x1, y1) in zip(knots, knots[1:]):
        if p <= x1:
            return y0 + (y1 - y0) * (p - x0) / (x1 - x0)
    return 1.0


def assess(scored: Sequence[Scored], matches: Mapping[str, FileMatch],
           keywords: Sequence[Keyword], corpus: Corpus) -> Assessment:
    """Calibrated scores, confidence and the clear flag for one cycle's ranking.

    ``scored`` is score.py's ranking, best first; ``matches`` the files' FileMatch rows
    by path (at least those of the first RIVALS + 1 files), ``keywords`` and ``corpus``
    the cycle's. Pure: the same inputs give the same answer.
    """
    ev = evidence(scored, matches, keywords, corpus)
    if ev is None:
        return Assessment((), 0.0, False, True, ("nothing matched",))
    prob = confidence_of(ev)
    top = min(MAX_SCORE, rubric_score(prob))
    first = scored[0].score
    scores = []
    prev = top
    for s in scored:
        standing = (s.score / first) if first > 0 else 0.0
        value = min(prev, top * max(0.0, min(1.0, standing)) ** STANDING_EXP)
        scores.append(round(value, 4))
        prev = value
    clear = top >= CLEAR_AT and not ev.generic and ev.margin >= math.log(CLEAR_LEAD)
    return Assessment(tuple(scores), round(prob, 4), clear, ev.generic, _why(ev), ev)


def calibrated(scored: Sequence[Scored], assessment: Assessment) -> list[Scored]:
    """The Scored rows with their rubric scores, in the same order."""
    return [replace(s, score=v) for s, v in zip(scored, assessment.scores)]


def _why(ev: Evidence) -> tuple[str, ...]:
    """The evidence behind the first file's score, in a few words each."""
    out = [f"evidence {math.exp(ev.margin):.2f}x the next file's"]
    if ev.crowd > 1:
        others = ev.crowd - 1
        out.append(f"{others} other file{'s' if others > 1 else ''} reach{'' if others > 1 else 'es'} "
                   f"{int(CROWD_SHARE * 100)}% of its evidence")
    if ev.defines_alone:
        out.append("alone defines " + ", ".join(ev.defines_alone[:3]))
    elif ev.defines:
        out.append("defines " + ", ".join(ev.defines[:3]))
    if ev.path:
        out.append("path names " + ", ".join(ev.path[:2]))
    if ev.generic:
        out.append("only plain or common words matched" + (", as in other program files" if ev.program else ""))
    if not ev.source:
        out.append("not a source file")
    return tuple(out)


def _live(corpus: Corpus, i: int) -> bool:
    """A keyword that matched some file (its idf is below that of df = 0)."""
    return corpus.idfs[i] < idf(0, max(corpus.n_docs, 1)) - 1e-12


def _share(idx: Sequence[int], hit: set, mass: Mapping[int, float]) -> float:
    total = sum(mass[i] for i in idx)
    return sum(mass[i] for i in idx if i in hit) / total if total > 0 else 0.0
