"""HANDOFF: the file a confident first file hands the task's work to.

The commonest wrong stop of the trials is on the file that defines the API the report's
own code calls - a facade, a factory, a public class - while the fix sits in the file
that API hands its work to: jline's ``AttributedString.fromAnsi`` and ``stripAnsi`` only
build an ``AttributedStringBuilder`` and call its ``ansiAppend``, where the escape
sequences are parsed; a Java ``StringLookupFactory``, a ``CSVFormat``, a middleware's
constructor the same way. SKILL.md tells the agent to check for it (step 4); this module
does the looking: at a stop, the bodies of the quoted names the first file defines are
read for the names they call, and the file of the ranking that defines the most of them
(for the most of those quoted names) is named beside the stop, for the agent to read
if the first file only passes the work on.

It reads only files already ranked (the first file and the next CANDIDATES): what it
says is the same through the index or without it, and costs a stop a few file reads.
It never changes a score, a rank or whether the loop stops.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import AbstractSet, Iterator, Optional, Sequence

from . import lang
from .score import file_role
from .match import defines
from .report import line_definitions, lowered_lines

# The files after the first that may be the one it hands the work to.
CANDIDATES = 20
# A definition's body: the lines after it up to the next definition, at most this many.
BODY_LINES = 30
# A body of at most this many lines of code passes the work on; a longer one does it.
THIN_LINES = 8
# No line of code, once comments and strings are out: blank, only closing brackets, or a
# block comment's inner line (`` * text``).
_NOT_CODE_RE = re.compile(r"[})\]]*[ \t;,]*$|\*(?!\w)")
# A string literal (its quotes kept), a triple-quoted one (a docstring), a comment to the line's end.
_STRING_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`\n]*`')
_TRIPLE_QUOTED_RE = re.compile(r'"""[\s\S]*?(?:"""|$)|\'\'\'[\s\S]*?(?:\'\'\'|$)')
_LINE_COMMENT_RE = re.compile(r"(?://|#|--).*$|/\*.*?(?:\*/|$)")
# Called names shorter than this say little (``get``, ``add``, ``run``).
MIN_CALLED_LEN = 4
# A called name defined by this many candidate files or more is everybody's (``length``,
# ``toString``, ``append``): it points at no one file.
COMMON_AT = 3
# Files larger than this are not searched for definitions (an amalgamation, generated code).
MAX_BYTES = 512 * 1024
# Lines longer than this are read as no definition (minified or generated code), and of
# the lines holding a quoted name only the first this many: the reading stays bounded
# whatever the file (a crafted 500 KB file of long lines took a cycle from 0.3 s to 18 s).
LONG_LINE = 400
MAX_SITES = 50

# A call or a construction: ``name(``, ``new Name(``, ``Name<T>(``, ``obj.name(``.
_CALL_RE = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:<[^<>()\n]{0,80}>)?[ \t]*\(")
# What stands before a called name that makes the call another type's: ``ns.deps.PathSpec.``,
# ``Parser::``, ``super.``. A method calling its namesake on another type passes the work on
# (trial 34's hugo: the template function ``RelURL`` returns ``ns.deps.PathSpec.RelURL(s)``);
# on its own receiver, or on a value of its own type (a tree's ``child.render(out)``), it
# recurses: only a type's name (a capital) or ``super`` says it is another type.
_RECEIVER_RE = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?:\.|::|->)[ \t]*$")
# Words that stand before ``(`` without being a call (any language).
_NOT_CALLS = frozenset(
    "if for while switch catch return new sizeof typeof await yield throw assert elif and or not in "
    "print super this self function func lambda match with except defer go".split())


# A line of a body that only stores: an assignment (not a comparison) or a ``return``
# of the object itself (a fluent setter's ``return this;``).
_ASSIGN_RE = re.compile(r"^[ \t]*(?:(?:this|self)[ \t]*(?:\.|->)[ \t]*)?[\w$.\[\]'\"-]+[ \t]*(?<![=!<>])=(?![=>])")
_RETURN_SELF_RE = re.compile(r"^[ \t]*return[ \t]+(?:this|self)?[ \t;]*$")
# The readers named at most.
MAX_READERS = 2


@dataclass(frozen=True)
class Readers:
    """Where a value the first file's definition of a quoted name only stores is read."""

    names: tuple[str, ...]      # the quoted names whose definitions only store, as the code spells them
    files: tuple[str, ...]      # the ranked files that read the stored value, best first


@dataclass(frozen=True)
class Handoff:
    """Where the first file's definitions of quoted names send the work."""

    target: str                 # the file that defines what they call
    names: tuple[str, ...]      # the names of it they call, as the calls spell them, sorted
    callers: tuple[str, ...]    # the quoted names whose bodies call them, sorted


def _sites(low: str, starts: Sequence[int], key: str) -> list[int]:
    """The lines (indices) holding ``key`` in the lower-cased text ``low`` (line i begins
    at starts[i]), each once, the first MAX_SITES of them."""
    out: list[int] = []
    p = low.find(key)
    while p >= 0 and len(out) < MAX_SITES:
        i = bisect_right(starts, p) - 1
        out.append(i)
        p = low.find(key, starts[i + 1] if i + 1 < len(starts) else len(low))
    return out


def _bodies(text: str, rel: str, names: Sequence[str]) -> dict[str, list[str]]:
    """Each of ``names`` the file defines as a function (a ``(`` on its line) with a thin
    body -> the lines of those bodies (every such definition of it, overloads too). A
    body runs to the next definition; it is thin when it holds at most THIN_LINES lines
    of code: a definition that passes the work on, not one that does it. Only lines of
    at most LONG_LINE characters are read as definitions, the first MAX_SITES lines
    holding each name: a minified or generated line is no definition to follow."""
    lines = text.split("\n")
    low, starts = lowered_lines(lines)
    out: dict[str, list[str]] = {}
    for name in names:
        for _i, body in _thin_definitions(lines, low, starts, rel, name.lower()):
            out.setdefault(name, []).extend(body)
    return out


def _thin_definitions(lines: Sequence[str], low: str, starts: Sequence[int], rel: str,
                      key: str) -> Iterator[tuple[int, list[str]]]:
    """Each definition of ``key`` (lower case) as a function with a thin body (see
    :func:`_bodies`): its line's index and its body's lines of code."""
    for i in _sites(low, starts, key):
        if len(lines[i]) > LONG_LINE or "(" not in lines[i] or not _defines_here(lines, i, rel, key):
            continue
        end = i + 1
        while end < min(len(lines), i + 1 + BODY_LINES) and not line_definitions(lines, end, rel):
            end += 1
        body = _code_lines(lines[i + 1:end])
        if len(body) <= THIN_LINES:
            yield i, body


def _code_lines(lines: Sequence[str]) -> list[str]:
    """The lines of code of a body, without its comments and string literals (a docstring,
    ``# was: old_render(x)``, ``log("calling heavy(x)")`` call nothing)."""
    text = _TRIPLE_QUOTED_RE.sub(" ", "\n".join(lines))
    code = [_STRING_RE.sub('""', line) for line in text.split("\n")]
    code = [_LINE_COMMENT_RE.sub("", line) for line in code]
    return [line for line in code if not _NOT_CODE_RE.match(line.strip())]


def _defines_here(lines: Sequence[str], i: int, rel: str, key: str) -> bool:
    """Whether line ``i`` defines ``key`` (lower case): in a language whose functions need
    no definition word (C, Java, JS methods: lang.Language.calls) as lang finds them in
    the line and the next (``public static Out name(`` defines ``name``, not its return
    type ``Out``), else as report finds definition lines."""
    if not lang.language_of(rel).calls:
        return key in line_definitions(lines, i, rel)
    chunk = "\n".join(lines[i:i + 2]).encode("utf-8", "replace")
    return any(n.lower() == key for n, _v in lang.defined_names(chunk, rel))


def _called(body: Sequence[str], own: str = "") -> dict[str, str]:
    """The names a body calls, lower case -> as the call spells them (the first call). The
    body's own name ``own`` (lower case) counts only as called on another type (a
    delegation, not a recursion: _RECEIVER_RE)."""
    found: dict[str, str] = {}
    for line in body:
        for m in _CALL_RE.finditer(line):
            name = m.group(1)
            low = name.lower()
            if len(name) < MIN_CALLED_LEN or low in _NOT_CALLS:
                continue
            if low == own:
                receiver = _RECEIVER_RE.search(line[max(0, m.start() - LONG_LINE):m.start()])
                if receiver is None or not (receiver.group(1)[0].isupper() or receiver.group(1) == "super") \
                        or receiver.group(1) == "Self":
                    continue
            found.setdefault(low, name)
    return found


def _defines(low: bytes, name: str, rel: str) -> bool:
    """Whether the file (lower-cased bytes) defines ``name`` (lower case), as the matcher
    finds definitions."""
    needle = name.encode("utf-8", "replace")
    return needle in low and defines(low, needle, lang.language_of(rel)) >= 1.0


def _declares_only(rel: str) -> bool:
    """A file of declarations only (``.d.ts``, a Python ``.pyi`` stub): the code is elsewhere."""
    return lang.is_declaration(rel) or rel.lower().endswith(".pyi")


def find(top: str, top_text: str, top_low: bytes, quoted: Sequence[str],
         candidates: Sequence[tuple[str, bytes]], linked: AbstractSet[str] = frozenset(),
         titled: AbstractSet[str] = frozenset()) -> Optional[Handoff]:
    """The file among ``candidates`` ((path, lower-cased bytes), best first) that the
    first file's (``top_text``, and ``top_low`` lower-cased) short definitions of the
    ``quoted`` names call into most, or None.

    A called name counts when the first file does not define it and a candidate does;
    the winner defines such names for the most quoted names (then for the most of those
    the task's title says, lower case in ``titled``: a report's code sets up with one call
    and fails in another, and the title names the one that fails - semver's "VersionReq
    matches 1.2.0 pre-releases" beside ``VersionReq::parse``; then the most names; then
    a file ``linked`` to the first by an import, either way, over one that is not - a
    legacy copy ranked higher that defines the same names is not where the calls go;
    then the better ranked), names that fewer than COMMON_AT candidates define."""
    if not quoted or len(top_low) > MAX_BYTES:
        return None
    calls: dict[str, dict[str, str]] = {}
    for q, body in _bodies(top_text, top, quoted).items():
        called = _called(body, q.lower())
        if called:
            calls[q] = called
    spelled = {k: v for c in calls.values() for k, v in c.items()}
    # The first file defines a name its definition passes to another object (the file's own
    # ``RelURL`` calling ``PathSpec.RelURL``): that name is looked for elsewhere all the same.
    delegated = {q.lower() for q, c in calls.items() if q.lower() in c}
    wanted = [k for k in sorted(spelled) if k in delegated or not _defines(top_low, k, top)]
    if not wanted:
        return None
    defs: list[tuple[str, frozenset[str]]] = []
    for rel, low in candidates[:CANDIDATES]:
        if rel == top or len(low) > MAX_BYTES or file_role(rel)[0] != "source" or _declares_only(rel):
            continue
        mine = frozenset(k for k in wanted if _defines(low, k, rel))
        if mine:
            defs.append((rel, mine))
    holders: dict[str, int] = {}
    for _rel, mine in defs:
        for k in mine:
            holders[k] = holders.get(k, 0) + 1
    best: Optional[tuple[tuple[int, int, int, bool, int], Handoff]] = None
    for rank, (rel, mine) in enumerate(defs):
        names = frozenset(k for k in mine if holders[k] < COMMON_AT)
        if not names:
            continue
        callers = sorted(q for q, c in calls.items() if names.intersection(c))
        key = (len(callers), sum(1 for q in callers if q.lower() in titled), len(names), rel in linked, -rank)
        if best is None or key > best[0]:
            best = (key, Handoff(rel, tuple(sorted(spelled[k] for k in names)), tuple(callers)))
    return best[1] if best else None


def _stores_own(body: Sequence[str], key: str) -> bool:
    """Whether a thin body only stores a value under its own name ``key`` (lower case):
    every line of code an assignment or a ``return this``, one of them to ``.key`` (a
    setter: ``this.options.forbidOnly = forbidOnly !== false;``), and no call."""
    if not body or _called(body):
        return False
    stores = False
    for line in body:
        m = _ASSIGN_RE.match(line)
        if m is None:
            if not _RETURN_SELF_RE.match(line):
                return False
            continue
        target = line[:m.end() - 1].strip().lower()
        stores = stores or target.endswith("." + key) or target.endswith("->" + key)
    return stores


def _reads(low: bytes, key: bytes) -> bool:
    """Whether the file (lower-cased bytes) reads a member ``key``: ``.key`` not assigned."""
    needle = b"." + key
    p = low.find(needle)
    while p >= 0:
        end = p + len(needle)
        if end >= len(low) or not (chr(low[end]).isalnum() or low[end] in b"_$"):
            rest = low[end:end + 3].lstrip(b" \t")
            if not (rest[:1] == b"=" and rest[1:2] not in (b"=", b">")):
                return True
        p = low.find(needle, end)
    return False


def find_readers(top: str, top_text: str, spellings: dict[str, Sequence[str]],
                 candidates: Sequence[tuple[str, bytes]]) -> Optional[Readers]:
    """The ranked files that read what the first file's definitions of quoted names only
    store, or None. ``spellings`` maps each quoted name to how the code may spell it
    (lower case: ``forbid-only`` -> ``forbidonly``). A setter the report's flag leads to
    (mocha's ``Mocha.prototype.forbidOnly`` storing ``options.forbidOnly``) is where the
    option is kept, not where it acts: the files reading it are (a trial's mocha stop)."""
    if len(top_text) > MAX_BYTES:
        return None
    lines = top_text.split("\n")
    low, starts = lowered_lines(lines)
    stored: dict[str, str] = {}  # the spelling stored -> as the code spells it
    for spelled in spellings.values():
        for key in spelled:
            for i, body in _thin_definitions(lines, low, starts, top, key):
                if _stores_own(body, key):
                    at = low.find(key, starts[i])
                    stored[key] = lines[i][at - starts[i]:at - starts[i] + len(key)] if at >= 0 else key
    if not stored:
        return None
    files = []
    for rel, flow in candidates[:CANDIDATES]:
        if rel == top or len(flow) > MAX_BYTES or file_role(rel)[0] != "source" or _declares_only(rel):
            continue
        if any(_reads(flow, key.encode("utf-8", "replace")) for key in stored):
            files.append(rel)
            if len(files) == MAX_READERS:
                break
    return Readers(tuple(sorted(set(stored.values()))), tuple(files)) if files else None
