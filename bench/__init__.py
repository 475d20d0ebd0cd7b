"""gbm benchmarks: ``python -m bench`` runs the CPU cases of ``bench/cases.py``.

gbm and its peers (xgboost, lightgbm, scikit-learn) run interleaved in one run and are
reported with ratios gbm / peer beside the absolute seconds; see ``bench/run.py``.
"""
