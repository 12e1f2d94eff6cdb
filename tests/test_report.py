"""report.py: the summary lines a result quotes, and the names it tags."""

import pytest

from agentic_search_skill.query import keywords_from_list
from agentic_search_skill.report import SUMMARY_LINE_CHARS, defined_names, summary_lines


def test_summary_quotes_the_lines_with_most_keywords_best_two_first():
    text = "\n".join([
        "import os",
        "token = refresh(token)",        # 2 keywords
        "x = 1",
        "expiry = token.expiry",         # 2 keywords (token twice counts once)
        "def check(token, expiry):",     # 2 keywords + a definition
        "y = token",                     # 1 keyword
    ])
    kws = keywords_from_list(["token", "expiry", "refresh"])
    # the definition line is the best pick, then the line with refresh; each group in
    # file order (the default output shows the first two)
    assert summary_lines(text, kws) == [
        "L2: token = refresh(token)",
        "L5: def check(token, expiry):",
        "L4: expiry = token.expiry",
    ]


def test_a_keyword_repeated_on_a_line_counts_once():
    text = "token token token token\nTOKEN expiry\nexpiry, token\ntoken(expiry)\n"
    kws = keywords_from_list(["token", "expiry"])
    assert summary_lines(text, kws) == ["L2: TOKEN expiry", "L3: expiry, token", "L4: token(expiry)"]


def test_a_short_keyword_is_quoted_where_a_word_starts():
    # as the search counts it: ``ant`` is not in ``constant`` (trial 68's ``Ant`` x19)
    text = "MAX_CONSTANT = 1\nwant = important\nant_home = find_ant()\n"
    assert summary_lines(text, keywords_from_list(["Ant"])) == ["L3: ant_home = find_ant()"]


def test_a_short_keyword_past_ascii_is_quoted_wherever_the_search_counts_it():
    # the search counts ``接口`` in ``API接口`` (only an ASCII needle waits for a word's start)
    from agentic_search_skill.query import make_keyword
    kw = make_keyword("接口", "word")
    assert summary_lines("// 调用API接口\nfoo()\n", [kw], counts=[1]) == ["L1: // 调用API接口"]


def test_line_numbers_follow_every_line_break_python_knows():
    text = "a\r\nb\rc\u2028token here\x0cd\nlast token"
    kws = keywords_from_list(["token"])
    assert summary_lines(text, kws) == ["L4: token here", "L6: last token"]


def test_definitions_win_ties_and_long_lines_are_cut():
    long_line = "token " * 60
    text = f"{long_line}\nclass Token:\n"
    kws = keywords_from_list(["token"])
    lines = summary_lines(text, kws)
    assert lines[0].startswith("L1: token token") and lines[0].endswith("…")
    assert len(lines[0]) == len("L1: ") + SUMMARY_LINE_CHARS
    assert summary_lines(text, kws)[1] == "L2: class Token:"
    # With room for one line only the definition would be chosen: it ranks first.
    text2 = "x = token\nclass Token:\n"
    assert summary_lines(text2 * 2, kws)[:2] == ["L1: x = token", "L2: class Token:"]


def test_a_definition_without_a_keyword_is_a_definition_line_in_java_and_c():
    # A trial's CodeWriter.java quoted a Javadoc line and a call, not the method the
    # issue names: a Java or C function needs no definition word.
    calls = "\n".join(f"    emitAndIndent(part{i});" for i in range(6))
    java = ("class CodeWriter {\n  void a() {\n" + calls + "\n  }\n\n"
            "  CodeWriter emitAndIndent(String s) throws IOException {\n    return this;\n  }\n}\n")
    kws = keywords_from_list(["emitAndIndent"])
    assert "L11: CodeWriter emitAndIndent(String s) throws IOException {" in summary_lines(java, kws, rel="CodeWriter.java")
    c = ("static int\nparse_value(char *s);\n\nint parse_value(char *s)\n{\n    return parse_value(s + 1);\n}\n"
         + "x = parse_value(s);\n" * 6)
    assert "L4: int parse_value(char *s)" in summary_lines(c, keywords_from_list(["parse_value"]), rel="cjson.c")
    # without the path the language is unknown: only definition words count
    assert "L11: CodeWriter emitAndIndent(String s) throws IOException {" not in summary_lines(java, kws)


