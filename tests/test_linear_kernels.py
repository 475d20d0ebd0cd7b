"""The linear models' kernels against their NumPy twins, and the formulas against
independent oracles (Fenchel-Young equality, finite differences, KKT conditions)."""
import numpy as np
import pytest
import scipy.sparse as sp

from gbm.kernels import cpu, reference
from gbm.kernels.linear_math import LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE

LOSSES = {"squared": SQUARED, "logistic": LOGISTIC, "multinomial": MULTINOMIAL,
          "squared_hinge": SQUARED_HINGE}


def _case(loss, n=60, n_outputs=None, seed=0):
    rng = np.random.default_rng(seed)
    K = n_outputs or (3 if loss == MULTINOMIAL else 1)
    z = rng.normal(scale=2.0, size=(n, K))
    if loss == SQUARED:
        y = rng.normal(size=(n, K))
    elif loss == MULTINOMIAL:
        y = rng.integers(0, K, size=(n, 1)).astype(np.float64)
    else:
        y = rng.choice([-1.0, 1.0], size=(n, 1))
    c = rng.uniform(0.0, 2.0, size=n)
    c[:3] = 0.0  # rows of weight 0
    return z, y, c


def _terms(kernels, loss, z, y, c):
    out = [np.empty_like(z) for _ in range(3)] + [np.empty(z.shape[0])]
    kernels.loss_terms(loss, z, y, c, *out)
    return out


@pytest.mark.parametrize("name", LOSSES)
def test_loss_terms_match_reference(name):
    loss = LOSSES[name]
    z, y, c = _case(loss, n_outputs=2 if name == "squared" else None)
    for fast, slow in zip(_terms(cpu, loss, z, y, c), _terms(reference, loss, z, y, c)):
        np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", LOSSES)
