"""Weight rows drawn orthogonal in blocks, and the fast Walsh-Hadamard transform they share with the
structured maps (:mod:`rkcore.maps.structured`).

* :func:`orthogonal_gaussian_rows`: blocks of d orthogonal rows, each exactly N(0, I_d) (ORF's draw;
  the "gaussian-orthogonal" distribution of RK).
* :func:`hadamard_sign_rows`: blocks of rows of H_p diag(s), entries +-1, each row i.i.d. Rademacher
  (the "rademacher-hadamard" distribution of RK).
* :func:`fwht`: the unnormalized transform over the last axis, vectorized over every leading index.

Why RK stays unbiased with these rows: the RK estimate is the mean over rows s of
f(w_s) = K_S(x, w_s) K_S(y, w_s), and E f(w_s) = K_S(x, y) needs only the law of one row
(Proposition 2: entries i.i.d., mean 0, variance 1). Each row here has exactly that law; only the
joint law of the rows of a block changes, which moves the variance (through Cov(f(w_s), f(w_t))),
not the mean. numpy and scipy only: :mod:`rkcore.maps.distributions` imports this module.
"""
from __future__ import annotations

import numpy as np
from scipy.stats import chi


def next_power_of_two(d: int) -> int:
    """The smallest power of two at least ``d``: the width p the Hadamard-based maps pad a row to.

    Parameters
    ----------
    d : int
        A length, usually the number of features; ``d <= 1`` gives 1.

    Returns
    -------
    int
        The power p = 2^ceil(log2(d)) for d >= 1, so d <= p < 2 d; 1 for d <= 1.

    Examples
    --------
    >>> from rkcore.maps.orthogonal import next_power_of_two
    >>> [next_power_of_two(d) for d in (0, 1, 2, 3, 8, 9)]
    [1, 1, 2, 4, 8, 16]
    """
    return 1 << max(int(d) - 1, 0).bit_length()


#: Largest radix of one transform stage: a stage applies H_r (r <= 2^MAX_RADIX_BITS) as a small GEMM.
MAX_RADIX_BITS = 5


