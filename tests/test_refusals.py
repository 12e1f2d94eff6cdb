"""Refused calls: bounded flags, paths that cannot hold a state, inputs that are not
files, patterns that climb out of the root, ids that are not ids. Each is one line on
stderr with the documented exit code, never a traceback or a hang, and a refused call
leaves nothing behind (no state, no lock, no directory it made)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import hints
import retrieve_loop
from agentic_search_skill.request import MAX_KEYWORDS, MAX_LIMIT, MAX_MAX_CYCLES, MAX_MAX_FILE_KB
from agentic_search_skill.state import LOCK_SUFFIX, StateError, locked
from _trees import write_tree

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
LOOP = SCRIPTS / "retrieve_loop.py"
HINTS = SCRIPTS / "hints.py"
# A FIFO with no writer blocks a reader forever: a call that waits on one is killed here.
HANG_SECONDS = 20


def run(script: Path, *args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *map(str, args)], input=stdin,
                          capture_output=True, timeout=HANG_SECONDS)


def assert_one_line(proc: subprocess.CompletedProcess, prefix: str, needle: str, code: int) -> None:
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == code, err
    assert proc.stdout == b""
    assert err.startswith(prefix + ": error: ") and err.count("\n") == 1 and err.endswith("\n"), err
    assert needle in err, err


@pytest.fixture
def loop_refuses(capsys):
    """Run retrieve_loop.py in-process (a refusal costs no interpreter start) and check
    the refusal: the exit code, nothing on stdout, one line on stderr naming ``needle``."""
    def check(*args, needle: str, code: int = 1) -> None:
        got = retrieve_loop.main([str(a) for a in args])
        out, err = capsys.readouterr()
        assert (got, out) == (code, ""), err
        assert err.startswith("retrieve_loop.py: error: ") and err.count("\n") == 1, err
        assert needle in err, err
    return check


def listing(directory: Path) -> list[str]:
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "T", {"a.py": "def token():\n    return 1\n"})


# --------------------------------------------------------------------------- 1. bounded flags


@pytest.mark.parametrize("flag, value, most", [
    ("--max-cycles", "9007199254740993", MAX_MAX_CYCLES),
    ("--max-cycles", str(MAX_MAX_CYCLES + 1), MAX_MAX_CYCLES),
    ("--max-file-kb", "9999999999999999999", MAX_MAX_FILE_KB),
    ("--limit", "9007199254740993", MAX_LIMIT),  # (kept in the state: a later call refused it)
])
def test_a_flag_beyond_its_bound_is_a_usage_error_and_writes_no_state(tmp_path, tree, flag, value, most, loop_refuses):
    loop_refuses("--root", tree, "--state", tmp_path / "s.json", "--task", "token", flag, value,
                 needle=f"{flag} {value}: must be at most {most}", code=2)
    assert listing(tmp_path) == ["T", "T/a.py"]


@pytest.mark.parametrize("args, needle", [
    (("--limit", "\u0663"), "--limit: invalid int value"),            # an Arabic-Indic 3: int() takes it
    (("--max-cycles", "1_0"), "--max-cycles: invalid int value"),      # int() takes 1_0 too
    (("--judge", "a.py=\u0660.\u0665"), "is not a number"),
    (("--judge", "a.py=0_5"), "is not a number"),
])
def test_numbers_are_written_in_ascii_digits(tmp_path, tree, args, needle, loop_refuses):
    loop_refuses("--root", tree, "--state", tmp_path / "s.json", "--task", "token", *args, needle=needle, code=2)
    assert listing(tmp_path) == ["T", "T/a.py"]


def test_a_list_of_every_name_as_keywords_is_refused_not_searched_for_minutes(tmp_path, tree, loop_refuses):
    names = [f"name{i}" for i in range(MAX_KEYWORDS + 1)]
    loop_refuses("--root", tree, "--state", tmp_path / "s.json", "--keywords", *names,
                 needle=f"--keywords: {MAX_KEYWORDS + 1} given, at most {MAX_KEYWORDS}")
    assert retrieve_loop.main(["--root", str(tree), "--state", str(tmp_path / "s.json"), "--keywords",
                               *names[:MAX_KEYWORDS]]) == 0


def test_a_task_file_saved_as_utf16_is_read_by_its_byte_order_mark(tmp_path, tree, capsys):
    task = tmp_path / "task.txt"
    task.write_bytes("token returns the wrong value".encode("utf-16"))
    assert retrieve_loop.main(["--root", str(tree), "--state", str(tmp_path / "s.json"), "--task-file", str(task)]) == 0
    assert "token" in json.loads(capsys.readouterr().out)["query"]["keywords"]


def test_the_largest_bounds_are_accepted_and_the_state_loads_again(tmp_path, tree):
    state = tmp_path / "s.json"
    args = ("--root", tree, "--state", state)
    first = run(LOOP, *args, "--task", "token", "--max-cycles", MAX_MAX_CYCLES, "--max-file-kb", MAX_MAX_FILE_KB)
    assert first.returncode == 0, first.stderr
    again = run(LOOP, *args)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["max_cycles"] == MAX_MAX_CYCLES


# --------------------------------------------------------------------------- 5. patterns and root


@pytest.mark.parametrize("pattern, needle", [
    ("/etc/*", "is absolute"),
    ("../**", "has a '..' part"),
    ("src/../../*", "has a '..' part"),
    ("src/{a,..}/*", "has a '..' part"),
    ("..", "has a '..' part"),
])
def test_patterns_leaving_the_root_are_usage_errors(tmp_path, tree, pattern, needle, loop_refuses):
    loop_refuses("--root", tree, "--state", tmp_path / "s.json", "--task", "token", "--patterns", pattern,
                 needle=f"--patterns {pattern!r}: {needle}", code=2)
    assert listing(tmp_path) == ["T", "T/a.py"]


def test_dots_inside_a_name_are_not_a_parent(tmp_path, tree):
    proc = run(LOOP, "--root", tree, "--state", tmp_path / "s.json", "--task", "token",
               "--patterns", "a..*", "*..py", "**/*.py")
    assert proc.returncode == 0, proc.stderr


def test_an_empty_root_is_a_usage_error(tmp_path, loop_refuses):
    loop_refuses("--root", "", "--state", tmp_path / "s.json", "--task", "token", needle="--root '': empty",
                 code=2)
    assert listing(tmp_path) == []


# --------------------------------------------------------------------------- 3. a task file that is not a file


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def test_task_file_fifo_is_refused_not_waited_on(tmp_path, tree, fifo):
    proc = run(LOOP, "--root", tree, "--state", tmp_path / "s.json", "--task-file", fifo)  # a hang times out
    assert_one_line(proc, "retrieve_loop.py", f"--task-file {fifo}: not a regular file", 1)
    assert not (tmp_path / "s.json").exists()


# --------------------------------------------------------------------------- 2, 4. state paths


def test_a_state_below_a_regular_file_is_one_line(tmp_path, tree, loop_refuses):
    (tmp_path / "o1.json").write_text("{}")
    loop_refuses("--root", tree, "--state", tmp_path / "o1.json" / "s.json", "--task", "token",
                 needle="o1.json/s.json: a part of its directory is a file")
    loop_refuses("--root", tree, "--state", tmp_path / "o1.json" / "d" / "s.json", "--task", "token",
                 needle="a part of its directory is a file")
    assert listing(tmp_path) == ["T", "T/a.py", "o1.json"]


def test_a_call_refused_before_the_lock_leaves_no_directory_and_no_lock(tmp_path, tree, loop_refuses):
    loop_refuses("--root", tree, "--state", tmp_path / "NEW" / "deeper" / "s.json", "--task", "",
                 needle="no keywords and no task")
    assert listing(tmp_path) == ["T", "T/a.py"]


def test_a_call_refused_under_the_lock_removes_what_it_made(tmp_path, tree, loop_refuses):
    loop_refuses("--root", tree, "--state", tmp_path / "NEW" / "s.json", "--task", "the of",
                 needle="no keywords: pass --keywords")
    assert listing(tmp_path) == ["T", "T/a.py"]


def test_a_refused_call_keeps_the_directory_and_lock_that_were_there(tmp_path, tree, loop_refuses):
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / ("s.json" + LOCK_SUFFIX)).write_text("")
    loop_refuses("--root", tree, "--state", tmp_path / "old" / "s.json", "--task", "the of",
                 needle="no keywords: pass --keywords")
    assert listing(tmp_path) == ["T", "T/a.py", "old", "old/s.json.lock"]


def test_a_device_as_state_is_refused_without_a_lock_beside_it(loop_refuses):
    if os.path.lexists("/dev/null" + LOCK_SUFFIX):
        pytest.skip("/dev/null.lock exists already")
    loop_refuses("--root", ".", "--state", "/dev/null", "--task", "token", needle="not a regular file")
    assert not os.path.lexists("/dev/null" + LOCK_SUFFIX)


def test_a_saved_state_keeps_its_lock_and_directory(tmp_path, tree):
    state = tmp_path / "NEW" / "s.json"
    assert run(LOOP, "--root", tree, "--state", state, "--task", "token").returncode == 0
    assert sorted(os.listdir(state.parent)) == ["s.json", "s.json" + LOCK_SUFFIX]


def test_a_state_named_at_the_file_systems_limit_has_a_lock_too(tmp_path, tree):
    # NAME.lock would pass the 255-byte name limit: the lock takes a cut name and a hash.
    state = tmp_path / ("s" * 250 + ".json")
    assert run(LOOP, "--root", tree, "--state", state, "--task", "token").returncode == 0
    locks = [n for n in os.listdir(tmp_path) if n.endswith(LOCK_SUFFIX)]
    assert len(locks) == 1 and len(locks[0]) <= 255
    assert run(LOOP, "--state", state).returncode == 0


def test_a_waiter_on_a_lock_its_creator_removed_still_excludes_others(tmp_path):
    """The creator of a lock removes it when it leaves no state; the waiter then holds a
    removed file, so it takes the new one, and a third caller still has to wait."""
    path = str(tmp_path / "NEW" / "s.json")
    events: list[str] = []
    inside = threading.Event()
    leave = threading.Event()

    def waiter() -> None:
        with locked(path, "s.json", wait=10):
            events.append("waiter in")
            inside.set()
            leave.wait(10)

    with locked(path, "s.json"):
        t = threading.Thread(target=waiter)
        t.start()
        time.sleep(0.2)
        events.append("first out")
    assert inside.wait(10)
    assert os.path.exists(path + LOCK_SUFFIX)
    with pytest.raises(StateError, match="another process"):
        with locked(path, "s.json", wait=0.2):
            pass
    leave.set()
    t.join(10)
    assert events == ["first out", "waiter in"]
    assert listing(tmp_path) == []


def test_a_lock_whose_folder_vanishes_at_the_open_is_taken_in_a_folder_made_again(tmp_path, monkeypatch):
    """A refused call removes the folders it made just as a waiter opens the lock in one:
    the waiter failed ("cannot open the state's lock: No such file or directory")."""
    from agentic_search_skill import state as state_mod

    path = tmp_path / "NEW" / "s.json"
    real_open = state_mod.os.open
    gone: list[str] = []

    def open_after_the_folder_went(name, flags, *args, **kwargs):
        if str(name).endswith(LOCK_SUFFIX) and not gone:
            gone.append(name)
            os.rmdir(tmp_path / "NEW")  # (the clean-up of a call refused at this moment)
        return real_open(name, flags, *args, **kwargs)

    monkeypatch.setattr(state_mod.os, "open", open_after_the_folder_went)
    with locked(str(path), "s.json", wait=5):
        assert gone and os.path.isdir(tmp_path / "NEW")
    assert listing(tmp_path) == []


# --------------------------------------------------------------------------- 3. hints input that is not a file, or too large


@pytest.mark.parametrize("where", ["fifo", "/dev/zero"])
def test_hints_input_that_is_not_a_regular_file_is_refused(fifo, where):
    path = fifo if where == "fifo" else where
    assert_one_line(run(HINTS, "--input", path), "hints.py", f"--input {path}: not a regular file", 1)


def test_hints_input_dash_reads_stdin():
    proc = run(HINTS, "--input", "-", stdin=b'{"results": [{"id": "a", "title": "t", "score": 0.9}]}')
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["max_score"] == 0.9


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_hints_input_beyond_the_cap_is_one_line(tmp_path, monkeypatch, capsys, how):
    import io

    monkeypatch.setattr(hints, "MAX_INPUT_BYTES", 64)
    data = json.dumps({"results": [{"id": f"r{i}", "title": "t", "score": 0.5} for i in range(10)]}).encode()
    path = tmp_path / "in.json"
    path.write_bytes(data)
    if how == "stdin":
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert hints.main(["--input", str(path)] if how == "file" else []) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "larger than" in err, err


def test_hints_input_cap_holds_half_a_million_results():
    """The cap's reason: 500,000 results as retrieve_loop.py hands them to hints."""
    one = {"id": "src/agentic_search_skill/module_name.py", "title": "module_name.py \u2014 Alpha, beta_gamma, Delta",
           "summary": "class Alpha:\n    def beta_gamma(self, value: int) -> str:\ndef delta_epsilon(items):",
           "tags": ["Alpha", "beta_gamma", "Delta", "epsilon", "Zeta"], "score": 0.873,
           "related": [f"src/agentic_search_skill/neighbour_{i}.py" for i in range(10)]}
    assert 500_000 * (len(json.dumps(one)) + 2) < hints.MAX_INPUT_BYTES