def test_a_go_method_with_a_receiver_is_a_definition_line():
    calls = "".join(f"\tout{i} := p.RelURL(in{i})\n" for i in range(6))
    go = ("package helpers\n\nfunc use() {\n" + calls + "}\n\n"
          "func (p *PathSpec) RelURL(in string, addLanguage bool) string {\n\treturn in\n}\n")
    assert "L12: func (p *PathSpec) RelURL(in string, addLanguage bool) string {" \
        in summary_lines(go, keywords_from_list(["RelURL"]), rel="url.go")


def test_a_licence_header_is_never_quoted():
    licence = ("/*\n * Licensed under the Apache License, Version 2.0.\n"
               " * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND.\n */\n")
    java = licence + "package a;\n\npublic interface Context {\n    Context map(String conditions);\n}\n"
    got = summary_lines(java, keywords_from_list(["conditions"]), rel="Context.java")
    assert got == ["L8: Context map(String conditions);"]
    # a head comment naming no licence is quoted as any comment is
    plain = "// Holds the conditions of a match.\npackage a;\n"
    assert summary_lines(plain, keywords_from_list(["conditions"]), rel="a.go") == \
        ["L1: // Holds the conditions of a match."]


@pytest.mark.parametrize("rel, text, word, line", [
    # a package's doc after the licence and a blank line is the file's own
    ("gzip.go", "// Copyright 2009 The Go Authors.\n// license BSD\n\n// Package gzip reads gzip files.\npackage gzip\n",
     "gzip", "L4: // Package gzip reads gzip files."),
    # Markdown's headings and items are no comments
    ("CHANGELOG.md", "# Changelog\n* Breaking: parse_args now raises\n* Relicensed\n", "parse_args",
     "L2: * Breaking: parse_args now raises"),
    # code after the comment's close, and C's ``# define``, are code
    ("a.c", "/* SPDX-License-Identifier: MIT */ int parse_header(char *s) { return 0; }\n", "parse_header",
     "L1: /* SPDX-License-Identifier: MIT */ int parse_header(char *s) { return 0; }"),
    ("a.h", "/*\n * Copyright x\n */\n# define MAX_HEADER_LEN 4096\n", "MAX_HEADER_LEN",
     "L4: # define MAX_HEADER_LEN 4096"),
])
def test_only_the_licence_itself_is_never_quoted(rel, text, word, line):
    assert line in summary_lines(text, keywords_from_list([word]), rel=rel)


def test_only_gos_func_takes_a_receiver_before_the_name():
    from agentic_search_skill.report import line_definitions
    assert line_definitions(["func (p *PathSpec) RelURL(in string) string {"], 0, "url.go") == ["relurl"]
    for line in ("extension (c: Circle) def circumference: Double = 1", "local function (x) return x end"):
        assert line_definitions([line], 0, "a.scala") == []


def test_no_hit_no_summary_and_non_ascii_lines_keep_their_numbers():
    kws = keywords_from_list(["token"])
    assert summary_lines("nothing here\n", kws) == []
    # "İ" lower-cases to two characters: later lines must keep their numbers.
    text = "İİİ token\nİ\nx İ TOKEN\n"
    assert summary_lines(text, kws) == ["L1: İİİ token", "L3: x İ TOKEN"]


def test_defined_names_most_used_first():
    text = "def helper():\n    pass\n\nclass Main:\n    helper()\n    helper()\n"
    assert defined_names(text) == ["helper", "Main"]


def test_the_line_defining_a_quoted_name_is_quoted_before_lines_of_plain_words():
    from agentic_search_skill.query import extract_keywords
    text = "\n".join([
        "# pretty print a vector: print the vector pretty",
        "class PrettyPrinter:",
        "    def _print_basis_dependent(self, expr):",
        "        return expr",
    ] + ["    x = 1"] * 5)
    kws = extract_keywords("vectors break pretty printing: _print_basis_dependent prints the vector twice")
    got = summary_lines(text, kws)
    assert "L3: def _print_basis_dependent(self, expr):" in got


