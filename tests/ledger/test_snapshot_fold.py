"""A snapshot taken anywhere in any log the engine can write, then the rest of the log folded,
gives the state a fold of the whole log gives: resuming from a snapshot changes nothing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ledger_simulate import simulate

from armbench.aggregates.workflow import fold
from armbench.engine.snapshots import decode_state, encode_state


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_a_snapshot_anywhere_then_the_rest_is_the_whole_fold(data: st.DataObject) -> None:
    events = simulate(lambda options: data.draw(st.sampled_from(list(options))))
    cut = data.draw(st.integers(min_value=0, max_value=len(events)))
    restored = decode_state(encode_state(fold(events[:cut])))
    assert restored is not None and restored.version == cut
    assert fold(events[cut:], restored) == fold(events)