# --------------------------------------------------------------------------- 6. ids


@pytest.mark.parametrize("ident, shown", [
    ("NaN", "NaN"), ("-Infinity", "-Infinity"), ('{"k": 1}', "an object"), ("[1]", "an array"), ("true", "true"),
])
def test_hints_id_that_is_not_a_string_or_a_finite_number_is_refused(ident, shown):
    stdin = '{"results": [{"id": "a", "score": 0.5}, {"id": %s, "score": 0.4}]}' % ident
    proc = run(HINTS, stdin=stdin.encode())
    assert_one_line(proc, "hints.py", "results[1].id: expected a string or a finite number", 1)
    assert shown in proc.stderr.decode()


def test_hints_number_and_missing_ids_still_work():
    out = hints.compute_hints([{"id": 7, "title": "x", "score": 0.9, "related": ["8", "1.5"]},
                               {"id": 1.5, "title": "z", "score": 0.3}, {"title": "y", "score": 0.2}], ["x"])
    assert out["related_ids"] == ["8"] and out["new_ids"] == ["7", "1.5"]
    with pytest.raises(hints.HintsInputError, match=r"results\[0\]\.id"):
        hints.compute_hints([{"id": {"k": 1}, "score": 0.9}], ["x"])


# --------------------------------------------------------------------------- a third adversarial check


