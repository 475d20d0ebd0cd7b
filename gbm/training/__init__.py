"""The boosting loop ``train`` (``loop``) over a prepared fit (``prepare``), one round
(``rounds``), the eval sets' scoring with train's printing and early stopping
(``evaluation``), and the runner of a fit's callbacks (``callbacks``); ``Booster.update``'s
rounds one at a time (``stepwise``, registered with ``gbm.model.stepping`` here)."""
from . import stepwise  # noqa: F401  (registers Booster.update's session)
