"""Random inputs of the kernels, shared by the CPU kernel tests and the CUDA ones (the
same inputs for both backends)."""
import numpy as np

from gbm.kernels import reference
from gbm.kernels.layout import CAT_WORDS
from gbm.objectives import get_objective
from gbm.params import validate_params


def make_inputs(rng, n_rows, n_bins, missing_rate=0.1):
    """Random bins (with missing slots) and gradient pairs; rows cut into node segments."""
    bins = np.empty((n_rows, n_bins.size), dtype=np.uint8)
    for f, nb in enumerate(n_bins):
        col = rng.integers(0, nb, n_rows)
        col[rng.random(n_rows) < missing_rate] = nb  # missing bin
        bins[:, f] = col
    gpair = np.column_stack([rng.integers(-10**12, 10**12, n_rows),
                             rng.integers(0, 10**12, n_rows)]).astype(np.int64)
    return bins, gpair


def offsets_of(n_bins):
    """The ragged histogram layout: feature f's slots (value bins, then missing)."""
    return np.concatenate(([0], np.cumsum(np.asarray(n_bins) + 1))).astype(np.int32)


def segments(rng, n_rows, n_nodes, with_empty=True):
    rows = rng.permutation(n_rows).astype(np.int32)
    cuts = np.sort(rng.integers(0, n_rows + 1, n_nodes - 1))
    if with_empty and n_nodes > 2:
        cuts[1] = cuts[0]  # node 1 is empty
    starts = np.concatenate(([0], cuts)).astype(np.int64)
    ends = np.concatenate((cuts, [n_rows])).astype(np.int64)
    return rows, starts, ends


def random_splits(rng, n_rows, n_nodes, n_bins, categorical_rate=0.5):
    """A level's rows and splits, as ``partition_rows`` and ``add_split_values`` take them:
    ``(bins_by_feature, rows, (starts, ends, feature, split_bin, default_left, split_type,
    cat_bits, n_bins))``, numeric and categorical splits, missing values both ways."""
    bins, _ = make_inputs(rng, n_rows, n_bins)
    rows, starts, ends = segments(rng, n_rows, n_nodes)
    feature = rng.integers(0, n_bins.shape[0], n_nodes).astype(np.int32)
    split_bin = np.array([rng.integers(0, n_bins[f]) for f in feature], dtype=np.int32)
    default_left = rng.integers(0, 2, n_nodes).astype(np.uint8)
    split_type = (rng.random(n_nodes) < categorical_rate).astype(np.uint8)
    cat_bits = rng.integers(0, 2**32, (n_nodes, CAT_WORDS), dtype=np.uint64).astype(np.uint32)
    return np.ascontiguousarray(bins.T), rows, (starts, ends, feature, split_bin,
                                                default_left, split_type, cat_bits, n_bins)


def random_forest_arrays(rng, n_trees, n_features, n_bins, n_groups):
    """Random trees of random shapes (a lone leaf, chains, bushes), packed as the
    prediction kernels read them: each split appends its two children."""
    from gbm.tree.structure import Forest, Tree

    trees = []
    for t in range(n_trees):
        left, feature, split_bin = [-1], [-1], [0]
        for _ in range(t % 9):  # tree 0 is a single leaf
            leaves = [i for i, child in enumerate(left) if child < 0]
            node = leaves[rng.integers(0, len(leaves))]
            f = int(rng.integers(0, n_features))
            left[node], feature[node] = len(left), f
            split_bin[node] = int(rng.integers(0, max(1, n_bins[f] - 1)))
            left += [-1, -1]
            feature += [-1, -1]
            split_bin += [0, 0]
        left = np.array(left, np.int32)
        n_nodes = left.size
        trees.append(Tree(split_feature=np.array(feature, np.int32),
                          split_bin=np.array(split_bin, np.int32),
                          threshold=(np.array(split_bin) + 0.5).astype(np.float32),
                          default_left=rng.integers(0, 2, n_nodes).astype(np.uint8),
                          left_child=left, right_child=np.where(left >= 0, left + 1, -1).astype(np.int32),
                          value=rng.normal(size=n_nodes), gain=np.zeros(n_nodes),
                          cover=np.zeros(n_nodes)))
    return Forest(trees, rng.integers(0, n_groups, n_trees))


def random_histograms(rng, n_nodes, n_bins, missing=True):
    """Histograms of random rows: bins = codes, the last slot of a feature = missing."""
    n_rows = 3000
    bins = np.empty((n_rows, n_bins.size), dtype=np.uint8)
    for f, nb in enumerate(n_bins):
        # uneven category sizes, some categories absent from some nodes
        p = rng.dirichlet(np.full(nb, 0.5))
        bins[:, f] = rng.choice(nb, n_rows, p=p)
        if missing:
            bins[rng.random(n_rows) < 0.1, f] = nb
    gpair = np.column_stack([rng.normal(0, 1, n_rows) * 2**20,
                             rng.uniform(0, 1, n_rows) * 2**22]).astype(np.int64)
    for f in (0, 2, 4):  # some signal
        gpair[:, 0] += (bins[:, f].astype(np.int64) * 7 % 5) * 2**18
    node = rng.integers(0, n_nodes, n_rows)
    rows = np.argsort(node, kind="stable").astype(np.int32)
    counts = np.bincount(node, minlength=n_nodes)
    ends = np.cumsum(counts).astype(np.int64)
    starts = (ends - counts).astype(np.int64)
    offsets = offsets_of(n_bins)
    hist = np.empty((n_nodes, int(offsets[-1]), 2), np.int64)
    reference.build_histograms(bins, gpair, rows, starts, ends, offsets, hist)
    return hist


def random_rows(rng, n_rows, n_features, missing_rate):
    X = rng.integers(0, 5, size=(n_rows, n_features)).astype(np.float32)
    X[rng.random(X.shape) < missing_rate] = np.nan
    return X


def kernel_gradients(kernels, margin, y, sizes, params, round_key=7, scale=None, n_threads=1):
    """``lambdarank_gradients`` of ``kernels`` for query groups of ``sizes``."""
    p = validate_params(params)
    obj = get_objective(p)
    ptr = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    scale = np.ones(len(sizes)) if scale is None else scale
    grad, hess = np.empty(len(y)), np.empty(len(y))
    kernels.lambdarank_gradients(margin, y, ptr, ptr[:-1], scale, obj.delta_kind,
                                 p["ndcg_exp_gain"],
                                 p["lambdarank_pair_method"] == "topk",
                                 p["lambdarank_num_pair_per_sample"],
                                 p["lambdarank_score_normalization"],
                                 p["lambdarank_normalization"], np.uint64(round_key), grad, hess,
                                 n_threads)
    return grad, hess
