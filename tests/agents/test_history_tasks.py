"""Tasks from the history with the real agent CLIs against the mock model.

`armbench task new --from-session` on real session files: Claude Code and Codex, the pinned CLIs,
run in a real checkout where the scripted agent fixes a bug, adds a test and commits; then the
installed `armbench` turns each session into a task, tried and valid. And `--prompt-tool claude`:
the real Claude Code writes a commit's prompt from what armbench hands it, never the fix."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from agents.clis import PREFIX_BIN, Clis, agent_env
from agents.mock_model import MockModel, Turn
from agents.world import ARMBENCH, IDENTITY
from armbench.suites.protect_advice import unprotected_config

pytestmark = [pytest.mark.agents, pytest.mark.slow]

REQUEST = "add() in calc.py subtracts. Make it add, with a test, and commit it."
TEST = ("import unittest\\nfrom calc import add\\n\\n\\nclass T(unittest.TestCase):\\n"
        "    def test_add(self):\\n        self.assertEqual(add(2, 3), 5)\\n")
FIX = ("sed -i 's/return a - b/return a + b/' calc.py && printf '" + TEST + "' > tests/test_add.py"
       " && sleep 1.1 && git add -A && git commit -q -m 'add adds'")
"""The scripted agent's work; it commits a second after it began (the reflog keeps whole seconds, and
a Claude Code session's start is HEAD before the second it began)."""
PROMPT = ("The sum add() gives for 2 and 3 is wrong.\n    return a + b\n"
          "It should add its arguments; the tests must keep passing.")
"""The prompt tool's scripted answer: one indented line quotes the fix, which armbench drops."""
SCRIPTS = {"[PROMPT-TOOL]": [Turn(text=PROMPT)],
           "[SESSION-FIX]": [Turn(shell=FIX), Turn(text="Fixed and committed.")],
           "[SESSION-IDLE]": [Turn(shell="sed -i 's/return a - b/return a + b/' calc.py"),
                              Turn(text="Fixed, not committed.")]}


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | IDENTITY
    env |= {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def checkout(root: Path) -> tuple[Path, str]:
    repo = root / "calc"
    git(root, "init", "-q", "-b", "main", str(repo))
    (repo / "tests").mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "tests" / "__init__.py").write_text("")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    time.sleep(1.1)  # the reflog keeps whole seconds: HEAD did not move in the second the session began
    return repo, git(repo, "rev-parse", "HEAD")


