"""Tests for agentic_search_skill.ignore: .gitignore semantics, with real git as the oracle.

Each scenario is a set of ignore files plus a tree; every file and directory
of the tree is asked of ``git check-ignore -v -n --no-index`` and of
:class:`GitIgnore`, and both the verdict and the deciding ``source:line``
must agree.  Unit tests pin the parsing rules without git.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from typing import Dict, List, Optional, Tuple

import pytest

from agentic_search_skill.ignore import (
    GitIgnore, IgnoreRules, parse_ignore_file, parse_pattern, root_rules, translate_glob,
)

HAVE_GIT = shutil.which("git") is not None
needs_git = pytest.mark.skipif(not HAVE_GIT, reason="git is not installed")


# --------------------------------------------------------------------------- #
# Helpers
# --------------------------------------------------------------------------- #

def build_tree(root: str, ignore_files: Dict[str, str], paths: List[str]) -> None:
    """Write ignore files and create ``paths`` (a trailing '/' makes a directory)."""
    for rel, text in ignore_files.items():
        full = os.path.join(root, *rel.split("/"))
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    for rel in paths:
        full = os.path.join(root, *rel.strip("/").split("/"))
        if rel.endswith("/"):
            os.makedirs(full, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as fh:
                fh.write("x\n")


def all_paths(root: str) -> List[Tuple[str, bool]]:
    """Every file and directory under root except .git, as (rel, is_dir), sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        for d in dirnames:
            out.append((d if rel_dir == "." else f"{rel_dir}/{d}", True))
        for f in filenames:
            out.append((f if rel_dir == "." else f"{rel_dir}/{f}", False))
    return sorted(out)


