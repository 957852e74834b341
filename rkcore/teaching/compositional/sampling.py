"""Algorithm 1 (RFSS) vectorized over all features, with de-duplication (counts or Des Raj weights)."""
from __future__ import annotations

import numpy as np
from scipy.special import gammaln
from sklearn.utils import check_random_state

from ...base.limits import check_allocation, nbytes
from .activations import ACTIVATIONS
from .presets import _check_positive_int
from .skeleton import BASE_KERNELS, InputNode, _is_complex_base, Skeleton


DEDUP_MODES = ("none", "unbiased", "counts")

#: Temporary memory per row block in transform (base features of all leaves).
TRANSFORM_BLOCK_BYTES = 16 * 2**20

#: Numbers every drawn derivation holds at least: its root request (node, parent, feature, degree), its root
#: and its phase, and the feature's weight. A lower bound: tracemalloc measured 210-380 bytes per feature
#: (more requests, the leaves), so a draw refused by this price could not have fit.
NUMBERS_PER_FEATURE = 7


def check_draw_fits(n_draws: int) -> None:
    """Refuse (ValueError, :func:`rkcore.base.limits.check_allocation`) a draw of ``n_draws`` derivations
    whose least memory exceeds the budget, naming the largest number that fits.

    Parameters
    ----------
    n_draws : int
        Derivations (features) to draw.
    """
    check_allocation("The drawn features", (n_draws, NUMBERS_PER_FEATURE), hint="Lower n_components (D).",
                     largest={"n_components (D)": lambda D: nbytes((D, NUMBERS_PER_FEATURE))})


# ============================================================================ sampling (Algorithm 1)
class _Forest:
    """The derivations of a batch of features, stored as flat arrays of "requests".

    A request is one call of Algorithm 1: at an internal node it records the sampled
    degree, at an input node (a leaf) the sampled base parameter. ``parent`` links a
    request to the call that made it; ``root[f]`` is the request of feature f and
    ``phase[f]`` in {0, 1} its output phase b = phase * pi/2 (used when the product is complex).
    """

    def __init__(self, node, parent, feature, degree, root, leaves, phase):
        self.node, self.parent, self.feature, self.degree, self.root = node, parent, feature, degree, root
        self.phase = phase
        self.leaves = leaves  # per input node index: dict(req=..., feature=..., index=..., w=...)

    @property
    def n_features(self) -> int:
        return self.root.size

    @classmethod
    def concat(cls, a: "_Forest", b: "_Forest") -> "_Forest":
        off_r, off_f = a.node.size, a.n_features
        leaves = {}
        for i in a.leaves:
            la, lb = a.leaves[i], b.leaves[i]
            shift = {"req": off_r, "feature": off_f}
            leaves[i] = {k: np.concatenate([la[k], lb[k] + shift.get(k, 0)]) for k in la}
        return cls(np.concatenate([a.node, b.node]),
                   np.concatenate([a.parent, np.where(b.parent >= 0, b.parent + off_r, -1)]),
                   np.concatenate([a.feature, b.feature + off_f]),
                   np.concatenate([a.degree, b.degree]),
                   np.concatenate([a.root, b.root + off_r]), leaves, np.concatenate([a.phase, b.phase]))


def _sample_forest(skel: Skeleton, n_features: int, rng: np.random.RandomState) -> _Forest:
    """Run Algorithm 1 n_features times, vectorized: one pass over the nodes, output first.

    Parents come after their children in ``skel.nodes``, so visiting the nodes in reverse
    order sees every request of a node before the node is expanded.
    """
    V = len(skel.nodes)
    pend_req: list[list[np.ndarray]] = [[] for _ in range(V)]
    pend_feat: list[list[np.ndarray]] = [[] for _ in range(V)]
    root = np.arange(n_features, dtype=np.int64)
    phase = rng.randint(0, 2, size=n_features).astype(np.int64)
    pend_req[V - 1].append(root)
    pend_feat[V - 1].append(root.copy())
    chunks_node = [np.full(n_features, V - 1, dtype=np.int64)]
    chunks_parent = [np.full(n_features, -1, dtype=np.int64)]
    chunks_feat = [root.copy()]
    degree_at: list[tuple[np.ndarray, np.ndarray]] = []
    next_req = n_features
    leaves = {}
    for v in range(V - 1, -1, -1):
        node = skel.nodes[v]
        req = np.concatenate(pend_req[v]) if pend_req[v] else np.empty(0, dtype=np.int64)
        feat = np.concatenate(pend_feat[v]) if pend_feat[v] else np.empty(0, dtype=np.int64)
        if node.is_input:
            leaves[v] = _sample_base(node, req, feat, rng)
            continue
        n = ACTIVATIONS[node.activation].sample_degree(rng, req.size)
        degree_at.append((req, n))
        children = skel.children_of(v)
        total = int(n.sum())
        choice = rng.randint(0, children.size, size=total)
        new_req = next_req + np.arange(total, dtype=np.int64)
        next_req += total
        new_parent = np.repeat(req, n)
        new_feat = np.repeat(feat, n)
        child_node = children[choice]
        chunks_node.append(child_node)
        chunks_parent.append(new_parent)
        chunks_feat.append(new_feat)
        for c in np.unique(child_node):
            mask = child_node == c
            pend_req[c].append(new_req[mask])
            pend_feat[c].append(new_feat[mask])
    node_arr = np.concatenate(chunks_node)
    degree = np.full(node_arr.size, -1, dtype=np.int64)
    for req, n in degree_at:
        degree[req] = n
    return _Forest(node_arr, np.concatenate(chunks_parent), np.concatenate(chunks_feat), degree, root, leaves, phase)