def _plain_summary_starts(lines):
    """The reference: each line lower-cased alone, starts summed one by one."""
    joined = "\n".join(line.lower() for line in lines)
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line.lower()) + 1)
    return joined, starts


def test_lowered_lines_equal_lowering_each_line_on_ascii_and_other_text():
    from agentic_search_skill.report import lowered_lines
    cases = ["", "x", "A\nB", "Token = 1\n\ndef F():\n  RETURN X\n",
             "İstanbul ΣΑΣ\nweiß\r\nß\u2028TAIL", "ascii\nthen İ here\nΣ", "\n\n\n"]
    for text in cases:
        lines = text.splitlines()
        assert lowered_lines(lines) == _plain_summary_starts(lines), text


def test_tags_are_defined_names_in_order_minus_keywords_private_and_short():
    from agentic_search_skill.report import MAX_TAGS, tags_for
    text = "\n".join([
        "class TokenStore:", "def _hidden(): pass", "def ab(): pass", "def refresh(): pass",
        "def expiry(): pass", "def rotate(): pass", "def revoke(): pass", "def issue(): pass",
        "def audit(): pass",
        "x = refresh(rotate(rotate(revoke(TokenStore))))",
    ])
    kws = keywords_from_list(["expiry"])
    expected = [n for n in defined_names(text, "a.py")
                if n != "expiry" and not n.startswith("_") and len(n) >= 3][:MAX_TAGS]
    assert tags_for(text, kws, "a.py") == expected
    assert expected[:3] == ["rotate", "TokenStore", "refresh"]  # 3, 2 (defined first), 2 uses


def test_tags_from_kept_ranked_names_equal_tags_made_afresh():
    """The ranked names the index keeps per file give the tags of any query, also when its
    keywords hide more of the kept names than the tags can spare."""
    from agentic_search_skill.report import RANKED_NAMES_KEPT, ranked_names, tags_for
    names = [f"name{i:02d}" for i in range(RANKED_NAMES_KEPT + 10)]
    text = "\n".join(f"def {n}(): pass" for n in names) + "\n" + " ".join(
        n for i, n in enumerate(names) for _ in range(len(names) - i))  # earlier names used more
    kept = ranked_names(text, "a.py")
    assert kept == (names[:RANKED_NAMES_KEPT], True)
    for hidden in ([], names[:3], names[:RANKED_NAMES_KEPT - 2], names[:RANKED_NAMES_KEPT + 5], names):
        kws = keywords_from_list(hidden) if hidden else []
        assert tags_for(text, kws, "a.py", kept) == tags_for(text, kws, "a.py"), len(hidden)
    assert tags_for(text, keywords_from_list(names[:RANKED_NAMES_KEPT - 2]), "a.py", kept)[:2] == \
        names[RANKED_NAMES_KEPT - 2:RANKED_NAMES_KEPT]


def test_the_characters_whose_lower_case_holds_ascii_are_all_listed():
    import sys
    from agentic_search_skill.report import _LOWERS_TO_ASCII
    found = tuple(c for c in map(chr, range(128, sys.maxunicode + 1)) if any(ord(x) < 128 for x in c.lower()))
    assert found == _LOWERS_TO_ASCII


def test_summary_with_the_match_counts_equals_the_summary_without_them():
    from agentic_search_skill.match import Document, compile_keywords, match_document
    kws = keywords_from_list(["token", "expiry", "kelvin", "refresh_token", "absent"])
    texts = [
        "def refresh_token(token):\n    return token.expiry\n# nothing else\n",
        "naïve token café\nEXPIRY ≥ 1\n\u212aelvin scale\n",  # the Kelvin sign lowers to "k"
        "x = 1\ny = 2\n",
        "\u0130 token\r\nexpiry\x0bnext\n",
    ]
    ck = compile_keywords(kws)
    for text in texts:
        data = text.encode()
        fm = match_document(Document("a.py", data, data.lower(), len(data)), ck)
        assert summary_lines(text, kws, fm.counts) == summary_lines(text, kws), text
        assert any(c == 0 for c in fm.counts)  # some keyword's search is skipped

