"""TreeSHAP contributions (``pred_contribs``) for the CUDA backend: the CPU kernel, on
host copies of the inputs.

GPU TreeSHAP (XGBoost's GPUTreeShap reorganises the trees' paths into a bin-packed
table for one thread per (row, path element)) does not fit this release; explanations
are an inspection tool, and the CPU path gives the same values. The result is copied
back to the device when ``out`` lives there.
"""
import numpy as np

from ..cpu import tree_shap as _cpu_tree_shap
from ._device import array_module, is_device_array, to_host


def tree_shap(X, split_feature, threshold, default_left, split_type, cat_row, cat_bits,
              left_child, value, cover, tree_offsets, tree_group, tree_depth, n_threads, out):
    """Exact TreeSHAP values added to ``out``; returns whether every row completed (as
    ``cpu.tree_shap``)."""
    host = [np.ascontiguousarray(to_host(a)) for a in (
        X, split_feature, threshold, default_left, split_type, cat_row, cat_bits, left_child,
        value, cover, tree_offsets, tree_group, tree_depth)]
    result = np.ascontiguousarray(to_host(out))
    complete = _cpu_tree_shap(*host, max(1, int(n_threads)), result)
    if is_device_array(out):
        out[...] = array_module().asarray(result)
    else:
        out[...] = result
    return complete
