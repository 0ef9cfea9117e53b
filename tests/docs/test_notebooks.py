"""Every notebook in notebooks/ executes end to end against the sandbox (no API key), and the
cells tagged ``chart`` show an image."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow  # end to end: `pytest -m 'not slow'` skips it

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path: Path, tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("MARKETFRAME_API_KEY", raising=False)
    monkeypatch.setenv(
        "PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    )
    monkeypatch.setenv("MARKETFRAME_HOME", str(tmp_path))
    nb = nbformat.read(path, as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    for cell in nb.cells:
        if cell.cell_type == "code":
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            assert not errors, f"{path.name}: {errors}"
        if "chart" in cell.get("metadata", {}).get("tags", []):
            images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
            assert images, f"{path.name}: a chart cell shows no image:\n{cell.source}"
