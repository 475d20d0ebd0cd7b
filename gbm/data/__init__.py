"""What a fit reads: user input checked and converted (``inputs``), ``DMatrix``,
categorical features, query groups, bin edges and bin matrices (``binning``), and
XGBoost's calling conventions (``compat``)."""
