"""`armbench <command>` builds only that command's options (`cli.main.command_for`): for every
command and command group, its help, its usage errors and the arguments it hands its function
are those of the whole app."""

from __future__ import annotations

from unittest import mock

import typer.main
from typer.testing import CliRunner

from armbench.cli.main import app, command_for


def _names() -> list[str]:
    """Every command and group of the whole app, as click names them."""
    return list(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def _run(command: object, args: list[str]) -> tuple[int, str]:
    with mock.patch("typer.testing._get_command", lambda built: built):  # a click command as is
        got = CliRunner().invoke(command, args, prog_name="armbench")  # type: ignore[arg-type]
    return got.exit_code, got.output


def test_every_command_and_group_is_narrowed_to_itself() -> None:
    names = _names()
    assert len(names) >= 20 and {"verify", "runs", "run", "workflow", "ledger"} <= set(names)
    for name in names:
        narrowed = command_for([name])
        assert list(narrowed.commands) == [name], name  # type: ignore[attr-defined]


def test_each_ones_help_and_usage_errors_read_as_the_whole_apps() -> None:
    whole = typer.main.get_command(app)
    for name in _names():
        for args in ([name, "--help"], [name, "--no-such-option"]):
            assert _run(command_for(args), args) == _run(whole, args), args
    sub = typer.main.get_command(app).commands["workflow"].commands  # type: ignore[attr-defined]
    for verb in sub:
        args = ["workflow", verb, "--help"]
        assert _run(command_for(args), args) == _run(whole, args), args


def test_no_command_an_option_or_an_unknown_name_gets_the_whole_app() -> None:
    whole = typer.main.get_command(app)
    for args in ([], ["--help"], ["no-such-command"], ["verif"]):
        assert _run(command_for(args), args) == _run(whole, args), args
        assert len(command_for(args).commands) == len(whole.commands)  # type: ignore[attr-defined]
    assert "Usage: armbench [OPTIONS] COMMAND" in _run(command_for([]), [])[1]


def test_a_narrowed_command_runs_with_the_same_arguments_and_output(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # no checkout: `runs` refuses alike
    whole = typer.main.get_command(app)
    for args in (["schema", "task"], ["schema", "nothing"], ["runs"]):
        code, out = _run(command_for(args), args)
        assert (code, out) == _run(whole, args), args
    code, out = _run(command_for(["schema", "task"]), ["schema", "task"])
    assert code == 0 and '"title"' in out
