"""`armbench dashboard` in a real headless browser (Debian's chromium, driven by Playwright), on
the bundled example run for real, and a hostile record published beside it.

Screenshots go to the test's output folder (`shots/` under the module's tmp folder); with
ARMBENCH_DOC_SHOTS set to a folder they are also copied there (how docs/guide/images/ is made).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
HOSTILE_TASK = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


@dataclass
class Example:
    """The bundled example after a real run, with a dashboard serving it."""

    root: Path
    checkout: Path
    env: dict[str, str]
    run: str
    table: dict[str, Any]
    first: str = ""
    """An earlier run of the same suite."""
    url: str = ""
    shots: Path = field(default_factory=Path)

    def armbench(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(Path(sys.executable).with_name("armbench")), *args],
                              cwd=self.checkout, env=self.env, text=True, capture_output=True,
                              timeout=300, stdin=subprocess.DEVNULL)


def _hostile_record(run: str) -> dict[str, Any]:
    """A record another machine published, whose task id is markup."""
    trials = [{"task": HOSTILE_TASK, "arm": arm, "repetition": r, "result": result}
              for arm, result in (("a", "passed"), ("b", "failed")) for r in range(2)]
    return {"schema": "armbench.record/v1", "run": run, "outcome": "succeeded",
            "startedAt": "2026-01-01T00:00:00+00:00", "suite": {"name": "hostile"},
            "tasks": [{"id": HOSTILE_TASK, "sourceHash": "0" * 64}],
            "arms": [{"name": "a", "tool": "scripted", "model": "m1"},
                     {"name": "b", "tool": "scripted", "model": "m2"}],
            "trials": trials}


def _publish(team: Path, run: str, record: dict[str, Any], env: dict[str, str]) -> None:
    """Put a record on the team repo's armbench-reports branch, as another member's publish would."""
    work = team.parent / f"reports-work-{run}"
    subprocess.run(["git", "clone", "-q", "-b", "armbench-reports", str(team), str(work)],
                   check=True, env=env)
    target = work / "benchmarks" / "runs" / f"{run}.json"
    target.write_text(json.dumps(record, indent=2))
    for args in (["add", "-A"], ["commit", "-q", "-m", f"record {run}"], ["push", "-q"]):
        subprocess.run(["git", "-C", str(work), *args], check=True, env=env)


def _environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARMBENCH_", "GIT_"))}
    env.update(ARMBENCH_HOME=str(root / "home"), TMPDIR=str(root / "tmp"),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               GIT_AUTHOR_NAME="e2e", GIT_AUTHOR_EMAIL="e2e@armbench.invalid",
               GIT_COMMITTER_NAME="e2e", GIT_COMMITTER_EMAIL="e2e@armbench.invalid")
    (root / "tmp").mkdir()
    return env


def _set_up(root: Path, env: dict[str, str]) -> Path:
    """The bundled example laid out under root; its project checkout."""
    return Path(subprocess.run(["bash", str(ROOT / "examples" / "setup.sh"), str(root / "ex")],
                               env=env, check=True, text=True, capture_output=True).stdout.strip())


@contextlib.contextmanager
def _dashboard(checkout: Path, env: dict[str, str]) -> Iterator[str]:
    """`armbench dashboard --port 0` serving checkout; its address. It must say no page failed."""
    server = subprocess.Popen([str(Path(sys.executable).with_name("armbench")), "dashboard",
                               "--port", "0"], cwd=checkout, env=env, text=True,
                              stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                              stdin=subprocess.DEVNULL)
    assert server.stderr is not None
    url = ""
    for line in server.stderr:
        found = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if found:
            url = found[0]
            break
    assert url, "the dashboard never said where it serves"
    said: list[str] = []
    drain = threading.Thread(target=lambda: said.extend(server.stderr or []), daemon=True)
    drain.start()
    try:
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)
        drain.join(timeout=10)
        server.stderr.close()
    assert not [line for line in said if line.startswith("dashboard:")], said


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Example]:
    root = tmp_path_factory.mktemp("dashboard")
    env = _environment(root)
    checkout = _set_up(root, env)
    ex = Example(root=root, checkout=checkout, env=env, run="", table={}, shots=root / "shots")
    first = ex.armbench("run", "example", "--sandbox", "--quiet")
    assert first.returncode == 0, first.stderr
    ex.first = json.loads(first.stdout)["data"]["done"]["run"]
    done = ex.armbench("run", "example", "--sandbox")
    assert done.returncode == 0, done.stderr
    envelope = json.loads(done.stdout)["data"]["done"]
    ex.run, ex.table = envelope["run"], envelope["outputs"]["table"]
    _publish(root / "ex" / "team", "rhostile", _hostile_record("rhostile"), env)
    _publish(root / "ex" / "team", "rbroken", {"run": "rbroken", "trials": "<b>not a list</b>"}, env)
    with _dashboard(checkout, env) as url:
        ex.url = url
        yield ex


@dataclass
class Browser:
    page: Any
    errors: list[str]


@pytest.fixture(scope="module")
def browser(example: Example) -> Iterator[Browser]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = chromium.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        yield Browser(page, errors)
        chromium.close()


def _shot(example: Example, page: Any, name: str) -> None:
    example.shots.mkdir(exist_ok=True)
    target = example.shots / f"{name}.png"
    page.screenshot(path=str(target), full_page=True)
    if os.environ.get("ARMBENCH_DOC_SHOTS"):
        shutil.copy(target, Path(os.environ["ARMBENCH_DOC_SHOTS"]) / target.name)


def _signed(x: float) -> str:
    value = 100 * x
    whole = round(value)
    text = f"{value:.1f}" if whole == 0 and value != 0 else f"{whole}"
    return ("+" if x > 0 else "") + text


def test_the_benchmarks_page_lists_the_example_run(example: Example, browser: Browser) -> None:
    page = browser.page
    page.goto(example.url)
    page.wait_for_selector("#runs table")
    runs = page.inner_text("#runs")
    assert example.run in runs and "example" in runs and "bubblewrap" in runs
    assert "rhostile" in runs and "published (reports branch)" in runs
    page.goto(f"{example.url}#/suite/example")
    page.wait_for_selector("#suite-filter option[value='example'][selected]", state="attached")
    assert "rhostile" not in page.inner_text("#runs") and example.run in page.inner_text("#runs")
    assert "benchmarks/runs/rbroken.json: Expected `array`, got `str` - at `$.trials`" in \
        page.inner_text(".skipped")
    _shot(example, page, "dashboard-benchmarks")
    assert browser.errors == []


def test_a_runs_page_shows_the_table(example: Example, browser: Browser) -> None:
    page = browser.page
    page.goto(f"{example.url}#/run/{example.run}")
    page.wait_for_selector("#arms table")
    rows = page.locator("#arms tbody tr")
    assert rows.count() == len(example.table["arms"])
    text = page.inner_text("#arms")
    for arm in example.table["arms"]:
        assert arm["arm"] in text
        assert f"{round(100 * arm['pass_rate'])}%" in text
    assert page.locator("#matrix button.trial").count() == sum(a["planned"] for a in example.table["arms"])
    _shot(example, page, "dashboard-run")
    assert browser.errors == []


def test_the_compare_tab_shows_each_pairs_interval_as_numbers_and_as_the_plot(
        example: Example, browser: Browser) -> None:
    pairs = example.table["pairs"]
    assert pairs, "the example's arms pair"
    page = browser.page
    page.goto(f"{example.url}#/run/{example.run}/compare")
    page.wait_for_selector("svg#forest")
    assert page.locator("svg#forest rect.interval").count() == len(pairs)
    assert page.locator("svg#forest line.zero").count() == 1
    text = page.inner_text("main")
    for p in pairs:
        d = p["difference"]
        assert (f"{_signed(d['estimate'])} points, 95% interval {_signed(d['lower'])} to "
                f"{_signed(d['upper'])} points") in text
    # the bar spans lower..upper on the plot's scale: wider interval, wider bar
    width = float(page.locator("svg#forest rect.interval").first.get_attribute("width") or 0)
    assert width == pytest.approx((pairs[0]["difference"]["upper"] - pairs[0]["difference"]["lower"])
                                  / 2 * (720 - 260 - 30), abs=0.5)
    _shot(example, page, "dashboard-compare")
    assert browser.errors == []


def test_clicking_a_trial_shows_its_explanation(example: Example, browser: Browser) -> None:
    page = browser.page
    page.goto(f"{example.url}#/run/{example.run}")
    page.wait_for_selector("#matrix")
    button = page.locator("#matrix button.trial.failed, #matrix button.trial.passed").last
    button.click()
    page.wait_for_selector("#explanation .why")
    shown = page.inner_text("#explanation")
    heading = page.inner_text("#explanation h3")
    subject = heading.split(":")[0]
    told = example.armbench("explain", example.run, subject)
    assert told.returncode == 0, told.stderr
    got = json.loads(told.stdout)["data"]["explain"]
    assert got["rule"] in shown and heading.endswith(f": {got['result']}")
    assert got["result"] in ("passed", "failed")
    assert all(line in shown for line in got["events"])
    _shot(example, page, "dashboard-explain")
    assert browser.errors == []


def test_the_run_page_speaks_words_local_times_and_fits_1280_pixels(
        example: Example, browser: Browser) -> None:
    """Issue 29's wording: column heads as the printed tables have them, the start in the
    reader's local time to the minute (the instant on hover), the arms table without a sideways
    scroll in a 1,280-px window."""
    page = browser.page
    page.goto(f"{example.url}#/run/{example.run}")
    page.wait_for_selector("#arms table")
    heads = page.locator("#arms th").all_inner_texts()
    assert "Pass rate" in heads and "Not run" in heads and "Not verified" in heads, heads
    assert not [h for h in heads if "_" in h], heads
    stamp = page.locator("main p time").first
    instant = stamp.get_attribute("title") or ""
    assert instant.startswith("20") and "T" in instant
    assert re.search(r":\d\d:\d\d", stamp.inner_text()) is None  # to the minute
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    invalid = [b["task"] for b in example.table["baselines"] if b["baseline"].startswith("invalid")]
    assert invalid and "not run: task invalid" in page.inner_text(
        f"#matrix tr:has(th:text-is('{invalid[0]}'))")
    arms = page.locator("#arms table").bounding_box()
    assert arms is not None and arms["x"] + arms["width"] <= 1280
    assert browser.errors == []


def test_a_trials_view_shows_its_check_output_and_its_diff_and_is_linkable(
        example: Example, browser: Browser) -> None:
    """Issue 29: from the matrix, a trial opens its own page (its address is a link): the rule,
    the check's output and the diff file by file (added and removed lines coloured), as
    `armbench show` prints them."""
    page = browser.page
    page.goto(f"{example.url}#/run/{example.run}")
    page.wait_for_selector("#matrix")
    page.locator("#matrix button.trial.failed, #matrix button.trial.passed").first.click()
    page.wait_for_selector("#explanation a.open-trial")
    page.locator("#explanation a.open-trial").click()
    page.wait_for_selector("#check-output")
    address = page.url
    assert re.search(r"#/run/[^/]+/trial/\d+$", address), address
    subject = page.inner_text("h1").split(":")[0]
    told = json.loads(example.armbench("explain", example.run, subject).stdout)["data"]["explain"]
    assert page.inner_text("#rule") == told["rule"]
    check = example.armbench("show", example.run, subject, "--check")
    assert check.returncode == 0, check.stderr
    assert page.inner_text("#check-output").strip() == check.stdout.strip()
    diff = example.armbench("show", example.run, subject, "--diff")
    assert diff.returncode == 0, diff.stderr
    files = page.locator("#diff details.file")
    assert files.count() == diff.stdout.count("diff --git ") > 0
    shown = "\n".join(page.locator("#diff pre.diff").nth(i).inner_text().rstrip("\n")
                      for i in range(files.count()))
    assert shown == diff.stdout.rstrip("\n")
    added = page.locator("#diff pre.diff span.add").first
    assert added.evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(230, 244, 234)"
    _shot(example, page, "dashboard-trial")
    page.locator("#diff details.file summary").first.click()  # each file folds
    assert page.locator("#diff details.file").first.get_attribute("open") is None
    page.goto(f"{example.url}#/")
    page.goto(address)  # the address alone opens the same view
    page.wait_for_selector("#check-output")
    assert page.inner_text("#rule") == told["rule"]
    assert browser.errors == []


def test_the_export_opens_from_file_with_the_same_content(example: Example, browser: Browser) -> None:
    out = example.root / "export"
    done = example.armbench("dashboard", "--export", str(out))
    assert done.returncode == 0, done.stderr
    page = browser.page
    served = {}
    for where in (example.url, (out / "index.html").as_uri()):
        page.goto(f"{where}#/run/{example.run}/compare")
        page.wait_for_selector("svg#forest")
        compare = page.inner_text("main")
        page.goto(f"{where}#/run/{example.run}")
        page.wait_for_selector("#matrix")
        page.locator("#matrix button.trial").first.click()
        page.wait_for_selector("#explanation .why")
        served[where.split(":")[0]] = (page.inner_text("main"), compare)
    assert served["file"] == served["http"]
    assert browser.errors == []


def test_a_task_id_with_markup_is_shown_as_text(example: Example, browser: Browser) -> None:
    page = browser.page
    page.goto(f"{example.url}#/run/rhostile")
    page.wait_for_selector("#matrix")
    assert HOSTILE_TASK in page.inner_text("#matrix")
    assert page.evaluate("window.pwned") is None
    assert page.locator("#matrix script, #matrix img").count() == 0
    _shot(example, page, "dashboard-hostile")
    assert browser.errors == []


def test_the_server_answers_only_reads_from_loopback_with_a_strict_policy(example: Example) -> None:
    import urllib.error
    import urllib.request

    with urllib.request.urlopen(example.url) as answer:
        policy = answer.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    for method in ("POST", "PUT", "DELETE"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(example.url, method=method, data=b""))
        assert refused.value.code == 501
        refused.value.close()
    forged = urllib.request.Request(example.url, headers={"Host": "attacker.example:80"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(forged)
    assert refused.value.code == 403
    refused.value.close()


def test_two_runs_of_the_suite_compare_arm_by_arm(example: Example, browser: Browser) -> None:
    page = browser.page
    page.goto(f"{example.url}#/run/{example.run}/compare")
    page.wait_for_selector("#other-run")
    page.select_option("#other-run", example.first)
    page.wait_for_selector("svg#forest-runs")
    assert page.locator("svg#forest-runs rect.interval").count() == len(example.table["arms"])
    assert f"measured from run {example.first} to run {example.run}" in page.inner_text("#two-runs")
    assert browser.errors == []


def test_the_history_shows_each_arms_pass_rate_over_runs_with_its_interval(
        example: Example, browser: Browser) -> None:
    page = browser.page
    page.goto(f"{example.url}#/history/example")
    page.wait_for_selector("svg#history-plot")
    text = page.inner_text("main")
    assert example.first in text and example.run in text and "rhostile" not in text
    for arm in example.table["arms"]:
        rate = f"{round(100 * arm['pass_rate'])}% ({arm['passed']}/{arm['planned']}), "
        assert rate in text
    # one interval bar per arm per run: the example's two arms in two runs
    assert page.locator("svg#history-plot rect.interval").count() == 2 * 2
    _shot(example, page, "dashboard-history")
    assert browser.errors == []


def test_a_port_in_use_is_refused_with_the_fix(example: Example) -> None:
    port = example.url.rsplit(":", 1)[1].strip("/")
    done = example.armbench("dashboard", "--port", port, "--no-published")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "port_unavailable" and "--port 0" in error["message"]
    assert "Traceback" not in done.stderr


def test_each_trials_explanation_is_explains_answer(example: Example) -> None:
    """The dashboard explains each trial from its own steps' events: the same answer as the
    whole log gives, for the example's passed, failed and never-run (invalid baseline) trials."""
    from armbench.benchmark.dashboard.site import Board
    from armbench.ledger.store import EventStore
    from armbench.projections.explain import explain
    from armbench.projections.results import fold_run

    store = EventStore.for_reading(example.checkout / ".armbench" / "ledger.sqlite")
    try:
        board, events = Board(store), store.events(example.run)
        view = fold_run(events)
        results = set()
        for i, tv in enumerate(view.trials):
            whole = explain(view, events, tv.trial.prompt_step)
            assert board.explain(example.run, i) == msgspec.to_builtins(whole)
            results.add(whole.result)
        assert {"passed", "not_run"} <= results
        for i, task in enumerate(view.baselines):
            whole = explain(view, events, f"baseline:{task}")
            assert board.explain_baseline(example.run, i)["rule"] == whole.rule
            assert board.explain_baseline(example.run, i)["events"] == whole.events
    finally:
        store.close()


