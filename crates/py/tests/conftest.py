"""Fixtures of the smartsim Python package's tests: the repository, the smartsim command line (to
check that Python and the CLI give the same results) and a small scenario."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
from typing import Any, List

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]

SMALL = """\
[machine]
duration = "2s"
hz = 1000
seed = 1

[scheduler]
policy = "smart"

[[task]]
name = "A"
model = "periodic"
exec = "8ms..12ms"
period = "40ms"
share = 2

[[task]]
name = "B"
model = "periodic"
exec = "15ms..25ms"
period = "50ms"

[[task]]
name = "C"
model = "cpu"
"""


@pytest.fixture(scope="session")
def smartsim_bin() -> pathlib.Path:
    """The smartsim command line: $SMARTSIM_BIN, else target/release/smartsim (scripts/test builds it)."""
    p = pathlib.Path(os.environ.get("SMARTSIM_BIN", REPO / "target" / "release" / "smartsim"))
    if not p.is_file():
        pytest.fail(f"{p}: no smartsim binary; build it (cargo build --release -p smartsim) or set SMARTSIM_BIN")
    return p


@pytest.fixture
def small(tmp_path: pathlib.Path) -> pathlib.Path:
    """A small scenario file (3 tasks, 2 s, random execution times so that seeds matter)."""
    f = tmp_path / "small.toml"
    f.write_text(SMALL)
    return f


def cli(bin: pathlib.Path, *args: Any) -> str:
    """The standard output of `smartsim ARGS`, which must succeed."""
    done = subprocess.run([str(bin), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def cli_error(bin: pathlib.Path, *args: Any) -> str:
    """The error `smartsim ARGS` prints (it must fail with status 2), without `smartsim: `."""
    done = subprocess.run([str(bin), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("smartsim: ")
    return done.stderr[len("smartsim: "):].rstrip("\n")


def jsonl(text: str) -> List[Any]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]
