"""One mock model and every suite run for the session, started at once so the slow CLIs overlap.

Each suite runs in its own world (project, team repo, isolated home) through the installed
`armbench run`; a test waits only for the run it reads. A run whose CLI is missing is not started,
and its tests skip with the install script's output as the reason.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from agents.clis import PREFIX_BIN, Clis, agent_env, install
from agents.mock_model import MockModel, Turn
from agents.world import ARMBENCH, Run, Suite, World

FIX = "sed -i 's/return a - b/return a + b/' calc.py"
WRONG = "sed -i 's/return a - b/return a * b/' calc.py"
MODELS = {"claude": "claude-sonnet-4-5-20250929", "codex": "gpt-5.5", "gemini": "gemini-2.5-pro",
          "opencode": "anthropic/claude-sonnet-4-5"}
TEAM_RULE = "TEAM-RULE-MARKER: keep every change minimal."
TEAM_FILES = {"skills/calc-fix/SKILL.md": "---\nname: calc-fix\ndescription: How to fix calc.py.\n---\n"
                                          "TEAM-SKILL-BODY: change the operator, nothing else.\n",
              "rules/changes.md": f"{TEAM_RULE}\n"}
PROMPTS = {"fix": "add() in calc.py subtracts. Make it add.",
           "wrong": "add() in calc.py is wrong. Fix it.",
           "error": "add() in calc.py subtracts. Fix it.",
           "limit": "add() in calc.py subtracts. Fix it, then check twice.",
           "spend": "add() in calc.py subtracts. Fix it, then check it three times."}


@dataclass(frozen=True)
class Plan:
    """A suite to run, the CLIs it needs, and its team's model aliases."""

    suite: Suite
    clis: tuple[str, ...]
    aliases: dict[str, dict[str, dict[str, str]]] | None = None
    team_files: dict[str, str] | None = None
    branches: dict[str, list[str]] | None = None


def _suite(name: str, tasks: tuple[str, ...], **fields: object) -> Suite:
    prompts = {t: f"{PROMPTS[t]}\n[script: {name}-{t}]\n" for t in tasks}
    return Suite(name, {"repetitions": 1, "timeout": "10m", "parallel": 2, **fields}, prompts)


JUDGE_KEY = "## Rubric (diff-quality)"
"""What only a judge's prompt holds: the mock answers it with a label, whatever task it judges."""
JUDGE_ANSWER = '{"label": "good", "reason": "One line, and add() adds."}'
SCORER = """---
name: diff-quality
description: Is the change small and right?
labels:
  - {value: good, score: 1}
  - {value: bad, score: 0}
passingScore: 1
---
Prefer the smallest change that makes add() add.
"""


def _judged(cli: str) -> Plan:
    """The CLI works a fix and, as the suite's judge, labels it for the diff-quality scorer."""
    defaults = {"tool": cli, "model": MODELS[cli]}
    return Plan(_suite(f"judge-{cli}", ("fix",), defaults=defaults, arms=[{"name": cli}],
                       scorers=["diff-quality"], judge={"tool": cli, "model": MODELS[cli]},
                       trial={"timeout": "3m", "max_turns": 3}), (cli,),
                team_files={"scorers/diff-quality.md": SCORER})


def _one_cli(cli: str, tasks: tuple[str, ...], effort: str | None) -> Plan:
    """One CLI's fix, wrong answer, model error (a 500: transient, and not retried here, so the
    error is the last attempt's) and turn limit."""
    defaults = {"tool": cli, "model": MODELS[cli], **({"effort": effort} if effort else {})}
    return Plan(_suite(cli, tasks, defaults=defaults, arms=[{"name": cli}],
                       trial={"timeout": "3m", "max_turns": 3, "retries": 0}), (cli,))


def _retried(cli: str) -> Plan:
    """The model answers the CLI's first call 529 (overloaded) once, then scripts the fix."""
    return Plan(_suite(f"retry-{cli}", ("fix",), defaults={"tool": cli, "model": MODELS[cli]},
                       arms=[{"name": cli}],
                       trial={"timeout": "3m", "max_turns": 3, "retry_backoff": "1s"}), (cli,))


