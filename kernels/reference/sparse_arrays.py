"""SciPy matrices of the linear kernels' sparse arguments (``indptr, indices, data`` of
CSR rows or CSC columns), which ``linear.py`` and ``linear_cd.py`` compute on."""


def csr_matrix_of(indptr, indices, data, shape):
    from scipy.sparse import csr_matrix
    return csr_matrix((data, indices, indptr), shape=shape)


def csc_matrix_of(indptr, indices, data, shape):
    from scipy.sparse import csc_matrix
    return csc_matrix((data, indices, indptr), shape=shape)
