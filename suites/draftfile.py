"""A drafted task as the file a team keeps: `benchmarks/<suite>/tasks/<id>.yaml` (pure)."""

from __future__ import annotations

from typing import Any

import msgspec
import yaml

__all__ = ["TaskDraft", "render_task", "synthetic_suite"]


class TaskDraft(msgspec.Struct, frozen=True, kw_only=True):
    """A task drafted from the team's history, before `try` says whether it is valid."""

    task_id: str
    """The file name without `.yaml`, from the title."""
    title: str
    prompt: str
    starting_commit: str
    """The fix's first parent."""
    run: str
    protect: tuple[str, ...]
    add: tuple[str, ...]
    fix: str
    """`source.fix`: the commit that fixed the task."""
    platform: str | None = None
    """`source.platform`, for a task drafted from an agent session."""
    session_id: str | None = None
    """`source.sessionId`, likewise."""
    origin: str = ""
    """One line for the file's header: what it was drafted from."""


class _Dumper(yaml.SafeDumper):
    """Block scalars for text with line breaks, so a prompt reads as written."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def render_task(draft: TaskDraft) -> str:
    """The task file's text: a header naming its origin, then the keys in the spec's order."""
    source: dict[str, Any] = {}
    if draft.platform is not None:
        source["platform"] = draft.platform
    if draft.session_id is not None:
        source["sessionId"] = draft.session_id
    source["fix"] = draft.fix
    body = {
        "schemaVersion": "v1alpha1",
        "title": draft.title,
        "prompt": draft.prompt,
        "startingCommit": draft.starting_commit,
        "check": {"run": draft.run, "protect": list(draft.protect), "add": list(draft.add)},
        "source": source,
    }
    header = (f"# Drafted by armbench from {draft.origin}.\n"
              "# Read the prompt as the agent will before the task joins its suite.\n")
    return header + yaml.dump(body, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def synthetic_suite(name: str, repo: str, setup: str | None) -> str:
    """A one-arm suite.yaml for trying a draft when the team named no suite."""
    body: dict[str, Any] = {"schemaVersion": "v1alpha1", "name": name, "repo": repo,
                            "defaults": {"tool": "claude"}, "arms": [{"name": "baseline"}],
                            "timeout": "1h"}
    if setup:
        body["setup"] = setup
    return yaml.dump(body, Dumper=_Dumper, sort_keys=False)
