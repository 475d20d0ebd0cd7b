"""What a fit reads: user input checked and converted (``inputs``), ``DMatrix``,
categorical features, query groups, bin edges and bin matrices (``binning``), the training
data in one form (``training_data``), eval sets in one form (``eval_sets``), and XGBoost's
``f(predt, dtrain)`` convention for user objectives and metrics (``compat``)."""
