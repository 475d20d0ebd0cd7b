#!/usr/bin/env bash
# Builds .gpu-wheels/ (ignored by git): the Python packages that the lent GPU machine's image
# lacks (bench/gpu_image_packages.txt), for bench/gpu_check.sh to install there with no
# package index: dask, distributed, dask-cuda and their missing pure-Python needs (partd,
# locket, tblib, tornado, zict), lightgbm, tbb and tcmlib (gbm's threading layer), and
# xgboost. Pins and packing: bench/gpu_carry.py (wheels LZMA-compressed; xgboost's in parts
# of at most 55 MB; SHA-256 of every file in manifest.json).
#
#   bash bench/gpu_wheels.sh        # here, with the package index; about 3 minutes on 2
#                                   # cores (150 MB of downloads, then LZMA: xgboost's
#                                   # 237 MB library takes most of it)
#
# It makes .gpu-wheels/run1 (xgboost's first part, about 55 MB) and .gpu-wheels/run2 (the
# other part and every other wheel, about 52 MB), prints each run's size with the working
# tree (64 MiB at most), and fails if a carried wheel needs a package that neither the image
# nor the wheels hold. How the runs go there: bench/gpu_check.sh's header.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
downloaded=.gpu-wheels/download
mkdir -p "$downloaded"
mapfile -t pins < <("$PY" -m bench.gpu_carry pins)
# the machine's interpreter: CPython 3.12 on x86-64 Linux (manylinux)
"$PY" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp --abi cp312 --abi abi3 --abi none \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 --platform any \
    -d "$downloaded" "${pins[@]}"
"$PY" -m bench.gpu_carry build "$downloaded" .gpu-wheels
du -sh .gpu-wheels/run1 .gpu-wheels/run2
