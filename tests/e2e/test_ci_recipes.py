"""The guides' CI jobs install armbench into a venv of their own from a pinned source, never a
release that does not exist or the runner's own Python; the GitHub Actions step runs as written
(a commit of this checkout as `ARMBENCH_SOURCE`, through git), and leaves `armbench` on the
job's PATH."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest
from guides import ROOT, fenced

pytestmark = pytest.mark.e2e

PAGES = [ROOT / "docs" / "guide" / lang / f"{page}.md" for lang in ("", "zh-CN")
         for page in ("benchmarks", "review", "scale-out")]
STEP = re.compile(r"^      - run: \|[^\n]*\n((?:          [^\n]*\n)+)", re.MULTILINE)


def _jobs(page: Path) -> list[str]:
    return [body for kind, _, body in fenced(page) if kind == "yaml" and "armbench " in body
            and "runs-on:" in body or kind == "yaml" and "script:" in body]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT / "docs" / "guide")))
def test_every_ci_job_installs_armbench_into_a_venv_of_its_own(page: Path) -> None:
    jobs = _jobs(page)
    assert jobs, f"{page} has no CI job"
    for job in jobs:
        assert "pip install armbench" not in job and "armbench==" not in job, job
        venv = re.search(r'python3 -m venv "?(\$RUNNER_TEMP/armbench|/opt/armbench)"?', job)
        assert venv, job
        assert f'{venv[1]}/bin/pip" install -q "armbench @ $ARMBENCH_SOURCE"' in job or \
            f'{venv[1]}/bin/pip install -q "armbench @ $ARMBENCH_SOURCE"' in job, job
        assert re.search(r"ARMBENCH_SOURCE: git\+https://\S+@[0-9a-f]{40}\b", job), job


def test_the_github_step_runs_as_written(tmp_path: Path) -> None:
    job = next(j for j in _jobs(PAGES[0]) if "runs-on:" in j)
    step = textwrap.dedent(STEP.search(job)[1])  # type: ignore[index]
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout.strip()
    runner = tmp_path / "runner"
    runner.mkdir()
    path_file = tmp_path / "github_path"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARMBENCH_", "VIRTUAL_ENV"))}
    env.update(RUNNER_TEMP=str(runner), GITHUB_PATH=str(path_file),
               ARMBENCH_SOURCE=f"git+file://{ROOT}@{commit}",
               PIP_NO_DEPS="1")  # its dependencies come from the test venv below, not the registry
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", step], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    bin_dir = Path(path_file.read_text().strip())
    assert bin_dir == runner / "armbench" / "bin"
    site = next((runner / "armbench" / "lib").glob("python3*/site-packages"))
    assert sorted(p.name for p in site.glob("armbench*")) == ["armbench", "armbench-0.1.0.dist-info"]
    (site / "zz-test-venv.pth").write_text(sysconfig.get_path("purelib") + "\n")
    helped = subprocess.run([str(bin_dir / "armbench"), "--help"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env={**env, "PATH": f"{bin_dir}:{env['PATH']}"})
    assert helped.returncode == 0 and "Usage" in helped.stdout, helped.stderr
    assert Path(sys.executable).parent != bin_dir