def git_check_ignore(root: str, rels: List[str]) -> Dict[str, Optional[Tuple[bool, str]]]:
    """git's answer per path: None (no pattern), else (ignored, 'source:line')."""
    proc = subprocess.run(
        ["git", "-c", "core.excludesFile=/dev/null", "check-ignore", "--no-index",
         "-v", "-n", "-z", "--stdin"],
        cwd=root, input="\0".join(rels) + "\0", capture_output=True, text=True, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    fields = proc.stdout.split("\0")
    answers: Dict[str, Optional[Tuple[bool, str]]] = {}
    for k in range(0, len(fields) - 1, 4):
        source, line, pattern, path = fields[k:k + 4]
        answers[path] = None if not source else (not pattern.startswith("!"), f"{source}:{line}")
    return answers


def our_answer(matcher: GitIgnore, rel: str, is_dir: bool) -> Optional[Tuple[bool, str]]:
    found = matcher.check(rel, is_dir)
    if found is None:
        return None
    return found.ignored, f"{found.pattern.source}:{found.pattern.line}"


def git_init(root: str) -> None:
    subprocess.run(["git", "init", "-q", root], check=True, capture_output=True)


# --------------------------------------------------------------------------- #
# The table: rule sets x paths, compared with git check-ignore.
# --------------------------------------------------------------------------- #

SCENARIOS: Dict[str, Tuple[Dict[str, str], List[str]]] = {
    "last_match_wins_and_negation": (
        {".gitignore": "*.log\n!keep.log\n*.bak\n!*.bak\n*.bak\n"},
        ["a.log", "keep.log", "sub/keep.log", "sub/b.log", "x.bak", "sub/y.bak", "c.txt"],
    ),
    "anchoring_leading_and_middle_slash": (
        {".gitignore": "/root_only.txt\ndoc/*.txt\nname.md\n/deep/x/\n"},
        ["root_only.txt", "sub/root_only.txt", "doc/a.txt", "doc/sub/b.txt", "sub/doc/c.txt",
         "name.md", "a/b/name.md", "deep/x/f.c", "other/deep/x/f.c"],
    ),
    "directory_only_trailing_slash": (
        {".gitignore": "cache/\nlogs/\n"},
        ["cache/a.txt", "sub/cache/b.txt", "other/cache", "logs", "x/logs/z.txt"],
    ),
    "star_and_question_never_match_slash": (
        {".gitignore": "a*b\nsrc/*.js\nfile?.c\nq/?/r\n"},
        ["axxb", "a/b", "src/x.js", "src/lib/y.js", "file1.c", "file12.c", "q/z/r", "q/zz/r",
         "q/r"],
    ),
    "double_star_forms": (
        {".gitignore": "**/foo\nabc/**\na/**/b\nx**y\nlib/**/*.o\n**/gen/**/*.txt\n"},
        ["foo", "d/foo", "d/e/foo/f", "abc/1", "abc/d/2", "abcd/3", "a/b", "a/x/b", "a/x/y/b",
         "ab/b", "xzzy", "x/y", "xq/qy", "lib/a.o", "lib/d/e/b.o", "src/lib/c.o",
         "gen/a.txt", "p/gen/q/r.txt", "p/gen/r.txt"],
    ),
    "trailing_double_star_keeps_the_directory_itself": (
        {".gitignore": "out/**\n!out/keep.txt\n"},
        ["out/a.txt", "out/keep.txt", "out/sub/b.txt"],
    ),
    "excluded_directory_cannot_be_reincluded": (
        {".gitignore": "build/\n!build/keep.txt\n!build/sub/\nvendor/*\n!vendor/keep.txt\n"},
        ["build/a.txt", "build/keep.txt", "build/sub/c.txt", "vendor/a.txt", "vendor/keep.txt",
         "vendor/d/e.txt"],
    ),
    "nested_gitignore_relative_to_its_directory": (
        {".gitignore": "*.tmp\n/top.txt\n!important.log\n",
         "sub/.gitignore": "!special.tmp\n/anchored.txt\n*.log\nmid/*.dat\n",
         "sub/deeper/.gitignore": "special.tmp\n!/anchored.txt\n"},
        ["a.tmp", "special.tmp", "top.txt", "sub/top.txt", "sub/a.tmp", "sub/special.tmp",
         "sub/anchored.txt", "sub/x/anchored.txt", "sub/important.log", "important.log",
         "sub/mid/a.dat", "mid/a.dat", "sub/deeper/special.tmp", "sub/deeper/anchored.txt",
         "sub/deeper/q.log"],
    ),
    "info_exclude_is_weaker_than_gitignore": (
        {".git/info/exclude": "*.secret\nprivate/\n!visible.tmp\n",
         ".gitignore": "!shown.secret\n*.tmp\n"},
        ["a.secret", "shown.secret", "private/x.txt", "visible.tmp", "b.txt"],
    ),
    "comments_blanks_and_escapes": (
        {".gitignore": "# a comment\n\n   \n\\#hash.txt\n\\!bang.txt\n#notignored.txt\n"
                       "a\\*b\nback\\\\slash\n"},
        ["#hash.txt", "!bang.txt", "#notignored.txt", "a*b", "axb", "back\\slash", "plain.txt"],
    ),
    "trailing_spaces_trimmed_unless_escaped": (
        {".gitignore": "trail.txt   \nkept\\ \nboth\\  \ntab.txt\t\n"},
        ["trail.txt", "trail.txt   ", "kept ", "kept", "both ", "both", "tab.txt", "tab.txt\t"],
    ),
    "crlf_line_endings": (
        {".gitignore": "*.o\r\n!main.o\r\nbin/\r\n"},
        ["a.o", "main.o", "bin/x", "c.c"],
    ),
    "character_classes": (
        {".gitignore": "[a-c].txt\n[!x]y.md\n[]]z\n[[:digit:]]*.num\n[^q]w.c\n[z-a]r\n"},
        ["a.txt", "d.txt", "by.md", "xy.md", "]z", "1a.num", "a1.num", "pw.c", "qw.c", "zr",
         "ar"],
    ),
    "malformed_patterns_never_match": (
        {".gitignore": "open[\n[[:bogus:]]x\nlone\\\n"},
        ["open[", "openx", "ax", "lone", "lone\\"],
    ),
    "everything_with_exceptions": (
        {".gitignore": "*\n!*/\n!*.py\n"},
        ["a.py", "b.txt", "d/c.py", "d/e.txt"],
    ),
    "double_star_edges": (
        {".gitignore": "d/**/\n*/x/\n/**/top\nm/**/n/**\nq/***/r\nfoo**/bar\n"},
        ["d/a", "d/e/f", "d/e/g/h", "x/y", "w/x/y", "w/v/x/y", "top", "s/t/top", "m/n/o",
         "m/a/n/o/p", "m/nn", "q/r", "q/s/t/r", "foox/bar", "foo/bar", "foox/y/bar"],
    ),
    "git_quirk_double_star_right_after_literal_prefix": (
        {".gitignore": "foo**/bar\nsrc/gen**\nlit*x**/y\n"},
        ["foox/bar", "foo/bar", "foox/y/bar", "src/genx/deep/f", "src/gen/f", "src/g",
         "litAx/q/y", "litAxB/y", "lit/x/y"],
    ),
    "only_star_star": (
        {".gitignore": "**\n!keep\n"},
        ["a", "keep", "d/keep", "d/e"],
    ),
    "deeper_negation_beats_parent_pattern": (
        {".gitignore": "*.gen\n", "keep/.gitignore": "!*.gen\n", "keep/drop/.gitignore": "x.gen\n"},
        ["a.gen", "keep/a.gen", "keep/drop/x.gen", "keep/drop/y.gen"],
    ),
}


@needs_git
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_matches_git_check_ignore(tmp_path, name: str) -> None:
    """Verdict and deciding source:line agree with git for every path of the scenario."""
    root = str(tmp_path)
    git_init(root)
    ignore_files, paths = SCENARIOS[name]
    build_tree(root, ignore_files, paths)
    entries = [(rel, is_dir) for rel, is_dir in all_paths(root)
               if not rel.endswith(".gitignore")]
    expected = git_check_ignore(root, [rel for rel, _ in entries])
    matcher = GitIgnore(root)
    got = {rel: our_answer(matcher, rel, is_dir) for rel, is_dir in entries}
    mismatches = {rel: (got[rel], expected.get(rel)) for rel, _ in entries
                  if got[rel] != expected.get(rel)}
    assert not mismatches, f"(ours, git) differ: {mismatches}"


@needs_git
def test_root_inside_a_work_tree_uses_parent_gitignores(tmp_path) -> None:
    """A root below the work-tree top obeys the top's .gitignore and info/exclude."""
    top = str(tmp_path)
    git_init(top)
    build_tree(top, {".gitignore": "*.pyc\n/pkg/gen/\n", ".git/info/exclude": "*.local\n"},
               ["pkg/a.pyc", "pkg/gen/x.py", "pkg/b.local", "pkg/c.py"])
    matcher = GitIgnore(os.path.join(top, "pkg"))
    assert matcher.is_ignored("a.pyc")
    assert matcher.is_ignored("gen", is_dir=True)
    assert matcher.is_ignored("gen/x.py")
    assert matcher.is_ignored("b.local")
    assert not matcher.is_ignored("c.py")
    expected = git_check_ignore(top, ["pkg/a.pyc", "pkg/gen/x.py", "pkg/b.local", "pkg/c.py"])
    assert matcher.check("a.pyc").explain() == ".gitignore:1:*.pyc\ta.pyc"
    assert expected["pkg/a.pyc"] == (True, ".gitignore:1")
    assert expected["pkg/c.py"] is None


# --------------------------------------------------------------------------- #
# Parsing rules, without git.
# --------------------------------------------------------------------------- #

def test_blank_lines_and_comments_are_not_patterns() -> None:
    f = parse_ignore_file("\n# comment\n   \n\t\n", ".gitignore", "")
    assert [p.text for p in f.patterns] == ["\t"]  # a tab is not trimmed (git trims spaces only)


def test_escaped_hash_and_bang_are_literal() -> None:
    hash_pat = parse_pattern("\\#x")
    bang_pat = parse_pattern("\\!x")
    assert hash_pat is not None and not hash_pat.negated
    assert hash_pat.matches("#x", False)
    assert bang_pat is not None and not bang_pat.negated
    assert bang_pat.matches("!x", False)


def test_trailing_spaces_trimmed_unless_escaped() -> None:
    assert parse_pattern("a.txt   ").matches("a.txt", False)
    assert parse_pattern("a\\ ").matches("a ", False)
    assert not parse_pattern("a\\ ").matches("a", False)


def test_negation_flag_and_directory_only_flag() -> None:
    pat = parse_pattern("!build/")
    assert pat.negated and pat.dir_only and not pat.anchored
    assert pat.matches("x/build", True) and not pat.matches("x/build", False)


def test_leading_or_middle_slash_anchors() -> None:
    assert parse_pattern("/a").anchored
    assert parse_pattern("a/b").anchored
    assert not parse_pattern("a/").anchored
    assert parse_pattern("/a").matches("a", False)
    assert not parse_pattern("/a").matches("x/a", False)
    assert parse_pattern("a").matches("x/a", False)


@pytest.mark.parametrize("glob, path, hit", [
    ("*.py", "a.py", True),
    ("*.py", "d/a.py", False),  # translate_glob alone is WM_PATHNAME: '*' stays in one part
    ("**/x", "x", True),
    ("**/x", "a/b/x", True),
    ("x/**", "x", False),
    ("x/**", "x/a/b", True),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a**b", "a/b", False),
    ("?", "/", False),
    ("[a-z/]", "/", False),
    ("[!a]", "/", False),
])
def test_translate_glob_wildmatch_rules(glob: str, path: str, hit: bool) -> None:
    import re
    assert (re.fullmatch(translate_glob(glob), path, re.DOTALL) is not None) is hit


def test_match_keeps_the_deciding_file_and_line() -> None:
    outer = parse_ignore_file("*.log\n", ".gitignore", "")
    inner = parse_ignore_file("# c\n!keep.log\n", "sub/.gitignore", "sub")
    rules = IgnoreRules().child(outer).child(inner)
    assert rules.match("sub/keep.log", False).describe() == "sub/.gitignore:2:!keep.log"
    assert rules.match("sub/other.log", False).describe() == ".gitignore:1:*.log"
    assert rules.match("sub/other.txt", False) is None


def test_bom_is_dropped() -> None:
    f = parse_ignore_file("\ufeff*.o\n", ".gitignore", "")
    assert f.last_match("a.o", False) is not None


def test_no_work_tree_means_no_info_exclude(tmp_path) -> None:
    rules, prefix = root_rules(str(tmp_path))
    assert prefix == "" and rules.files == ()


@needs_git
def test_random_patterns_match_git(tmp_path) -> None:
    """Seeded random rule sets (stars, classes, escapes, negation, anchoring) agree with git.

    Each case directory has its own .gitignore of 1-3 random lines and the same
    small tree, so one ``git check-ignore`` call answers for every case.
    """
    import random
    rng = random.Random(20240601)
    tokens = ["a", "b", "x", "/", "/", "*", "**", "***", "?", "[ab]", "[!a]", "[a-b]", "[/]",
              "\\a", " ", "[]a]", "[^x]"]
    leaves = ["x", "a/x", "b/x", "a/b/x", "ab/x", "a/a/x", "b/a/b/x", "ax", "a/bx", "ab/ab/x"]
    root = str(tmp_path)
    git_init(root)
    files: Dict[str, str] = {}
    paths: List[str] = []
    for case in range(80):
        lines = []
        for _ in range(rng.randint(1, 3)):
            pat = "".join(rng.choice(tokens) for _ in range(rng.randint(1, 5)))
            lines.append(("!" if rng.random() < 0.25 else "") + pat)
        files[f"c{case}/.gitignore"] = "\n".join(lines) + "\n"
        paths.extend(f"c{case}/{leaf}" for leaf in leaves)
    build_tree(root, files, paths)
    entries = [(rel, is_dir) for rel, is_dir in all_paths(root) if not rel.endswith(".gitignore")]
    expected = git_check_ignore(root, [rel for rel, _ in entries])
    matcher = GitIgnore(root)
    mismatches = {rel: (our_answer(matcher, rel, is_dir), expected.get(rel))
                  for rel, is_dir in entries if our_answer(matcher, rel, is_dir) != expected.get(rel)}
    assert not mismatches, f"(ours, git) differ: {dict(list(mismatches.items())[:10])}"


def test_in_directory_answers_as_match() -> None:
    """The walk's per-directory lookup (anchored lines that cannot match below a
    directory skipped by their literal start, basename answers cached by name) gives
    match()'s deciding line for every entry: seeded random rule stacks, nested bases,
    literal starts that name a directory or part of one, wildcard starts, non-ASCII."""
    import random
    rng = random.Random(7)
    parts = ["a", "b", "ab", "do", "docs", "é", "*", "?", "[ab]", "**", "x"]
    names = ["a", "b", "ab", "abc", "docs", "x", "é", "éa", "do", "dox"]
    dirs = ["", "a/", "b/", "a/b/", "docs/", "docs/a/", "dox/", "é/", "é/a/", "ab/ab/"]
    for case in range(300):
        files = []
        for base in rng.sample(["", "a", "docs", "é", "a/b"], rng.randint(1, 3)):
            lines = []
            for _ in range(rng.randint(1, 5)):
                glob = "/".join("".join(rng.choice(parts) for _ in range(rng.randint(1, 2)))
                                for _ in range(rng.randint(1, 3)))
                lines.append(("!" if rng.random() < 0.2 else "") + ("/" if rng.random() < 0.3 else "")
                             + glob + ("/" if rng.random() < 0.3 else ""))
            files.append(parse_ignore_file("\n".join(lines) + "\n", f"{base or '.'}/.gitignore", base))
        files.sort(key=lambda f: -len(f.base))  # strongest (deepest) first
        rules = IgnoreRules(tuple(files))
        for d in dirs:
            here = rules.in_directory(d)
            for name in names:
                for is_dir in (False, True):
                    assert here(name, is_dir) is rules.match(d + name, is_dir), (case, d, name, is_dir)


@pytest.mark.parametrize("linear", [False, True])
def test_two_stars_before_an_escaped_slash_span_directories_but_skip_none(linear) -> None:
    # git's wildmatch: ``**\/a.py`` spans directories, yet its "zero directories"
    # shortcut needs a bare '/': the top-level a.py is not matched (checked against git).
    from agentic_search_skill.ignore import LinearGlob, _tokens, compile_glob
    glob = "**\\/a.py"
    matcher = LinearGlob(_tokens(glob, False)) if linear else compile_glob(glob)
    assert [p for p in ("a.py", "d/a.py", "x/y/a.py", "d/b.py") if matcher.fullmatch(p)] == ["d/a.py", "x/y/a.py"]
    assert compile_glob("**/a.py").fullmatch("a.py")
