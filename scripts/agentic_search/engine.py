"""Read candidate files once and rank them for a set of keywords (MATCH + EVALUATE).

This is the hot path of a cycle: every candidate file is read, lower-cased and
counted for all keywords in one pass; unreadable files are skipped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from .match import Document, FileMatch, compile_keywords, match_document, read_document
from .query import Keyword
from .score import Corpus, Scored, corpus_stats, roles_requested, score_matches


@dataclass(frozen=True)
class Candidate:
    """A file to read: its POSIX path relative to the root and its OS path."""

    rel: str
    path: str


@dataclass(frozen=True)
class Ranked:
    """The outcome of matching and scoring one cycle's candidates."""

    scored: tuple[Scored, ...]
    matches: dict[str, FileMatch]
    documents: dict[str, Document]
    corpus: Corpus
    files_read: int
    binary_skipped: int
    unreadable: int


def load_documents(candidates: Iterable[Candidate]) -> tuple[list[Document], int, int]:
    """Read every candidate; returns (documents, binary files, unreadable files)."""
    docs: list[Document] = []
    binary = unreadable = 0
    for cand in candidates:
        try:
            doc = read_document(cand.rel, cand.path)
        except OSError:
            unreadable += 1
            continue
        if doc is None:
            binary += 1
        else:
            docs.append(doc)
    return docs, binary, unreadable


def rank_documents(
    docs: Sequence[Document],
    keywords: Sequence[Keyword],
    task_words: set[str],
    bonuses: dict[str, tuple[float, str]] | None = None,
) -> tuple[list[Scored], dict[str, FileMatch], Corpus]:
    """Match every document against the keywords and score the ones that matched."""
    ck = compile_keywords(keywords)
    matches: dict[str, FileMatch] = {}
    total_size = 0
    for doc in docs:
        total_size += doc.size
        m = match_document(doc, ck)
        if m.matched or (bonuses and doc.rel in bonuses):
            matches[doc.rel] = m
    n = len(docs)
    corpus = corpus_stats(list(matches.values()), n, total_size / n if n else 1.0, len(keywords))
    scored = score_matches(
        list(matches.values()), keywords, corpus, roles_requested(task_words), bonuses
    )
    return scored, matches, corpus