def _wait_for_a_run(arm: list[str], checkout: Path, env: dict[str, str]) -> None:
    """Until the ledger lists a run (at most a minute: the background run is starting)."""
    for _ in range(600):
        done = subprocess.run([*arm, "runs", "--json"], cwd=checkout, env=env,
                              capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip():
            return
        time.sleep(0.1)
    raise AssertionError("the background run never appeared in `armbench runs`")


def test_a_running_runs_page_updates_itself(tmp_path: Path, browser: Browser) -> None:
    """The example's agent made slow (1.5 s a trial), run in the background: its page, left
    open, shows it in progress and then, with no reload, its outcome."""
    env = _environment(tmp_path)
    checkout = _set_up(tmp_path, env)
    team = tmp_path / "ex" / "team"
    agent = team / "tools" / "scripted" / "agent.py"
    agent.write_text("import time\ntime.sleep(1.5)\n" + agent.read_text())
    subprocess.run(["git", "-C", str(team), "commit", "-qam", "a slow agent"], check=True, env=env)
    arm = [str(Path(sys.executable).with_name("armbench"))]
    subprocess.run([*arm, "pull"], cwd=checkout, env=env, check=True, capture_output=True)
    run = subprocess.Popen([*arm, "run", "example", "--sandbox"], cwd=checkout, env=env,
                           text=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           stdin=subprocess.DEVNULL)
    try:
        _wait_for_a_run(arm, checkout, env)  # the Benchmarks page lists the runs it was served
        with _dashboard(checkout, env) as url:
            page = browser.page
            page.goto(url)
            link = page.wait_for_selector("#runs a.run-link", timeout=60_000)
            assert link is not None
            link.click()
            page.wait_for_selector("#live", timeout=60_000)
            seen = page.inner_text("#live")
            assert "In progress" in seen
            page.wait_for_selector("text=outcome succeeded", timeout=120_000)
            assert page.locator("#live").count() == 0
            out, _ = run.communicate(timeout=120)
            assert json.loads(out)["data"]["done"]["state"] == "succeeded"
            assert page.locator("#matrix button.trial").count() == 18
    finally:
        if run.poll() is None:
            run.kill()
        run.communicate()  # waits, and closes the stdout pipe (else it leaks into a later test)
    assert browser.errors == []
