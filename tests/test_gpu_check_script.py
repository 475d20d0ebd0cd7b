"""bench/gpu_check.sh, the check prepared for a GPU machine (which CI does not have): it
installs the dev and gpu extras with CUDA 12 throughout, and ends within its 8 minutes."""
import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "gpu_check.sh"


def _requirement_lists():
    """The module-level lists of setup.py (DEV, CUDA_SIM, DASK, GPU), read without running it."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    lists = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            lists[node.targets[0].id] = [ast.literal_eval(e) for e in node.value.elts]
    return lists


def test_dev_and_gpu_extras_are_cuda_12_throughout():
    lists = _requirement_lists()
    requirements = lists["DEV"] + lists["CUDA_SIM"] + lists["GPU"]
    cuda_13 = [r for r in requirements if re.search(
        r"cu13|nvidia-nvvm|^nvidia-cuda-nvrtc(?!-cu12)|(cuda-bindings|cuda-toolkit).*\b13", r)]
    assert not cuda_13, f"CUDA 13 packages beside cupy-cuda12x: {cuda_13}"
    numba_cuda = [r for r in requirements if r.startswith("numba-cuda")]
    assert numba_cuda and all(r.startswith("numba-cuda[cu12]") for r in numba_cuda), numba_cuda
    assert any(r.startswith("cupy-cuda12x") for r in lists["GPU"])


def test_the_script_installs_both_extras_within_its_budget():
    text = SCRIPT.read_text(encoding="utf-8")
    assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0
    assert '-e ".[dev,gpu]"' in text
    budget = int(re.search(r"BUDGET_S=\$\{GBM_GPU_CHECK_BUDGET_S:-(\d+)\}", text).group(1))
    assert budget < 8 * 60
    # every step is bounded: a literal timeout is a short one, the long steps take a share
    for match in re.finditer(r"timeout (\S+)", text):
        value = match.group(1)
        assert value.startswith('"$(share') or int(value) <= 60, match.group(0)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_steps_share_is_cut_to_what_the_budget_has_left():
    text = SCRIPT.read_text(encoding="utf-8")
    function = re.search(r"^share\(\) \{.*?^\}", text, re.S | re.M).group(0)

    def share(elapsed, want, keep):
        program = (f"BUDGET_S=470; started=$(( $(date +%s) - {elapsed} )); {function}\n"
                   f"share {want} {keep}")
        return int(subprocess.run(["bash", "-c", program], capture_output=True, text=True,
                                  check=True).stdout)

    assert share(10, 240, 180) == 240  # a fresh start: the install's whole share
    assert share(200, 240, 180) == 90  # a slow start: what is left after the tests' 180 s
    assert share(469, 240, 5) == 1  # nothing left: the step is cut at once
