"""Tests for agentic_search_skill.imports: each import form resolves to the right tree file.

imports_of never touches the disk, so each language's tree is a set of paths
and each case is (importing file, its bytes, the expected imports).
"""
import random

import pytest

from agentic_search_skill import imports
from agentic_search_skill.imports import ModuleIndex, build_index, importers_of, imports_of

# --- Python ---------------------------------------------------------------------------
PY_TREE = (
    "setup.py",
    "pkg/__init__.py",
    "pkg/core.py",
    "pkg/util.py",
    "pkg/sub/__init__.py",
    "pkg/sub/mod.py",
    "pkg/sub/deep/__init__.py",
    "pkg/sub/deep/leaf.py",
    "pkg/serializers/__init__.py",
    "pkg/serializers/json.py",
    "src/lib2/__init__.py",
    "src/lib2/api.py",
    "lib/tool.py",
    "nspkg/part/thing.py",
    "tests/conftest.py",
    "tests/helpers.py",
    "tests/test_core.py",
)

PY_CASES = [
    ("import a.b", "setup.py", b"import pkg.core\n", ("pkg/core.py",)),
    ("import a.b as c", "setup.py", b"import pkg.sub.mod as m\n", ("pkg/sub/mod.py",)),
    ("import a, b", "setup.py", b"import pkg.util, pkg.core\n", ("pkg/core.py", "pkg/util.py")),
    ("import package", "setup.py", b"import pkg\n", ("pkg/__init__.py",)),
    ("from a.b import name", "setup.py", b"from pkg.core import Thing\n", ("pkg/core.py",)),
    (
        "from a import submodules",
        "setup.py",
        b"from pkg.sub import mod, deep\n",
        ("pkg/sub/deep/__init__.py", "pkg/sub/mod.py"),
    ),
    (
        "from a import submodule and name",
        "setup.py",
        b"from pkg.sub import mod, CONSTANT\n",
        ("pkg/sub/__init__.py", "pkg/sub/mod.py"),
    ),
    (
        "from a import (parenthesized, multi-line)",
        "setup.py",
        b"from pkg import (\n    core,  # the core\n    util as u,\n)\n",
        ("pkg/core.py", "pkg/util.py"),
    ),
    (
        "from a import backslash continuation",
        "setup.py",
        b"from pkg import core, \\\n    util\n",
        ("pkg/core.py", "pkg/util.py"),
    ),
    ("from a import *", "setup.py", b"from pkg.sub import *\n", ("pkg/sub/__init__.py",)),
    ("from . import sibling", "pkg/sub/mod.py", b"from . import deep\n", ("pkg/sub/deep/__init__.py",)),
    ("from . import name", "pkg/sub/mod.py", b"from . import VERSION\n", ("pkg/sub/__init__.py",)),
    ("from .mod import name", "pkg/sub/__init__.py", b"from .mod import f\n", ("pkg/sub/mod.py",)),
    ("from .. import module", "pkg/sub/mod.py", b"from .. import util\n", ("pkg/util.py",)),
    ("from ..pkg import name", "pkg/sub/deep/leaf.py", b"from ...core import X\n", ("pkg/core.py",)),
    ("from ..a.b import name", "pkg/sub/deep/leaf.py", b"from ..mod import f\n", ("pkg/sub/mod.py",)),
    ("relative import above root", "pkg/util.py", b"from ... import x\n", ()),
    ("source root src/", "setup.py", b"from lib2.api import get\n", ("src/lib2/api.py",)),
    ("source root lib/", "setup.py", b"import tool\n", ("lib/tool.py",)),
    ("tests dir is a root", "tests/test_core.py", b"import helpers\n", ("tests/helpers.py",)),
    ("namespace package", "setup.py", b"from nspkg.part import thing\n", ("nspkg/part/thing.py",)),
    ("import_module literal", "setup.py", b"importlib.import_module('pkg.util')\n", ("pkg/util.py",)),
    ("indented import", "setup.py", b"def f():\n    import pkg.core\n", ("pkg/core.py",)),
    ("stdlib json is not pkg/serializers/json.py", "pkg/core.py", b"import json\nimport os.path\n", ()),
    ("third party", "setup.py", b"import numpy as np\nfrom requests import get\n", ()),
    ("prose is not an import", "setup.py", b'"""\nimport this module to get going\n"""\n', ()),
    ("self import dropped", "pkg/core.py", b"import pkg.core\nfrom pkg import core\n", ()),
    # A script's __main__ block (a demo, a test runner) is no dependency of the module;
    # what follows the block at the top level is.
    ("__main__ block skipped", "pkg/core.py",
     b"import pkg.util\nif __name__ == '__main__':\n    from pkg import sub\n    # demo\n\n    import tool\n"
     b"from lib2 import api\n", ("pkg/util.py", "src/lib2/api.py")),
    ("reversed __main__ test", "pkg/core.py", b'if "__main__" == __name__:\n    import pkg.util\n', ()),
    ("__main__ inside a function is code", "pkg/core.py",
     b"def run():\n    if __name__ == '__main__':\n        import pkg.util\n", ("pkg/util.py",)),
]