def _every_line_judged(text, keywords):
    """summary_lines as it reads when every line holding a keyword is judged in full at
    every pick: each keyword worth its weight over (1 + log2 of the lines holding it),
    halved once an earlier pick quoted it; a definition of a name holding one doubles."""
    import math
    from agentic_search_skill import report

    lines = text.splitlines()
    found_on = {}
    for i, line in enumerate(lines):
        low = line.lower()
        found = {}
        for k, kw in enumerate(keywords):
            for n in dict.fromkeys(n.decode() for n in kw.needles):
                if n and n in low and k not in found:
                    found[k] = n
        if found:
            found_on[i] = found
    spread = {}
    for found in found_on.values():
        for k in found:
            spread[k] = spread.get(k, 0) + 1
    value = {k: keywords[k].weight / (1 + math.log2(n)) for k, n in spread.items()}
    chosen, quoted = [], set()
    while len(chosen) < min(report.SUMMARY_LINES, len(found_on)):
        best = None
        for i, found in sorted(found_on.items()):
            if i in chosen or lines[i].strip() in {lines[c].strip() for c in chosen}:
                continue
            worth = sum(value[k] * (report.COVERED_FACTOR if k in quoted else 1) for k in found)
            defined = report._DEF_NAME_RE.match(lines[i])
            if defined:
                name = defined.group(1).lower()
                worth = worth * 2 if any(n in name for n in found.values()) else worth + report.DEF_LINE_TIE
            if report._is_header(lines, i):
                worth *= report.HEADER_LINE_FACTOR
            if best is None or worth > best[0]:
                best = (worth, i)
        if best is None:
            break
        chosen.append(best[1])
        quoted.update(found_on[best[1]])
    shown = report.SHOWN_FIRST
    return [f"L{i + 1}: {lines[i].strip()}" for i in sorted(chosen[:shown]) + sorted(chosen[shown:])]


def test_the_lines_chosen_are_those_judging_every_line_gives():
    # Only lines whose keywords could still outweigh the third best are tested for a
    # definition; the choice must be the one a full judgement of every line makes.
    import random
    from dataclasses import replace

    rng = random.Random(3)
    words = ["token", "refresh", "expiry", "session", "other"]
    for _ in range(300):
        kws = [replace(k, weight=rng.choice([1.0, 0.5, 0.25, 0.005]))
               for k in keywords_from_list(rng.sample(words[:4], rng.randint(1, 4)))]
        lines = []
        for _ in range(rng.randint(0, 25)):
            head = rng.choice(["def ", "class ", "    ", "", "x = ", "import ", "from m import "])
            body = "_".join(rng.sample(words, rng.randint(1, 3)))
            lines.append(head + body + rng.choice(["():", " = 1", "", " # token"]))
        text = "\n".join(lines)
        assert summary_lines(text, kws) == _every_line_judged(text, kws), text


def test_the_line_of_a_rare_name_beats_lines_of_names_on_every_line():
    # "server" and "port" are on every line, "health_port" on one: that is where to look.
    text = "\n".join(["server.port = 1"] * 5 + ["x = health_port"])
    kws = keywords_from_list(["server", "port", "health_port"])
    assert "L6: x = health_port" in summary_lines(text, kws)


def test_a_word_every_file_holds_says_less_than_a_name_few_files_hold():
    # The licence header of every file holds "apache", "license" and "version"; one
    # line far below holds "interspersed", which three files of the tree hold. With the
    # tree's rarity (the cycle's idf) that line is quoted; without it, the header wins
    # the tie on being first.
    text = "\n".join(["say(Copyright, Apache)", "say(see, the, License)", "say(Version, 2.0)", "", "package cmd"]
                      + ["x := 1"] * 4 + ["\tif interspersed { return }"])
    kws = keywords_from_list(["apache", "license", "version", "interspersed"])
    assert "L10: if interspersed { return }" not in summary_lines(text, kws)
    rare = summary_lines(text, kws, rarity=[0.05, 0.05, 0.05, 2.5])
    assert "L10: if interspersed { return }" in rare[:2] and len(rare) == 3