def _sample_base(node: InputNode, req, feat, rng) -> dict:
    """Base random feature parameters for the requests at one input node (paper, Section 4).

    sphere, d = 1: sign(x) (deterministic, Example 1); d = 2: z or conj(z) with z = (x1 + i x2)/|x|
    (norm-efficient, Example 2); d >= 3: sqrt(d) x_j/|x| with j uniform (Example 5). Gaussian:
    e^{i<w, x>} with w ~ N(0, 2 gamma I) (Example 3). Categorical: e^{2 pi i w x / c}, w uniform (Example 4).
    """
    m = req.size
    out = dict(req=req, feature=feat, index=np.zeros(m, dtype=np.int64), w=np.zeros((m, 0)))
    if node.kernel == "sphere":
        out["index"] = rng.randint(0, len(node.columns), size=m).astype(np.int64)
    elif node.kernel == "categorical":
        out["index"] = rng.randint(0, node.n_categories, size=m).astype(np.int64)
    else:
        out["w"] = rng.standard_normal((m, len(node.columns))) * np.sqrt(2.0 * node.gamma)
    return out


def _base_log_mass(node: InputNode) -> float:
    if node.kernel == "sphere":
        return -np.log(len(node.columns))  # d = 2: z or conj(z), each 1/2; d = 1: sign, probability 1
    if node.kernel == "categorical":
        assert node.n_categories is not None  # a categorical node has its count (checked when built)
        return -np.log(node.n_categories)
    return -np.inf  # continuous parameter: a single feature has probability 0


#: The id of the constant feature 1 (a call that multiplied no base feature), shared by all derivations.
CONST = 0


def _row_ids(rows: np.ndarray) -> np.ndarray:
    """Ids 0..k-1 of the distinct rows of an int matrix (np.unique(axis=0) is a slow void sort)."""
    order = np.lexsort(rows.T[::-1])
    srt = rows[order]
    new = np.concatenate([[False], np.any(srt[1:] != srt[:-1], axis=1)])
    ids = np.empty(rows.shape[0], dtype=np.int64)
    ids[order] = np.cumsum(new)
    return ids


