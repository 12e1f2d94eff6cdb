"""DECIDE: the loop's only stop policy - after each cycle, the next move and whether to stop.

The cycle decides; ``hints.py`` is advisory (its hints for the results are in the full
output, computed from the same results, but its ``next_action`` does not steer this
loop). The rules, first match wins:

0. no file was read (the patterns and excludes select none, or the tree has none to
   search): stop (``exhausted``) with ``broaden`` - widen the patterns, or check the
   root; no keyword is called a gap;
1. nothing matched: ``broaden`` - with other spellings to try, go on; else stop
   (``exhausted``: the tree holds none of the words; rephrase);
2. the caller judged the file that leads the ranking at the rubric's "implements" (0.8
   or more): ``synthesize``, stop (``sufficient``) - the agent has read the answer;
3. one file stands out on specific evidence (the assessment is ``clear``), fewer than
   CROWDED_AT other files hold half its evidence, and the best score the loop shows is
   at the rubric's high relevance: ``synthesize``, stop (``sufficient``) - unless the
   caller's new words (``--keywords``, ``--task``) started this cycle: its first file is
   a lead to read (rules 7-9 say it is likely), not a finding, and the caller's own
   judgement ends the loop (rule 2). A trial's ``--keywords poll`` put
   ``adapters/poll.h`` first, "sufficient", for a fix in ``net.c``; on the dev splits
   (bench/steer.py) 80 steered cycles stopped so, 39 with the fix's file first; with
   new leads alone held back, 12 stopped, none with it first;
4. the seed's rule - at least ENOUGH_HIGH_FILES files at the rubric's high relevance, no
   named keyword missing from the whole tree, evidence not generic, a cycle the caller's
   words did not start (as in rule 3): ``synthesize``, stop (``sufficient``);
5. the cycle limit: ``synthesize``, stop (``max_cycles``);
6. a later cycle after which the loop's ranking (earlier cycles merged in) shows no file
   in its best 20 that no cycle showed before (cycle._new_in_answer: one past the first
   five places far below the first file does not count): ``synthesize``, stop
   (``saturated``) - whatever the cycle's own query turned up below that, the answer did
   not change;
   on either stop, ``broaden`` instead when the files the caller judged below 0.7 lead
   the ranking (the answer is not among them), or when the tool is less than SURE_AT
   sure of its first file and no file declaring the task's option leads (no file stands
   out): the agent's own words are the next move (with a higher --max-cycles at the
   limit);
7. files the leading files import that also match the task, not read yet: ``expand``;
8. keywords that matched nothing have synonyms to search instead: ``broaden``;
9. the codebase's own vocabulary was learned from the best files: ``refine``;
10. nothing left to change: stop (``exhausted``) - ``synthesize`` when the best file is
    at least SURE_AT sure, else ``broaden``: no file stands out and the tool has
    nothing more to try, so the next move is the agent's own words (``--keywords``).

Rules 3 and 4 read the scores the loop shows after the cycle (earlier cycles merged in):
a later cycle whose query holds words learned from the leading files confirms itself,
and "sufficient" must never stand beside a best file the rubric calls weak. When a
judged file leads the ranking, ``confidence`` is the caller's score of it: the tool's own
assessment is of its own first file, which the caller has overruled.

Example::

    >>> decide(Evidence(cycle=1, max_cycles=3, results=4, confidence=0.9, clear=True)).action
    'synthesize'
"""

from __future__ import annotations

from dataclasses import dataclass

from .records import Decision
from .rubric import HIGH_RELEVANCE, IMPLEMENTS, RELATED, two_places