def test_three_lines_quote_three_names_before_one_name_twice():
    text = "\n".join(["token expiry", "token expiry again", "refresh here", "session there"])
    kws = keywords_from_list(["token", "expiry", "refresh", "session"])
    assert summary_lines(text, kws) == ["L1: token expiry", "L3: refresh here", "L4: session there"]


def test_import_lines_are_quoted_only_when_nothing_better_holds_the_names():
    text = "\n".join(["from pip._vendor import pkg_resources", "import entry_points", "",
                      "def iter_entry_points(self):", "    return pkg_resources.iter(self)"])
    kws = keywords_from_list(["pkg_resources", "entry_points"])
    got = summary_lines(text, kws)
    assert "L4: def iter_entry_points(self):" in got and "L5: return pkg_resources.iter(self)" in got
    assert "L2: import entry_points" not in got


def test_the_items_of_a_multi_line_import_are_import_lines_too():
    # TS ``import type {`` / Go ``import (`` / Python ``from x import (`` / Rust ``use a::{``:
    # a name listed there says what the file imports, not where the task is in it.
    kws = keywords_from_list(["ResolvedUrl", "EnvironmentModuleGraph"])
    ts = "\n".join(["import type {", "  EnvironmentModuleGraph,", "  ResolvedUrl,", "} from './moduleGraph'", "",
                    "export function urlOf(u: ResolvedUrl, g: EnvironmentModuleGraph) {", "  return g.get(u)", "}",
                    "const none: ResolvedUrl = ['', '']", "let graph: EnvironmentModuleGraph"])
    got = summary_lines(ts, kws)
    assert "L6: export function urlOf(u: ResolvedUrl, g: EnvironmentModuleGraph) {" in got
    assert not {"L2: EnvironmentModuleGraph,", "L3: ResolvedUrl,"} & set(got), got
    from agentic_search_skill.report import _is_header
    go = ["import (", '\t"fmt"', '\tlog "example.com/log"', ")", "", "func f() {", '\tx := []string{', '\t\t"fmt",', "\t}"]
    assert [_is_header(go, i) for i in range(len(go))] == [True, True, True, False, False, False, False, False, False]
    py = ["from x import (", "    a,", "    b as c,", ")", "values = [", "    a,", "]"]
    assert [_is_header(py, i) for i in range(len(py))] == [True, True, True, False, False, False, False]
    rs = ["use std::{", "    io::Write,", "    fmt,", "};"]
    assert [_is_header(rs, i) for i in range(len(rs))] == [True, True, True, False]


def test_the_same_line_is_quoted_once():
    text = "\n".join(["#if DIAGNOSTICS", "x = 1", "#if DIAGNOSTICS", "  #if DIAGNOSTICS", "y = diagnostics()"])
    kws = keywords_from_list(["DIAGNOSTICS"])
    assert summary_lines(text, kws) == ["L1: #if DIAGNOSTICS", "L5: y = diagnostics()"]


def test_a_line_the_task_pasted_is_quoted_first_where_the_file_holds_it():
    from agentic_search_skill.query import quoted_lines
    task = ("Post-increment returns const.\nLooking in `json.hpp` we find:\n```\n"
            "    iter_impl const operator++(int) // NOLINT\n    {\n        return result;\n    }\n```\n")
    text = "\n".join(["// iterator", "class iter_impl {"] + ["  int token;"] * 5 +
                     ["  iter_impl const operator++(int) // NOLINT", "  {", "  }", "};"])
    kws = keywords_from_list(["iter_impl", "token"])
    quoted = quoted_lines(task)
    assert quoted == ("iter_impl const operator++(int) // nolint",)  # short and header lines left out
    got = summary_lines(text, kws, quoted=quoted)
    assert got[0] == "L8: iter_impl const operator++(int) // NOLINT"
    assert "L2: class iter_impl {" in got[1:]  # then the keyword lines, in file order
    assert summary_lines(text, kws)[0] == "L2: class iter_impl {"  # without the task's code: file order
    assert summary_lines("nothing here\n", kws, quoted=quoted) == []


