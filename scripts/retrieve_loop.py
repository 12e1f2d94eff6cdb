#!/usr/bin/env python3
"""retrieve_loop.py - one DISPATCH -> EVALUATE -> REFINE cycle per invocation.

The loop's state lives in the --state file between calls. The first call creates it;
each later call with the same --state runs the next cycle, and with no new query flags
it runs the query the previous cycle proposed (``next_query``), so three calls with
only --root/--state are the tool's own loop. Steer it by adding --keywords, --patterns,
--exclude, or --judge PATH=SCORE for files you have read.

Usage::

    python3 scripts/retrieve_loop.py --root . --state /tmp/s.json --task "fix the auth token expiry bug"
    python3 scripts/retrieve_loop.py --state /tmp/s.json                     # next cycle
    python3 scripts/retrieve_loop.py --root . --state /tmp/s.json --judge src/auth.ts=0.9 --text

Output: one JSON object on stdout (``--text`` for people): cycle, max_cycles, done,
stop_reason, next_action, why, confidence, query, results, ranking, context, next_query,
gaps, stats (``--full`` adds every result field, hints.py's hints and all statistics).
Exit codes: 0 ok; 1 bad input or state (one line on stderr, nothing lost); 2 usage;
130 interrupted, 143 terminated (the state is as it was, unless stderr says it was
saved: then ``--show`` prints the answer).
The tool writes nothing inside --root except the --state file itself. It keeps one index
per tree in the user's cache directory (--index-dir, $AGENTIC_SEARCH_INDEX_DIR, else
$XDG_CACHE_HOME/agentic-search or ~/.cache/agentic-search), shared by every task on the
tree, that makes cycles cheaper without changing their output; --no-cache turns it off.
"""

from __future__ import annotations

import gc
import os
import sys

if __name__ == "__main__":
    import signal as _signal

    # Until main's handler is in place, an interrupt ends the process as the signal's
    # default does: no traceback from the start-up (the exit status says "interrupted").
    try:
        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
    except (OSError, ValueError):
        pass

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


def _bytecode_in_the_cache(args) -> None:
    """Compiled modules go to the user's cache directory, not beside the scripts: a skill
    kept inside the tree it searches (``.claude/skills/...`` of a project) must write
    nothing there. When that cache is itself inside the tree (``--root ~``, or the tree
    reached through another name), nothing is written at all. A caller's own choice
    (PYTHONPYCACHEPREFIX, -B, PYTHONDONTWRITEBYTECODE) stands. The two helpers it needs
    (fsafe, and the package's ``__init__``) are imported without writing their bytecode:
    they are compiled from source on each call."""
    if sys.flags.dont_write_bytecode or getattr(sys, "pycache_prefix", None) is not None:
        return
    sys.dont_write_bytecode = True
    try:
        from agentic_search_skill import fsafe
    finally:
        sys.dont_write_bytecode = False
    root = _root_of(args)
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    home = xdg if os.path.isabs(xdg) else os.path.join(fsafe.home_dir(), ".cache")
    prefix = os.path.join(home, "agentic-search", "pycache")
    # (No tree known - a state naming no root, a state that cannot be read - may be
    # any tree, the one holding the cache too: nothing is written.)
    try:
        inside = root is None or fsafe.inside_any_name(os.path.realpath(prefix), os.path.realpath(root))
    except (OSError, ValueError):  # (a root of a lone surrogate: no name the system takes)
        inside = True
    if inside:
        sys.dont_write_bytecode = True
        return
    if not _only_yours(home, os.path.join(home, "agentic-search"), prefix):
        sys.dont_write_bytecode = True  # (and none is read from there: Python runs what it finds)
        return
    sys.pycache_prefix = prefix


def _only_yours(parent: str, *folders: str) -> bool:
    """True when no other user can put a compiled module in ``folders``: each that exists
    is a directory of yours that no one else may write, and ``parent`` lets no one else
    replace them (others may write it only with the sticky bit, as /tmp). A shared
    $XDG_CACHE_HOME would otherwise run another user's planted ``.pyc``. (Writable by
    your own group counts as yours: a umask of 002 makes the folders Python creates so.)"""
    import stat
    geteuid = getattr(os, "geteuid", None)
    if geteuid is None:  # no owners to compare (Windows)
        return True

    def others_write(st: os.stat_result) -> bool:
        return bool(st.st_mode & stat.S_IWOTH or st.st_mode & stat.S_IWGRP and st.st_gid != os.getegid())

    try:
        try:
            st = os.stat(parent)
        except FileNotFoundError:
            return True  # (made by this process, then: yours)
        if others_write(st) and not st.st_mode & stat.S_ISVTX:
            return False
        for folder in folders:
            try:
                st = os.lstat(folder)
            except FileNotFoundError:
                return True  # (made by this process, then: yours)
            if not stat.S_ISDIR(st.st_mode) or st.st_uid != geteuid() or others_write(st):
                return False
    except OSError:
        return False
    return True


