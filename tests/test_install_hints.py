"""Install hints name the distribution, ``detgbm`` (setup.py): ``gbm`` on the package
index is an unrelated project, so ``pip install gbm`` or ``gbm[gpu]`` in a message or a
doc would install the wrong thing."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
# the wrong name after pip install (options and quotes allowed), or an extra spelled on it
WRONG = [re.compile(r"pip3?\s+install\s+(?:-{1,2}[\w-]+\s+)*['\"]?gbm(?![\w.-])"),
         re.compile(r"(?<![\w.-])gbm\[[\w,\s-]*\]")]


def _files():
    for pattern in ("README.md", "setup.py", "gbm/**/*.py", "kernels/**/*.py", "bench/**/*",
                    "docs/**/*.md", "tests/**/*.py", ".ci/*"):
        for path in ROOT.glob(pattern):
            if path.is_file() and path.suffix in {"", ".py", ".md", ".sh", ".txt"} \
                    and path != Path(__file__).resolve():
                yield path


def test_no_message_or_doc_says_pip_install_gbm():
    found = []
    for path in _files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(p.search(line) for p in WRONG):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, "install hints naming 'gbm', not 'detgbm':\n" + "\n".join(found)
    assert sum(1 for _ in _files()) > 50  # the scan did read the repository


def test_the_patterns_catch_the_wrong_name():
    for wrong in ("pip install gbm", "pip install 'gbm[gpu]'", 'pip install -U "gbm[dask]"',
                  "needs CuPy: pip install 'gbm[gpu]'"):
        assert any(p.search(wrong) for p in WRONG), wrong
    for right in ("pip install 'detgbm[gpu]'", "pip install -e '.[gpu]'", "import gbm",
                  "pip install gbm-tools", "gbm.dask"):
        assert not any(p.search(right) for p in WRONG), right


def test_reading_a_gpu_array_without_cupy_names_detgbm(monkeypatch):
    from gbm.data.inputs import check_X

    class GPUArray:
        __cuda_array_interface__ = {"shape": (2, 2), "typestr": "<f4", "data": (0, False),
                                    "version": 3}

    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy fails
    with pytest.raises(ImportError, match=r"pip install 'detgbm\[gpu\]'"):
        check_X(GPUArray())
    assert np.isfinite(check_X(np.ones((2, 2)))).all()  # host input needs no CuPy
