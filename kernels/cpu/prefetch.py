"""A cache prefetch hint for gathers through row indices (LLVM's ``llvm.prefetch``).

A node's rows are a sparse, increasing subset of the data: each row's bins and gradient
pair sit in their own cache line, and a loop over them waits on one memory load after
another. Asking for the row ``_DISTANCE`` places ahead overlaps those waits: measured
(800k x 28 bins, one thread) 1.6x faster for a node holding 1/8 of the rows and 3.7x
for 1/32, and no slower for contiguous rows. XGBoost's CPU histogram builder prefetches
the same way.
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ..jit import helper

DISTANCE = 16  # rows ahead
_SPARSE_GAP_BYTES = 64  # a cache line: rows farther apart than this each cost a load of their own


@intrinsic
def prefetch(typingctx, array, index):
    """Hint that ``array.flat[index]`` (a C-contiguous 1-d array) will be read soon; no
    effect on results."""
    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        address = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.PointerType(ir.IntType(8)))
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32]),
            "llvm.prefetch.p0")
        # read (0), keep in all cache levels (locality 3), data cache (1)
        builder.call(fn, [address, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(array, index), codegen


@helper
def sparse(n_read, n_rows, row_bytes):
    """Whether reading ``n_read`` of ``n_rows`` rows of ``row_bytes`` each is worth
    prefetching: only when they lie more than a cache line apart on average. Denser reads
    share cache lines, which the hardware prefetcher streams in; the hints then only cost
    instructions (measured, 292,000 rows in 5 nodes: partition 0.83 -> 0.54 ms without
    them; 800,000 rows in 128 nodes: 3.6 ms with, 4.4 ms without)."""
    return n_read * _SPARSE_GAP_BYTES < n_rows * row_bytes
