"""The linear models on CUDA: every kernel against its NumPy twin on small inputs, and
``device="cuda"`` fits (whole data on the device, and duality-gap working sets under a
small ``max_device_memory``) reaching the CPU optimum within tol. Under Numba's CUDA
simulator in CI (small inputs: its cost grows with threads launched and barriers), on a
GPU with ``GBM_TEST_GPU=1``."""
import numpy as np
import pytest
import scipy.sparse as sp
from tests.support.device_arrays import device_array as dev
from tests.support.device_arrays import host

from gbm.kernels import cuda, reference
from gbm.kernels.cuda import linear_cd as cuda_cd
from gbm.kernels.linear_math import LOGISTIC, MULTINOMIAL, SQUARED, SQUARED_HINGE

LOSSES = {"squared": SQUARED, "logistic": LOGISTIC, "multinomial": MULTINOMIAL,
          "squared_hinge": SQUARED_HINGE}


def _case(loss, n=40, seed=0):
    rng = np.random.default_rng(seed)
    K = 3 if loss == MULTINOMIAL else 2 if loss == SQUARED else 1
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


def _matrix(n=50, d=5, density=0.5, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    X[:, 2] = 0.0  # an empty column
    X[5] = 0.0  # an empty row
    return X


@pytest.mark.parametrize("name", LOSSES)
def test_loss_and_dual_terms(name):
    loss = LOSSES[name]
    z, y, c = _case(loss)
    expected = [np.empty_like(z) for _ in range(3)] + [np.empty(z.shape[0])]
    reference.loss_terms(loss, z, y, c, *expected)
    got = [dev(np.full_like(a, np.nan)) for a in expected]
    cuda.loss_terms(loss, dev(z), dev(y), dev(c), *got)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(host(g), e, rtol=1e-12, atol=1e-14)
    for theta in (1.0, 0.37):
        want, out = np.empty(z.shape[0]), np.full(z.shape[0], np.nan)
        reference.dual_terms(loss, z, y, c, theta, want)
        cuda.dual_terms(loss, z, y, c, theta, out)  # host arrays: copied in and out
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("K", [1, 3])
def test_margins_gradients_and_hessian_diagonals(K):
    # more rows than one partial sum, so the blocks' sums are added too
    X = _matrix(n=2 * cuda.linear.PARTIAL_ROWS + 37, d=3, density=0.4)
    rng = np.random.default_rng(2)
    coef, intercept = rng.normal(size=(K, X.shape[1])), rng.normal(size=K)
    g = rng.normal(size=(X.shape[0], K))
    a = rng.uniform(0.1, 1.0, size=(X.shape[0], K))
    b = rng.uniform(0.0, 0.3, size=(X.shape[0], K))
    csc, csr = sp.csc_matrix(X), sp.csr_matrix(X)
    want = np.empty((X.shape[0], K))
    reference.margins_dense(X, coef, intercept, want)
    for kernel, args in ((cuda.margins_dense, (np.asfortranarray(X),)),
                         (cuda.margins_csr, (csr.indptr, csr.indices, csr.data)),
                         (cuda.margins_csc, (csc.indptr, csc.indices, csc.data))):
        out = np.full_like(want, np.nan)
        kernel(*args, coef, intercept, out, *((2,) if kernel is cuda.margins_csc else ()))
        np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)
    want = np.empty((K, X.shape[1]))
    reference.gradient_dense(X, g, want)
    for kernel, args in ((cuda.gradient_dense, (X,)),
                         (cuda.gradient_csc, (csc.indptr, csc.indices, csc.data))):
        out = np.full_like(want, np.nan)
        kernel(*args, g, out)
        np.testing.assert_allclose(out, want, rtol=1e-11, atol=1e-11)
    reference.hessian_diagonal_dense(X, a, b, want)
    for kernel, args in ((cuda.hessian_diagonal_dense, (X,)),
                         (cuda.hessian_diagonal_csc, (csc.indptr, csc.indices, csc.data))):
        out = np.full_like(want, np.nan)
        kernel(*args, a, b, out)
        np.testing.assert_allclose(out, want, rtol=1e-11, atol=1e-11)


