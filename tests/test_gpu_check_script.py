"""The GPU check's pieces that run without a GPU or a network (the check itself runs on a
lent GPU machine, which CI does not have; its rehearsal is bench/gpu_rehearse.sh):
setup.py's GPU extras per CUDA version, the packing of the carried wheels (LZMA wheels that
pip installs, parts joined and checked by SHA-256, a part missing or wrong left out), the
requirement and package-list checks, the path hook that maps gbm.kernels without an
install, bench/gpu.py's arguments and report, and the script's time budget."""
import ast
import json
import os
import random
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from bench import gpu, gpu_carry, gpu_imports

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "gpu_check.sh"
NOISE = random.Random(0).randbytes(150_000)  # incompressible: two parts of 100 kB


def _setup_lists():
    """The module-level lists of setup.py, read without running it."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    return {node.targets[0].id: [ast.literal_eval(e) for e in node.value.elts]
            for node in tree.body if isinstance(node, ast.Assign)
            and isinstance(node.value, ast.List)}


def test_one_gpu_extra_per_cuda_version_and_dev_stays_cuda_12():
    lists = _setup_lists()
    for name, cuda in (("GPU_CU12", "12"), ("GPU_CU13", "13")):
        other = "13" if cuda == "12" else "12"
        assert f"numba-cuda[cu{cuda}]==0.30.*" in lists[name]
        assert f"cupy-cuda{cuda}x" in lists[name]
        assert any(r.startswith(f"dask-cuda[cu{cuda}]") for r in lists[name])
        assert not [r for r in lists[name] if f"cu{other}" in r or f"cuda{other}" in r]
    assert not [r for r in lists["DEV"] + lists["CUDA_SIM"] if "13" in r and "cu" in r]
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert '"gpu": GPU_CU12' in setup and '"gpu-cu13": GPU_CU13' in setup


def test_carried_versions_are_the_dev_extras_and_none_is_in_the_image():
    lists, image = _setup_lists(), gpu_carry.image_packages()
    for requirement in lists["DASK"]:
        name, version = re.match(r"([a-z-]+)(?:\[\w+\])?==(.+)", requirement).groups()
        assert gpu_carry.CARRIED[name] == version
    assert any(r.startswith("dask-cuda[cu13]==" + gpu_carry.CARRIED["dask-cuda"][:5])
               for r in lists["GPU_CU13"])
    assert not set(gpu_carry.CARRIED) & image
    assert {"numba", "numba-cuda", "cupy-cuda13x", "numpy", "pytest"} <= image


def test_every_distribution_the_check_needs_is_in_the_image_or_carried():
    available = gpu_carry.image_packages() | set(gpu_carry.CARRIED)
    setup = (ROOT / "setup.py").read_text(encoding="utf-8")
    install = ast.literal_eval(re.search(r"install_requires=(\[.*?\])", setup, re.S).group(1))
    needed = [re.split(r"[<>=\[;]", r)[0] for r in install]
    needed += list(gpu_imports.NEEDED.values()) + list(gpu_imports.OPTIONAL.values())
    assert not [n for n in needed if gpu_carry.normalize(n) not in available]


def test_the_tree_leaves_room_for_each_runs_wheels():
    assert gpu_carry.tree_bytes(ROOT) + gpu_carry.RUN_FOLDER_BYTES <= gpu_carry.CARRY_LIMIT


def test_requirements_apply_on_the_target_only():
    available = {"numpy"}
    requires = ["numpy>=1.21", 'importlib_metadata>=4; python_version < "3.12"',
                'distributed; extra == "dask"', "Scipy_Stack (>=1.0)",
                "nvidia-nccl-cu12; platform_system == 'Linux'", "pywin32; sys_platform == 'win32'"]
    assert gpu_carry.missing_requirements(requires, available) == ["scipy-stack", "nvidia-nccl-cu12"]


def _wheel(folder, name, version, requires=(), blob=b""):
    """A minimal wheel that pip installs, with ``blob`` as a data file."""
    path = Path(folder) / f"{name}-{version}-py3-none-any.whl"
    info = f"{name}-{version}.dist-info"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr(f"{name}/__init__.py", "x = 1\n")
        wheel.writestr(f"{name}/blob.bin", blob)
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: "
                       f"{version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires))
        wheel.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\n"
                       "Root-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture
def packed(tmp_path, monkeypatch):
    """Two runs built from a small wheel and a big one that goes in two parts."""
    image = tmp_path / "image.txt"
    image.write_text("# the image\nnumpy\n")
    monkeypatch.setattr(gpu_carry, "IMAGE_LIST", image)
    monkeypatch.setattr(gpu_carry, "CARRIED", {"small": "1.0", "big": "2.0"})
    monkeypatch.setattr(gpu_carry, "SPLIT", ("big",))
    downloaded = tmp_path / "downloaded"
    downloaded.mkdir()
    _wheel(downloaded, "small", "1.0", ["numpy", 'tomli; python_version < "3.11"'])
    _wheel(downloaded, "small", "0.9")  # another version: not picked
    _wheel(downloaded, "big", "2.0", blob=NOISE)
    manifest, sizes = gpu_carry.build(downloaded, tmp_path / "out", tree=1000,
                                      max_part=100_000)
    return tmp_path, manifest, sizes


def _pip_install(wheel, target):
    return subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index",
                           "--no-deps", "--disable-pip-version-check", "--target", str(target),
                           str(wheel)], capture_output=True, text=True)


def test_build_stash_and_join_give_back_the_packed_wheels(packed, capsys):
    tmp_path, manifest, sizes = packed
    runs = [tmp_path / "out" / "run1", tmp_path / "out" / "run2"]
    big = next(w for w in manifest["wheels"] if w["name"] == "big")
    assert [p["file"] for p in big["parts"]] == [big["file"] + ".part1", big["file"] + ".part2"]
    assert (runs[0] / big["parts"][0]["file"]).is_file()
    assert sorted(f.name for f in runs[1].iterdir()) == sorted(
        [big["parts"][1]["file"], "small-1.0-py3-none-any.whl", "manifest.json"])
    assert sizes == [1000 + sum(f.stat().st_size for f in run.iterdir()) for run in runs]
    # the wheels are repacked with LZMA members, their files unchanged
    with zipfile.ZipFile(runs[1] / "small-1.0-py3-none-any.whl") as wheel:
        assert {i.compress_type for i in wheel.infolist()} == {zipfile.ZIP_LZMA}
        assert wheel.read("small/__init__.py") == b"x = 1\n"
    # there: run 1 keeps its part; run 2 joins it with its own
    keep = tmp_path / "keep"
    assert gpu_carry.stash(runs[0], keep) == 0
    assert gpu_carry.join(tmp_path / "wheels", [runs[1], keep]) == []
    joined = tmp_path / "wheels" / big["file"]
    assert gpu_carry.sha256(joined) == big["sha256"]
    assert "big: joined from 2 parts, SHA-256 checked" in capsys.readouterr().out
    installed = _pip_install(joined, tmp_path / "site")
    assert installed.returncode == 0, installed.stderr
    assert (tmp_path / "site" / "big" / "blob.bin").read_bytes() == NOISE


def test_a_missing_or_damaged_part_leaves_that_wheel_out(packed, capsys):
    tmp_path, manifest, _ = packed
    run1, run2 = tmp_path / "out" / "run1", tmp_path / "out" / "run2"
    assert gpu_carry.join(tmp_path / "cold", [run2]) == ["big"]  # run 1's part gone
    assert "big: left out: big-2.0-py3-none-any.whl.part1 missing" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "cold").iterdir()) == ["small-1.0-py3-none-any.whl"]
    part = run1 / "big-2.0-py3-none-any.whl.part1"
    data = bytearray(part.read_bytes())
    data[1000] ^= 1
    part.write_bytes(bytes(data))
    assert gpu_carry.stash(run1, tmp_path / "keep") == 1
    assert gpu_carry.join(tmp_path / "bad", [run2, run1]) == ["big"]
    assert "part1 wrong SHA-256 or size" in capsys.readouterr().out
    assert gpu_carry.main(["join", str(tmp_path / "bad2"), str(run2), str(run1)]) == 3


def test_build_refuses_unmet_requirements_and_runs_over_the_limit(packed, tmp_path):
    downloaded = tmp_path / "downloaded"
    with pytest.raises(ValueError, match="over the 100000 bytes a run may carry"):
        gpu_carry.build(downloaded, tmp_path / "o1", tree=1000, max_part=100_000, limit=100_000)
    with pytest.raises(ValueError, match="need 3 parts of at most 60000, but there are 2 runs"):
        gpu_carry.build(downloaded, tmp_path / "o2", tree=1000, max_part=60_000)
    _wheel(downloaded, "small", "1.0", ["numpy", "notinimage>=2"])
    with pytest.raises(ValueError, match="notinimage"):
        gpu_carry.build(downloaded, tmp_path / "o3", tree=1000, max_part=100_000)
    (downloaded / "big-2.0-py3-none-any.whl").unlink()
    with pytest.raises(ValueError, match="no wheel in .* for: big"):
        gpu_carry.build(downloaded, tmp_path / "o4", tree=1000)


def test_the_path_hook_maps_gbm_kernels_and_runs_a_hidden_sitecustomize(tmp_path):
    hidden = tmp_path / "sitecustomize.py"
    hidden.write_text("import os\nos.environ['HIDDEN_SITECUSTOMIZE'] = 'ran'\n")
    program = ("import os, sys, gbm.kernels, numpy\n"
               "print(gbm.kernels.__file__, os.environ.get('HIDDEN_SITECUSTOMIZE'))\n"
               "numpy.__dict__.pop('row_stack', None)\n"
               "sys.meta_path[0].find_spec('numba.cuda.np.arrayobj')\n"
               "print(numpy.row_stack is numpy.vstack)\n")
    path = os.pathsep.join([str(ROOT), str(ROOT / "bench" / "gpu_site"), str(tmp_path)])
    env = dict(os.environ, PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(ROOT / "kernels" / "__init__.py"), "ran", "True"]


def test_bench_gpu_refuses_bad_arguments_before_looking_for_a_gpu(capsys):
    for argv in (["--libs", "catboost"], ["--cases", "clf-1m"], ["--repeats", "0"]):
        with pytest.raises(SystemExit) as stop:
            gpu.main(argv)
        assert stop.value.code == 2
    assert "libs among ('gbm', 'xgboost')" in capsys.readouterr().err


def test_the_gpu_report_of_gbm_alone_says_so():
    run = {"fit_s": [2.0], "predict_s": [0.5], "peak_bytes": [2**30], "warmup_s": 9.0,
           "metric": ("AUC", 0.9)}
    results = {"clf-10m": {"gbm": run, "histogram_gbps": 1500.0, "copy_gbps": 3000.0}}
    args = SimpleNamespace(rows=10_000_000, rounds=500, repeats=1, libs=["gbm"], depth=6,
                           max_bin=256)
    text = gpu.report(SimpleNamespace(name="H100", simulator=False), results, args)
    row = next(line for line in text.splitlines() if line.startswith("| clf-10m"))
    assert row == "| clf-10m | 2.00 | — | — | — | AUC 0.9000 | — | 1.00 | — | 1500 | 3000 |"
    assert "xgboost was not run" in text and "clf-10m gbm 9.0 s" in text


def test_the_script_is_bounded_and_names_its_two_runs():
    text = SCRIPT.read_text(encoding="utf-8")
    assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0
    assert subprocess.run(["bash", "-n", str(ROOT / "bench" / "gpu_wheels.sh")]).returncode == 0
    budget = int(re.search(r"BUDGET_S=\$\{GBM_GPU_CHECK_BUDGET_S:-(\d+)\}", text).group(1))
    assert budget < 8 * 60
    for match in re.finditer(r"(?:timeout|bounded) (\S+)", text):
        value = match.group(1)
        assert value.startswith(('"$(share', '"$seconds"')) or int(value) <= 120, match.group(0)
    shares = dict(re.findall(r"\b(T_[A-Z]+)=(\d+)", text.split("[ $SMALL = 1 ] && { T_PTX")[0]))
    assert int(shares["T_TESTS"]) + int(shares["T_GPU"]) + int(shares["T_CPU"]) + 30 <= budget
    assert 'command "bash bench/gpu_check.sh stash"  carry [".gpu-wheels/run1"]' in text
    assert 'command "bash bench/gpu_check.sh"  carry [".gpu-wheels/run2"]' in text
    assert "pip install" in text and "--no-index" in text


def test_a_steps_share_is_cut_to_what_the_budget_has_left():
    text = SCRIPT.read_text(encoding="utf-8")
    function = re.search(r"^share\(\) \{.*?^\}", text, re.S | re.M).group(0)

    def share(elapsed, want, keep):
        program = (f"BUDGET_S=470; started=$(( $(date +%s) - {elapsed} )); {function}\n"
                   f"share {want} {keep}")
        return int(subprocess.run(["bash", "-c", program], capture_output=True, text=True,
                                  check=True).stdout)

    assert share(10, 150, 280) == 150  # a fresh start: the tests' whole share
    assert share(100, 150, 280) == 90  # a slow start: what is left after the later 280 s
    assert share(469, 60, 5) == 1  # nothing left: the step is cut at once


def test_the_manifest_names_every_file_a_run_folder_holds(packed):
    tmp_path, manifest, _ = packed
    named = {w["file"] for w in manifest["wheels"] if not w["parts"]}
    named |= {p["file"] for w in manifest["wheels"] for p in w["parts"]}
    for run in ("run1", "run2"):
        folder = tmp_path / "out" / run
        assert json.loads((folder / "manifest.json").read_text()) == manifest
        assert {f.name for f in folder.iterdir()} - {"manifest.json"} <= named
