"""The tools a run launches: its trials' agents and its judge, one mapping per run and process.

Every process that can launch a tool for a run (the local driver of `run`, `resume` and `work`,
`workflow next --prepare` running a judge step, `workflow launch`, `workflow serve`, `judge
calibrate`) gets its tools here, from the composition root (`cli/compose.py`), so a judge step
launches the same tools whichever driver reached it. A name is the team's valid command tool of
that name at the run's team revision, else the agent CLI of that name on PATH; each is made the
first time it is asked for, so a process that launches one tool exports only that one.

Under bubblewrap a team tool's read-only folder is exported once per run and revision and reused
by every later process (made under a temporary name and renamed, so none sees it half written;
every step sees it read-only, so no trial can change it). Under declared isolation a trial could
write it, so each mapping (one a process) gets its own copy. Composition: next to `run.py`.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import msgspec

from armbench.benchmark.agents import ADAPTERS, builtin_tools
from armbench.benchmark.agents.base import ToolAdapter
from armbench.benchmark.trials.workfolder import work_root
from armbench.edge.config import Checkout, armbench_home_in_home
from armbench.edge.sandbox import Sandbox
from armbench.ledger.errors import Refusal
from armbench.ledger.events import PlanFrozen
from armbench.ledger.store import EventStore

__all__ = ["CREDENTIAL_CODES", "RunTools", "refuse_secret_credentials", "run_tools"]

CREDENTIAL_CODES = ("tool_credentials_path", "tool_credentials_secret")


class _ToolCopy(msgspec.Struct, frozen=True, kw_only=True):
    """What is kept beside a command tool's exported folder."""

    run: str | None
    """tool.yaml's `run:` (None: the team has no valid tool of this name at the revision)."""
    credentials: list[str] = []
    """tool.yaml's `credentials`."""


class RunTools(Mapping[str, ToolAdapter]):
    """A run's tools by name, each made when first asked for (thread-safe: lanes share it).

    `plan` gives the run's frozen plan once it has one: the tools are read at its team revision
    and their sandbox names the clone after its repo; before it (a local driver's capabilities,
    asked before the plan step runs) the names are read at the revision last pulled."""

    def __init__(self, checkout: Checkout, run: str, sandbox: Sandbox,
                 plan: Callable[[], PlanFrozen | None]) -> None:
        self.checkout, self.run, self._sandbox, self._plan = checkout, run, sandbox, plan
        self._made: dict[str, ToolAdapter | None] = {}
        self._names: tuple[str, ...] | None = None
        self._lock = threading.RLock()
        self._own = secrets.token_hex(4)
        """This mapping's own copies' suffix, under declared isolation."""

    def _where(self) -> tuple[str, Sandbox]:
        """The team revision and the sandbox the run's tools start in."""
        plan = self._plan()
        if plan is not None:
            return (plan.baseline_team_revision,
                    self._sandbox.of_repo(plan.repo, self.checkout.root))
        pulled = self.checkout.read_pull()
        if pulled is None:
            from armbench.ledger.errors import Refusal

            raise Refusal(f"Run {self.run} has no plan yet and this checkout was never pulled, "
                          "so its team tools cannot be read. Run `armbench pull`.",
                          code="not_pulled")
        return pulled.revision, self._sandbox

    def __getitem__(self, name: str) -> ToolAdapter:
        with self._lock:
            if name not in self._made:
                self._made[name] = self._make(name)
            got = self._made[name]
        if got is None:
            raise KeyError(name)
        return got

    def __iter__(self) -> Iterator[str]:
        return iter(self._listed())

    def __len__(self) -> int:
        return len(self._listed())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._listed()

    def _listed(self) -> tuple[str, ...]:
        """Every name this mapping has: the team's valid tools and the CLIs on PATH."""
        with self._lock:
            if self._names is None:
                from armbench.edge.team import files_at
                from armbench.suites.teamtree import team_tree

                revision, sandbox = self._where()
                files = files_at(self.checkout.mirror, revision, "tools")
                team = [f for f in team_tree(files).tools if self._team_tool(f, revision, files)]
                builtin = builtin_tools(self._scratch, sandbox)
                self._names = tuple(dict.fromkeys([*team, *builtin]))
            return self._names

    @property
    def _scratch(self) -> Path:
        return work_root(self.run) / "scratch"

    def _make(self, name: str) -> ToolAdapter | None:
        """The team's valid command tool of that name, else the agent CLI on PATH, else None."""
        if not name or name.startswith(".") or "/" in name or "\\" in name:
            return None
        revision, sandbox = self._where()
        copy = self._team_tool(name, revision)
        if copy is not None:
            from armbench.benchmark.agents.command import CommandTool

            folder, tool = copy
            return CommandTool(name, tool.run or "", folder / name, sandbox, tool.credentials)
        adapter = next((cls for cls in ADAPTERS if cls.name == name), None)
        if adapter is None:
            return None
        return builtin_tools(self._scratch, sandbox).get(name)

    def _team_tool(self, name: str, revision: str,
                   files: dict[str, bytes] | None = None) -> tuple[Path, _ToolCopy] | None:
        """The team's tool of that name exported (once), or None when it has no valid one."""
        reuse = self._sandbox.isolation == "bubblewrap"
        tools = work_root(self.run) / "tools"
        kept = tools / (f"{name}@{revision}" if reuse else f"{name}@{revision}.{self._own}")
        try:
            folder = kept
            copy = msgspec.json.decode((kept / "tool.json").read_bytes(), type=_ToolCopy)
        except (OSError, msgspec.DecodeError):
            folder, copy = self._export(name, revision, files, tools, kept)
        return (folder, copy) if copy.run is not None else None

    def _export(self, name: str, revision: str, files: dict[str, bytes] | None, tools: Path,
                kept: Path) -> tuple[Path, _ToolCopy]:
        from armbench.benchmark.agents.command import export_tool_dir
        from armbench.edge.team import files_at
        from armbench.suites.diagnostics import has_errors
        from armbench.suites.validate import parse_tool

        prefix = f"tools/{name}/"
        if files is None:
            files = files_at(self.checkout.mirror, revision, prefix)
        mine = {p: b for p, b in files.items() if p.startswith(prefix)}
        path = f"{prefix}tool.yaml"
        tool, diags = parse_tool(mine[path], file=path, folder_name=name,
                                 armbench_home=armbench_home_in_home()) if path in mine \
            else (None, [])
        valid = tool is not None and not has_errors(diags)
        made = tools / f".{name}@{revision}.{secrets.token_hex(4)}"
        made.mkdir(parents=True)
        if valid:
            export_tool_dir(mine, name, made)
        copy = _ToolCopy(run=tool.run if valid and tool else None,
                         credentials=list(tool.credentials) if valid and tool else [])
        (made / "tool.json").write_bytes(msgspec.json.encode(copy))
        try:
            os.rename(made, kept)  # another process may have made it first: the same files
        except OSError:
            return made, copy
        return kept, copy


