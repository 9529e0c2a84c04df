"""Isolation, third round, point 1: the check grades the tool's change, on a tree the tool never
touched. A project shaped like a real Python one: its `.gitignore` ignores `.venv/` and
`__pycache__/`, setup makes a venv and a runner script (`tools/check.sh`, not ignored), and the
check runs the visible test through them. Tools that write one `.pth` line into setup's venv,
replace the runner setup made, plant bytecode of a fixed source, or un-ignore the venv in
`.gitignore` before writing into it all passed a check on their own clone; on the graded change
each fails, with `setup: each` and `once`, on overlays and on copies, while the honest arm
passes and the idle arm fails. `check.tree: clone` keeps the old behaviour, and says so."""

from __future__ import annotations

from typing import Any

import pytest

from e2e.conftest import FIX_ADD, World, git, make_world, visible_task

pytestmark = pytest.mark.e2e

EXIT_0 = "import os; os._exit(0)"
AGENT = """set -eu
cat > /dev/null
pth() { for d in .venv/lib/python3*/site-packages; do echo '""" + EXIT_0 + """' > "$d/e2e_exit.pth"; done; }
case "$ARMBENCH_MODEL" in
  honest) """ + FIX_ADD + """ ;;
  idle) : ;;
  venv-pth) pth ;;
  runner) printf 'exit 0\\n' > tools/check.sh ;;
  unignore) printf '!.venv/\\n' > .gitignore; pth ;;
  pycache) python3 - <<'PY'
import importlib.util, pathlib, py_compile
fixed = pathlib.Path("fixed_src.py")
fixed.write_text("def add(a, b):\\n    return a + b\\n\\n\\ndef mul(a, b):\\n    return a * b\\n")
py_compile.compile(str(fixed), cfile=importlib.util.cache_from_source("calc.py"),
                   invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
fixed.unlink()
PY
  ;;
esac
"""
ATTACKS = ["venv-pth", "runner", "unignore", "pycache"]
SETUP = ("python3 -m venv --without-pip .venv && mkdir -p tools && "
         "printf '.venv/bin/python -m unittest -q tests.test_add\\n' > tools/check.sh")


def _world(root: Any, *, trial: dict[str, Any], check_tree: str | None = None,
           arms: list[str] | None = None) -> World:
    world = make_world(root)
    project = world.project.root
    git(project, "checkout", "-q", "-b", "ignores", world.project.commits["test"])
    (project / ".gitignore").write_text(".venv/\n__pycache__/\n")
    git(project, "add", ".gitignore")
    git(project, "commit", "-qm", "ignore the venv and bytecode, as a real project does")
    start = git(project, "rev-parse", "HEAD")
    git(project, "checkout", "-q", "main")
    world.team.tool("agent", AGENT)
    world.team.suite("py", setup=SETUP, trial={"timeout": "1m", **trial},
                     defaults={"tool": "agent"},
                     arms=[{"name": a, "model": a} for a in arms or ["honest", "idle", *ATTACKS]])
    task = visible_task(world.project, run="bash tools/check.sh")
    task["startingCommit"] = start
    if check_tree is not None:
        task["check"]["tree"] = check_tree
    world.team.task("py", "add", **task)
    world.init_and_pull()
    return world


@pytest.fixture(scope="module", params=[("each", "1"), ("each", "0"), ("once", "1"), ("once", "0")],
                ids=["each-overlay", "each-copy", "once-overlay", "once-copy"])
def ran(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
        ) -> tuple[World, dict[str, Any]]:
    setup, overlays = request.param
    world = _world(tmp_path_factory.mktemp(f"graded-{setup}-{overlays}"), trial={"setup": setup})
    result = world.armbench("run", "py", "--sandbox", env={"ARMBENCH_OVERLAYS": overlays})
    assert result.code == 0, result
    return world, world.record(result.data["done"]["run"])


def test_the_honest_arm_passes_the_idle_arm_and_every_attack_fail(ran: tuple[World, dict[str, Any]]) -> None:
    _, record = ran
    assert {t["arm"]: t["result"] for t in record["trials"]} == {
        "honest": "passed", "idle": "failed", **{a: "failed" for a in ATTACKS}}
    assert {t["graded"] for t in record["trials"]} == {"change"}


