"""lazyre.py: a pattern compiled on first use behaves as ``re.compile`` gives it, and
importing the retriever compiles none of the patterns a later cycle does not use."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from agentic_search_skill.lazyre import compile_later

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def test_lazy_pattern_answers_as_the_compiled_one():
    eager = re.compile(r"(?P<w>[a-z]+)(\d*)", re.I)
    lazy = compile_later(r"(?P<w>[a-z]+)(\d*)", re.I)
    assert lazy.pattern == eager.pattern  # known before compiling
    assert lazy._compiled is None
    text = "Abc12 de f3"
    assert lazy.sub("-", text) == eager.sub("-", text)
    assert [m.group("w") for m in lazy.finditer(text)] == [m.group("w") for m in eager.finditer(text)]
    assert lazy.findall(text) == eager.findall(text)
    assert lazy.groups == eager.groups and lazy.flags == eager.flags
    assert lazy.compiled() is lazy.compiled()  # compiled once


def test_importing_the_retriever_leaves_task_text_patterns_uncompiled():
    """A later cycle (no task text) never pays for the patterns that parse one."""
    code = ("import agentic_search_skill.cli, hints\n"
            "from agentic_search_skill import query, imports, index\n"
            "lazy = [v for m in (query, imports, index) for v in vars(m).values()\n"
            "        if type(v).__name__ == 'LazyPattern']\n"
            "assert len(lazy) > 20, len(lazy)\n"
            "assert all(v._compiled is None for v in lazy)\n"
            "assert query.extract_keywords('Fix `FileSystemStorage` in storage.py')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=SCRIPTS, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
