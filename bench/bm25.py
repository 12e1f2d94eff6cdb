"""Whole-file BM25: the baseline the localization benchmark compares against.

Definition (exact, so a figure can be reproduced):

- **Documents** — every regular file under the root, walked in sorted order, skipping
  hidden directories (a name starting with ``.``), symlinks, files over ``MAX_BYTES``
  (1 MiB) and files holding a NUL byte (binary). Variant ``all`` keeps every such file;
  variant ``lang`` keeps only the names ending in one of the issue's language's suffixes
  (``LANG_SUFFIXES``: ``python`` is ``.py``, so on a Python tree ``lang`` is the old
  ``py`` variant). Ids are POSIX paths relative to the root.
- **Tokens** — the bytes are matched with ``[A-Za-z0-9_]+`` (so any non-ASCII byte is a
  separator). Each match yields its lowercase form and, when the identifier splits into
  something else, its lowercase parts too: first at ``_``, then each piece at camelCase
  boundaries and digit runs (``[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+``). So
  ``getHTTPResponse_code`` yields ``gethttpresponse_code``, ``get``, ``http``,
  ``response``, ``code``; ``token`` yields ``token`` alone. Document length is the
  number of tokens so produced.
- **Query** — the whole issue text, UTF-8 encoded and tokenized the same way; a term
  repeated in the query counts once per occurrence (Lucene's behaviour for a query
  made of the text's terms).
- **Score** — Okapi BM25 with ``k1 = 1.2``, ``b = 0.75`` and Lucene's non-negative
  idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``, where N, df and the average document
  length are computed over the variant's own document set.
- **Ranking** — files with a positive score, by (-score, path).

Usage::

    python3 bench/bm25.py --root /work/trees/psf__requests-2317 --query-file issue.txt

Library::

    from bm25 import index_tree, rank
    files = index_tree(root, query_terms(text))
    rank(files, query_terms(text), suffixes=LANG_SUFFIXES["python"])[:10]
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

K1 = 1.2  # the textbook Okapi default
B = 0.75  # the textbook length-normalisation default
MAX_BYTES = 1 << 20  # files over 1 MiB are skipped: generated data, not code
WORD = re.compile(rb"[A-Za-z0-9_]+")
CAMEL = re.compile(rb"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

# The source files of each language of the dev splits (the ``language`` field; the first
# split has none and is Python). Headers and inline-implementation files count for C/C++,
# Kotlin for the JVM, and every module flavour of JavaScript/TypeScript.
LANG_SUFFIXES: Dict[str, Tuple[str, ...]] = {
    "python": (".py",),
    "rust": (".rs",),
    "go": (".go",),
    "java": (".java", ".kt"),
    "c/c++": (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".ipp", ".inl"),
    "js/ts": (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts"),
}

_EXPANSIONS: Dict[bytes, Tuple[bytes, ...]] = {}


def expand(word: bytes) -> Tuple[bytes, ...]:
    """Return the terms one raw word yields: its lowercase form, then its parts.

    Parts are the pieces between ``_`` split again at camelCase and digit boundaries;
    they are added only when they differ from the whole word (``token`` -> one term).
    """
    hit = _EXPANSIONS.get(word)
    if hit is not None:
        return hit
    whole = word.lower()
    parts: List[bytes] = []
    for piece in word.split(b"_"):
        parts.extend(p.lower() for p in CAMEL.findall(piece))
    terms = (whole,) if parts == [whole] else (whole,) + tuple(parts)
    _EXPANSIONS[word] = terms
    return terms


def tokenize(data: bytes) -> List[bytes]:
    """Return every term of ``data`` in order (whole words followed by their parts)."""
    out: List[bytes] = []
    for word in WORD.findall(data):
        out.extend(expand(word))
    return out


def query_terms(text: str) -> Counter:
    """Return the query's terms with how often each occurs in the issue text."""
    return Counter(tokenize(text.encode("utf-8", "replace")))


@dataclass(frozen=True)
class FileStats:
    """What BM25 needs from one document: its id, its length and the query terms' tf."""

    id: str
    length: int
    tf: Dict[bytes, int]