def fwht(a: np.ndarray) -> np.ndarray:
    """Unnormalized fast Walsh-Hadamard transform over the last axis.

    ``a @ scipy.linalg.hadamard(p)`` for every leading index (Sylvester, natural order), without building the
    p x p matrix. H_p = H_r1 (x) H_r2 (x) ... with radices r_s <= 32 (Kronecker factors of the Sylvester matrix act on separate
    bits of the index), so the transform is a few stages, each one matrix product with a constant-size r x r
    Hadamard matrix over the whole array: sum_s r_s <= 32 ceil(log2(p) / 5) flops per element, O(p log p) per
    row, in BLAS rather than log2(p) element-wise numpy passes (4-8x faster measured at p = 128 and 1024).

    The transform is not normalized: H_p H_p = p I, so ``fwht(fwht(a)) == p * a`` (up to rounding).

    Parameters
    ----------
    a : ndarray of shape (..., p)
        The rows to transform, p a power of two (the Hadamard maps zero-pad d features to p first);
        float32 or float64 (the product is computed in a's dtype). Not modified.

    Returns
    -------
    ndarray of shape (..., p)
        A new array of a's shape and dtype: ``a @ H_p`` along the last axis.

    Raises
    ------
    ValueError
        If the last axis is not a power of two in length (0 included).

    See Also
    --------
    scipy.linalg.hadamard : The dense Sylvester matrix H_p this transform multiplies by.
    sylvester_entries : Chosen entries of H_p, without the matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.linalg import hadamard
    >>> from rkcore.maps.orthogonal import fwht
    >>> a = np.random.RandomState(0).standard_normal((3, 2, 64))
    >>> bool(np.allclose(fwht(a), a @ hadamard(64)))
    True
    >>> bool(np.allclose(fwht(fwht(a)), 64 * a))
    True
    """
    p = a.shape[-1]
    if p < 1 or p & (p - 1):
        raise ValueError(f"fwht needs a last axis whose length is a power of two; got shape {a.shape}.")
    bits = p.bit_length() - 1
    n_stages = max(1, -(-bits // MAX_RADIX_BITS))
    radices = [1 << (bits // n_stages + (s < bits % n_stages)) for s in range(n_stages)]
    rows = a.size // p if p else 0
    out = np.ascontiguousarray(a)
    left = 1
    for s, r in enumerate(radices):
        right = p // (left * r)
        H = _sylvester_matrix(r, out.dtype)
        if right == 1:
            out = out.reshape(rows * left, r) @ H
        else:
            out = np.matmul(H, out.reshape(rows * left, r, right))
        left *= r
    return out.reshape(a.shape)


def _sylvester_matrix(r: int, dtype) -> np.ndarray:
    return sylvester_entries(np.arange(r), r).astype(dtype, copy=False)


def orthogonal_gaussian_rows(rng: np.random.RandomState, n_rows: int, d: int) -> np.ndarray:
    """Gaussian weight rows drawn in blocks of mutually orthogonal rows (ORF's draw).

    Blocks of k = min(d, n_rows) orthogonal rows (the last block truncated): the Q of a reduced QR
    decomposition of a d x k Gaussian matrix, signs fixed by diag(R) (then its columns are a Haar-random
    orthonormal k-frame), rescaled by independent chi_d norms. A Gaussian vector is its chi_d norm times an
    independent uniform direction, so each row is exactly N(0, I_d): the RK and random Fourier estimates
    stay unbiased, and only the joint law of a block's rows (orthogonal, so dependent) changes the variance.
    Blocks are independent of each other. Cost O(n_rows d^2) (one QR per block).

    Parameters
    ----------
    rng : numpy.random.RandomState
        The generator the blocks are drawn from (advanced in place).
    n_rows : int
        Number of rows to draw, >= 0.
    d : int
        Length of each row, >= 1.

    Returns
    -------
    ndarray of shape (n_rows, d)
        Float64 rows, each N(0, I_d); rows ``b k`` to ``b k + k - 1`` (one block) are orthogonal.

    See Also
    --------
    hadamard_sign_rows : The same block idea for Rademacher rows.
    rkcore.maps.structured.OrthogonalRandomFeatures : The Fourier map that uses these rows.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps.orthogonal import orthogonal_gaussian_rows
    >>> W = orthogonal_gaussian_rows(np.random.RandomState(0), 7, 4)
    >>> W.shape, W.dtype
    ((7, 4), dtype('float64'))
    >>> G = W[:4] @ W[:4].T  # the first block: 4 orthogonal rows
    >>> bool(np.allclose(G, np.diag(np.diag(G))))
    True
    """
    k = max(min(int(d), int(n_rows)), 1)
    n_blocks = -(-int(n_rows) // k)
    Q, R = np.linalg.qr(rng.standard_normal((n_blocks, d, k)))
    Q = Q * np.sign(np.diagonal(R, axis1=1, axis2=2))[:, None, :]
    rows = np.swapaxes(Q, 1, 2)  # (blocks, k, d): the orthonormal columns of Q as rows
    norms = chi.rvs(d, size=(n_blocks, k, 1), random_state=rng)
    return (rows * norms).reshape(n_blocks * k, d)[:n_rows]


def hadamard_sign_rows(rng: np.random.RandomState, n_rows: int, d: int) -> np.ndarray:
    """Rademacher weight rows drawn in blocks of rows of a sign-flipped Hadamard matrix.

    Blocks of k = min(p, n_rows) rows, p = next_power_of_two(d): k rows of H_p diag(s) (s random signs, the
    rows a random choice without repetition), first d columns. Each row is h_i * s, whose entries are
    i.i.d. Rademacher (s is, h_i is a fixed sign pattern), so the RK estimate stays unbiased (Proposition 2
    needs only the law of one row); rows of a block are orthogonal in R^p (in R^d when d is a power of
    two), which changes the variance only. Blocks are independent of each other.

    Parameters
    ----------
    rng : numpy.random.RandomState
        The generator the signs and row choices are drawn from (advanced in place).
    n_rows : int
        Number of rows to draw, >= 0.
    d : int
        Length of each row, >= 1.

    Returns
    -------
    ndarray of shape (n_rows, d)
        Float64 entries +-1, each row i.i.d. Rademacher.

    See Also
    --------
    orthogonal_gaussian_rows : The same block idea for Gaussian rows.
    sylvester_entries : The entries of H_p used here.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps.orthogonal import hadamard_sign_rows
    >>> W = hadamard_sign_rows(np.random.RandomState(0), 8, 8)
    >>> sorted(set(W.ravel().tolist()))
    [-1.0, 1.0]
    >>> bool(np.array_equal(W @ W.T, 8 * np.eye(8)))  # d = p = 8: one block of orthogonal rows
    True
    """
    p = next_power_of_two(d)
    k = max(min(p, int(n_rows)), 1)
    n_blocks = -(-int(n_rows) // k)
    signs = rng.randint(0, 2, size=(n_blocks, 1, d)).astype(np.float64) * 2.0 - 1.0
    rows = np.argsort(rng.random_sample((n_blocks, p)), axis=1)[:, :k]
    return (sylvester_entries(rows, d) * signs).reshape(n_blocks * k, d)[:n_rows]


def sylvester_entries(rows: np.ndarray, d: int) -> np.ndarray:
    """Chosen rows of the Sylvester Hadamard matrix, first d columns, without building the matrix.

    Entry (i, j) of H_p is (-1)^popcount(i & j) (natural order, as ``scipy.linalg.hadamard``); p plays no
    part beyond p > max(rows) and p >= d. O(d) per row, exact (the parity of the bit count by folding).

    Parameters
    ----------
    rows : ndarray of int, any shape
        Row indices i, >= 0 and < 2^63.
    d : int
        Number of leading columns j = 0, ..., d - 1.

    Returns
    -------
    ndarray of shape ``rows.shape + (d,)``
        Float64 entries +-1: H_p[i, j] for each index i in ``rows``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.linalg import hadamard
    >>> from rkcore.maps.orthogonal import sylvester_entries
    >>> bool(np.array_equal(sylvester_entries(np.array([5, 0, 3]), 8), hadamard(8)[[5, 0, 3]]))
    True
    """
    folded = rows[..., None].astype(np.int64) & np.arange(d, dtype=np.int64)
    for shift in (32, 16, 8, 4, 2, 1):  # parity of the bit count by folding (np.bitwise_count needs numpy 2)
        folded ^= folded >> shift
    return 1.0 - 2.0 * (folded & 1)


def block_sampler(rows_of):
    """A :class:`rkcore.maps.distributions.Distribution` sampler from a function that draws rows in blocks.

    The sampler draws a shape (..., d) as prod(...) rows of length d, in the block structure of
    ``rows_of`` (so consecutive rows along the last-but-one axis, flattened, share blocks); a 1-d shape
    (n,) is one row of length n.

    Parameters
    ----------
    rows_of : callable
        ``rows_of(rng, n_rows, d)`` -> ndarray of shape (n_rows, d), such as :func:`orthogonal_gaussian_rows`
        or :func:`hadamard_sign_rows`.

    Returns
    -------
    callable
        ``sample(rng, shape)`` -> ndarray of the given shape (a tuple of ints), with ``rows_of``'s dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from rkcore.maps.orthogonal import block_sampler, hadamard_sign_rows
    >>> sample = block_sampler(hadamard_sign_rows)
    >>> sample(np.random.RandomState(0), (2, 3, 4)).shape
    (2, 3, 4)
    """
    def sample(rng, shape):  # numpydoc ignore=GL08
        shape = tuple(int(s) for s in shape)
        if len(shape) == 1:
            return rows_of(rng, 1, shape[0]).reshape(shape)
        return rows_of(rng, int(np.prod(shape[:-1])), shape[-1]).reshape(shape)
    return sample