@pytest.fixture(scope="module")
def py_index() -> ModuleIndex:
    return build_index(PY_TREE)


@pytest.mark.parametrize("name,rel,source,expected", PY_CASES, ids=[c[0] for c in PY_CASES])
def test_python(py_index, name, rel, source, expected):
    assert imports_of(rel, source, py_index) == expected


def test_python_prefers_nearest_source_root():
    index = build_index(["app/src/pkg/__init__.py", "app/src/pkg/a.py", "src/pkg/__init__.py", "src/pkg/a.py"])
    assert imports_of("app/src/main.py", b"from pkg import a\n", index) == ("app/src/pkg/a.py",)
    assert imports_of("tools/x.py", b"from pkg import a\n", index) == ("src/pkg/a.py",)


def test_python_package_wins_over_module():
    index = build_index(["m.py", "m/__init__.py", "x.py"])
    assert imports_of("x.py", b"import m\n", index) == ("m/__init__.py",)


# --- JavaScript / TypeScript ---------------------------------------------------------------
JS_TREE = (
    "src/app.ts",
    "src/util.ts",
    "src/util.js",
    "src/lib/index.ts",
    "src/lib/math.tsx",
    "src/lib/esm.ts",
    "src/data.json",
    "src/styles.css",
    "src/components/Button/index.jsx",
    "web/main.js",
    "web/helper.js",
    "web/helper.ts",
    "web/old.cjs",
    "web/mod.mjs",
    "index.js",
)

