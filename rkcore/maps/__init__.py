"""Random feature maps as scikit-learn transformers: RK (Algorithm 1), SCRK (section 4), Random Maclaurin,
and the weight distributions they draw from."""
from .circulant import SignedCirculantRandomKernel  # noqa: F401
from .distributions import DISTRIBUTIONS, Distribution, get_distribution  # noqa: F401
from .maclaurin import RandomMaclaurin  # noqa: F401
from .random_kernel import RandomKernel  # noqa: F401

__all__ = ["DISTRIBUTIONS", "Distribution", "RandomKernel", "RandomMaclaurin", "SignedCirculantRandomKernel",
           "get_distribution"]