def test_csc_to_csr_keeps_each_row_in_column_order():
    X = _matrix(n=30, d=6, density=0.6)
    csc = sp.csc_matrix(X)
    row_ptr, columns, values = cuda.linear.csc_to_csr(csc.indptr, csc.indices, csc.data, 30)
    csr = sp.csr_matrix(X)
    np.testing.assert_array_equal(host(row_ptr), csr.indptr)
    np.testing.assert_array_equal(host(columns), csr.indices)
    np.testing.assert_array_equal(host(values), csr.data)


@pytest.mark.parametrize("K, scale", [(1, 1.0), (1, 0.0), (2, 2.5)])
def test_gram_dense(K, scale):
    X = _matrix(n=45, d=3)
    rng = np.random.default_rng(3)
    a = rng.uniform(0.1, 1.0, size=(X.shape[0], K))
    b = rng.uniform(0.0, 0.3, size=(X.shape[0], K)) if K > 1 else np.zeros((X.shape[0], 1))
    size = K * (X.shape[1] + 1)
    want, out = np.empty((size, size)), np.full((size, size), np.nan)
    reference.gram_dense(X, a, b, scale, 16, want)
    cuda.gram_dense(X, a, b, scale, 16, out)  # 3 blocks of rows
    np.testing.assert_allclose(out, want, rtol=1e-11, atol=1e-11)
    np.testing.assert_array_equal(out, out.T)


@pytest.fixture(params=[1, 4], ids=["1-thread", "4-threads"])
def coop_threads(request, monkeypatch):
    """The sequential kernels' block size: 1 (the simulator's default) and 4 (the
    cooperative sums and barriers that a GPU runs)."""
    monkeypatch.setattr(cuda_cd, "COOP_THREADS", request.param)
    return request.param


def _quadratic(K, d=4, n=30, seed=4, scale=1.0):
    rng = np.random.default_rng(seed)
    X = _matrix(n=n, d=d, density=0.6, seed=seed)
    a = rng.uniform(0.2, 1.0, size=(n, K))
    b = rng.uniform(0.0, 0.3, size=(n, K)) if K > 1 else np.zeros((n, 1))
    size = K * (d + 1)
    hessian = np.empty((size, size))
    reference.gram_dense(X, a, b, scale, 64, hessian)
    grad = rng.normal(scale=10.0, size=size)
    grad[np.diag(hessian) == 0.0] = 0.0  # an empty column's gradient, as X^T g gives it
    coef = rng.normal(size=size) * (rng.random(size) < 0.5)
    return X, a, b, hessian, grad, coef


def test_cd_gram(coop_threads):
    X, a, b, hessian, grad, coef = _quadratic(K=2)
    size = grad.shape[0]
    l1, l2 = np.full(size, 3.0), np.full(size, 0.5)
    l1[-1] = l2[-1] = 0.0  # a free intercept
    active = np.arange(size, dtype=np.int64)
    sweeps = 3 if coop_threads > 1 else 400  # barriers cost milliseconds in the simulator
    results = []
    for kernels in (cuda, reference):
        delta, hdelta = np.zeros(size), np.zeros(size)
        done = kernels.cd_gram(hessian, grad, l1, l2, coef, delta, hdelta, active, sweeps,
                               1e-10, 0.0)
        np.testing.assert_allclose(hdelta, hessian @ delta, rtol=1e-9, atol=1e-8)
        results.append((done, delta))
    assert results[0][0] == results[1][0]
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("K, layout", [(1, "dense"), (1, "csc"), (3, "csc"), (2, "dense")])
def test_cd_residual(K, layout, coop_threads):
    scale = 1.5
    X, a, b, hessian, grad, coef = _quadratic(K=K, scale=scale)
    size = grad.shape[0]
    l1, l2 = np.full(size, 2.0), np.full(size, 0.3)
    diag = np.diag(hessian).copy()
    active = np.arange(size, dtype=np.int64)[::-1].copy()
    sweeps = 2 if coop_threads > 1 else 5
    out = []
    for kernels in (cuda, reference):
        delta, q, t = np.zeros(size), np.zeros((X.shape[0], K)), np.zeros(X.shape[0])
        if layout == "dense":
            fn, head = kernels.cd_residual_dense, (np.asfortranarray(X),)
        else:
            csc = sp.csc_matrix(X)
            fn, head = kernels.cd_residual_csc, (csc.indptr, csc.indices, csc.data)
        done = fn(*head, scale, a, b, K > 1, grad, diag, l1, l2, coef, delta, q, t, active,
                  sweeps, 0.0, 0.0)
        assert done == sweeps
        step = delta.reshape(K, -1)
        np.testing.assert_allclose(q, X @ step[:, :-1].T + scale * step[:, -1], rtol=1e-9,
                                   atol=1e-9)
        np.testing.assert_allclose(t, (b * q).sum(axis=1), rtol=1e-9, atol=1e-9)
        out.append(delta)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-9, atol=1e-10)


