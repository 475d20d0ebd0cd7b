"""gbm benchmarks: ``python -m bench`` runs the CPU cases of docs ``BENCHMARKS.md``.

gbm and its peers (xgboost, lightgbm, scikit-learn) run interleaved in one run and are
reported with ratios gbm / peer beside the absolute seconds; see ``bench/run.py``.
"""
