"""Twins of ``cpu/histogram.py``."""
import numpy as np


def build_histograms(bins, gpair, rows, node_starts, node_ends, feature_offsets, hist,
                     n_threads=1):
    hist[...] = 0
    for k in range(node_starts.shape[0]):
        seg = rows[node_starts[k]:node_ends[k]]
        for f in range(bins.shape[1]):
            slots = feature_offsets[f] + bins[seg, f].astype(np.int64)
            np.add.at(hist[k, :, 0], slots, gpair[seg, 0])
            np.add.at(hist[k, :, 1], slots, gpair[seg, 1])


def subtract_histograms(parent, child, out):
    out[...] = parent - child