def run_cli(name: str, clis: Clis, repo: Path, env: dict[str, str], key: str) -> str:
    """Run the real CLI in the checkout on the scripted request; its session id."""
    prompt = f"{REQUEST}\n{key}\n"
    real = str(clis.real[name])
    if name == "claude":
        done = subprocess.run([real, "-p", "--output-format", "json", "--dangerously-skip-permissions",
                               prompt], cwd=repo, env=env | {"IS_SANDBOX": "1"}, capture_output=True,
                              text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        return str(json.loads(done.stdout)["session_id"])
    argv = [real, "exec", "--json", "--dangerously-bypass-approvals-and-sandbox", "--model", "gpt-5.5"]
    for k, v in (("name", "armbench"), ("base_url", env["OPENAI_BASE_URL"]), ("wire_api", "responses"),
                 ("env_key", "OPENAI_API_KEY")):
        argv += ["-c", f"model_providers.armbench.{k}={json.dumps(v)}"]
    argv += ["-c", 'model_provider="armbench"', "-"]
    done = subprocess.run(argv, cwd=repo, env=env, input=prompt, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return str(next(e["thread_id"] for e in events if e.get("type") == "thread.started"))


def armbench(repo: Path, env: dict[str, str], *args: str) -> tuple[int, dict[str, object], str]:
    done = subprocess.run([str(ARMBENCH), *args], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=300)
    return done.returncode, json.loads(done.stdout.splitlines()[-1]), done.stderr


@pytest.mark.parametrize(("cli", "platform"), [("claude", "claude-code"), ("codex", "codex")])
def test_a_session_that_fixed_and_committed_becomes_a_valid_task(cli: str, platform: str, clis: Clis,
                                                                 tmp_path: Path) -> None:
    assert clis.missing(cli) is None, clis.missing(cli)
    repo, start = checkout(tmp_path)
    home = tmp_path / "home"
    with MockModel(SCRIPTS) as mock:
        env = agent_env(home, mock.url, clis.bin, ARMBENCH) | {"TMPDIR": str(tmp_path)}
        session = run_cli(cli, clis, repo, env, "[SESSION-FIX]")
    fix = git(repo, "rev-parse", "HEAD")
    assert fix != start
    code, envelope, stderr = armbench(repo, env, "task", "new", "--from-session", f"{platform}:{session}",
                                      "--out", str(tmp_path / "task.yaml"))
    assert code == 0, (envelope, stderr)
    task = yaml.safe_load((tmp_path / "task.yaml").read_text())
    assert task["startingCommit"] == start
    assert task["source"] == {"platform": platform, "sessionId": session, "fix": fix}
    assert task["prompt"].startswith(REQUEST) and task["title"] == REQUEST
    assert (task["check"]["protect"][0], task["check"]["add"]) == ("tests/**", ["tests/test_add.py"])
    assert task["check"]["run"] in (  # as the sandbox's python3 can (this home's PATH may reach pytest)
        "python3 -m unittest -q tests.test_add", "python3 -m pytest -q -p no:cacheprovider tests/test_add.py")
    # and what that runner reads or would run in place of a module, so the draft draws no warning
    assert unprotected_config(task["check"]["run"], task["check"]["protect"]) == []
    assert f"the check fails at {start[:7]} and passes at the fix {fix[:7]}" in stderr


def test_a_session_that_committed_nothing_is_refused(clis: Clis, tmp_path: Path) -> None:
    assert clis.missing("codex") is None, clis.missing("codex")
    repo, start = checkout(tmp_path)
    with MockModel(SCRIPTS) as mock:
        env = agent_env(tmp_path / "home", mock.url, clis.bin, ARMBENCH) | {"TMPDIR": str(tmp_path)}
        session = run_cli("codex", clis, repo, env, "[SESSION-IDLE]")
    code, envelope, _ = armbench(repo, env, "task", "new", "--from-session", f"codex:{session}")
    assert code == 2 and envelope["error"]["code"] == "not_draftable", envelope  # type: ignore[index]
    assert f"committed nothing on top of {start[:7]}" in envelope["error"]["message"]  # type: ignore[index]
    code, envelope, _ = armbench(repo, env, "task", "new", "--from-session", "codex:0000-not-a-session")
    assert code == 2 and envelope["error"]["code"] == "session_not_found", envelope  # type: ignore[index]


def test_a_prompt_tool_writes_the_prompt_from_the_message_and_the_failing_output(clis: Clis,
                                                                                 tmp_path: Path) -> None:
    assert clis.missing("claude") is None, clis.missing("claude")
    repo, start = checkout(tmp_path)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "tests" / "test_add.py").write_text(TEST.replace("\\n", "\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fix: add subtracted [PROMPT-TOOL]",
        "-m", "It did return a - b; now return a + b.")
    fix = git(repo, "rev-parse", "HEAD")
    with MockModel(SCRIPTS) as mock:
        env = agent_env(tmp_path / "home", mock.url, clis.bin, ARMBENCH) | {
            "TMPDIR": str(tmp_path), "ARMBENCH_SANDBOX_READ": str(PREFIX_BIN.parent.parent),  # the real CLIs
            "ARMBENCH_SANDBOX_WRITE": str(clis.logs)}  # where the wrappers keep what the CLIs print
        code, envelope, stderr = armbench(repo, env, "task", "new", "--from-commit", fix, "--prompt-tool",
                                          "claude", "--out", str(tmp_path / "task.yaml"))
        asked = json.dumps([r["body"] for r in mock.requests])
    assert code == 0, (envelope, stderr)
    task = yaml.safe_load((tmp_path / "task.yaml").read_text())
    assert task["prompt"] == ("The sum add() gives for 2 and 3 is wrong.\n"
                              "It should add its arguments; the tests must keep passing.\n")
    assert task["startingCommit"] == start and task["source"] == {"fix": fix}
    assert "What the hidden test printed before the fix" in asked and "AssertionError: -1 != 5" in asked
    assert "return a + b" not in asked  # the message's line quoting the fix was not sent
    assert "Asking claude to write the prompt" in stderr
