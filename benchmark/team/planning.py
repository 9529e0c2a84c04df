"""Load what plan reads at the pulled team revision, and freeze it."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import msgspec
import yaml

from armbench.benchmark.team.armteams import resolve_arm_teams
from armbench.benchmark.team.armworkflows import pin_arm_workflows
from armbench.benchmark.team.environments import resolve_environments
from armbench.benchmark.team.suitecache import load_cache, verified_suite_files
from armbench.edge import usernet
from armbench.edge.config import Checkout, ProjectConfig, armbench_home
from armbench.edge.errors import CommitUnreachable, RemoteUnreachable
from armbench.edge.gitclone import CommitCache
from armbench.edge.team import files_at, git_dir_of, reaches, remote_refs, resolve_source
from armbench.ledger.errors import Refusal
from armbench.ledger.events import PlanFrozen, PlannedScorer, PlannedTeam, PulledTeam, StepSpec
from armbench.projections.labels import asks_again
from armbench.suites.arms import resolve_arms, team_kind
from armbench.suites.diagnostics import Diagnostic, has_errors, render
from armbench.suites.model import Aliases, Suite
from armbench.suites.namespaces import alias_files, namespace_of, suite_aliases
from armbench.suites.plan import PlanInput, freeze, scorer_entry, sha256
from armbench.suites.scorers import ScorerFile, parse_scorer, scorer_file_of
from armbench.suites.subset import Selection
from armbench.suites.teamassets import assets_hash, delivered_from, member_assets
from armbench.suites.teamtree import team_tree
from armbench.suites.validate import parse_aliases, validate_suite_dir

__all__ = ["SINGLE_REPO_MESSAGE", "dry_plan", "load_plan_input", "pulled_scorers", "rescore_inputs",
           "refuse_unreachable", "suite_scorers"]

SINGLE_REPO_MESSAGE = (
    "Benchmarks do not run in single-repo mode: the project's own commit decides which team "
    "assets a checkout has, so no arm can run on a team revision of its own. Start the benchmark "
    "from a checkout whose team has a team repo of its own."
)


def load_plan_input(checkout: Checkout, config: ProjectConfig, suite: str, *,
                    aliases: str = "team", check_remote: bool = True,
                    roles: list[str] | None = None) -> PlanInput:
    """The suite, its tasks and the aliases, as the last pull left them; `roles`, the member's
    roles and projects the run was started with (its `roles` input), else this config's."""
    roles = list(config.roles) if roles is None else roles
    if aliases not in ("team", "member"):
        raise Refusal(f'--aliases must be "team" or "member", not "{aliases}".',
                      code="invalid_inputs")
    source = resolve_source(config.team, checkout.root)  # refuses plain HTTP
    if _is_own_repo(source, checkout):
        raise Refusal(SINGLE_REPO_MESSAGE, code="team_ref_blocked")
    pulled = checkout.read_pull()
    if pulled is None:
        raise Refusal("This checkout has pulled no team revision yet. Run `armbench pull` and "
                      "start again.", code="not_pulled")
    remote = remote_refs(source, checkout.mirror) if check_remote else None
    if remote is not None and not reaches(remote, pulled.revision):
        raise Refusal(
            "Benchmarks start from the team revision this checkout last pulled, and it has "
            f"none that another machine can pull ({pulled.revision[:7]} is on no branch or "
            "tag of the team repo). Push any team changes, run armbench pull, and start "
            "again.", code="team_ref_blocked")
    cache = load_cache(checkout)
    cached = cache.suites.get(suite)
    if cached is None:
        raise Refusal(f'No valid suite "{suite}" was pulled into this checkout. Check '
                      f"benchmarks/{suite}/ in the team repo (armbench pull lists its problems), "
                      "push, pull, and start again.", code="suite_not_found")
    suite_dir = cache.dir_of(suite)
    files = verified_suite_files(cache, suite, mirror=checkout.mirror, pulled=pulled.revision,
                                 remote=remote)
    team_files = files_at(checkout.mirror, pulled.revision, "models")
    team_aliases, alias_text = _suite_aliases(team_files, cache.dir_of(suite))
    member_aliases = None
    if aliases == "member":
        member_file = armbench_home() / "models" / "aliases.yaml"
        if member_file.exists():
            member_aliases, member_text = _aliases(member_file.read_bytes(), str(member_file))
            # both files decide: the member's aliases win, the team's resolve the rest
            alias_text = b"".join(f"# {who}\n".encode() + text for who, text in
                                  (("team", alias_text), ("member", member_text)) if text)
    names = sorted((team_aliases.aliases if team_aliases else {}).keys())
    check = validate_suite_dir(files, suite_dir=suite_dir, aliases=names)
    _refuse_unpublishable(check.diagnostics, files.get(f"{suite_dir}/suite.yaml", b""))
    if check.suite is None or not check.valid:
        problems = "; ".join(render(d) for d in check.diagnostics if d.severity == "error")
        raise Refusal(f'Suite "{suite}" is not valid: {problems}', code="suite_invalid")
    suite_file = f"{suite_dir}/suite.yaml"
    arm_teams = resolve_arm_teams(suite=check.suite, suite_file=suite_file,
                                  suite_text=files[suite_file], mirror=checkout.mirror,
                                  revision=pulled.revision, roles=roles)
    arm_workflows = pin_arm_workflows(suite=check.suite, mirror=checkout.mirror,
                                      revision=pulled.revision, arm_teams=arm_teams, config=config)
    return PlanInput(
        arm_teams=arm_teams, arm_workflows=arm_workflows, roles=roles,
        arm_assets=_arm_assets(check.suite, arm_teams, checkout.mirror, pulled.revision, roles),
        environments=resolve_environments(check.suite, check.tasks, checkout, config),
        suite=check.suite, suite_hash=sha256(files[suite_file]),
        tasks=list(check.tasks), task_hashes={t.id: sha256(files[t.file]) for t in check.tasks},
        team_aliases=team_aliases, member_aliases=member_aliases,
        aliases_hash=sha256(alias_text) if alias_text else None,
        use_member_aliases=aliases == "member", team_revision=pulled.revision,
        suite_dir=suite_dir, suite_revision=cached,
        scorers=suite_scorers(check.suite, files_at(checkout.mirror, pulled.revision, "scorers"),
                              namespace_of(suite_dir)),
        private_network=config.workflows.isolation == "bubblewrap" and usernet.available())


