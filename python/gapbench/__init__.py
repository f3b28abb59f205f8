"""gapbench from Python: the same engine as the `gapbench` CLI, results as pandas DataFrames.

Every function calls the Rust library (``gapbench._native``) and gets back the rows the CLI
writes to its CSV files, so column names and units are those files' (see docs/results.md).
This layer only turns that text (or, for sweeps, the rows' typed columns) into DataFrames
and dicts; nothing is computed here.

    import gapbench
    w = gapbench.Workload.embedded()
    curve = gapbench.sweep(w, policy="fgd", seeds=[42, 43])
    def fullest(node, task):
        return -node.gpu_free_after_milli
    gaps = gapbench.gap(w, policy=[fullest, "fgd"], seed=42, checkpoints=[50],
                        objectives=["power"], time_limit=10, sample_nodes=40)
"""

import io
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, Optional, Sequence, Union

import numpy as np
import pandas as pd

from . import _native
from ._native import GapbenchError, Node, ScoreError, Scorer, Task, Workload

__all__ = [
    "Workload",
    "Scorer",
    "Node",
    "Task",
    "Policy",
    "GapbenchError",
    "ScoreError",
    "sweep",
    "gap",
    "replay",
    "Replay",
    "bench",
    "load_results",
    "Results",
    "features",
]

Policy = _native.Policy
"""A policy: a spec string as the CLI takes it (``"fgd"``, ``"pwr:200,fgd:800"``,
``"expr:…"``), a score function ``score(node, task) -> float`` or a :class:`Scorer`, or a
mix ``[(my_score, 300), ("fgd", 700)]`` (whole, relative weights)."""


def _frame(text: str) -> pd.DataFrame:
    """A CSV text as the CLI writes it, as a DataFrame (an empty text: no rows)."""
    if not text.strip():
        return pd.DataFrame()
    return pd.read_csv(io.StringIO(text))


def _columns_frame(columns) -> pd.DataFrame:
    """Typed columns built in Rust from the rows' declarations (``(name, dtype, data)``:
    the values' bytes, or a list for text) as a DataFrame, equal to ``pandas.read_csv`` of
    the CLI's file without writing and parsing its text."""
    return pd.DataFrame(
        {
            name: data if dtype == "O" else np.frombuffer(data, dtype=dtype)
            for name, dtype, data in columns
        }
    )


def _policy(value) -> "_native.Policy":
    return value if isinstance(value, _native.Policy) else _native.Policy(value)


def features() -> pd.DataFrame:
    """The features a score function reads (as ``expr:`` names them): name, meaning, and
    whether a memoised score may read it. ``task_*`` are attributes of the task, the others
    of the node, which also has ``node_in_use`` and ``name``."""
    return pd.DataFrame(_native.features(), columns=["feature", "meaning", "memoised"])


def sweep(
    workload: Workload,
    policy,
    seeds: Union[int, Iterable[int]] = (42,),
    progress: bool = True,
) -> pd.DataFrame:
    """Arrival sweeps of ``policy`` (the CLI's ``run`` defaults: tune 1.3, shuffled
    arrivals), one per seed: ``curve.csv``'s columns and a ``seed`` column. Built-in
    policies run their seeds in parallel, as the CLI does. ``progress``: a line on stderr
    counting the seeds done, once the call lasts a few seconds."""
    policy = _policy(policy)
    seeds = [seeds] if isinstance(seeds, int) else list(seeds)
    return _columns_frame(_native.sweep(workload, policy, seeds, progress))


