"""Each pinned CLI finds the team's assets where armbench installs them, as on a member's machine.

For every real CLI against the mock model, in the real sandbox: a trial whose room holds a pulled
team install sends the rule's and the skill's text to the model; a `none` install sends neither;
and the member's own instructions (in their home, or where CLAUDE_CONFIG_DIR, CODEX_HOME,
XDG_CONFIG_HOME or GEMINI_CLI_HOME point) never reach it.
Claude Code, told by the mock to load the skill, shows the load in its output, and the trial's
`used` says so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agents.clis import NAMES, PREFIX_BIN, Clis, agent_env
from agents.conftest import MODELS
from agents.mock_model import MockModel, Turn
from agents.world import ARMBENCH, git
from armbench.benchmark.agents import ADAPTERS
from armbench.benchmark.agents.places import home_files
from armbench.benchmark.trials.teaminstall import TeamInstall, install_team
from armbench.edge.sandbox import Room, Sandbox
from armbench.engine.protocol import Lease, Report
from armbench.suites.teamassets import TeamAssets, asset_tree

pytestmark = [pytest.mark.agents, pytest.mark.slow]

RULE = "RULE-MARKER: write every commit subject in the imperative mood."
SKILL_TEXT = "SKILL-MARKER cuts a release of this project"
TEAM = TeamAssets(
    skills={"release": {"SKILL.md": f"---\nname: release\ndescription: {SKILL_TEXT}.\n---\n"
                                     "Tag the release and write the notes.\n".encode()}},
    rules={"commits.md": f"{RULE}\n".encode()})


def members_own(elsewhere: Path, member: Path) -> dict[str, str]:
    """The member's own user-level instructions, in their home and in folders the CLIs' variables
    point to outside it: none of them may reach a trial."""
    own = "MEMBER-OWN-MARKER: the member's own instructions.\n"
    places = [member / ".claude" / "CLAUDE.md", member / ".codex" / "AGENTS.md",
              member / ".config" / "opencode" / "AGENTS.md", member / ".gemini" / "GEMINI.md",
              elsewhere / "claude" / "CLAUDE.md", elsewhere / "codex" / "AGENTS.md",
              elsewhere / "config" / "opencode" / "AGENTS.md", elsewhere / "gemini" / "GEMINI.md",
              elsewhere / "gemini" / ".gemini" / "GEMINI.md"]
    for path in places:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(own)
    (elsewhere / "codex" / "config.toml").write_text((member / ".codex" / "config.toml").read_text())
    return {"CLAUDE_CONFIG_DIR": str(elsewhere / "claude"), "CODEX_HOME": str(elsewhere / "codex"),
            "XDG_CONFIG_HOME": str(elsewhere / "config"), "GEMINI_CLI_HOME": str(elsewhere / "gemini")}


def key(cli: str, kind: str) -> str:
    return f"[script: team-{cli}-{kind}]"


@pytest.fixture(scope="module")
def mock() -> Iterator[MockModel]:
    scripts = {key(cli, kind): [Turn(text="Done.")] for cli in NAMES for kind in ("pulled", "none")}
    scripts[key("claude", "pulled")] = [Turn(skill="release"), Turn(text="Done.")]
    with MockModel(scripts) as model:
        yield model


def trial(tmp_path: Path, clis: Clis, mock: MockModel, cli: str, kind: str,
          monkeypatch: pytest.MonkeyPatch) -> Report:
    """One trial of `cli` in the real sandbox with a pulled or a none team installed."""
    if why := clis.missing(cli):
        pytest.fail(f"the agent tests install the pinned {cli}, and it is missing: {why}")
    member = tmp_path / "member"
    for name, value in agent_env(member, mock.url, clis.bin, ARMBENCH).items():
        monkeypatch.setenv(name, value)
    for name, value in members_own(tmp_path / "elsewhere", member).items():
        monkeypatch.setenv(name, value)
    clone = tmp_path / "work" / "clones" / kind
    clone.mkdir(parents=True)
    git(clone, "init", "-q", "-b", "main")
    (clone / "README.md").write_text("A project.\n")
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "start")
    room = Room.of(clone).make()
    assets = TEAM if kind == "pulled" else TeamAssets()
    install_team(room, TeamInstall(kind=kind, revision="f" * 40 if kind == "pulled" else None,  # type: ignore[arg-type]
                                   skills={"release": "d"} if kind == "pulled" else {}),
                 asset_tree(assets), home_files(cli, assets))
    adapter = next(a for a in ADAPTERS if a.name == cli)
    sandbox = Sandbox(home=member, read=(PREFIX_BIN.parent.parent,))
    tool = adapter(str(clis.real[cli]), tmp_path / "scratch", sandbox)
    lease = Lease(run="r-team", step=f"trials.{cli}.{kind}.prompt", lease="l1", kind="prompt",
                  expires_at=datetime(2030, 1, 1, tzinfo=UTC), cwd=str(clone), model=MODELS[cli],
                  prompt=f"Say done.\n{key(cli, kind)}\n", timeout_s=180)
    return tool(lease, cancel=threading.Event())


def sent(mock: MockModel, cli: str, kind: str) -> str:
    """Everything the CLI sent the model in the trial's requests."""
    bodies = [json.dumps(r["body"]) for r in mock.requests if key(cli, kind) in json.dumps(r["body"])]
    assert bodies, f"{cli} sent the mock no request of the {kind} trial"
    return "\n".join(bodies)


@pytest.mark.parametrize("cli", NAMES)
def test_the_pinned_cli_sends_the_teams_rule_and_skill_for_a_pulled_arm_and_neither_for_none(
        cli: str, tmp_path: Path, clis: Clis, mock: MockModel, monkeypatch: pytest.MonkeyPatch) -> None:
    pulled = trial(tmp_path / "pulled", clis, mock, cli, "pulled", monkeypatch)
    none = trial(tmp_path / "none", clis, mock, cli, "none", monkeypatch)
    assert pulled.outcome == "succeeded" and none.outcome == "succeeded", (pulled.message, none.message)
    with_team, bare = sent(mock, cli, "pulled"), sent(mock, cli, "none")
    assert "RULE-MARKER" in with_team and "RULE-MARKER" not in bare
    assert "SKILL-MARKER" in with_team and "SKILL-MARKER" not in bare
    assert "MEMBER-OWN-MARKER" not in with_team + bare
    assert pulled.agent is not None and pulled.agent.team_revision == "f" * 40
    assert none.agent is not None and none.agent.team_revision is None


def test_claude_code_shows_the_skill_it_loaded_and_the_trial_records_it(
        tmp_path: Path, clis: Clis, mock: MockModel, monkeypatch: pytest.MonkeyPatch) -> None:
    report = trial(tmp_path, clis, mock, "claude", "pulled", monkeypatch)
    assert report.agent is not None and report.agent.skills_used == {"release": "loaded"}
    later = [json.dumps(r["body"]) for r in mock.requests if key("claude", "pulled") in json.dumps(r["body"])]
    assert any("Tag the release and write the notes." in body for body in later)

