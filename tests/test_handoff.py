"""handoff.py: at a stop, the file the first file's quoted definitions hand the work to."""

from __future__ import annotations

from _trees import write_tree

from agentic_search_skill import handoff
from agentic_search_skill.cycle import Env, run_cycle
from agentic_search_skill.request import Request
from agentic_search_skill.state import LoopState

import hints

FACADE = """package org.acme.text;

public class Styled {
    private final String text;

    public Styled(String text) {
        this.text = text;
    }

    public static Styled fromAnsi(String ansi) {
        if (ansi == null) {
            return null;
        }
        return new StyledBuilder(ansi.length()).ansiAppend(ansi).toStyled();
    }

    public static String stripAnsi(String ansi) {
        return new StyledBuilder(ansi.length()).ansiAppend(ansi).toString();
    }

    public int length() {
        return text.length();
    }
}
"""
BUILDER = """package org.acme.text;

public class StyledBuilder {
    private final StringBuilder buf;

    public StyledBuilder(int capacity) {
        buf = new StringBuilder(capacity);
    }

    public StyledBuilder ansiAppend(String ansi) {
        int state = 0;
        for (int i = 0; i < ansi.length(); i++) {
            char c = ansi.charAt(i);
            if (state == 0 && c == 27) {
                state = 1;
            } else if (state == 1 && c == '[') {
                state = 2;
            } else if (state == 2 && c == 'm') {
                state = 0;
            } else if (state == 0) {
                buf.append(c);
            }
        }
        return this;
    }

    public Styled toStyled() {
        return new Styled(buf.toString());
    }
}
"""
TASK = ("Styled.fromAnsi / stripAnsi let OSC escape sequences through\n"
        "Styled.fromAnsi(\"\\033]0;title\\007OK\") keeps the OSC payload, and Styled.stripAnsi "
        "returns it too; only the color sequences are understood.")


def low(text: str) -> bytes:
    return text.lower().encode()


def find(top: str, text: str, quoted, cands):
    return handoff.find(top, text, low(text), quoted, [(rel, low(t)) for rel, t in cands])


def test_the_builder_a_facade_hands_its_work_to_is_found():
    h = find("src/Styled.java", FACADE, ("fromAnsi", "stripAnsi"),
             [("src/Other.java", "class Other { void ansiAppend2() {} }\n"), ("src/StyledBuilder.java", BUILDER)])
    assert h == handoff.Handoff("src/StyledBuilder.java", ("StyledBuilder", "ansiAppend", "toStyled"),
                                ("fromAnsi", "stripAnsi"))


def test_a_definition_that_does_the_work_itself_hands_nothing_on():
    work = "def parse_date(text):\n" + "".join(f"    x{i} = text.split('-')[{i}]\n" for i in range(10)) \
        + "    return tuple(int(p) for p in (x0, x1))\n"
    assert find("dates.py", work, ("parse_date",), [("util.py", "def split():\n    pass\n")]) is None
    assert find("dates.py", work, (), [("util.py", "def split():\n    pass\n")]) is None


def test_a_call_of_the_files_own_function_hands_nothing_on():
    own = "def render(x):\n    return format_value(x)\n\ndef format_value(v):\n    return str(v)\n"
    assert find("view.py", own, ("render",), [("fmt.py", "def format_value(v):\n    return repr(v)\n")]) is None


GO_FACADE = """package urls

// RelURL makes s relative to the site's base URL.
func (ns *Namespace) RelURL(s any) (string, error) {
	ss, err := cast.ToStringE(s)
	if err != nil {
		return "", err
	}
	return ns.deps.PathSpec.RelURL(ss, false), nil
}
"""
GO_PATHS = "package helpers\n\nfunc (p *PathSpec) RelURL(in string, addLanguage bool) string {\n\treturn in\n}\n"


def test_a_method_passing_the_work_to_its_namesake_on_another_object_hands_it_on():
    # (trial 34's hugo: the template function stopped on hands the work to PathSpec.RelURL)
    h = find("tpl/urls/urls.go", GO_FACADE, ("relURL",), [("helpers/url.go", GO_PATHS)])
    assert h == handoff.Handoff("helpers/url.go", ("RelURL",), ("relURL",))


