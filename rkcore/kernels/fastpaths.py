"""Fast kernels behind the RK map and the exact Gram matrices (issue 16).

Each function has a narrow contract (shapes, dtypes, what it assumes) so that the call sites in
:mod:`rkcore.maps.random_kernel` and :mod:`rkcore.kernels.exact` stay one-liners. What they share:

* **In place.** Outputs are written into a caller's C-contiguous array ``out`` (a row block of
  the final result), GEMMs accumulate into it through BLAS ``beta = 1`` (dense) or scipy's
  ``Y += A X`` sparse kernel (CSR), so no (rows x D) temporary is allocated and copied.
* **Sparse-aware.** CSR input is never densified: power sums are SpMMs, the all-subsets map
  visits each row's stored entries only; dense blocks with few non-zeros
  (SPARSE_BLOCK_DENSITY) are read as CSR. CSR products run per cache-sized row chunk
  for ANOVA (:func:`product_chunks`), followed at once by the element-wise passes on that chunk.
* **Dtype-preserving.** The computation runs in ``out.dtype`` (float64 or float32); inputs are
  cast to it (weights once per map, data once per block).
* **Same numbers.** Every function computes the same formula as the reference code it
  replaces, in another order: results agree to rounding (tests/kernels/test_fastpaths.py).
  The all-subsets Gram's grouped-GEMM path is used only where it is forward stable
  (all products x_j y_j >= 0: a sum of non-negative terms); elsewhere the direct product runs.
* **The accuracy contract is the callers'.** :mod:`rkcore.maps.random_kernel` repairs with the stable
  recursion every ANOVA entry :func:`rkcore.kernels.exact.newton_is_safe` does not vouch for: for
  Rademacher weights from the power sums an :class:`AnovaBlock` keeps (``sums``), for other
  float64 weights from :meth:`AnovaBlock.checked`, whose cheap tier-1 test is a proven
  sufficient condition for newton_is_safe and which hands every other entry to newton_is_safe
  itself; non-finite all-subsets values (overflow on the way, inf * 0) are recomputed in log
  space (:func:`rkcore.kernels.exact.product_one_plus`). Do not call these blocks directly for values.
  The exact ANOVA Gram stays on :func:`rkcore.kernels.anova_gram.contract_elementary` (already blocked
  GEMMs plus the check).
"""
from __future__ import annotations

import numpy as np

from .all_subsets_blocks import AllSubsetsProductBlock, AllSubsetsSignsBlock
from .anova_blocks import AnovaBlock


def rk_block(kind: str, degree: int, W: np.ndarray, signs: bool, n_components: int | None = None):
    """The fast block function for an RK map, or None when the reference code should run.

    Features are scaled by 1/sqrt(n_components) (default: the rows of W; several maps' weights
    stacked in W keep their own D). The values are the fast formula's, not yet checked: the
    caller (:mod:`rkcore.maps.rk_blocks`) enforces the accuracy contract (module docstring).

    Parameters
    ----------
    kind : str
        The itemset kernel: "anova" (orders 2 and 3) and "all_subsets" have fast blocks.
    degree : int
        The ANOVA order m (ignored for "all_subsets").
    W : ndarray of shape (D, d)
        The random weights.
    signs : bool
        W holds Rademacher weights (entries exactly +1 or -1).
    n_components : int, optional
        The D of 1/sqrt(D); None: the rows of W.

    Returns
    -------
    AnovaBlock, AllSubsetsSignsBlock, AllSubsetsProductBlock or None
        A callable ``fn(X_block, out_block)`` (X dense or CSR, out C-contiguous (rows, D) float32
        or float64, written in place and returned) carrying ``temporaries`` (rows x D arrays, for
        block sizing) and ``gemm`` (GEMM-bound: keep blocks large; otherwise cache-sized); None
        for other kernels and orders.
    """
    fn: AnovaBlock | AllSubsetsSignsBlock | AllSubsetsProductBlock
    if kind == "anova" and degree in (2, 3):
        fn = AnovaBlock(W, degree, signs, n_components)
        fn.gemm = True
        return fn
    if kind == "all_subsets" and signs:
        fn = AllSubsetsSignsBlock(W, n_components)
        fn.gemm = True
        return fn
    if kind == "all_subsets":
        fn = AllSubsetsProductBlock(W, n_components)  # chunks rows to the cache itself: large outer blocks
        fn.gemm = True
        return fn
    return None
