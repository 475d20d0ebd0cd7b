"""Numba's thread count read and set inside compiled code, by the threading layer's own
``get_num_threads`` / ``set_num_threads`` symbols.

``numba.get_num_threads`` and ``numba.set_num_threads`` work in compiled code too, but
through ctypes pointers, which keep a kernel out of the cache ("dynamic globals"); a
call by symbol name is resolved when the cached code is loaded. The symbols exist once
Numba's threads are launched: callers launch them first (``Backend.threads`` does, through
``numba.set_num_threads``). The count is the calling thread's, as Numba's is.
"""
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def thread_count(typingctx):
    """The calling thread's Numba thread count (int64)."""
    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, []),
                                            "get_num_threads")
        return builder.sext(builder.call(fn, []), ir.IntType(64))

    return types.int64(), codegen


@intrinsic
def set_thread_count(typingctx, n):
    """Set the calling thread's Numba thread count to ``n`` (an integer in 1 ..
    ``NUMBA_NUM_THREADS``, unchecked)."""
    if not isinstance(n, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i32]), "set_num_threads")
        count = args[0]
        if n.bitwidth > 32:
            count = builder.trunc(count, i32)
        elif n.bitwidth < 32:
            count = builder.sext(count, i32) if n.signed else builder.zext(count, i32)
        builder.call(fn, [count])
        return context.get_dummy_value()

    return types.void(n), codegen
