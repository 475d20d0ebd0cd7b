"""Peak fit memory of gbm and xgboost as ``python -m bench`` measures it (bench.run's
workers: VmHWM rise over RSS before each timed fit, max over the timed fits), for some
cases, without the compile probes:

    python -m bench.memory_check rows-200k,rows-1m [--repeats 2] [--libs gbm,xgboost]
"""
import argparse, os, sys, tempfile  # noqa: E401
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from bench.run import FULL_ROWS, run_case  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--libs", default="gbm,xgboost")
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args()
    print("| case | library | peak fit MB per timed fit | peak MB | fit s | load avg before |")
    print("|---|---|---|--:|--:|--:|")
    for case in a.cases.split(","):
        load = os.getloadavg()[0]
        with tempfile.TemporaryDirectory(prefix="gbm-mem-") as tmp:
            res = run_case(case, FULL_ROWS, a.libs.split(","), a.repeats, 2, tmp)
        for lib, r in res.items():
            timed = r["runs"][1:]
            if not timed:
                print(f"| {case} | {lib} | error {r['error']} | | | |")
                continue
            peaks = [x["peak_mb"] for x in timed]
            fits = sorted(x["fit_s"] for x in timed)
            print(f"| {case} | {lib} | {' / '.join(f'{p:.1f}' for p in peaks)} | {max(peaks):.0f} | "
                  f"{fits[len(fits) // 2]:.2f} | {load:.2f} |", flush=True)


if __name__ == "__main__":
    main()
