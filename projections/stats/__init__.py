"""Statistics for comparing arms: Newcombe's paired interval, the regression gate, pairs, power."""

from armbench.projections.stats.components import VarianceComponents, variance_components
from armbench.projections.stats.errors import StatisticsInputError
from armbench.projections.stats.gate import GateResult, TaskDiscordance, regression_gate
from armbench.projections.stats.newcombe import PairedInterval, newcombe_paired_interval
from armbench.projections.stats.nodata import NoData
from armbench.projections.stats.outcomes import PairedOutcome, TrialOutcome
from armbench.projections.stats.pairs import PairedDifference, paired_difference
from armbench.projections.stats.power import (
    NeedMoreTasks,
    min_detectable_effect,
    repetitions_needed,
    tasks_needed,
)

__all__ = [
    "GateResult",
    "NeedMoreTasks",
    "NoData",
    "PairedDifference",
    "PairedInterval",
    "PairedOutcome",
    "StatisticsInputError",
    "TaskDiscordance",
    "TrialOutcome",
    "VarianceComponents",
    "min_detectable_effect",
    "newcombe_paired_interval",
    "paired_difference",
    "regression_gate",
    "repetitions_needed",
    "tasks_needed",
    "variance_components",
]