def _arm_assets(suite: Suite, arm_teams: Mapping[str, PlannedTeam], mirror: Path, revision: str,
                roles: list[str]) -> dict[str, str]:
    """Arm name -> the hash of the team assets its trials get, read from the mirror at its team
    commit for `roles` (each commit and `without` list read once); none arms are left out."""
    found: dict[str, str] = {}
    read: dict[tuple[str, tuple[str, ...]], str] = {}
    for arm in resolve_arms(suite):
        if team_kind(arm.team) == "none":
            continue
        source = delivered_from(arm_teams.get(arm.name, PulledTeam(revision=revision)), revision)
        if source is None:
            continue
        if source not in read:
            commit, paths = source
            read[source] = assets_hash(member_assets(files_at(mirror, commit), roles, paths))
        found[arm.name] = read[source]
    return found


def pulled_scorers(checkout: Checkout, plan: PlanFrozen) -> dict[str, PlannedScorer]:
    """Each of the plan's team scorers as the scorer files this checkout last pulled have it: the
    plan's entry (its model and effort as resolved then) with the rubric, labels, scores and
    passing score of today's file (a scorer whose file is gone or no longer valid is left out)."""
    pulled = checkout.read_pull()
    if pulled is None:
        raise Refusal("This checkout has pulled no team revision yet. Run `armbench pull` and "
                      "try again.", code="not_pulled")
    files = files_at(checkout.mirror, pulled.revision, "scorers")
    paths = team_tree(files).scorers
    namespace = namespace_of(plan.suite_dir) if plan.suite_dir else None
    found: dict[str, PlannedScorer] = {}
    for entry in plan.scorers:
        path = scorer_file_of(entry.name, paths, namespace)
        scorer = parse_scorer(files[path], file=path, name=entry.name)[0] if path else None
        if scorer is not None:
            today = scorer_entry(scorer)
            found[entry.name] = msgspec.structs.replace(
                entry, rubric=today.rubric, labels=today.labels,
                passing_score=today.passing_score, text=today.text)
    return found


