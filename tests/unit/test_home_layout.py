"""Each built-in CLI's places in a home are written once, in its adapter's `HomeLayout`:
delivery writes the team's assets there, user scope looks there, the trial's private home gets
its login files, and the judge reads its transcripts there."""

from __future__ import annotations

from pathlib import Path

import pytest

from armbench.benchmark.agents import ADAPTERS, LAYOUTS
from armbench.benchmark.agents.judge import transcript_of
from armbench.benchmark.agents.places import home_files
from armbench.edge.homelayout import HomeLayout, user_assets
from armbench.suites.teamassets import TeamAssets

ASSETS = TeamAssets(skills={"release": {"SKILL.md": b"s"}}, rules={"c.md": b"r"},
                    agents={"rev.md": b"a"})


def test_every_built_in_cli_declares_its_layout_and_the_table_is_theirs() -> None:
    assert LAYOUTS == {cls.name: cls.layout for cls in ADAPTERS}
    assert set(LAYOUTS) == {"claude", "codex", "opencode", "gemini"}
    assert all(layout.logins for layout in LAYOUTS.values())


@pytest.mark.parametrize("tool", sorted(LAYOUTS))
def test_what_delivery_writes_is_where_user_scope_looks(tool: str, tmp_path: Path) -> None:
    written = home_files(tool, ASSETS)
    for path, data in written.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes(data)
    found = user_assets(tmp_path, LAYOUTS[tool])
    assert found and all(any(path == f or path.startswith(f + "/") for f in found) for path in written)


def test_a_layout_moves_every_reader_with_it(tmp_path: Path) -> None:
    layout = HomeLayout(instructions="x/I.md", skills="x/s", agents="x/a", also_loads=("y",),
                        transcripts="x/t")
    assert layout.user_places() == ("x/I.md", "x/s", "x/a", "y")
    for place in ("x/s/one", "x/a/two.md", "y/three", "x/s/.hidden"):
        (tmp_path / place).mkdir(parents=True)
    (tmp_path / "x/I.md").write_text("i")
    assert user_assets(tmp_path, layout) == ["x/I.md", "x/s/one", "x/a/two.md", "y/three"]
    assert user_assets(tmp_path, None) == []


def test_the_judge_reads_transcripts_only_where_the_layout_says(tmp_path: Path) -> None:
    for tool, layout in LAYOUTS.items():
        if layout.transcripts is not None:
            (tmp_path / layout.transcripts / "s").mkdir(parents=True)
            (tmp_path / layout.transcripts / "s" / f"{tool}.jsonl").write_bytes(f"{tool}\n".encode())
    assert {tool: transcript_of(tool, tmp_path) for tool in LAYOUTS} == {
        "claude": b"claude\n", "codex": b"codex\n", "opencode": b"", "gemini": b""}
    assert transcript_of("my-script", tmp_path) == transcript_of(None, tmp_path) == b""
