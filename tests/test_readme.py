"""README.md's two set-up commands stay true: the run command works on this very tree."""

import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _commands():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    blocks = re.findall(r"```(?:bash|sh)\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "README.md holds exactly one block of set-up commands"
    return [line for line in blocks[0].splitlines() if line.strip()]


def test_readme_has_exactly_the_run_and_test_commands():
    cmds = _commands()
    assert len(cmds) == 2
    assert cmds[0].startswith("python3 scripts/retrieve_loop.py ")
    assert cmds[1] == "python3 -m pytest"


def test_readme_run_command_finds_the_hint_engine(tmp_path):
    argv = shlex.split(_commands()[0])
    argv[0] = sys.executable
    state = argv.index("--state") + 1
    argv[state] = str(tmp_path / "state.json")  # same command, a private state file
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert "scripts/hints.py" in proc.stdout.split("context (read these):")[1]
