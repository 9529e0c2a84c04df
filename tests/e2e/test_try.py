"""`armbench try`: every row of the spec's table, word for word, with its exit code and envelope.

A tiny bash project: `start` has the bug (`answer` prints 41), `fix` fixes it and brings the
hidden test `test/answer.sh`. The team folder is plain files, read as written (no init, no pull).
Most tries run the typer app in process (the installed command costs seconds of imports each);
`test_the_installed_command_...` runs the installed `armbench` itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from armbench.cli.main import app
from e2e.conftest import ARMBENCH, WITHHELD, base_env, dump, git, parse_envelope, write_files

pytestmark = pytest.mark.e2e

REPO_URL = "https://example.invalid/try/calc"
FLAKY_END = ("A flaky check makes every trial's result a coin toss: make it deterministic before the "
             "task joins the suite.")
HIDDEN = {"run": "test -f test/answer.sh && bash test/answer.sh", "protect": ["test/**"]}
ANSWERS_42 = '. ./lib.sh && [ "$(answer)" = 42 ]'


@dataclass
class Bed:
    """A checkout (main at `fix`), a team folder beside it, and `out/` for evidence."""

    checkout: Path
    team: Path
    out: Path
    start: str
    fix: str

    def suite(self, **fields: Any) -> None:
        body = {"schemaVersion": "v1alpha1", "name": "calc", "repo": REPO_URL,
                "defaults": {"tool": "claude"}, "arms": [{"name": "base"}], "timeout": "5m",
                "setup": 'echo setup >> "$TRY_OUT/setups"'}
        body = {k: v for k, v in {**body, **fields}.items() if v is not None}
        write_files(self.team, {"benchmarks/calc/suite.yaml": dump(body)})

    def task(self, task_id: str, check: dict[str, Any] | None = None, *, fix: str | None = None,
             start: str | None = None, **fields: Any) -> str:
        body: dict[str, Any] = {"schemaVersion": "v1alpha1", "title": task_id, "prompt": "Fix answer.\n",
                                "startingCommit": start or self.start}
        if check is not None:
            body["check"] = check
        if fix is not None:
            body["source"] = {"fix": fix}
        rel = f"benchmarks/calc/tasks/{task_id}.yaml"
        write_files(self.team, {rel: dump({**body, **fields})})
        return f"../team/{rel}"

    def status(self) -> str:
        return git(self.checkout, "status", "--porcelain", "--untracked-files=all", "--ignored")

    def setups(self) -> int:
        path = self.out / "setups"
        return len(path.read_text().splitlines()) if path.exists() else 0


def make_bed(root: Path) -> Bed:
    checkout, team, out = root / "calc", root / "team", root / "out"
    out.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main", str(checkout))
    write_files(checkout, {"lib.sh": "answer() { echo 41; }\n", "test/old.sh": "exit 0\n",
                           "README.md": "calc\n"})
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "start: answer is off by one")
    start = git(checkout, "rev-parse", "HEAD")
    write_files(checkout, {"lib.sh": "answer() { echo 42; }\n",
                           "test/answer.sh": f"{ANSWERS_42}\n"})
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "fix: answer is 42, with a test")
    write_files(team, {"armbench.yaml": dump({"schemaVersion": "v1alpha1"})})
    bed = Bed(checkout=checkout, team=team, out=out, start=start, fix=git(checkout, "rev-parse", "HEAD"))
    bed.suite()
    return bed


@pytest.fixture
def bed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Bed:
    made = make_bed(tmp_path / "w")
    home, scratch = tmp_path / "home", tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.chdir(made.checkout)
    monkeypatch.setenv("TRY_OUT", str(made.out))
    monkeypatch.setenv("ARMBENCH_SANDBOX_WRITE", str(made.out))  # where setups and checks leave evidence
    monkeypatch.setenv("ARMBENCH_HOME", str(home))
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    return made


def try_(bed: Bed, *args: str) -> tuple[int, dict[str, Any], str]:
    """Run `armbench try` in process; assert it left the checkout, ~/.armbench and tmp as they were."""
    before = bed.status()
    result = CliRunner().invoke(app, ["try", *args], catch_exceptions=False)
    envelope = json.loads(result.stdout)
    assert result.stdout.count("\n") == 1, result.stdout
    assert bed.status() == before
    assert not (bed.checkout / ".armbench").exists()
    assert not Path(os.environ["ARMBENCH_HOME"]).exists()
    assert os.listdir(tempfile.gettempdir()) == []
    return result.exit_code, envelope, result.stderr


def ok(task: str, message: str) -> dict[str, Any]:
    return {"data": {"try": {"task": task, "message": message}}}


def failed(message: str) -> dict[str, Any]:
    return {"error": {"code": "task_try_failed", "message": message}}


def test_startup_fails_at_the_start_and_passes_at_the_fix_with_the_hidden_test(bed: Bed) -> None:
    task = bed.task("startup", {**HIDDEN, "add": ["test/answer.sh"]}, fix=bed.fix)
    code, envelope, stderr = try_(bed, task)
    s, f = bed.start[:7], bed.fix[:7]
    assert (code, envelope) == (0, ok("startup", f'Task "startup": the check fails at {s} and passes at '
                                      f"the fix {f}, with the protected paths as {s} has them."))
    assert f"Task startup: trying the check at {s}\n" in stderr
    assert f"Task startup: trying the check at the fix {f}\n" in stderr
    assert bed.setups() == 2


def test_no_fix_fails_at_the_start_as_expected(bed: Bed) -> None:
    task = bed.task("no-fix", {"run": ANSWERS_42, "protect": ["test/**"]})
    assert try_(bed, task)[:2] == (0, ok("no-fix", f'Task "no-fix": the check fails at {bed.start[:7]}, as '
                                   "the task expects. The task has no source.fix, so the check was not "
                                   "tried on a fix."))


def test_old_bug_passes_without_changes_and_the_fix_is_not_tried(bed: Bed) -> None:
    task = bed.task("old-bug", {"run": ANSWERS_42, "protect": ["test/**"]}, start=bed.fix)
    code, envelope, stderr = try_(bed, task)
    assert (code, envelope) == (1, failed(
        f'Task "old-bug": the check passes without changes at {bed.fix[:7]}, so it cannot tell a fix '
        "from no change. Pick a startingCommit where the check fails, or fix the check."))
    assert "trying the check at the fix" not in stderr and bed.setups() == 1


def test_bad_fix_names_the_protected_file_the_fix_changed_that_add_does_not_list(bed: Bed) -> None:
    task = bed.task("bad-fix", HIDDEN, fix=bed.fix)
    s, f = bed.start[:7], bed.fix[:7]
    assert try_(bed, task)[:2] == (1, failed(
        f'Task "bad-fix": the check fails at the fix {f} (exit 1), with the protected paths as {s} has '
        f"them. The fix changes test/answer.sh, which protect puts back as {s} has them: list a test "
        "the fix brought in check.add."))


def test_bad_fix_without_a_changed_protected_file_says_only_the_first_sentence(bed: Bed) -> None:
    task = bed.task("bad-fix", {"run": '. ./lib.sh && [ "$(answer)" = 43 ]', "protect": ["docs/**"]},
                    fix=bed.fix)
    assert try_(bed, task)[:2] == (1, failed(
        f'Task "bad-fix": the check fails at the fix {bed.fix[:7]} (exit 1), with the protected paths as '
        f"{bed.start[:7]} has them."))


def test_bad_fix_shows_the_tail_of_what_the_check_printed_at_the_fix(bed: Bed) -> None:
    """The cause a person needs (an import error, a missing module) is in the check's output:
    `try` shows its last lines, where only `explain` of a run did before."""
    run = ('echo "Traceback (most recent call last):"; echo "ModuleNotFoundError: No module named '
           "'calc'\"; . ./lib.sh && [ \"$(answer)\" = 43 ]")
    task = bed.task("bad-fix-tail", {"run": run, "protect": ["docs/**"]}, fix=bed.fix)
    code, _, stderr = try_(bed, task)
    assert code == 1
    lines = stderr.splitlines()
    at = lines.index(f"The check's last 2 lines at the fix {bed.fix[:7]}:")
    assert lines[at + 1:at + 3] == ["  | Traceback (most recent call last):",
                                    "  | ModuleNotFoundError: No module named 'calc'"]


def test_add_missing_stops_at_the_start_after_setup_naming_the_full_fix(bed: Bed) -> None:
    task = bed.task("add-missing", {**HIDDEN, "add": ["test/missing.sh"]}, fix=bed.fix)
    code, envelope, stderr = try_(bed, task)
    assert (code, envelope) == (1, failed(
        f'Task "add-missing" could not be tried at {bed.start[:7]}: check.add path test/missing.sh is not '
        f"a file at the fix {bed.fix}. List files the fix has in check.add, or fix source.fix."))
    assert bed.setups() == 1 and "trying the check at the fix" not in stderr


def test_typo_could_not_run_names_the_command_and_the_cause(bed: Bed) -> None:
    task = bed.task("typo", {"run": "armbench-no-such-vitest run", "protect": ["test/**"]}, fix=bed.fix)
    code, envelope, stderr = try_(bed, task)
    assert (code, envelope) == (1, failed(
        f'Task "typo": the check "armbench-no-such-vitest run" could not run at {bed.start[:7]} '
        "(not_found). Make the command runnable after setup there, or fix check.run."))
    assert "command not found" in stderr


def test_criteria_only_has_no_check_to_try_and_its_files_are_valid(bed: Bed) -> None:
    task = bed.task("criteria-only", successCriteria="answer prints 42.")
    message = ('Task "criteria-only" is judged by successCriteria, so there is no check to try. '
               "Its files are valid.")
    assert try_(bed, task)[:2] == (0, ok("criteria-only", message))
    assert bed.setups() == 0


def test_setup_runs_before_add_is_written_so_add_wins(bed: Bed) -> None:
    bed.suite(setup='echo "exit 0" > test/answer.sh')
    task = bed.task("startup", {**HIDDEN, "add": ["test/answer.sh"]}, fix=bed.fix)
    assert try_(bed, task)[0] == 0


def test_a_failing_setup_names_the_commit_and_its_exit(bed: Bed) -> None:
    bed.suite(setup="echo broken >&2; exit 3")
    task = bed.task("startup", {**HIDDEN, "add": ["test/answer.sh"]}, fix=bed.fix)
    code, envelope, stderr = try_(bed, task)
    assert (code, envelope) == (1, failed(
        f'Task "startup": setup "echo broken >&2; exit 3" did not succeed at {bed.start[:7]} (exit 3). '
        "Make it succeed in a fresh clone there, or fix setup in suite.yaml."))
    assert "  | broken" in stderr


def test_setup_and_the_check_run_without_the_withheld_variables(bed: Bed,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    for name in WITHHELD:
        monkeypatch.setenv(name, "secret")
    bed.suite(setup='env > "$TRY_OUT/setup.env"')
    task = bed.task("startup", {**HIDDEN, "run": 'env > "$TRY_OUT/check.env"; ' + HIDDEN["run"],
                                "add": ["test/answer.sh"]}, fix=bed.fix)
    assert try_(bed, task)[0] == 0
    for dump_file in ("setup.env", "check.env"):
        names = {line.split("=", 1)[0] for line in (bed.out / dump_file).read_text().splitlines()}
        assert "TRY_OUT" in names and names.isdisjoint(WITHHELD), dump_file


def test_a_commit_the_checkout_lacks_is_fetched_from_the_suite_repo_into_a_temporary_cache(
        bed: Bed, tmp_path: Path) -> None:
    upstream = bed.checkout
    member = tmp_path / "member"
    git(tmp_path, "clone", "-q", "--no-local", str(upstream), str(member))
    write_files(upstream, {"lib.sh": "answer() { echo 42; }  # later\n"})
    git(upstream, "commit", "-qam", "a later fix the member has not fetched")
    later = git(upstream, "rev-parse", "HEAD")
    bed.checkout = member
    os.chdir(member)
    bed.suite(repo=str(upstream))
    task = bed.task("startup", {**HIDDEN, "add": ["test/answer.sh"]}, fix=later)
    code, envelope, _ = try_(bed, task.replace("../team/", f"{bed.team}/"))
    assert code == 0, envelope
    assert git(member, "cat-file", "-t", later, check=False) == ""


def test_a_commit_found_nowhere_names_the_key_and_the_repo(bed: Bed) -> None:
    task = bed.task("gone", {**HIDDEN, "add": ["test/answer.sh"]}, fix="0" * 40)
    assert try_(bed, task)[:2] == (1, failed(
        f'Task "gone" could not be tried: its source.fix {"0" * 40} is in neither this checkout nor '
        f"{REPO_URL}. Run armbench try in a checkout of the suite's repo, push the commit there, or fix "
        "source.fix."))


def test_invalid_files_are_reported_as_pull_reports_them_with_file_and_line(bed: Bed) -> None:
    bed.suite(timeout=None)
    write_files(bed.team, {"benchmarks/calc/tasks/startup.yaml": (
        "schemaVersion: v1alpha1\ntitle: startup\nprompt: Fix answer.\nstartingCommit: abc123\n"
        "check: {run: 'true', protect: [test/**]}\n")})
    code, envelope, _ = try_(bed, "../team/benchmarks/calc/tasks/startup.yaml")
    lines = envelope["error"]["message"].splitlines()
    assert code == 1 and envelope["error"]["code"] == "task_try_failed"
    assert lines[0] == ('Task "startup" could not be tried: its files are not valid, as pull would '
                        "report them:")
    assert lines[1].startswith("../team/benchmarks/calc/suite.yaml:") and "timeout" in lines[1]
    assert lines[2].startswith("../team/benchmarks/calc/tasks/startup.yaml:4: error: startingCommit:")
    assert bed.setups() == 0


def test_a_file_outside_a_tasks_folder_is_not_a_task_file(bed: Bed) -> None:
    write_files(bed.team, {"benchmarks/calc/startup.yaml": "title: x\n"})
    code, envelope, _ = try_(bed, "../team/benchmarks/calc/startup.yaml")
    assert code == 1 and "is not a tasks/<id>.yaml file of a suite directory" in envelope["error"]["message"]


def test_a_from_to_add_entry_is_written_from_the_suite_folder_as_written_as_a_run_writes_it(
        bed: Bed) -> None:
    """The suite folder's file (uncommitted: try reads the files as written) replaces the protected
    test/ at the fix, so the check passes there only because try wrote it."""
    write_files(bed.team, {"benchmarks/calc/hidden/answer.sh":
                           f'echo suite >> "$TRY_OUT/suite-add"; {ANSWERS_42}\n'})
    task = bed.task("from-to", {**HIDDEN, "add": [{"from": "hidden/answer.sh", "to": "test/answer.sh"}]},
                    fix=bed.fix)
    code, envelope, _ = try_(bed, task)
    s, f = bed.start[:7], bed.fix[:7]
    assert (code, envelope) == (0, ok("from-to", f'Task "from-to": the check fails at {s} and passes at '
                                      f"the fix {f}, with the protected paths as {s} has them."))
    assert (bed.out / "suite-add").read_text() == "suite\nsuite\n"  # at the start and at the fix


def test_a_from_to_add_entry_the_suite_folder_lacks_stops_the_try_naming_the_file(bed: Bed) -> None:
    task = bed.task("from-to", {**HIDDEN, "add": [{"from": "hidden/answer.sh", "to": "test/answer.sh"}]},
                    fix=bed.fix)
    code, envelope, _ = try_(bed, task)
    missing = bed.team.resolve() / "benchmarks/calc/hidden/answer.sh"
    assert (code, envelope) == (1, failed(
        f'Task "from-to" could not be tried at {bed.start[:7]}: check.add reads {missing} from the suite '
        "folder, and there is no file there. Add it, or fix the entry's `from`."))


FLIPS = ('if ' + ANSWERS_42 + '; then exit 0; fi; n=$(cat "$TRY_OUT/flips" 2>/dev/null || echo 0); '
         'echo $((n + 1)) > "$TRY_OUT/flips"; [ $((n % 2)) = 1 ]')
"""Passes at the fix; before it, fails and passes in turn (a counter kept outside every clone)."""


def test_repeat_reports_a_check_that_disagrees_with_itself_as_flaky(bed: Bed) -> None:
    task = bed.task("flaky", {"run": FLIPS, "protect": ["test/**"]}, fix=bed.fix)
    code, envelope, stderr = try_(bed, "--repeat", "5", task)
    s, f = bed.start[:7], bed.fix[:7]
    assert (code, envelope) == (1, failed(
        f'Task "flaky": the check is flaky: at {s} it failed 3 of 5 times and passed 2; at the fix {f} it '
        f"passed 5 of 5. {FLAKY_END}"))
    assert f"trying the check at {s} (5 of 5)" in stderr and bed.setups() == 10


def test_repeat_adds_the_counts_to_a_stable_task_s_row(bed: Bed) -> None:
    task = bed.task("startup", {**HIDDEN, "add": ["test/answer.sh"]}, fix=bed.fix)
    code, envelope, _ = try_(bed, "--repeat", "3", task)
    s, f = bed.start[:7], bed.fix[:7]
    assert (code, envelope) == (0, ok("startup", f'Task "startup": the check fails at {s} and passes at the '
                                      f"fix {f}, with the protected paths as {s} has them. It gave the same "
                                      f"result every time: at {s} it failed 3 of 3; at the fix {f} it "
                                      "passed 3 of 3."))
    assert bed.setups() == 6


def test_a_check_whose_runner_reads_files_protect_leaves_open_is_warned_with_the_fix(bed: Bed) -> None:
    run = "bash test/answer.sh || (command -v pytest >/dev/null && pytest -q test/py)"
    task = bed.task("weak", {**HIDDEN, "run": run, "add": ["test/answer.sh"]}, fix=bed.fix)
    code, _, stderr = try_(bed, task)
    assert code == 0, stderr
    assert (f"{task}:9: warning: check.protect: the check runs pytest, which reads `conftest.py`, "
            "`pytest.ini`, `.pytest.ini`, `pyproject.toml`, `setup.cfg` and `tox.ini` (paths from "
            "the repo root); protect does not cover them") in stderr
    assert "Add them to check.protect" in stderr


def test_repeat_must_be_at_least_one(bed: Bed) -> None:
    result = CliRunner().invoke(app, ["try", "--repeat", "0", "x.yaml"])
    assert result.exit_code == 2 and json.loads(result.stdout)["error"]["code"] == "invalid_inputs"


def test_the_installed_command_needs_no_init_and_leaves_the_checkout_as_it_was(bed: Bed) -> None:
    task = bed.task("startup", {**HIDDEN, "add": ["test/answer.sh"]}, fix=bed.fix)
    env = base_env(Path(os.environ["ARMBENCH_HOME"]), bed.out) | {"TRY_OUT": str(bed.out)}
    before = bed.status()
    done = subprocess.run([str(ARMBENCH), "try", task], cwd=bed.checkout, env=env, text=True,
                          capture_output=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1 and parse_envelope(done.stdout) == ok("startup", (
        f'Task "startup": the check fails at {bed.start[:7]} and passes at the fix {bed.fix[:7]}, with '
        f"the protected paths as {bed.start[:7]} has them."))
    assert f"Task startup: trying the check at {bed.start[:7]}\n" in done.stderr
    assert bed.status() == before and not (bed.checkout / ".armbench").exists()
    assert not Path(os.environ["ARMBENCH_HOME"]).exists()