def _keys_and_masses(skel: Skeleton, forest: _Forest) -> tuple[np.ndarray, np.ndarray]:
    """Canonical id and exact log-probability of every feature's derivation.

    Bottom-up over the nodes: a leaf is identified by (node, discrete parameter) -- or
    is unique when the parameter is continuous. A call that returned no base feature at
    all (the constant 1) gets the shared id CONST, whatever its derivation: at node v that
    happens with probability e_v = sigma_v(mean_{u in in(v)} e_u); at an input node e is the
    probability that the base feature is the constant 1 (1/c for a category, w = 0; else 0). Any
    other internal call is identified by (node, sorted multiset of its children's ids), with
    probability a_n * n! / prod(mult!) * prod over its n slots of the slot's probability:
    r_v = mean_u e_u for a CONST slot, (1/|in(v)|) * p(child) otherwise.
    """
    R = forest.node.size
    key = np.full(R, -1, dtype=np.int64)
    logp = np.zeros(R)
    leafless = np.zeros(R, dtype=bool)
    e = np.zeros(len(skel.nodes))  # probability that a call at the node returns the constant 1
    next_id = CONST + 1
    for v, node in enumerate(skel.nodes):
        if node.is_input:
            lv = forest.leaves[v]
            if BASE_KERNELS[node.kernel].discrete:
                _, inv = np.unique(lv["index"], return_inverse=True)
                key[lv["req"]] = next_id + inv
                next_id += int(inv.max()) + 1 if inv.size else 0
            else:
                key[lv["req"]] = next_id + np.arange(lv["req"].size)
                next_id += lv["req"].size
            logp[lv["req"]] = _base_log_mass(node)
            if node.kernel == "categorical":  # w = 0: the base feature is the constant 1
                e[v] = 1.0 / node.n_categories
                const = lv["req"][lv["index"] == 0]
                key[const], leafless[const] = CONST, True
            continue
        r_v = e[skel.children_of(v)].mean()
        e[v] = float(ACTIVATIONS[node.activation].dual(np.array([r_v]))[0])
        req = np.flatnonzero(forest.node == v)
        if req.size == 0:
            continue
        row_of = np.full(R, -1, dtype=np.int64)
        row_of[req] = np.arange(req.size)
        has_parent = forest.parent >= 0
        kids = np.flatnonzero(has_parent & (row_of[np.where(has_parent, forest.parent, 0)] >= 0))
        rows = row_of[forest.parent[kids]]
        kid_keys = key[kids]
        order = np.lexsort((kid_keys, rows))
        rows, kid_keys, kids = rows[order], kid_keys[order], kids[order]
        n = forest.degree[req]
        width = int(n.max()) if n.size else 0
        starts = np.concatenate([[0], np.cumsum(n)[:-1]])
        pos = np.arange(rows.size) - starts[rows]
        padded = np.full((req.size, max(width, 1)), -1, dtype=np.int64)
        padded[rows, pos] = kid_keys
        inv = _row_ids(padded)
        key[req] = next_id + inv
        next_id += int(inv.max()) + 1
        # multiplicities of equal child ids within a row: sum over positions of log(rank in its run)
        new_run = np.ones(rows.size, dtype=bool)
        new_run[1:] = (rows[1:] != rows[:-1]) | (kid_keys[1:] != kid_keys[:-1])
        run_start = np.maximum.accumulate(np.where(new_run, np.arange(rows.size), 0)) if rows.size else rows
        log_mult = np.bincount(rows, weights=np.log(np.arange(rows.size) - run_start + 1.0), minlength=req.size)
        with np.errstate(divide="ignore"):
            slot_logp = np.where(leafless[kids], np.log(r_v), logp[kids] - np.log(len(node.children)))
        child_logp = np.bincount(rows, weights=slot_logp, minlength=req.size) if rows.size else np.zeros(req.size)
        logp[req] = ACTIVATIONS[node.activation].log_coefficient(n) + gammaln(n + 1.0) - log_mult + child_logp
        const = np.bincount(rows, weights=~leafless[kids], minlength=req.size) == 0 if rows.size else np.ones(req.size, bool)
        leafless[req] = const
        key[req[const]] = CONST
        with np.errstate(divide="ignore"):
            logp[req[const]] = np.log(e[v])
    return key[forest.root], logp[forest.root]


def _complex_features(skel: Skeleton, forest: _Forest) -> np.ndarray:
    """Whether each feature's product psi can take non-real values (then its real version uses the phase).

    Complex factors of one input node multiply to a single frequency: z^a conj(z)^b = z^(a-b) on a
    circle (|z| = 1), prod_k e^{2 pi i w_k x / c} = e^{2 pi i (sum_k w_k) x / c} for a category. When
    every such product is real (a = b; 2 sum w = 0 mod c, values +-1 on integer codes) and no
    Gaussian factor is present, psi is real and is stored as is: no phase, so no all-zero or
    doubled columns. (Products real only by a coincidence across nodes keep the phase: still
    unbiased, just noisier.)
    """
    out = np.zeros(forest.n_features, dtype=bool)
    F = forest.n_features
    for i, lv in forest.leaves.items():
        node = skel.nodes[i]
        if not _is_complex_base(node) or lv["feature"].size == 0:
            continue
        if node.kernel == "gaussian":
            out[lv["feature"]] = True
        elif node.kernel == "sphere":  # circle: +1 for z, -1 for conj(z)
            net = np.bincount(lv["feature"], weights=np.where(lv["index"] == 0, 1.0, -1.0), minlength=F)
            out |= net != 0
        else:
            # e^{2 pi i n x / c} on integer codes x is real (+-1) iff 2n = 0 mod c
            net = np.bincount(lv["feature"], weights=lv["index"].astype(np.float64), minlength=F)
            out |= np.mod(2 * np.round(net), node.n_categories) != 0
    return out