def test_sequential_kernels_edge_cases():
    size = 3
    hessian, grad = np.eye(size), np.ones(size)
    zeros, none = np.zeros(size), np.zeros(0, np.int64)
    for kernels in (cuda, reference):
        assert kernels.cd_gram(hessian, grad, zeros, zeros, zeros, np.zeros(size),
                               np.zeros(size), none, 5, 0.1, 0.0) == 1  # nothing active
    w, alpha, v = np.zeros(3), np.zeros(4), np.zeros(3)
    assert cuda.svc_dual_cd_dense(np.ones((4, 2)), np.ones(4), np.ones(4), np.zeros(4),
                                  np.full(4, 2.0), 1.0, none, 1.0, w, alpha, v) == 0


@pytest.mark.parametrize("layout", ["dense", "csr"])
@pytest.mark.parametrize("hinge", [True, False])
def test_svc_epoch(layout, hinge, coop_threads):
    X = _matrix(n=40, d=4, density=0.6)
    rng = np.random.default_rng(5)
    y = rng.choice([-1.0, 1.0], size=X.shape[0])
    c = rng.uniform(0.5, 2.0, size=X.shape[0])
    c[7] = 0.0  # a row of weight 0: its box is [0, 0]
    upper = np.where(c > 0, c, 0.0) if hinge else np.where(c > 0, np.inf, 0.0)
    shift = np.zeros_like(c) if hinge else np.where(c > 0, 0.5 / np.where(c > 0, c, 1), 0.0)
    row_norm = (X * X).sum(axis=1) + 0.25
    order = rng.permutation(X.shape[0]).astype(np.int64)
    w = rng.normal(scale=0.1, size=X.shape[1] + 1)
    out = []
    for kernels in (cuda, reference):
        alpha, v = np.zeros(X.shape[0]), np.zeros(X.shape[1] + 1)
        if layout == "dense":
            moved = kernels.svc_dual_cd_dense(X, y, upper, shift, row_norm, 0.5, order, 2.0, w,
                                              alpha, v)
        else:
            csr = sp.csr_matrix(X)
            moved = kernels.svc_dual_cd_csr(csr.indptr, csr.indices, csr.data, y, upper, shift,
                                            row_norm, 0.5, order, 2.0, w, alpha, v)
        assert np.all(alpha >= 0) and np.all(alpha <= upper)
        np.testing.assert_allclose(v[:-1], X.T @ (alpha * y), rtol=1e-10, atol=1e-12)
        out.append((moved, alpha, v))
    assert out[0][0] == out[1][0] > 0
    np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out[0][2], out[1][2], rtol=1e-10, atol=1e-12)


# -- device="cuda" fits ----------------------------------------------------------------
from sklearn.base import clone  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402

from gbm import linear  # noqa: E402
from gbm.linear import working_set  # noqa: E402

N_ROWS = 60


def _fit_data(kind, sparse):
    if kind == "regression":
        X, y = make_regression(N_ROWS, 6, n_informative=4, noise=2.0, random_state=1,
                               n_targets=2 if sparse == "2-targets" else 1)
    else:  # independent features: working sets converge like block coordinate descent
        X, y = make_classification(N_ROWS, 6, n_informative=4, n_redundant=0, random_state=1,
                                   n_classes=3 if kind == "multiclass" else 2)
    if sparse is True:
        X = sp.csr_matrix(np.where(np.abs(X) > 0.4, X, 0.0))
    return X, y