JS_CASES = [
    ("import from relative", "src/app.ts", b"import { add } from './lib/math';\n", ("src/lib/math.tsx",)),
    ("import default", "src/app.ts", b"import util from \"./util\"\n", ("src/util.ts",)),
    ("js prefers .js", "web/main.js", b"import h from './helper'\n", ("web/helper.js",)),
    ("side-effect import", "src/app.ts", b"import './styles.css';\n", ("src/styles.css",)),
    ("directory index", "src/app.ts", b"import * as lib from './lib'\n", ("src/lib/index.ts",)),
    ("export from", "src/lib/index.ts", b"export { add } from './math';\nexport * from './esm';\n",
     ("src/lib/esm.ts", "src/lib/math.tsx")),
    ("require", "web/main.js", b"const old = require('./old.cjs');\n", ("web/old.cjs",)),
    ("require without extension", "web/main.js", b"const m = require( './mod' )\n", ("web/mod.mjs",)),
    ("dynamic import", "src/app.ts", b"const m = await import('./lib/math');\n", ("src/lib/math.tsx",)),
    ("parent dir", "src/lib/math.tsx", b"import u from '../util';\n", ("src/util.ts",)),
    ("to root index", "src/app.ts", b"import x from '..';\n", ("index.js",)),
    (".js specifier for a .ts source", "src/app.ts", b"import e from './lib/esm.js';\n", ("src/lib/esm.ts",)),
    ("json", "src/app.ts", b"import data from './data.json';\n", ("src/data.json",)),
    ("@/ alias", "src/app.ts", b"import B from '@/components/Button';\n", ("src/components/Button/index.jsx",)),
    ("bare specifier naming a tree path", "web/main.js", b"import u from 'src/util.js';\n", ("src/util.js",)),
    ("multi-line import", "src/app.ts", b"import {\n  a,\n  b,\n} from './util';\n", ("src/util.ts",)),
    ("bare package ignored", "src/app.ts", b"import React from 'react';\nimport fs from 'node:fs';\n", ()),
    ("package name never matches a same-named file", "web/main.js", b"const h = require('helper');\n", ()),
    ("scoped package ignored", "src/app.ts", b"import x from '@scope/util';\n", ()),
    ("missing file", "src/app.ts", b"import x from './nope';\n", ()),
    ("outside the root", "src/app.ts", b"import x from '../../x';\n", ()),
    ("self import dropped", "src/util.ts", b"import u from './util';\n", ()),
    # A file loaded by a path built from the script's own directory: a worker, a child.
    ("join(__dirname, file)", "web/main.js", b"const w = join(__dirname, 'helper.js')\n", ("web/helper.js",)),
    ("path.resolve(__dirname, parts...)", "web/main.js",
     b"const w = path.resolve( __dirname, '..', \"src\", 'util.js' )\n", ("src/util.js",)),
    ("new URL(rel, import.meta.url)", "web/mod.mjs", b"new Worker(new URL('./main.js', import.meta.url))\n",
     ("web/main.js",)),
    ("__dirname path outside the root", "web/main.js", b"join(__dirname, '..', '..', 'x.js')\n", ()),
    ("__dirname with a variable part", "web/main.js", b"join(__dirname, name, 'helper.js')\n", ()),
    ("__dirname to an absolute part", "web/main.js", b"join(__dirname, '/etc/helper.js')\n", ()),
    ("__dirname to a directory", "web/main.js", b"join(__dirname, '..', 'src')\n", ()),
    ("__dirname to a directory holding an index", "web/main.js", b"join(__dirname, '../src/lib')\n", ()),
    ("__dirname to a name without its extension", "web/main.js", b"join(__dirname, 'helper')\n", ("web/helper.js",)),
    ("__dirname + a file", "web/main.js", b"new Worker(__dirname + '/helper.js')\n", ("web/helper.js",)),
    ("a trailing comma", "web/main.js", b"join(\n  __dirname,\n  'helper.js',\n)\n", ("web/helper.js",)),
    ("a .js path of a .ts source", "src/app.ts", b"new URL('./lib/esm.js', import.meta.url)\n", ("src/lib/esm.ts",)),
]


@pytest.fixture(scope="module")
def js_index() -> ModuleIndex:
    return build_index(JS_TREE)


@pytest.mark.parametrize("name,rel,source,expected", JS_CASES, ids=[c[0] for c in JS_CASES])
def test_javascript(js_index, name, rel, source, expected):
    assert imports_of(rel, source, js_index) == expected


def test_javascript_dirname_to_a_directory_names_no_file_beside_it():
    index = build_index(("lib/cli.js", "lib/templates.js", "lib/templates/page.html", "lib/run.js"))
    source = b"app.set('views', path.join(__dirname, 'templates'))\nfork(join(__dirname, 'run'))\n"
    assert imports_of("lib/cli.js", source, index) == ("lib/run.js",)


# --- Go ---------------------------------------------------------------------------
GO_TREE = (
    "main.go",
    "root.go",
    "util/strings.go",
    "util/strings_test.go",
    "util/ints.go",
    "internal/db/db.go",
    "internal/db/README.md",
    "internal/encoding/json/json.go",
    "vendor/golang.org/x/net/http2/http2.go",
    "cmd/tool/main.go",
    "src/net/textproto/reader.go",
)

