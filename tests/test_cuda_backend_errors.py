"""device='cuda' without what it needs: a clear error naming the ``gpu`` extra, never a
crash or a silent fall-back to the CPU."""
import numpy as np
import pytest

import gbm
from gbm.runtime.backend import get_backend
from tests.support.device_arrays import gpu_here

pytestmark = pytest.mark.skipif(gpu_here(), reason="a GPU and the CUDA packages are here")


def test_get_backend_names_the_gpu_extra():
    with pytest.raises(RuntimeError, match=r"device='cuda'.*pip install 'detgbm\[gpu\]'"):
        get_backend("cuda")


def test_training_on_cuda_names_the_gpu_extra():
    X, y = np.random.default_rng(0).normal(size=(20, 2)), np.arange(20.0)
    with pytest.raises(RuntimeError, match=r"pip install 'detgbm\[gpu\]'"):
        gbm.train({"device": "cuda"}, X, y, 1)


def test_an_unknown_device_is_a_value_error():
    with pytest.raises(ValueError, match="device"):
        get_backend("tpu")
