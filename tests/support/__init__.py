"""What the tests share: stand-ins for CuPy (``fake_gpu``) and CuPy's NCCL
(``fake_nccl``), the CUDA tests' device arrays (``device_arrays``), the reference model
cases behind the fixture files (``model_cases``), corrupted model files
(``corruptions``), the fuzzers (``fuzz_models``), a fresh-interpreter runner
(``isolated``), the linear models' all-zero solutions in closed form
(``linear_optima``), random trees for the explanation kernels (``random_trees``) and
gbm's import graph (``import_graph``)."""
