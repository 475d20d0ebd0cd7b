"""What the tests share: stand-ins for CuPy (``fake_gpu``) and CuPy's NCCL
(``fake_nccl``), the CUDA tests' device arrays (``device_arrays``), the reference model
cases behind the fixture files (``model_cases``), corrupted model files
(``corruptions``), the fuzzers (``fuzz_models``) and a fresh-interpreter runner
(``isolated``)."""
