"""Type stubs of ``smartsim._smartsim``, the Rust half of the package (crates/py/src/lib.rs). Use the
functions of ``smartsim``; these are the layer under them."""

from typing import Any, Dict, List, Optional, Tuple, Union

__version__: str
MAX_RUNS: int
MAX_WALKED: int
MAX_WALK_LIMIT: int
JOB_COLUMNS: List[str]

def run(
    text: Optional[str],
    path: str,
    policy: Optional[str] = None,
    jobs: bool = False,
    force: bool = False,
    walk_limit: Optional[int] = None,
) -> Tuple[Dict[str, Any], Optional[Dict[str, List[Any]]], List[str]]:
    """Runs a scenario (the file at ``path``, or ``text`` named ``path``): the run's JSON object, the
    per-job rows as columns (if ``jobs``, else ``None``) and the scenario's warnings."""

def read_scenario(path: str) -> str:
    """The text of the scenario file at ``path``."""

def toml_from_dict(d: Dict[str, Any]) -> str:
    """A scenario given as a dict, as TOML text."""

def sweep_plan(
    text: str, path: str, keys: List[str], values: List[List[str]], seeds: Optional[List[int]] = None
) -> Tuple[List[List[str]], List[int], List[str]]:
    """Checks a sweep before any run: its combinations (values as strings), seeds and warnings."""

def sweep_task(
    text: str, path: str, keys: List[str], values: List[str], seed: int, walk_limit: Optional[int] = None
) -> List[Dict[str, Any]]:
    """One run of a sweep: its rows, as ``smartsim sweep --format jsonl`` prints them."""

def taskset(
    tasks: int,
    utilisation: float,
    cpus: int,
    generator: str,
    periods: str,
    period_min: Union[str, int],
    period_max: Union[str, int],
    granularity: Union[str, int],
    seed: int,
    policy: str,
    duration: Optional[Union[str, int]] = None,
) -> Tuple[str, List[Dict[str, Any]]]:
    """One task set as scenario TOML text and its tasks (see ``smartsim.taskset``)."""

def policies() -> List[Dict[str, Any]]:
    """The policy registry, as ``smartsim policies --format json`` prints it."""
