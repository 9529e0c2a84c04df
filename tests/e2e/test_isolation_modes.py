"""Item 5 and 2-3 of the sandbox: where bubblewrap cannot run, `declared`, logins, the network.

- A machine where bubblewrap cannot make its namespaces (here, for real: a user namespace whose
  `max_user_namespaces` is used up, as Ubuntu 24.04's AppArmor rule does to unprivileged users)
  refuses `run` and `try` with `sandbox_unavailable`, naming the cause and the fix, and makes no run.
- `workflows.isolation: declared` runs without the sandbox, and the record and caption say so.
- A command tool's declared login file reaches it read-only in its private home; nothing else of
  the member's home does.
- `trial.network: none` takes the network from the tool; by default it keeps the host's.
"""

from __future__ import annotations

import json
import socket
import subprocess
import threading

import pytest

from e2e.conftest import ARMBENCH, FIX_ADD, Result, World, dump, hidden_task, parse_envelope, serve

pytestmark = pytest.mark.e2e

NO_NAMESPACES = ("echo 1 > /proc/sys/user/max_user_namespaces && "
                 'exec unshare --user --map-user=65534 --map-group=65534 "$@"')
"""As root in a user namespace: allow one nested one, then run the command as an unprivileged
user in it, where bubblewrap's own user namespace would be the second."""


def without_namespaces(world: World, *args: str) -> Result:
    """`armbench <args>` where no user namespace can be made."""
    done = subprocess.run(["unshare", "--user", "--map-root-user", "sh", "-c", NO_NAMESPACES, "sh",
                           str(ARMBENCH), *args], cwd=world.checkout, env=world.env,
                          capture_output=True, text=True, timeout=120)
    return Result(done.returncode, parse_envelope(done.stdout), done.stdout, done.stderr)


FIX = "cat > /dev/null\n" + FIX_ADD


def small_world(world: World, **suite: object) -> World:
    world.team.tool("agent", FIX)
    world.team.suite("small", **suite)
    world.team.task("small", "hidden", **hidden_task(world.project))
    world.init_and_pull()
    world.configure(sandbox=True)
    return world


def test_run_refuses_where_bubblewrap_cannot_make_namespaces_and_makes_no_run(world: World) -> None:
    small_world(world)
    refused = without_namespaces(world, "run", "small")
    assert refused.code == 2, refused
    assert refused.error["code"] == "sandbox_unavailable"
    message = refused.error["message"]
    assert message.startswith("Trials run in a bubblewrap sandbox, and this machine cannot make one: ")
    assert "could not make its namespaces: bwrap: Creating new namespace failed" in message
    assert "kernel.apparmor_restrict_unprivileged_userns=0" in message
    assert message.endswith("opt out with `workflows.isolation: declared` in .armbench/config.yaml.")
    assert world.events("RunStarted") == []
    assert "Traceback" not in refused.stderr


def test_try_refuses_the_same_way(world: World) -> None:
    small_world(world)
    task = world.team.work / "benchmarks" / "small" / "tasks" / "hidden.yaml"
    refused = without_namespaces(world, "try", str(task))
    assert refused.code == 2, refused
    assert refused.error["code"] == "sandbox_unavailable"


def test_a_missing_bwrap_names_the_package(world: World) -> None:
    small_world(world)
    refused = world.armbench("run", "small", env={"ARMBENCH_BWRAP": str(world.root / "no-bwrap")})
    assert refused.code == 2, refused
    assert refused.error["message"].startswith(
        f"Trials run in a bubblewrap sandbox, and this machine cannot make one: bubblewrap "
        f"({world.root / 'no-bwrap'}) is not installed. Install it (Debian and Ubuntu: apt-get "
        "install bubblewrap).")
    assert world.events("RunStarted") == []


def test_declared_isolation_runs_without_the_sandbox_and_says_so(world: World) -> None:
    small_world(world)
    world.configure(isolation="declared")
    done = without_namespaces(world, "run", "small")  # no namespaces needed
    assert done.code == 0, done
    record = world.record(done.data["done"]["run"])
    assert record["isolation"] == "declared"
    assert [t["result"] for t in record["trials"]] == ["passed"]
    assert ("These results hold for these tasks, this run and this machine. Trials ran without "
            "armbench's sandbox (isolation: declared).") in done.stderr


