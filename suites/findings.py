"""Collects one file's rule findings as diagnostics at the lines their paths point to."""

from __future__ import annotations

from armbench.suites.diagnostics import Diagnostic, Severity
from armbench.suites.shape import label
from armbench.suites.yamlfile import LoadedYaml

__all__ = ["Findings"]


class Findings:
    """Findings about one loaded file; each message is prefixed with its key's path."""

    def __init__(self, loaded: LoadedYaml) -> None:
        self.loaded = loaded
        self.diagnostics: list[Diagnostic] = []

    def error(self, path: str, code: str, message: str) -> None:
        """Record an error about the value at `path`, such as `$.arms[6]`."""
        self.add(path, code, message, "error")

    def warning(self, path: str, code: str, message: str) -> None:
        """Record a warning about the value at `path`."""
        self.add(path, code, message, "warning")

    def add(self, path: str, code: str, message: str, severity: Severity) -> None:
        """Record a finding at the line of `path`."""
        shown = label(path)
        text = f"{shown}: {message}" if shown else message[0].upper() + message[1:]
        self.diagnostics.append(Diagnostic(file=self.loaded.file, line=self.loaded.line_of(path),
                                           severity=severity, code=code, message=text, path=path))
