"""The plan freezes each trial's network and armbench's own limits. Pure."""

from __future__ import annotations

import pytest
from suite_texts import SUITE, TASK, TASK_FILE, replace_line

from armbench.ledger.events import PlanFrozen, PlannedLimits
from armbench.suites.plan import PlanInput, freeze
from armbench.suites.validate import TaskEntry, parse_suite, parse_task


def frozen(trial: str, *, private_network: bool) -> PlanFrozen:
    suite, found = parse_suite(replace_line(SUITE, "trial: { timeout: 8m }", trial).replace(
        "scorers: [diff-quality]\n", ""), file="benchmarks/auth-fixes/suite.yaml", aliases={"strong", "fast"})
    task, found_task = parse_task(TASK, file=TASK_FILE, task_id="expired-token")
    assert suite is not None and task is not None, (found, found_task)
    entry = TaskEntry(id="expired-token", file=TASK_FILE, task=task)
    inp = PlanInput(suite=suite, suite_hash="h", tasks=[entry],
                    task_hashes={"expired-token": "h"}, team_aliases=None, team_revision="2" * 40,
                    private_network=private_network)
    plan, steps = freeze(inp)
    prompts = {s.network for s in steps if s.kind == "prompt"}
    assert prompts == {plan.trial_network}  # every trial prompt carries the plan's network
    return plan


@pytest.mark.parametrize(("private", "network"), [(True, "private"), (False, "host")])
def test_the_default_network_is_private_where_the_machine_can_make_one(private: bool, network: str) -> None:
    assert frozen("trial: { timeout: 8m }", private_network=private).trial_network == network


@pytest.mark.parametrize("network", ["host", "none", "private"])
def test_a_network_the_suite_names_is_frozen_as_written(network: str) -> None:
    assert frozen(f"trial: {{ network: {network} }}", private_network=False).trial_network == network


def test_the_limits_are_armbenchs_defaults_unless_the_suite_says() -> None:
    assert frozen("trial: { timeout: 8m }", private_network=True).trial_limits == PlannedLimits(
        memory=4 * 1024**3, pids=1024, disk=8 * 1024**3)
    assert frozen("trial: { limits: { memory: 512M } }", private_network=True).trial_limits == PlannedLimits(
        memory=512 * 1024**2, pids=1024, disk=8 * 1024**3)
    assert frozen("trial: { limits: { memory: 1.5G, pids: 64 } }", private_network=True).trial_limits == \
        PlannedLimits(memory=int(1.5 * 1024**3), pids=64, disk=8 * 1024**3)
    small = frozen("trial: { limits: { disk: 512M } }", private_network=True).trial_limits
    assert small is not None and small.disk == 512 * 1024**2
