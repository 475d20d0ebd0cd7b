"""The boosting loop ``train`` (``loop``) over a prepared fit (``prepare``), one round
(``rounds``), the eval sets' scoring with train's printing and early stopping
(``evaluation``), and the runner of a fit's callbacks (``callbacks``)."""
