#!/usr/bin/env bash
# Build pyrfm (Kyohei Atarashi's Cython library, github.com/neonnnnn/pyrfm) into a local folder
# OUTSIDE the repository, for benchmarks/maps/bench_vs_pyrfm.py only. The test suite never needs it.
#
# The "pyrfm" on PyPI is an unrelated project (a torch "Random Feature Method" package), so the
# author's library is built from source at a pinned commit.
#
# What is changed for modern toolchains (NumPy 2, Cython 3, Python 3.11), and nothing else:
#   * numpy.distutils no longer exists: its setup.py files are replaced by the small setuptools
#     script below, which declares the same extensions with the same sources and include dirs;
#   * Cython 3 changed two defaults: `cpow=True` restores integer ** integer -> integer (their
#     `2 ** degree` indices), and `legacy_implicit_noexcept=True` restores Cython 0.29's
#     no-exception-check cdef functions (the speed the code was written for);
#   * NumPy 2 removed the alias `np.complex`: its three uses (dtype= in random_features_fast.pyx,
#     the circulant transforms) become `np.complex128`, the type the alias stood for.
# No other line of pyrfm's source is modified.
#
# Usage:  bash benchmarks/maps/setup_pyrfm.sh            (clones from GitHub)
#         PYRFM_SRC=/path/to/pyrfm-checkout-or-git-dir bash benchmarks/maps/setup_pyrfm.sh
# Result: $PYRFM_DIR (default ~/.cache/rkcore-bench/pyrfm) holds an importable `pyrfm` package;
#         bench_vs_pyrfm.py looks there (or wherever PYRFM_DIR points).
set -euo pipefail
COMMIT=e88fe8cb7bf3062616d33826e955e828fc6d8ba6
PYRFM_DIR=${PYRFM_DIR:-$HOME/.cache/rkcore-bench/pyrfm}
PYTHON=${PYTHON:-python}
if [ -f "$PYRFM_DIR/.built-$COMMIT-2" ]; then echo "pyrfm already built in $PYRFM_DIR"; exit 0; fi
rm -rf "$PYRFM_DIR" && mkdir -p "$PYRFM_DIR"
cd "$PYRFM_DIR"

# 1. source at the pinned commit
if [ -n "${PYRFM_SRC:-}" ] && [ -d "$PYRFM_SRC/pyrfm" ]; then
  cp -r "$PYRFM_SRC/pyrfm" .
elif [ -n "${PYRFM_SRC:-}" ]; then  # a bare or normal git directory
  git --git-dir="$PYRFM_SRC" archive "$COMMIT" pyrfm | tar x
else
  git clone --quiet https://github.com/neonnnnn/pyrfm src && git -C src checkout --quiet "$COMMIT"
  mv src/pyrfm . && rm -rf src
fi

# 1b. the one NumPy 2 source fix (see above)
grep -rlE 'np\.complex([^_0-9a-z]|$)' pyrfm | xargs -r sed -i -E 's/np\.complex([^_0-9a-z]|$)/np.complex128\1/g'

# 2. build tools in the same folder (Cython is not a dependency of rkcore)
"$PYTHON" -m pip install --quiet --target "$PYRFM_DIR/_buildtools" "cython>=3,<4"

# 3. the extensions, as in pyrfm's numpy.distutils setup.py files
cat > build_pyrfm.py <<'PY'
import os
from os.path import join

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

sfmt, ffht = join("pyrfm", "sfmt", "SFMT-src-1.5.1"), join("pyrfm", "ffht", "FFHT")
include = [numpy.get_include(), sfmt, ffht]


def ext(module, extra=(), language="c++"):
    return Extension(module, [module.replace(".", os.sep) + ".pyx", *extra], include_dirs=include,
                     language=language, extra_compile_args=["-O3", "-w"],
                     define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")])


extensions = [
    ext("pyrfm.dataset_fast"), ext("pyrfm.kernels_fast"),
    ext("pyrfm.sfmt.sfmt", [join(sfmt, "SFMT.c")]),
    ext("pyrfm.ffht.fht_fast", [join(ffht, "fht_avx.c")], language="c"),
    *[ext("pyrfm.random_feature." + m) for m in (
        "unarize", "utils_random_fast", "random_features_fast", "random_features_doubly",
        "learning_kernel_with_random_feature_fast")],
    *[ext("pyrfm.linear_model." + m) for m in (
        "loss_fast", "utils", "cd_primal_sparse_mb", "adagrad_fast", "adam_fast", "sdca_fast",
        "sgd_fast", "saga_fast", "doubly_sgd_fast")],
]
directives = {"language_level": 3, "cpow": True, "legacy_implicit_noexcept": True}
setup(name="pyrfm", ext_modules=cythonize(extensions, compiler_directives=directives, nthreads=2),
      script_args=["build_ext", "--inplace"])
PY
PYTHONPATH="$PYRFM_DIR/_buildtools" "$PYTHON" build_pyrfm.py > build.log 2>&1 || { tail -40 build.log; exit 1; }
rm -rf build
PYTHONPATH="$PYRFM_DIR" "$PYTHON" -c "import pyrfm; print('pyrfm built in', pyrfm.__file__)"
touch "$PYRFM_DIR/.built-$COMMIT-2"
