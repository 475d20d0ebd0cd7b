"""Small work arrays on the stack of the compiled function that asks for them.

A split scan needs a few dozen numbers of scratch per (node, feature) task; ``np.empty``
would cost an allocation per task (about 60 ns, measured: as much as scanning 20 bins).
``stack_array`` reserves the room in the calling function's frame instead (LLVM's
``alloca``, in the function's entry block: once per call, freed on return). The array
must not outlive the call: never return it or store it in another array.
"""
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_untracked
from numba.extending import intrinsic


@intrinsic
def stack_array(typingctx, length, dtype):
    """A 1-d C array of ``length`` (a compile-time integer constant) elements of
    ``dtype`` (``np.float64``, ``np.int64``, ...), contents undefined."""
    if not isinstance(length, types.IntegerLiteral) or not isinstance(dtype, types.NumberClass):
        return None
    n = length.literal_value
    result = types.Array(dtype.instance_type, 1, "C")

    def codegen(context, builder, signature, args):
        element = context.get_data_type(dtype.instance_type)
        data = cgutils.alloca_once(builder, element, size=n)
        array = context.make_array(result)(context, builder)
        itemsize = context.get_abi_sizeof(element)
        intp = context.get_value_type(types.intp)
        context.populate_array(array, data=data,
                               shape=cgutils.pack_array(builder, [intp(n)]),
                               strides=cgutils.pack_array(builder, [intp(itemsize)]),
                               itemsize=intp(itemsize), meminfo=None)
        return impl_ret_untracked(context, builder, result, array._getvalue())

    return result(length, dtype), codegen