def test_a_sandboxed_run_says_bubblewrap_and_how_many_folders_its_trials_shared(world: World) -> None:
    small_world(world)
    done = world.armbench("run", "small")
    assert done.code == 0, done
    record = world.record(done.data["done"]["run"])
    assert record["isolation"] == "bubblewrap" and record["sharedFolders"] == 1
    assert "Every trial's sandbox could write 1 shared folder(s) (workflows.sandbox_write)." in done.stderr


LOGIN_TOOL = r"""
cat > /dev/null
python3 - <<'EOF'
import json, os
from pathlib import Path
home = Path.home()
login = home / ".config" / "mytool" / "auth.json"
try:
    login.write_text("changed")
    writable = True
except OSError:
    writable = False
Path(os.environ["E2E_OUT"], "login.json").write_text(json.dumps({
    "login": login.read_text(), "writable": writable,
    "home": sorted(str(p.relative_to(home)) for p in home.rglob("*")),
}))
EOF
""" + FIX_ADD


def test_a_tools_declared_login_reaches_it_read_only_and_nothing_else_of_the_home(world: World) -> None:
    home = world.root / "member-home"
    (home / ".config" / "mytool").mkdir(parents=True)
    (home / ".config" / "mytool" / "auth.json").write_text('{"token": "t0k"}')
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("private key")
    world.env["HOME"] = str(home)
    world.team.write("tools/agent/tool.yaml", dump({
        "schemaVersion": "v1alpha1", "name": "agent", "run": 'bash "$ARMBENCH_TOOL_DIR/agent.sh"',
        "credentials": [".config/mytool/auth.json"]}))
    world.team.write("tools/agent/agent.sh", LOGIN_TOOL)
    world.team.suite("small", repetitions=1)
    world.team.task("small", "hidden", **hidden_task(world.project))
    world.init_and_pull()
    world.configure(sandbox=True)
    done = world.armbench("run", "small")
    assert done.code == 0, done
    seen = json.loads((world.out / "login.json").read_text())
    assert seen == {"login": '{"token": "t0k"}', "writable": False,
                    "home": [".config", ".config/mytool", ".config/mytool/auth.json"]}
    assert (home / ".config" / "mytool" / "auth.json").read_text() == '{"token": "t0k"}'


def test_a_login_path_outside_the_home_is_refused_at_pull_with_its_line(world: World) -> None:
    world.team.write("tools/agent/tool.yaml", dump({
        "schemaVersion": "v1alpha1", "name": "agent", "run": "true",
        "credentials": ["../.ssh/id_ed25519"]}))
    world.team.publish()
    assert world.armbench("init", "--team", str(world.team.bare)).code == 0
    pulled = world.armbench("pull")
    found = [d for d in pulled.data["pull"]["diagnostics"] if d["code"] == "tool_credentials_path"]
    assert found and found[0]["file"] == "tools/agent/tool.yaml" and found[0]["line"] == 5
    assert found[0]["message"].startswith("credentials[0]: expected a path relative to the home folder")


NET_TOOL = r"""
cat > /dev/null
if python3 -c "import socket, os; socket.create_connection(('127.0.0.1', int(os.environ['E2E_PORT'])), 5)"
then echo reached >> "$E2E_OUT/net-$ARMBENCH_MODEL"; else echo blocked >> "$E2E_OUT/net-$ARMBENCH_MODEL"; fi
""" + FIX_ADD


@pytest.mark.parametrize("network", ["host", "none", "default"])
def test_trial_network_none_takes_the_network_from_the_tool(world: World, network: str) -> None:
    """`host` keeps the host's loopback in reach; `none` and the default (a private network, on
    this machine as root with pasta: tests/e2e/test_confinement_attacks.py) do not."""
    server = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=serve, args=(server,), daemon=True).start()
    world.env["E2E_PORT"] = str(server.getsockname()[1])
    world.team.tool("agent", NET_TOOL)
    trial = {"timeout": "1m"} | ({"network": network} if network != "default" else {})
    world.team.suite("small", repetitions=1, trial=trial, defaults={"tool": "agent", "model": network})
    world.team.task("small", "hidden", **hidden_task(world.project))
    world.init_and_pull()
    world.configure(sandbox=True)
    done = world.armbench("run", "small")
    server.close()
    assert done.code == 0, done
    assert world.out_lines(f"net-{network}") == ["reached" if network == "host" else "blocked"]
    assert [t["result"] for t in world.record(done.data["done"]["run"])["trials"]] == ["passed"]
