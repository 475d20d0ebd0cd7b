"""``Booster``'s slicing (a mixin of ``gbm.model.booster.Booster``): ``booster[2:5]`` is the
model of rounds 2, 3 and 4, as XGBoost's slicing, and iterating gives each round's model."""
import numbers


def _bound(value, what):
    """A slice's start, stop or step: None (or ``...``) for its default, else an int."""
    if value is None or value is Ellipsis:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"a booster slice's {what} must be an int, got {type(value).__name__}")
    return int(value)


def _rounds(index, n):
    """The rounds ``index`` selects of a model of ``n`` rounds, by XGBoost's rules: an int
    (negative counts from the end, as a list's index), ``...`` (every round), or a slice
    with a start >= 0, a stop (None: the end) not below the start and at most ``n``, and
    a step >= 1; an empty selection is refused."""
    if isinstance(index, numbers.Integral) and not isinstance(index, bool):
        i = int(index) + n if index < 0 else int(index)
        if not 0 <= i < n:
            raise IndexError(f"round {index} is out of range for a model of {n} rounds")
        return [i]
    if index is Ellipsis:
        return list(range(n))
    if isinstance(index, tuple):
        raise ValueError("a Booster is sliced along one dimension, its rounds; got a tuple "
                         f"{index!r}")
    if not isinstance(index, slice):
        raise TypeError(f"a Booster is indexed by an int, a slice of rounds or ..., got "
                        f"{type(index).__name__}")
    start, stop, step = (_bound(index.start, "start"), _bound(index.stop, "stop"),
                         _bound(index.step, "step"))
    start = 0 if start is None else start
    if start < 0:
        raise ValueError(f"a booster slice's start must be >= 0, got {start} ({index})")
    if stop is not None and stop < start:
        raise ValueError(f"Invalid slice {index}: its stop {stop} is below its start {start}")
    if step is not None and step < 1:
        raise ValueError(f"a booster slice's step must be >= 1, got {step} ({index})")
    stop = n if stop is None else stop
    if stop > n or start >= n:
        raise IndexError(f"the slice {index} reaches past the model's {n} rounds")
    rounds = list(range(start, stop, step or 1))
    if not rounds:
        raise ValueError(f"Empty slice {index}: it selects no round")
    return rounds


class Slicing:
    """Models of some of a ``Booster``'s rounds."""

    def __getitem__(self, index):
        """The model of some rounds: ``booster[2:5]`` keeps rounds 2, 3 and 4 (each with
        its ``num_parallel_tree`` trees per output group), ``booster[::2]`` every other
        one, ``booster[3]`` round 3 alone, ``booster[...]`` all; the base margin, feature
        information and attributes are kept, early stopping's ``best_iteration`` and
        ``best_score`` are not (they described the whole model), as XGBoost's slicing. A
        negative start or step, a stop below the start, an empty or out-of-range slice
        raise, as there."""
        self._check_loaded()
        rounds = _rounds(index, self.num_boosted_rounds)
        out = type(self)(dict(self.params), n_features=self.n_features,
                         feature_names=self.feature_names, base_margin=self.base_margin,
                         cuts=self.cuts, categories=self.categories)
        out.feature_types = self.feature_types
        out._attributes = dict(self._attributes)
        for r in rounds:
            lo, hi = self.iteration_indptr[r], self.iteration_indptr[r + 1]
            for i in range(lo, hi):
                out.add_tree(self.trees[i], self.tree_group[i], self._weight(i))
            out.end_round()
        return out

    def __iter__(self):
        """Each round's model, in order (``booster[i]``)."""
        for i in range(self.num_boosted_rounds):
            yield self[i]
