"""Model files: gbm's JSON (``gbm_json``), its validation on load (``validation``),
XGBoost's JSON model format both ways (``xgboost_json``), and files written atomically
(``atomic``: model files, checkpoints, the command line's outputs)."""
