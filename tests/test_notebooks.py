"""examples/notebooks/*.ipynb are stored without outputs and run from top to bottom."""
import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "examples" / "notebooks").glob("*.ipynb"))


def _have(*mods):
    return all(importlib.util.find_spec(m) is not None for m in mods)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, tmp_path):
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c["outputs"] == [] and c["execution_count"] is None for c in code), \
        "store notebooks without outputs"
    env = dict(os.environ, MPLBACKEND="Agg",
               PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in
                                                         (os.environ.get("PYTHONPATH"),) if p]))
    if _have("nbclient", "nbformat", "ipykernel"):
        # in a kernel, as Jupyter runs it (rich displays included)
        script = ("import nbformat, nbclient, sys\n"
                  "nb = nbformat.read(sys.argv[1], as_version=4)\n"
                  "nbclient.NotebookClient(nb, timeout=600, kernel_name='python3').execute()\n")
        args = [sys.executable, "-c", script, str(path)]
    else:
        # without Jupyter: the code cells as one script
        src = tmp_path / "notebook.py"
        src.write_text("\n\n".join("".join(c["source"]) for c in code))
        args = [sys.executable, str(src)]
    r = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