NO_SKILL = "bench/no-skill"
"""The record suite's team branch: main without the calc-fix skill."""
PLAN_TEXT = "RECORD-PLAN: in calc.py change the operator of add() from - to +, nothing else."
"""What the mock answers the workflow's plan turn; the fix turn's prompt must carry it."""
PLAN_THEN_FIX = yaml.safe_dump({
    "schemaVersion": "v1alpha1", "name": "plan-then-fix", "inputs": {"task": "string"},
    "steps": [{"id": "plan", "output": {"plan": "string"},
               "prompt": "Write a plan. Change no file. [script: record-plan]\n{{ inputs.task }}"},
              {"id": "fix", "needs": ["plan"],
               "prompt": "{{ inputs.task }}\nFollow this plan: {{ steps.plan.outputs.plan }}"}]},
    sort_keys=False)


def _record() -> Plan:
    """The real-CLI record: on claude, the pulled team, a ref arm whose branch removes the skill,
    and an arm that runs the team's two-step workflow."""
    return Plan(_suite("record", ("fix",), defaults={"tool": "claude", "model": MODELS["claude"]},
                       arms=[{"name": "pulled"}, {"name": "no-skill", "team": NO_SKILL},
                             {"name": "plan-first", "workflow": "plan-then-fix"}]),
                ("claude",), team_files={**TEAM_FILES, "workflows/plan-then-fix.yaml": PLAN_THEN_FIX},
                branches={NO_SKILL: ["skills/calc-fix"]})


PLANS = {
    "claude": _one_cli("claude", ("fix", "wrong", "error", "limit"), "high"),
    "codex": _one_cli("codex", ("fix", "wrong", "error"), "high"),
    "opencode": _one_cli("opencode", ("fix", "wrong", "error"), None),
    "gemini": _one_cli("gemini", ("fix", "wrong", "error"), "high"),
    "team": Plan(_suite("team", ("fix", "wrong"), repetitions=2,
                        defaults={"tool": "claude", "model": MODELS["claude"]}, arms=[{"name": "pulled"}]),
                 ("claude",), team_files=TEAM_FILES),
    "teamtable": Plan(_suite("teamtable", ("fix",), repetitions=2,
                             defaults={"tool": "claude", "model": MODELS["claude"]},
                             arms=[{"name": "with-skill"}, {"name": "bare", "team": "none"}]),
                      ("claude",), team_files=TEAM_FILES),
    "mixed": Plan(_suite("mixed", ("fix", "wrong"), repetitions=2,
                         defaults={"tool": "claude", "model": "strong"},
                         arms=[{"name": "claude"}, {"name": "codex", "tool": "codex"}]),
                  ("claude", "codex"),
                  {"strong": {"claude": {"model": MODELS["claude"]}, "codex": {"model": MODELS["codex"]}}}),
    "record": _record(),
    "judge-claude": _judged("claude"),
    "retry-claude": _retried("claude"),
    "judge-codex": _judged("codex"),
    "judge-gemini": _judged("gemini"),
    "budget": Plan(_suite("budget", ("spend",), defaults={"tool": "claude", "model": "strong"},
                          arms=[{"name": "claude"}, {"name": "codex", "tool": "codex"}],
                          trial={"timeout": "3m", "retries": 0,
                                 "budget": {"tokens": 100000,
                                            "cost": {"amount": 0.001, "unit": "USD"}}}),
                   ("claude", "codex"),
                   {"strong": {"claude": {"model": MODELS["claude"]},
                               "codex": {"model": MODELS["codex"]}}}),
}