def rescore_inputs(checkout: Checkout, plan: PlanFrozen
                   ) -> tuple[dict[str, dict[str, float]], dict[str, PlannedScorer]]:
    """What `replay --rescore` takes from the scorer files last pulled: each scorer's label ->
    score mapping, and today's version of each scorer that asks its judge something else than
    the plan froze (`projections.labels.asks_again`: those are judged again)."""
    today = pulled_scorers(checkout, plan)
    frozen = {s.name: s for s in plan.scorers}
    scores = {name: {lb.value: lb.score for lb in s.labels} for name, s in today.items()}
    return scores, {name: s for name, s in today.items() if asks_again(frozen[name], s)}


def suite_scorers(suite: Suite, files: Mapping[str, bytes], namespace: str | None
                  ) -> list[ScorerFile]:
    """The suite's scorers from the pulled team revision, in suite order; a name with no valid
    scorer file refuses, naming the file and what is wrong with it."""
    found = []
    paths = team_tree(files).scorers
    for name in suite.scorers:
        path = scorer_file_of(name, paths, namespace)
        if path is None:
            raise Refusal(f'Suite "{suite.name}" names scorer "{name}", and the pulled team '
                          f"revision has no scorers/{name}.md. Add the scorer file (or remove the "
                          "name from the suite's scorers), push, pull and start again.",
                          code="scorer_not_found")
        scorer, diags = parse_scorer(files[path], file=path, name=name)
        if scorer is None:
            problems = "; ".join(render(d) for d in diags if d.severity == "error")
            raise Refusal(f'Suite "{suite.name}" names scorer "{name}", which is not valid: '
                          f"{problems}", code="scorer_invalid")
        found.append(scorer)
    return found


def _refuse_unpublishable(diagnostics: Sequence[Diagnostic], suite_text: bytes) -> None:
    """Refuse (arm_unpublishable) an arm value that looks like a URL or a path, naming the arm,
    its file and line: pull caches such a suite with its diagnostic, so this is where it stops."""
    found = [d for d in diagnostics if d.code == "arm_unpublishable"]
    if not found:
        return
    try:
        arms = (yaml.safe_load(suite_text) or {}).get("arms") or []
    except yaml.YAMLError:
        arms = []
    said = []
    for d in found:
        index = re.match(r"\$\.arms\[(\d+)\]", d.path or "")
        arm = arms[int(index[1])] if index and int(index[1]) < len(arms) else None
        who = f'Arm "{arm.get("name")}"' if isinstance(arm, dict) else "The suite's defaults"
        said.append(f"{who} ({d.file}:{d.line}): {d.message.rstrip('.')}")
    raise Refusal("; ".join(said) + ". No run was started: fix the suite file, push, pull and "
                  "start again.", code="arm_unpublishable")


def _is_own_repo(source: str, checkout: Checkout) -> bool:
    """Whether the team repo is the project checkout's own repository (single-repo mode)."""
    path = source.removeprefix("file://")
    if "://" in path or source.startswith("git@"):
        return False
    team = git_dir_of(path)
    own = git_dir_of(str(checkout.root))
    return team is not None and own is not None and _common_dir(team) == _common_dir(own)


def _common_dir(gitdir: str) -> Path:
    """A git dir's shared repository: a worktree's `commondir`, else the git dir itself."""
    pointer = Path(gitdir) / "commondir"
    shared = Path(gitdir) / pointer.read_text().strip() if pointer.is_file() else Path(gitdir)
    return shared.resolve()