def test_a_method_calling_its_own_name_on_itself_is_a_recursion_not_a_handoff():
    for own in ("self.walk(node.left)", "this.walk(node.left)", "walk(node.left)"):
        body = f"def walk(node):\n    if node:\n        return {own}\n"
        assert find("tree.py", body, ("walk",), [("other.py", "def walk(n):\n    return n\n")]) is None


def test_a_walk_over_values_of_its_own_type_is_a_recursion_not_a_handoff():
    for body in ("for c in self.children:\n            c.render(out)", "return self.inner.render(out)"):
        node = f"class Node:\n    def render(self, out):\n        {body}\n"
        assert find("tree/node.py", node, ("render",), [("ui/widget.py", "def render(self, out):\n    out.write(1)\n")]) \
            is None


def test_long_runs_of_a_name_in_a_thin_body_are_read_in_linear_time():
    # (a body of one 40,000-letter word took 51 s; a line of 400-letter calls 3 s)
    for body in ("x = " + "a" * 40000, ("a" * 390 + "(render(") * 1256):
        text = f"def render(self):\n    {body}\n"
        assert find("a.py", text, ("render",), [("b.py", "def render(x):\n  pass\n")]) is None


def test_a_name_every_candidate_defines_points_at_no_file():
    caller = "def render(x):\n    return format_value(x)\n"
    each = "def format_value(v):\n    return str(v)\n"
    cands = [(f"m{i}.py", each) for i in range(handoff.COMMON_AT)]
    assert find("view.py", caller, ("render",), cands) is None
    assert find("view.py", caller, ("render",), cands[:1]).target == "m0.py"


def test_comments_strings_and_docstrings_call_nothing():
    documented = ('def parse_date(text):\n    """Replaces legacy_parse_date(text)."""\n'
                  '    log("calling heavy_parse(text)")  # was: old_parse(text)\n    return text.strip()\n')
    cands = [("old.py", "def legacy_parse_date(t):\n    return t\n\ndef heavy_parse(t):\n    return t\n\n"
                        "def old_parse(t):\n    return t\n")]
    assert find("dates.py", documented, ("parse_date",), cands) is None


def test_a_return_type_is_no_definition_of_the_class_and_a_stub_no_target():
    h = find("src/Styled.java", FACADE, ("Styled",), [("src/StyledBuilder.java", BUILDER)])
    assert h is None  # (Styled's own constructor calls nothing; fromAnsi's return type is no definition)
    caller = "def api_parse(s):\n    return run_parser(s)\n"
    cands = [("stubs/parser.pyi", "def run_parser(s: str) -> int: ...\n"),
             ("parser.py", "def run_parser(s):\n    n = 0\n    return n\n")]
    assert find("api.py", caller, ("api_parse",), cands).target == "parser.py"


def test_lines_a_minified_or_generated_file_holds_are_read_as_no_definition():
    long_line = "function render(x) { return formatValue(x); } " + "var a = 1; " * 60
    assert find("view.js", long_line + "\n", ("render",), [("fmt.js", "function formatValue(v) {\n}\n")]) is None
    short = "function render(x) {\n  return formatValue(x);\n}\n"
    assert find("view.js", short, ("render",), [("fmt.js", "function formatValue(v) {\n}\n")]).target == "fmt.js"


def facade_tree(tmp_path):
    return write_tree(tmp_path / "repo", {
        "src/main/java/org/acme/text/Styled.java": FACADE,
        "src/main/java/org/acme/text/StyledBuilder.java": BUILDER,
        "src/main/java/org/acme/io/Files.java": "package org.acme.io;\n\npublic class Files {\n"
                                                "    public static String read(String p) { return p; }\n}\n",
    })


ENV = Env(synonym_runs=hints.synonym_runs, compute_hints=hints.compute_hints)


SEMVER_LIB = """pub struct VersionReq;

impl VersionReq {
    pub fn parse(text: &str) -> Result<Self, Error> {
        VersionReq::from_str(text)
    }

    pub fn matches(&self, version: &Version) -> bool {
        eval::matches_req(self, version)
    }
}
"""
SEMVER_FILES = {
    "src/lib.rs": SEMVER_LIB,
    "src/parse.rs": "impl FromStr for VersionReq {\n    fn from_str(text: &str) -> Result<Self, Error> {\n"
                    "        parse_req(text)\n    }\n}\n",
    "src/eval.rs": "pub(crate) fn matches_req(req: &VersionReq, ver: &Version) -> bool {\n"
                   "    req.comparators.iter().all(|c| c.pre_ok(ver))\n}\n",
}


