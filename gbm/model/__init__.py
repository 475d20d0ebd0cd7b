"""A fitted model: ``Booster`` (predict, save, load, inspect, evaluate, configure,
slice), text and JSON dumps of its trees, and SHAP explanations."""