def test_a_message_quoted_in_the_prose_is_quoted_first_where_the_file_holds_it():
    from agentic_search_skill.query import quoted_lines
    task = ("With hide_input the prompt prints 'Error: The value you entered was invalid.' "
            "and I don't know why it's hidden; \u201cRepeat for confirmation\u201d is fine.")
    quoted = quoted_lines(task)
    assert quoted == ("error: the value you entered was invalid.", "repeat for confirmation")
    text = "\n".join(["def prompt(text, hide_input=False):", "    value = read(hide_input)", "    if bad(value):",
                      '        echo(_("Error: The value you entered was invalid."), err=err)'])
    kws = keywords_from_list(["hide_input", "prompt", "error"])
    assert summary_lines(text, kws, quoted=quoted)[0] == \
        'L4: echo(_("Error: The value you entered was invalid."), err=err)'


def test_a_message_raised_in_several_places_is_quoted_where_the_tasks_other_words_are():
    # (trial 84: stb_image's "bad huffman code" showed the JPEG decoder's line, the file's
    # first, for a report about PNG files; the zlib decoder raises it too)
    quoted = ("bad huffman code",)
    text = "\n".join(["static int jpeg_decode(void) {", '   return err("bad huffman code", "Corrupt JPEG");', "}",
                      "static int zlib_decode(void) {", '   return err("bad huffman code", "Corrupt PNG");', "}"])
    kws = keywords_from_list(["PNG", "zlib", "corrupt"])
    assert summary_lines(text, kws, quoted=quoted)[0] == 'L5: return err("bad huffman code", "Corrupt PNG");'
    # ... and where it is raised before a comment or a test that quotes it (an adversarial check)
    text = "\n".join(["// a corrupt png or zlib stream gives \"bad huffman code\"",
                      'fn inflate() { return Err(err("bad huffman code")); }', "", "#[cfg(test)]", "mod tests {",
                      '    fn png() { assert_eq!(inflate(corrupt_png), "bad huffman code"); }', "}"])
    assert summary_lines(text, kws, quoted=quoted, rel="src/inflate.rs")[0] == \
        'L2: fn inflate() { return Err(err("bad huffman code")); }'
    text = "\n".join(["static int jpeg_decode(void) {", '   return err("bad huffman code", "Corrupt JPEG");', "}",
                      "static int zlib_decode(void) {", '   return err("bad huffman code", "Corrupt PNG");', "}"])
    # ... and the first place when nothing else tells them apart
    assert summary_lines(text, keywords_from_list(["corrupt"]), quoted=quoted)[0] == \
        'L2: return err("bad huffman code", "Corrupt JPEG");'


def test_the_line_a_traceback_raised_at_is_quoted_first_where_the_file_holds_it():
    # a trial's results quoted the longer call of the frame above, not the assert that raised
    from agentic_search_skill.query import quoted_lines
    task = ("bind(Path) fails\n\n```\nTraceback (most recent call last):\n"
            '  File "/usr/lib/python3.12/site-packages/trio/_socket.py", line 874, in bind\n'
            "    address = await self._resolve_address_nocp(address, local=True)\n"
            "              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
            '  File "/usr/lib/python3.12/site-packages/trio/_socket.py", line 472, in _resolve_address_nocp\n'
            "    assert isinstance(address, (str, bytes))\n"
            "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\nAssertionError\n```\n")
    quoted = quoted_lines(task)
    assert quoted[0] == "assert isinstance(address, (str, bytes))"
    text = "\n".join(["async def _resolve_address_nocp(address, local):", "    assert isinstance(address, (str, bytes))",
                      "    return address", "", "async def bind(self, address):",
                      "    address = await self._resolve_address_nocp(address, local=True)"])
    kws = keywords_from_list(["_resolve_address_nocp", "bind"])
    assert summary_lines(text, kws, quoted=quoted)[0] == "L2: assert isinstance(address, (str, bytes))"
    # (quoted in a reply, the traceback's lines start with "> ": the raising line is still its own)
    from agentic_search_skill.query import raising_lines
    quoted_reply = "\n".join("> " + line for line in task.split("\n"))
    assert raising_lines(quoted_reply) == ("assert isinstance(address, (str, bytes))",)