def test_a_relative_path_with_the_working_directory_gone_is_one_line(tmp_path, tree):
    gone = tmp_path / "gone"
    gone.mkdir()
    for args, flag in ((["--root", tree, "--state", "rel.json", "--task", "token"], "--state rel.json"),
                       (["--root", ".", "--state", tmp_path / "s.json", "--task", "token"], "--root ."),
                       (["--root", tree, "--state", tmp_path / "s2.json", "--index-dir", "rel", "--task", "token"],
                        "--index-dir rel")):
        proc = subprocess.run([sys.executable, str(LOOP), *map(str, args)], capture_output=True,
                              timeout=HANG_SECONDS, cwd=gone, preexec_fn=lambda: os.rmdir(os.getcwd()))
        assert_one_line(proc, "retrieve_loop.py", f"{flag}: a relative path, and the current directory no longer exists", 1)
        gone.mkdir()


def test_repeated_flags_add_up(tmp_path):
    root = write_tree(tmp_path / "T", {"auth.py": "def token():\n    return 1\n", "jar.py": "cookie = 1\n",
                                        "x.py": "y = 2\n"})
    state = tmp_path / "s.json"
    assert retrieve_loop.main(["--root", str(root), "--state", str(state), "--keywords", "token",
                               "--keywords", "cookie"]) == 0
    saved = json.loads(state.read_text())
    assert retrieve_loop.main(["--state", str(state), "--judge", "auth.py=1", "--judge", "jar.py=0"]) == 0
    judged = json.loads(state.read_text())["judgements"]
    assert judged == {"auth.py": 1.0, "jar.py": 0.0}
    assert "token" in json.dumps(saved) and "cookie" in json.dumps(saved)


