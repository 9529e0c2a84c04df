"""The CLI's fast exit keeps `sys.exit`'s meaning and never cuts short what must finish."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from armbench.cli.output import exit_code, exit_now


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (1, 1), (2, 2), (256 + 3, 3),
                                              ("a message", 1)])
def test_the_status_is_the_one_sys_exit_gives(code: object, status: int) -> None:
    assert exit_code(code) == status


def test_a_running_thread_that_is_not_a_daemon_gets_the_ordinary_exit() -> None:
    release = threading.Event()
    worker = threading.Thread(target=release.wait)
    worker.start()
    try:
        with pytest.raises(SystemExit) as done:
            exit_now(2)
        assert done.value.code == 2
    finally:
        release.set()
        worker.join()


def test_what_was_printed_is_flushed_and_the_status_kept() -> None:
    # a buffered stdout (a pipe) and a fast exit: the bytes still arrive, and the status is kept
    code = ("import sys\nfrom cli.output import exit_now\nsys.stdout.write('x' * 100000)\n"
            "sys.stderr.write('said')\nexit_now(3)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, len(done.stdout), done.stderr) == (3, 100000, "said")
