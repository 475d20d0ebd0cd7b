"""The arguments of ``train`` and ``cv`` that are not hyperparameters, checked: the round count,
early stopping's patience, the printing period, and the arguments XGBoost spells two ways."""
import numpy as np


def check_rounds(num_boost_round):
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, (int, np.integer)) \
            or num_boost_round < 0:
        raise ValueError(f"num_boost_round must be an integer >= 0, got {num_boost_round!r}")


def either_spelling(name, value, other_name, other):
    """An argument XGBoost spells differently: either spelling, not both."""
    if value is not None and other is not None:
        raise TypeError(f"{name} and {other_name} are the same argument; pass one")
    return other if value is None else value


def check_patience(rounds):
    if rounds is None:
        return None
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"early_stopping_rounds must be an integer >= 1 or None, got {rounds!r}")
    return int(rounds)


def check_period(verbose):
    """``verbose_eval`` as a period in rounds (0: never print)."""
    if isinstance(verbose, bool) or verbose is None:
        return int(bool(verbose))
    if isinstance(verbose, (int, np.integer)) and verbose >= 0:
        return int(verbose)  # XGBoost's verbose_eval=N: every N rounds
    raise ValueError(f"verbose_eval must be True, False or an integer >= 0 (print every "
                     f"that many rounds), got {verbose!r}")
