#!/usr/bin/env python3
"""Re-executes every FetchCast notebook headless, each from a clean kernel, with nbclient.

    Notebooks/.venv/bin/python Notebooks/run-all.py            # check: fail if any cell fails
    Notebooks/.venv/bin/python Notebooks/run-all.py --save     # also write the outputs back

Notebooks run with Notebooks/ as their working directory and read the CSVs in Notebooks/data/
(made by Notebooks/make-data.sh). Exits 1 if any cell of any notebook raises, naming the
notebook and the cell.
"""
import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

HERE = Path(__file__).resolve().parent
NOTEBOOKS = ["launch-patterns.ipynb", "freshness-vs-energy.ipynb", "push-delivery.ipynb", "calibration.ipynb"]


def run(path: Path, save: bool, timeout: int) -> bool:
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(HERE)}})
    start = time.monotonic()
    try:
        client.execute()
    except CellExecutionError as error:
        print(f"FAIL {path.name}: {error}", file=sys.stderr)
        return False
    except Exception as error:  # kernel died, timeout, missing kernel
        print(f"FAIL {path.name}: {type(error).__name__}: {error}", file=sys.stderr)
        return False
    if save:
        for cell in nb.cells:  # execution timing metadata would make every run a diff
            cell.get("metadata", {}).pop("execution", None)
        nbformat.write(nb, path)
    print(f"ok   {path.name} ({time.monotonic() - start:.1f} s)", file=sys.stderr)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", action="store_true", help="write the executed outputs back into the notebooks")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    parser.add_argument("notebooks", nargs="*", help="notebook files (default: all four)")
    args = parser.parse_args()
    paths = [Path(p).resolve() for p in args.notebooks] or [HERE / n for n in NOTEBOOKS]
    missing = [p for p in paths if not p.exists()]
    if missing:
        print("missing notebook: " + ", ".join(map(str, missing)), file=sys.stderr)
        return 1
    results = [run(p, args.save, args.timeout) for p in paths]
    passed = sum(results)
    print(f"notebooks: {passed} passed, {len(results) - passed} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
