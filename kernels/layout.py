"""Constants every backend's kernels share: data layouts and kernel arguments.

Histograms (``ragged``, as XGBoost's cut pointers): a node's histogram is int64
``(n_slots, 2)`` where feature ``f`` owns slots ``feature_offsets[f] ..
feature_offsets[f + 1] - 1``: its ``n_bins[f]`` value bins, then its missing slot. A feature
with few bins takes few slots, whatever the others have.

Categorical splits hold a set of codes as a bitset of uint32 words (code ``c`` is bit
``c & 31`` of word ``c >> 5``); rows whose code is in the set go right. A bitset has
``cat_words(n)`` words for features of up to ``n`` codes: ``CAT_WORDS`` (256 bits, every code
a uint8 bin holds) or, for wider categorical features (uint16 bins), as many as they need.
Kernels read the width from the array (``cat_bits.shape[1]``).

Walk tables (``gbm.tree.structure.Forest``): 4 int32 per node, ``(feature, left child, flags,
test)``; ``flags`` bit 0 = missing values go left, bit 1 = categorical split (``test`` is
then the node's row of ``cat_bits``, else a split bin or a float32 threshold's bits).
"""
CAT_WORDS = 8  # 256 bits: every code a uint8 bin can hold; the narrowest bitset


def cat_words(n_codes):
    """uint32 words of a bitset over codes ``0 .. n_codes - 1``: at least ``CAT_WORDS``."""
    return max(CAT_WORDS, -(-int(n_codes) // 32))


FLAG_DEFAULT_LEFT = 1
FLAG_CATEGORICAL = 2

# split_params: float64 (4,), the regularisation every split evaluation reads
SPLIT_PARAMS = ("reg_lambda", "reg_alpha", "max_delta_step", "min_child_weight")

# lambdarank_gradients' delta_kind: the weight of a pair (1, |delta NDCG| or |delta MAP|)
PAIRWISE, NDCG = 0, 1
MAP = 2

# pointwise_gradients' objective kinds; objective_params holds, by kind: POISSON
# (max_delta_step,), TWEEDIE (variance power,), PSEUDOHUBER (slope,), QUANTILE (one alpha
# per output group); the others read nothing
SQUARED, LOGISTIC, SOFTMAX, POISSON, GAMMA, TWEEDIE, PSEUDOHUBER, ABSOLUTE, QUANTILE = range(9)
# HINGE and SQUARED_LOG read nothing; EXPECTILE reads one alpha per output group (ascending)
HINGE, SQUARED_LOG, EXPECTILE = 9, 10, 11
# AFT (survival:aft, kernels/survival_math.py): objective_params holds (distribution,
# scale), the distribution one of AFT_NORMAL, AFT_LOGISTIC, AFT_EXTREME (as a float), and
# y two numbers per row, its interval's bounds: y[2 i] lower, y[2 i + 1] upper (+inf:
# right-censored)
AFT = 12
AFT_DISTRIBUTIONS = ("normal", "logistic", "extreme")  # aft_loss_distribution: code = index
AFT_NORMAL, AFT_LOGISTIC, AFT_EXTREME = range(3)

# Exact float sums (``exact`` kernels, gbm.numerics.exact): int64 bins of a superaccumulator,
# one row per sum. Bin k weighs 2**(k + EXACT_E_MIN): the smallest value bit, 2**-1074, is
# bin 52. A 53-bit mantissa is added as two halves, of 26 (EXACT_HALF) and 27 bits, so the
# bins reach the high half of the largest finite float.
EXACT_E_MIN = -1126
EXACT_HALF = 26
EXACT_BINS = 1024 + EXACT_HALF - EXACT_E_MIN - 52
