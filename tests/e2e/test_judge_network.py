"""A judge answers from its prompt: where the run's trials have a private network, so does the
judge, filtered to its tool's model endpoints and never to `trial.egress`. A server beyond
loopback that the suite lets the trials reach is out of the judge's reach; the scripted
command-tool judge says what it got, and its label still reaches the record."""

from __future__ import annotations

from pathlib import Path

import pytest
from outside import outside_server

from e2e.conftest import TIDY_SCORER, World, hidden_task

pytestmark = pytest.mark.e2e

REACH = ('if python3 -c "import os, urllib.request; urllib.request.urlopen(os.environ[\'E2E_OUTSIDE\'], '
         'timeout=10)" 2>/dev/null; then echo reached; else echo blocked; fi')
JUDGE = f"""cat > /dev/null
{REACH} >> "$E2E_OUT/judge-outside"
echo '{{"label": "tidy", "reason": "scripted"}}'
"""
AGENT = f"""{REACH} >> "$E2E_OUT/agent-outside"
sed -i 's/return a - b/return a + b/' calc.py
"""


def test_a_judge_reaches_no_host_the_trials_may_and_still_labels(world: World, tmp_path: Path) -> None:
    team = world.team
    team.tool("agent", AGENT)
    team.tool("judge", JUDGE)
    team.write("scorers/tidy.md", TIDY_SCORER)
    team.task("judged", "fix", **hidden_task(world.project))
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("outside")
    with outside_server(site) as (address, port):
        team.suite("judged", scorers=["tidy"], judge={"tool": "judge"},
                   trial={"timeout": "1m", "egress": [address]})
        world.init_and_pull()
        done = world.armbench("run", "judged", "--sandbox",
                              env={"E2E_OUTSIDE": f"http://{address}:{port}/"})
    assert done.code == 0, done
    (trial,) = world.record(done.data["done"]["run"])["trials"]
    assert trial["agent"]["sandbox"]["network"] == "private"
    assert [(lb["scorer"], lb["label"]) for lb in trial["labels"]] == [("tidy", "tidy")]
    assert world.out_lines("agent-outside") == ["reached"]  # trial.egress lets the trial through
    assert world.out_lines("judge-outside") == ["blocked"]  # and never the judge
