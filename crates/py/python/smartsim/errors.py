"""The exceptions smartsim raises."""

from __future__ import annotations

from typing import Any, Dict, List


class SmartsimError(Exception):
    """A run or sweep smartsim refuses: over the limits of a run (memory, events, output), a sweep
    of more than ``smartsim.MAX_RUNS`` runs, a key a sweep cannot set. ``str(e)`` is the message
    the command line prints (after ``smartsim: ``)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ScenarioError(SmartsimError, ValueError):
    """A scenario smartsim refuses, with where: the same structured error as the command line's
    ``FILE:LINE:COL: FIELD: MESSAGE`` lines.

    Attributes (of the first problem; ``diagnostics`` has them all, in file order):

    - ``file``: the scenario as named: its path, ``"<string>"`` or ``"<dict>"``.
    - ``line``: 1-based line (of the scenario's TOML text; for a dict, of the TOML smartsim wrote
      from it), or 0 when the problem is the whole file (it cannot be read).
    - ``column``: 1-based column, 0 with ``line`` 0.
    - ``field``: where in the scenario, e.g. ``machine.duration`` or ``task[2].exec (task "R1")``;
      empty for a TOML syntax error.
    - ``message``: what is wrong, and what would be right.
    - ``diagnostics``: every problem, each a dict with the keys above.
    """

    file: str
    line: int
    column: int
    field: str
    message: str
    diagnostics: List[Dict[str, Any]]

    def __init__(self, text: str, diagnostics: List[Dict[str, Any]]) -> None:
        super().__init__(text, diagnostics)
        self.diagnostics = list(diagnostics)
        first = self.diagnostics[0] if self.diagnostics else {}
        self.file = str(first.get("file", ""))
        self.line = int(first.get("line", 0))
        self.column = int(first.get("column", 0))
        self.field = str(first.get("field", ""))
        self.message = str(first.get("message", text))


class TasksetError(SmartsimError, ValueError):
    """Arguments of :func:`smartsim.taskset` that break a rule of the generators (the same rules as
    ``smartsim taskset``'s options). ``field`` is the argument (``"utilisation"``, ``"period_max"``,
    ...), ``value`` its value as written, ``message`` what is wrong and what would do."""

    field: str
    value: str
    message: str

    def __init__(self, text: str, field: str, value: str, message: str) -> None:
        super().__init__(text, field, value, message)
        self.field = field
        self.value = value
        self.message = message


class ScenarioWarning(UserWarning):
    """A scenario's warning (the run goes on), or a limit passed with ``force=True``."""