GO_CASES = [
    ("single import", "main.go", b'package main\n\nimport "github.com/acme/app/util"\n',
     ("util/ints.go", "util/strings.go")),
    ("import block with alias", "main.go",
     b'import (\n\t"fmt"\n\tdb "github.com/acme/app/internal/db"\n\t_ "github.com/acme/app/util"\n)\n',
     ("internal/db/db.go", "util/ints.go", "util/strings.go")),
    ("vendored module", "main.go", b'import "golang.org/x/net/http2"\n', ("vendor/golang.org/x/net/http2/http2.go",)),
    ("module root package, learned from a sibling import", "cmd/tool/main.go",
     b'import (\n\t"github.com/acme/app"\n\t"github.com/acme/app/util"\n)\n',
     ("main.go", "root.go", "util/ints.go", "util/strings.go")),
    ("stdlib does not land on internal/encoding/json", "main.go", b'import "encoding/json"\n', ()),
    ("stdlib single", "main.go", b'import "fmt"\n', ()),
    ("unknown module", "main.go", b'import "github.com/other/lib/pkg"\n', ()),
    ("GOPATH src/ layout", "main.go", b'import "net/textproto"\n', ("src/net/textproto/reader.go",)),
    ("own package files are not imports", "util/ints.go", b'import "github.com/acme/app/util"\n',
     ("util/strings.go",)),
]


@pytest.fixture(scope="module")
def go_index() -> ModuleIndex:
    return build_index(GO_TREE)


@pytest.mark.parametrize("name,rel,source,expected", GO_CASES, ids=[c[0] for c in GO_CASES])
def test_go(go_index, name, rel, source, expected):
    assert imports_of(rel, source, go_index) == expected


# --- Rust -------------------------------------------------------------------------
RS_TREE = (
    "Cargo.toml",
    "src/lib.rs",
    "src/main.rs",
    "src/config.rs",
    "src/net/mod.rs",
    "src/net/tcp.rs",
    "src/net/udp.rs",
    "src/parser.rs",
    "src/parser/lexer.rs",
    "src/parser/ast/mod.rs",
    "tests/integration.rs",
    "tests/common/mod.rs",
)

RS_CASES = [
    ("mod foo; -> foo.rs", "src/lib.rs", b"mod config;\npub mod parser;\n", ("src/config.rs", "src/parser.rs")),
    ("mod foo; -> foo/mod.rs", "src/lib.rs", b"pub(crate) mod net;\n", ("src/net/mod.rs",)),
    ("mod in mod.rs", "src/net/mod.rs", b"mod tcp;\nmod udp;\n", ("src/net/tcp.rs", "src/net/udp.rs")),
    ("mod in non-mod file goes to its dir", "src/parser.rs", b"mod lexer;\nmod ast;\n",
     ("src/parser/ast/mod.rs", "src/parser/lexer.rs")),
    ("mod in a test crate root", "tests/integration.rs", b"mod common;\n", ("tests/common/mod.rs",)),
    ("use crate::a::Item", "src/main.rs", b"use crate::config::Config;\n", ("src/config.rs",)),
    ("use crate::a::b::Item", "src/main.rs", b"use crate::net::tcp::Stream;\n", ("src/net/tcp.rs",)),
    ("use tree", "src/main.rs", b"use crate::{config::Config, net::{tcp, udp::Socket}};\n",
     ("src/config.rs", "src/net/tcp.rs", "src/net/udp.rs")),
    ("use with self", "src/main.rs", b"use crate::net::{self, tcp::Stream as S};\n",
     ("src/net/mod.rs", "src/net/tcp.rs")),
    ("use super", "src/net/tcp.rs", b"use super::udp::Socket;\n", ("src/net/udp.rs",)),
    ("use super::super", "src/parser/lexer.rs", b"use super::super::config;\n", ("src/config.rs",)),
    ("use self", "src/parser.rs", b"use self::lexer::Token;\n", ("src/parser/lexer.rs",)),
    ("2018 relative path", "src/lib.rs", b"pub use parser::ast::Node;\n", ("src/parser/ast/mod.rs",)),
    ("external crates ignored", "src/lib.rs", b"use std::collections::HashMap;\nuse serde::Serialize;\n", ()),
    ("inline mod block is not a file", "src/lib.rs", b"mod tests {\n}\n", ()),
]


@pytest.fixture(scope="module")
def rs_index() -> ModuleIndex:
    return build_index(RS_TREE)


@pytest.mark.parametrize("name,rel,source,expected", RS_CASES, ids=[c[0] for c in RS_CASES])
def test_rust(rs_index, name, rel, source, expected):
    assert imports_of(rel, source, rs_index) == expected


