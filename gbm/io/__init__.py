"""Model files: gbm's JSON (``gbm_json``), its validation on load (``validation``), and
XGBoost's JSON model format both ways (``xgboost_json``)."""