# The seed's stopping rule: this many high-relevance files and no critical gap.
ENOUGH_HIGH_FILES = 3
# Below this confidence the loop is unsure of its ranking: terms learned from its best
# files are a guess (rule 9 says so), and an unjudged later cycle never demotes a file
# (cycle.merge_scores).
UNSURE_BELOW = RELATED
# The files the caller judged at the top that a stop on that judgement names.
JUDGED_NAMED = 3
# A stop with nothing left to search says "read the best files" (``synthesize``) only as
# sure of its first file as the loop's other word for likely (rule 9's "is likely"): a
# first file at 0.5-0.7 sure is still the agent's to check, with its own words next
# (``broaden``). At 0.5 before: 3 dev issues stopped so after cycle 1 at 0.5-0.7, 1 of
# their first files right; ``synthesize`` after cycle 1 84.6% -> 85.5% right.
SURE_AT = HIGH_RELEVANCE
# A first file that stands out is no single answer when this many other files hold at
# least half its evidence (trust.CROWD_SHARE): the task's words spread over files of
# comparable weight, and the fix often spans them (a header and its implementation, a
# channel and its semaphore). The loop says the file is likely and searches on (rule 9).
# On the dev splits 7 of 161 cycle-1 stops go on (each first file right): other
# languages' Acc@5 86 -> 87 of 108 (zstd-3438's third file 6th -> 5th), Python's ranks
# unchanged; ``synthesize`` after cycle 1 86.3% -> 85.7% right (bench/HISTORY.md). At 3
# other files nine more stops would go on, none with a gold file at 6th-20th to find.
CROWDED_AT = 4


@dataclass(frozen=True)
class Evidence:
    """What the decision reads about one cycle, and nothing else."""

    cycle: int
    max_cycles: int
    results: int                          # files that matched anything
    searched: int = 1                     # files read (0: the patterns select none)
    narrowed: bool = True                 # the query has patterns or excludes of its own
    confidence: float = 0.0               # how sure the best file is an answer (0..1)
    clear: bool = False                   # one file stands out on specific evidence
    crowd: int = 0                        # other files holding half the first file's evidence
    generic: bool = False                 # only common words matched: no stop on it
    program_top: bool = True              # the best file is a program's (generic: its words are shared)
    high: int = 0                         # files shown at the rubric's high relevance
    best: float = 1.0                     # the best score shown (this cycle merged with earlier)
    critical_gaps: tuple[str, ...] = ()   # named keywords no file of the tree holds
    new_ids: int = 0                      # files the ranking's best show now and no cycle before
    synonyms: tuple[str, ...] = ()        # other spellings the next cycle searches
    learned: tuple[str, ...] = ()         # codebase terms the next cycle searches
    expand_to: tuple[str, ...] = ()       # related files worth following
    top: str = ""                         # the best file, for the sentence
    top_why: tuple[str, ...] = ()         # what makes it stand out, in a few words each
    judged_top: str = ""                  # the file leading the ranking, if the caller judged it
    judged_score: float = 0.0             # the caller's score of that file
    judged_also: tuple[tuple[str, float], ...] = ()  # the other files the caller judged IMPLEMENTS or more, and their scores
    unjudged_next: tuple[str, ...] = ()   # the best files the caller has not judged
    unjudged_scores: tuple[float, ...] = ()  # ... and their scores, when known
    runner_up: str = ""                   # the next file after the best, when it scores RELATED or more
    runner_up_score: float = 0.0          # ... and its score
    top_rank: int = 0                     # the best file's place in the ranking shown (0: first or not known)
    steered: bool = False                 # the caller's new words (--keywords, --task) started this cycle
    steered_lead: bool = False            # ... and put the best file first
    judged_now: bool = False              # the call judged files too (they move files as well as its words)
    handoff: str = ""                     # the file the best one's quoted definitions call into (handoff.py)
    handoff_names: tuple[str, ...] = ()   # ... the names of it they call
    handoff_callers: tuple[str, ...] = () # ... and which quoted names of the best file call them
    readers: tuple[str, ...] = ()         # the files reading what the best one's quoted definitions only store
    reader_names: tuple[str, ...] = ()    # ... those definitions' names
    declared_option: str = ""             # the task's long option the best file declares among many (lang.option_table)