# A Cargo workspace: each crate's directory names it (``-`` read as ``_``).
WORKSPACE_TREE = (
    "Cargo.toml",
    "app-cli/Cargo.toml",
    "app-cli/src/main.rs",
    "app-cli/src/cli.rs",
    "app-config/Cargo.toml",
    "app-config/src/lib.rs",
    "app-config/src/color.rs",
    "app-config/src/ui/mod.rs",
    "core/Cargo.toml",
    "core/src/lib.rs",
    "core/src/event.rs",
    "core/src/config.rs",
    "libs/a/shared/Cargo.toml",
    "libs/a/shared/src/lib.rs",
    "libs/b/shared/Cargo.toml",
    "libs/b/shared/src/lib.rs",
    "app-config/tests/fixtures/log/Cargo.toml",
    "app-config/tests/fixtures/log/src/lib.rs",
    "nocargo/src/lib.rs",
    "tool/Cargo.toml",
    "tool/src/lib.rs",
    "tool/src/config.rs",
    "tool/src/main.rs",
    "tool/src/bin/extra.rs",
)

WORKSPACE_CASES = [
    ("another crate's module", "app-cli/src/cli.rs", b"use app_config::color::Rgb;\n", ("app-config/src/color.rs",)),
    ("another crate's nested module", "app-cli/src/cli.rs", b"use app_config::ui::Window;\n",
     ("app-config/src/ui/mod.rs",)),
    ("a name at another crate's root", "app-cli/src/cli.rs", b"use app_config::SerdeReplace;\n",
     ("app-config/src/lib.rs",)),
    ("a use tree across crates", "app-cli/src/cli.rs", b"use app_config::{color::Rgb, SerdeReplace};\n",
     ("app-config/src/color.rs", "app-config/src/lib.rs")),
    ("a local module first", "app-cli/src/main.rs", b"mod cli;\nuse cli::Options;\n", ("app-cli/src/cli.rs",)),
    ("a crate two directories name is not guessed", "app-cli/src/cli.rs", b"use shared::event::Event;\n", ()),
    ("a directory named as a builtin crate is not it", "app-cli/src/cli.rs", b"use core::fmt;\nuse core::event;\n", ()),
    ("external crates still ignored", "app-cli/src/cli.rs", b"use serde::Deserialize;\n", ()),
    ("a test's fixture crate is no member", "app-cli/src/cli.rs", b"use log::info;\n", ()),
    ("a directory without Cargo.toml is no crate", "app-cli/src/cli.rs", b"use nocargo::x;\n", ()),
    ("a binary names its own package's library", "tool/src/main.rs", b"use tool::config::Config;\n",
     ("tool/src/config.rs",)),
    ("... from src/bin too", "tool/src/bin/extra.rs", b"use tool::config::Config;\n", ("tool/src/config.rs",)),
    ("the library does not name itself", "tool/src/config.rs", b"use tool::x;\n", ()),
]


@pytest.fixture(scope="module")
def ws_index() -> ModuleIndex:
    return build_index(WORKSPACE_TREE)


@pytest.mark.parametrize("name,rel,source,expected", WORKSPACE_CASES, ids=[c[0] for c in WORKSPACE_CASES])
def test_rust_workspace(ws_index, name, rel, source, expected):
    assert imports_of(rel, source, ws_index) == expected


def test_rust_workspace_without_manifests_walked():
    # A search of ``**/*.rs`` walks no Cargo.toml: a ``NAME/src/lib.rs`` is then enough.
    index = build_index(("app/src/lib.rs", "app/src/net/mod.rs", "log/src/lib.rs", "log/src/info.rs"))
    assert imports_of("app/src/net/mod.rs", b"use log::info;\n", index) == ("log/src/info.rs",)


def test_rust_submodule_names_the_workspace_crate_before_a_root_module():
    index = build_index(("app/Cargo.toml", "app/src/lib.rs", "app/src/log.rs", "app/src/net/mod.rs",
                         "log/Cargo.toml", "log/src/lib.rs"))
    assert imports_of("app/src/net/mod.rs", b"use log::info;\n", index) == ("log/src/lib.rs",)