def _feature_keys(skel: Skeleton, forest: _Forest) -> tuple[np.ndarray, np.ndarray]:
    """Keys and log-probabilities of the real features: the derivation, plus the phase if complex."""
    keys, logp = _keys_and_masses(skel, forest)
    cplx = _complex_features(skel, forest)
    return 2 * keys + (cplx & (forest.phase == 1)), logp + np.where(cplx, -np.log(2.0), 0.0)


def sample_features(skeleton: Skeleton, n_components: int, *, dedup: str = "none", random_state=None,
                    max_draws: int | None = None) -> dict:
    """Draw D features of the skeleton's random feature scheme and their weights.

    Returns a dict with ``forest`` (the kept derivations, features renumbered 0..D-1),
    ``weights`` (w_j: the estimate is sum_j w_j psi_j(x) psi_j(y)), ``mass`` (p_j, exact
    probability of feature j under Algorithm 1; 0 when it has a continuous factor),
    ``n_draws`` (executions of Algorithm 1 used) and ``exhausted`` (True when fewer than
    D distinct features exist; then the weights are the exact p_j and the kernel is exact).
    See the module docstring for the three ``dedup`` modes.

    Parameters
    ----------
    skeleton : Skeleton
        The computation skeleton.
    n_components : int
        D, the features to keep.
    dedup : str, default="none"
        How identical features are merged (see the module docstring).
    random_state : int, optional
        Seed.
    max_draws : int, optional
        Most derivations drawn (None: 200 D + 10,000).

    Returns
    -------
    dict
        The keys described above.
    """
    if dedup not in DEDUP_MODES:
        raise ValueError(f"Unknown dedup mode {dedup!r}; allowed: {', '.join(map(repr, DEDUP_MODES))}.")
    D = _check_positive_int(n_components, "n_components")
    check_draw_fits(D)
    rng = check_random_state(random_state)
    if dedup == "none":
        forest = _sample_forest(skeleton, D, rng)
        return dict(forest=forest, weights=np.full(D, 1.0 / D), mass=None, n_draws=D, exhausted=False)
    cap = int(max_draws) if max_draws is not None else 200 * D + 10_000
    forest = _sample_forest(skeleton, D, rng)
    while True:
        keys, logp = _feature_keys(skeleton, forest)
        uniq, first = np.unique(keys, return_index=True)
        mass_seen = np.exp(logp[first]).sum()
        if uniq.size >= D or forest.n_features >= cap or mass_seen >= 1.0 - 1e-12:
            break
        more = min(cap - forest.n_features, forest.n_features)  # doubling: O(log) rounds
        check_draw_fits(forest.n_features + more)
        forest = _Forest.concat(forest, _sample_forest(skeleton, more, rng))
    first = np.sort(first)  # distinct features in order of first appearance
    exhausted = first.size < D and mass_seen >= 1.0 - 1e-12
    chosen = first[:D]
    k = chosen.size
    p = np.exp(logp[chosen])
    if dedup == "counts":
        n_used = int(chosen[-1]) + 1 if k == D else forest.n_features  # draws up to the D-th new one
        _, inv = np.unique(keys[:n_used], return_inverse=True)
        weights = np.bincount(inv)[inv[chosen]] / n_used
    elif exhausted:
        n_used = forest.n_features
        weights = p / p.sum()
    else:
        n_used = int(chosen[-1]) + 1 if k == D else forest.n_features
        before = np.concatenate([[0.0], np.cumsum(p)[:-1]])
        j = np.arange(1, k + 1)
        weights = (np.clip(1.0 - before, 0.0, None) + (k - j) * p) / k
    if k < D:  # fewer distinct features than asked: pad with zero-weight columns, keep the shape
        weights = np.concatenate([weights, np.zeros(D - k)])
        p = np.concatenate([p, np.zeros(D - k)])
    return dict(forest=_select(forest, chosen, D), weights=weights, mass=p, n_draws=n_used, exhausted=bool(exhausted))


def _select(forest: _Forest, chosen: np.ndarray, D: int) -> _Forest:
    """Keep the leaves of the chosen features (internal requests are not needed to evaluate)."""
    new_id = np.full(forest.n_features, -1, dtype=np.int64)
    new_id[chosen] = np.arange(chosen.size)
    leaves = {}
    for i, lv in forest.leaves.items():
        keep = new_id[lv["feature"]] >= 0
        leaves[i] = {k: a[keep] for k, a in lv.items()}
        leaves[i]["feature"] = new_id[leaves[i]["feature"]]
    phase = np.zeros(D, dtype=np.int64)
    phase[:chosen.size] = forest.phase[chosen]
    return _Forest(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64),
                   np.arange(D, dtype=np.int64), leaves, phase)
