"""`armbench task new --from-commit`, through the installed command, on real repositories: a
Python project tested with unittest and one with pytest, a Node project with vitest from the
npm registry, a Go module (Debian's Go, scripts/install-go.sh), a pulled suite's setup, and the
drafts it must refuse or not write."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from e2e.conftest import World, git
from e2e.history_repos import NODE_MODULES, Repo, history_env, pytest_folder

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

OPS_BUGGY = "def add(a, b):\n    return a - b\n"
OPS_FIXED = "def add(a, b):\n    total = a + b\n    return total\n"
UNITTEST_ADD = ("import unittest\n\nfrom calc.ops import add\n\n\nclass AddTest(unittest.TestCase):\n"
                "    def test_add_adds(self):\n        self.assertEqual(add(2, 3), 5)\n")
PYTEST_ADD = ("import pytest\n\nfrom calc.ops import add\n\n\n@pytest.mark.parametrize('a,b,c', "
              "[(2, 3, 5), (0, 1, 1)])\ndef test_add_adds(a, b, c):\n    assert add(a, b) == c\n")
MESSAGE_BODY = """Users reported that 2 + 3 gave -1 (#7).

The fix:

    total = a + b

```python
return total
```
and the line total = a + b says it all.

Signed-off-by: t <t@example.com>
"""


def python_repo(root: Path, test_file: str) -> tuple[Repo, str, str]:
    """A calc package with a subtracting add(), then the fix with its test: (repo, start, fix)."""
    repo = Repo.make(root / "calc", history_env(root))
    start = repo.commit("calc: start", {"calc/__init__.py": "", "calc/ops.py": OPS_BUGGY,
                                        "tests/__init__.py": "",
                                        "tests/test_old.py": "def test_old():\n    pass\n"})
    fix = repo.commit(f"fix(ops): add() subtracted instead of adding\n\n{MESSAGE_BODY}",
                      {"calc/ops.py": OPS_FIXED, "tests/test_add.py": test_file})
    return repo, start, fix


def added_lines(repo: Repo, fix: str) -> list[str]:
    diff = git(repo.root, "diff", "-U0", f"{fix}^", fix)
    return [line[1:].strip() for line in diff.splitlines()
            if line.startswith("+") and not line.startswith("+++") and len(line[1:].strip()) >= 6]


def test_a_unittest_fix_becomes_a_valid_task_written_only_then(tmp_path: Path) -> None:
    repo, start, fix = python_repo(tmp_path, UNITTEST_ADD)
    before = repo.status()
    done = repo.armbench("task", "new", "--from-commit", fix[:10], "--out", "../drafts/add.yaml")
    assert done.code == 0, done
    task = yaml.safe_load((tmp_path / "drafts" / "add.yaml").read_text())
    assert task["startingCommit"] == start and task["source"] == {"fix": fix}
    assert task["check"] == {"run": "python3 -m unittest -q tests.test_add",
                             "protect": ["tests/**", "unittest.py", "unittest/**"],
                             "add": ["tests/test_add.py"]}
    assert task["title"] == "add() subtracted instead of adding"
    assert "Users reported that 2 + 3 gave -1 (#7)." in task["prompt"]
    assert "Signed-off-by" not in task["prompt"]
    for line in added_lines(repo, fix):
        assert line not in task["prompt"], line
    assert done.data["task"]["row"] == "startup" and done.data["task"]["file"].endswith("add.yaml")
    assert f"the check fails at {start[:7]} and passes at the fix {fix[:7]}" in done.stderr
    assert repo.status() == before  # nothing written in the checkout
    (tmp_path / "drafts" / "add.yaml").write_text("# someone's own task\n")
    again = repo.armbench("task", "new", "--from-commit", fix, "--out", "../drafts/add.yaml")
    assert again.code == 2 and again.error["code"] == "out_exists", again
    assert (tmp_path / "drafts" / "add.yaml").read_text() == "# someone's own task\n"


def test_pytest_runs_the_fix_tests_when_the_sandbox_can_import_it(tmp_path: Path) -> None:
    repo, start, fix = python_repo(tmp_path, PYTEST_ADD)
    pylib = pytest_folder(tmp_path)
    done = repo.armbench("task", "new", "--from-commit", fix, "--out", "../t.yaml",
                         env={"PYTHONPATH": str(pylib), "ARMBENCH_SANDBOX_READ": str(pylib)})
    assert done.code == 0, done
    task = yaml.safe_load((tmp_path / "t.yaml").read_text())
    assert task["check"]["run"] == "python3 -m pytest -q -p no:cacheprovider tests/test_add.py"
    assert task["startingCommit"] == start


def test_a_pytest_test_is_refused_when_the_sandbox_cannot_import_pytest(tmp_path: Path) -> None:
    repo, _, fix = python_repo(tmp_path, PYTEST_ADD)
    done = repo.armbench("task", "new", "--from-commit", fix, "--out", "../t.yaml")
    assert done.code == 2, done
    assert done.error["code"] == "not_draftable"
    assert "tests/test_add.py import pytest, and python3 in armbench's sandbox cannot import pytest" \
        in done.error["message"]
    assert "Write the task by hand: check.run" in done.error["message"]
    assert not (tmp_path / "t.yaml").exists()


def test_a_draft_whose_test_passes_before_the_fix_is_printed_not_written(tmp_path: Path) -> None:
    repo = Repo.make(tmp_path / "calc", history_env(tmp_path))
    start = repo.commit("start", {"calc/__init__.py": "", "calc/ops.py": OPS_BUGGY.replace("-", "+"),
                                  "tests/__init__.py": ""})
    fix = repo.commit("refactor: name the sum", {"calc/ops.py": OPS_FIXED,
                                                 "tests/test_add.py": UNITTEST_ADD})
    done = repo.armbench("task", "new", "--from-commit", fix, "--out", "../t.yaml")
    assert done.code == 1, done
    assert done.error["code"] == "task_draft_invalid"
    assert f"the check passes without changes at {start[:7]}" in done.error["message"]
    assert "The draft, not written:" in done.stderr and f"startingCommit: {start}" in done.stderr
    assert not (tmp_path / "t.yaml").exists()


def test_a_project_whose_tests_armbench_cannot_run_is_refused_naming_what_to_write(tmp_path: Path) -> None:
    repo = Repo.make(tmp_path / "sh", history_env(tmp_path))
    repo.commit("start", {"lib.sh": "answer() { echo 41; }\n"})
    fix = repo.commit("fix: the answer", {"lib.sh": "answer() { echo 42; }\n",
                                          "test/answer.sh": '. ./lib.sh && [ "$(answer)" = 42 ]\n'})
    done = repo.armbench("task", "new", "--from-commit", fix)
    assert done.code == 2, done
    message = done.error["message"]
    assert "armbench cannot tell how this project runs test/answer.sh" in message
    assert "Write the task by hand: check.run (the command that runs the fix's tests)" in message


def test_a_commit_without_tests_is_refused(tmp_path: Path) -> None:
    repo = Repo.make(tmp_path / "calc", history_env(tmp_path))
    repo.commit("start", {"calc/ops.py": OPS_BUGGY})
    fix = repo.commit("fix without a test", {"calc/ops.py": OPS_FIXED})
    done = repo.armbench("task", "new", "--from-commit", fix)
    assert done.code == 2, done
    assert "adds or changes no test file" in done.error["message"]


def test_a_pulled_suite_lends_its_setup_and_repo(world: World) -> None:
    world.team.suite("calc", setup='echo setup >> "$E2E_OUT/setups"')
    world.init_and_pull()
    fix, test = world.project.commits["fix"], world.project.commits["test"]
    done = world.armbench("task", "new", "--from-commit", fix, "--suite", "calc",
                          "--out", str(world.root / "add.yaml"))
    assert done.code == 0, done
    task = yaml.safe_load((world.root / "add.yaml").read_text())
    assert task["startingCommit"] == test
    assert task["check"]["add"] == ["tests/test_add.py"]
    assert world.out_lines("setups") == ["setup", "setup"]  # one fresh clone at each commit
    missing = world.armbench("task", "new", "--from-commit", fix, "--suite", "nope")
    assert missing.code == 2 and missing.error["code"] == "suite_not_found", missing


def test_a_node_project_runs_vitest_from_package_json(world: World) -> None:
    assert (NODE_MODULES / ".bin" / "vitest").exists(), (
        "vitest is not installed: run scripts/install-node-test.sh (scripts/test.sh does)")
    repo = Repo.make(world.root / "sum", world.env)
    manifest = {"name": "sum", "private": True, "type": "module",
                "devDependencies": {"vitest": "2.1.9"}, "scripts": {"test": "vitest run"}}
    start = repo.commit("start", {"package.json": json.dumps(manifest) + "\n",
                                  ".gitignore": "node_modules\n",
                                  "src/sum.js": "export function sum(a, b) { return a - b; }\n"})
    fix = repo.commit("fix: sum() subtracted (fixes #3)", {
        "src/sum.js": "export function sum(a, b) { return a + b; }\n",
        "test/sum.test.js": ("import { expect, test } from 'vitest';\nimport { sum } from '../src/sum.js';\n"
                             "test('sum adds', () => { expect(sum(2, 3)).toBe(5); });\n")})
    world.team.suite("sum", setup='cp -r "$E2E_NODE_MODULES" node_modules')
    world.team.publish()
    for step in (("init", "--team", str(world.team.bare)), ("pull",)):
        assert repo.armbench(*step).code == 0
    env = {"E2E_NODE_MODULES": str(NODE_MODULES), "ARMBENCH_SANDBOX_READ": str(NODE_MODULES)}
    done = repo.armbench("task", "new", "--from-commit", fix, "--suite", "sum",
                         "--out", str(world.root / "sum.yaml"), env=env)
    assert done.code == 0, done
    task = yaml.safe_load((world.root / "sum.yaml").read_text())
    assert task["check"] == {"run": "npx vitest run test/sum.test.js",
                             "protect": ["test/**", "package.json", "vitest.config.*", "vite.config.*",
                                         "vitest.workspace.*"], "add": ["test/sum.test.js"]}
    assert task["startingCommit"] == start and task["title"] == "sum() subtracted"


def test_a_go_module_runs_the_fix_tests_with_go_test(tmp_path: Path) -> None:
    assert shutil.which("go"), "Go is not installed: run scripts/install-go.sh (scripts/test.sh does)"
    repo = Repo.make(tmp_path / "calc", history_env(tmp_path))
    wrong = "package calc\n\nfunc Add(a, b int) int { return a - b }\n"
    start = repo.commit("start", {"go.mod": "module example.com/calc\n\ngo 1.19\n", "calc/calc.go": wrong})
    fix = repo.commit("calc: Add adds", {
        "calc/calc.go": "package calc\n\nfunc Add(a, b int) int { return a + b }\n",
        "calc/calc_test.go": ("package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n"
                              "\tif Add(2, 3) != 5 {\n\t\tt.Fatal(Add(2, 3))\n\t}\n}\n")})
    done = repo.armbench("task", "new", "--from-commit", fix, "--out", "../go.yaml")
    assert done.code == 0, done
    task = yaml.safe_load((tmp_path / "go.yaml").read_text())
    assert task["check"] == {"run": "go test ./calc -run '^(TestAdd)$'",
                             "protect": ["calc/*_test.go", "go.mod", "go.work"], "add": ["calc/calc_test.go"]}
    assert task["startingCommit"] == start
