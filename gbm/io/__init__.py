"""Model files: by their names, JSON or UBJSON (``model_file``; UBJSON in ``ubjson``),
gbm's JSON content (``gbm_json``), its validation on load (``validation``), JSON
text parsed strictly (``strict_json``), XGBoost's JSON model format: the export
(``xgboost_json``), the import (``xgboost_import``) and the checks of every field it reads
(``xgboost_checks``, one tree ``xgboost_trees``, one field ``xgboost_fields``), and files
written atomically (``atomic``: model files, checkpoints, the command line's outputs)."""
