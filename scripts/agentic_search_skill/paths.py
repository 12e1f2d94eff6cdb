"""How a keyword names a file's path: the path evidence of a match.

Computed from the path alone at query time, for every file the walk sees (``match`` for
files it reads, ``index`` for all paths at once): no index stores it, so it is not part
of the matcher's fingerprint and a change here rebuilds nothing.
"""

from __future__ import annotations

import re

from . import lang
from .lazyre import compile_later
from .query import Keyword


def _is_inflection(name: str, stem: str) -> bool:
    """True when ``name`` is ``stem`` plus an English ending (``hints`` for ``hint``)."""
    return name.startswith(stem) and name[len(stem):] in lang.INFLECTIONS


# A file inside the package a quoted module path names (``sympy.printing.pretty`` for
# ``sympy/printing/pretty/pretty.py``): weak evidence, like a word in a directory name.
# Measured on the dev split: +0.9 points Acc@10, Acc@1 and Acc@5 unchanged.
INSIDE_PACKAGE = 0.25


# A keyword that is one word of a file's stem names the file more surely than one that is
# only inside it (``log`` in ``log_utils`` against ``dialog``). Measured on the dev
# splits: Acc@1 +1 issue, nothing lower; 0.6 gained nothing.
STEM_PART = 0.75
_HUMP_RE = compile_later(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")


# Words a file name adds to its subject without changing it: ``jwt-utils``, ``JwtHelper``,
# ``fileio_types``, ``parser_impl`` are files about jwt, fileio, the parser.
FILLER_WORDS = frozenset("util utils helper helpers impl internal common misc types".split())


def _stem_parts(rel: str, stem_low: str) -> frozenset[str]:
    """The words of a file's stem, lower-cased: split at ``_`` and ``-``, and at camel-case
    humps when ``rel`` (the path in its own case) gives them."""
    base = rel.rsplit("/", 1)[-1] if rel else ""
    own = base.split(".", 1)[0] if base.lower().split(".", 1)[0] == stem_low else stem_low
    parts = [p for p in re.split(r"[_-]+", own) if p]
    return frozenset(h.lower() for p in parts for h in (_HUMP_RE.findall(p) or [p]))


def outside_tails(needle: str) -> list[str]:
    """The paths a quoted path names when it was quoted from outside the root: its
    suffixes that start after one of its slashes and still hold one (``a/src/x.py`` ->
    ``src/x.py``), the paths :func:`path_match` gives 1.0 by its last rule."""
    parts = needle.split("/")
    return ["/".join(parts[k:]) for k in range(1, len(parts) - 1)]


def member_module(kw: Keyword) -> str:
    """The module file a dotted name's last part is a member of: a quoted
    ``django.utils.http.parse_http_date`` -> ``django/utils/http.py`` (which defines it),
    else "". Only a path read from a dotted name (``kw.dotted``; a folder's path quoted
    or linked is none) of three parts or more, as a Python file: ``expr.args`` is an
    object's attribute, not a member of ``expr.py``. Measured on the Python dev split:
    four issues quote such a name, and that file is the fix's in all four."""
    needle = kw.path_needle
    if not kw.dotted or "." in needle or needle.count("/") < 2:
        return ""
    return needle.rsplit("/", 1)[0] + ".py"


def path_match(rel_low: str, kw: Keyword, rel: str = "") -> float:
    """How strongly keyword ``kw`` names the path ``rel_low`` (lower-cased).

    1.0 when a quoted path is a suffix of this path or a module path names this file
    (or this path, two components at least, ends the quoted one: ``go-zero/rest/x.go``
    quoted from outside the root names ``rest/x.go``; or it is the module file the dotted
    name's last part is a member of, :func:`member_module`),
    0.75 when it names the package this file is the own file of (``__init__.py``), and
    :data:`INSIDE_PACKAGE` for another file inside that package; for other keywords 1.0
    when the keyword equals the file's stem or its one word besides :data:`FILLER_WORDS`
    (``jwt`` for ``jwt-utils``), :data:`STEM_PART` when it is one of the
    stem's words (``jwt-utils``, ``renderRepoCard``: split at ``_`` and ``-`` and,
    given ``rel`` in its own case, camel-case humps), 0.5 when it is elsewhere inside the
    file name, 0.25 when it is in a directory name; else 0. A stem-only keyword (a short
    quoted name) counts only when it is the stem.
    """
    needle = kw.path_needle
    if not needle:
        return 0.0
    if kw.kind == "path":
        stem = rel_low.rsplit(".", 1)[0] if "." in rel_low.rsplit("/", 1)[-1] else rel_low
        if rel_low == needle or rel_low.endswith("/" + needle):
            return 1.0
        if stem.endswith("/" + needle) or stem == needle:
            return 1.0
        if "/" in rel_low and needle.endswith("/" + rel_low):
            return 1.0  # quoted from outside the root: the repository's name, a checkout's path
        member = member_module(kw)
        if member and (rel_low == member or rel_low.endswith("/" + member)
                       or rel_low == member + "i" or rel_low.endswith("/" + member + "i")):
            return 1.0  # a module's member: the module file (a .py, or its .pyi stub)
        if ("/" + stem).endswith("/" + needle + "/__init__") or ("/" + stem).endswith("/" + needle + "/index"):
            return 0.75
        if ("/" + needle + "/") in ("/" + rel_low):
            return INSIDE_PACKAGE
        return 0.0
    base = rel_low.rsplit("/", 1)[-1]
    stem = base.split(".", 1)[0]
    if stem in lang.PACKAGE_STEMS and "/" in rel_low:
        # A package's own file (pkg/__init__.py, pkg/index.ts, pkg/mod.rs) is named by its directory.
        stem = rel_low.rsplit("/", 2)[-2]
        base = stem + "/" + base
    if kw.stem_only:
        return 1.0 if stem == needle else 0.0
    flat_stem = stem.replace("_", "").replace("-", "")
    if stem == needle or flat_stem == needle or _is_inflection(stem, needle):
        return 1.0
    if needle in flat_stem or needle in stem:
        parts = _stem_parts(rel, stem)
        if needle in parts:
            return 1.0 if parts - FILLER_WORDS == {needle} else STEM_PART
        return 0.5
    folders = rel_low[: len(rel_low) - len(base)]
    # (A name of several words is searched flat: ``educational_decoder`` names the
    # directory ``doc/educational_decoder/`` as ``educationaldecoder``.)
    if needle in folders or needle in folders.replace("_", "").replace("-", ""):
        return 0.25
    return 0.0