def test_rust_use_tree_of_repeated_items_names_what_it_imports(ws_index):
    line = b"use app_config" + b"::a" * 300 + b"::{" + b"a, " * 300 + b"color};\n"
    assert imports_of("app-cli/src/cli.rs", line * 3, ws_index) == ("app-config/src/lib.rs",)


def test_rust_super_chain_beyond_the_module_cap():
    rels = ["c/Cargo.toml", "c/src/lib.rs", "c/src/m.rs"] + ["c/src/" + "/".join("d%d" % i for i in range(k + 1)) + ".rs"
                                                             for k in range(20)]
    deep = rels[-1]
    source = b"use " + b"super::" * 20 + b"m::X;\n"
    assert imports_of(deep, source, build_index(rels)) == ("c/src/m.rs",)


def test_rust_integration_test_reaches_its_crate_by_name():
    index = build_index(WORKSPACE_TREE + ("app-config/tests/parse.rs",))
    # A crate's tests/ are crates of their own: they name it as any other crate does.
    assert imports_of("app-config/tests/parse.rs", b"use app_config::color::Rgb;\n", index) == (
        "app-config/src/color.rs",)


# --- Java / Kotlin ---------------------------------------------------------------------
JVM_TREE = (
    "core/src/main/java/com/acme/model/User.java",
    "core/src/main/java/com/acme/model/Account.java",
    "core/src/main/java/com/acme/model/package-info.txt",
    "core/src/main/java/com/acme/util/Strings.java",
    "app/src/main/kotlin/com/acme/app/Main.kt",
    "app/src/main/kotlin/com/acme/app/Routes.kt",
)

JVM_CASES = [
    ("import a.b.C;", "app/src/main/kotlin/com/acme/app/Main.kt", b"import com.acme.model.User\n",
     ("core/src/main/java/com/acme/model/User.java",)),
    ("java import", "core/src/main/java/com/acme/model/User.java", b"import com.acme.util.Strings;\n",
     ("core/src/main/java/com/acme/util/Strings.java",)),
    ("static import", "core/src/main/java/com/acme/model/User.java",
     b"import static com.acme.util.Strings.isBlank;\n", ("core/src/main/java/com/acme/util/Strings.java",)),
    ("nested class", "core/src/main/java/com/acme/model/Account.java", b"import com.acme.model.User.Role;\n",
     ("core/src/main/java/com/acme/model/User.java",)),
    ("wildcard", "app/src/main/kotlin/com/acme/app/Main.kt", b"import com.acme.model.*\n",
     ("core/src/main/java/com/acme/model/Account.java", "core/src/main/java/com/acme/model/User.java")),
    ("kotlin trailing comment", "app/src/main/kotlin/com/acme/app/Main.kt", b"import com.acme.app.Routes // routes\n",
     ("app/src/main/kotlin/com/acme/app/Routes.kt",)),
    ("kotlin alias", "app/src/main/kotlin/com/acme/app/Main.kt", b"import com.acme.app.Routes as R\n",
     ("app/src/main/kotlin/com/acme/app/Routes.kt",)),
    ("jdk ignored", "core/src/main/java/com/acme/model/User.java", b"import java.util.List;\nimport java.io.*;\n", ()),
]


@pytest.fixture(scope="module")
def jvm_index() -> ModuleIndex:
    return build_index(JVM_TREE)


@pytest.mark.parametrize("name,rel,source,expected", JVM_CASES, ids=[c[0] for c in JVM_CASES])
def test_jvm(jvm_index, name, rel, source, expected):
    assert imports_of(rel, source, jvm_index) == expected


# --- C / C++ ----------------------------------------------------------------------
C_TREE = (
    "src/main.c",
    "src/util.h",
    "src/net/socket.cpp",
    "src/net/socket.hpp",
    "src/net/config.h",
    "include/acme/api.h",
    "include/config.h",
    "lib/a/dup.h",
    "lib/b/dup.h",
)

