"""Read candidate files once and rank them for a set of keywords (MATCH + EVALUATE).

This is the hot path of a cycle: every candidate file is read, lower-cased and
counted for all keywords in one pass; unreadable files are skipped and counted.
With the tree's index (index.py), files unchanged since they were indexed are served from
it and counted from its postings; the outcome is the same either way.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Iterable, Optional, Sequence

from .lang import content_role
from .progress import QUIET, Progress
from .match import Document, FileMatch, ReadTally, compile_keywords, held_anywhere, match_many, read_document, \
    read_entry
from .query import Keyword
from .score import (KNOWN_ROLES, LOCALE_PREFIX, Corpus, Scored, corpus_stats, named_locales, roles_requested,
                    score_matches, without_conventions)

if TYPE_CHECKING:
    from .index import Index as Cache
    from .walk import FileEntry


def load_documents(
    candidates: Iterable["FileEntry"], cache: Optional["Cache"] = None, progress: Progress = QUIET,
    max_bytes: Optional[int] = None,
) -> tuple[list[Document], int, int]:
    """Read every file the walk found (through the cache if given); returns (documents,
    binary files, unreadable files). A file grown past ``max_bytes`` (the walk's size
    limit) since the walk is unreadable, not read whole."""
    candidates = list(candidates)
    KNOWN_ROLES.clear()  # (this tree's and this cycle's: the index fills in the files it serves)
    reader = partial(read_document, max_bytes=max_bytes)
    if cache is not None and hasattr(cache, "read_all"):
        loaded = cache.read_all(candidates, reader, progress)
    else:
        tally = ReadTally()
        read = (lambda c: cache.read(c, reader)) if cache is not None else partial(read_entry, max_bytes=max_bytes)
        for n, cand in enumerate(candidates):
            progress.tick("reading", n, len(candidates))
            tally.read(read, cand)
        loaded = tally.result()
    for doc in loaded[0]:
        if doc.rel not in KNOWN_ROLES:  # (a file read now: its text is in memory)
            KNOWN_ROLES[doc.rel] = content_role(doc.rel, doc.low)
    return loaded


def match_documents(docs: Sequence[Document], keywords: Sequence[Keyword],
                    cache: Optional["Cache"] = None) -> list[Optional[FileMatch]]:
    """What :func:`match.match_document` gives for each document, through the index when
    there is one (None: nothing hit the file)."""
    return cache.match(docs, keywords) if cache is not None else match_many(docs, compile_keywords(keywords))


def held_by_any(docs: Sequence[Document], keywords: Sequence[Keyword],
                cache: Optional["Cache"] = None) -> tuple[bool, ...]:
    """Whether some document holds each keyword (content or path): through the index's
    postings when there is one, else by a search that stops at the first holder."""
    if cache is None:
        return held_anywhere(docs, keywords)
    held = [False] * len(keywords)
    for m in cache.match(docs, keywords):
        if m is not None:
            held = [h or bool(c) or p > 0.0 for h, c, p in zip(held, m.counts, m.in_path)]
    return tuple(held)


def rank_documents(
    docs: Sequence[Document],
    keywords: Sequence[Keyword],
    task_words: set[str],
    bonuses: dict[str, float] | None = None,
    cache: Optional["Cache"] = None,
    progress: Progress = QUIET,
) -> tuple[list[Scored], dict[str, FileMatch], Corpus]:
    """Match every document against the keywords and score the ones that matched."""
    progress.tick("matching", 0, len(docs))  # one bulk step (on several cores when large)
    found = without_conventions(match_documents(docs, keywords, cache), keywords)
    roles = roles_requested(task_words)
    locales = any(r.startswith(LOCALE_PREFIX) for r in roles)  # else named_locales names none
    matches: dict[str, FileMatch] = {}
    total_size = sum(doc.size for doc in docs)
    for doc, m in zip(docs, found):
        if m is not None and m.matched:
            matches[doc.rel] = m
            continue
        # A file no keyword hit still counts when the loop expands to it or it is the
        # locale of a language the task names (score.named_locales).
        if (bonuses and doc.rel in bonuses) or (locales and named_locales(doc.rel, roles)):
            matches[doc.rel] = m if m is not None else _no_match(doc, len(keywords))  # (None: the cache's)
    n = len(docs)
    corpus = corpus_stats(list(matches.values()), n, total_size / n if n else 1.0, len(keywords))
    scored = score_matches(
        list(matches.values()), keywords, corpus, roles, bonuses
    )
    return scored, matches, corpus


def _no_match(doc: Document, n: int) -> FileMatch:
    """What match_document gives for a file no keyword hit, content or path."""
    return FileMatch(rel=doc.rel, size=doc.size, counts=(0,) * n, in_path=(0.0,) * n, defines=(0.0,) * n)
