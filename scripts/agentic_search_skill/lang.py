"""Language facts, keyed by file extension: one place for what each language spells how.

Which words introduce a definition (``def``, ``fn``, ``func``, ``class``...), which words
may stand before them (``pub``, ``export``, ``static``...), where a definition with a body
differs from a declaration (a C prototype ``int f(void);`` against ``int f(void) {``, a
Rust trait's ``fn f(&self);``), the English endings that make one name another form of
another (``limiter`` of ``limit``), the file extensions a quoted path may end in, and how
each ecosystem lays out its tests, benchmarks, examples, fixtures, vendored and generated
files. ``match`` (definitions), ``report`` (tags), ``score`` (file roles) and ``query``
(paths, stems) all read these facts from here, so that tags and "defines" agree.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence

# --- Definitions --------------------------------------------------------------------------

# A definition of a name (it has a body, or is a value) and a declaration of it (a
# prototype, a forward declaration, a trait's required method): what ``defines`` reports.
DEFINES = 1.0
DECLARES = 0.5
# A function's parameter list and what follows it up to its body (``{``) or the ``;``
# of a prototype are looked at for at most this many bytes: signatures are short, and a
# name followed by ``(`` in running text must not cost a scan of the whole file.
MAX_SIGNATURE_BYTES = 600

_WORDS_PY = (b"def ", b"class ")
_WORDS_JS = (b"function ", b"class ", b"const ", b"let ", b"var ", b"interface ", b"type ", b"enum ")
_WORDS_GO = (b"func ", b"type ", b"const ", b"var ")
_WORDS_RS = (b"fn ", b"struct ", b"enum ", b"trait ", b"type ", b"const ", b"static ", b"static mut ", b"mod ",
             b"macro_rules! ")
_WORDS_JVM = (b"class ", b"interface ", b"@interface ", b"enum ", b"record ", b"fun ", b"object ", b"val ", b"var ",
              b"typealias ")
_WORDS_C = (b"struct ", b"class ", b"enum ", b"union ", b"typedef ", b"#define ", b"namespace ", b"using ")
# Languages outside the benchmarks, so that any tree's definitions are found: Ruby, C#,
# Scala, Groovy, Swift, PHP, Lua, Elixir, Dart.
_WORDS_RB = (b"def ", b"class ", b"module ")
_WORDS_CS = (b"class ", b"interface ", b"enum ", b"struct ", b"record ", b"namespace ", b"using ")
_WORDS_SCALA = (b"def ", b"class ", b"object ", b"trait ", b"val ", b"var ", b"type ", b"enum ", b"given ")
_WORDS_GROOVY = _WORDS_JVM + (b"def ", b"trait ")
_WORDS_SWIFT = (b"func ", b"class ", b"struct ", b"enum ", b"protocol ", b"extension ", b"typealias ", b"actor ",
                b"let ", b"var ")
_WORDS_PHP = (b"function ", b"class ", b"interface ", b"trait ", b"enum ")
_WORDS_LUA = (b"function ",)
_WORDS_EX = (b"def ", b"defp ", b"defmacro ", b"defmacrop ", b"defguard ", b"defdelegate ", b"defmodule ",
             b"defprotocol ", b"defimpl ")
_WORDS_DART = (b"class ", b"enum ", b"mixin ", b"extension ", b"typedef ")
_WORDS_ANY = tuple(dict.fromkeys(
    _WORDS_PY + _WORDS_JS + _WORDS_GO + _WORDS_RS + _WORDS_JVM + _WORDS_C + _WORDS_RB + _WORDS_CS + _WORDS_SCALA
    + _WORDS_GROOVY + _WORDS_SWIFT + _WORDS_PHP + _WORDS_LUA + _WORDS_EX + _WORDS_DART
    + (b"sub ", b"function! ")
))


@dataclass(frozen=True)
class Language:
    """What one language's definitions look like at the start of a line.

    ``words``: definition keywords (lower-cased, one space before the name).
    ``body_words``: those of them whose definition has a body: followed by ``;`` before
    any ``{`` they only declare the name (C ``struct s;``, Rust ``fn f(&self);``).
    ``type_words``: those of them that also name a type where it is used: followed by
    another name, ``*``, ``&`` or ``(`` (C ``struct timeval tv;``, ``struct s *f(``) they
    define nothing.
    ``calls``: functions and methods are also written without a keyword, as a return
    type and a name before ``(`` (C, C++, Java) or as a name before ``(`` alone (JS/TS
    class and object-literal methods); a body makes them definitions, a ``;`` declarations.
    ``bare_calls``: a name at the very start of a line before ``(`` and a body is a
    definition (C's return type on the line above; JS methods need no return type).
    ``go_methods``: ``func (r *T) Name(`` defines Name. ``impls``: Rust ``impl X for Y``
    implements both. ``exports``: JS ``exports.name =`` and ``name: function`` /
    ``name: (…) =>`` in object literals, and class fields (``handler = (e) => {``,
    ``private readonly ttl: number``), define name. ``receivers``: a definition word, a
    receiver and ``.`` or ``:``, then the name (Ruby ``def self.name``, Lua ``function
    M.name``, Elixir ``defmodule App.Name``, Kotlin ``fun String.slug``); a name the
    receiver is made of is not what is defined. ``groups``: Go's ``type (`` / ``const (``
    / ``var (`` blocks define the name at the start of each of their lines.
    ``properties``: C#'s properties, a type and a name before accessors (``{ get; set; }``)
    or an expression body (``=> items.Count;``), define the name.
    ``modifiers``: the language's own words that may stand before a definition word
    besides :data:`MODIFIERS` (Swift's ``class func``, Dart's ``base class``).
    ``reserved``: the language's own words that may follow a definition keyword but never
    name what it defines (Rust ``static mut X``, C ``typedef struct s t;``): no file
    defines them.
    """

    name: str
    words: tuple[bytes, ...]
    body_words: frozenset[bytes] = frozenset()
    type_words: frozenset[bytes] = frozenset()
    calls: bool = False
    bare_calls: bool = False
    bare_indented: bool = False
    go_methods: bool = False
    impls: bool = False
    exports: bool = False
    receivers: bool = False
    groups: bool = False
    properties: bool = False
    modifiers: frozenset[bytes] = frozenset()
    declares_only: bool = False
    reserved: frozenset[bytes] = frozenset()


# Reserved words that may stand right after a definition keyword (``static mut``,
# ``typedef unsigned int``, ``const enum``): a task's word ``mut`` or ``struct`` is not
# defined by every file that spells one.
_RESERVED_RS = frozenset(b"mut ref fn impl dyn unsafe async extern pub crate self super where for move "
                         b"static const struct enum trait type mod let".split())
_RESERVED_C = frozenset(b"struct union enum class const volatile unsigned signed int char short long float "
                        b"double void bool static inline extern typename template virtual explicit constexpr "
                        b"auto register namespace".split())
_RESERVED_JS = frozenset(b"function class const let var async await new typeof extends enum interface type "
                         b"declare abstract".split())
_RESERVED_GO = frozenset(b"func type struct interface map chan const var".split())
_RESERVED_JVM = frozenset(b"class interface enum record fun object val var public private protected static "
                          b"final abstract void int long boolean".split())
PYTHON = Language("python", _WORDS_PY)
JS = Language("js", _WORDS_JS, body_words=frozenset((b"function ",)), calls=True, bare_calls=True,
              bare_indented=True, exports=True, reserved=_RESERVED_JS)
# TypeScript declaration files (``index.d.ts``): the types of code that lives elsewhere;
# every name there is declared, none implemented (the implementation outranks them).
TS_DECLARATIONS = replace(JS, name="ts-declarations", declares_only=True)
GO = Language("go", _WORDS_GO, go_methods=True, groups=True, reserved=_RESERVED_GO)
# (``mod name;`` declares a module whose body is another file, name.rs: only ``mod name {``
# defines one here; a unit ``struct S;`` is a whole definition.)
RUST = Language("rust", _WORDS_RS, body_words=frozenset((b"fn ", b"mod ")), impls=True, reserved=_RESERVED_RS)
JVM = Language("jvm", _WORDS_JVM, calls=True, receivers=True, reserved=_RESERVED_JVM)
_C_TYPE_WORDS = frozenset((b"struct ", b"class ", b"union ", b"enum "))
C = Language("c", _WORDS_C, body_words=_C_TYPE_WORDS, type_words=_C_TYPE_WORDS, calls=True,
             bare_calls=True, reserved=_RESERVED_C)
_RESERVED_CS = frozenset(b"class interface enum struct record namespace static void int string bool object "
                         b"public private protected internal abstract sealed partial readonly".split())
_RESERVED_SWIFT = frozenset(b"func var let class struct enum protocol extension typealias actor init static "
                            b"final public private internal fileprivate open".split())
RUBY = Language("ruby", _WORDS_RB, receivers=True)
CSHARP = Language("csharp", _WORDS_CS, calls=True, receivers=True, properties=True, reserved=_RESERVED_CS)
SCALA = Language("scala", _WORDS_SCALA, reserved=_RESERVED_JVM)
GROOVY = Language("groovy", _WORDS_GROOVY, calls=True, reserved=_RESERVED_JVM)
SWIFT = Language("swift", _WORDS_SWIFT, modifiers=frozenset((b"class",)), reserved=_RESERVED_SWIFT)
PHP = Language("php", _WORDS_PHP)
LUA = Language("lua", _WORDS_LUA, receivers=True)
ELIXIR = Language("elixir", _WORDS_EX, receivers=True)
DART = Language("dart", _WORDS_DART, calls=True, modifiers=frozenset((b"base", b"interface", b"mixin")),
                reserved=_RESERVED_JVM)
# A file of an unknown extension: every language's definition keywords, nothing more.
ANY = Language("any", _WORDS_ANY)
# Prose and data: no definitions at all.
NONE = Language("none", ())

_BY_EXTENSION = {
    **dict.fromkeys(("py", "pyi", "pyw", "pyx"), PYTHON),
    **dict.fromkeys(("js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"), JS),
    "go": GO,
    "rs": RUST,
    **dict.fromkeys(("java", "kt", "kts"), JVM),
    **dict.fromkeys(("scala", "sc"), SCALA),
    **dict.fromkeys(("groovy", "gradle"), GROOVY),
    **dict.fromkeys(("rb", "rake", "gemspec"), RUBY),
    "cs": CSHARP,
    "swift": SWIFT,
    "php": PHP,
    "lua": LUA,
    **dict.fromkeys(("ex", "exs"), ELIXIR),
    "dart": DART,
    **dict.fromkeys(("c", "h", "cc", "cpp", "cxx", "c++", "hh", "hpp", "hxx", "h++", "ipp", "inl", "tpp", "m", "mm"), C),
    **dict.fromkeys("md markdown mdown mkd mkdn mdwn rst adoc asciidoc textile rdoc txt json yaml yml toml ini cfg "
                    "csv tsv xml svg html htm po".split(), NONE),
}

# Words that may stand between the start of a line and a definition keyword.
MODIFIERS = frozenset(
    b"export default public private protected internal static async pub extern inline "
    b"virtual abstract final override unsafe sealed open data declare readonly "
    b"pub(crate) pub(super) pub(self) "
    # Kotlin, Scala, Swift, C#, Lua, and C++'s ``enum class`` / TypeScript's ``const enum``
    b"const enum case lazy implicit suspend operator infix tailrec lateinit inner value annotation companion "
    b"partial fileprivate mutating convenience required nonisolated indirect local noinline crossinline "
    b"dynamic actual expect".split()
)
# An annotation or attribute on a definition's line (``@objc func``, ``#[inline] fn``,
# ``@Override public``), and Scala's qualified access (``private[auth]``), stand where a
# modifier does.
_ATTRIBUTE_RE = re.compile(rb"(?:@[\w.]+(?:\([^()\s]*\))?|#\[[^\]\s]*\]|(?:private|protected)\[[\w.]*\])\Z")


def _modifiers_only(words: list, ok: frozenset) -> bool:
    """Whether every word of a definition's head is a modifier or an attribute."""
    return all(w in ok or _ATTRIBUTE_RE.match(w) is not None for w in words)
# ... and, in Rust, before ``fn`` only (``pub const fn``, ``extern "C" fn``).
_FN_MODIFIERS = frozenset((b"const", b'"c"', b'"system"'))
# Declarations that are definitions only at the top level of a file.
LOCAL_DECLS = frozenset((b"const ", b"let ", b"var ", b"val "))
# What may stand before a Rust ``fn``: the modifiers and its own (``const fn``, ``extern "C" fn``).
_RUST_FN_HEAD = MODIFIERS | _FN_MODIFIERS


def extension(rel: str) -> str:
    """The lower-cased extension of a path's file name ('' when it has none)."""
    base = rel.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base else ""


# Name endings of declaration files: TypeScript's, and Flow's type stubs beside a module
# (``src/types/index.js.flow``: a trial's immer loop stopped on one, the fix in four
# runtime files).
_DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts", ".js.flow")


def language_of(rel: str) -> Language:
    """The language a file is written in, by its extension (:data:`ANY` when unknown)."""
    if rel.lower().endswith(_DECLARATION_SUFFIXES):
        return TS_DECLARATIONS
    return _BY_EXTENSION.get(extension(rel), ANY)


def definition_words(rel: str) -> tuple[bytes, ...]:
    """The definition keywords worth looking for in a file, by its extension."""
    return language_of(rel).words


# head_ok looks this far back for the line's start first: on a minified bundle (one line
# of megabytes) the whole line before each occurrence would be scanned, the cost growing
# with the square of the line.
HEAD_SCAN = 256
# No definition's head (indentation, modifiers, annotations) is longer than this, or has
# more words: a longer run of modifier words (``const const ...``) would be followed
# back from each of its words, at the square of its length.
HEAD_MAX = 1024
MAX_HEAD_WORDS = 16


def head_ok(low: bytes, i: int, word: bytes, lang: Language = ANY) -> bool:
    """True when only indentation and modifiers stand before position i on its line.

    Variable declarations (``const``/``let``/``var``/``val``) count only at the top
    level (no indentation): inside a function they are locals, not definitions.
    A head of more than MAX_HEAD_WORDS words or HEAD_MAX bytes is no definition's. A head
    longer than HEAD_SCAN is decided by its last HEAD_SCAN bytes when they hold a whole
    word that is no modifier, or too many words (the usual case: code before it); only a
    run of indentation and a few modifiers is followed back to the line's start.
    """
    ok = _RUST_FN_HEAD if lang is RUST and word == b"fn " else MODIFIERS
    if lang.modifiers:  # (a union per call only for the few languages that add words)
        ok = ok | lang.modifiers
    start = max(0, i - HEAD_SCAN)
    ls = low.rfind(b"\n", start, i) + 1
    if ls == 0 and start > 0:
        # (The window's first word may be cut: only the whole words after it decide.)
        window = low[start:i].split()[1:]
        if len(window) > MAX_HEAD_WORDS or not _modifiers_only(window, ok):
            return False
        lo = i - HEAD_MAX
        if lo <= 0:
            ls = low.rfind(b"\n", 0, start) + 1
        else:
            nl = low.rfind(b"\n", lo - 1, start)
            if nl < 0:
                return False  # a head longer than HEAD_MAX
            ls = nl + 1
    if ls == 0 and low.startswith(codecs.BOM_UTF8):
        ls = len(codecs.BOM_UTF8)  # (an editor's byte-order mark before the first line)
    head = low[ls:i]
    if word in LOCAL_DECLS and head[:1] in (b" ", b"\t"):
        return False
    if b"template" in head:  # C++'s ``template <typename T> struct is_json {``
        head = _TEMPLATE_HEAD_RE.sub(b" ", head)
    words = head.split()
    return len(words) <= MAX_HEAD_WORDS and _modifiers_only(words, ok)


# A C++ template's parameters before what it defines on the same line (``<>`` nested
# three deep: ``template<typename T, typename = enable_if_t<is_same<T, U>::value>>``).
_TEMPLATE_HEAD_RE = re.compile(rb"(?<![\w$])template[ \t]*<(?:[^<>\n]|<(?:[^<>\n]|<[^<>\n]*>)*>)*>")


def _skip_space(low: bytes, j: int, limit: int) -> int:
    while j < limit and low[j] in b" \t\r\n":
        j += 1
    return j


# The bytes that open, close or end a parameter list.
_PAREN_STOP_RE = re.compile(rb"[();{}]")


def _close_paren(low: bytes, j: int, limit: int) -> int:
    """Index just past the ``)`` matching the ``(`` at j; -1 when not found before limit."""
    depth = 0
    for m in _PAREN_STOP_RE.finditer(low, j, limit):  # only these bytes can decide
        c = low[m.start()]
        if c == 0x28:
            depth += 1
        elif c == 0x29:
            depth -= 1
            if depth == 0:
                return m.end()
        else:
            return -1
    return -1


# After a type's name, what makes ``struct NAME`` a use of the type: another name (a
# variable, a function), a pointer, a reference, a parameter list. C++'s ``final``
# (``class X final {``) still defines.
_TYPE_USE_RE = re.compile(rb"[ \t\r\n]*(?!final\b)[\w$*&(]")


# ``using NAME =`` (C++, C#) names a type; any other ``using`` line imports one.
_ALIAS_RE = re.compile(rb"[ \t]*=(?!=)")


# CommonJS's import: a binding whose value is ``require(...)`` (or a member of one) names
# what another module defines, as ``import x from`` and Python's ``import`` do.
_JS_BINDING_WORDS = frozenset((b"var ", b"let ", b"const "))
_REQUIRE_RE = re.compile(rb"(?:[ \t]*:[^=;\n]{1,80})?[ \t]*=[ \t\r\n]*require[ \t\r\n]*\(")


def after_word(low: bytes, end: int, word: bytes, language: "Language") -> float:
    """What a definition word then a name ending at ``end`` says: nothing when a type word
    only uses the type there (``struct timeval tv;``, ``struct s *make(``) or ``using``
    imports it (``using std::string;``); for a word whose definitions need a body,
    :func:`body_follows`; else :data:`DEFINES`."""
    if word in language.type_words and _TYPE_USE_RE.match(low, end) is not None:
        return 0.0
    if word == b"using ":
        return DEFINES if _ALIAS_RE.match(low, end) is not None else 0.0
    if language.receivers and continues_chain(low, end):
        return 0.0  # the receiver of ``def self.name``, ``fun String.slug``: not what is defined
    if word == b"def " and language is GROOVY and _ALIAS_RE.match(low, end) is not None:
        return 0.0  # Groovy's ``def result = compute()``: a variable, typed at run time
    if word in _JS_BINDING_WORDS and language is JS and _REQUIRE_RE.match(low, end) is not None:
        return 0.0  # ``var pathRegexp = require('path-to-regexp')``: an import, as ``import`` is
    if word not in language.body_words:
        return DEFINES
    start = end
    while start > 0 and low[start - 1] in _NAME_BYTES:
        start -= 1
    return body_follows(low, end, low[start:end])


def continues_chain(low: bytes, end: int) -> bool:
    """Whether the name ending at ``end`` goes on as a receiver chain: ``.`` or ``:``
    right before another name (``self.name``, ``M:name``, ``Foo::Bar``), not a type's
    ``: Base`` or a sentence's last dot."""
    return end + 1 < len(low) and low[end] in b".:" and low[end + 1] in _CHAIN_NEXT


_CHAIN_NEXT = frozenset(b"abcdefghijklmnopqrstuvwxyz_:")


def body_follows(low: bytes, end: int, name: bytes = b"") -> float:
    """After a defined name (or a signature's ``)``) ending at ``end``: :data:`DEFINES`
    when a body (``{``) comes before any ``;``, :data:`DECLARES` when a ``;`` comes first
    (a prototype, a forward declaration, a required trait method), and DEFINES when
    neither shows within :data:`MAX_SIGNATURE_BYTES` (no evidence against it). A body
    that only passes the call on to the same name elsewhere (:func:`forwards`, ``name``
    given) declares it: the work is done where that one is defined."""
    limit = min(len(low), end + MAX_SIGNATURE_BYTES)
    semi = low.find(b";", end, limit)
    brace = low.find(b"{", end, semi if semi >= 0 else limit)
    if brace < 0:
        return DEFINES if semi < 0 else DECLARES
    return DECLARES if name and forwards(low, brace, name) else DEFINES


# The longest body a forwarding method has (``{ return delegate.getValue(); }``).
FORWARD_BODY_MAX = 200
# A forwarding body: one call of a name on another object, the base class or a pointer
# (``return this.delegate.NAME(a);``, ``super.NAME()``, ``impl_->NAME(x)``, ``Base::NAME()``).
_FORWARD_HEAD_RE = re.compile(rb"(?:return[ \t]+)?(?:await[ \t]+)?[\w$.\[\]()]*?[\w$)\]](?:\.|->|::)\Z")
_FORWARD_CALL_RE = re.compile(rb"(?:\.|->|::)([\w$]+)[ \t]*\(")


def forwards(low: bytes, brace: int, name: bytes) -> bool:
    """Whether the body opening at ``brace`` only passes the call on: one statement
    calling ``name`` on another object (a delegate, a wrapped value, the base class)."""
    close = low.find(b"}", brace + 1, brace + 1 + FORWARD_BODY_MAX)
    if close < 0:
        return False
    body = low[brace + 1:close].strip()
    call = _FORWARD_CALL_RE.search(body)
    if call is None or call.group(1) != name or _FORWARD_HEAD_RE.match(body, 0, call.start(1)) is None:
        return False
    # The call's own arguments, then nothing but the statement's end: ``a.size() + 1`` or
    # ``inner.name().trim()`` does work of its own.
    depth, j = 0, call.end() - 1
    while j < len(body):
        depth += (body[j] == 0x28) - (body[j] == 0x29)
        if depth == 0:
            break
        j += 1
    return depth == 0 and body[j + 1:].strip() in (b"", b";")


# A return type and qualifiers before a function's name: identifiers, ``::``, pointers,
# references, template arguments, annotations; nothing that makes the line a statement.
_HEAD_RE = re.compile(rb"[\w$@*&:<>,.\[\]? \t~]*\Z")
# A type's header up to its supertypes (Kotlin, Scala, C#): the name called after it is
# the supertype's constructor, not a method the file defines (a trial's okhttp test
# doubles "defined ProxySelector", the JDK class they extend, and led a --keywords round).
# (A line's head holds no parenthesis here, _HEAD_RE: no nested repeats, so no line makes
# it backtrack.) A head that is only a colon continues a header (Kotlin's supertypes on
# their own line) or a C++ constructor's initialisers: no definition either.
_SUPERTYPE_HEAD_RE = re.compile(rb"(?<![\w$])(?:class|object|interface|enum|record|struct)[ \t]+[\w$.]+[ \t]*"
                                rb"(?:<[^<>]*>[ \t]*)?:(?!:)[^:]*\Z|\A[ \t]*:(?!:)[^:]*\Z")
# Words that make a name followed by ``(`` a call or an expression, never a definition.
_STATEMENT_WORDS = frozenset(
    b"return new throw else case goto delete sizeof typeof instanceof await yield in of "
    b"not and or co_return co_await co_yield echo print if while for switch do catch using "
    b"assert static_assert decltype alignof noexcept".split()
)
# JS/TS words that may stand before a method's name (``static async get name(``).
_JS_METHOD_WORDS = frozenset(
    b"async static get set public private protected readonly override abstract declare "
    b"export default function *".split()
)
# What may follow a call-shaped definition's ``)`` before its body or its ``;``.
_JS_TAIL_RE = re.compile(rb"[ \t]*(?::[^;{}=\n]*)?[ \t\r\n]*\{")
# ... before the ``;`` of a method's signature: a return type (``f(a): T;``), or nothing
# after ``abstract`` / ``declare``.
_JS_SIGNATURE_RE = re.compile(rb"[ \t]*:[^;{}=\n]*;")
_JS_BARE_SIGNATURE_RE = re.compile(rb"[ \t]*;")
_JS_ABSTRACT_WORDS = frozenset((b"abstract", b"declare"))


# No definition's head (a return type and its modifiers, ``impl<...> Trait for``,
# ``module.exports.``) is longer than this: a longer head is code before the name on one
# long line (a minified bundle), and looking for its start once per occurrence would
# cost the square of the line.
LINE_HEAD_MAX = 512


def line_head(low: bytes, start: int) -> "bytes | None":
    """The text before ``start`` on its line, or None when it is longer than LINE_HEAD_MAX."""
    lo = max(0, start - LINE_HEAD_MAX)
    ls = low.rfind(b"\n", lo, start)
    if ls < 0 and lo > 0:
        return None
    return low[ls + 1:start]


# Attributes and annotations at the start of a definition's line (their arguments too).
_LEADING_ATTRIBUTES_RE = re.compile(rb"\A([ \t]*)(?:(?:\[[^\[\]\n]*\]|@[\w.]+(?:\([^()\n]*\))?)[ \t]*)+")
# A generic method's own type parameters between its name and ``(`` (``from<T>(``,
# ``map<K, V extends Key>(``): one flat ``<…>``, short, on the name's line.
GENERIC_ARGS = rb"<[^<>\n;{}()]{0,200}>"
_GENERIC_ARGS_RE = re.compile(GENERIC_ARGS)


def call_definition(low: bytes, start: int, end: int, lang: Language) -> float:
    """A function or method written without a definition keyword, its name at
    ``low[start:end]``: ``static int f(`` / ``Foo Bar::f(`` / ``public <T> T f(`` (C, C++,
    Java), ``f(a) {`` / ``async f(a): T {`` (JS/TS methods), with a body (:data:`DEFINES`)
    or a ``;`` (:data:`DECLARES`); 0.0 when it is a call, an expression or a statement."""
    n = len(low)
    limit = min(n, end + MAX_SIGNATURE_BYTES)
    j = end
    while j < n and low[j] in b" \t":
        j += 1
    if j < n and low[j] == 0x3C:  # a generic method's own parameters: ``from<T>(``
        args = _GENERIC_ARGS_RE.match(low, j)
        if args is None:
            return 0.0
        j = args.end()
        while j < n and low[j] in b" \t":
            j += 1
    if j >= n or low[j] != 0x28:
        return 0.0
    head = line_head(low, start)
    if head is None or head.endswith(b".") or low[start:end] in _STATEMENT_WORDS:
        return 0.0  # obj.f( is a call (Class::f( keeps its "::"); if ( is a statement
    if head.rstrip(b" \t").endswith((b"[", b"@")):
        return 0.0  # an attribute or annotation: ``[HttpGet("x")]``, ``@SuppressWarnings("x")``
    if head.lstrip(b" \t")[:1] in (b"[", b"@"):
        # ... before a definition on its line: ``[Obsolete("x")] public void f()``
        head = _LEADING_ATTRIBUTES_RE.sub(lambda m: m.group(1), head, count=1)
    if not _HEAD_RE.match(head):
        return 0.0
    if b":" in head and _SUPERTYPE_HEAD_RE.search(head):
        return 0.0  # a supertype's constructor: ``class FakeProxySelector : ProxySelector() {``
    words = head.replace(b"::", b" ").replace(b"*", b" ").replace(b"&", b" ").split()
    if any(w in _STATEMENT_WORDS for w in words):
        return 0.0
    indented = head[:1] in (b" ", b"\t")
    # Every answer but the last is 0.0, so the tests that need no ``)`` come first.
    js = lang is JS or lang is TS_DECLARATIONS
    if js:
        if not all(w in _JS_METHOD_WORDS for w in words):
            return 0.0
        if not indented and not words:
            return 0.0  # a bare call at the top level of a script: f(a) {…} is no JS
    elif not words and (not lang.bare_calls or indented):
        # No return type on this line: a C function whose type is on the line above, or
        # a constructor in a class body; an indented bare name is a call statement.
        return 0.0
    close = _close_paren(low, j, limit)
    if close < 0:
        return 0.0
    if js:
        tail = _JS_TAIL_RE.match(low, close)
        if tail:
            return DECLARES if forwards(low, tail.end() - 1, low[start:end]) else DEFINES
        # A signature: ``f(a): T;`` (an interface's method, an overload), ``abstract f();``
        if _JS_SIGNATURE_RE.match(low, close) or (
                _JS_ABSTRACT_WORDS.intersection(words) and _JS_BARE_SIGNATURE_RE.match(low, close)):
            return DECLARES
        return 0.0
    k = _skip_space(low, close, limit)
    if low.startswith(b"=>", k):
        return DEFINES  # C#'s expression-bodied member: ``int Count() => items.Length;``
    if not words:
        return DEFINES if k < limit and low[k] == 0x7B else 0.0
    return body_follows(low, close, low[start:end])


# C#: a property's accessors after its name, on its line or the next ones (``{ get; set; }``,
# ``{ private set; }``, ``{ [Attr] init; }``), or its expression body (``=> items.Count;``).
_CS_ACCESSORS_RE = re.compile(
    rb"[ \t\r\n]*\{[ \t\r\n]*(?:\[[^\[\]\n]*\][ \t]*)*(?:(?:public|private|protected|internal)[ \t]+)*"
    rb"(?:get|set|init)(?![\w$])|[ \t]*=>")


def property_definition(low: bytes, start: int, end: int) -> float:
    """C#: the property named at ``low[start:end]``: a type (and modifiers, attributes)
    before it on its line, accessors or an expression body after it."""
    accessors = _CS_ACCESSORS_RE.match(low, end)
    if not accessors:
        return 0.0
    if accessors.group().endswith(b"=>"):
        line_end = low.find(b"\n", accessors.end())
        if low[accessors.end():line_end if line_end >= 0 else len(low)].rstrip().endswith(b","):
            return 0.0  # a switch expression's arm: ``Circle c => c.Radius,``
    head = line_head(low, start)
    if head is None:
        return 0.0
    if head.lstrip(b" \t")[:1] == b"[":
        head = _LEADING_ATTRIBUTES_RE.sub(lambda m: m.group(1), head, count=1)
    if not _HEAD_RE.match(head) or head.rstrip(b" \t").endswith((b".", b"[")):
        return 0.0
    words = head.split()
    return DEFINES if words and not any(w in _STATEMENT_WORDS for w in words) else 0.0


def export_definition(low: bytes, start: int, end: int) -> float:
    """JS/TS: ``exports.name =`` / ``module.exports.name =`` at a line's start, and an
    object literal's ``name: function`` / ``name: (…) =>`` / ``name: async``."""
    head = line_head(low, start)
    if head is None:
        return 0.0
    head = head.strip()
    j = end
    n = len(low)
    while j < n and low[j] in b" \t":
        j += 1
    if head in (b"exports.", b"module.exports."):
        return DEFINES if j < n and low[j] == 0x3D and low[j + 1:j + 2] != b"=" else 0.0
    if head.endswith(b".") and _MEMBER_RE.fullmatch(head):
        # proto.format = function (…) / Foo.prototype.bar = (…) => …: a method attached.
        if j < n and low[j] == 0x3D and low[j + 1:j + 2] not in (b"=", b">"):
            return DEFINES if _is_function_value(low[j + 1:j + 1 + MAX_SIGNATURE_BYTES]) else 0.0
        return 0.0
    if head == b"module.exports =" or head == b"export default":
        k = j
        return DEFINES if k >= n or low[k] in b";\n\r" else 0.0
    if head or j >= n or low[j] != 0x3A:
        return 0.0
    return DEFINES if _is_function_value(low[j + 1:j + 1 + MAX_SIGNATURE_BYTES]) else 0.0


# An object or ``this`` and its members before an attached method's name (``proto.``).
_MEMBER_RE = re.compile(rb"[\w$]+(?:\.[\w$]+)*\.")
# A single-parameter arrow function: ``x => …``.
_ARROW_PARAM_RE = re.compile(rb"[\w$]+[ \t]*=>")


def _is_function_value(rest: bytes) -> bool:
    """Whether JS text after ``=`` or ``:`` starts a function: ``function``, ``async``,
    ``(…) =>``, ``x =>``."""
    rest = rest.lstrip(b" \t")
    if rest.startswith((b"function", b"async ", b"async(")):
        return True
    if rest.startswith(b"("):
        close = _close_paren(rest, 0, len(rest))
        return close > 0 and rest[close:].lstrip(b" \t").startswith(b"=>")
    return _ARROW_PARAM_RE.match(rest) is not None


# A class member's modifiers (``private readonly ttl: number``): with one of them a
# name followed by ``:`` or ``=`` is a field; ``abstract`` and ``declare`` only declare it.
_JS_MEMBER_WORDS = frozenset(b"public private protected readonly static override abstract declare accessor".split())
_JS_FIELD_RE = re.compile(rb"[?!]?[ \t]*(:|=(?![=>]))")


def field_definition(low: bytes, start: int, end: int) -> float:
    """JS/TS: a class field on its own indented line: after member modifiers
    (``private readonly ttl: number``, ``static cache = new Map()``), or holding a
    function (``handleClick = (e) => {``, ``onLoad: Handler = async () => {``)."""
    m = _JS_FIELD_RE.match(low, end)
    if m is None:
        return 0.0
    head = line_head(low, start)
    if head is None or head[:1] not in (b" ", b"\t"):
        return 0.0
    words = head.split()
    if not all(w in _JS_MEMBER_WORDS or w in (b"async", b"get", b"set") for w in words):
        return 0.0
    if words and _JS_MEMBER_WORDS.intersection(words):
        return DECLARES if _JS_ABSTRACT_WORDS.intersection(words) else DEFINES
    rest = low[m.end():m.end() + MAX_SIGNATURE_BYTES]
    if m.group(1) == b":":
        eq = _JS_FIELD_VALUE_RE.match(rest)
        if eq is None:
            return 0.0
        rest = rest[eq.end():]
    return DEFINES if _is_function_value(rest) else 0.0


# A field's type annotation up to its value's ``=``.
_JS_FIELD_VALUE_RE = re.compile(rb"[^;{}=\n]*=(?![=>])")


def receiver_definition(low: bytes, start: int, end: int, language: Language) -> float:
    """A definition word, a receiver and ``.`` or ``:``, then the name at ``low[start:end]``:
    Ruby ``def self.name``, Lua ``function M.name`` / ``function M:name``, Elixir
    ``defmodule App.Name``."""
    if start == 0 or low[start - 1] not in b".:":
        return 0.0
    lo = max(0, start - RECEIVER_MAX)
    q = start - 1
    while q > lo and low[q - 1] in _RECEIVER_BYTES:
        q -= 1
    if q >= start - 1 or low[q] in b".:" or continues_chain(low, end):
        return 0.0  # no receiver before the dot, or this name is part of the receiver
    for word in language.words:
        w = q - len(word)
        if w >= 0 and low.startswith(word, w) and head_ok(low, w, word, language):
            return DEFINES
    return 0.0


# What a receiver is spelled with (lower-cased): names, ``.`` and ``:``; and the longest
# one, its last ``.`` or ``:`` included (``self.``, ``App.Web.Router.``): a longer chain
# is no definition's head (it would be followed back byte by byte from each name).
_RECEIVER_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_.:")
RECEIVER_MAX = 64
# The receiver chain after a definition word, as far as a name may start in it, and that
# name (index.def_sites, defined_names).
RECEIVER_CHAIN_RE = re.compile(rb"[a-z0-9_.:]{0,%d}[a-z0-9_]*" % RECEIVER_MAX)
# Go's declaration blocks, opened by a line of their own and closed by a ``)`` line.
GROUP_OPENERS = (b"type (", b"const (", b"var (")


def group_spans(low: bytes) -> list[tuple[int, int]]:
    """Go: (start, end) of each ``type (`` / ``const (`` / ``var (`` block, from its opening
    line to the first ``)`` line after it (an opener inside a block opens nothing). A raw
    string's lines (a query in backquotes) are no block lines: the spans leave them out."""
    starts = [0] if low.startswith(GROUP_OPENERS) and _opener_ends_line(low, low.find(b"(") + 1) else []
    for opener in GROUP_OPENERS:
        probe = b"\n" + opener
        p = low.find(probe)
        while p >= 0:
            if _opener_ends_line(low, p + len(probe)):  # (``var ()`` opens no block)
                starts.append(p + 1)
            p = low.find(probe, p + 1)
    spans: list[tuple[int, int]] = []
    end = -1
    for start in sorted(starts):
        if start < end:
            continue
        end = _block_spans(low, start, spans)
    return spans


# What a Go block holds that may hide its ``)`` or its lines: its end, a raw string, a
# comment, and the strings and runes that may hold a backquote (``"`"``, ``'`'``).
_GO_BLOCK_TOKEN_RE = re.compile(rb'\n\)|`|//|/\*|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')


def _block_spans(low: bytes, start: int, spans: list[tuple[int, int]]) -> int:
    """Append the spans of the block opening at ``start`` to ``spans``, around its raw
    strings and comments that run over lines (their lines are no block lines); return
    where the block ends. One pass: a string, a rune or a comment is skipped whole."""
    n = len(low)
    span_start = pos = start
    while True:
        m = _GO_BLOCK_TOKEN_RE.search(low, pos)
        if m is None:
            spans.append((span_start, n))
            return n
        token = m.group()
        if token == b"\n)":
            spans.append((span_start, m.start()))
            return m.start()
        if token == b"//":
            line_end = low.find(b"\n", m.end())
            pos = n if line_end < 0 else line_end
            continue
        if token not in (b"`", b"/*"):
            pos = m.end()  # a string or a rune
            continue
        shut = low.find(b"`" if token == b"`" else b"*/", m.end())
        if shut < 0:
            spans.append((span_start, m.start()))
            return n
        pos = shut + (1 if token == b"`" else 2)
        if low.find(b"\n", m.end(), shut) >= 0:
            spans.append((span_start, m.start()))
            span_start = pos


def _opener_ends_line(low: bytes, j: int) -> bool:
    """Whether a block's ``(`` ending at ``j`` ends its line (blanks and a comment after it)."""
    k = j
    while k < len(low) and low[k] in b" \t\r":
        k += 1
    return k >= len(low) or low[k] == 0x0A or low.startswith(b"//", k)


def group_definition(low: bytes, start: int, end: int, spans: Sequence[tuple[int, int]]) -> float:
    """Go: the name at ``low[start:end]`` at the start of a line (one tab in) inside one
    of ``spans`` (:func:`group_spans`): ``MaxRetries = 3``, ``HandlerFunc func(int) error``."""
    if start < 2 or low[start - 1] != 0x09 or low[start - 2] != 0x0A:
        return 0.0
    if end < len(low) and low[end] not in b" \t=,[\r\n":
        return 0.0
    k = bisect_right(spans, (start, len(low) + 1)) - 1
    return DEFINES if k >= 0 and spans[k][0] < start < spans[k][1] else 0.0


def impl_definition(low: bytes, start: int, end: int) -> float:
    """Rust: the type on an ``impl`` line (``impl<T> Trait for Name<T> {``) is implemented
    there (:data:`DEFINES`); the trait only for that type (:data:`DECLARES`: its
    definition is elsewhere). Qualifiers (``fmt::``) and generic arguments are neither."""
    head = line_head(low, start)
    if head is None:
        return 0.0
    head = head.lstrip(b" \t")
    if head.startswith(b"unsafe "):
        head = head[len(b"unsafe "):]
    if not (head.startswith(b"impl ") or head.startswith(b"impl<")):
        return 0.0
    if start > 0 and (low[start - 1:start].isalnum() or low[start - 1] == 0x5F):
        return 0.0
    if end < len(low) and (low[end:end + 1].isalnum() or low[end] == 0x5F):
        return 0.0
    if low.startswith(b"::", end) or head.count(b"<") > head.count(b">"):
        return 0.0  # a path's qualifier (``error::Error``) or a generic argument (``Name<T>``)
    le = low.find(b"\n", end)
    line_rest = low[end:le if le >= 0 else len(low)]
    if b";" in line_rest.split(b"{", 1)[0]:
        return 0.0
    if b" for " not in head and b" for " in line_rest.split(b"{", 1)[0]:
        return DECLARES  # the trait of ``impl Trait for Type``: implemented for one type, defined elsewhere
    return DEFINES


# --- Inflections ------------------------------------------------------------------------

# English endings, longest first: stemming a word of the task strips one (``limiting`` ->
# ``limit``), and a name that is a keyword plus one (``rate_limiter`` for ``rate limit``,
# ``hints.py`` for ``hint``) is another form of it.
SUFFIXES = ("ations", "ation", "ings", "ing", "ers", "er", "ies", "ied", "ed", "es", "s", "y")
INFLECTIONS = frozenset(SUFFIXES)

# --- Paths ------------------------------------------------------------------------------

# Extensions a quoted file path may end in.
PATH_EXTENSIONS = (
    "py pyi js jsx mjs cjs ts tsx go rs java kt kts scala c h cc cpp cxx hh hpp hxx "
    "cs rb php swift m mm lua pl sh bash zsh sql r jl ex exs erl hs ml vue svelte "
    "css scss less html htm xml json yaml yml toml ini cfg conf md markdown rst adoc txt gradle cff bib"
).split()
# File stems that stand for their directory (the package or module it is).
PACKAGE_STEMS = frozenset(("__init__", "index", "mod"))

# --- Companion files ----------------------------------------------------------------------

# C and C++ split one unit of code over a header (its declarations, inline and template
# code) and an implementation file of the same stem in the same directory (``fileio.h``
# and ``fileio.c``; ``dom.h`` and ``dom-inl.h``): a fix of one often changes the other.
C_HEADER_EXTENSIONS = frozenset("h hh hpp hxx h++ inl ipp tpp".split())
# ... of which these hold inline or template implementation, not declarations.
C_INLINE_EXTENSIONS = frozenset("inl ipp tpp".split())
C_SOURCE_EXTENSIONS = frozenset("c cc cpp cxx c++".split())
# Stem endings that mark a header's inline or implementation part (``dom-inl.h``).
_COMPANION_TAILS = ("-inl", "_inl", "-impl", "_impl")


def companion_key(rel: str) -> str:
    """The unit a C or C++ file belongs to (its directory and stem, an ``-inl`` or
    ``_impl`` tail dropped), shared by its header and its implementation; '' for any
    other file."""
    ext = extension(rel)
    if ext not in C_HEADER_EXTENSIONS and ext not in C_SOURCE_EXTENSIONS:
        return ""
    stem = rel[: len(rel) - len(ext) - 1].lower()
    for tail in _COMPANION_TAILS:
        if stem.endswith(tail) and "/" not in stem[-len(tail):]:
            stem = stem[: -len(tail)]
            break
    return stem


# A TypeScript declaration file describes the module of its name: ``utc.d.ts`` the module
# ``utc.js`` or the package ``utc/index.js``, wherever the types are kept (beside the code,
# or in a ``types/`` tree mirroring it). The module's name is its file's stem, or its
# directory's name when the stem stands for the directory (``index``).
_JS_MODULE_EXTENSIONS = frozenset("js jsx mjs cjs ts tsx mts cts".split())


def module_name(rel: str) -> str:
    """The name of the JS/TS module a file is or declares (``utc`` for ``types/utc.d.ts``
    and for ``src/plugin/utc/index.js``); '' for a file of another language, and for a
    package stem at the top of the tree."""
    parts = rel.lower().split("/")
    base = parts[-1]
    for suffix in _DECLARATION_SUFFIXES:
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    else:
        if extension(rel) not in _JS_MODULE_EXTENSIONS:
            return ""
        base = base.rpartition(".")[0]
    if base in PACKAGE_STEMS:
        return parts[-2] if len(parts) > 1 else ""
    return base


def is_declaration(rel: str) -> bool:
    """A declaration file (``.d.ts``, ``.d.mts``, ``.d.cts``, Flow's ``.js.flow``)."""
    return rel.lower().endswith(_DECLARATION_SUFFIXES)


# --- Translations of one document ----------------------------------------------------------

# A document and its translations share a name, in sibling directories
# (``docs/en/API-reference.md``, ``docs/ko/API-reference.md``) or with a language tag
# (``readme_de.md``, ``README.zh-CN.md``, ``README-pt-br.md``).
_LANGUAGE_TAG_RE = re.compile(r"[._-][a-z]{2,3}(?:[_-][a-z]{2,4})?$")


def document_key(rel: str) -> str:
    """The document a prose file is a version of: its name without a language tag, in
    lower case (``readme`` for ``docs/readme_pt-BR.md``)."""
    base = rel.rsplit("/", 1)[-1].lower()
    stem, dot, ext = base.rpartition(".")
    if not dot:
        stem, ext = base, ""
    return _LANGUAGE_TAG_RE.sub("", stem) + "." + ext


# --- File roles -------------------------------------------------------------------------

# TypeScript declaration files are a fix's target about once in ten of the times they rank
# in the top 10 (the other-language dev split: 4 of 39 JS issues change one, always beside
# its implementation), so their evidence counts this much. Lifted behind the module they
# declare (score.COMPANION_SHARE of it, times this), a declaration stays below half of
# that module's evidence: it follows the module without counting as its rival (trust's
# crowd). Measured on the other-language split: 0.5 and 0.6 rank alike, 0.6 stops 2 loops
# with the answer found (their declaration in the crowd) later, 0.7 ranks worse.
DECLARATION_FACTOR = 0.5

# The suffixes of a template that becomes a named file - configure's and CMake's ``.in``
# (``config.h.in``), and a scaffold a tool copies into its user's project (Django's
# ``settings.py-tpl``, ``main.go.tmpl``) - and the template's role when the file it
# becomes is plain source. ``.in`` alone names a template with or without an inner
# extension (``zsh.in``); the others only over one (``main.tpl`` may be a page).
TEMPLATE_SUFFIXES = (".in", "-tpl", ".tpl", ".tmpl", ".template")
TEMPLATE_ROLE = ("build", 0.4)
# (role, pattern over the relative path, factor its evidence is scaled by), first match
# wins. Factors: how often a file of that role is where a fix lands, roughly.
# A folder of documentation (a docs site's versions and kinds, ``api-docs/``; Maven's
# site ``src/site/``): its files are prose, its templates the manual's pages.
_DOCS_FOLDER = r"(?:docs?|documentation|man|release[-_]?notes?|[\w-]*[_-]docs)/|src/site/"
ROLE_RULES: tuple[tuple[str, "re.Pattern[str]", float], ...] = (
    # Tests as each ecosystem lays them out: tests/ and test/ (Python, Rust crates' tests/,
    # Maven's src/test/java), __tests__ and *.spec.ts / *.test.js (JS), *_test.go (Go),
    # and the fixtures beside them (Go's testdata/, fixtures/, __mocks__/); a file whose
    # type says test (``fuzzer-timeout.test``, caddy's ``*.caddyfiletest`` adapter cases);
    # a directory named for the tests of one kind (``js_tests/``, ``unit_tests/``,
    # ``installation_tests/``). And as the JVM, .NET, Swift and
    # Ruby name them: ``Tests/``, ``androidTest/``, ``App.Tests/``, ``UnitTests/``,
    # ``SessionTests.cs``, ``FooTest.java``, ``user_spec.rb``, ``UserSpec.scala``; Perl's
    # ``t/*.t`` and a ``testcases/`` folder (a trial's C project: its .t tests led); a module
    # named ``tests`` (Rust's ``mod tests;`` in ``src/type_/tests.rs``: a trial's gleam
    # ranking led with one; a Django app's ``tests.py``), and a program named ``test`` or
    # ``spec`` at the top of the tree (a small package's ``test.js``: a trial's slugify
    # ranking led with it; deeper, ``test.py`` may be a command's, Django's; a root
    # ``spec.yaml`` is an API's description, a Go ``test.go`` part of its package).
    # End-to-end tests (``*.e2e.ts``, ``*.e2e-spec.ts``, Cypress's ``cypress/`` and
    # ``*.cy.ts``; not an ``e2e/`` folder, which may be end-to-end encryption's code) and
    # Jest's snapshots (``__snapshots__/``, ``*.snap``: a trial's fast-glob ranking held
    # ``__snapshots__/only-files.e2e.js`` 4th on a folder name of its fixtures). Test
    # doubles: a ``mocks/`` folder, ``*_mock.go`` and mockgen's ``mock_*.go`` (a trial's gh
    # ranking held a generated ``manager_mock.go``; ``mock/`` alone is a mocking library's
    # own code).
    ("test", re.compile(r"(^|/)(tests?|testing|testcases?|__tests__|spec|specs|cypress|test_?utils?|testdata|fixtures?|__fixtures__|__mocks__|__snapshots__|mocks|[a-z0-9]+_tests?)/|(^|/)(test_[^/]*|[^/]*_tests?\.[a-z]+|tests\.[a-z]+|[^/]*\.(test|spec|e2e|e2e-spec|cy)\.[a-z]+|conftest\.py)$|^(test|spec)\.(js|mjs|cjs|jsx|ts|mts|cts|tsx|py|rb|rs|c|cc|cpp|java|kt|php|lua|pl|sh)$|\.[a-z]*tests?$|\.t$|\.snap$"
                        r"|[^/]_mocks?\.[a-z]+$|(^|/)mock_[^/]*\.go$"
                        r"|(^|/)([A-Za-z0-9._-]*[a-z0-9._-])?Test(s|Cases?)?/|[a-z0-9]Tests?\.[A-Za-z]+$|_spec\.rb$|[a-z0-9]Spec\.(scala|kt|groovy)$"), 0.3),
    # TypeScript declaration files (``types/index.d.ts``), Flow's (``index.js.flow``) and
    # Python stubs (``.pyi``): the types of code that lives elsewhere; a fix lands in the
    # implementation and changes its declaration only when it changes the API (a trial's
    # mypy ranking led with its bundled typeshed's ``ast.pyi``). DECLARATION_FACTOR says
    # how much less they count.
    ("declarations", re.compile(r"\.d\.[mc]?ts$|\.js\.flow$|\.pyi$", re.I), DECLARATION_FACTOR),
    # Build and tool set-up: Makefiles, CMake, Meson, Go's module files, IDE projects,
    # bundler/test-runner configs, and package manifests (``package.json``, ``Cargo.toml``,
    # ``pyproject.toml``, ``setup.py``: measured on the dev splits, 9 of the top-10 slots,
    # none gold; they hold a project's name and version, which issues quote).
    # So are the build scripts and manifests of the JVM (Gradle, sbt), .NET (MSBuild),
    # Swift, Ruby, Elixir and Dart: ``build.gradle.kts``, ``App.csproj``, ``Package.swift``.
    # And the recipes that package the product (an RPM ``.spec``, Arch's ``PKGBUILD``, a
    # ``Dockerfile``, a root ``debian/``; python-debian's ``src/debian/`` is code): they hold
    # its name, description and options (a trial's gdu ranking held ``gdu.spec`` 6th, above
    # both files of the fix). And the wrappers Gradle and Maven write into a project
    # (``gradlew``, ``mvnw.cmd``: a trial's jcommander ranking held ``gradlew`` 3rd), and a
    # typed package's empty marker (``py.typed``: a trial's dotenv top 10 held one).
    ("build", re.compile(r"(^|/)(makefile|gnumakefile|cmakelists\.txt|meson\.build|build\.gradle|pom\.xml|build\.rs|go\.mod|go\.sum|go\.work"
                         r"|gradlew|gradlew\.bat|mvnw|mvnw\.cmd|py\.typed"
                         r"|package\.json|cargo\.toml|pyproject\.toml|setup\.py|setup\.cfg|tox\.ini|composer\.json|tsconfig(\.[\w-]+)?\.json"
                         r"|package\.swift|gemfile|rakefile|podfile|cartfile|build\.sbt|mix\.exs|pubspec\.yaml|directory\.build\.(props|targets))$"
                         r"|\.(mk|cmake|vcx?proj|sln|filters|bazel|bzl|gradle|gradle\.kts|sbt|csproj|fsproj|vbproj|gemspec|podspec|spec)$"
                         r"|(^|/)(pkgbuild|(dockerfile|containerfile)(\.[\w.-]+)?|[\w.-]+\.dockerfile)$|^debian/"
                         r"|(^|/)[^/]*\.(conf|config)\.(js|cjs|mjs|ts)$", re.I), 0.4),
    # A plain-text file in a templates folder is a template the program renders (a shell's
    # init script, an e-mail body, Django's ``technical_500.txt``), read like the HTML
    # templates beside it: data, not documentation (a trial's zoxide fix changed
    # ``templates/nushell.txt``, ranked 8th as docs behind the wrapper that loads it).
    # (Not in a docs folder: Django's ``docs/ref/templates/api.txt`` is the manual's page
    # about templates.)
    ("data", re.compile(r"^(?!(?:[^/]+/)*(?:%s))(?:[^/]+/)*templates?/(?:[^/]+/)*[^/]+\.txt$" % _DOCS_FOLDER, re.I), 0.6),
    # Prose: docs, readmes, release notes (NEWS, ChangeLog, release-notes/, a bare README,
    # RELEASE_NOTES or TODO: a trial's mpv ranking led with RELEASE_NOTES), man pages (zstd.1),
    # Doxygen's set-up (``Doxyfile``: a trial's C++ top 10 held one), Maven's site
    # (``src/site/``) and a spelling checker's word list (``whitelist.words``): a trial's
    # checkstyle top 5 held both.
    # A docs site's versions and kinds (``versioned_docs/``, ``api-docs/``) and MDX pages too.
    # A help text with no extension named for what it is (``doc``, ``help``, ``manual``,
    # ``usage``, ``faq``): a trial's C program shows its ``src/doc`` in its help screen,
    # and the loop scored it 0.87, first, on the task's plain words.
    # How to cite the project and who owns what (``CITATION.cff``, ``CITATION.bib``,
    # ``CODEOWNERS``): metadata, never code; read as source, a trial's ``CITATION.cff``
    # "defined" the ``LICENSE`` its task quoted (``license: MIT``) and ranked 2nd.
    # Markdown's other extensions (``README.markdown``, ``.mdown``, ``.mkd``), AsciiDoc's,
    # Textile's and RDoc's: a trial's linenoise and minimist rankings led with their
    # ``README.markdown`` at 0.90 and 0.88 on reports of a behaviour.
    ("docs", re.compile(r"(^|/)(?:%s)|\.(md|mdx|markdown|mdown|mkdn?|mdwn|rst|txt|adoc|asciidoc|textile|rdoc|words|[1-8])$|(^|/)(changelog|changes|authors|license|notice|doxyfile)[^/]*$|(^|/)citation\.(cff|bib)$|(^|/)(news|history|releases|readme|copying|copyright|todo|credits|thanks|maintainers|codeowners|contributing"
                        r"|release[-_]?notes?|docs?|help|manual|usage|faq)$" % _DOCS_FOLDER, re.I), 0.3),
    # The repository's own maintenance scripts (a root ``scripts/``: release, docs and
    # theme generators, CI helpers): tooling around the product, not the product. Only
    # at the root: a package's own ``scripts`` module is its code. Measured on the dev
    # splits: 4 of the other-language split's top-10 slots, 1 of Python's, no gold file.
    ("build", re.compile(r"^scripts/"), 0.4),
    # Frozen copies of older code kept for compatibility (``legacy/``, ``deprecated/``,
    # ``obsolete/``): a fix lands in the current code. Measured on the dev splits: 32 of
    # the top-10 slots on the other-language split, none gold (none on Python's).
    ("legacy", re.compile(r"(^|/)(legacy|deprecated|obsolete)/"), 0.4),
    # Examples and benchmarks (Rust's benches/ too), and the scratch apps a project tries
    # itself out in (``playgrounds/sandbox/``: a trial's svelte ranking led with one), also
    # as a kind of them (``xdocs-examples/``, ``go_samples/``: a trial's checkstyle ranking
    # led with a docs example), and their files or data (``sample_files/``, ``demo_files/``,
    # ``sample_data/``: a trial's difftastic ranking held two sample inputs 3rd and 4th),
    # and Maven's project templates (``maven-archetypes/``, ``archetype-resources/``: a
    # trial's pf4j ranking held an archetype's sample plugin 2nd; a game's ``archetypes/``
    # is its code).
    # A program named for what it is at the root or in ``src/`` (``src/example.cpp``
    # beside a header-only library's header) is one as well: a trial's report pointed at
    # its line 93, where the example calls the library, and the loop led with it; the fix
    # was in the header. So is a benchmark script at the root (``bench.mjs``: a trial's destr
    # ranking held it 3rd), as a script (a Go program's root ``bench.go`` is its ``package
    # main``, a library's ``src/bench.rs`` its code). Deeper, it is a module about examples (RSpec's
    # ``lib/rspec/core/example.rb``, an OpenAPI model's ``openapi3/example.go``).
    # A tutorial's programs at the top of the tree (matplotlib's ``tutorials/`` and
    # ``galleries/tutorials/``: on the Lite issues three gold files rose, 23314's from
    # outside the top 20) and the docs' sources (FastAPI's ``docs_src/``) are examples too;
    # a product's own ``src/tutorial/`` (an app's onboarding) is its code.
    ("example", re.compile(r"(^|/)(([\w-]*[_-])?(examples?|samples?|demos?|benchmarks?|bench|benches|playgrounds?|sandbox(es)?)"
                           r"([_-](files|data))?|[\w-]+[_-]archetypes|archetype-resources|docs_src)/"
                           r"|^(galleries/)?tutorials?/|^(src/)?examples?\.[a-z+]+$"
                           r"|^(bench|benchmarks?)\.(m?js|cjs|ts|py|sh|rb)$"), 0.4),
    # Migration files (0001_initial.py, 20190101_add_users.rb), not a migration framework's code.
    ("migration", re.compile(r"(^|/)(migrations?|migrate)/([^/]+/)*\d[^/]*$"), 0.4),
    # Copies of other projects' code: vendor/, third_party/, the private _vendor/ of a
    # package that ships its dependencies inside it (pip, setuptools), and a bundled copy
    # (spdlog's ``fmt/bundled/``: a trial's ranking put its ``core.h`` first). Spelled
    # ``third-party/``, ``3rdparty/`` and in capitals (``Source/ThirdParty/``; not ``Vendor/``
    # or ``External/``, a project's own namespaces in PHP and C#) too (a trial's
    # lnav: rapidyaml's one-file copy in ``src/third-party/`` led its ranking). A root
    # ``deps/`` is the dependencies a C project carries (redis's jemalloc and lua,
    # doxygen's sqlite3: a trial's top file); deeper, it may be a package's own module.
    ("vendored", re.compile(r"(^|/)(_?vendor|_?vendored|(?i:third[-_]?party|3rd[-_]?party)|node_modules|external|extern|_?bundled)/|^deps/"), 0.3),
    # Generated files, and patches (a copy of code in another form); a release's detached
    # signatures and checksums (``sig/v1.3/jq-1.3.tar.gz.asc``) and a prebuilt copy of a
    # generated file (``jq.1.prebuilt``): a trial's jq ranking held seven of them.
    # A package manager's lock file (``Cargo.lock``, ``package-lock.json``, NuGet's
    # ``packages.lock.json``, pnpm's and conda-lock's ``*-lock.yaml``, ``npm-shrinkwrap.json``,
    # Gradle's ``gradle.lockfile``, SwiftPM's ``Package.resolved``; a workflow named
    # ``update-flake-lock.yml`` is no lock file):
    # every dependency's name and version, written by the tool (a trial's destr ranking
    # held ``pnpm-lock.yaml`` 2nd, on package names such as ``escape-string-regexp``).
    # So is what a code generator writes into a folder or a name of its own (``generated/``,
    # ``__generated__/``, Kubernetes' ``zz_generated.deepcopy.go``, ``schema.generated.ts``):
    # a trial's oxc ranking led with ``src/ast_nodes/generated/ast_nodes.rs``, 3rd a JS
    # binding's ``generated/lazy/constructors.js``.
    ("generated", re.compile(r"(\.min\.(js|css)|_pb2\.py|\.pb\.go|\.lock|[.-]lock\.json|(^|/)(pnpm|conda)-lock\.ya?ml"
                             r"|\.lock\.hcl|\.lockfile|(^|/)(npm-shrinkwrap\.json|Package\.resolved)|\.map|\.patch|\.diff"
                             r"|\.(asc|sig|sha1|sha256|sha512|md5)|\.prebuilt)$|(^|/)(dist|build)/"
                             r"|(^|/)(__generated__|_?(?i:generated))/|(^|/)zz_generated[^/]*$|[._]generated\.[a-z]+$"), 0.2),
    # Contributed extras kept at the repository's root beside the product (``contrib/``:
    # ports to other code bases, wrappers, side tools): a fix lands in the product. Only
    # at the root: a package's own ``contrib`` module is its code. Measured on the dev
    # splits: 31 of the other-language split's top-10 slots, none gold (none on Python's).
    ("contrib", re.compile(r"^contrib/"), 0.4),
    # Shell completion scripts (zsh's ``_dust``, ``dust.fish``, ``.bash``, ``.zsh``, ``.elv``,
    # ``.ps1``, ``.nu``) in a completions folder: generated from a command's options or kept
    # beside them, they list every flag and the program's name, which a report quotes
    # (a trial's dust ranking led with ``completions/_dust``, four in its top 7; trials
    # held such scripts in the top 20 of six other command-line tools, none a fix's file).
    # A completion engine's own code (``ide-completion/src/completions/dot.rs``) is source.
    # (Read from the path's start once: the folder anywhere, then the last part's form.)
    # bash-completion's own folder holds scripts named for their command (``gdu``).
    # So is one named for its shell (``zsh.completion``, ``fish.completion``: a trial's
    # gopass ranked two in its top 22).
    ("completion", re.compile(r"^(?:(?=(?:[^/]*/)*?(?:[\w-]*[_-])?completions?/)"
                              r"(?:.*/)?(?:_[^/.]+|[^/]+\.(?:bash|zsh|fish|elv|ps1|nu))|(?:.*/)?bash_completion\.d/[^/]+"
                              r"|(?:.*/)?(?:bash|zsh|fish|elv|ps1|nu)\.completion)$"), 0.4),
    # Translations: gettext's catalogues, Qt's compiled ``.qm``, XLIFF; and what lives under
    # ``translations/`` (plural: Django's ``utils/translation/`` is code), Qt's ``.ts`` XML
    # catalogues among them (nine of a trial's KeePassXC top 10 were
    # ``share/translations/*.ts``, every UI string in each). Gettext's template (``.pot``),
    # Fluent's ``.ftl`` (four of a trial's Rust top 10), a ``locales/`` folder, and Qt's
    # catalogues named by their locale in a ``lang/`` folder (``lang/qbittorrent_pt_BR.ts``:
    # three of a trial's top 10).
    ("locale", re.compile(r"(^|/)(locales?|i18n|l10n|translations)/|\.(po|pot|mo|qm|xliff|xlf|ftl)$"
                          r"|(^|/)langs?/[^/]*[_-][a-z]{2,3}([_-][A-Za-z]{2,4})?\.ts$"), 0.3),
    # (A run-commands file, ``dunstrc``, ``.npmrc``, and a ``.conf``: a configuration's sample
    # or defaults, not the code that reads it; a trial's ``dunstrc`` led a config parser's fix.)
    ("data", re.compile(r"\.(json|ya?ml|toml|ini|cfg|conf|properties|csv|tsv|xml|svg|txt|html?|css|scss|less)$"
                        r"|(^|/)(\.[\w-]+|[\w-]{3,})rc$"), 0.6),
)
def _human_languages() -> dict[str, str]:
    """{English name: ISO code} of the human languages in data/languages.json (small:
    read at import)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "languages.json")
    with open(path, "rb") as fh:
        table = json.loads(fh.read().decode("utf-8"))
    codes = table["codes"]
    return {name: codes[name] for name in table["names"].split()}


# A human language's English name -> the code its locale files are named by (es.js, locale/hu/).
LANGUAGE_CODES = _human_languages()


# The directories locale files live under, and what separates a code from its region or
# from the rest of a name (``es-us.js``, ``pt_BR``, ``hu.po``).
_LOCALE_DIRS = frozenset(("locale", "locales", "i18n", "l10n", "lang", "langs", "translations"))
_LOCALE_SEP_RE = re.compile(r"[-_.]")


def locale_codes(rel: str) -> frozenset[str]:
    """The language codes a locale file is named by: the first part of each path
    component below a locale directory, the file's stem included (``src/locale/es-us.js``
    -> es, ``conf/locale/pt_BR/formats.py`` -> pt, ``formats``), and a ``.po`` file's
    stem; empty for a file outside any locale directory."""
    parts = rel.lower().split("/")
    below = next((i + 1 for i, p in enumerate(parts[:-1]) if p in _LOCALE_DIRS), None)
    if below is None:
        return frozenset((_LOCALE_SEP_RE.split(parts[-1])[0],)) if parts[-1].endswith(".po") else frozenset()
    return frozenset(_LOCALE_SEP_RE.split(p)[0] for p in parts[below:] if p)


# The generated role's factor (ROLE_RULES), for a file known generated by its neighbours.
GENERATED_ROLE = next((role, factor) for role, _p, factor in ROLE_RULES if role == "generated")
# A configure script's sources: autoconf's (``configure.ac``, the older ``configure.in``) and
# acr's (``configure.acr``). A ``configure`` beside one is their output, thousands of lines
# of shell that hold every option and word of the project (a trial's vifm ranking led with
# it, two trials' top 20 held one); a ``configure`` without one is the project's own script
# (FFmpeg's) and stays source.
CONFIGURE_SOURCES = ("configure.ac", "configure.in", "configure.acr")


# The folders a JS build writes its output to beside ``src/`` (``lib/``, ``es/``, ``cjs/``).
BUILD_OUTPUT_DIRS = frozenset(("lib", "es", "esm", "cjs", "umd"))
# What a JS or CSS build writes (by extension), and what it writes it from: only such a
# file is ever a build's copy (a C project's ``lib/`` is its library, a ``Makefile.am``
# beside ``src/Makefile.am`` is written by hand).
BUILT_FROM = {"js": ("js", "mjs", "ts", "tsx", "jsx"), "mjs": ("mjs", "js", "ts"), "cjs": ("cjs", "js", "ts"),
              "css": ("css", "scss", "less")}


def generated_beside(rel: str, present: Callable[[str], bool]) -> bool:
    """Whether ``rel`` is what a tool generates from a file beside it (``present`` says
    whether a tree path is among the files): a ``configure`` beside its autoconf source;
    a JS or CSS build's copy of a ``src/`` file (:func:`built_copy`)."""
    head, _, name = rel.rpartition("/")
    if name == "configure":
        prefix = head + "/" if head else ""
        return any(present(prefix + source) for source in CONFIGURE_SOURCES)
    return built_copy(rel, present)


def built_copy(rel: str, present: Callable[[str], bool]) -> bool:
    """Whether ``rel``, a JS or CSS file under no ``src/``, is a build's copy of a file of a
    ``src/`` folder beside it: at that folder's level (moment's ``locale/ja.js`` and bundle
    ``moment.js`` beside ``src/locale/ja.js`` and ``src/moment.js``: a trial's ranking led
    with both, the fix in ``src/lib/units/era.js``; a package's ``packages/x/index.js``
    beside ``packages/x/src/index.js``) or in a build's output folder (``lib/x.js`` beside
    ``src/x.ts``), from a source of the extensions BUILT_FROM names."""
    stem, dot, ext = rel.rpartition(".")
    froms = BUILT_FROM.get(ext.lower()) if dot else None
    parts = stem.split("/")
    if not froms or "src" in parts:
        return False
    for k in range(len(parts)):
        pre, tail = parts[:k], parts[k:]
        for rest in ([tail, tail[1:]] if len(tail) > 1 and tail[0] in BUILD_OUTPUT_DIRS else [tail]):
            base = "/".join(pre + ["src"] + rest)
            if any(present(f"{base}.{e}") for e in froms):
                return True
    return False


def file_role(rel: str) -> tuple[str, float]:
    """The file's role (test, docs, ...) and the factor its evidence is scaled by.

    A template the build fills in (configure's and CMake's ``.in``: ``bat.1.in``,
    ``config.h.in``, ``zsh.in`` completions) plays the part of the file it becomes - a
    man page is docs - and is build input where that file would be plain source: the
    product's code is what the fix changes, not a template generated from its options.
    A project scaffold (``settings.py-tpl``) likewise: an issue quotes the reporter's own
    copy of it (``BASE_DIR``, ``TEMPLATES``), which names what the scaffold defines but
    says nothing about the code that reads it."""
    name = rel.rpartition("/")[2]
    low = name.lower()
    for suffix in TEMPLATE_SUFFIXES:
        inner = name[:-len(suffix)]
        if low.endswith(suffix) and inner and (suffix == ".in" or "." in inner.strip(".")):
            role, factor = file_role(rel[:-len(suffix)])
            return (role, factor) if role != "source" else TEMPLATE_ROLE
    for role, pattern, factor in ROLE_RULES:
        if pattern.search(rel):
            return role, factor
    return "source", 1.0


# A file that says in its opening comments that a tool wrote it (Go's convention ``// Code
# generated by stringer; DO NOT EDIT.``, protoc's ``Generated by the protocol buffer
# compiler.  DO NOT EDIT!``, ``@generated``, Bison's banner) or a webpack bundle (``ncc``'s
# ``index.js`` among a project's sources): generated, whatever its path says. A trial's
# ``token_type_string.go`` ranked 5th on one long line of token names, another's bundled
# ``index.js`` 3rd. Only the comments before the first line of code are read: a
# generator's own template (``head = "// Code generated by goctl. DO NOT EDIT"``) is its
# source. Files that only mention generating (``inspectdb``: "auto-generated models")
# are no such file: no dev fix's file says it was generated.
GENERATED_HEAD_BYTES = 2048
_GENERATED_MARK_RE = re.compile(
    rb"\bgenerated\b.{0,200}\bdo not edit\b|\bdo not edit\b.{0,200}\bgenerated\b|@generated\b"
    rb"|a bison parser, made by gnu bison")
_COMMENT_LINE_RE = re.compile(rb"[ \t]*(?://+|#+|/\*+|\*+|--+|;+|<!--)")
# What a comment quotes: a span in double quotes or backticks closed on its line (GNU's
# `x' too; a lone ``7"`` quotes nothing), or an indented comment inside it (a generator's
# doc showing its own header).
_QUOTED_IN_COMMENT_RE = re.compile(rb'"[^"\n]*"|`[^`\'\n]*[`\']|^[ \t]*(?://|#).*')
# A mark over lines of the comments: "DO NOT EDIT THIS FILE", or a line that only says
# "DO NOT EDIT!", beside "generated" (a bundle's "The code in this file is generated from
# files in ./src/" below it, protoc's "// Code generated by protoc-gen-go." over "//
# source: x.proto" over "// DO NOT EDIT!"). Across lines only so: a generator script's
# "the tables there are generated;" over "do not edit them by hand" is its own.
_FILE_MARK_RE = re.compile(rb"\bdo not edit this file\b|^[\W_]*do not edit(?: manually| by hand)?[\W_]*$")
_GENERATED_WORD_RE = re.compile(rb"\bgenerated\b")


def generated_by_header(low: bytes) -> bool:
    """Whether a file's lower-cased text opens with a generator's mark (GENERATED_HEAD_BYTES):
    in its leading comments and not quoted there (a generator's doc quoting the header it
    writes is the generator's source)."""
    head = low[:GENERATED_HEAD_BYTES]
    lines = head.split(b"\n")
    if b"webpackbootstrap" in lines[0]:
        return True
    said = []  # (the comments' text, for a mark over two lines: _FILE_MARK_RE)
    for line in lines:
        if not line.strip():
            continue
        marker = _COMMENT_LINE_RE.match(line)
        if not marker:
            break
        text = _QUOTED_IN_COMMENT_RE.sub(b" ", line[marker.end():])
        if _GENERATED_MARK_RE.search(text):
            return True
        said.append(text)
    return any(_FILE_MARK_RE.search(text.strip()) for text in said) \
        and any(_GENERATED_WORD_RE.search(text) for text in said)


# A command's table of options: the string literals naming options that a file holds
# (``"files-without-match"``, ``'--no-color'``, ``.long("tab-width")``), distinct. A file of
# at least OPTION_TABLE_MIN declares the program's options (ripgrep's ``flags/defs.rs``:
# 110, bat's ``clap_app.rs``: 36, fzf's ``options.go``: 428), where a file reading a few
# holds fewer (bat's ``app.rs``: 27; on the dev splits, of the files cycle 1 ranked first
# for a task quoting a long option, none holds more than 3).
_OPTION_LITERAL_RE = re.compile(rb"[\"']-{0,2}([a-z][a-z0-9]*(?:-[a-z0-9]+)+)[\"']")
OPTION_TABLE_MIN = 30


def option_table(data: bytes) -> frozenset[bytes]:
    """The options a file declares as a table of them (OPTION_TABLE_MIN distinct option
    literals or more), or nothing."""
    names = frozenset(_OPTION_LITERAL_RE.findall(data))
    return names if len(names) >= OPTION_TABLE_MIN else frozenset()


# Go's package documentation file (``doc.go``: the package's comment over ``package x``
# and nothing else, no ``//go:generate`` directive) is prose: a trial's lf stopped
# confidently on its user manual, one comment of every option's words, with the fix in
# ``nav.go``.
DOCS_ROLE = next((role, factor) for role, _p, factor in ROLE_RULES if role == "docs")
SOURCE_ROLE = ("source", 1.0)
_GO_COMMENTS_RE = re.compile(rb"/\*.*?\*/|//[^\n]*", re.S)
_GO_PACKAGE_ONLY_RE = re.compile(rb"\s*package\s+\w+\s*")
# The line Doxygen opens every set-up file it writes with (``# Doxyfile 1.8.13``), lower case.
_DOXYGEN_MARK_RE = re.compile(rb"(?:\xef\xbb\xbf)?#[ \t]*doxyfile[ \t]+[0-9]")
# A dump of a library's public API, as the JVM sees it, that a build checks the code
# against (Kotlin's binary-compatibility validator: ``api/okhttp.api`` opens with
# ``public final class okhttp3/Address {``, every class by its slashed JVM name; its
# native dumps open ``// Klib ABI Dump``): generated from the code, never where a fix
# starts. A trial's okhttp ranking led with two for all three rounds.
_API_DUMP_RE = re.compile(rb"(?:\xef\xbb\xbf)?(?:// klib abi dump|(?:public|protected)(?: [a-z]+)* "
                          rb"(?:class|interface|enum|annotation|object) [\w$]+(?:/[\w$]+)+[ \t]*(?::|\{))")


def content_role(rel: str, low: Optional[bytes]) -> tuple[str, float]:
    """:func:`file_role`, and a source file that opens with a generator's mark
    (:func:`generated_by_header`) generated, a Go ``doc.go`` of comments only docs, a
    file with no extension whose name says prose that opens with ``#!`` a program, a
    Doxygen set-up (``# Doxyfile 1.8.13`` at its head) with no extension docs, a JVM
    API dump (``.api``, :data:`_API_DUMP_RE`) generated;
    ``low`` is the lower-cased text (None: binary)."""
    role = file_role(rel)
    name = rel.rpartition("/")[2]
    if role == DOCS_ROLE and low and low.startswith(b"#!") and "." not in name and file_role(name) == DOCS_ROLE:
        return SOURCE_ROLE  # (a script named like a text: ``bin/help``, ``tools/changelog``; not one in docs/)
    if role[0] == "source" and low and generated_by_header(low):
        return GENERATED_ROLE
    if role[0] == "source" and low and name.endswith(".api") and _API_DUMP_RE.match(low):
        return GENERATED_ROLE
    if role[0] == "source" and low and "." not in name and _DOXYGEN_MARK_RE.match(low):
        return DOCS_ROLE  # (Doxygen's set-up under a name of its own: tinyxml2's ``dox``, 3rd at 0.54)
    if role[0] == "source" and low and name == "doc.go" and b"//go:generate" not in low \
            and _GO_PACKAGE_ONLY_RE.fullmatch(_GO_COMMENTS_RE.sub(b" ", low)):
        return DOCS_ROLE
    return role


# --- Defined names (tags) -----------------------------------------------------------------

_NAME = rb"([A-Za-z_$][A-Za-z0-9_$]*)"
# The first name before ``(`` on a line, after what a return type may hold: the only
# place a call-shaped definition's name can be (anything else before it is a statement).
_TO_PAREN = rb"[\w$@*&:<>,.\[\]? \t~]*\("
_LINE_TO_PAREN_RE = re.compile(rb"^" + _TO_PAREN, re.M)
_TO_PAREN_RE = re.compile(_TO_PAREN)
_NAME_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")
# Every name byte as ``a``, every other byte as a blank: the start of the name that ends
# at ``e`` is one ``rfind`` of a blank in the mask, not a walk back byte by byte.
_NAME_MASK = bytes(0x61 if c in _NAME_BYTES else 0x20 for c in range(256))
# After a definition word: blanks and pointer stars, then the name (group 1, maybe empty).
_AFTER_WORD_RE = re.compile(rb"[ \t*]*([\w$]*)")
# An attached or exported JS definition's name: ``a.b.name =``, ``name:``, ``module.exports = name``.
_EXPORT_CANDIDATE_RE = re.compile(
    rb"^(?:module\.exports[ \t]*=|export default)[ \t]*" + _NAME + rb"|^[ \t]*(?:[\w$]+(?:\.[\w$]+)*\.)?" + _NAME + rb"[ \t]*[:=]",
    re.M,
)
_GO_METHOD_RE = re.compile(rb"^func[ \t]*\([^)\n]*\)[ \t]*" + _NAME, re.M)
# A class field's name after its modifiers (field_definition decides).
_FIELD_CANDIDATE_RE = re.compile(rb"^[ \t]+(?:[A-Za-z]+[ \t]+)*" + _NAME + rb"[?!]?[ \t]*[:=]", re.M)
# The names of a receiver chain (``self.name``, ``App.Server``) after a definition word.
_RECEIVER_NAME_RE = re.compile(rb"[.:]" + _NAME)
# A name before ``{`` or ``=>``, maybe on the next line: a C# property's (property_definition).
_PROPERTY_CANDIDATE_RE = re.compile(rb"(?<![\w$])" + _NAME + rb"(?=[ \t\r\n]*\{|[ \t]*=>)")
# The names that start the lines of Go's declaration blocks (group_definition).
_GROUP_NAME_RE = re.compile(rb"\n\t" + _NAME)


def _generic_args_start(data: bytes, ls: int, e: int) -> int:
    """Where the generic parameters ending at ``e`` open (:data:`GENERIC_ARGS`), blanks
    before them left out; ``e`` when there are none."""
    m = _GENERIC_TAIL_RE.search(data, ls, e)
    return ls + len(data[ls:m.start()].rstrip(b" \t")) if m else e


_GENERIC_TAIL_RE = re.compile(GENERIC_ARGS + rb"\Z")


def defined_names(data: bytes, rel: str) -> list[tuple[str, float]]:
    """(name, DEFINES or DECLARES) for each name the file defines or declares, in file
    order, first sighting only: the definitions ``match`` checks, found line by line."""
    language = language_of(rel)
    if not language.words:
        return []
    low = data.lower()
    found: dict[str, float] = {}
    order: list[tuple[int, str]] = []

    def note(pos: int, name: bytes, value: float) -> None:
        if value <= 0 or name.lower() in language.reserved:
            return
        text = name.decode("ascii", "replace")
        if text not in found:
            order.append((pos, text))
            found[text] = value
        else:
            found[text] = max(found[text], value)

    for word in language.words:
        pos = low.find(word)
        while pos >= 0:
            after = _AFTER_WORD_RE.match(low, pos + len(word))
            j, e = after.start(1), after.end(1)
            if e > j and not low[j:j + 1].isdigit() and (pos == 0 or low[pos - 1] not in _NAME_BYTES) \
                    and head_ok(low, pos, word, language):
                note(j, data[j:e], after_word(low, e, word, language))
                if language.receivers:
                    for m in _RECEIVER_NAME_RE.finditer(data, e, RECEIVER_CHAIN_RE.match(low, e).end()):
                        note(m.start(1), m.group(1), receiver_definition(low, m.start(1), m.end(1), language))
            pos = low.find(word, pos + 1)
    if language.groups:
        spans = group_spans(low)
        for start, end in spans:
            for m in _GROUP_NAME_RE.finditer(data, start, end):
                note(m.start(1), m.group(1), group_definition(low, m.start(1), m.end(1), spans))
    if language.go_methods:
        for m in _GO_METHOD_RE.finditer(data):
            note(m.start(1), m.group(1), DEFINES)
    if language.calls:
        mask = data.translate(_NAME_MASK)
        for m in _LINE_TO_PAREN_RE.finditer(data):
            ls = m.start()
            if data[ls:m.end()].lstrip(b" \t")[:1] in (b"[", b"@"):
                # Attributes first on the line (``[Obsolete("x")] public void f()``): the
                # name before the first ``(`` after them.
                attrs = _LEADING_ATTRIBUTES_RE.match(data, ls)
                after = _TO_PAREN_RE.match(data, attrs.end()) if attrs is not None else None
                if after is not None and after.end() > m.end():
                    m = after
            e = ls + len(data[ls:m.end() - 1].rstrip(b" \t"))
            if data[e - 1:e] == b">":  # a generic method's own parameters: ``from<T>(``
                e = _generic_args_start(data, ls, e)
            s = mask.rfind(b" ", ls, e) + 1 or ls
            if s == e or data[s:s + 1].isdigit():
                continue
            # obj.f( and if ( / return f( are never definitions: call_definition's first
            # answers, given here without its work
            if data[s - 1:s] == b"." or low[s:e] in _STATEMENT_WORDS:
                continue
            note(s, data[s:e], call_definition(low, s, e, language))
    if language.exports:
        for m in _EXPORT_CANDIDATE_RE.finditer(data):
            g = 1 if m.group(1) else 2
            note(m.start(g), m.group(g), export_definition(low, m.start(g), m.end(g)))
        for m in _FIELD_CANDIDATE_RE.finditer(data):
            note(m.start(1), m.group(1), field_definition(low, m.start(1), m.end(1)))
    if language.properties:
        for m in _PROPERTY_CANDIDATE_RE.finditer(data):
            note(m.start(1), m.group(1), property_definition(low, m.start(1), m.end(1)))
    if language.impls:
        for m in re.finditer(rb"^[ \t]*(?:unsafe[ \t]+)?impl\b[^\n{;]*", data, re.M):
            for n in re.finditer(_NAME, m.group(0)):
                if n.group(1).lower() not in (b"impl", b"for", b"where", b"unsafe", b"dyn", b"mut", b"const"):
                    v = impl_definition(low, m.start() + n.start(1), m.start() + n.end(1))
                    note(m.start() + n.start(1), n.group(1), v)
    order.sort()
    if language.declares_only:
        return [(name, min(found[name], DECLARES)) for _, name in order]
    return [(name, found[name]) for _, name in order]
