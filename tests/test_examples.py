"""Every examples/*.py runs with --quick and prints a result that is checked here."""
import os
import pathlib
import re
import subprocess
import sys

import pytest


ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = sorted(p.name for p in (ROOT / "examples").glob("*.py"))


def _floats(pattern, out):
    m = re.search(pattern, out)
    assert m, f"{pattern!r} not in output:\n{out}"
    return [float(g) for g in m.groups()]


def check_quickstart(out):
    assert _floats(r"max \|w - w_true\| = ([\d.]+)", out)[0] < 0.05
    assert "gradcheck of the loss gradient: True" in out


def check_hypothesis_gradcheck(out):
    assert "property held on" in out
    assert "a backward in JAX's convention is caught: True" in out
    re_, im = _floats(r"z\.grad = ([-\d.]+)\+([-\d.]+)j", out)
    assert (re_, im) == pytest.approx((4 * 5 * 1, 4 * 5 * 2))    # 4 |z|^2 z at z = 1+2j


def check_jax_interchange(out):
    eager = _floats(r"loss \(wgrad eager\)\s+= ([\d.]+)", out)[0]
    jitted = _floats(r"loss \(jax.jit of wgrad.to_jax\)\s+= ([\d.]+)", out)[0]
    assert eager == pytest.approx(jitted, rel=1e-9)
    assert _floats(r"max \|dL/dphi wgrad - jax\|\s+= ([\d.e+-]+)", out)[0] < 1e-10
    assert "jax.grad == conj(wgrad a.grad): True" in out
    first, last = _floats(r"loss ([\d.]+) -> ([\d.]+)", out)
    assert last < 0.5 * first


def check_beamforming(out):
    target = _floats(r"gain toward target .*?: ([-\d.]+) dB", out)[0]
    interferer = _floats(r"gain toward interferer .*?: ([-\d.]+) dB", out)[0]
    assert target > -0.5 and interferer < -60.0
    loss, best = _floats(r"loss ([\d.e+-]+) \(closed-form optimum ([\d.e+-]+)\)", out)
    assert loss == pytest.approx(best, rel=1e-6)
    assert _floats(r"max \|w - w_closed_form\| = ([\d.e+-]+)", out)[0] < 1e-5


def check_mri_reconstruction(out):
    errs = [float(e) for e in re.findall(r"relative error\s*[:=]?\s*([\d.]+)", out)]
    assert len(errs) >= 2 and errs[-1] < errs[0], out


def check_phase_retrieval(out):
    first = _floats(r"initial loss ([\d.e+-]+)", out)[0]
    adam = _floats(r"Adam: loss ([\d.e+-]+)", out)[0]
    lbfgs = _floats(r"L-BFGS: loss ([\d.e+-]+)", out)[0]
    assert lbfgs <= adam < 0.5 * first
    assert _floats(r"\|x - x_eager\| ([\d.e+-]+)", out)[0] < 1e-4  # compiled == eager


def check_unitary_fit(out):
    first, last = _floats(r"infidelity ([\d.e+-]+) -> ([\d.e+-]+)", out)
    assert last < 0.5 * first
    assert _floats(r"max \|U\^H U - I\| = ([\d.e+-]+)", out)[0] < 1e-5  # exp of skew-Hermitian


def check_data_parallel(out):
    assert "devices: 2 (cpu)" in out
    assert _floats(r"largest difference from one device: ([\d.e+-]+)", out)[0] < 1e-6
    first, last = _floats(r"loss ([\d.]+) -> ([\d.]+)", out)
    assert last < first


CHECKS = {name: fn for name, fn in globals().items() if name.startswith("check_")}


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_quick(name, tmp_path):
    path = [str(ROOT)] + [p for p in (os.environ.get("PYTHONPATH"),) if p]
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join(path))
    r = subprocess.run([sys.executable, str(ROOT / "examples" / name), "--quick"], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    check = CHECKS.get("check_" + name[:-3])
    assert check is not None, f"add check_{name[:-3]} (what the example shows) to this file"
    check(r.stdout)
    written = [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert not written, "--quick must not write files"