def gap(
    workload: Workload,
    policy,
    seed: int = 42,
    checkpoints: Sequence[float] = (50, 100),
    objectives: Sequence[str] = ("power", "alloc", "frag"),
    time_limit: float = 60.0,
    sample_nodes: Optional[int] = None,
    mip_rel_gap: float = 0.0,
    threads: Optional[int] = None,
    pareto_points: int = 0,
    method: str = "auto",
    progress: bool = True,
) -> pd.DataFrame:
    """Heuristic against exact at each checkpoint (arrived GPU demand in % of capacity):
    ``gaps.csv``'s columns, one row per policy, checkpoint and objective. ``policy`` is one
    policy or a list of them (a list of pairs is one mix); with several, each distinct
    instance is solved once. The front's points (``pareto_points`` > 0) are in
    ``.attrs["front"]``. ``progress``: a line on stderr with the time spent, once the call
    lasts a few seconds."""
    if isinstance(policy, (list, tuple)) and not _is_mix(policy):
        policies = [_policy(p) for p in policy]
    else:
        policies = [_policy(policy)]
    gaps, front = _native.gap(
        workload,
        policies,
        seed,
        [float(c) for c in checkpoints],
        list(objectives),
        float(time_limit),
        sample_nodes,
        mip_rel_gap,
        threads,
        pareto_points,
        method,
        progress,
    )
    frame = _frame(gaps)
    frame.attrs["front"] = _frame(front)
    return frame


def _is_mix(value) -> bool:
    """``[(term, weight), …]`` rather than a list of policies."""
    return all(
        isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], int) for item in value
    )


@dataclass
class Replay:
    """One replay: ``tasks.csv`` and ``timeline.csv`` as DataFrames, ``summary.json`` and
    (when asked) ``bound.json`` as dicts."""

    tasks: pd.DataFrame
    timeline: pd.DataFrame
    summary: Dict[str, Any]
    bound: Optional[Dict[str, Any]] = None


def replay(
    workload: Workload,
    policy: str,
    seed: int = 42,
    idle: str = "always-on",
    sleep_fraction: Optional[float] = None,
    bound: bool = False,
    bound_time_limit: Optional[float] = None,
    gpus: Optional[int] = None,
    first_jobs: Optional[int] = None,
    progress: bool = True,
) -> Replay:
    """Time mode: ``policy`` (a time-mode policy name or a sweep spec string) replays the
    workload's tasks at their times; ``bound=True`` also proves a lower bound on the energy
    of the same tasks at the replay's own times. ``progress``: a line on stderr with the time
    spent, once the call lasts a few seconds."""
    tasks, timeline, summary, bound_json = _native.replay(
        workload,
        policy,
        seed,
        idle,
        sleep_fraction,
        bound,
        bound_time_limit,
        gpus,
        first_jobs,
        progress,
    )
    return Replay(
        tasks=_frame(tasks),
        timeline=_frame(timeline),
        summary=json.loads(summary),
        bound=json.loads(bound_json) if bound_json is not None else None,
    )


@dataclass
class Results:
    """Every CSV of a results folder as a DataFrame, keyed by its path under the folder
    without ``.csv`` (``"grid"``, ``"gaps"``, ``"cells/…/curve"``); top-level files are also
    attributes (``res.grid``, ``res.gaps``, ``res.runs``)."""

    folder: str
    tables: Dict[str, pd.DataFrame] = field(default_factory=dict)

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(
            f"{name}: no {name}.csv in {self.__dict__.get('folder')} "
            f"(tables: {', '.join(sorted(t for t in tables if '/' not in t))})"
        )

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]

    def __dir__(self):
        return sorted(set(super().__dir__()) | {t for t in self.tables if "/" not in t})


def load_results(folder: Union[str, os.PathLike]) -> Results:
    """Every CSV file under ``folder`` (a bench's or a command's results folder)."""
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"{folder}: no such results folder")
    tables = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".csv") and not name.startswith("."):
                path = os.path.join(root, name)
                key = os.path.relpath(path, folder)[: -len(".csv")].replace(os.sep, "/")
                with open(path, encoding="utf-8") as file:
                    tables[key] = _frame(file.read())
    return Results(folder=folder, tables=tables)


def bench(
    spec: Union[str, os.PathLike],
    out: Optional[Union[str, os.PathLike]] = None,
    traces: Optional[Union[str, os.PathLike]] = None,
    stand_in: bool = False,
    jobs: Optional[int] = None,
    progress: bool = True,
) -> Results:
    """Runs a bench spec as ``gapbench bench`` does (resumable: a second call finishes what
    an interrupted one left) and loads its results folder."""
    folder = _native.bench(
        os.fspath(spec),
        None if out is None else os.fspath(out),
        None if traces is None else os.fspath(traces),
        stand_in,
        jobs,
        progress,
    )
    return load_results(folder)