def test_one_file_judged_twice_with_two_scores_is_refused(tmp_path, tree, loop_refuses):
    loop_refuses("--root", tree, "--state", tmp_path / "s.json", "--task", "token", "--judge", "a.py=1", "./a.py=0",
                 needle="a.py is judged twice, 1 and 0")


def test_a_damaged_state_named_alone_says_what_is_wrong_with_it(tmp_path, loop_refuses):
    state = tmp_path / "s.json"
    state.write_text("garbage{")
    loop_refuses("--state", state, needle="not an agentic-search state file")


@pytest.mark.parametrize("value", ["0_9", "٠.٩", "1_0e-1_0"])
def test_hints_takes_numbers_as_json_writes_them(value):
    doc = json.dumps({"keywords": ["a"], "results": [{"id": "x", "score": value}]}).encode()
    assert_one_line(run(HINTS, stdin=doc), "hints.py", "results[0].score: expected a number", 1)
    assert run(HINTS, "--sufficient-score", value, stdin=doc).returncode == 2


def test_an_empty_tree_is_not_blamed_on_patterns_never_given(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    proc = run(LOOP, "--root", root, "--state", tmp_path / "s.json", "--task", "token")
    out = json.loads(proc.stdout)
    assert out["done"] and "the tree has no file to search" in out["why"] and "patterns" not in out["why"]


def test_an_exclude_naming_a_file_with_brackets_excludes_that_file(tmp_path):
    root = write_tree(tmp_path / "T", {"pages/[id].tsx": "export default function Page() { return user }\n",
                                        "pages/i.tsx": "export default function Page() { return user }\n",
                                        "pages/d.tsx": "export default function Page() { return user }\n"})
    state = tmp_path / "s.json"
    assert retrieve_loop.main(["--root", str(root), "--state", str(state), "--task", "page user"]) == 0
    proc = run(LOOP, "--state", state, "--exclude", "pages/[id].tsx")
    ids = [r["id"] for r in json.loads(proc.stdout)["ranking"]]
    assert ids == ["pages/d.tsx", "pages/i.tsx"]


def test_a_literal_path_with_glob_characters_is_that_path_everywhere(tmp_path):
    page = "export default function Page() { return user }\n"
    root = write_tree(tmp_path / "T", {"pages/[id].tsx": page + "// quuxly\n", "pages/i.tsx": page,
                                        "pages/d.tsx": page, "pages/{a,b}.tsx": page, "pages/a.tsx": page,
                                        "app/[slug]/page.tsx": page, "**/x.tsx": page, "lib/u.ts": "user = 1\n"})

    def ids(*args):
        proc = run(LOOP, "--root", root, "--state", tmp_path / f"s{len(args)}.json", "--reset", *args,
                   "--limit", "30")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    # a directory named with brackets selects the files below it, as any directory does
    assert [r["id"] for r in ids("--task", "page user", "--patterns", "app/[slug]")["ranking"]] == \
        ["app/[slug]/page.tsx"]
    # an excluded file is still searched: its word is no gap, and the exclude is no glob
    out = ids("--task", "quuxly page user", "--exclude", "pages/[id].tsx")
    assert "quuxly" not in out["gaps"] and out["query"]["excludes"] == []
    assert "pages/[id].tsx" not in [r["id"] for r in out["ranking"]]
    # braces too
    out = ids("--task", "page user", "--exclude", "pages/{a,b}.tsx")
    got = [r["id"] for r in out["ranking"]]
    assert "pages/{a,b}.tsx" not in got and "pages/a.tsx" in got
    # the all-files patterns keep their meaning when a directory bears their name
    assert len(ids("--task", "page user", "--patterns", "**")["ranking"]) == 8


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc")
def test_a_state_in_a_folder_that_takes_no_new_file_is_refused_at_once(tmp_path, tree, loop_refuses):
    """/proc says ENOENT to a new file: read as a lock that vanished, the call spun 60 s."""
    loop_refuses("--root", tree, "--state", "/proc/self/new.json", "--task", "token",
                 needle="cannot create the state's lock", code=1)


def test_a_refused_call_prints_its_error_alone_not_the_notices_before_it(tmp_path):
    """(An adversarial check: an ``--exclude`` notice came before the error line.)"""
    tree = write_tree(tmp_path / "t", {"a.py": "def parse_date():\n    pass\n"})
    proc = run(LOOP, "--root", tree, "--state", tmp_path / "s.json", "--task", "~", "--exclude", "nosuch")
    assert_one_line(proc, "retrieve_loop.py", "no keywords", 1)
    proc = run(LOOP, "--root", tree, "--state", tmp_path / "s.json", "--task", "fix parse_date", "--exclude", "nosuch")
    assert proc.returncode == 0 and b"--exclude nosuch: no such file" in proc.stderr


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_task_file_dash_on_a_terminal_is_a_usage_error_not_a_wait(tmp_path):
    tree = write_tree(tmp_path / "t", {"a.py": "def f():\n    pass\n"})
    leader, follower = os.openpty()
    try:
        proc = subprocess.run([sys.executable, str(LOOP), "--root", str(tree), "--state", str(tmp_path / "s.json"),
                               "--task-file", "-"], stdin=follower, capture_output=True, timeout=HANG_SECONDS)
    finally:
        os.close(leader)
        os.close(follower)
    assert_one_line(proc, "retrieve_loop.py", "--task-file -: standard input is a terminal", 2)
    assert not (tmp_path / "s.json").exists()


# A writer that sets its pipe non-blocking, then writes in two pieces a moment apart.
_NONBLOCKING = ("import fcntl, os, sys; fl = fcntl.fcntl(0, fcntl.F_GETFL); "
                "fcntl.fcntl(0, fcntl.F_SETFL, fl | os.O_NONBLOCK); os.execv(sys.executable, sys.argv[1:])")


def _fed_in_two_pieces(first: bytes, second: bytes, *argv) -> subprocess.CompletedProcess:
    proc = subprocess.Popen([sys.executable, "-c", _NONBLOCKING, sys.executable, *map(str, argv)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(first)
    proc.stdin.flush()
    time.sleep(0.5)
    out, err = proc.communicate(second, timeout=HANG_SECONDS)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.skipif(sys.platform == "win32", reason="fcntl")
def test_a_non_blocking_stdin_is_read_to_its_end_by_both_scripts(tmp_path):
    """(An adversarial check: a pipe left non-blocking gave a traceback, or only what
    had arrived: the task ``session``, the rest lost.)"""
    tree = write_tree(tmp_path / "t", {"auth.py": "def verify_token(t):\n    raise ValueError(t)\n"})
    proc = _fed_in_two_pieces(b"session\n", b"verify_token raises ValueError\n",
                              LOOP, "--root", tree, "--state", tmp_path / "s.json", "--task-file", "-")
    assert proc.returncode == 0, proc.stderr
    assert "verify_token" in json.loads(proc.stdout)["query"]["keywords"]
    proc = _fed_in_two_pieces(b'{"keywords": ["a"],', b' "results": []}', HINTS)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["gap_keywords"] == ["a"]


def test_a_very_long_task_is_read_to_a_cap_and_says_so(tmp_path):
    """(An adversarial check: a 4 MB task of list items took half a minute on four files.)"""
    from agentic_search_skill.query import MAX_TASK_CHARS, task_read

    tree = write_tree(tmp_path / "t", {"auth.py": "def verify_token(t):\n    raise ValueError(t)\n"})
    task = tmp_path / "task.txt"
    task.write_text("verify_token raises\n" + "- a\n" * (MAX_TASK_CHARS // 2))
    proc = run(LOOP, "--root", tree, "--state", tmp_path / "s.json", "--task-file", task)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "it is read to its first" in err
    assert json.loads(proc.stdout)["ranking"][0]["id"] == "auth.py"
    text = task.read_text()
    assert task_read(text).endswith("- a") and len(task_read(text)) <= MAX_TASK_CHARS
    assert task_read("short") == "short"
    # (a rereading's checks) a long line after a short one, or after a blank line, is
    # read up to its last space in the cap, not cut at the line end before it
    long_line = "token refresh session expires " * 10_000
    for head in ("\n\n", "Session token bug\n"):
        read = task_read(head + long_line)
        assert len(read) > MAX_TASK_CHARS // 2 and (head + long_line).startswith(read)
        assert read.split()[-1] in {"token", "refresh", "session", "expires"}  # (no word cut)


def test_a_task_added_later_keeps_the_first_one(tmp_path):
    """(A rereading's check: a 70k-character task added on cycle 2 replaced a 200k one.)"""
    from agentic_search_skill.query import MAX_TASK_CHARS

    tree = write_tree(tmp_path / "t", {"auth.py": "def verify_token(t):\n    raise ValueError(t)\n",
                                       "late.py": "def renew_session():\n    pass\n"})
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("verify_token ORIGINAL\n" + "- a\n" * (MAX_TASK_CHARS // 5))
    second.write_text("renew_session\n" + "- b\n" * (MAX_TASK_CHARS // 8))
    state = tmp_path / "s.json"
    assert run(LOOP, "--root", tree, "--state", state, "--task-file", first, "--max-cycles", "5").returncode == 0
    proc = run(LOOP, "--root", tree, "--state", state, "--task-file", second)
    assert proc.returncode == 0, proc.stderr
    kept = json.loads(state.read_text())["task"]
    assert kept.startswith("verify_token ORIGINAL") and "renew_session" in kept
    assert "renew_session" in json.loads(proc.stdout)["query"]["keywords"]


def test_notices_come_after_the_answer_and_never_with_a_failure_to_print(tmp_path):
    """(A rereading's check: ``>/dev/full`` gave the ``--exclude`` notice, then the error.)"""
    tree = write_tree(tmp_path / "t", {"a.py": "def parse_date():\n    pass\n"})
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, str(LOOP), "--root", str(tree), "--state", str(tmp_path / "s.json"),
                               "--task", "fix parse_date", "--exclude", "nosuch"],
                              stdout=full, stderr=subprocess.PIPE, timeout=HANG_SECONDS)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and err.count("\n") == 1 and "cannot write the output" in err