# The state's writer puts its root among the first fields; the whole file is read for
# it (a key the cycle reads may come later: a state re-saved with its keys sorted), up to
# the state's own size limit (state.MAX_STATE_BYTES).
_STATE_READ_BYTES = 64 * 1024 * 1024
# A root longer than this is no path a system resolves (realpath of a 1 MiB name took 23 s).
_ROOT_MAX_CHARS = 4096


def _root_of(args) -> str | None:
    """The tree this call searches: --root, else the one the state file names, read from
    it (to keep bytecode out of that tree; the cycle reads and checks the state itself). A FIFO or device there is never waited on: None, as
    for a state that is no JSON object or names no root."""
    if args.root:
        return args.root
    import json

    from agentic_search_skill.fsafe import read_regular  # (imported by the caller, bytecode off)
    try:
        raw = read_regular(args.state, _STATE_READ_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(raw) > _STATE_READ_BYTES:
        return None  # (past the state's limit: the cycle refuses it)
    # Read as the cycle reads it (a key escaped as ``\u0072oot`` is "root"; of a root
    # named twice, the last), and only an object: a state of millions of small objects
    # is parsed with the collector off. A root longer than any path is none.
    if not raw.lstrip(b" \t\r\n").startswith(b"{"):
        return None
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        top = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    finally:
        if was_enabled:
            gc.enable()
    root = top.get("root") if isinstance(top, dict) else None
    return root if isinstance(root, str) and len(root) <= _ROOT_MAX_CHARS else None


def _build_parser():
    import argparse

    class OneLineParser(argparse.ArgumentParser):
        # (hints.py's _parser, written again: importing hints before the root is known
        # would write its bytecode beside a skill kept inside the tree it searches)
        def error(self, message: str):  # type: ignore[override]
            line = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
            try:
                sys.stderr.write(f"{self.prog}: error: {line} (see --help)\n")
            except (AttributeError, OSError, ValueError):
                pass
            raise SystemExit(2)

    def count(value: str) -> int:
        """A whole number written in ASCII digits (int() also takes ``٣`` and ``1_0``)."""
        if not (value.isascii() and value.strip().lstrip("+-").isdigit()):
            raise ValueError(value)
        return int(value)

    count.__name__ = "int"  # (argparse's message: "invalid int value: '٣'")

    p = OneLineParser(
        allow_abbrev=False,
        prog="retrieve_loop.py",
        description="Run one cycle of the agentic retrieval loop over a codebase; state lives in --state.",
        epilog="Exit codes: 0 ok, 1 bad input or state, 2 usage, 130 interrupted, 143 terminated. See SKILL.md and references/retriever.md.",
    )
    p.add_argument("--root", default=None, help="the tree to search (first call; later calls take it from --state)")
    p.add_argument("--state", required=True, help="the loop's state file (created on the first call)")
    p.add_argument("--task", default="", help="free text: an issue, bug report or stack trace")
    p.add_argument("--task-file", default=None, help="read the task text from a regular file ('-' for stdin)")
    p.add_argument("--keywords", nargs="+", action="extend", default=[], metavar="K", help="keywords to search, in the code's own words (added to the query with a third of its weight; at most 100)")
    p.add_argument("--patterns", nargs="+", action="extend", default=[], metavar="GLOB", help="globs selecting files, relative to --root (default: all)")
    p.add_argument("--exclude", nargs="+", action="extend", default=[], metavar="GLOB", help="globs or paths to leave out")
    p.add_argument("--judge", nargs="+", action="extend", default=[], metavar="PATH=SCORE", help="your relevance for files you read")
    p.add_argument("--max-cycles", type=count, default=None, help="cycle limit (default 3, at most 1000)")
    p.add_argument("--limit", type=count, default=None,
                   help="at most this many entries in results, ranking and context (default 20, "
                        "at most 1000000; kept for the loop's later rounds)")
    p.add_argument("--max-file-kb", type=count, default=None, metavar="KB",
                   help="skip files larger than this (default 2048, at most 1048576; kept for later calls)")
    p.add_argument("--reset", action="store_true", help="start over, discarding the state file")
    p.add_argument("--text", action="store_true", help="print a human-readable report instead of JSON")
    p.add_argument("--full", action="store_true",
                   help="print every field: whole results (title, summary, tags, related, missing, matched), "
                        "hints.py's hints, the whole next query and all statistics")
    p.add_argument("--show", action="store_true",
                   help="print the last cycle's answer again (with --text, --full, --limit) "
                        "without running a cycle or changing the state")
    p.add_argument("--no-cache", action="store_true",
                   help="neither read nor write the tree's index (see --index-dir)")
    p.add_argument("--index-dir", default=None, metavar="DIR",
                   help="where tree indexes live (default: $AGENTIC_SEARCH_INDEX_DIR, else "
                        "$XDG_CACHE_HOME/agentic-search or ~/.cache/agentic-search)")
    return p


def _write(text: str) -> None:
    """Write to stdout as bytes in its encoding, a character it cannot encode as an escape.

    Only such characters are escaped: a file name that is not UTF-8 (held as lone
    surrogates) becomes ``\\udcff``, which inside a JSON string is JSON's own escape, so
    the output stays JSON and every other character stays as it is (``café``)."""
    out = getattr(sys.stdout, "buffer", None)
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        data = text.encode(encoding, "backslashreplace")
    except LookupError:
        data = text.encode("ascii", "backslashreplace")
    if out is None:
        sys.stdout.write(data.decode(encoding, "replace"))
        sys.stdout.flush()
    else:
        out.write(data)
        out.flush()


def _stdout_open() -> bool:
    """Whether there is a standard output to print to (``>&-`` closes it: Python then has
    no sys.stdout, or one whose descriptor is gone)."""
    if sys.stdout is None:
        return False
    try:
        os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return hasattr(sys.stdout, "getvalue")  # an in-memory stream (tests) is open
    return True


def _stdout_needs_ascii() -> bool:
    encoding = (getattr(sys.stdout, "encoding", None) or "utf-8").lower().replace("-", "").replace("_", "")
    return encoding not in ("utf8", "utf16", "utf32", "utf8sig")


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run one cycle, print the outcome; returns the exit code."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse printed usage or help
        return exit_.code if isinstance(exit_.code, int) else 2
    try:
        _bytecode_in_the_cache(args)
    except (OSError, ValueError):
        sys.dont_write_bytecode = True
    from hints import _say as notice, _silence_stdout

    if not _stdout_open():
        notice("retrieve_loop.py: error: standard output is closed; nothing ran (the answer "
               "would be lost)")
        return 1
    # An interrupt says whether it came after the state was saved (then the cycle or the
    # judgements stand and --show prints the answer): a save replaces the file.
    before = _file_identity(args.state)
    try:
        return _run_and_print(args, notice, _silence_stdout)
    except KeyboardInterrupt:
        if _file_identity(args.state) != before:
            notice("retrieve_loop.py: interrupted after the state was saved: the call's cycle or judgements "
                   "stand; --show prints the answer")
        return 130


def _file_identity(path: str) -> tuple | None:
    """The file at ``path`` as (device, inode, mtime), None when there is none."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino, st.st_mtime_ns


def _run_and_print(args, notice, silence_stdout) -> int:
    """Run the call and print its answer; the exit code."""
    from agentic_search_skill.cli import run
    from agentic_search_skill.request import RequestError, UsageError, from_args

    # One cycle allocates an object or more per file and frees them all at exit: the
    # cyclic collector would only rescan them (a quarter of the time on 100,000 files).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        notes: list = []
        _out, text = run(from_args(args), ascii_only=_stdout_needs_ascii(), notes=notes)
    except UsageError as exc:
        notice(f"retrieve_loop.py: error: {exc}")
        return 2
    except RequestError as exc:
        notice(f"retrieve_loop.py: error: {exc}")
        return 1
    finally:
        if gc_was_enabled:
            gc.enable()
    if sys.stdout is None:
        return _said(notes, notice)
    try:
        _write(text)
    except BrokenPipeError:
        silence_stdout()
    except OSError as exc:  # /dev/full, a closed descriptor
        saved = "" if getattr(args, "show", False) else " (the state is saved)"
        notice(f"retrieve_loop.py: error: cannot write the output: {exc.strerror or exc}{saved}")
        silence_stdout()
        return 1
    return _said(notes, notice)


def _said(notes: list, notice) -> int:
    """The call's notices, once its answer is out (a call that fails says only its error)."""
    for line in notes:
        notice(line)
    return 0


def _exit(code: int) -> None:
    """(Run as a script.) Exit with ``code``: the call's outcome is decided, so an interrupt from here on is
    ignored (it neither prints a traceback from the interpreter's shutdown nor turns an
    answer already printed into a failure)."""
    try:
        _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
        _signal.signal(_signal.SIGTERM, _signal.SIG_IGN)
    except (OSError, ValueError):
        pass
    sys.exit(code)


# Said when memory runs out (no traceback; written without making much of anything new).
_OUT_OF_MEMORY = b"retrieve_loop.py: error: out of memory (a memory limit such as ulimit -v is too low for this tree)\n"


_TERMINATED: list = []


def _terminate(signum, frame) -> None:
    """SIGTERM as an interrupt: what the call was writing is cleaned up (a temporary file
    beside the state was left for good), and the exit status says 143."""
    _TERMINATED.append(signum)
    raise KeyboardInterrupt


if __name__ == "__main__":
    try:
        try:
            _signal.signal(_signal.SIGINT, _signal.default_int_handler)
            _signal.signal(_signal.SIGTERM, _terminate)
        except (OSError, ValueError):
            pass
        status = main()
    except KeyboardInterrupt:
        status = 130
    except MemoryError:
        try:
            os.write(2, _OUT_OF_MEMORY)
        except OSError:
            pass
        status = 1
    if _TERMINATED and status == 130:
        status = 143
    _exit(status)