def test_what_the_starting_tree_ignores_is_named_and_never_graded(
        ran: tuple[World, dict[str, Any]]) -> None:
    world, _ = ran
    checks = {e["step"].split(".")[-2]: e for e in world.events("CheckRan") if e["kind"] == "trial"}
    assert {c["graded"] for c in checks.values()} == {"change"}
    unignored = checks["unignore"]["ungraded"]
    assert any(p.startswith(".venv/") and p.endswith("/e2e_exit.pth") for p in unignored), unignored
    assert checks["honest"]["ungraded"] == []
    assert not any(".venv/" in p for c in checks.values() for p in c["restored"])


def test_the_kept_diff_is_the_change_that_was_graded(ran: tuple[World, dict[str, Any]]) -> None:
    world, record = ran
    run = record["run"]
    honest = world.armbench("show", run, "r0.add.honest", "--diff")
    assert "return a + b" in honest.stdout, honest
    for attack in ("venv-pth", "unignore", "runner", "pycache"):
        shown = world.armbench("show", run, f"r0.add.{attack}", "--diff")
        assert "e2e_exit.pth" not in shown.stdout and "check.sh" not in shown.stdout, shown
        assert ".pyc" not in shown.stdout, shown


def test_check_tree_clone_grades_the_tools_own_clone_and_says_so(tmp_path: Any) -> None:
    world = _world(tmp_path / "w", trial={}, check_tree="clone", arms=["honest", "venv-pth"])
    result = world.armbench("run", "py", "--sandbox")
    assert result.code == 0, result
    record = world.record(result.data["done"]["run"])
    assert {t["arm"]: (t["result"], t["graded"]) for t in record["trials"]} == {
        "honest": ("passed", "clone"), "venv-pth": ("passed", "clone")}  # the old hole, opted into
    assert "ran on the tool's own clone (check.tree: clone)" in result.stderr, result.stderr


NODE_AGENT = """set -eu
cat > /dev/null
case "$ARMBENCH_MODEL" in
  honest) sed -i 's/a - b/a + b/' src/sum.js ;;
  idle) : ;;
  runner) printf 'process.exit(0)\\n' > node_modules/vitest/vitest.mjs ;;
esac
"""


def test_a_node_project_passes_its_honest_arm_and_an_edit_of_node_modules_fails(tmp_path: Any) -> None:
    """A project shaped like a Node one: setup installs `node_modules/` (ignored), the check is
    `npx vitest run`. A tool that makes setup's vitest exit 0 fails; the honest arm passes."""
    import json

    from e2e.history_repos import NODE_MODULES, Repo

    assert (NODE_MODULES / ".bin" / "vitest").exists(), (
        "vitest is not installed: run scripts/install-node-test.sh (scripts/test.sh does)")
    world = make_world(tmp_path / "w")
    repo = Repo.make(tmp_path / "sum", world.env)
    manifest = {"name": "sum", "private": True, "type": "module",
                "devDependencies": {"vitest": "2.1.9"}, "scripts": {"test": "vitest run"}}
    start = repo.commit("start", {
        "package.json": json.dumps(manifest) + "\n", ".gitignore": "node_modules\n",
        "src/sum.js": "export function sum(a, b) { return a - b; }\n",
        "test/sum.test.js": ("import { expect, test } from 'vitest';\nimport { sum } from '../src/sum.js';\n"
                             "test('sum adds', () => { expect(sum(2, 3)).toBe(5); });\n")})
    world.team.tool("agent", NODE_AGENT)
    world.team.suite("sum", setup='cp -r "$E2E_NODE_MODULES" node_modules',
                     defaults={"tool": "agent"},
                     arms=[{"name": a, "model": a} for a in ("honest", "idle", "runner")])
    world.team.task("sum", "add", startingCommit=start,
                    check={"run": "npx vitest run test/sum.test.js",
                           "protect": ["test/**", "package.json"]})
    world.team.publish()
    for step in (("init", "--team", str(world.team.bare)), ("pull",)):
        assert repo.armbench(*step).code == 0
    env = {"E2E_NODE_MODULES": str(NODE_MODULES), "ARMBENCH_SANDBOX_READ": str(NODE_MODULES)}
    done = repo.armbench("run", "sum", "--sandbox", env=env)
    assert done.code == 0, done
    run = done.data["done"]["run"]
    record = json.loads((repo.root / ".armbench" / "runs" / run / "benchmark.json").read_text())
    assert {t["arm"]: (t["result"], t["graded"]) for t in record["trials"]} == {
        "honest": ("passed", "change"), "idle": ("failed", "change"), "runner": ("failed", "change")}
