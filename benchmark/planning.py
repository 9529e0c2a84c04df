"""Load what plan reads at the pulled team revision, and freeze it."""

from __future__ import annotations

from benchmark.pull import load_cache
from edge.config import Checkout, ProjectConfig, armbench_home
from edge.team import files_at, on_remote, resolve_source
from ledger.errors import Refusal
from ledger.events import PlanFrozen, StepSpec
from suites.diagnostics import has_errors, render
from suites.plan import PlanInput, freeze, sha256
from suites.validate import parse_aliases, validate_suite_dir

__all__ = ["dry_plan", "load_plan_input"]


def load_plan_input(checkout: Checkout, config: ProjectConfig, suite: str, *,
                    aliases: str = "team", check_remote: bool = True) -> PlanInput:
    """The suite, its tasks and the aliases, as the last pull left them."""
    if aliases not in ("team", "member"):
        raise Refusal(f'--aliases must be "team" or "member", not "{aliases}".',
                      code="invalid_inputs")
    pulled = checkout.read_pull()
    if pulled is None:
        raise Refusal("This checkout has pulled no team revision yet. Run `armbench pull` and "
                      "start again.", code="not_pulled")
    if check_remote:
        source = resolve_source(config.team, checkout.root)
        if not on_remote(source, checkout.mirror, pulled.revision):
            raise Refusal(
                "Benchmarks start from the team revision this checkout last pulled, and it has "
                f"none that another machine can pull ({pulled.revision[:7]} is on no branch or "
                "tag of the team repo). Push any team changes, run armbench pull, and start "
                "again.", code="team_ref_blocked")
    cached = load_cache(checkout).suites.get(suite)
    if cached is None:
        raise Refusal(f'No valid suite "{suite}" was pulled into this checkout. Check '
                      f"benchmarks/{suite}/ in the team repo (armbench pull lists its problems), "
                      "push, pull, and start again.", code="suite_not_found")
    team_files = files_at(checkout.mirror, pulled.revision, "models")
    team_aliases, alias_text = _aliases(team_files.get("models/aliases.yaml"), "models/aliases.yaml")
    member_aliases = None
    if aliases == "member":
        member_file = armbench_home() / "models" / "aliases.yaml"
        if member_file.exists():
            member_aliases, alias_text = _aliases(member_file.read_bytes(), str(member_file))
    suite_dir = f"benchmarks/{suite}"
    files = files_at(checkout.mirror, cached, suite_dir)
    names = sorted((team_aliases.aliases if team_aliases else {}).keys())
    check = validate_suite_dir(files, suite_dir=suite_dir, aliases=names)
    if check.suite is None or not check.valid:
        problems = "; ".join(render(d) for d in check.diagnostics if d.severity == "error")
        raise Refusal(f'Suite "{suite}" is not valid: {problems}', code="suite_invalid")
    return PlanInput(
        suite=check.suite, suite_hash=sha256(files[f"{suite_dir}/suite.yaml"]),
        tasks=list(check.tasks), task_hashes={t.id: sha256(files[t.file]) for t in check.tasks},
        team_aliases=team_aliases, member_aliases=member_aliases,
        aliases_hash=sha256(alias_text) if alias_text else None,
        use_member_aliases=aliases == "member", team_revision=pulled.revision)


def _aliases(text: bytes | None, file: str):
    if text is None:
        return None, None
    value, diags = parse_aliases(text, file=file)
    if value is None or has_errors(diags):
        problems = "; ".join(render(d) for d in diags)
        raise Refusal(f"{file} is not valid: {problems}", code="aliases_invalid")
    return value, text


def dry_plan(checkout: Checkout, config: ProjectConfig, suite: str, *,
             aliases: str = "team") -> tuple[PlanFrozen, list[StepSpec]]:
    """The plan a run would freeze now; a refusal means no run may start."""
    return freeze(load_plan_input(checkout, config, suite, aliases=aliases))
