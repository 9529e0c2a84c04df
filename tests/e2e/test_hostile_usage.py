"""Issue 11, item 5: a tool's hostile usage file, through `armbench run` and `armbench explain`.

One run of two tasks on four arms, a fault per trial: the scripted tool reads its task from the
prompt and its arm's model, and writes that fault's `$ARMBENCH_USAGE_FILE` (it fixes the bug too,
so every trial passes and only its usage is in question). The table printed on stderr stays
well-formed with no raw control character, and a fault leaves its trial's usage not verified,
with no token or cost counted and a note that says why. The `good` trial shows what a usage file
in bounds gives.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from e2e.conftest import FIX_ADD, Result, World, make_world, visible_task
from e2e.tables import assert_well_formed, cells

pytestmark = pytest.mark.e2e

NEWLINE_MODEL = "m-one\nInjected line | x \x1b[2J"
ESCAPED_KEY = "\x1b[31mred|x"

AGENT = f"FIX, KEY, MODEL = {FIX_ADD.strip()!r}, {ESCAPED_KEY!r}, {NEWLINE_MODEL!r}\n" + r'''
import json, os, subprocess, sys

task = sys.stdin.read().split(":")[0].split()[-1]
subprocess.run(["bash", "-c", FIX], check=True)
fault = os.environ["ARMBENCH_MODEL"].split("|")[0].split("+")[0 if task == "ta" else 1]
path = os.environ["ARMBENCH_USAGE_FILE"]
reported = os.environ["ARMBENCH_MODEL"]
usage = {
    "good": {"tokens": {"input": 100, "output": 10}, "cost": {"amount": 0.5, "unit": "USD"}},
    "negative": {"tokens": {"input": -9223372036854775808, "output": 10}},
    "absurd": {"tokens": {"input": 10 ** 13, "output": 10}, "cost": {"amount": 10 ** 9, "unit": "USD"}},
    "keys": {"tokens": {f"k{i}": 1 for i in range(60000)}},
    "escape": {"tokens": {"input": 100, KEY: 5}},
    "newline": {"tokens": {"input": 100, "output": 10}},
}.get(fault)
if fault == "nonfinite":
    text = '{"tokens": {"input": 1}, "cost": {"amount": -1e400, "unit": "USD"}, "model": "nonfinite"}'
elif fault == "oversized":
    text = json.dumps({"tokens": {"input": 1}, "model": reported}) + " " * (3 * 1024 * 1024)
else:
    usage["model"] = MODEL if fault == "newline" else reported
    text = json.dumps(usage)
with open(path, "w") as f:
    f.write(text)
'''


ARMS = {"one": ("good", "negative"), "two": ("nonfinite", "absurd"), "three": ("keys", "oversized"),
        "four": ("escape", "newline")}
"""Each arm's fault on task `ta` and on task `tb`."""
WHERE = {fault: (task, arm) for arm, faults in ARMS.items()
         for task, fault in zip(("ta", "tb"), faults, strict=True)}
MODELS = {"four": "escape+newline|team-file"}
"""The fourth arm's model, from the team file, holds a `|` of its own."""


@dataclass
class Ran:
    world: World
    result: Result
    record: dict[str, Any]

    def trial(self, fault: str) -> dict[str, Any]:
        task, arm = WHERE[fault]
        return next(t for t in self.record["trials"] if (t["task"], t["arm"]) == (task, arm))

    def note(self, fault: str) -> str:
        """The usage note of the fault's prompt report in the ledger."""
        step = self.trial(fault)["step"]
        reported = [e for e in self.world.events("StepReported") if e["step"] == step]
        return reported[-1]["usage"]["note"]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    world = make_world(tmp_path_factory.mktemp("hostile-usage"))
    world.team.tool("agent", AGENT, lang="python")
    arms = [{"name": arm, "model": MODELS.get(arm, "+".join(faults))} for arm, faults in ARMS.items()]
    world.team.suite("hostile", arms=arms)
    for task in ("ta", "tb"):
        world.team.task("hostile", task, **visible_task(world.project))
    world.init_and_pull()
    result = world.armbench("run", "hostile", "--sandbox")
    assert result.code == 0, result
    return Ran(world, result, world.record(result.data["done"]["run"]))


