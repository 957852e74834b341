"""Random feature maps as scikit-learn transformers: RK (Algorithm 1), SCRK (section 4), Random Maclaurin,
the Fourier maps of the Gaussian kernel (i.i.d. pairs, ORF, SORF, FastFood), and the weight distributions
they draw from. Every map is importable from here; the sub-modules are where they are implemented."""
from .circulant import SignedCirculantRandomKernel  # noqa: F401
from .distributions import DISTRIBUTIONS, Distribution, get_distribution  # noqa: F401
from .maclaurin import RandomMaclaurin  # noqa: F401
from .random_kernel import RandomKernel  # noqa: F401
from .structured import (FastFood, OrthogonalRandomFeatures, RandomFourierPairs,  # noqa: F401
                         StructuredOrthogonalRandomFeatures)

__all__ = ["DISTRIBUTIONS", "Distribution", "FastFood", "OrthogonalRandomFeatures", "RandomFourierPairs",
           "RandomKernel", "RandomMaclaurin", "SignedCirculantRandomKernel", "StructuredOrthogonalRandomFeatures",
           "get_distribution"]
