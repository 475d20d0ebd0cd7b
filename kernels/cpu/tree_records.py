"""The whole-tree kernel's named records (``grow_tree.py``): its arguments, grouped by
what they hold, as named tuples (Numba compiles a named tuple of arrays and numbers as a
tuple: fields are read by name at no cost, and a kernel taking them is cached as any
other). ``gbm.tree.whole_tree`` makes them, one set per thread, kept from tree to tree.
"""
from collections import namedtuple

# c: the most nodes a tree can have; w = (c + 1) // 2: the most nodes of a level

# the features (IN): feature_offsets int32 (n_features + 1,); n_bins int32 (n_features,);
# is_categorical uint8 (None: no feature is, and the categorical code is not compiled);
# monotone int8; cut_values float32 (n_cuts,), cut_offsets int64 (n_features + 1,):
# feature f's bin edges cut_values[cut_offsets[f]:cut_offsets[f + 1]]; interaction uint8
# (n_sets, n_features): no rows, no constraints
Features = namedtuple("Features", ["offsets", "n_bins", "is_categorical", "monotone",
                                   "cut_values", "cut_offsets", "interaction"])
# the column draws (IN, ``node_masks.feature_masks``): level_features int64 (max_depth,
# n_features), level_sizes int64 (max_depth,), node_key uint64
Sampling = namedtuple("Sampling", ["level_features", "level_sizes", "node_key"])
# int64 settings (IN): min_work, the cells a step needs before it takes a second thread;
# all_features: no column sampling nor interaction constraints; every_row: ``rows`` to be
# written 0 .. m - 1 first (no array of every row to copy); fused: 1 a level fused where
# that is estimated faster, 0 never, 2 wherever it has two threads (tests compare them)
Settings = namedtuple("Settings", ["max_depth", "max_leaves", "max_cat_to_onehot",
                                   "max_cat_threshold", "min_work", "all_features",
                                   "every_row", "fused"])
# float64 numbers (IN): split_params (4,) as layout.SPLIT_PARAMS, the gradients' scales
Numbers = namedtuple("Numbers", ["split_params", "learning_rate", "gamma", "scale_g",
                                 "scale_h", "by_node"])
# the tree under construction, c entries each (work space): start, end int64; depth
# int32; sums int64 (c, 2); bounds float64 (c, 2); feature, split_bin int32;
# default_left, split_type uint8; gain float64; left (the first child) int32; cat_bits
# uint32 (c, n_words); path uint8 (c, n_features), or no rows without interaction
# constraints
Nodes = namedtuple("Nodes", ["start", "end", "depth", "sums", "bounds", "feature",
                             "split_bin", "default_left", "split_type", "gain", "left",
                             "cat_bits", "path"])
# a level's node ids, the positions of those to split, the next level's ids: int64 (w,)
Level = namedtuple("Level", ["ids", "chosen", "next_ids"])
# a level's split search, ``evaluate_splits``' arguments (w entries): its nodes' sums,
# bounds, scales and feature masks (IN), their best splits (OUT)
Search = namedtuple("Search", ["sums", "bounds", "scales", "mask", "gain", "feature",
                               "split_bin", "default_left", "left_sums", "cat_bits"])
# the nodes split at a level, ``partition_rows``' arguments (w entries): their segments,
# splits, rows sent left, and (a last level) their children's leaf values
Parents = namedtuple("Parents", ["starts", "ends", "feature", "split_bin", "default_left",
                                 "split_type", "cat_bits", "n_left", "left_values",
                                 "right_values"])
# the tree (OUT): Tree's arrays, cat_bits its categorical nodes' sets in node order
TreeArrays = namedtuple("TreeArrays", ["split_feature", "split_bin", "threshold",
                                       "default_left", "left_child", "right_child", "value",
                                       "gain", "cover", "split_type", "cat_bits"])
# a fused level's work space (``tree_level.py``): the threads' parents, their costs
Fused = namedtuple("Fused", ["plan", "counts", "costs", "small_left", "slot2", "flat_bins",
                             "flat_gpair", "n_features"])
