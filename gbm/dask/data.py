"""Which rows each Dask worker trains on: partitions where they already are.

The client never gathers data. It asks the cluster to compute (persist) each partition of
X, y, the weights and query ids, asks the scheduler where each partition sits
(``client.who_has``), and gives each training rank the partitions its worker holds. Only
small things travel through the client: partition lengths, the first and last query id of
a partition, per-group weights.

Query groups are never split between ranks: consecutive partitions that a group spans
form one block, and blocks are the unit of assignment. A rank's blocks are kept in their
global order, and each row keeps its global index (``row_ids``), so the model does not
depend on which worker holds which rows.
"""
import numpy as np


def dask_kind(value):
    """"array", "frame" (DataFrame or Series) or None for a non-Dask value."""
    import dask

    if not dask.is_dask_collection(value):
        return None
    import dask.array as da

    return "array" if isinstance(value, da.Array) else "frame"


def check_dask(value, name):
    if dask_kind(value) is None:
        raise TypeError(f"{name} must be a dask array or dask DataFrame/Series, got "
                        f"{type(value).__name__}; gbm.train takes in-memory data")
    return value


def _empty(value):
    """The zero-row value a rank without rows of ``value`` trains on."""
    if dask_kind(value) == "frame":
        return value._meta
    shape = (0,) + tuple(value.shape[1:])
    return np.empty(shape, dtype=value.dtype)


def _partition_futures(client, value):
    """Futures of the computed partitions of ``value``, in row order (data stays on the
    workers)."""
    if dask_kind(value) == "array":
        if value.ndim == 2 and len(value.chunks[1]) > 1:
            value = value.rechunk({1: -1})  # a partition holds whole rows
        parts = list(value.to_delayed().ravel())
    else:
        parts = list(value.to_delayed())
    return client.compute(parts)


def _n_rows(part):
    """Rows of a partition (``len`` is ambiguous for a SciPy sparse chunk)."""
    return int(part.shape[0])


def _qid_summary(q):
    """(rows, first qid, last qid, query starts inside the partition after its first row)."""
    q = np.asarray(q).ravel()
    if q.shape[0] == 0:
        return 0, None, None, 0
    return q.shape[0], q[0].item(), q[-1].item(), int(np.count_nonzero(q[1:] != q[:-1]))


class Collection:
    """One argument (X, y, sample_weight or qid) as partition futures, checked against X's
    partitioning."""

    def __init__(self, client, value, name, n_parts=None):
        check_dask(value, name)
        self.name, self.empty = name, _empty(value)
        self.futures = _partition_futures(client, value)
        if n_parts is not None and len(self.futures) != n_parts:
            raise ValueError(f"{name} has {len(self.futures)} partitions but X has {n_parts}; "
                             "give them the same partitioning (chunks along the rows)")


def make_blocks(lengths, group=None, qid_summaries=None):
    """Runs of consecutive partitions that must go to one rank (a query group spans
    them), and each block's query groups ``[g0, g1)`` (None without groups).

    Returns a list of ``(partitions, (g0, g1) or None)``.
    """
    n = len(lengths)
    offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    joins = [False] * n  # partition i continues the block of partition i - 1
    if group is not None:
        ptr = np.concatenate(([0], np.cumsum(np.asarray(group, np.int64))))
        starts = set(ptr.tolist())
        joins = [i > 0 and int(offsets[i]) not in starts for i in range(n)]
    elif qid_summaries is not None:
        last = None
        for i, (rows, first, final, _) in enumerate(qid_summaries):
            if rows == 0:
                joins[i] = i > 0
                continue
            joins[i] = last is not None and first == last
            last = final
    blocks = []
    for i in range(n):
        if joins[i] and blocks:
            blocks[-1].append(i)
        else:
            blocks.append([i])
    if group is None and qid_summaries is None:
        return [(b, None) for b in blocks]
    out, g = [], 0
    for b in blocks:
        if group is not None:
            g0 = int(np.searchsorted(ptr, offsets[b[0]]))
            g1 = int(np.searchsorted(ptr, offsets[b[-1] + 1]))
        else:
            rows = [qid_summaries[i] for i in b if qid_summaries[i][0] > 0]
            g0, g1 = g, g + (sum(r[3] for r in rows) + 1 if rows else 0)
        out.append((b, (g0, g1)))
        g = out[-1][1][1]
    return out


def assign_blocks(blocks, keys, who_has, lengths, addresses, balance=True):
    """The rank of each block: a worker that already holds its first partition (the
    least loaded in rows when several do); with ``balance``, not one that would then hold
    more than 10% above an even share: the block then goes to the least loaded worker
    (Dask moves it worker to worker). Without holders, the least loaded worker."""
    load = {a: 0 for a in addresses}
    cap = 1.1 * sum(lengths) / len(addresses)
    ranks = []
    for parts, _ in blocks:
        rows = sum(lengths[i] for i in parts)
        holders = [a for a in who_has.get(keys[parts[0]], ()) if a in load]
        if balance:
            holders = [a for a in holders if load[a] + rows <= cap or load[a] == 0]
        chosen = min(holders or list(addresses), key=lambda a: (load[a], addresses.index(a)))
        load[chosen] += rows
        ranks.append(addresses.index(chosen))
    return ranks


