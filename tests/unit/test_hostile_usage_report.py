"""Property: whatever a command tool writes to `$ARMBENCH_USAGE_FILE`, and whatever names a team
file gives its arms, the report stays well-formed and small.

Each example writes two usage files (random JSON of the file's shape with hostile keys, counts,
costs and names; random bytes; a file padded past the limit; a token map of tens of thousands of
keys) and takes them the whole way a run does, in process: the tool's reading
(`read_usage_file`) and report (`command_report`), the `StepReported` the engine appends, through
the ledger's JSON encoding and back, then the table and the record a report projects. Every table
keeps its cells, nothing a terminal obeys is printed, every counted value is in bounds, and the
work stays under a memory cap (tracemalloc's peak).
"""

from __future__ import annotations

import json
import tempfile
import tracemalloc
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from compare.builders import AT, arm, plan, task
from e2e.tables import assert_well_formed
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from armbench.benchmark.agents.command import USAGE_LIMIT, command_report, read_usage_file
from armbench.benchmark.records.reporting import project
from armbench.edge.proc import ProcResult
from armbench.engine.protocol import Lease
from armbench.ledger.events import (
    CheckRan,
    Event,
    RunEnded,
    RunStarted,
    StepReported,
    decode_event,
    encode_event,
)
from armbench.projections.record import encode_record
from armbench.projections.table import render_markdown
from armbench.projections.usage import usage_problem

MEMORY_CAP = 24 * 1024 * 1024
"""The most Python memory one example's report may hold at once (two inputs of at most 1 MiB
each; about 8 MB measured)."""

NAMES = st.text(max_size=80) | st.sampled_from(["input", "output", "a|b", "\x1b[31m", "x\ny", "\\|"])
COUNTS = (st.integers(min_value=-2**63, max_value=2**64) | st.integers(0, 10**12)
          | st.sampled_from([10**12, 10**12 + 1, -1, 10**400]) | st.floats(allow_nan=False))
AMOUNTS = st.floats() | st.sampled_from(["-1e400", "1e400", "1e308"]) | st.integers(-10, 10**7)


def _amount(value: Any) -> str:
    """A JSON number as a tool might print it, overflowing ones included."""
    if isinstance(value, str):
        return value
    return json.dumps(value)  # NaN and Infinity come out as JSON extensions msgspec refuses


@st.composite
def usage_files(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["shaped", "shaped", "shaped", "bytes", "padded", "many"]))
    event(kind)
    if kind == "bytes":
        return draw(st.binary(max_size=2000))
    if kind == "many":
        n = draw(st.sampled_from([33, 5000, 60000, 200000]))  # 200000 keys pass 1 MiB
        return json.dumps({"tokens": {f"k{i}": i for i in range(n)}}).encode()
    parts = []
    if draw(st.booleans()):
        tokens = draw(st.dictionaries(NAMES, COUNTS, max_size=40))
        parts.append('"tokens": {' + ", ".join(f"{json.dumps(k)}: {_amount(v)}"
                                               for k, v in tokens.items()) + "}")
    if draw(st.booleans()):
        amount = _amount(draw(AMOUNTS))
        parts.append(f'"cost": {{"amount": {amount}, "unit": {json.dumps(draw(NAMES))}}}')
    for field in ("model", "session_id", "version"):
        if draw(st.booleans()):
            parts.append(f'"{field}": {json.dumps(draw(st.text(max_size=300)))}')
    text = "{" + ", ".join(parts) + "}"
    if kind == "padded":
        text += " " * (USAGE_LIMIT - len(text) + draw(st.integers(-5, 5)))
    return text.encode()


def _ended(duration_ms: int) -> ProcResult:
    return ProcResult(exit_code=0, signal=None, timed_out=False, cancelled=False, cause="ok",
                      duration_ms=duration_ms, stdout_tail=b"", stderr_tail=b"")


def _events(files: list[bytes], arm_models: list[str], folder: Path) -> list[Event]:
    """A run of one task on two arms whose trials' tools wrote `files`, as the ledger holds it."""
    the_plan = plan([arm("a", model=arm_models[0]), arm("b", tool=arm_models[1], model=arm_models[1])],
                    [task("t")], 1)
    events: list[Event] = [RunStarted(run="r1", workflow="armbench-benchmark", source_hash="w",
                                      inputs={"suite": "s"}, timeout_s=600, at=AT,
                                      isolation="bubblewrap"), the_plan]
    for trial, data in zip(the_plan.trials, files, strict=True):
        path = folder / "usage.json"
        path.write_bytes(data)
        usage, reported = read_usage_file(path)
        lease = Lease(run="r1", step=trial.prompt_step, lease="l", kind="prompt", tool="agent",
                      expires_at=AT)
        report = command_report("agent", lease, _ended(1000), usage, reported)
        events.append(StepReported(step=trial.prompt_step, lease="l", at=AT,
                                   **{f: getattr(report, f) for f in report.__struct_fields__}))
        events.append(CheckRan(step=trial.check_step, task=trial.task, kind="trial", result="passed",
                               exit_code=0))
    events.append(RunEnded(state="succeeded", at=AT + timedelta(minutes=5)))
    return [decode_event(encode_event(e)) for e in events]  # through the ledger's encoding


@pytest.fixture(scope="module")
def warm() -> None:
    """One report before any is measured: the first imports what the statistics need."""
    with tempfile.TemporaryDirectory() as folder:
        project("r1", _events([b"", b""], ["m", "m"], Path(folder)), None)


@pytest.mark.slow  # hypothesis over whole reports
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.data_too_large])
@given(files=st.lists(usage_files(), min_size=2, max_size=2),
       arm_models=st.lists(NAMES, min_size=2, max_size=2))
def test_any_usage_file_leaves_a_well_formed_table_and_a_bounded_record(
        warm: None, files: list[bytes], arm_models: list[str]) -> None:
    tracemalloc.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            got = project("r1", _events(files, arm_models, Path(folder)), None)
            text, record = got.text, encode_record(got.record)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MEMORY_CAP, f"the report's peak was {peak} bytes"
    assert_well_formed(text)
    assert render_markdown(got.table) == text
    for entry in json.loads(record)["trials"]:
        stated = entry.get("cost")
        problem = usage_problem(entry.get("tokens", {}),
                                (stated["amount"], stated["unit"]) if stated else None)
        assert problem is None, entry
        assert entry["usageVerified"] or ("tokens" not in entry and "cost" not in entry)
    assert len(record) < 64 * 1024
