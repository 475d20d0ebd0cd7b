"""What a fit reads: user input checked and converted (``inputs``), sparse input kept sparse
(``sparse``), ``DMatrix``, categorical features, query groups, interval labels, batches
from a ``DataIter`` (``iterator``) or from files (``files``), a ``DMatrix`` read from a
file (``uri``, ``text_formats``, ``binary_format``), the training data in one form
(``training_data``), eval sets in one form (``eval_sets``), and XGBoost's
``f(predt, dtrain)`` convention for user objectives and metrics (``compat``). The binned
rows made of them: ``gbm.bins``."""