def test_of_two_calls_the_one_the_title_names_is_where_the_work_goes():
    # (trial 84: semver's report set up with ``VersionReq::parse`` and failed in
    # ``matches``; the stop named parse.rs, where parse goes)
    after = [("src/parse.rs", SEMVER_FILES["src/parse.rs"]), ("src/eval.rs", SEMVER_FILES["src/eval.rs"])]
    assert find("src/lib.rs", SEMVER_LIB, ("parse", "matches"), after).target == "src/parse.rs"
    h = handoff.find("src/lib.rs", SEMVER_LIB, SEMVER_LIB.lower().encode(), ("parse", "matches"),
                     [(r, t.lower().encode()) for r, t in after], titled=frozenset({"versionreq", "matches"}))
    assert h == handoff.Handoff("src/eval.rs", ("matches_req",), ("matches",))


def test_a_plain_word_the_tasks_code_calls_is_followed_at_a_stop(tmp_path):
    root = write_tree(tmp_path / "repo", SEMVER_FILES)
    task = ("VersionReq matches 1.2.0 pre-releases\n\n    let req = VersionReq::parse(\"<1.2\").unwrap();\n"
            "    assert!(!req.matches(&v));\n\nA VersionReq from parse should not match a pre-release here.\n")
    req = Request(state_path=str(tmp_path / "s.json"), state_shown="s.json", task=task)
    d = run_cycle(str(root), LoopState(root=str(root)), req, {}, ENV).view.decision
    assert (d.action, d.done) == ("synthesize", True)
    assert d.why.endswith("its matches call matches_req in src/eval.rs: if they only pass the work on, read that")


def test_a_stop_on_the_facade_names_the_builder(tmp_path):
    root = facade_tree(tmp_path)
    req = Request(state_path=str(tmp_path / "s.json"), state_shown="s.json", task=TASK)
    out = run_cycle(str(root), LoopState(root=str(root)), req, {}, ENV)
    d = out.view.decision
    assert out.view.results[0].id.endswith("/Styled.java")
    assert (d.action, d.done) == ("synthesize", True)
    assert d.why.endswith("call StyledBuilder, ansiAppend, toStyled in src/main/java/org/acme/text/StyledBuilder.java: "
                          "if they only pass the work on, read that")


def test_a_file_the_caller_judged_is_never_the_one_named(tmp_path):
    root = facade_tree(tmp_path)
    builder = "src/main/java/org/acme/text/StyledBuilder.java"
    req = Request(state_path=str(tmp_path / "s.json"), state_shown="s.json", task=TASK)
    first = run_cycle(str(root), LoopState(root=str(root)), req, {}, ENV)
    assert builder in first.view.decision.why
    again = Request(state_path=str(tmp_path / "s.json"), state_shown="s.json")
    out = run_cycle(str(root), first.state, again, {builder: 0.0}, ENV)
    assert builder not in out.view.decision.why


def test_of_two_files_defining_the_called_name_the_one_the_first_file_imports_is_named():
    caller = "from shop.store import load_order\n\n\ndef fetch_order(order_id):\n    return load_order(order_id)\n"
    cands = [("shop/store_v1.py", "def load_order(order_id):\n    return None\n"),
             ("shop/store.py", "def load_order(order_id):\n    return None\n")]
    assert find("shop/api.py", caller, ("fetch_order",), cands).target == "shop/store_v1.py"
    h = handoff.find("shop/api.py", caller, low(caller), ("fetch_order",), [(rel, low(t)) for rel, t in cands],
                     linked=frozenset({"shop/store.py"}))
    assert h == handoff.Handoff("shop/store.py", ("load_order",), ("fetch_order",))


SHOP_API = '''"""The shop's public API."""

from shop.store import load_order


def fetch_order(order_id):
    """The order of this id, or None."""
    return load_order(order_id)


def cancel_order(order_id):
    order = fetch_order(order_id)
    if order is None:
        raise KeyError(order_id)
    order.status = "cancelled"
    return order
'''
SHOP_STORE = '''ORDERS = {}


def load_order(order_id):
    return ORDERS.get(order_id)
'''
LEGACY_STORE = '''"""The order store of version 1, kept for old order ids: a cancelled order
of version 1 stays in it, with its status cancelled."""

ORDERS_V1 = {}


def load_order(order_id):
    """An order of version 1 by its id: an order id of version 1 is a string."""
    return ORDERS_V1.get(str(order_id))
'''


