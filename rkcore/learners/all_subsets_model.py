"""The all-subsets model (Blondel et al.): a factorization machine over the all-subsets kernel, fitted by L-BFGS-B."""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from ..base.validation import Count
from ..kernels.numerics import canonical_csr, row_blocks
from .lbfgs import _LBFGSBinaryClassifier
from .common import LOSSES



class AllSubsetsModelClassifier(_LBFGSBinaryClassifier):
    r"""The all-subsets model (paper eq. 6; Blondel et al. 2016a) for binary classification.

    .. math::
        f(\mathbf x) = \sum_{s=1}^{k} \lambda_s \prod_{j=1}^{d} (1 + p_{sj} x_j),\qquad
        \min_{\boldsymbol\lambda, \mathbf P}\ \sum_i \tilde s_i L(y_i, f(\mathbf x_i))
            + \tfrac{\alpha}{2}\|\boldsymbol\lambda\|^2 + \tfrac{\beta}{2}\|\mathbf P\|_F^2

    Unlike the FM, lambda is learned here: the constant 1 in every factor means a
    scale of lambda_s cannot be absorbed into p_s (and sum_s lambda_s is the model's
    bias: the empty itemset). It is penalised with alpha.

    Only the non-zeros of X enter the products (x_j = 0 gives a factor 1), so one
    evaluation costs O(nnz(X) k). Products are taken in log space with separate
    counts of negative and of zero factors. The gradient needs the leave-one-out
    product ``prod_{l != j}(1 + p_sl x_l)``: it is ``prod / (1 + p_sj x_j)`` when that
    factor is non-zero, and when it is exactly zero it is the product of the
    non-zero factors if this is the only zero factor, else 0 - never a division by 0.

    lambda starts at 0 and P ~ N(0, init_scale^2).

    Parameters
    ----------
    n_components : int, default=30
        Rank k (number of terms lambda_s prod_j (1 + p_sj x_j)).
    alpha : float, default=1e-4
        L2 penalty of lambda.
    beta : float, default=1e-4
        L2 penalty of the factors P.
    loss : {"squared_hinge", "logistic"}, default="squared_hinge"
        Loss L(y, f) of the mean-loss objective; with "logistic", ``predict_proba`` is the model's own
        probability sigma(f(x)).
    probability : bool, default=False
        With the squared hinge loss, also fit a sigmoid calibration sigma(a f(x)) on cross-validated decision
        values so that ``predict_proba`` is available (as in :class:`FactorizationMachineClassifier`).
    max_iter : int, default=200
        L-BFGS-B iterations.
    tol : float, default=1e-6
        Stop when the largest gradient entry is below ``tol`` (ftol = tol * 1e-3).
    init_scale : float or "auto", default=0.01
        Standard deviation of the initial factors; "auto" as in
        :class:`FactorizationMachineClassifier`.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial factors: an int gives the same fit on every call.
        See :term:`Glossary <random_state>`.

    Attributes
    ----------
    P_ : ndarray (n_components, n_features)
    lambdas_ : ndarray (n_components,)
    n_iter_, converged_, objective_, objective_history_, classes_, n_features_in_
    estimators_ : list of AllSubsetsModelClassifier
        More than two classes only: one binary model per class against the rest; ``P_``, ``lambdas_``,
        ``n_iter_`` and ``objective_`` are then stacked per class.
    probability_slope_ : float
        Slope a of ``predict_proba`` = sigma(a f(x)): 1 for the logistic loss, fitted with ``probability=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.learners import AllSubsetsModelClassifier
    >>> X = np.random.RandomState(0).rand(60, 4); y = (X[:, 0] * X[:, 1] > 0.25).astype(int)
    >>> clf = AllSubsetsModelClassifier(n_components=5, tol=1e-3, random_state=0).fit(X, y)
    >>> clf.predict(X[:3]).shape
    (3,)
    """

    _parameter_constraints: dict = {
        "n_components": [Count(1)],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "loss": [StrOptions(set(LOSSES))],
        "probability": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "init_scale": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "random_state": ["random_state"],
    }

    #: fitted attributes stacked per class when there are more than two classes
    _per_class_attributes = ("P_", "lambdas_")

    #: bytes of (nnz x k) temporaries per block of rows
    BLOCK_BYTES = 32 * 2**20

    def __init__(self, n_components=30, *, alpha=1e-4, beta=1e-4, loss="squared_hinge", probability=False,
                 max_iter=200, tol=1e-6, init_scale=0.01, random_state=None):
        self.n_components = n_components
        self.alpha = alpha
        self.beta = beta
        self.loss = loss
        self.probability = probability
        self.max_iter = max_iter
        self.tol = tol
        self.init_scale = init_scale
        self.random_state = random_state


    def _initial(self, rng, d, scale):
        P = scale * rng.standard_normal((self.n_components, d))
        return np.concatenate([np.zeros(self.n_components), P.ravel()])

    def _split(self, theta, d):
        k = self.n_components
        return theta[:k], theta[k:].reshape(k, d)

    def _prepare(self, X):
        """Row blocks of X as (row slice, row index per non-zero, column, value)."""
        X = canonical_csr(X)  # a copy (duplicates summed, zeros dropped): the caller's X untouched
        n, d = X.shape
        per_row = np.diff(X.indptr)
        bytes_per_row = 8 * 8 * self.n_components * max(1.0, X.nnz / max(n, 1))
        blocks = []
        for rows in row_blocks(n, int(bytes_per_row), self.BLOCK_BYTES):
            lo, hi = X.indptr[rows.start], X.indptr[rows.stop]
            row_of = np.repeat(np.arange(rows.stop - rows.start), per_row[rows])
            blocks.append((rows, row_of, X.indices[lo:hi], X.data[lo:hi]))
        return n, d, blocks

    @staticmethod
    def _products(P, n_rows, row_of, cols, vals):
        """prod_j (1 + p_sj x_ij) per (row, s), with the pieces the gradient needs."""
        factors = 1.0 + vals[:, None] * P.T[cols]  # (nnz, k): one factor per non-zero x_ij and s
        is_zero = factors == 0.0
        with np.errstate(divide="ignore"):
            log_abs = np.log(np.abs(factors))
        log_abs[is_zero] = 0.0
        # per-row sums of a (nnz, k) array as a sparse indicator product
        rows_ind = sp.csr_matrix((np.ones(row_of.size), (row_of, np.arange(row_of.size))),
                                 shape=(n_rows, row_of.size))
        n_zero = np.rint(rows_ind @ is_zero.astype(np.float64))
        n_neg = np.rint(rows_ind @ (factors < 0.0).astype(np.float64))
        nonzero_product = np.exp(rows_ind @ log_abs) * np.where(n_neg % 2 == 1, -1.0, 1.0)
        product = np.where(n_zero == 0, nonzero_product, 0.0)
        return factors, is_zero, n_zero, nonzero_product, product

    def _value_and_grad(self, theta, data, y, s):
        n, d, blocks = data
        lam, P = self._split(theta, d)
        f = np.empty(n)
        products = []
        for rows, row_of, cols, vals in blocks:
            pieces = self._products(P, rows.stop - rows.start, row_of, cols, vals)
            f[rows] = pieces[-1] @ lam
            products.append(pieces)
        losses, dloss = self._loss(y, f)
        g = s * dloss
        value = float(s @ losses) + 0.5 * self.alpha * float(lam @ lam) + 0.5 * self.beta * float(np.sum(P * P))
        grad_lam = self.alpha * lam
        grad_Pt = np.zeros((d, self.n_components))
        for (rows, row_of, cols, vals), (factors, is_zero, n_zero, nonzero_product, product) in zip(blocks, products):
            g_b = g[rows]
            grad_lam += product.T @ g_b
            # leave-one-out products, one per non-zero x_ij and s (see the class docstring)
            with np.errstate(divide="ignore", invalid="ignore"):
                loo = np.where(is_zero, np.where(n_zero[row_of] == 1, nonzero_product[row_of], 0.0),
                               product[row_of] / factors)
            cols_ind = sp.csr_matrix((g_b[row_of] * vals, (cols, np.arange(cols.size))), shape=(d, cols.size))
            grad_Pt += cols_ind @ loo
        grad_P = grad_Pt.T * lam[:, None] + self.beta * P
        return value, np.concatenate([grad_lam, grad_P.ravel()]), f

    def _store(self, theta, d):
        lam, P = self._split(theta, d)
        self.lambdas_ = np.array(lam)
        self.P_ = np.array(P)

    def _decision(self, data):
        n, d, blocks = data
        f = np.empty(n)
        for rows, row_of, cols, vals in blocks:
            f[rows] = self._products(self.P_, rows.stop - rows.start, row_of, cols, vals)[-1] @ self.lambdas_
        return f
