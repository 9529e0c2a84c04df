"""`credentials:` in a tool.yaml: a tool's own login files, never a secret of the home."""

from __future__ import annotations

import pytest
from suite_texts import rendered

from armbench.suites.credentials import GUARDED, credential_problem
from armbench.suites.validate import parse_tool

F = "tools/agent/tool.yaml"


def tool(*paths: str) -> str:
    listed = "".join(f"  - {p!r}\n" for p in paths)
    return f"schemaVersion: v1alpha1\nname: agent\nrun: agent\ncredentials:\n{listed}"


@pytest.mark.parametrize("path", [
    ".armbench/ledger.key", ".ssh/id_ed25519", ".gnupg/private-keys-v1.d/k.key", ".pgpass",
    ".config/gcloud/credentials.db", ".aws/credentials", ".kube/config", ".docker/config.json",
    ".netrc", ".git-credentials", "./.ssh/id_rsa", ".ssh//id_rsa", ".armbench"])
def test_a_secret_of_the_home_is_refused_with_its_line(path: str) -> None:
    found = parse_tool(tool(".config/agent/auth.json", path), file=F, folder_name="agent")[1]
    assert [(d.code, d.line) for d in found] == [("tool_credentials_secret", 6)]
    assert f"found `{path}`: it is under `" in found[0].message
    assert found[0].message.endswith("Remove it from `credentials`.")


@pytest.mark.parametrize("path", ["/etc/shadow", "~/.ssh/id_rsa", "../.ssh/id_rsa",
                                  ".config/../.ssh/id_rsa", ""])
def test_a_path_outside_the_home_is_refused(path: str) -> None:
    found = parse_tool(tool(path), file=F, folder_name="agent")[1]
    assert [d.code for d in found] == ["tool_credentials_path"]


def test_armbench_own_home_inside_the_members_is_refused_wherever_it_is() -> None:
    found = parse_tool(tool("state/armbench/ledger.key", ".config/agent/auth.json"), file=F,
                       folder_name="agent", armbench_home="state/armbench")[1]
    assert rendered(found) == [
        f"{F}:5: error: credentials[0]: expected the tool's own login file, such as "
        "`.config/agent/auth.json`, found `state/armbench/ledger.key`: it is under "
        "`state/armbench`, which holds secrets no model login needs, and every trial's agent "
        "could read it. Remove it from `credentials`."]
    assert credential_problem("x", ".") is not None  # armbench's home is the whole home


def test_a_tools_own_login_files_pass() -> None:
    for path in (".config/agent/auth.json", ".claude/.credentials.json", ".sshconfig",
                 ".config/gcloudx/auth.json", ".local/share/agent/auth.json"):
        assert credential_problem(path) is None, path
    assert parse_tool(tool(".config/agent/auth.json"), file=F, folder_name="agent")[1] == []
    assert {g.split("/")[0] for g in GUARDED} >= {".armbench", ".ssh", ".aws"}
