"""run_step on real processes: withheld variables, timeouts, cancels, exit causes, and no leftovers."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from armbench.edge.proc import TAIL_BYTES, WITHHELD, ProcResult, run_step, step_env
from armbench.edge.proc_sweep import is_subreaper

BASE = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/root", "LANG": "C.UTF-8"}
LEFTOVER = "echo $$ > started; sleep 1.5; echo pwned > pwned\n"
LAUNCHES = {
    "background": "sh ./leftover.sh &",
    "nohup": "nohup sh ./leftover.sh >/dev/null 2>&1 &",
    "setsid": "setsid sh ./leftover.sh &",
    "double-fork": "( ( sh ./leftover.sh ) & ) &",
    "cleared-env-under-live-parent": (
        "setsid sh -c 'setsid env -i PATH=/usr/bin:/bin sh ./leftover.sh; true' &"
    ),
    "cleared-env-seen-while-running": "setsid env -i PATH=/usr/bin:/bin sh ./leftover.sh & sleep 0.8",
}


def _env(**extra: str) -> dict[str, str]:
    """An ordinary step environment."""
    return step_env(BASE, withhold=WITHHELD, extra=extra)


def _alive(pid: int) -> bool:
    """Whether pid names a process that is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] not in (b"Z", b"X")


def _zombie_children() -> set[int]:
    """Zombies whose parent is this test process."""
    found = set()
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] == b"Z" and int(fields[1]) == os.getpid():
            found.add(int(name))
    return found


