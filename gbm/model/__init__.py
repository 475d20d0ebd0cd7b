"""A fitted model: ``Booster`` (predict, save, load, inspect), text and JSON dumps of its
trees, and SHAP explanations."""
