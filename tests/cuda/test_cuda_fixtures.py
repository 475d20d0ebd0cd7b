"""``device="cuda"`` trains the reference models at their full size to the files kept in
``tests/fixtures/models``, byte for byte: the CPU's oracle, on 600 to 30,000 rows with all
their rounds and 256 bins, where the kernels run many blocks, many rows per thread and
several shared-memory feature groups (``test_cuda_training.py`` shrinks the same cases for
the simulator). On a GPU every case runs; under the simulator, where one case takes about
20 s, only ``squared``, so that this file's own logic runs in CI."""
import json

import pytest

import gbm
from tests.support.device_arrays import SIMULATOR
from tests.support.model_cases import CASES, FIXTURES, first_difference

pytest.importorskip("pandas")

SIMULATOR_CASES = ("squared",)


@pytest.mark.parametrize("name", sorted(CASES))
def test_full_size_reference_model_on_the_device(name):
    if SIMULATOR and name not in SIMULATOR_CASES:
        pytest.skip("full-size cases run on a GPU; the simulator takes about 20 s a case")
    spec = CASES[name]()
    model = gbm.train(dict(spec.params, device="cuda"), spec.X, spec.y, spec.rounds,
                      **spec.kwargs)
    expected = (FIXTURES / f"{name}.json").read_text()
    got = model.to_json()
    if got != expected:
        where = first_difference(json.loads(got), json.loads(expected))
        pytest.fail(f"case {name} on the device: not the reference file ({where or 'formatting'})")
