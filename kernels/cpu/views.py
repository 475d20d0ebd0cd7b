"""A 1-d view of a C-contiguous array, for kernels that index rows x columns by hand
(unsigned flat indices: no wrap-around test per access).

``array.reshape(array.size)`` does the same, but Numba compiles its error path (the
message of a bad shape, with integer-to-string conversions) once per array type: about
a second of first-use compile time over gbm's kernels. The arrays here are C order by
the kernels' contract, so no check is needed.
"""
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic


@intrinsic
def flat(typingctx, array):
    """``array`` (C order, any number of dimensions) as a 1-d array of its elements."""
    if not isinstance(array, types.Array) or array.layout != "C":
        return None
    result = array.copy(ndim=1, layout="C")

    def codegen(context, builder, signature, args):
        source = context.make_array(signature.args[0])(context, builder, args[0])
        view = context.make_array(signature.return_type)(context, builder)
        context.populate_array(view, data=source.data,
                               shape=cgutils.pack_array(builder, [source.nitems]),
                               strides=cgutils.pack_array(builder, [source.itemsize]),
                               itemsize=source.itemsize, meminfo=source.meminfo,
                               parent=source.parent)
        return impl_ret_borrowed(context, builder, signature.return_type, view._getvalue())

    return result(array), codegen
