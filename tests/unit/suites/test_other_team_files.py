"""models/aliases.yaml, tools/<name>/tool.yaml, armbench.yaml and manifest/roles.yaml."""

from __future__ import annotations

from suite_texts import codes, rendered

from armbench.suites.model import AliasTarget, Resources, Role
from armbench.suites.validate import parse_aliases, parse_roles, parse_team_file, parse_tool

ALIASES = """\
schemaVersion: v1alpha1
aliases:
  strong:
    claude: {model: claude-opus-4-8, effort: high}
    codex: gpt-5.5
  fast:
    claude: claude-haiku-5-5
"""
A = "models/aliases.yaml"


def test_aliases_resolve_per_tool() -> None:
    aliases, found = parse_aliases(ALIASES, file=A)
    assert found == [] and aliases is not None
    assert aliases.aliases["strong"] == {"claude": AliasTarget(model="claude-opus-4-8", effort="high"),
                                         "codex": "gpt-5.5"}


def test_alias_problems_are_reported_at_the_alias_and_tool() -> None:
    text = ALIASES.replace("codex: gpt-5.5", "codex: ''").replace("claude: claude-haiku-5-5",
                                                                  "claude: /models/haiku\n  empty: {}")
    assert rendered(parse_aliases(text, file=A)[1]) == [
        f"{A}:5: error: aliases[strong][codex]: expected the model alias `strong` gives codex, found an "
        "empty "
        "text. Write the model's name.",
        f"{A}:7: error: aliases[fast][claude]: expected a plain model name, found `/models/haiku`, which "
        "looks "
        "like a URL or a local path and would reach the published record. Use the model's plain name.",
        f"{A}:8: error: aliases[empty]: alias `empty` names no tool's model. Add `<tool>: <model>` lines, or "
        "remove the alias.",
    ]


def test_a_wrong_type_inside_the_alias_map_names_the_alias_and_tool() -> None:
    text = ALIASES.replace("effort: high", "effort: [high]")
    assert rendered(parse_aliases(text, file=A)[1]) == [
        f"{A}:4: error: aliases[strong][claude].effort: expected text, found a list of 1 item. Change it to "
        "text.",
    ]


TOOL = "schemaVersion: v1alpha1\nname: aider\nrun: aider --message \"$PROMPT\"\n"


def test_a_tool_file_is_named_like_its_folder() -> None:
    tool, found = parse_tool(TOOL, file="tools/aider/tool.yaml", folder_name="aider")
    assert found == [] and tool is not None and tool.run.startswith("aider")
    assert rendered(parse_tool(TOOL.replace('aider --message "$PROMPT"', "' '"), file="tools/x/tool.yaml",
                               folder_name="x")[1]) == [
        "tools/x/tool.yaml:2: error: name: expected `x`, the tool's folder name, found `aider`. Rename the "
        "tool "
        "or its folder so they match.",
        "tools/x/tool.yaml:3: error: run: expected the shell command that runs one prompt, found an empty "
        "text. "
        "Write the command.",
    ]


def test_the_team_file() -> None:
    team, found = parse_team_file("schemaVersion: v1alpha1\nname: acme\n", file="armbench.yaml")
    assert found == [] and team is not None and team.name == "acme"
    assert codes(parse_team_file("schemaVersion: v1alpha1\nteam: acme\n", file="armbench.yaml")[1]) == [
        "unknown_field"]
    assert codes(parse_team_file("name: acme\n", file="armbench.yaml")[1]) == ["missing_field"]


def test_roles_keep_benchmark_and_asset_namespaces_and_ignore_other_keys() -> None:
    roles, found = parse_roles("""\
roles:
  - id: auth
    description: ignored
    resources:
      benchmarks: [auth]
      skills: [auth]
      mcp: [auth]
projects:
  - id: api
""", file="manifest/roles.yaml")
    assert found == [] and roles is not None
    assert roles.roles == (Role(id="auth", resources=Resources(benchmarks=("auth",), skills=("auth",))),)
    assert roles.projects == (Role(id="api"),)
    _, found = parse_roles("roles: [{resources: {}}]\n", file="manifest/roles.yaml")
    assert codes(found) == ["missing_field"]