def file_stats(rel: str, data: bytes, query: Iterable[bytes]) -> FileStats:
    """Count ``data``'s terms; keep the term frequency of the query terms only."""
    wanted = set(query)
    length = 0
    tf: Dict[bytes, int] = {}
    for word, n in Counter(WORD.findall(data)).items():
        terms = expand(word)
        length += n * len(terms)
        for term in terms:
            if term in wanted:
                tf[term] = tf.get(term, 0) + n
    return FileStats(rel, length, tf)


def walk(root: str) -> Iterable[Tuple[str, str]]:
    """Yield (relative POSIX id, absolute path) of candidate files, in sorted order."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            yield rel, path


def read_text(path: str) -> Optional[bytes]:
    """Return the file's bytes, or None for symlinks, big, binary or unreadable files."""
    try:
        st = os.lstat(path)
        if not os.path.isfile(path) or os.path.islink(path) or st.st_size > MAX_BYTES:
            return None
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_BYTES or b"\0" in data:
        return None
    return data


def index_tree(root: str, query: Iterable[bytes]) -> List[FileStats]:
    """Read every text file under ``root`` once; return their stats for ``query``."""
    wanted = list(query)
    out: List[FileStats] = []
    for rel, path in walk(root):
        data = read_text(path)
        if data is not None:
            out.append(file_stats(rel, data, wanted))
    return out


def rank(files: Sequence[FileStats], query: Counter, py_only: bool = False,
         suffixes: Optional[Sequence[str]] = None) -> List[Tuple[str, float]]:
    """Score ``files`` against ``query``; best first.

    ``suffixes`` keeps only the files whose name ends in one of them (N, df and the
    average length are then those of that subset); ``py_only`` is ``suffixes=(".py",)``.
    """
    if py_only:
        suffixes = (".py",)
    ends = tuple(suffixes) if suffixes else None
    docs = [f for f in files if f.id.endswith(ends)] if ends else list(files)
    n = len(docs)
    if n == 0:
        return []
    avgdl = sum(f.length for f in docs) / n or 1.0
    df: Counter = Counter()
    for f in docs:
        df.update(f.tf.keys())
    idf = {t: math.log(1.0 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in query if df[t]}
    scored: List[Tuple[str, float]] = []
    for f in docs:
        norm = K1 * (1.0 - B + B * f.length / avgdl)
        s = 0.0
        for term, tf in f.tf.items():
            w = idf.get(term)
            if w:
                s += query[term] * w * tf * (K1 + 1.0) / (tf + norm)
        if s > 0.0:
            scored.append((f.id, s))
    scored.sort(key=lambda p: (-p[1], p[0]))
    return scored


def main(argv: Optional[Sequence[str]] = None) -> int:
    """CLI: rank one tree for one issue text; print a JSON object."""
    ap = argparse.ArgumentParser(description="Whole-file BM25 over a tree.")
    ap.add_argument("--root", required=True, help="tree to rank")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--query", help="query text")
    src.add_argument("--query-file", help="file holding the query text")
    ap.add_argument("--py", action="store_true", help="rank *.py files only")
    ap.add_argument("--lang", choices=sorted(LANG_SUFFIXES),
                    help="rank only the files of this language (suffixes: LANG_SUFFIXES)")
    ap.add_argument("--limit", type=int, default=20, help="ranked files to print")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.root):
        print(f"bm25: --root {args.root}: not a directory", file=sys.stderr)
        return 1
    try:
        text = args.query
        if text is None:
            with open(args.query_file, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
    except OSError as exc:
        print(f"bm25: --query-file: {exc.strerror}", file=sys.stderr)
        return 1
    query = query_terms(text)
    ranked = rank(index_tree(args.root, query), query, py_only=args.py,
                  suffixes=LANG_SUFFIXES[args.lang] if args.lang else None)
    out = {"ranking": [{"id": i, "score": round(s, 4)} for i, s in ranked[: args.limit]]}
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
