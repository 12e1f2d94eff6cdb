"""MATCH: one pass over each candidate file for all keywords.

Each file is read once as bytes, checked for a NUL byte (binary), lower-cased once,
and then every keyword's needles are counted with ``bytes.count`` (C speed, literal:
no regular expression is ever built from user input without ``re.escape``); a short
needle only where a word starts (:func:`count_in`).
Definitions (``def name``, ``class Name``, ``function name``, ``NAME = ...`` at the
start of a line, ...) are looked for only in files that contain the name at all.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Optional, Sequence

from . import fsafe
from . import lang
from .forkmap import fork_map
from .lang import Language, definition_words, language_of
from .paths import member_module, outside_tails, path_match
from .query import Keyword

# Bytes looked at for a NUL to call a file binary (git and ripgrep look at a prefix too).
BINARY_SNIFF_BYTES = 8192
# Below this many bytes to match, forking workers costs more than it saves.
PARALLEL_MIN_BYTES = 8 * 1024 * 1024
# ... and below this much counting (bytes x needles): a few keywords over many small files
# cost less in one process than sending every file's result back (measured: 100,000 small
# files, 3 keywords, 2.7 s alone vs 3.6 s on two cores; django, 36 keywords, 1.27 s vs 1.0 s).
PARALLEL_MIN_WORK = 256 * 1024 * 1024
# Worker processes at most: matching is bound by memory bandwidth beyond a few cores.
MAX_WORKERS = 4
# Bytes of file contents searched at once to see whether a keyword is anywhere.
HELD_BLOCK_BYTES = 16 * 1024 * 1024
# What a result quotes (summary lines, tags), follows (imports) and learns vocabulary from
# is the file's first MiB: the search counts every byte, but a 20 MB file's summary must
# not cost seconds.
QUOTE_BYTES = 1024 * 1024
# A needle found at most this many times is checked for definitions occurrence by
# occurrence (a few slices) rather than by searching the whole file once per probe.
FEW_OCCURRENCES = 16
# Needles shorter than this are not checked for definitions, except an identifier's:
# a short code name is only ever taken when the task imports it by name (``Q``).
MIN_DEFINITION_LEN = 3

# A needle of at most this many bytes, a letter or digit first, counts only where a word
# or a name's part starts (after a byte that is no letter or digit: ``ant`` in ``ant_task``
# and ``Ant.`` but not in ``constant``; ``sin`` not in ``using``). Counted anywhere, a short
# word was counted inside every longer one: a trial's ``Ant`` x19 in a file of constants,
# ``stu`` in ``stub``, ``git`` in ``digit``. (The text is lower-cased: a camel-case part,
# ``getAnt``, is lost; a short name is seldom one. A byte past ASCII is no letter here, as
# the index's tokens are ASCII runs: both count alike.)
SHORT_NEEDLE = 3
_WORD_BYTES = rb"a-z0-9"

_IDENT_BYTES = re.compile(rb"[a-z_][a-z0-9_]*\Z")
_IDENT_CHARS = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_")


def starts_only(needle: bytes) -> bool:
    """Whether ``needle`` counts only where a word starts (:data:`SHORT_NEEDLE`)."""
    return 0 < len(needle) <= SHORT_NEEDLE and needle[:1].isalnum()


@lru_cache(maxsize=4096)
def start_re(needle: bytes) -> "re.Pattern[bytes]":
    """``needle`` where a word starts (no letter or digit before it)."""
    return re.compile(rb"(?<![%s])%s" % (_WORD_BYTES, re.escape(needle)))


def count_in(low: bytes, needle: bytes) -> int:
    """Non-overlapping occurrences of ``needle`` in ``low``, a short one's where a word
    starts only (:data:`SHORT_NEEDLE`)."""
    return len(start_re(needle).findall(low)) if starts_only(needle) else low.count(needle)


def holds(low: bytes, needle: bytes) -> bool:
    """Whether ``low`` holds ``needle`` as :func:`count_in` counts it (a short needle only
    where a word starts: looked for so only where it is there at all)."""
    return needle in low and (not starts_only(needle) or start_re(needle).search(low) is not None)


def line_span(text: bytes, start: int, end: int) -> tuple[int, int]:
    """The start and end (its newline, or the text's end) of the line that holds
    ``text[start:end]``."""
    line_end = text.find(b"\n", end)
    return text.rfind(b"\n", 0, start) + 1, len(text) if line_end < 0 else line_end


class Document:
    """A candidate file's bytes as read, and lower-cased once for matching.

    ``data`` (the bytes as read) and ``low`` (lower-cased) are given, or made on first
    use by the loaders passed in, or (``data``) read again from ``path``: the cache
    (cache.py) serves ``low`` from its blob, and :func:`read_document` keeps only
    ``low``; ``data`` is read from disk only for the few files that need it (summaries,
    imports, learned vocabulary), or is ``low`` should the file have vanished. Either
    way each is produced once and kept.
    """

    __slots__ = ("rel", "size", "_data", "_low", "_load_data", "_load_low", "_path", "_identity", "_changed")

    def __init__(
        self,
        rel: str,
        data: Optional[bytes] = None,
        low: Optional[bytes] = None,
        size: int = 0,
        *,
        load_data: Optional[Callable[[], bytes]] = None,
        load_low: Optional[Callable[[], bytes]] = None,
        path: Optional[str] = None,
        identity: Optional[fsafe.FileId] = None,
    ) -> None:
        if (data is None and load_data is None and path is None) or (low is None and load_low is None):
            raise ValueError("Document needs data and low, or loaders for them")
        self.rel = rel
        self.size = size
        self._data = data
        self._low = low
        self._load_data = load_data
        self._load_low = load_low
        self._path = path  # data, when neither given nor loadable, is read again from here
        self._identity = identity  # (device, inode) the re-read must find at ``path``
        self._changed = False  # the re-read found other bytes: ``data`` is ``low``

    @property
    def data(self) -> bytes:
        """The file's bytes as read."""
        if self._data is None:
            if self._load_data is not None:
                self._data = self._load_data()
                self._load_data = None
            else:
                data = reread_bytes(self._path, self.low, self._identity)  # type: ignore[arg-type]
                self._changed = data is None
                self._data = self.low if data is None else data
        return self._data

    @property
    def changed(self) -> bool:
        """Whether the file read again for its bytes (quotes, imports) was no longer the
        file searched: edited, replaced or gone since. Its bytes are then the searched
        text, lower-cased: nothing of them may be quoted as the file's."""
        return self._changed

    @property
    def identity(self) -> Optional[fsafe.FileId]:
        """(device, inode) of the file read, when known: what a re-read must find again."""
        return self._identity

    @property
    def low(self) -> bytes:
        """The file's bytes lower-cased (ASCII), the text every keyword is counted in."""
        if self._low is None:
            self._low = self._load_low()  # type: ignore[misc]
            self._load_low = None
        return self._low

    @property
    def head(self) -> bytes:
        """The bytes as read, at most the first QUOTE_BYTES: what results quote and follow."""
        data = self.data
        return data if len(data) <= QUOTE_BYTES else data[:QUOTE_BYTES]

    def __repr__(self) -> str:
        return f"Document(rel={self.rel!r}, size={self.size})"


@dataclass(frozen=True)
class FileMatch:
    """What the keywords found in one file.

    ``counts[i]`` is the number of occurrences of keyword i's needles in the content,
    ``in_path[i]`` whether keyword i appears in the file's path, ``defines[i]`` whether
    the file defines a name spelled like keyword i (1.0 exact, 0.5 as a prefix of a
    longer name), 0.0 otherwise.
    """

    rel: str
    size: int
    counts: tuple[int, ...]
    in_path: tuple[float, ...]
    defines: tuple[float, ...]

    @property
    def matched(self) -> bool:
        """True if any keyword hit the content or the path."""
        return any(self.counts) or any(self.in_path)


# Binary formats that open with pages of text before their first NUL: a PDF (an Adobe
# Illustrator ``.ai`` too) starts with its XMP metadata, whose tags a keyword matches
# (``xmpMM:OriginalDocumentID`` for "origin"). A trial's zod ranking held a logo at 4th.
TEXT_HEADED_BINARY = (b"%PDF-",)


def is_binary(data: bytes) -> bool:
    """A NUL byte near the start, or the header of a binary format that opens with text
    (:data:`TEXT_HEADED_BINARY`), marks a binary file."""
    return b"\0" in data[:BINARY_SNIFF_BYTES] or data.startswith(TEXT_HEADED_BINARY)


class ReadTally:
    """The documents a walk's files gave, and how many were binary or unreadable: what a
    reading loop returns (``load_documents``, the index's ``read_all``)."""

    __slots__ = ("docs", "binary", "unreadable")

    def __init__(self) -> None:
        self.docs: list[Document] = []
        self.binary = 0
        self.unreadable = 0

    def read(self, read: Callable[[Any], Optional[Document]], cand: Any) -> None:
        """``read(cand)``, counted: a document kept, None a binary file, OSError unreadable."""
        try:
            doc = read(cand)
        except OSError:
            self.unreadable += 1
            return
        if doc is None:
            self.binary += 1
        else:
            self.docs.append(doc)

    def result(self) -> tuple[list[Document], int, int]:
        return self.docs, self.binary, self.unreadable


def read_document(rel: str, path: str, identity: Optional[fsafe.FileId] = None,
                  max_bytes: Optional[int] = None) -> Optional[Document]:
    """Read one file as a Document; None when it is binary. OSError propagates.

    The file is opened by fsafe's rules: a symlink is not followed, only a regular
    file is read, and with ``identity`` (the (device, inode) the walk saw) only that
    very file -- one swapped meanwhile raises :class:`fsafe.UnsafeFile`; with
    ``max_bytes`` (the walk's size limit) so does one grown past it since the walk.
    Only the lower-cased text is kept: every file is counted in, few are quoted. The
    bytes as written are read again for those few (summaries, imports, learned
    vocabulary) by the same rules, pinned to the file read here, or are the
    lower-cased text should the file have vanished or changed meanwhile.
    """
    data, st = fsafe.read_checked(path, expect=identity, max_bytes=max_bytes)
    if is_binary(data):
        return None
    return Document(rel=rel, low=data.lower(), size=len(data), path=path,
                    identity=(st.st_dev, st.st_ino))


def entry_identity(entry: object) -> Optional[fsafe.FileId]:
    """The (device, inode) a walked entry carries (walk.FileEntry), or None if unknown."""
    ino = getattr(entry, "ino", 0)
    return (getattr(entry, "dev", 0), ino) if ino else None


def read_entry(entry: object, max_bytes: Optional[int] = None) -> Optional[Document]:
    """:func:`read_document` for a walked entry (anything with rel, path, dev, ino):
    what the walk saw is what is read."""
    return read_document(entry.rel, entry.path, entry_identity(entry), max_bytes)  # type: ignore[attr-defined]


def reread_bytes(path: str, searched: bytes, identity: Optional[fsafe.FileId] = None) -> Optional[bytes]:
    """A file's bytes read again by fsafe's rules (pinned to ``identity`` when given),
    when they are still the bytes searched (``searched``, the lower-cased text: never
    more of them, so a file grown meanwhile is not read whole); else None."""
    try:
        data = fsafe.read_checked(path, expect=identity, max_bytes=len(searched))[0]
    except OSError:
        return None
    return data if data.lower() == searched else None


def _name_end(low: bytes, j: int) -> int:
    """Index just past the identifier characters starting at j."""
    n = len(low)
    while j < n and low[j] in _IDENT_CHARS:
        j += 1
    return j


def _longer_name(rest: bytes) -> float:
    """What defining the needle plus ``rest`` says: 0.5 for an inflection of it
    (``permission`` -> ``permissions``, ``rate_limit`` -> ``rate_limiter``), nothing for
    another name that merely starts with it (``model`` -> ``model_form``)."""
    return 0.5 if rest.lstrip(b"_").decode("ascii", "replace") in lang.INFLECTIONS else 0.0


def _named(low: bytes, end: int) -> float:
    """A definition whose needle ends at ``end``: 1.0 when the name ends there too, else
    what the longer name says (:func:`_longer_name`)."""
    name_end = _name_end(low, end)
    return 1.0 if name_end == end else _longer_name(low[end:name_end])


def _assigned(low: bytes, end: int) -> float:
    """For a needle at a line's start ending at ``end``: what a module-level assignment or
    annotation (``NAME =``, ``NAME:``) of it says (:func:`_named`), 0.0 if it is none."""
    j = _name_end(low, end)
    k = j
    while k < len(low) and low[k] in b" \t":
        k += 1
    if k < len(low) and (low[k] == 0x3A or (low[k] == 0x3D and low[k + 1:k + 2] != b"=")):
        return 1.0 if j == end else _longer_name(low[end:j])
    return 0.0


def defines(low: bytes, needle: bytes, language: Language, count: int = -1) -> float:
    """1.0 if ``needle`` is defined in ``low``, 0.5 if an inflection of it is
    (``FILE_UPLOAD_PERMISSIONS`` for ``file_upload_permission``) or it is only declared
    there (a C prototype, a forward declaration), else 0.0.

    Definitions are a definition keyword of the file's language (``def``, ``class``,
    ``fn``, ...; see lang.py) at the start of a line followed by the name, or the name at
    the very start of a line followed by ``=`` or ``:`` (a module-level assignment or
    annotation), and what else the language spells (lang.Language): Go methods and
    declaration blocks, C and Java functions by their return type, JS methods, exports
    and class fields, Rust ``impl`` blocks, Ruby and Lua receivers (``def self.name``).

    ``count``, the needle's (known) number of occurrences: when it is small, each
    occurrence is looked at in place instead of searching the file once per probe.
    In a declaration file (``.d.ts``) every definition is a declaration.
    """
    found = _defines(low, needle, language, count)
    return min(found, lang.DECLARES) if language.declares_only else found


def _defines(low: bytes, needle: bytes, language: Language, count: int) -> float:
    """:func:`defines` before a declaration file's cap."""
    if needle in language.reserved:
        return 0.0  # ``static mut X`` defines X, never ``mut``
    words = language.words
    if 0 <= count <= FEW_OCCURRENCES and words:
        return _defines_at_occurrences(low, needle, language)
    best = 0.0
    size = len(needle)
    for word in words:
        probe = word + needle
        start = low.find(probe)
        while start >= 0:
            if lang.head_ok(low, start, word, language):
                found = _keyword_defined(low, start + len(probe), word, language)
                if found == 1.0:
                    return 1.0
                best = max(best, found)
            start = low.find(probe, start + 1)
    if words:
        probe = b"\n" + needle
        # ``start`` is the index of the "\n" before the name; -1 stands for the file's start.
        at_start = low.startswith(needle)
        start = -1 if at_start else low.find(probe)
        while start >= 0 or at_start:
            at_start = False
            found = _assigned(low, start + 1 + size)
            if found == 1.0:
                return 1.0
            best = max(best, found)
            start = low.find(probe, start + 1)
    if language.go_methods:
        best = max(best, _go_method(low, needle))
    if best < 1.0 and language.groups:
        probe = b"\n\t" + needle
        spans = lang.group_spans(low) if probe in low else []
        for block_start, block_end in spans:  # only a block's lines are looked at
            start = low.find(probe, block_start, block_end)
            while start >= 0 and best < 1.0:
                best = max(best, _group_member(low, start + 2, start + len(probe), spans))
                start = low.find(probe, start + 1, block_end)
    if best < 1.0 and _has_extras(language):
        p = low.find(needle)
        while p >= 0 and best < 1.0:
            best = max(best, _extra_definition(low, p, p + size, language))
            p = low.find(needle, p + 1)
    return best


def _keyword_defined(low: bytes, end: int, word: bytes, language: Language) -> float:
    """A definition keyword then the needle, ending at ``end``: what the name says
    (:func:`_named`), lowered to a declaration when the language's definitions of that
    kind need a body and a ``;`` comes first; nothing when a type word only uses the type
    (``struct timeval tv;``)."""
    found = _named(low, end)
    return min(found, lang.after_word(low, _name_end(low, end), word, language)) if found else found


def _has_extras(language: Language) -> bool:
    return language.calls or language.impls or language.exports or language.receivers or language.properties


def _extra_definition(low: bytes, start: int, end: int, language: Language) -> float:
    """The definitions a language spells without a keyword before the name (lang.py),
    for the needle at ``low[start:end]``; only whole names count."""
    if start > 0 and low[start - 1] in _IDENT_CHARS:
        return 0.0
    name_end = _name_end(low, end)
    best = 0.0
    if language.calls:
        best = lang.call_definition(low, start, name_end, language)
    if best < 1.0 and language.exports:
        best = max(best, lang.export_definition(low, start, name_end), lang.field_definition(low, start, name_end))
    if best < 1.0 and language.receivers:
        best = max(best, lang.receiver_definition(low, start, name_end, language))
    if best < 1.0 and language.impls:
        best = max(best, lang.impl_definition(low, start, name_end))
    if best < 1.0 and language.properties:
        best = max(best, lang.property_definition(low, start, name_end))
    if best and name_end != end:
        best = min(best, _longer_name(low[end:name_end]))
    return best


def _defines_at_occurrences(low: bytes, needle: bytes, language: Language) -> float:
    """:func:`defines` by visiting every occurrence of ``needle`` (overlapping ones too):
    the same checks on the same positions, so the same value."""
    best = 0.0
    size = len(needle)
    words = language.words
    go = language.go_methods
    spans = None  # Go's declaration blocks, found when first needed
    extras = _has_extras(language)
    p = low.find(needle)
    while p >= 0:
        end = p + size
        for word in words:
            start = p - len(word)
            if start >= 0 and low.startswith(word, start) and lang.head_ok(low, start, word, language):
                best = max(best, _keyword_defined(low, end, word, language))
        if p == 0 or low[p - 1] == 0x0A:
            best = max(best, _assigned(low, end))
        if language.groups and p >= 2 and low.startswith(b"\n\t", p - 2):
            if spans is None:
                spans = lang.group_spans(low)
            best = max(best, _group_member(low, p, end, spans))
        if go and p >= 2 and low.startswith(b") ", p - 2):
            if _go_receiver_closes(lang.line_head(low, p - 2)):
                best = max(best, _named(low, end))
        if extras and best < 1.0:
            best = max(best, _extra_definition(low, p, end, language))
        if best >= 1.0:
            return 1.0
        p = low.find(needle, p + 1)
    return best


def _group_member(low: bytes, start: int, end: int, spans: Sequence[tuple[int, int]]) -> float:
    """Go: the needle at ``low[start:end]`` starting a line of a ``const (`` / ``type (`` /
    ``var (`` block (lang.group_definition), as a whole name or a longer one."""
    name_end = _name_end(low, end)
    found = lang.group_definition(low, start, name_end, spans)
    return min(found, _longer_name(low[end:name_end])) if found and name_end != end else found


def _go_receiver_closes(head: Optional[bytes]) -> bool:
    """Whether a line's text up to a ``)`` opens a Go method's receiver that this ``)``
    closes: the method's name follows it, not a result's type after the parameters
    (``func (l *Logger) should(lvl Level) bool {`` defines ``should``, never ``bool``: a
    trial's zerolog reason said "defines bool")."""
    if head is None or not head.startswith(b"func ("):
        return False
    depth = 0
    for byte in head[5:]:  # (``func (p (T)) M``: the receiver's own parentheses)
        depth += (byte == 0x28) - (byte == 0x29)
        if depth <= 0:
            return False  # closed before: this ``)`` ends the parameters
    return depth == 1


def _go_method(low: bytes, needle: bytes) -> float:
    """Go methods: ``func (r *Recv) Name(`` at the start of a line."""
    probe = b") " + needle
    best = 0.0
    start = low.find(probe)
    while start >= 0:
        if _go_receiver_closes(lang.line_head(low, start)):
            found = _named(low, start + len(probe))
            if found == 1.0:
                return 1.0
            best = max(best, found)
        start = low.find(probe, start + 1)
    return best


@dataclass(frozen=True)
class CompiledKeywords:
    """Keywords prepared once per cycle.

    ``definable`` marks the identifier-like needles (only those are checked for
    definitions). ``needles`` are the distinct needles of all keywords, shortest first;
    ``slots[k][j]`` is the position there of keyword k's needle j, and ``filters[i]``
    the position of a shorter needle that needle i contains (-1 if none): where that
    one occurs zero times, so does needle i, and it is not counted at all.
    """

    keywords: tuple[Keyword, ...]
    definable: tuple[tuple[bool, ...], ...]
    needles: tuple[bytes, ...] = ()
    slots: tuple[tuple[int, ...], ...] = ()
    filters: tuple[int, ...] = ()


def compile_keywords(keywords: Sequence[Keyword]) -> CompiledKeywords:
    """Mark definable needles; order the distinct needles so contained ones filter."""
    rows = []
    for kw in keywords:
        rows.append(tuple(
            kw.kind != "path" and (len(n) >= MIN_DEFINITION_LEN or kw.kind == "identifier")
            and _IDENT_BYTES.match(n) is not None
            for n in kw.needles
        ))
    needles = sorted({n for kw in keywords for n in kw.needles}, key=lambda n: (len(n), n))
    position = {n: i for i, n in enumerate(needles)}
    filters = []
    for i, n in enumerate(needles):
        # The longest shorter needle inside this one: the most selective filter.
        inside = [j for j in range(i) if len(needles[j]) < len(n) and needles[j] in n]
        filters.append(max(inside, key=lambda j: (len(needles[j]), -j)) if inside else -1)
    return CompiledKeywords(
        keywords=tuple(keywords), definable=tuple(rows), needles=tuple(needles),
        slots=tuple(tuple(position[n] for n in kw.needles) for kw in keywords), filters=tuple(filters),
    )


def count_needles(low: bytes, ck: CompiledKeywords) -> list[int]:
    """Occurrences of each of ``ck.needles`` in ``low`` (:func:`count_in`: non-overlapping),
    skipping needles whose contained filter needle is absent."""
    counts = [0] * len(ck.needles)
    for i, (needle, f) in enumerate(zip(ck.needles, ck.filters)):
        # (A short filter counts only where a word starts; the longer needle holding it
        # may hold it mid-word: then the filter says nothing.)
        if f < 0 or counts[f] or starts_only(ck.needles[f]):
            counts[i] = count_in(low, needle)
    return counts


def match_document(doc: Document, ck: CompiledKeywords) -> FileMatch:
    """Count every keyword in one document, check paths and definitions."""
    counts, in_path, defs = _evidence(doc, ck)
    return FileMatch(rel=doc.rel, size=doc.size, counts=counts, in_path=in_path, defines=defs)


def _evidence(doc: Document, ck: CompiledKeywords) -> tuple[tuple[int, ...], tuple[float, ...], tuple[float, ...]]:
    """(counts, in_path, defines) of one document: plain tuples, cheap to send between processes."""
    low = doc.low
    rel_low = doc.rel.lower()
    rel_flat = rel_low.replace("_", "").replace("-", "")
    counts: list[int] = []
    in_path: list[float] = []
    defs: list[float] = []
    language = language_of(doc.rel)
    found = count_needles(low, ck)
    for kw, definable, slots in zip(ck.keywords, ck.definable, ck.slots):
        c = 0
        d = 0.0
        for needle, can_define, slot in zip(kw.needles, definable, slots):
            n = found[slot]
            if n:
                c += n
                if can_define and d < 1.0:
                    d = max(d, defines(low, needle, language, n))
        counts.append(c)
        # Most keywords are nowhere in the path: skip the detailed check for them.
        pn = kw.path_needle
        in_path.append(path_match(rel_low, kw, doc.rel) if (pn in rel_low or pn in rel_flat or (
            kw.kind == "path" and (rel_low in pn or _names_member_module(kw, rel_low)))) else 0.0)
        defs.append(d)
    return tuple(counts), tuple(in_path), tuple(defs)




def _names_member_module(kw: Keyword, rel_low: str) -> bool:
    """Whether a quoted module path's last part may be a member of this file's module
    (paths.member_module): the screen before path_match's test."""
    member = member_module(kw)
    return bool(member) and member in rel_low


# The documents and keywords a forked worker matches: inherited from the parent at fork
# time (copy-on-write), so only index ranges and results cross the process boundary.
_FORK_WORK: Optional[tuple[Sequence[Document], CompiledKeywords]] = None


def _match_range(bounds: tuple[int, int]) -> list[tuple]:
    docs, ck = _FORK_WORK  # type: ignore[misc]
    return [_evidence(docs[i], ck) for i in range(*bounds)]


def held_anywhere(docs: Sequence[Document], keywords: Sequence[Keyword]) -> tuple[bool, ...]:
    """Whether some document holds each keyword, in its content or its path: what
    :func:`match_many`'s counts and ``in_path`` would say of it, without counting. The
    contents are searched in blocks of :data:`HELD_BLOCK_BYTES` joined by a byte no
    needle holds (a NUL but for a hostile keyword; file by file should none be free), and
    the search stops once every keyword is held: a word the tree holds is found in the
    first block or so, not counted in every file."""
    held = [False] * len(keywords)
    lows = [d.rel.lower() for d in docs]
    joined = "\n".join(lows)
    flat = joined.replace("_", "").replace("-", "")
    rels = set(lows)
    for i, kw in enumerate(keywords):
        pn = kw.path_needle
        member = member_module(kw) if kw.kind == "path" else ""
        if not pn or not (pn in joined or pn in flat or (member and member in joined)
                          or (kw.kind == "path" and (pn in rels or any(t in rels for t in outside_tails(pn))))):
            continue  # (the screen match_document applies before path_match, on every path at once)
        held[i] = any(path_match(low, kw, d.rel) > 0.0 for d, low in zip(docs, lows)
                      if pn in low or pn in low.replace("_", "").replace("-", "")
                      or (kw.kind == "path" and (low in pn or (member and member in low))))
    todo = [i for i in range(len(keywords)) if not held[i] and keywords[i].needles]
    needles = [nd for i in todo for nd in keywords[i].needles]
    sep = next((bytes((c,)) for c in range(256) if not any(bytes((c,)) in nd for nd in needles)), None)
    limit = HELD_BLOCK_BYTES if sep is not None else 0
    block: list[bytes] = []
    size = 0
    for n, d in enumerate(docs):
        if not todo:
            break
        block.append(d.low)
        size += len(block[-1])
        if size >= limit or n == len(docs) - 1:
            text = (sep or b"").join(block)
            for i in todo:
                if any(holds(text, nd) for nd in keywords[i].needles):
                    held[i] = True
            block, size = [], 0
            todo = [i for i in todo if not held[i]]
    return tuple(held)


def _ranges(docs: Sequence[Document], parts: int) -> list[tuple[int, int]]:
    """Contiguous index ranges holding about the same number of bytes each."""
    total = sum(d.size for d in docs) or 1
    bounds, start, acc = [], 0, 0
    for i, d in enumerate(docs):
        acc += d.size
        if acc >= total * (len(bounds) + 1) / parts and len(bounds) < parts - 1:
            bounds.append((start, i + 1))
            start = i + 1
    bounds.append((start, len(docs)))
    return [b for b in bounds if b[0] < b[1]]


def match_many(docs: Sequence[Document], ck: CompiledKeywords, workers: Optional[int] = None,
               min_bytes: int = PARALLEL_MIN_BYTES, min_work: int = PARALLEL_MIN_WORK) -> list[FileMatch]:
    """:func:`match_document` for every document, in order, on several cores when it pays.

    Inputs of at least ``min_bytes`` and ``min_work`` (bytes x needles) are split into
    contiguous ranges matched by forked worker processes (where the platform forks),
    which send back plain tuples; the result is the same list the sequential loop gives.
    Where that cannot be done (forkmap.fork_map: no fork, a daemonic process, a worker
    that fails or dies), the sequential loop runs.
    """
    if workers is None:
        workers = min(os.cpu_count() or 1, MAX_WORKERS)
    total = sum(d.size for d in docs)
    needles = sum(len(kw.needles) for kw in ck.keywords)
    if workers < 2 or len(docs) < 2 or total < min_bytes or total * needles < min_work:
        return [match_document(d, ck) for d in docs]
    global _FORK_WORK
    for d in docs:
        d.low  # materialise lazily loaded text once, in the parent, before forking
    _FORK_WORK = (docs, ck)
    try:
        parts = fork_map(_match_range, _ranges(docs, workers), workers)
    finally:
        _FORK_WORK = None
    if parts is None:  # no fork here, or a worker failed or died
        return [match_document(d, ck) for d in docs]
    found = (t for part in parts for t in part)
    return [FileMatch(rel=d.rel, size=d.size, counts=c, in_path=p, defines=f) for d, (c, p, f) in zip(docs, found)]
