"""Tests for agentic_search_skill.trust: calibrated scores and the "answer is clear" flag.

The fitted weights may be refitted, so the tests pin behaviour a user relies on, not
numbers: a lone file defining the name the task quotes is clear; two files holding the
same evidence are not, and score lower; evidence made only of plain words is never
clear while another source file scores half as high on it; scores stay in 0..1, one per
input file, in the input's order; same input, same answer.
"""
from __future__ import annotations

from typing import Dict

from agentic_search_skill import trust
from agentic_search_skill.engine import rank_documents
from agentic_search_skill.query import extract_keywords
from agentic_search_skill.score import task_words
from _trees import read_tree

FILLER = {
    f"src/module{i}.py": f"def helper_{i}(value):\n    '''Return the value.'''\n    return value + {i}\n"
    for i in range(30)
}

TASK = ("`parse_iso_date` drops the timezone offset\n\n"
        "Calling `parse_iso_date('2020-01-01T10:00:00+02:00')` returns a naive datetime; "
        "the offset is lost.")

DATES = (
    "import datetime\n\n"
    "def parse_iso_date(text):\n"
    "    '''Parse an ISO 8601 date; the timezone offset is kept.'''\n"
    "    return datetime.datetime.fromisoformat(text)\n"
)


def assess_tree(tmp_path, files: Dict[str, str], task: str) -> trust.Assessment:
    docs = read_tree(tmp_path, files)
    keywords = extract_keywords(task)
    scored, matches, corpus = rank_documents(docs, keywords, task_words(task))
    return trust.assess(scored, matches, keywords, corpus), scored


def test_a_lone_file_defining_the_quoted_name_is_clear(tmp_path):
    files = dict(FILLER, **{"src/dates.py": DATES,
                            "src/cli.py": "from dates import parse_iso_date\n\nprint(parse_iso_date)\n"})
    a, scored = assess_tree(tmp_path, files, TASK)
    assert scored[0].rel == "src/dates.py"
    assert a.clear and not a.generic
    assert a.scores[0] >= 0.8
    assert any("parse_iso_date" in w for w in a.why)


def test_two_files_with_the_same_evidence_are_not_clear(tmp_path):
    files = dict(FILLER, **{"src/dates.py": DATES, "lib/dates.py": DATES})
    a, _ = assess_tree(tmp_path, files, TASK)
    alone, _ = assess_tree(tmp_path / "alone", dict(FILLER, **{"src/dates.py": DATES}), TASK)
    assert not a.clear
    assert alone.clear
    assert a.confidence < alone.confidence


PLAIN_TASK = "the offset is lost when the timezone is kept in dates"
PLAIN_DATES = DATES * 5 + "# timezone offset lost dates kept\n" * 5


def test_plain_words_other_source_files_share_are_never_clear(tmp_path):
    # Another program file scores more than half as high on the task's plain words.
    files = dict(FILLER, **{"src/dates.py": PLAIN_DATES,
                            "src/zones.py": "# timezone offset lost dates kept\n" * 4})
    a, scored = assess_tree(tmp_path, files, PLAIN_TASK)
    assert scored and scored[0].rel == "src/dates.py"
    assert a.generic
    assert not a.clear
    assert "only plain or common words matched, as in other program files" in a.why


def test_plain_words_one_source_file_holds_single_it_out(tmp_path):
    # A report naming nothing of the code, one program file holding its words (a
    # README and a test hold them too: they are no rival answer): the answer is clear.
    files = dict(FILLER, **{"src/dates.py": PLAIN_DATES,
                            "README.md": "The timezone offset of dates is kept, never lost.\n" * 8,
                            "tests/test_dates.py": "# timezone offset lost dates kept\n" * 6})
    a, scored = assess_tree(tmp_path, files, PLAIN_TASK)
    assert scored and scored[0].rel == "src/dates.py"
    assert not a.generic
    assert a.clear and a.scores[0] >= 0.8


def test_scores_are_probabilities_in_the_input_order(tmp_path):
    files = dict(FILLER, **{"src/dates.py": DATES, "src/cli.py": "parse_iso_date timezone\n",
                            "docs/dates.md": "parse_iso_date keeps the offset\n"})
    a, scored = assess_tree(tmp_path, files, TASK)
    assert len(a.scores) == len(scored)
    assert all(0.0 <= x <= 1.0 for x in a.scores)
    assert list(a.scores) == sorted(a.scores, reverse=True)
    assert 0.0 <= a.confidence <= 1.0
    assert a.scores[1] < a.scores[0]  # a file far behind the first is not as sure


def test_same_input_same_answer(tmp_path):
    files = dict(FILLER, **{"src/dates.py": DATES, "lib/dates.py": DATES})
    first, _ = assess_tree(tmp_path / "a", files, TASK)
    again, _ = assess_tree(tmp_path / "b", dict(reversed(list(files.items()))), TASK)
    assert first == again


def test_nothing_scored_is_no_answer():
    a = trust.assess([], {}, [], trust.Corpus(n_docs=0, avg_size=1.0, idfs=()))
    assert a.scores == () and a.confidence == 0.0 and not a.clear


def test_a_quoted_name_found_everywhere_is_no_specific_evidence(tmp_path):
    # `value` is quoted but every file holds it: hitting it says no more than a plain word.
    task = "`value` comes back wrong"
    files = dict(FILLER, **{"src/dates.py": "print(value, value + value)\n" * 20})
    a, scored = assess_tree(tmp_path, files, task)
    assert scored[0].rel == "src/dates.py"
    assert a.generic and not a.clear


def test_calibrated_rows_keep_order_and_evidence(tmp_path):
    files = dict(FILLER, **{"src/dates.py": DATES, "src/cli.py": "parse_iso_date timezone\n"})
    a, scored = assess_tree(tmp_path, files, TASK)
    rows = trust.calibrated(scored, a)
    assert [r.rel for r in rows] == [s.rel for s in scored]
    assert [r.score for r in rows] == list(a.scores)
    assert [r.signals for r in rows] == [s.signals for s in scored]


def test_plain_words_in_a_file_of_no_programming_language_single_nothing_out(tmp_path):
    # (an adversarial check: a Gherkin scenario, INSTALL, README.org hold a story's words as
    # prose does; the code scoring far below them is no reason to call them the answer)
    for name in ("features/dates.feature", "INSTALL", "README.org", "app/Localizable.strings", "page.tmpl",
                 "INSTALL.unix"):
        files = dict(FILLER, **{name: "# timezone offset lost dates kept\n" * 8, "src/dates.py": DATES})
        a, scored = assess_tree(tmp_path / name.replace("/", "_"), files, PLAIN_TASK)
        assert scored[0].rel == name
        assert a.generic and not a.clear


def test_plain_words_in_a_lone_script_or_component_single_it_out(tmp_path):
    # (an adversarial check: a shell script's and a Vue component's words are a program's,
    # whether or not the tool reads their definitions)
    for name in ("bin/backup.sh", "src/LoginForm.vue"):
        files = dict(FILLER, **{name: "# timezone offset lost dates kept\n" * 8, "README.md": "dates\n"})
        a, scored = assess_tree(tmp_path / name.replace("/", "_"), files, PLAIN_TASK)
        assert scored[0].rel == name
        assert not a.generic and a.clear

