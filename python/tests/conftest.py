"""Shared fixtures: the real openb traces and the `gapbench` CLI the package is compared with.

The traces are `$GAPBENCH_TRACES`, else `../shared/traces/openb` beside the repository (as
the Rust tests find them); the CLI is `$GAPBENCH_CLI`, else `gapbench` in cargo's release
target folder (`$CARGO_TARGET_DIR`, else `target/`), built there by cargo when missing.
Both are required: a test that needs them fails rather than skips without them.
"""

import os
import subprocess
from pathlib import Path

import pytest

import gapbench

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def traces() -> Path:
    folder = Path(os.environ.get("GAPBENCH_TRACES", REPO.parent / "shared" / "traces" / "openb"))
    assert (folder / "openb_node_list_gpu_node.csv").is_file(), (
        f"the real openb traces are not at {folder} (set GAPBENCH_TRACES to their folder)"
    )
    return folder


@pytest.fixture(scope="session")
def cli() -> Path:
    if "GAPBENCH_CLI" in os.environ:
        binary = Path(os.environ["GAPBENCH_CLI"])
    else:
        target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
        binary = target / "release" / "gapbench"
        if not binary.is_file():
            subprocess.run(
                ["cargo", "build", "--release", "-p", "gapbench", "--bin", "gapbench"],
                cwd=REPO,
                check=True,
            )
    assert binary.is_file(), f"no gapbench binary at {binary} (set GAPBENCH_CLI)"
    return binary


@pytest.fixture(scope="session")
def default_trace(traces) -> gapbench.Workload:
    return gapbench.Workload.openb(
        nodes=traces / "openb_node_list_gpu_node.csv",
        tasks=traces / "openb_pod_list_default.csv",
    )


def run_cli(cli: Path, *args) -> None:
    """Runs the CLI; its output is shown when it fails."""
    done = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True)
    assert done.returncode == 0, f"gapbench {' '.join(map(str, args))}:\n{done.stdout}\n{done.stderr}"