def test_quoted_lines_come_from_code_only():
    from agentic_search_skill.query import quoted_lines
    task = ("A long prose line that is not code at all, surely.\n"
            ">>> frobnicate_widget(size=3)\n"
            "    File \"app/core.py\", line 3, in frobnicate_widget\n"
            "import numpy as np_long_alias_name\n"
            "Call `make_widget_factory(x)` first.\n")
    got = quoted_lines(task)
    assert "frobnicate_widget(size=3)" in got  # the prompt taken off
    assert "make_widget_factory(x)" in got
    assert not any("prose" in q for q in got)
    assert not any(q.startswith("import") for q in got)


def test_the_lines_shown_first_are_the_best_picks_in_file_order():
    # The default output shows two lines per result: the two best, not the first two
    # of three in file order (a trial: two comments shown, the code line third).
    text = "\n".join(["// exit gracefully", "x = 1", "// shut down cleanly", "y = 2",
                      "let s = config.search_full_path;"])
    kws = keywords_from_list(["gracefully", "cleanly", "search_full_path"])
    got = summary_lines(text, kws)
    assert got[:2] == ["L1: // exit gracefully", "L5: let s = config.search_full_path;"] or \
        got[:2] == ["L3: // shut down cleanly", "L5: let s = config.search_full_path;"]
    assert sorted(got[2:]) == got[2:] and len(got) == 3


def test_a_code_line_is_quoted_before_a_comment_holding_the_same_names():
    text = "\n".join(["    // the replacement is done here", "    apply(replacement);",
                      "    if should_quit() {", "    let ctx = after_context;"])
    kws = keywords_from_list(["replacement", "should_quit", "after_context"])
    assert sorted(summary_lines(text, kws)) == ["L2: apply(replacement);", "L3: if should_quit() {",
                                                "L4: let ctx = after_context;"]
    # a comment is still quoted when nothing in code holds the names
    assert summary_lines("// the replacement rule\nx = 1\n", kws) == ["L1: // the replacement rule"]


def test_a_rust_files_own_tests_are_quoted_after_its_code():
    text = "\n".join(["fn serve(range: Range) {", "    let end = total_size - 1;", "}", "",
                      "#[cfg(test)]", "mod tests {", "    let r = range + total_size;", "}"])
    kws = keywords_from_list(["range", "total_size"])
    assert summary_lines(text, kws, rel="src/file_stream.rs")[:2] == ["L1: fn serve(range: Range) {",
                                                                      "L2: let end = total_size - 1;"]
    # in another language the same lines are code like any other
    assert "L7: let r = range + total_size;" in summary_lines(text, kws, rel="a.py")[:2]


def test_tags_are_the_same_with_and_without_the_names_the_index_kept() -> None:
    """A file of 257 names, one of them a keyword: the index's kept ranking and a fresh
    count (the keyword taken out first) count uses the same way, so the tags agree."""
    from agentic_search_skill.report import COUNTED_NAMES, ranked_names, tags_for
    text = "def token():\n    pass\ndef aaa():\n    pass\ndef aaab():\n    pass\n"
    text += "".join(f"def filler{i:03d}():\n    pass\n" for i in range(COUNTED_NAMES - 2))
    text += "x = " + " + ".join(["aaab"] * 10) + "\n"
    kws = keywords_from_list(["token"])
    assert tags_for(text, kws, "mod.py") == tags_for(text, kws, "mod.py", ranked_names(text, "mod.py"))
    assert tags_for(text, kws, "mod.py")[:2] == ["aaab", "aaa"]


def test_a_docstring_line_is_quoted_after_the_code_holding_the_same_words() -> None:
    text = ('def refresh(token):\n    """Token expiry is checked here."""\n'
            '    if token.expiry < now():\n        raise Expired(token.expiry)\n')
    kws = keywords_from_list(["expiry", "token"])
    assert [x.split(":")[0] for x in summary_lines(text, kws, rel="auth.py")[:2]] == ["L3", "L4"]
    # (a file of another language has no docstrings: there the line is a string, whose
    # words count as a comment's too)
    assert [x.split(":")[0] for x in summary_lines(text, kws, rel="auth.rb")[:2]] == ["L3", "L4"]
    plain = text.replace('"""', "")
    assert [x.split(":")[0] for x in summary_lines(plain, kws, rel="auth.rb")[:2]] == ["L2", "L3"]