def _ordinal(n: int) -> str:
    """2 -> '2nd', 11 -> '11th', 23 -> '23rd'."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


# Names (called, and calling) a stop's note on a handoff lists at most.
HANDOFF_NAMES_SHOWN = 3


def _handoff(e: Evidence) -> str:
    """The stop's note on the file the best one hands the work to (handoff.py), or "".
    (The trials' commonest wrong stop: the fix one call below the API the report calls.)"""
    if not e.handoff:
        if e.readers:  # (a setter: the fix is where the setting acts; a trial's mocha stop)
            return (f"; its {', '.join(e.reader_names[:HANDOFF_NAMES_SHOWN])} only stores a value, read in "
                    f"{', '.join(e.readers)}: the work is where it is read")
        return ""

    def listed(names: tuple[str, ...]) -> str:
        return ", ".join(names[:HANDOFF_NAMES_SHOWN]) + (", ..." if len(names) > HANDOFF_NAMES_SHOWN else "")

    where = "that next file" if e.handoff == e.runner_up else e.handoff
    return (f"; its {listed(e.handoff_callers)} call {listed(e.handoff_names)} in {where}: "
            "if they only pass the work on, read that")


def _yours(e: Evidence) -> str:
    """What of the caller's moved the ranking this call: its new words, and its
    judgements when it gave some too (a trial's file lifted as the neighbour of a file
    judged 0 was said to be put first by the words)."""
    return "your new words and judgements" if e.judged_now else "your new words"


def _judged_list(e: Evidence) -> str:
    """The files the caller judged at the top, with their scores: at most JUDGED_NAMED,
    then how many more (a review's 200 judgements made a 23,000-character ``why``)."""
    judged = ((e.judged_top, e.judged_score),) + e.judged_also
    named = "; ".join(f"{rel} {sc:g}" for rel, sc in judged[:JUDGED_NAMED])
    return named + (f" (+{len(judged) - JUDGED_NAMED} more)" if len(judged) > JUDGED_NAMED else "")


def _next_files(e: Evidence) -> str:
    """The files to judge next, each with its score when known: a trial's stop named a
    fuzz target at 0.05 as the next to judge, read as the tool's advice to open it."""
    if len(e.unjudged_scores) != len(e.unjudged_next):
        return ", ".join(e.unjudged_next)
    return ", ".join(f"{rel} ({two_places(sc)})" for rel, sc in zip(e.unjudged_next, e.unjudged_scores))


def decide(e: Evidence) -> Decision:
    """The next move for a cycle's evidence (see the module docstring for the rules)."""
    last = e.cycle >= e.max_cycles
    confidence = round(e.judged_score if e.judged_top else e.confidence, 3)
    # (Every test reads the confidence as shown: 0.6996 is "0.7", 0.4996 "0.5".)
    own = round(e.confidence, 3)
    judged_score = round(e.judged_score, 3)

    # Sure of the first file without it standing out (rules 8 and 9): the search goes on
    # for the rest of the fix, and the agent may read the first file meanwhile.
    # After a change of direction (--keywords, --patterns) the files of earlier cycles keep
    # their scores, and this cycle's best file can stand below them: the sentence says
    # where, so "read the first files of ranking" and "read it" never point apart.
    place = f" ({_ordinal(e.top_rank)} in the ranking, below files of earlier cycles)" if e.top_rank > 1 else ""
    likely = f"{e.top}{place} is likely (confidence {confidence:g})" \
        if confidence >= HIGH_RELEVANCE and e.top and not e.judged_top else ""
    # A stop that says "read the best files" while this cycle's best file stands below
    # files of earlier cycles names it: ``confidence`` is about that file, and read as
    # about the ranking's first it was a wrong file's (a trial: 0.864 beside a tie at
    # 0.536, the earlier file first by its path).
    below = (likely or f"{e.top}{place} leads this cycle (confidence {confidence:g})") \
        if place and e.top and not e.judged_top else ""

    # A file declaring the task's option among the program's many is where the option is
    # named, seldom where it acts (three trials' confident or leading files: ripgrep's
    # flags/defs.rs, bat's clap_app.rs, fzf's options.go): no stop on it, and every
    # sentence sends the agent to its readers as well.
    declared = (f"{e.top} declares the task's --{e.declared_option} among the program's options: unless "
                f"the fix is the declaration (its help, its default), it is where the option is read: "
                f"grep its readers") if e.declared_option and e.top else ""

    def naming(why: str) -> str:
        why = f"{why}; {below}: read it too" if below else why
        return f"{why}; {declared}" if declared and declared not in why else why

    def stop(action: str, reason: str, why: str) -> Decision:
        return Decision(action, True, reason, why, confidence)

    def go(action: str, why: str) -> Decision:
        return Decision(action, False, None, why, confidence)

    if e.searched == 0 and not e.narrowed:
        return stop("broaden", "exhausted", "the tree has no file to search: it is empty, or every file "
                    "is ignored (.gitignore), hidden, binary or over the size limit; check --root")
    if e.searched == 0:
        return stop("broaden", "exhausted", "the patterns and excludes select no file of the tree; "
                    "widen --patterns (a directory is DIR/**); excludes stay for the whole loop, so "
                    "drop one by starting over with --reset")
    if e.results == 0:
        if e.synonyms and not last:
            return go("broaden", "no file matches; searching other spellings: " + ", ".join(e.synonyms))
        return stop("broaden", "exhausted",
                    "no file matches any keyword; rephrase the task with the words the code would use")
    if e.judged_top and judged_score >= IMPLEMENTS:
        more = (f"; if the fix spans more files, judge the next: {_next_files(e)}"
                if e.unjudged_next else "")
        # (The stop and its confidence rest on the caller's word, and say so: four trials'
        # agents read a confidence of 1.0 as the tool's claim about the files named next.)
        return stop("synthesize", "sufficient",
                    f"you judged {_judged_list(e)}: "
                    f"the loop stops on your judgement "
                    f"(the confidence is yours); read {'them' if e.judged_also else 'it'} and the context{more}")
    crowded = e.crowd >= CROWDED_AT
    if e.clear and not e.generic and e.best >= HIGH_RELEVANCE and not e.judged_top and not crowded \
            and not e.steered and not declared:
        said = ([place.strip(" ()")] if place else []) + list(e.top_why)
        because = f" ({'; '.join(said)})" if said else ""
        # A next file at the rubric's "related" or more is read too: on the dev splits the
        # two held the fix in all 36 such cycle-1 stops (the second was gold in 13; in 8 of
        # the other 117 stops, bench/HISTORY.md).
        # (With such a next file the sentence names both as the answer: a trial read "one
        # file is the likely answer" beside a lead of 1.05x as the tool contradicting itself.)
        if not e.runner_up:
            return stop("synthesize", "sufficient",
                        f"one file is the likely answer: {e.top}{because}; read it{_handoff(e)}")
        nxt = f"the next file, {e.runner_up}" if not place else e.runner_up
        return stop("synthesize", "sufficient",
                    f"the likely answer is {e.top}{because} or {nxt} ({two_places(e.runner_up_score)}); "
                    f"read both{_handoff(e)}")
    if e.high >= ENOUGH_HIGH_FILES and not e.critical_gaps and not e.generic and not e.steered:
        # (The file to start with named: a trial's agent, told to read "the file why
        # names", found none here.)
        start = f", {e.top}{place} first" if e.top and not e.judged_top else ""
        return stop("synthesize", "sufficient", f"{e.high} files at high relevance; read the context{start}"
                    + (f"; {declared}" if declared else ""))
    # A stop on the cycle limit or on a cycle that found nothing new says "read the best
    # files" (``synthesize``) only as sure of its first file as rule 10's stop: below
    # SURE_AT no file stands out, and the next move is the agent's own words (a trial's
    # plain joi round stopped ``synthesize`` at 0.348 on a constructor-only first file).
    unsure = not e.judged_top and own < SURE_AT and not declared
    first = f"{e.top}{place}" if e.top and not e.judged_top and not below else ""
    # (At the cycle limit new words are searched only with a higher one: the call that
    # followed "call again with --keywords" was refused there.)
    again = f" and --max-cycles {max(e.cycle, e.max_cycles) + 1}" if last else ""

    def unsure_stop(reason: str, said: str) -> Decision:
        start = f"read {first} first, then the best files" if first else "read the best files"
        return stop("broaden", reason, naming(f"{said} and no file stands out; {start}, and if they are not "
                                              f"it, call again with --keywords in the words the code would use"
                                              f"{again}"))

    weak_judged = e.judged_top and judged_score < HIGH_RELEVANCE
    if last or (e.cycle > 1 and e.new_ids == 0):
        reason = "max_cycles" if last else "saturated"
        if weak_judged:
            # The files the caller read lead, and the caller called them weak: "read the
            # best files" would send it back to them. The loop has nothing new either (a
            # file of earlier cycles may have risen: the next ones to read say which).
            nxt = f"read the next: {_next_files(e)}, or " if e.unjudged_next else ""
            done_why = "the cycle limit is reached" if last else "the ranking's best hold no file new to the loop"
            return stop("broaden", reason,
                        f"you judged the leading files below 0.7 and {done_why}; {nxt}call again with --keywords "
                        f"in the words the code would use{again}")
    if last:
        if unsure:
            return unsure_stop("max_cycles", "the cycle limit is reached")
        return stop("synthesize", "max_cycles", naming("the cycle limit is reached; read the best files"))
    if e.cycle > 1 and e.new_ids == 0:
        if e.steered_lead and e.top and not e.judged_top:
            # (The caller's words put a file first that the answer already held: the
            # sentence names it, as rules 7-9 would, so results and why agree; below
            # SURE_AT it is a lead, not an answer.)
            return stop("broaden" if unsure else "synthesize", "saturated",
                        f"{_yours(e)} put {e.top} first{place}, and this cycle "
                        "added no other file to the ranking's best; read it, then the best files"
                        + (", and if they are not it, call again with other --keywords" if unsure else "")
                        + (f"; {declared}" if declared else ""))
        if unsure:
            return unsure_stop("saturated", "this cycle added no file to the ranking's best")
        return stop("synthesize", "saturated",
                    naming("this cycle added no file to the ranking's best; read the best files"))
    def after_likely(why: str) -> str:
        return (f"{likely}; {why}" if likely else why) + (f"; {declared}" if declared else "")

    if e.expand_to:
        return go("expand", after_likely("the best files import files that also match: " + ", ".join(e.expand_to)))
    if e.synonyms or e.learned:
        # (The new terms themselves are in next_query.adds, not here: agents of the
        # trials read a list of them in this sentence as advice, and it was noise every
        # time - learned terms and synonyms alike; the sentence says what to read and
        # what a plain call does.)
        action = "broaden" if e.synonyms else "refine"
        plain = ("a plain call searches synonyms of the words no file holds (next_query)" if e.synonyms
                 else "a plain call searches learned terms (next_query)")
        if own < UNSURE_BELOW:
            guessed = plain if e.synonyms else "a plain call searches guessed terms (next_query)"
            return go(action, "unsure of the best files: judge what you read (--judge) or give names "
                      f"from the code (--keywords); {guessed}")
        if declared:
            return go(action, f"{declared}; {plain}")
        if likely:
            unclear = "only plain or common words of the task match it" + (
                ", and other program files match them at least half as well" if e.program_top else "") \
                if e.generic \
                else f"{_yours(e)} put it first: read it to check" if e.steered_lead \
                else "it led before your new words too: read it and judge it" if e.steered \
                else f"{e.crowd} other files hold half its evidence, and the fix may span them" \
                if crowded and e.clear else "its lead is not clear"
            return go(action, f"{likely} but {unclear}; {plain}")
        if e.top and not e.judged_top:
            return go(action, f"{e.top}{place} leads; read it first; {plain}")
        return go(action, plain)
    # (Each stop names the file to read first: a trial's lodash stop on cycle 1 said only
    # "read the best files", and its agent had to guess where to start.)
    if declared:  # (not "read it first": the declaration is seldom the fix, and the sentence says so)
        return stop("synthesize", "exhausted", naming("nothing new to search; read the best files"))
    if own < SURE_AT:
        return unsure_stop("exhausted", "nothing new to search")
    return stop("synthesize", "exhausted", naming(
        f"nothing new to search; {likely}: read it first, then the best files" if likely and not below
        else "nothing new to search; read the best files"))
