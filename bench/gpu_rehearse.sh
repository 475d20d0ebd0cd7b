#!/usr/bin/env bash
# A rehearsal of bench/gpu_check.sh's two runs on the lent GPU machine, here, with no GPU:
#   1. a venv like the machine's python3: Python 3.12 and only the distributions of the
#      image (bench/gpu_image_packages.txt) that gbm, its tests and benchmarks use, at the
#      versions seen there where known (numpy 2.5.2, cupy-cuda13x 14.2.0, CUDA 13 packages,
#      no NVVM wheel); built once, with the package index, in $VENV;
#   2. the working tree copied as the run tool sends it (tracked and untracked files that
#      git does not ignore: no .venv, no __pycache__) plus run 1's carried folder, then
#      run 1 (`bash bench/gpu_check.sh stash`); then the tree again plus run 2's folder, run
#      1's files left in place as on a warm machine, and run 2 (`bash bench/gpu_check.sh`);
#   3. each run with the network shut (`unshare -n`: a network namespace with no interface
#      but loopback, which is up for Dask, and no route; checked first), an environment of its own
#      (no pip configuration, no PIP_* variables) and NUMBA_ENABLE_CUDASIM=1, which makes
#      every step of the check small.
# Needs root (unshare), bash gpu_wheels.sh first (.gpu-wheels/), and Python 3.12 (pyenv's,
# or python3.12 on PATH). `--cold` rehearses run 2 on a fresh machine instead (run 1's part
# gone: the benchmarks without xgboost). Output: $WORK/out{1,2}/ (the runs' $OUT).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${GBM_REHEARSAL_VENV:-/tmp/gbm-image-venv}
WORK=${GBM_REHEARSAL_DIR:-/tmp/gbm-gpu-rehearsal}
COLD=0
[ "${1:-}" = --cold ] && COLD=1
[ -f .gpu-wheels/run1/manifest.json ] || { echo "run bash bench/gpu_wheels.sh first"; exit 1; }

if [ ! -x "$VENV/bin/python3" ]; then
    py=$(ls -d /root/.pyenv/versions/3.12*/bin/python3 2>/dev/null | tail -1 || true)
    py=${py:-$(command -v python3.12)}
    "$py" -m venv "$VENV"
    "$VENV/bin/python3" -m pip install --quiet --upgrade pip
    # the image's CUDA 13 packages as it has them: numba-cuda without its cu13 extra (so no
    # NVVM wheel), cuda-toolkit's runtime and NVRTC
    "$VENV/bin/python3" -m pip install --quiet "numpy==2.5.2" "cupy-cuda13x==14.2.0" numba \
        numba-cuda "cuda-toolkit[nvrtc,cudart]==13.*" cuda-bindings cuda-core cuda-pathfinder \
        nvidia-nvjitlink nvidia-ml-py scipy pandas pyarrow scikit-learn narwhals pytest \
        pytest-timeout pytest-xdist hypothesis psutil cloudpickle toolz msgpack pyyaml click jinja2 fsspec \
        sortedcontainers packaging setuptools wheel threadpoolctl joblib urllib3
fi
"$VENV/bin/python3" - "$VENV" <<'EOF'
import subprocess, sys
from bench.gpu_carry import image_packages, normalize
listed = subprocess.run([sys.argv[1] + "/bin/python3", "-m", "pip", "list", "--format=freeze"],
                        capture_output=True, text=True, check=True).stdout.split()
extra = sorted({normalize(x.split("==")[0]) for x in listed} - image_packages())
print(f"rehearsal venv: {len(listed)} distributions, "
      + (f"outside the image's list only what they need: {extra}" if extra else
         "none outside the image's list"))
EOF

# the tree as the run tool sends it, and one run's carried folder
send() {
    mkdir -p "$WORK/tree"
    git ls-files -z --cached --others --exclude-standard \
        | tar --null --ignore-failed-read -T - -cf - | tar -xf - -C "$WORK/tree"
    rm -rf "$WORK/tree/$1"
    mkdir -p "$WORK/tree/$(dirname "$1")"
    cp -a "$ROOT/$1" "$WORK/tree/$1"
}
# one run: offline, an environment of its own, the simulator
offline() {
    local out=$1; shift
    rm -rf "$out"; mkdir -p "$out"
    unshare -n bash -c 'ip link set lo up 2>/dev/null || true
        links=$(awk "NR > 2 {print \$1}" /proc/net/dev | paste -sd" ")
        routes=$(awk "NR > 1" /proc/net/route | wc -l)
        [ "$links" = "lo:" ] && [ "$routes" = 0 ] || { echo "the network is NOT shut: $links"; exit 1; }
        echo "(offline: no network interface but loopback, no route)"
        cd "$0" && exec "$@"' "$WORK/tree" env -i PATH="$VENV/bin:/usr/bin:/bin" HOME=/root \
        PIP_CONFIG_FILE=/dev/null OUT="$out" NUMBA_ENABLE_CUDASIM=1 \
        GBM_GPU_STASH="$WORK/stash" GBM_GPU_PREFIX="$WORK/prefix" "$@"
}

rm -rf "$WORK"
mkdir -p "$WORK"
echo "--- load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
if [ $COLD = 0 ]; then
    send .gpu-wheels/run1
    start=$(date +%s)
    offline "$WORK/out1" bash bench/gpu_check.sh stash
    echo "--- run 1: $(( $(date +%s) - start )) s (load average $(cut -d' ' -f1-3 /proc/loadavg))"
else
    echo "--- cold: no run 1"
fi
send .gpu-wheels/run2
start=$(date +%s)
offline "$WORK/out2" bash bench/gpu_check.sh || echo "--- run 2 exited $?"
echo "--- run 2: $(( $(date +%s) - start )) s (load average $(cut -d' ' -f1-3 /proc/loadavg));" \
    "its \$OUT: $(ls "$WORK/out2" | paste -sd' ')"