def test_the_closing_quotes_of_an_assigned_string_open_no_docstring() -> None:
    from agentic_search_skill.report import _docstring_spans, lowered_lines
    lines = ['SQL = """', "select token", '"""', "token = expiry(token)", "def f():", '    r"""Token.', '    """']
    joined, starts = lowered_lines(lines)
    assert _docstring_spans(joined, starts) == [(5, 6)]  # the docstring of f, not line 2 on


def test_a_file_edited_while_the_cycle_ran_quotes_nothing_and_says_so(tmp_path):
    # The quotes come from reading the file again: edited in between, that read is not
    # the text searched, and the answer quoted the searched text lower-cased, as the file's.
    from agentic_search_skill.match import Document, FileMatch
    from agentic_search_skill.report import build_result
    from agentic_search_skill.score import Scored

    path = tmp_path / "Validators.py"
    path.write_bytes(b"class ASCIIUsernameValidator(RegexValidator):\n    regex = r'^[\\w.@+-]+$'\n")
    kws = keywords_from_list(["ASCIIUsernameValidator", "regex"])
    low = path.read_bytes().lower()
    match = FileMatch("Validators.py", len(low), (1, 1), (0.0, 0.0), (1.0, 0.0))
    scored = Scored("Validators.py", 0.9, 1.0, 1.0, "source", (), ("ASCIIUsernameValidator", "regex"))

    same = Document("Validators.py", low=low, size=len(low), path=str(path))
    kept = build_result(scored, same, kws, match, ())
    assert kept.lines and kept.lines[0].startswith("L1: class ASCIIUsernameValidator") and not same.changed

    edited = Document("Validators.py", low=low, size=len(low), path=str(path))
    path.write_bytes(b"# rewritten\nclass Other:\n    pass\n")
    view = build_result(scored, edited, kws, match, ())
    assert edited.changed and view.lines == () and view.reason.endswith("changed during this cycle")


def test_a_long_line_is_quoted_where_the_tasks_word_is_not_from_its_start():
    """A minified file is one line: quoted from its start it showed ``var a=1;var a=1;…``
    and none of the task's words (a tester's); the word is now within what an output
    shows of the line (report.LINE_CHARS)."""
    from agentic_search_skill.report import LINE_CHARS
    text = "var a=1;" * 60 + "function throttle(x){return x}" + "var b=2;" * 40 + "\n"
    (line,) = summary_lines(text, keywords_from_list(["throttle"]))
    assert line.startswith("L1: …") and "throttle" in line[:LINE_CHARS] and len(line) <= SUMMARY_LINE_CHARS + 4
    short = "x = 1  # " + "pad " * 20 + "throttle " + "y" * 100 + "\n"
    (line,) = summary_lines(short, keywords_from_list(["throttle"]))
    assert line.startswith("L1: x = 1") and "throttle" in line[:LINE_CHARS]


def test_a_log_calls_message_is_quoted_after_the_code_holding_the_same_words() -> None:
    # a trial's JabRef result quoted `LOGGER.error("Could not save the backup ...")` lines
    # over the code that makes the backup; a message the task quotes is where it is raised
    text = ('void run() {\n    LOGGER.error("Could not write the backup entries", e);\n'
            '    writeBackup(entries);\n    backupEntries(database.entries);\n}\n')
    kws = keywords_from_list(["backup", "entries"])
    got = [x.split(":")[0] for x in summary_lines(text, kws, rel="BackupManager.java")]
    assert got[:2] == ["L3", "L4"], got
    from agentic_search_skill.query import Kind, make_keyword
    msg = [make_keyword("could not write the backup entries", Kind.MESSAGE)]
    assert summary_lines(text, msg, rel="BackupManager.java")[0].startswith("L2:")


def test_a_minified_line_is_not_scanned_for_strings() -> None:
    from agentic_search_skill.report import STRING_SCAN_MAX_CHARS, _string_spans
    assert _string_spans('a("x' + "y" * STRING_SCAN_MAX_CHARS + '");') == []
    assert _string_spans('f("backup") + g') == [(2, 9)] and len('f("backup") + g') < STRING_SCAN_MAX_CHARS