FITS = {  # estimator, data, whether the working-set variant runs too
    "logistic-gram": (linear.LogisticRegression(C=0.5, tol=1e-9, max_iter=400),
                      "classification", False, True),
    "logistic-sparse-cg": (linear.LogisticRegression(C=0.5, tol=1e-9, max_iter=400),
                           "classification", True, True),
    "logistic-l1-active-gram": (linear.LogisticRegression(penalty="l1", C=0.5, tol=1e-6),
                                "classification", False, False),
    "multinomial-enet-cd": (linear.LogisticRegression(penalty="elasticnet", l1_ratio=0.5,
                                                      C=0.5, tol=1e-9), "multiclass", False,
                            False),
    # a pure L1 penalty's certificate is loose until near the optimum: a looser tol
    "lasso-sparse": (linear.Lasso(alpha=0.3, tol=1e-6), "regression", True, False),
    "ridge-gram": (linear.Ridge(alpha=2.0, tol=1e-10), "regression", False, False),
    "enet-2-targets": (linear.ElasticNet(alpha=0.2, tol=1e-9), "regression", "2-targets",
                       True),
    "svc-dual-hinge": (linear.LinearSVC(loss="hinge", C=0.1, tol=1e-5, max_iter=5000),
                       "classification", False, True),
    "svc-dual-sparse": (linear.LinearSVC(dual=True, C=0.1, tol=1e-5, max_iter=5000),
                        "classification", True, True),
    "svc-primal": (linear.LinearSVC(dual=False, tol=1e-9), "classification", False, False),
}


def _same_optimum(gpu, cpu, tol):
    assert gpu.duality_gap_ <= tol * gpu.objective_
    assert gpu.objective_ == pytest.approx(cpu.objective_, rel=3 * tol + 1e-12)
    assert gpu.objective_ - gpu.duality_gap_ <= cpu.objective_ * (1 + 1e-12)
    assert cpu.objective_ - cpu.duality_gap_ <= gpu.objective_ * (1 + 1e-12)


def _budget(estimator, X, n_outputs):
    """Device bytes for about half the columns (primal) or rows (dual)."""
    if isinstance(estimator, linear.LinearSVC) and (estimator.dual is True
                                                    or estimator.loss == "hinge"):
        host = working_set.host_design(X, linear.LinearSVC()._backend(_LOCAL), "rows")
        return int(working_set.row_bytes(host).sum() // 2) + 16 * (X.shape[1] + 1)
    host = working_set.host_design(X, linear.LinearSVC()._backend(_LOCAL), "columns")
    return int(working_set.column_bytes(host).sum() // 2) + working_set.primal_row_bytes(
        X.shape[0], n_outputs)


from gbm.collective import LOCAL as _LOCAL  # noqa: E402


@pytest.mark.parametrize("case", list(FITS))
def test_cuda_fit_reaches_the_cpu_optimum(case):
    estimator, kind, sparse, _ = FITS[case]
    X, y = _fit_data(kind, sparse)
    cpu = clone(estimator).fit(X, y)
    gpu = clone(estimator).set_params(device="cuda").fit(X, y)
    _same_optimum(gpu, cpu, estimator.tol)
    np.testing.assert_allclose(gpu.predict(X[:10]), cpu.predict(X[:10]), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("case", [case for case, spec in FITS.items() if spec[3]])
def test_working_sets_under_max_device_memory_reach_the_cpu_optimum(case, monkeypatch):
    estimator, kind, sparse, _ = FITS[case]
    X, y = _fit_data(kind, sparse)
    cpu = clone(estimator).fit(X, y)
    rounds = []
    for name in ("newton", "dual"):  # count the working-set solves
        solve = getattr(working_set, name)
        monkeypatch.setattr(working_set, name,
                            lambda *a, _solve=solve, **k: rounds.append(1) or _solve(*a, **k))
    n_outputs = y.shape[1] if y.ndim == 2 else 1
    gpu = clone(estimator).set_params(device="cuda",
                                      max_device_memory=_budget(estimator, X, n_outputs))
    gpu.fit(X, y)
    assert rounds, "the data fit the device: no working sets"
    _same_optimum(gpu, cpu, estimator.tol)


def test_max_device_memory_is_checked():
    X, y = _fit_data("classification", False)
    for bad in (0, -5, 1.5, "1GB"):
        with pytest.raises(ValueError, match="max_device_memory"):
            linear.LogisticRegression(device="cuda", max_device_memory=bad).fit(X, y)
    with pytest.raises(ValueError, match="max_device_memory=100 bytes is too small"):
        linear.LogisticRegression(device="cuda", max_device_memory=100).fit(X, y)
    with pytest.raises(ValueError, match="max_device_memory=100 bytes is too small"):
        linear.LinearSVC(loss="hinge", device="cuda", max_device_memory=100).fit(X, y)
