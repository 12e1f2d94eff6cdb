"""Progress shows on a terminal during long cycles only; pipes never see it."""

import io

from agentic_search_skill import progress as progress_mod
from agentic_search_skill.progress import Progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_nothing_is_printed_when_stderr_is_not_a_terminal(monkeypatch):
    monkeypatch.setattr(progress_mod, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(progress_mod, "PROGRESS_EVERY", 0.0)
    stream = io.StringIO()
    p = Progress(stream)
    for i in range(0, 1024, 64):
        p.tick("matching", i, 1024)
    p.finish()
    assert stream.getvalue() == ""


def test_a_terminal_sees_one_line_that_is_erased_at_the_end(monkeypatch):
    monkeypatch.setattr(progress_mod, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(progress_mod, "PROGRESS_EVERY", 0.0)
    stream = _Tty()
    p = Progress(stream)
    p.tick("matching", 128, 1024)
    assert "matching 128/1024 files" in stream.getvalue()
    assert "\n" not in stream.getvalue()
    p.finish()
    assert stream.getvalue().endswith("\r\x1b[2K")


def test_short_cycles_stay_quiet_even_on_a_terminal():
    stream = _Tty()
    p = Progress(stream)  # PROGRESS_AFTER (2 s) has not passed
    p.tick("matching", 128, 1024)
    p.finish()
    assert stream.getvalue() == ""
