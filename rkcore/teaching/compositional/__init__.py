r"""Compositional kernels on a computation skeleton and their random features.

Daniely, Frostig, Gupta & Singer, *Random Features for Compositional Kernels* (2017),
Section 5 and Algorithm 1 (RFSS).

A :class:`Skeleton` is a small DAG. Its input nodes carry normalized *base kernels* on
groups of columns (:data:`BASE_KERNELS`: normalized dot product on the sphere, Gaussian,
categorical equality); each internal node v averages its children's kernels and applies
a *conjugate (dual) activation* :math:`\hat\sigma_v(\rho) = \sum_n a_n \rho^n` with
:math:`a_n \ge 0`, :math:`\sum_n a_n = 1` (:data:`ACTIVATIONS`):

.. math::
    k_v(\mathbf{x}, \mathbf{y}) = \hat\sigma_v\Big(\frac{1}{|\mathrm{in}(v)|}
    \sum_{u \in \mathrm{in}(v)} k_u(\mathbf{x}, \mathbf{y})\Big).

The random feature scheme (paper, Algorithm 1, from Lemmas 9 and 10): at an internal node
sample a degree n with probability a_n, pick n children uniformly at random (independently),
recurse into each and multiply the returned features; at an input node return a random
feature of the base kernel. Every feature is a product of base features, so
:math:`\mathbb{E}[\psi(\mathbf{x})\overline{\psi(\mathbf{y})}] = k(\mathbf{x}, \mathbf{y})`.
Base features are the paper's norm-efficient ones where they exist (Section 4): complex of
modulus 1 for the circle (z or its conjugate), the Gaussian kernel (e^{i<w, x>}) and categories
(e^{2 pi i w x / c}), so a product of any length stays bounded; sqrt(d) x_j / |x| on spheres of
dimension d >= 3. The stored real feature is sqrt(2) Re(e^{ib} psi) with b uniform on {0, pi/2}
(paper, Comment 1; the two-point phase has the same expectation as a uniform one), or psi itself
when every factor is real. :class:`CompositionalFeatures` draws D features, vectorized over all
features at once.

De-duplication
--------------
The paper (Section 6): "when one repeatedly executes Algorithm 1 in order to generate
features, duplicates may arise. It is straightforward to merge them and hence afford to
generate more under the target feature budget." With discrete base features (coordinate
sampling on the sphere, the categorical scheme) and activations with a constant term
(a_0 > 0: the constant feature 1 alone has probability e^{-1} under the exponential
activation) duplicates are frequent. Two weightings of the merged features:

* ``dedup="counts"`` -- the literal reading: draw until D distinct features are seen,
  give feature f the weight c_f / N (c_f its multiplicity among the N draws). Because N is
  a stopping time this is *not* exactly unbiased (E[c_f / N] != p_f in general); it is
  kept to measure that bias.
* ``dedup="unbiased"`` (the default of the option) -- the same draws, weighted by
  Des Raj's (1956) estimator for ordered sampling without replacement: with the distinct
  features in order of first appearance, p_j the exact probability that Algorithm 1
  returns feature j and P_{<j} = p_1 + ... + p_{j-1},

  .. math::
      \hat k = \frac{1}{D}\sum_{k=1}^{D}\Big(\sum_{j<k} p_j g_j + (1 - P_{<k})\, g_k\Big)
             = \sum_{j=1}^{D} \underbrace{\frac{(1 - P_{<j}) + (D - j)\, p_j}{D}}_{w_j}
               \psi_j(\mathbf{x})\psi_j(\mathbf{y}),

  where g_j = psi_j(x) psi_j(y). Each bracket is conditionally unbiased given the earlier
  draws (the first new feature in an i.i.d. stream is distributed as p restricted to the
  unseen features), so the estimate is exactly unbiased with exactly D stored features.
  Features containing a continuous base feature (Gaussian) have p_j = 0 and never repeat;
  if every feature had p_j = 0 the weights reduce to the plain 1/D.

"Identical" means the same derivation up to the order of the factors at each node: the
same input node with the same discrete parameter at the leaves, the same multiset of
child sub-derivations at each internal node, and the same output phase; moreover every
call that multiplied no base feature (or only constant ones, e^{2 pi i 0 x / c} = 1) is the
constant 1, one feature however it was derived (probability e_v = sigma_v(mean_u e_u)). p_j is computed exactly
along the derivation (a_n, the 1/|in(v)| child choices, the multinomial count of orderings,
the base parameter probability, 1/2 for the phase of a complex product). Two different
derivations can still give the same function (the same leaves reached through different
internal nodes); they stay separate features, which costs budget but not correctness.

The implementation is split by concern into sub-modules (pure moves; everything is re-exported
here, so ``from rkcore.teaching.compositional import ...`` works as before):

==========================================  ====================================================
rkcore.teaching.compositional.activations            dual activations (Activation, ACTIVATIONS)
rkcore.teaching.compositional.skeleton               base kernels and the skeleton DAG (BaseKernel, Skeleton)
rkcore.teaching.compositional.presets                preset skeletons and data preparation (PRESETS)
rkcore.teaching.compositional.sampling               Algorithm 1 vectorized, de-duplication (sample_features)
rkcore.teaching.compositional.transformer            CompositionalFeatures (scikit-learn transformer)
rkcore.teaching.compositional.studies                error curves and feature tables
==========================================  ====================================================
"""
# Re-exports: the public names only; private helpers are imported from the module that owns them.
from .activations import ACTIVATIONS, Activation, activation_curves, activation_table, get_activation
from .skeleton import (
    BASE_KERNELS, BaseKernel, get_base_kernel, InputNode, InternalNode, REAL_FEATURE_LATEX, Skeleton,
)
from .presets import (
    PRESETS, Preset, deep_skeleton, gaussian_skeleton, get_preset, mixed_skeleton, prepare_data, preset_skeleton,
    shallow_skeleton,
)
from .sampling import CONST, DEDUP_MODES, TRANSFORM_BLOCK_BYTES, sample_features
from .transformer import CompositionalFeatures
from .studies import compositional_error_curve, describe_features