def run_tools(store: EventStore, checkout: Checkout, sandbox: Sandbox,
              ) -> Callable[[str], Mapping[str, ToolAdapter]]:
    """`tools(run)`: each run's tools, one mapping per run for this process (the composition
    root hands the same function to the host, for its judge steps, and to every driver)."""
    made: dict[str, RunTools] = {}
    lock = threading.Lock()

    def plan_of(run: str) -> Callable[[], PlanFrozen | None]:
        found: list[PlanFrozen] = []

        def plan() -> PlanFrozen | None:
            if not found:
                got = store.events(run, kinds=(PlanFrozen,))
                found.extend(e for e in got[:1] if isinstance(e, PlanFrozen))
            return found[0] if found else None
        return plan

    def tools(run: str) -> Mapping[str, ToolAdapter]:
        with lock:
            if run not in made:
                made[run] = RunTools(checkout, run, sandbox, plan_of(run))
            return made[run]
    return tools


def refuse_secret_credentials(checkout: Checkout, plan: PlanFrozen) -> None:
    """Refuse (tool_credentials_refused) a plan whose arms or judge use a team tool whose
    `credentials` name a secret of the home or leave it (`suites.credentials`), naming each
    path's file and line: pull cached the suite with its diagnostic, so this is where it stops."""
    from armbench.edge.team import files_at
    from armbench.suites.diagnostics import render
    from armbench.suites.validate import parse_tool

    used = {*(a.tool for a in plan.arms), *([plan.judge.tool] if plan.judge else [])}
    files = files_at(checkout.mirror, plan.baseline_team_revision, "tools")
    found = []
    for name in sorted(used):
        path = f"tools/{name}/tool.yaml"
        if path in files:
            diags = parse_tool(files[path], file=path, folder_name=name,
                               armbench_home=armbench_home_in_home())[1]
            found += [render(d) for d in diags if d.code in CREDENTIAL_CODES]
    if found:
        raise Refusal("; ".join(found) + " No run was started: fix the tool file, push, pull "
                      "and start again.", code="tool_credentials_refused")