C_CASES = [
    ('#include "x.h" beside the file', "src/main.c", b'#include "util.h"\n', ("src/util.h",)),
    ('#include "dir/x.h" relative', "src/main.c", b'#include "net/socket.hpp"\n', ("src/net/socket.hpp",)),
    ('#include "../x.h"', "src/net/socket.cpp", b'#include "../util.h"\n', ("src/util.h",)),
    ('#include "x.h" by path suffix', "src/main.c", b'#include "acme/api.h"\n', ("include/acme/api.h",)),
    ("local header wins over a same-named one", "src/net/socket.cpp", b'#include "config.h"\n', ("src/net/config.h",)),
    ("<...> matching a tree path", "src/main.c", b"#include <acme/api.h>\n", ("include/acme/api.h",)),
    ("<...> system header", "src/main.c", b"#include <stdio.h>\n#include <vector>\n", ()),
    ("spacing and #import", "src/main.c", b'  #  include "util.h"\n#import "acme/api.h"\n',
     ("include/acme/api.h", "src/util.h")),
    ("ambiguous suffix yields nothing", "src/main.c", b'#include "dup.h"\n', ()),
    ("nearest of several", "lib/a/x.c", b'#include <dup.h>\n', ("lib/a/dup.h",)),
]


@pytest.fixture(scope="module")
def c_index() -> ModuleIndex:
    return build_index(C_TREE)


@pytest.mark.parametrize("name,rel,source,expected", C_CASES, ids=[c[0] for c in C_CASES])
def test_c(c_index, name, rel, source, expected):
    assert imports_of(rel, source, c_index) == expected


# --- Scala, Groovy, Ruby, PHP, Lua, Dart ------------------------------------------------
OTHER_TREE = (
    "lib/app/user.rb",
    "lib/app/session.rb",
    "lib/json.rb",
    "src/Http/Controllers/UserController.php",
    "src/Models/User.php",
    "lib/util/helpers.php",
    "lua/mod/init.lua",
    "lua/mod/util.lua",
    "lib/src/api.dart",
    "lib/models/user.dart",
    "src/main/scala/a/b/Foo.scala",
    "src/main/groovy/x/Bar.groovy",
    "a/dup.rb",
    "b/dup.rb",
)

OTHER_CASES = [
    ("ruby require_relative", "lib/app/session.rb", b"require_relative 'user'\n", ("lib/app/user.rb",)),
    ("ruby require by suffix", "lib/app/session.rb", b"require 'app/user'\nrequire \"set\"\n", ("lib/app/user.rb",)),
    ("ruby require of an ambiguous name", "lib/json.rb", b"require 'dup'\n", ()),
    ("php use by namespace suffix", "src/Http/Controllers/UserController.php",
     b"<?php\nuse App\\Models\\User;\nuse Illuminate\\Support\\Str;\n", ("src/Models/User.php",)),
    ("php require from __DIR__", "src/Http/Controllers/UserController.php",
     b"<?php\nrequire_once __DIR__ . '/../../../lib/util/helpers.php';\n", ("lib/util/helpers.php",)),
    ("lua require of a module and a package", "lib/src/x.lua", b"local m = require('mod')\nlocal u = require \"mod.util\"\n",
     ("lua/mod/init.lua", "lua/mod/util.lua")),
    ("dart package and relative imports", "lib/src/api.dart",
     b"import 'dart:io';\nimport 'package:app/models/user.dart';\nexport '../models/user.dart';\n", ("lib/models/user.dart",)),
    ("scala import", "src/main/scala/Main.scala", b"import a.b.Foo\n", ("src/main/scala/a/b/Foo.scala",)),
    ("groovy import of a scala class", "src/main/groovy/x/Bar.groovy", b"import a.b.Foo\n", ("src/main/scala/a/b/Foo.scala",)),
]


@pytest.mark.parametrize("name,rel,source,expected", OTHER_CASES, ids=[c[0] for c in OTHER_CASES])
def test_other_languages(name, rel, source, expected):
    assert imports_of(rel, source, build_index(OTHER_TREE)) == expected


# --- Cross-cutting ------------------------------------------------------------------
def test_unknown_language_yields_nothing(py_index):
    assert imports_of("README.md", b"import pkg.core\n", py_index) == ()
    assert imports_of("Makefile", b"import pkg.core\n", py_index) == ()


