"""The dashboard's files: the page, its script and style (shipped in this package), and one
data script per document, the same whether served or exported.

Every document is a script, `armbench.put("<path>", <JSON>);`, loaded with a script element:
a page opened from `file://` cannot fetch JSON, but it can load a script beside it, so the
export and the server run the same page. Names in paths come from records and team files, so
each is made safe for a file name (`slug`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from armbench.benchmark.dashboard.site import Board
from armbench.edge.webserver import Answer as Page
from armbench.ledger.errors import Refusal
from armbench.projections.record_types import as_record, present

__all__ = ["ASSETS", "CSP", "Page", "Site", "slug"]

ASSETS = {"index.html": "text/html; charset=utf-8", "app.js": "text/javascript; charset=utf-8",
          "app.css": "text/css; charset=utf-8"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
"""Nothing from elsewhere: scripts and styles from the dashboard itself, no inline code."""
_SAFE = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,99}")
_JS = "text/javascript; charset=utf-8"


def slug(name: str) -> str:
    """`name` when it is a plain file name, else `x` and its UTF-8 bytes in hex."""
    return name if _SAFE.fullmatch(name) and not name.startswith("x") else "x" + name.encode().hex()


def asset(name: str) -> bytes:
    """One of the shipped files."""
    return (resources.files("armbench.benchmark.dashboard") / "static" / name).read_bytes()


def data_script(path: str, doc: Any) -> bytes:
    """A document as the script that hands it to the page."""
    return (b"armbench.put(" + msgspec.json.encode(path) + b", " + msgspec.json.encode(doc)
            + b");\n")


class Site:
    """Paths to pages, over one `Board`."""

    def __init__(self, board: Board) -> None:
        self.board = board
        self._encoded: dict[str, tuple[Any, list[str], bytes]] = {}
        """A run's script by key, with the record and the other runs it was encoded from: a
        page and its Compare tab (and a running run's polls while its log is unchanged) encode
        the same document once."""

    def _script(self, key: str) -> bytes:
        doc = self.document(key)
        if not (isinstance(doc, dict) and "record" in doc):
            return data_script(key, doc)
        kept = self._encoded.get(key)
        if kept is not None and kept[0] is doc["record"] and kept[1] == doc["others"]:
            return kept[2]
        body = data_script(key, doc)
        self._encoded = {key: (doc["record"], doc["others"], body)}
        return body

    def _runs_by_slug(self) -> dict[str, str]:
        return {slug(run): run for run in self.board.run_ids()}

    def _suites_by_slug(self) -> dict[str, str]:
        return {slug(s): s for s in self.board.runs()["suites"]}

    def document(self, key: str) -> Any:
        """The document at `key` (a path under data/ without `.js`); None when there is none."""
        parts = key.split("/")
        match parts:
            case ["runs"]:
                return self.board.runs()
            case ["run", run]:
                return self.board.run(self._runs_by_slug()[run])
            case ["explain", run, which] if which[:1] in "tb" and which[1:].isdigit():
                name = self._runs_by_slug()[run]
                if which[0] == "t":
                    return self.board.explain(name, int(which[1:]))
                return self.board.explain_baseline(name, int(which[1:]))
            case ["trial", run, which] if which[:1] == "t" and which[1:].isdigit():
                return self.board.trial(self._runs_by_slug()[run], int(which[1:]))
            case ["compare", a, b]:
                runs = self._runs_by_slug()
                return self.board.compare(runs[a], runs[b])
            case ["history", suite]:
                return self.board.history(self._suites_by_slug()[suite])
        raise KeyError(key)

    def respond(self, path: str) -> Page:
        """The response for a GET of `path`."""
        name = path.lstrip("/") or "index.html"
        if name in ASSETS:
            return Page(200, ASSETS[name], asset(name))
        if name.startswith("data/") and name.endswith(".js"):
            key = name.removeprefix("data/").removesuffix(".js")
            try:
                return Page(200, _JS, self._script(key))
            except (KeyError, Refusal):
                return Page(404, _JS, data_script(key, {"missing": key}))
        return Page(404, "text/plain; charset=utf-8", b"Not found\n")

    def export(self, folder: Path, progress: Callable[[str], None]) -> dict[str, int]:
        """Write every page's files under `folder`; how many of each kind."""
        folder.mkdir(parents=True, exist_ok=True)
        for name in ASSETS:
            (folder / name).write_bytes(asset(name))
        counts = {"runs": 0, "explanations": 0, "comparisons": 0, "histories": 0}
        runs = self.board.runs()
        self._write(folder, "runs", runs)
        by_suite: dict[str | None, list[str]] = {}
        for row in runs["runs"]:
            doc = self.board.run(row.run)
            self._write(folder, f"run/{slug(row.run)}", doc)
            counts["runs"] += 1
            by_suite.setdefault(row.suite, []).append(row.run)
            if doc["explained"]:
                counts["explanations"] += self._explanations(folder, row.run, doc)
            progress(f"Exported run {row.run}.")
        for suite, names in by_suite.items():
            if suite is None:
                continue
            self._write(folder, f"history/{slug(suite)}", self.board.history(suite))
            counts["histories"] += 1
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    self._write(folder, f"compare/{slug(a)}/{slug(b)}", self.board.compare(a, b))
                    self._write(folder, f"compare/{slug(b)}/{slug(a)}", self.board.compare(b, a))
                    counts["comparisons"] += 1
        return counts

    def _explanations(self, folder: Path, run: str, doc: dict[str, Any]) -> int:
        record = as_record(doc["record"])
        trials = record.trials
        for i in range(len(trials)):
            self._write(folder, f"explain/{slug(run)}/t{i}", self.board.explain(run, i))
        for i in range(len(present(record.baselines) or [])):
            self._write(folder, f"explain/{slug(run)}/b{i}", self.board.explain_baseline(run, i))
        return len(trials)

    @staticmethod
    def _write(folder: Path, key: str, doc: Any) -> None:
        target = folder / "data" / f"{key}.js"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data_script(key, doc))