def _wait_for(path: Path, timeout_s: float = 5.0) -> None:
    """Block until path exists, or fail."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        assert time.monotonic() < deadline, f"expected {path} to appear within {timeout_s} s"
        time.sleep(0.02)


def _in_thread(command: str, **kwargs: Any) -> tuple[threading.Thread, list[ProcResult]]:
    """Run run_step in a thread; its result lands in the returned list."""
    out: list[ProcResult] = []
    thread = threading.Thread(target=lambda: out.append(run_step(command, **kwargs)))
    thread.start()
    return thread, out


def test_step_env_drops_withheld_location_and_git_variables() -> None:
    base = {**BASE, **dict.fromkeys(WITHHELD, "secret"), "PWD": "/member", "OLDPWD": "/member/x"}
    base |= {"GIT_DIR": "/m/.git", "GIT_WORK_TREE": "/m", "GIT_INDEX_FILE": "/m/i", "GIT_NAMESPACE": "n"}
    base |= {"GIT_OBJECT_DIRECTORY": "/o", "GIT_ALTERNATE_OBJECT_DIRECTORIES": "/a"}
    base |= {
        "GIT_CONFIG_GLOBAL": "/g",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "k",
        "GIT_AUTHOR_NAME": "a",
    }

    env = step_env(base, withhold=WITHHELD, extra={"HOME": "/trial-home"})

    assert env == {**BASE, "HOME": "/trial-home", "GIT_AUTHOR_NAME": "a"}


def test_withheld_variables_never_reach_the_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARMBENCH_CALLER_ONLY", "1")
    base = {**BASE, **dict.fromkeys(WITHHELD, "secret"), "ORDINARY_VAR": "passes", "PWD": os.getcwd()}
    env = step_env({**base, "GIT_DIR": "/member/.git"}, withhold=WITHHELD, extra={})

    result = run_step("env", cwd=tmp_path, env=env)

    inside = dict(line.split("=", 1) for line in result.stdout_tail.decode().splitlines())
    assert result.cause == "ok"
    assert [name for name in (*WITHHELD, "GIT_DIR", "ARMBENCH_CALLER_ONLY") if name in inside] == []
    assert inside["ORDINARY_VAR"] == "passes"
    assert inside["PWD"] == os.path.realpath(tmp_path) != os.getcwd()


@pytest.mark.slow
def test_timeout_kills_the_group_quickly(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_step("sleep 30 & echo $! > sleep.pid; wait", cwd=tmp_path, env=_env(), timeout_s=0.5)

    assert time.monotonic() - started < 15  # far below the 30 s sleep: the timeout stopped it
    assert (result.cause, result.timed_out, result.exit_code) == ("timeout", True, None)
    assert not Path(f"/proc/{(tmp_path / 'sleep.pid').read_text().strip()}").exists()


@pytest.mark.slow  # waits out the grace period
def test_timeout_escalates_to_sigkill_when_sigterm_is_ignored(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_step(
        "trap '' TERM; sleep 30 & echo $! > sleep.pid; wait", cwd=tmp_path, env=_env(), timeout_s=0.2
    )

    assert 2 <= time.monotonic() - started < 15  # the grace, then SIGKILL: not the 30 s sleep
    assert (result.cause, result.signal) == ("timeout", 9)
    assert not Path(f"/proc/{(tmp_path / 'sleep.pid').read_text().strip()}").exists()


@pytest.mark.slow  # waits out the leftovers
def test_no_leftover_survives_the_step(tmp_path: Path) -> None:
    zombies_before = _zombie_children()
    runs = {}
    for kind, launch in LAUNCHES.items():
        (tmp_path / kind).mkdir()
        (tmp_path / kind / "leftover.sh").write_text(LEFTOVER)
        command = f"{launch}\nwhile [ ! -e started ]; do sleep 0.01; done"
        runs[kind] = _in_thread(command, cwd=tmp_path / kind, env=_env())
    for thread, _ in runs.values():
        thread.join()

    results = {kind: out[0] for kind, (_, out) in runs.items()}
    assert {kind: (r.cause, r.leftovers) for kind, r in results.items()} == dict.fromkeys(LAUNCHES, ("ok", 0))
    leftovers = {kind: int((tmp_path / kind / "started").read_text()) for kind in LAUNCHES}
    assert [kind for kind, pid in leftovers.items() if Path(f"/proc/{pid}").exists()] == []
    assert _zombie_children() <= zombies_before
    time.sleep(3)
    assert [kind for kind in LAUNCHES if (tmp_path / kind / "pwned").exists()] == []


def test_orphans_that_exit_by_themselves_are_reaped(tmp_path: Path) -> None:
    orphan = "( sh -c 'echo \\$\\$ > zombie' & )"  # escaped so that the innermost sh expands $$
    command = f'setsid sh -c "{orphan}; sleep 30" & while [ ! -s zombie ]; do sleep 0.01; done; sleep 0.1'

    result = run_step(command, cwd=tmp_path, env=_env())

    assert result.cause == "ok"
    assert not Path(f"/proc/{int((tmp_path / 'zombie').read_text())}").exists(), "an unreaped zombie"


@pytest.mark.slow  # more than a second or two: out of the inner loop
def test_one_steps_sweep_spares_a_concurrent_step(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "leftover.sh").write_text(LEFTOVER)
    orphan = (
        "( sh -c 'echo $$ > started; sleep 1.5; echo alive > alive' & ); "
        "while [ ! -e alive ]; do sleep 0.05; done"
    )
    thread, out = _in_thread(orphan, cwd=b, env=_env(), timeout_s=10)
    _wait_for(b / "started")

    first = run_step("sh ./leftover.sh & while [ ! -e started ]; do sleep 0.01; done", cwd=a, env=_env())

    assert first.cause == "ok"
    assert _alive(int((b / "started").read_text())), "sweeping step a killed step b's process"
    thread.join()
    assert out[0].cause == "ok"
    assert (b / "alive").read_text() == "alive\n"
    assert not (a / "pwned").exists()


@pytest.mark.parametrize(
    ("command", "cause", "exit_code", "sig"),
    [
        ("true", "ok", 0, None),
        ("exit 3", "exit", 3, None),
        ("kill -9 $$", "signal", None, 9),
        ("exit 137", "signal", 137, 9),
        ("nonexistent-cmd-armbench", "not_found", 127, None),
        ("./not-executable", "not_executable", 126, None),
    ],
)
def test_exit_causes(
    tmp_path: Path, command: str, cause: str, exit_code: int | None, sig: int | None
) -> None:
    (tmp_path / "not-executable").write_text("#!/bin/sh\n")

    result = run_step(command, cwd=tmp_path, env=_env())

    assert (result.cause, result.exit_code, result.signal) == (cause, exit_code, sig)
    assert not result.timed_out and not result.cancelled


def test_missing_cwd_is_start_failed(tmp_path: Path) -> None:
    result = run_step("true", cwd=tmp_path / "missing", env=_env())

    assert (result.cause, result.exit_code) == ("start_failed", None)
    assert b"missing" in result.stderr_tail


def test_cancel_from_another_thread_stops_the_step(tmp_path: Path) -> None:
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()

    result = run_step("sleep 30", cwd=tmp_path, env=_env(), cancel=cancel)

    assert time.monotonic() - started < 15  # not the 30 s sleep
    assert (result.cause, result.cancelled, result.timed_out) == ("cancelled", True, False)


def test_a_cancel_set_before_start_runs_nothing(tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()

    result = run_step("touch ran", cwd=tmp_path, env=_env(), cancel=cancel)

    assert (result.cause, result.cancelled) == ("cancelled", True)
    assert not (tmp_path / "ran").exists()


def test_stdin_reaches_the_command_and_output_is_captured(tmp_path: Path) -> None:
    result = run_step("cat; echo oops >&2", cwd=tmp_path, env=_env(), stdin=b"hello from armbench\n")

    assert result.stdout_tail == b"hello from armbench\n"
    assert result.stderr_tail == b"oops\n"


def test_unread_stdin_does_not_block(tmp_path: Path) -> None:
    result = run_step("true", cwd=tmp_path, env=_env(), stdin=b"x" * (4 * 1024 * 1024), timeout_s=5)

    assert result.cause == "ok"


def test_stdout_tail_is_bounded_and_the_file_holds_everything(tmp_path: Path) -> None:
    command = "head -c 200000 /dev/zero | tr '\\0' x; printf END"

    result = run_step(command, cwd=tmp_path, env=_env(), stdout_file=tmp_path / "out.log")

    assert len(result.stdout_tail) == TAIL_BYTES and result.stdout_tail.endswith(b"xEND")
    assert (tmp_path / "out.log").stat().st_size == 200003


def test_duration_is_measured_around_the_process(tmp_path: Path) -> None:
    result = run_step("sleep 0.2", cwd=tmp_path, env=_env())

    assert 180 <= result.duration_ms < 1500


def test_armbench_becomes_a_child_subreaper(tmp_path: Path) -> None:
    run_step("true", cwd=tmp_path, env=_env())

    assert is_subreaper()


def test_a_shared_ledgers_url_and_password_are_withheld() -> None:
    """A PostgreSQL ledger's URL (password and all) and libpq's password sources never reach a
    trial: with them a tool on the network could rewrite the shared ledger."""
    assert {"ARMBENCH_LEDGER_URL", "PGPASSWORD", "PGPASSFILE", "PGSERVICEFILE"} <= set(WITHHELD)
    base = {**BASE, "ARMBENCH_LEDGER_URL": "postgresql://armbench:s3cret@db:5432/ledger",
            "PGPASSWORD": "s3cret", "PGPASSFILE": "/home/m/.pgpass"}
    assert step_env(base, withhold=WITHHELD, extra={}) == BASE
