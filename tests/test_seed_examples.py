"""The seed's two worked examples, run as real code through the CLI.

Example 1 (seed 000, "fix the auth token expiry bug"): auth and tokens files match
first, the user model is a weak match that drops, and the loop reaches the session
manager and the JWT utilities through the codebase's own terms ("refresh", "jwt").

Example 2 ("add rate limiting to API endpoints") in a codebase that only ever says
"throttle": cycle 1 finds nothing and says broaden with "throttle" among its
candidates; the loop ends holding the throttle middleware, the middleware index and
the router set-up.

Both tasks written in Japanese and in Chinese end with the files the English task ends
with: the glossary (data/glossary.json) gives the English words code uses.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(os.path.dirname(HERE), "scripts", "retrieve_loop.py")


def _tree(tmp_path, name):
    root = tmp_path / name
    shutil.copytree(os.path.join(HERE, "fixtures", name), root)
    return root


def _cycle(root, state, *extra):
    proc = subprocess.run(
        [sys.executable, SCRIPT, "--root", str(root), "--state", str(state), *extra],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _run_loop(root, state, task):
    outs = [_cycle(root, state, "--task", task)]
    while not outs[-1]["done"]:
        outs.append(_cycle(root, state))
        assert len(outs) <= 3
    return outs


@pytest.fixture(scope="module")
def auth_loop(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("auth")
    root = _tree(tmp, "seed_auth")
    return _run_loop(root, tmp / "state.json", "fix the auth token expiry bug")


@pytest.fixture(scope="module")
def throttle_loop(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("throttle")
    root = _tree(tmp, "seed_throttle")
    return _run_loop(root, tmp / "state.json", "add rate limiting to API endpoints")


def _scores(out):
    """Every file the loop has scored (the default output describes only the best few)."""
    return {r["id"]: r["score"] for r in out["ranking"]}


def test_auth_cycle1_searches_the_task_words(auth_loop):
    assert auth_loop[0]["query"]["keywords"] == ["auth", "token", "expiry"]


def test_auth_cycle1_auth_and_tokens_match_first_and_high(auth_loop):
    first = auth_loop[0]
    assert [r["id"] for r in first["results"][:2]] == ["src/auth.ts", "src/tokens.ts"]
    scores = _scores(first)
    assert scores["src/auth.ts"] >= 0.8
    assert scores["src/tokens.ts"] >= 0.7


def test_auth_cycle1_user_model_is_a_weak_match(auth_loop):
    assert _scores(auth_loop[0])["src/user.ts"] < 0.4


def test_auth_cycle1_learns_refresh_and_jwt_from_the_codebase(auth_loop):
    adds = auth_loop[0]["next_query"]["adds"]
    assert "refresh (learned)" in adds and "jwt (learned)" in adds


def test_auth_cycle1_decides_to_refine_with_the_codebase_terms(auth_loop):
    first = auth_loop[0]
    assert first["next_action"] == "refine" and not first["done"]
    # (the sentence says what a plain call does; the terms are next_query's, above)
    assert "learned terms" in first["why"]


def test_auth_loop_reaches_session_manager_and_jwt_utils(auth_loop):
    last = auth_loop[-1]
    top4 = [r["id"] for r in last["ranking"][:4]]
    assert sorted(top4) == ["src/auth.ts", "src/jwt-utils.ts", "src/session-manager.ts", "src/tokens.ts"]
    assert len(auth_loop) >= 2 and last["done"]


def test_auth_loop_drops_the_user_model(auth_loop):
    last = auth_loop[-1]
    ranking = {r["id"]: r["score"] for r in last["ranking"]}
    assert ranking["src/user.ts"] < 0.2
    assert "src/user.ts" not in [c["id"] for c in last["context"]]


def test_auth_context_holds_auth_tokens_and_the_session_manager(auth_loop):
    # the seed's cycle 2: session-manager.ts (0.95) joins auth.ts (0.9) and tokens.ts (0.8);
    # the seed puts the session manager above auth.ts, and auth.ts above tokens.ts
    ctx = [c["id"] for c in auth_loop[-1]["context"]]
    assert {"src/auth.ts", "src/tokens.ts", "src/session-manager.ts"} <= set(ctx)
    assert ctx.index("src/auth.ts") < ctx.index("src/tokens.ts") and ctx.index("src/auth.ts") <= 1


def test_throttle_cycle1_finds_nothing_and_says_broaden(throttle_loop):
    first = throttle_loop[0]
    assert first["results"] == []
    assert first["next_action"] == "broaden" and not first["done"]
    assert "throttle" in first["why"]


def test_throttle_cycle1_proposes_the_codebase_term(throttle_loop):
    nxt = throttle_loop[0]["next_query"]
    assert any(a.startswith("throttle (synonym of") for a in nxt["adds"])
    assert not any("rate" in f for f in nxt["focus"])  # a gap is listed once, in gaps
    assert "rate limiting" in " ".join(throttle_loop[0]["gaps"]) or "rate" in throttle_loop[0]["gaps"]


def test_throttle_cycle2_finds_the_throttle_middleware(throttle_loop):
    second = throttle_loop[1]
    ids = [r["id"] for r in second["results"]]
    assert "src/middleware/throttle.ts" in ids[:2]
    assert _scores(second)["src/middleware/throttle.ts"] >= 0.7


def test_throttle_loop_ends_holding_middleware_index_and_router(throttle_loop):
    last = throttle_loop[-1]
    top3 = sorted(r["id"] for r in last["ranking"][:3])
    assert top3 == ["src/middleware/index.ts", "src/middleware/throttle.ts", "src/router-setup.ts"]
    ctx = [c["id"] for c in last["context"]]
    assert "src/middleware/throttle.ts" in ctx[:2]
    assert "src/router-setup.ts" in ctx
    assert last["done"]


# --------------------------------------------------------------------------- #
# The same two tasks written in Japanese and in Chinese
# --------------------------------------------------------------------------- #

AUTH_TASKS = {"ja": "認証トークンの期限切れバグを修正する", "zh": "修复身份验证令牌过期错误"}
THROTTLE_TASKS = {"ja": "APIエンドポイントにレート制限を追加する", "zh": "为API端点添加速率限制"}


@pytest.fixture(scope="module", params=sorted(AUTH_TASKS))
def auth_loop_cjk(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("auth_" + request.param)
    root = _tree(tmp, "seed_auth")
    return _run_loop(root, tmp / "state.json", AUTH_TASKS[request.param])


@pytest.fixture(scope="module", params=sorted(THROTTLE_TASKS))
def throttle_loop_cjk(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("throttle_" + request.param)
    root = _tree(tmp, "seed_throttle")
    return _run_loop(root, tmp / "state.json", THROTTLE_TASKS[request.param])


def test_cjk_auth_task_searches_its_terms_and_their_english_words(auth_loop_cjk):
    keywords = auth_loop_cjk[0]["query"]["keywords"]
    assert {"auth", "token", "expiry"} <= set(keywords)
    assert any(not k.isascii() for k in keywords)  # the CJK terms themselves are searched too


def test_cjk_auth_cycle1_finds_what_the_english_task_finds(auth_loop_cjk, auth_loop):
    first, english = auth_loop_cjk[0], auth_loop[0]
    assert [r["id"] for r in first["results"][:2]] == [r["id"] for r in english["results"][:2]]
    assert _scores(first)["src/user.ts"] < 0.4


def test_cjk_auth_loop_ends_with_the_english_task_files(auth_loop_cjk, auth_loop):
    last, english = auth_loop_cjk[-1], auth_loop[-1]
    assert sorted(r["id"] for r in last["ranking"][:4]) == sorted(r["id"] for r in english["ranking"][:4])
    assert sorted(c["id"] for c in last["context"]) == sorted(c["id"] for c in english["context"])
    assert last["done"]


def test_cjk_throttle_task_finds_the_throttle_middleware_through_the_glossary(throttle_loop_cjk, throttle_loop):
    first = throttle_loop_cjk[0]
    assert "throttle" in first["query"]["keywords"]
    assert [r["id"] for r in first["results"]][0] == "src/middleware/throttle.ts"
    last, english = throttle_loop_cjk[-1], throttle_loop[-1]
    assert sorted(r["id"] for r in last["ranking"][:3]) == sorted(r["id"] for r in english["ranking"][:3])
    assert "src/router-setup.ts" in [c["id"] for c in last["context"]]