def test_a_stop_names_the_file_the_first_file_imports_over_a_copy_ranked_higher(tmp_path):
    root = write_tree(tmp_path / "repo", {"shop/__init__.py": "", "shop/api.py": SHOP_API,
                                          "shop/store.py": SHOP_STORE, "shop/store_v1.py": LEGACY_STORE})
    task = ("fetch_order returns a cancelled order\n`fetch_order(42)` after `cancel_order(42)` still returns "
            "the order: a cancelled order id should give None.")
    req = Request(state_path=str(tmp_path / "s.json"), state_shown="s.json", task=task)
    out = run_cycle(str(root), LoopState(root=str(root)), req, {}, ENV)
    ranked = [r.id for r in out.view.results]
    assert ranked[0] == "shop/api.py" and ranked.index("shop/store_v1.py") < ranked.index("shop/store.py")
    assert out.view.decision.done
    assert out.view.decision.why.endswith("call load_order in shop/store.py: if they only pass the work on, read that")


def test_a_name_the_tasks_traceback_shows_as_a_frame_hands_nothing_on(tmp_path):
    # The traceback says fromAnsi raised in its own line: the hint would send the agent
    # one call further than the error went.
    root = facade_tree(tmp_path)
    task = TASK + ('\n\nTraceback (most recent call last):\n  File "app.py", line 3, in <module>\n'
                   '  File "/opt/acme/text/styled.py", line 9, in fromAnsi\n'
                   '  File "/opt/acme/text/styled.py", line 12, in stripAnsi\nValueError: bad escape\n')
    req = Request(state_path=str(tmp_path / "s.json"), state_shown="s.json", task=task)
    out = run_cycle(str(root), LoopState(root=str(root)), req, {}, ENV)
    assert out.view.decision.done and out.view.results[0].id.endswith("/Styled.java")
    assert "StyledBuilder.java" not in out.view.decision.why


SETTER = """'use strict';
function Mocha(options) {
  this.options = options;
}

/**
 * Whether tests marked `only` fail the suite.
 */
Mocha.prototype.forbidOnly = function(forbidOnly) {
  this.options.forbidOnly = forbidOnly !== false;
  return this;
};

Mocha.prototype.grep = function(re) {
  this.options.grep = compile(re);
  return this;
};
"""


def test_a_setter_of_the_quoted_option_names_the_files_that_read_it():
    readers = [
        ("lib/cli/run.js", b"'forbid-only': { description: 'fail if exclusive test(s) encountered' }"),
        ("lib/runner.js", b"runner.prototype.run = function() { if (this.forbidonly && suite.hasonly()) { fail(); } };"),
        ("lib/setup.js", b"runner.forbidonly = options.forbidonly;"),
        ("lib/interfaces/common.js", b"if (mocha.options.forbidonly === true && shouldbetested(suite)) { throw err; }"),
        ("test/runner.spec.js", b"expect(runner.forbidonly).to.be(true);"),
    ]
    got = handoff.find_readers("lib/mocha.js", SETTER, {"forbid-only": ("forbid-only", "forbidonly")}, readers)
    # the CLI's option table names it as a string, a test reads it: neither is the work;
    # `runner.forbidonly = options.forbidonly` both stores and reads it
    assert got == handoff.Readers(("forbidOnly",), ("lib/runner.js", "lib/setup.js"))


def test_a_definition_that_does_more_than_store_names_no_reader():
    readers = [("lib/runner.js", b"if (this.grep) { x(); }")]
    # `grep` stores what a call computes: it does work of its own
    assert handoff.find_readers("lib/mocha.js", SETTER, {"grep": ("grep",)}, readers) is None
    # a definition storing another name than its own is no setter of it
    other = SETTER.replace("this.options.forbidOnly =", "this.options.exclusive =")
    assert handoff.find_readers("lib/mocha.js", other, {"forbid-only": ("forbidonly",)},
                                [("lib/runner.js", b"if (this.forbidonly) {}")]) is None
    # a file that only assigns it reads nothing
    assert handoff.find_readers("lib/mocha.js", SETTER, {"forbid-only": ("forbidonly",)},
                                [("lib/runner.js", b"runner.forbidonly = true;")]) is None