def test_gradient_is_the_derivative_of_the_loss(name):
    loss = LOSSES[name]
    z, y, c = _case(loss)
    grad = _terms(cpu, loss, z, y, c)[0]
    eps = 1e-6
    for k in range(z.shape[1]):
        up, down = z.copy(), z.copy()
        up[:, k] += eps
        down[:, k] -= eps
        numeric = (_terms(cpu, loss, up, y, c)[3] - _terms(cpu, loss, down, y, c)[3]) / (2 * eps)
        np.testing.assert_allclose(grad[:, k], numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", LOSSES)
def test_dual_terms_satisfy_fenchel_young(name):
    # at u = -f'(z): f(z) + f*(-u) = -u z, i.e. f(z) - dual_term = f'(z) . z
    loss = LOSSES[name]
    z, y, c = _case(loss)
    grad, _, _, losses = _terms(cpu, loss, z, y, c)
    dual = np.empty(z.shape[0])
    cpu.dual_terms(loss, z, y, c, 1.0, dual)
    np.testing.assert_allclose(losses - dual, (grad * z).sum(axis=1), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name", LOSSES)
@pytest.mark.parametrize("theta", [1.0, 0.37])
def test_dual_terms_match_reference(name, theta):
    loss = LOSSES[name]
    z, y, c = _case(loss, n_outputs=2 if name == "squared" else None)
    fast, slow = np.empty(z.shape[0]), np.empty(z.shape[0])
    cpu.dual_terms(loss, z, y, c, theta, fast)
    reference.dual_terms(loss, z, y, c, theta, slow)
    np.testing.assert_allclose(fast, slow, rtol=1e-12, atol=1e-13)


def _matrix(n=3000, d=7, density=0.3, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    X[:, 2] = 0.0  # an empty column
    X[5] = 0.0  # an empty row
    return X


@pytest.mark.parametrize("K", [1, 3])
def test_margins_and_gradients_match_reference(K):
    X = _matrix()
    rng = np.random.default_rng(2)
    coef, intercept = rng.normal(size=(K, X.shape[1])), rng.normal(size=K)
    g = rng.normal(size=(X.shape[0], K))
    csc, csr, dense = sp.csc_matrix(X), sp.csr_matrix(X), np.asfortranarray(X)
    expected = np.empty((X.shape[0], K))
    reference.margins_dense(X, coef, intercept, expected)
    np.testing.assert_allclose(expected, X @ coef.T + intercept)
    for kernel, args in ((cpu.margins_dense, (dense,)), (cpu.margins_csr, (csr.indptr, csr.indices, csr.data)),
                         (cpu.margins_csc, (csc.indptr, csc.indices, csc.data))):
        out = np.empty_like(expected)
        extra = (3,) if kernel is cpu.margins_csc else ()
        kernel(*args, coef, intercept, out, *extra)
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)
    grad_expected = np.empty((K, X.shape[1]))
    reference.gradient_csc(csc.indptr, csc.indices, csc.data, g, grad_expected)
    for kernel, args in ((cpu.gradient_dense, (dense,)),
                         (cpu.gradient_csc, (csc.indptr, csc.indices, csc.data))):
        out = np.empty_like(grad_expected)
        kernel(*args, g, out)
        np.testing.assert_allclose(out, grad_expected, rtol=1e-11, atol=1e-11)


def test_csc_margins_do_not_depend_on_the_row_ranges():
    csc = sp.csc_matrix(_matrix())
    coef, intercept = np.arange(7.0)[None, :] / 3, np.array([0.1])
    results = []
    for ranges in (1, 2, 5, 64):
        out = np.empty((csc.shape[0], 1))
        cpu.margins_csc(csc.indptr, csc.indices, csc.data, coef, intercept, out, ranges)
        results.append(out)
    for out in results[1:]:
        np.testing.assert_array_equal(out, results[0])


@pytest.mark.parametrize("K, scale", [(1, 1.0), (1, 0.0), (3, 2.5)])
def test_hessians_match_reference(K, scale):
    X = _matrix(n=700)
    rng = np.random.default_rng(3)
    a = rng.uniform(0.1, 1.0, size=(X.shape[0], K))
    b = rng.uniform(0.0, 0.3, size=(X.shape[0], K)) if K > 1 else np.zeros((X.shape[0], 1))
    size = K * (X.shape[1] + 1)
    fast, slow = np.empty((size, size)), np.empty((size, size))
    cpu.gram_dense(np.asfortranarray(X), a, b, scale, 128, fast)
    reference.gram_dense(X, a, b, scale, 128, slow)
    np.testing.assert_allclose(fast, slow, rtol=1e-11, atol=1e-10)
    diag_fast, diag_slow = np.empty((K, X.shape[1])), np.empty((K, X.shape[1]))
    csc = sp.csc_matrix(X)
    cpu.hessian_diagonal_csc(csc.indptr, csc.indices, csc.data, a, b, diag_fast)
    reference.hessian_diagonal_dense(X, a, b, diag_slow)
    np.testing.assert_allclose(diag_fast, diag_slow, rtol=1e-12, atol=1e-12)
    cpu.hessian_diagonal_dense(np.asfortranarray(X), a, b, diag_fast)
    np.testing.assert_allclose(diag_fast, diag_slow, rtol=1e-12, atol=1e-12)
    # the diagonal blocks' diagonals are the Hessian diagonal
    width = X.shape[1] + 1
    for k in range(K):
        np.testing.assert_allclose(np.diag(slow)[k * width:k * width + X.shape[1]], diag_slow[k])


def _quadratic(K=1, d=6, n=400, seed=4, scale=1.0):
    rng = np.random.default_rng(seed)
    X = _matrix(n=n, d=d, density=0.5, seed=seed)
    a = rng.uniform(0.2, 1.0, size=(n, K))
    b = rng.uniform(0.0, 0.3, size=(n, K)) if K > 1 else np.zeros((n, 1))
    size = K * (d + 1)
    hessian = np.empty((size, size))
    reference.gram_dense(X, a, b, scale, 64, hessian)
    grad = rng.normal(scale=30.0, size=size)
    grad[np.diag(hessian) == 0.0] = 0.0  # an empty column's gradient, as X^T g gives it
    coef = rng.normal(size=size) * (rng.random(size) < 0.5)
    return X, a, b, hessian, grad, coef


def _model_violation(hessian, grad, l1, l2, coef, delta):
    """The largest distance of 0 from the model's subdifferential (0 at its minimum)."""
    slope = grad + hessian @ delta + l2 * (coef + delta)
    w = coef + delta
    return np.max(np.where(w != 0, np.abs(slope + np.sign(w) * l1), np.maximum(np.abs(slope) - l1, 0)))


@pytest.mark.parametrize("l1_value, l2_value", [(0.0, 1.0), (5.0, 0.0), (3.0, 0.5)])
def test_cd_gram_minimises_the_model(l1_value, l2_value):
    X, a, b, hessian, grad, coef = _quadratic(K=2)
    size = grad.shape[0]
    l1, l2 = np.full(size, l1_value), np.full(size, l2_value)
    l1[-1] = l2[-1] = 0.0  # a free intercept
    active = np.arange(size, dtype=np.int64)
    results = []
    for kernels in (cpu, reference):
        delta, hdelta = np.zeros(size), np.zeros(size)
        sweeps = kernels.cd_gram(hessian, grad, l1, l2, coef, delta, hdelta, active, 3000, 1e-10, 0.0)
        assert sweeps < 3000
        np.testing.assert_allclose(hdelta, hessian @ delta, rtol=1e-9, atol=1e-8)
        assert _model_violation(hessian, grad, l1, l2, coef, delta) < 1e-6
        results.append(delta)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-7, atol=1e-9)
    if l1_value == 0.0:  # the oracle: a linear solve
        solved = np.linalg.solve(hessian + np.diag(l2), -(grad + l2 * coef))
        np.testing.assert_allclose(results[0], solved, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("K, layout", [(1, "dense"), (1, "csc"), (3, "csc"), (3, "dense")])
def test_cd_residual_matches_reference(K, layout):
    scale = 1.5
    X, a, b, hessian, grad, coef = _quadratic(K=K, scale=scale)
    size = grad.shape[0]
    l1, l2 = np.full(size, 2.0), np.full(size, 0.3)
    diag = np.diag(hessian).copy()
    active = np.arange(size, dtype=np.int64)[::-1].copy()
    out = []
    for kernels in (cpu, reference):
        delta, q, t = np.zeros(size), np.zeros((X.shape[0], K)), np.zeros(X.shape[0])
        if layout == "dense":
            fn = kernels.cd_residual_dense
            head = (np.asfortranarray(X),)
        else:
            csc = sp.csc_matrix(X)
            fn = kernels.cd_residual_csc
            head = (csc.indptr, csc.indices, csc.data)
        sweeps = fn(*head, scale, a, b, K > 1, grad, diag, l1, l2, coef, delta, q, t, active,
                    7, 0.0, 0.0)
        assert sweeps == 7
        step = delta.reshape(K, -1)
        np.testing.assert_allclose(q, X @ step[:, :-1].T + scale * step[:, -1], rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(t, (b * q).sum(axis=1), rtol=1e-9, atol=1e-9)
        out.append(delta)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("hinge", [True, False])
def test_svc_epoch_matches_reference(layout, hinge):
    X = _matrix(n=300, d=5, density=0.6)
    rng = np.random.default_rng(5)
    y = rng.choice([-1.0, 1.0], size=X.shape[0])
    c = rng.uniform(0.5, 2.0, size=X.shape[0])
    upper = c if hinge else np.full_like(c, np.inf)
    shift = np.zeros_like(c) if hinge else 0.5 / c
    row_norm = (X * X).sum(axis=1) + 0.25
    order = rng.permutation(X.shape[0]).astype(np.int64)
    w = rng.normal(scale=0.1, size=X.shape[1] + 1)
    out = []
    for kernels in (cpu, reference):
        alpha, v = np.zeros(X.shape[0]), np.zeros(X.shape[1] + 1)
        if layout == "dense":
            moved = kernels.svc_dual_cd_dense(X, y, upper, shift, row_norm, 0.5, order, 2.0, w, alpha, v)
        else:
            csr = sp.csr_matrix(X)
            moved = kernels.svc_dual_cd_csr(csr.indptr, csr.indices, csr.data, y, upper, shift,
                                            row_norm, 0.5, order, 2.0, w, alpha, v)
        assert moved > 0
        assert np.all(alpha >= 0) and np.all(alpha <= upper)
        np.testing.assert_allclose(v[:-1], X.T @ (alpha * y), rtol=1e-10, atol=1e-12)
        out.append((alpha, v))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-10, atol=1e-12)
