"""Executes a notebook in its own folder (CI: the examples must run, not rot).

    python python/tests/run_notebook.py examples/your-own-heuristic.ipynb

Fails (exit status 1) when a cell raises; the executed copy is not written back.
"""

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def main(path: str) -> int:
    notebook = nbformat.read(path, as_version=4)
    start = time.monotonic()
    client = NotebookClient(
        notebook,
        timeout=1200,
        kernel_name="python3",
        resources={"metadata": {"path": str(Path(path).resolve().parent)}},
    )
    try:
        client.execute()
    except Exception as error:  # nbclient's CellExecutionError carries the cell's traceback
        print(f"{path}: a cell failed:\n{error}", file=sys.stderr)
        return 1
    print(f"{path}: {len(notebook.cells)} cells executed in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