def test_binary_and_non_utf8_bytes_do_not_raise(py_index):
    assert imports_of("setup.py", b"\xff\xfe\x00import pkg.core\n\x80\x81", py_index) == ()
    assert imports_of("setup.py", b"\xff\nimport pkg.core\n", py_index) == ("pkg/core.py",)


def test_results_are_sorted_unique_and_independent_of_index_order():
    source = b"import pkg.util\nfrom pkg import core, util\nimport pkg.core\nfrom pkg.sub import mod\n"
    shuffled = list(PY_TREE)
    random.Random(7).shuffle(shuffled)
    first = imports_of("setup.py", source, build_index(PY_TREE))
    assert first == ("pkg/core.py", "pkg/sub/mod.py", "pkg/util.py")
    assert imports_of("setup.py", source, build_index(shuffled)) == first
    assert imports_of("setup.py", source, build_index(PY_TREE + PY_TREE)) == first


def test_index_is_immutable(py_index):
    with pytest.raises(AttributeError):
        py_index.files = frozenset()  # type: ignore[misc]
    with pytest.raises(TypeError):
        py_index.py_modules["x"] = "x.py"  # type: ignore[index]


def test_tree_imports_answers_as_imports_of_and_parses_each_file_once(monkeypatch):
    """A cycle's shared graph (related files and feedback's lifts read it) gives what
    imports_of over build_index gives, builds its index once and parses a file once."""
    index = build_index(PY_TREE)
    for _name, rel, source, expected in PY_CASES:  # a cycle hands one file's bytes each time
        assert imports.TreeImports(PY_TREE).of(rel, source) == imports_of(rel, source, index) == expected
    calls = []
    real = imports.imports_of
    monkeypatch.setattr(imports, "imports_of", lambda *a: calls.append(a[0]) or real(*a))
    fresh = imports.TreeImports(PY_TREE)
    first = fresh.of("setup.py", b"import pkg.core\n")
    assert fresh.of("setup.py", b"import pkg.core\n") == first == ("pkg/core.py",)
    assert calls == ["setup.py"] and fresh.index is fresh.index


def test_importers_of_reverses_edges():
    graph = {
        "b.py": ("a.py",),
        "c.py": ("a.py", "b.py"),
        "a.py": ("a.py",),
    }
    assert importers_of(["a.py", "b.py", "z.py"], graph) == {
        "a.py": ("b.py", "c.py"),
        "b.py": ("c.py",),
        "z.py": (),
    }


def test_patterns_work_on_bytes():
    """The file is matched as bytes; only matched parts are decoded."""
    assert isinstance(imports._PY_FROM_HEAD.pattern, bytes)
    assert isinstance(imports._JS_SPEC.pattern, bytes)


def test_line_matches_equal_finditer():
    """The import patterns are tried only where their word follows a line's blanks: the
    same matches as scanning every position (first line, tabs, CR, a word twice on a
    line, inside another word, after code)."""
    data = (b"import a.b;\n\t import  static c.D.e;import x;\r\n  import\tq\nx = 1; import y\n"
            b"importx z\n  # include \"a.h\"\n#include <b/c.h>\nint i; #include \"no.h\"\n"
            b"import \"fmt\"\n  import   alias \"x/y\"\n\rimport r\nimport")
    for pattern, word in ((imports._PY_IMPORT, b"import"), (imports._JVM_IMPORT, b"import"),
                          (imports._GO_SINGLE, b"import"), (imports._C_INCLUDE, b"#")):
        want = [m.span() for m in pattern.finditer(data)]
        assert want and [m.span() for m in imports._line_matches(pattern, data, word)] == want


def test_rust_use_path_of_hundreds_of_parts_names_the_crate_root(ws_index):
    # Only the first MAX_USE_PATH_PARTS modules are looked at (a crafted megabyte of such
    # paths took seconds): no module ``a`` exists, so the crate's root is what it names.
    line = b"use app_config" + b"::a" * 660 + b";\n"
    assert imports_of("app-cli/src/cli.rs", line * 3, ws_index) == ("app-config/src/lib.rs",)