def assert_not_counted(ran: Ran, fault: str, why: str) -> None:
    """The fault's trial: passed, usage not verified, nothing summed, the note says `why`."""
    trial = ran.trial(fault)
    assert trial["result"] == "passed"
    assert trial["usageVerified"] is False
    assert "tokens" not in trial and "cost" not in trial
    assert why in ran.note(fault)


def rows(ran: Ran, header: str) -> dict[str, list[str]]:
    """The cells by arm of the printed table whose header starts `header`, split as Markdown does."""
    lines = ran.result.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    return {c[0]: c[1:] for c in map(cells, lines[start + 2:start + 2 + len(ARMS)])}


def test_the_table_stays_well_formed_with_no_raw_control_character(ran: Ran) -> None:
    assert_well_formed(ran.result.stderr)
    assert "\x1b" not in ran.result.stderr
    assert "\\\\x1b[31mred\\|x" in ran.result.stderr  # shown escaped in the usage table's header
    assert "| escape+newline\\|team-file (team) |" in ran.result.stderr


def test_only_the_usage_in_bounds_is_counted_in_the_table(ran: Ran) -> None:
    not_verified = {arm: row[10] for arm, row in rows(ran, "| Arm | Tool |").items()}
    assert not_verified == {"one": "1", "two": "2", "three": "2", "four": "0"}
    usage = rows(ran, "| Arm | Median tokens")
    assert (usage["one"][0], usage["one"][2]) == ("110 (1)", "0.50 USD (1 of 2, incomplete)")
    assert (usage["two"][0], usage["two"][2]) == ("unknown (0)", "not stated")
    assert (usage["three"][0], usage["three"][2]) == ("unknown (0)", "not stated")


def test_a_usage_file_in_bounds_is_counted(ran: Ran) -> None:
    trial = ran.trial("good")
    assert trial["usageVerified"] is True
    assert trial["tokens"] == {"input": 100, "output": 10}
    assert trial["cost"] == {"amount": 0.5, "unit": "USD"}


def test_a_negative_token_count_is_not_verified_and_not_summed(ran: Ran) -> None:
    assert_not_counted(ran, "negative", "the token count `input` is below 0")
    assert "-9223372036854775808" not in ran.result.stderr


def test_a_non_finite_cost_is_not_verified(ran: Ran) -> None:
    assert_not_counted(ran, "nonfinite", "could not be read: Number out of range - at `$.cost.amount`")
    assert "inf" not in ran.result.stderr.lower().replace("info", "")


def test_an_absurd_count_is_not_verified(ran: Ran) -> None:
    assert_not_counted(ran, "absurd", "the token count `input` is over 1e12")


def test_too_many_token_keys_are_not_kept(ran: Ran) -> None:
    assert_not_counted(ran, "keys", "it names 60000 token components, over the 32 armbench takes")
    assert ran.world.ledger.stat().st_size < 2 * 1024 * 1024
    assert ran.world.record_path(ran.result.data["done"]["run"]).stat().st_size < 64 * 1024


def test_an_oversized_usage_file_is_not_read(ran: Ran) -> None:
    assert_not_counted(ran, "oversized", "could not be read: it is over 1048576 bytes")


def test_an_escape_sequence_and_a_pipe_in_a_key_are_escaped_in_the_table(ran: Ran) -> None:
    trial = ran.trial("escape")
    assert trial["usageVerified"] is True
    assert trial["tokens"] == {"input": 100, ESCAPED_KEY: 5}  # the record keeps it, JSON-escaped
    header = next(line for line in ran.result.stderr.splitlines() if "Median tokens" in line)
    assert len(cells(header)) == 4, header


def test_a_model_name_with_a_newline_is_kept_in_the_record_and_escaped_on_the_terminal(
        ran: Ran) -> None:
    trial = ran.trial("newline")
    assert trial["agent"]["model"]["reported"] == NEWLINE_MODEL
    run = ran.result.data["done"]["run"]
    explained = ran.world.armbench("explain", run, "r0.tb.four")
    assert explained.code == 0, explained
    assert "\x1b" not in explained.stderr
    assert not any(line.startswith("Injected line") for line in explained.stderr.splitlines())
    assert "m-one\\nInjected line | x \\x1b[2J" in explained.stderr
    assert json.loads(explained.stdout)["data"]["explain"]["result"] == "passed"

