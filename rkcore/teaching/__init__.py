"""Teaching engines: explicit features and the kernel trick, random Fourier features, random projections,
compositional kernels, and the guided story."""