def scripts(out: Path) -> dict[str, list[Turn]]:
    """What the mock model does for each suite's task: the fix also dumps `env` outside the clone."""
    found: dict[str, list[Turn]] = {
        JUDGE_KEY: [Turn(text=f"Looking at the diff.\n{JUDGE_ANSWER}")],
        # the record suite's workflow: the fix turn (its prompt holds the plan) before the plan
        # turn, whose prompt holds the task's key too
        f"Follow this plan: {PLAN_TEXT}": [Turn(skill="calc-fix"), Turn(shell=FIX)],
        "[script: record-plan]": [Turn(text=PLAN_TEXT)]}
    for name, plan in PLANS.items():
        for task in plan.suite.prompts:
            if name.startswith("retry-"):
                found[f"[script: {name}-{task}]"] = [Turn(status=529, once=True), Turn(shell=FIX)]
                continue
            found[f"[script: {name}-{task}]"] = [Turn(skill="calc-fix"), Turn(shell=FIX)] \
                if (name, task) in (("team", "fix"), ("teamtable", "fix"), ("record", "fix")) else {
                "fix": [Turn(shell=f"env > {out}/env-{name}.txt"), Turn(shell=FIX)],
                "wrong": [Turn(shell=WRONG)],
                "error": [Turn(status=500)],
                "limit": [Turn(shell=FIX), Turn(shell="true"), Turn(shell="true")],
                "spend": [Turn(shell=FIX), Turn(shell="true"),
                          Turn(shell="true")],
            }[task]
    return found


class Runs:
    """Every plan's `armbench run`, started together; `get` waits for one."""

    def __init__(self, root: Path, clis: Clis, mock: MockModel, out: Path, wanted: set[str]) -> None:
        self.clis, self.out, self.mock = clis, out, mock
        self._started: dict[str, tuple[World, subprocess.Popen[str]]] = {}
        self._done: dict[str, Run] = {}
        for name, plan in PLANS.items():
            if name not in wanted or any(clis.missing(c) for c in plan.clis):
                continue
            env = agent_env(root / name / "home", mock.url, clis.bin, ARMBENCH)
            env |= {"ARMBENCH_SANDBOX_READ": str(PREFIX_BIN.parent.parent),  # the wrappers' real CLIs
                    "ARMBENCH_SANDBOX_WRITE": f"{clis.logs}:{out}"}  # the wrappers' stdout, env dumps
            world = World(root / name, [plan.suite], env, aliases=plan.aliases, team_files=plan.team_files,
                          branches=plan.branches)
            self._started[name] = (world, world.start_run(name))

    def get(self, name: str) -> Run:
        """The finished run of a plan; skips when its CLIs are missing."""
        for cli in PLANS[name].clis:
            if why := self.clis.missing(cli):
                if os.environ.get("CI"):  # CI installs the pinned CLIs: a missing one is a failure
                    pytest.fail(f"CI must test the real {cli}, and it is missing: {why}")
                pytest.skip(why)
        if name not in self._done:
            world, proc = self._started[name]
            self._done[name] = world.finish(proc)
        return self._done[name]

    def world(self, name: str) -> World:
        """The world a plan ran in."""
        return self._started[name][0]

    def stop(self) -> None:
        """Kill the runs this fixture started that are still going, and close every pipe."""
        for name, (_, proc) in self._started.items():
            if name not in self._done:
                if proc.poll() is None:
                    proc.kill()
                proc.communicate()


@pytest.fixture(scope="session")
def clis(tmp_path_factory: pytest.TempPathFactory) -> Clis:
    """The pinned CLIs (installed if missing), each behind a wrapper that logs its stdout."""
    return Clis(tmp_path_factory.mktemp("clis"), install())


@pytest.fixture(scope="session")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside every clone where the agents leave evidence."""
    return tmp_path_factory.mktemp("agents-out")


@pytest.fixture(scope="session")
def mock(out_dir: Path) -> Iterator[MockModel]:
    """The scripted mock model for every suite."""
    with MockModel(scripts(out_dir)) as model:
        yield model


@pytest.fixture(scope="session")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, clis: Clis,
         mock: MockModel, out_dir: Path) -> Iterator[Runs]:
    """The runs of the plans the selected test modules name in `PLAN` (one name, or a tuple of
    names for a module parametrized over plans), started at once."""
    wanted: set[str] = set()
    for item in request.session.items:
        named = getattr(getattr(item, "module", None), "PLAN", None)
        wanted.update((named,) if isinstance(named, str) else named if isinstance(named, tuple) else ())
    wanted &= PLANS.keys()
    started = Runs(tmp_path_factory.mktemp("worlds"), clis, mock, out_dir, wanted)
    try:
        yield started
    finally:
        started.stop()
