"""How the correctness judge agrees with the checks (`armbench judge calibrate`), folded from a
run's calibration labels and its trials' check results. Pure.

The confusion matrix puts the check's result (the truth) against the judge's label; Cohen's kappa
comes with statsmodels' 95% interval, and the judge's false-pass rate (it passed what the check
failed) and false-fail rate (it failed what the check passed) with Wilson 95% intervals. A figure
with too little data says so rather than give a number. statsmodels is imported inside the
functions that use it, so no command pays for it at start.
"""

from __future__ import annotations

import math
from typing import Any

from armbench.ledger.events import JudgeFailed, LabelRecorded
from armbench.projections.results import RunView

__all__ = ["calibration_report", "render_calibration"]


def _rate(k: int, n: int) -> dict[str, Any]:
    if n == 0:
        return {"rate": None, "low": None, "high": None, "k": 0, "n": 0,
                "note": "insufficient data: no trial of that kind"}
    from statsmodels.stats.proportion import proportion_confint
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    return {"rate": k / n, "low": float(low), "high": float(high), "k": k, "n": n}


def _kappa(table: list[list[int]]) -> dict[str, Any]:
    n = sum(map(sum, table))
    rows = [sum(r) for r in table]
    cols = [table[0][j] + table[1][j] for j in range(2)]
    expected = sum(rows[i] * cols[i] for i in range(2)) / n / n if n else 1.0
    if n == 0 or expected >= 1.0:
        return {"kappa": None, "low": None, "high": None,
                "note": "insufficient data: the check or the judge gave only one answer"}
    from statsmodels.stats.inter_rater import cohens_kappa
    got = cohens_kappa(table, return_results=True)
    values = [float(got.kappa), float(got.kappa_low), float(got.kappa_upp)]
    if any(math.isnan(v) for v in values):
        return {"kappa": None, "low": None, "high": None, "note": "insufficient data"}
    return {"kappa": values[0], "low": values[1], "high": values[2]}


def calibration_report(view: RunView) -> dict[str, Any] | None:
    """The judge against the check over the run's calibrated trials (None: never calibrated).

    `matrix` is `[[check passed & judge passed, check passed & judge failed], [check failed &
    judge passed, check failed & judge failed]]`; a trial whose judge gave no label is counted
    in `unlabelled`, never in the matrix."""
    if not view.calibration:
        return None
    latest: dict[str, LabelRecorded | JudgeFailed] = {}
    for v in view.calibration:
        latest[v.step] = v
    checks = {tv.trial.prompt_step: tv.check for tv in view.trials}
    matrix = [[0, 0], [0, 0]]
    unlabelled = 0
    judges: set[str] = set()
    for step, v in latest.items():
        check = checks.get(step)
        if check is None or check.result not in ("passed", "failed"):
            continue
        if v.judge is not None:
            judges.add(" ".join(x for x in (v.judge.tool, v.judge.model_requested) if x))
        if not isinstance(v, LabelRecorded):
            unlabelled += 1
            continue
        matrix[0 if check.result == "passed" else 1][0 if v.passed else 1] += 1
    (tp, fn), (fp, tn) = matrix
    return {"trials": tp + fn + fp + tn + unlabelled, "labelled": tp + fn + fp + tn,
            "unlabelled": unlabelled, "matrix": matrix, "judges": sorted(judges),
            "agreement": (tp + tn) / (tp + fn + fp + tn) if tp + fn + fp + tn else None,
            "kappa": _kappa(matrix), "falsePass": _rate(fp, fp + tn), "falseFail": _rate(fn, tp + fn)}


def _interval(x: dict[str, Any], key: str, pct: bool) -> str:
    if x[key] is None:
        return str(x.get("note", "insufficient data"))

    def fmt(v: float) -> str:
        return f"{100 * v:.0f}%" if pct else f"{v:.2f}"

    tail = f" ({x['k']}/{x['n']})" if "k" in x else ""
    return f"{fmt(x[key])}{tail}, 95% CI {fmt(x['low'])} to {fmt(x['high'])}"


def render_calibration(report: dict[str, Any]) -> str:
    """The calibration as Markdown: the confusion matrix, then kappa and the two error rates."""
    (tp, fn), (fp, tn) = report["matrix"]
    lines = [f"Judge calibration against the checks ({', '.join(report['judges']) or 'no judge'}): "
             f"{report['labelled']} trials labelled, {report['unlabelled']} without a label.", "",
             "| Check | Judge passed | Judge failed |", "| --- | --- | --- |",
             f"| passed | {tp} | {fn} |", f"| failed | {fp} | {tn} |", "",
             f"Cohen's kappa: {_interval(report['kappa'], 'kappa', False)}",
             f"False-pass rate (judge passed, check failed): "
             f"{_interval(report['falsePass'], 'rate', True)}",
             f"False-fail rate (judge failed, check passed): "
             f"{_interval(report['falseFail'], 'rate', True)}"]
    return "\n".join(lines) + "\n"