def _aliases(text: bytes | None, file: str) -> tuple[Aliases | None, bytes | None]:
    """A team's aliases file parsed, with its text; a refusal naming each problem when it is not valid."""
    if text is None:
        return None, None
    value, diags = parse_aliases(text, file=file)
    if value is None or has_errors(diags):
        problems = "; ".join(render(d) for d in diags)
        raise Refusal(f"{file} is not valid: {problems}", code="aliases_invalid")
    return value, text


def _suite_aliases(files: dict[str, bytes], suite_dir: str) -> tuple[Aliases | None, bytes | None]:
    """The team's aliases for a suite (its namespace's file over the shared one) and the text to hash."""
    namespace = namespace_of(suite_dir)
    present_files = team_tree(files).aliases
    layers, texts = {}, {}
    for file in alias_files(namespace):
        layers[file], texts[file] = _aliases(files[file] if file in present_files else None, file)
    present = {file: text for file, text in texts.items() if text is not None}
    if len(present) < 2:  # one file hashes as its bytes, as before namespaces
        return suite_aliases(layers, namespace), next(iter(present.values()), None)
    return suite_aliases(layers, namespace), b"".join(f"# {f}\n".encode() + t for f, t in present.items())


def dry_plan(checkout: Checkout, config: ProjectConfig, suite: str, *, aliases: str = "team",
             cache: CommitCache | None = None, selection: Selection | None = None
             ) -> tuple[PlanFrozen, list[StepSpec]]:
    """The plan a run would freeze now (of the `selection`'s subset, when one is given); a
    refusal means no run may start. Every task's startingCommit and source.fix must be in the
    checkout or fetchable from the suite's repo."""
    plan_input = load_plan_input(checkout, config, suite, aliases=aliases)
    frozen = freeze(plan_input, selection)
    refuse_unreachable(plan_input, checkout.root,
                       cache or CommitCache(armbench_home() / "cache" / "commits"))
    return frozen


def refuse_unreachable(plan_input: PlanInput, checkout: Path, cache: CommitCache) -> None:
    """Refuse (commit_unreachable) a task commit neither the checkout nor the suite's repo has.

    The commit cache answers: a suite whose commits are all in the checkout costs a lookup per
    commit; a missing one is fetched by SHA into the cache, where the run's clones find it.
    """
    wanted: dict[str, list[tuple[str, str, str]]] = {}
    for entry in plan_input.tasks:
        task = entry.task
        wanted.setdefault(task.starting_commit, []).append((entry.id, entry.file, "startingCommit"))
        if task.source is not None and task.source.fix:
            wanted.setdefault(task.source.fix, []).append((entry.id, entry.file, "source.fix"))
    try:
        cache.source_for(plan_input.suite.repo, list(wanted), checkout)
    except CommitUnreachable as error:
        raise Refusal(_unreachable_message(error, wanted.get(error.sha, [])),
                      code="commit_unreachable") from None


def _unreachable_message(error: CommitUnreachable, uses: list[tuple[str, str, str]]) -> str:
    named = "; ".join(f'task "{task}" ({file}) has it as {key}' for task, file, key in uses)
    named = named[:1].upper() + named[1:]
    keys = " or ".join(sorted({key for _, _, key in uses})) or "the commit"
    if isinstance(error, RemoteUnreachable):
        return (f"Commit {error.sha} is not in this checkout, and the suite's repo could not be "
                f"reached to fetch it ({error.found}). {named}. Check the suite's repo, the network "
                "and your git credentials for it, or plan in a checkout that has the commit. No "
                "run was started.")
    return (f"Commit {error.sha} is in neither this checkout nor the suite's repo {error.repo} "
            f"(it does not have it, or does not serve it by SHA). {named}. Push the commit to "
            f"{error.repo}, or fix {keys} in the task file, push the team repo and pull. No run "
            "was started.")