class Layout:
    """One data set (training or an eval set) as partition futures, cut into blocks: what
    stays the same when the ranks change (a recovery re-plans over other workers, and
    every row keeps its global index). ``shares(addresses)`` gives each rank its blocks."""

    def __init__(self, client, X, y, sample_weight=None, group=None, qid=None, ranking=False,
                 what=""):
        Xc = Collection(client, X, f"{what}X")
        n_parts = len(Xc.futures)
        cols = {"X": Xc, "y": Collection(client, y, f"{what}y", n_parts)}
        self.per_group_weight = None
        if sample_weight is not None:
            if ranking:  # one weight per query group: small, kept on the client
                self.per_group_weight = np.asarray(sample_weight, dtype=np.float64).ravel()
            else:
                cols["sample_weight"] = Collection(client, sample_weight,
                                                   f"{what}sample_weight", n_parts)
        if qid is not None:
            cols["qid"] = Collection(client, qid, f"{what}qid", n_parts)
        self.cols, self.what = cols, what
        self.lengths = client.gather(client.map(_n_rows, Xc.futures, pure=False))
        summaries = None
        if qid is not None:
            summaries = client.gather(client.map(_qid_summary, cols["qid"].futures, pure=False))
        self.blocks = blocks = make_blocks(self.lengths, group, summaries)
        if self.per_group_weight is not None and blocks and blocks[-1][1] is not None:
            n_groups = blocks[-1][1][1]
            if self.per_group_weight.shape[0] != n_groups:
                raise ValueError(f"{what}sample_weight has {self.per_group_weight.shape[0]} "
                                 f"entries but there are {n_groups} query groups; a ranking "
                                 "objective takes one weight per group")
        self.offsets = np.concatenate(([0], np.cumsum(self.lengths))).astype(np.int64)
        self.group_sizes = None if group is None else np.asarray(group, np.int64)

    def add(self, client, name, value):
        """Another column partitioned as X (``base_margin``)."""
        self.cols[name] = Collection(client, value, f"{self.what}{name}", len(self.lengths))

    def futures(self):
        """Every partition future of every column (what a recovery needs again)."""
        return [f for c in self.cols.values() for f in c.futures]

    def describe(self, index):
        """Which column, partition and rows the ``index``-th of ``futures()`` holds."""
        n = len(self.lengths)
        name = list(self.cols)[index // n]
        part = index % n
        return (f"partition {part} of {self.what}{name} (rows {int(self.offsets[part])} to "
                f"{int(self.offsets[part + 1]) - 1})")

    def shares(self, client, addresses, balance=True):
        """Each rank's share: see ``plan``."""
        Xc, blocks, cols = self.cols["X"], self.blocks, self.cols
        keys = [f.key for f in Xc.futures]
        who_has = client.who_has(Xc.futures)
        ranks = assign_blocks(blocks, keys, who_has, self.lengths, list(addresses), balance)
        shares = []
        for rank in range(len(addresses)):
            mine = [blocks[b] for b in range(len(blocks)) if ranks[b] == rank]
            parts = [i for b, _ in mine for i in b]
            share = {name: [c.futures[i] for i in parts] for name, c in cols.items()}
            share["empty"] = {name: c.empty for name, c in cols.items()}
            share["ranges"] = [(int(self.offsets[i]), int(self.offsets[i + 1])) for i in parts]
            if self.group_sizes is not None:
                share["group"] = np.concatenate([self.group_sizes[g0:g1] for _, (g0, g1) in mine]
                                                or [np.zeros(0, np.int64)])
            if self.per_group_weight is not None:
                share["group_weight"] = (
                    np.concatenate([self.per_group_weight[g0:g1] for _, (g0, g1) in mine]
                                   or [np.zeros(0)]) if blocks[0][1] is not None
                    else self.per_group_weight)
            shares.append(share)
        return shares


def layout(client, X, y, sample_weight=None, group=None, qid=None, ranking=False, what="",
           base_margin=None):
    """A ``Layout`` of one data set (its partitions computed on the workers)."""
    out = Layout(client, X, y, sample_weight, group, qid, ranking, what)
    if base_margin is not None:
        out.add(client, "base_margin", base_margin)
    return out


def plan(client, addresses, X, y, sample_weight=None, group=None, qid=None, ranking=False,
         what="", balance=True, base_margin=None):
    """Each rank's share of one data set (training or an eval set).

    Returns a list (one per rank) of dicts: ``X``, ``y``, ``sample_weight``, ``qid``,
    ``base_margin`` (lists of partition futures, in global row order), ``group`` (group sizes),
    ``group_weight`` (per-group weights of a ranking objective), ``ranges`` (the rank's
    global row ranges), and ``empty`` (zero-row values for a rank without rows).
    """
    return layout(client, X, y, sample_weight, group, qid, ranking, what,
                  base_margin).shares(client, addresses, balance)


def assemble(share, name):
    """A rank's rows of ``name`` (on the worker): its partitions concatenated."""
    if name not in share["empty"]:
        return None
    parts = share[name]
    if not parts:
        return share["empty"][name]
    import scipy.sparse as sp

    if sp.issparse(parts[0]):  # chunks of a sparse dask array (the linear models take them)
        return parts[0] if len(parts) == 1 else sp.vstack(parts, format=parts[0].format)
    if hasattr(parts[0], "iloc"):
        import pandas as pd

        return parts[0] if len(parts) == 1 else pd.concat(parts)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def row_ids(share):
    """int64: the global index of each of the rank's rows."""
    if not share["ranges"]:
        return np.zeros(0, np.int64)
    return np.concatenate([np.arange(lo, hi, dtype=np.int64) for lo, hi in share["ranges"]])
