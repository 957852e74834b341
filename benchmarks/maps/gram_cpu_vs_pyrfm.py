"""CPU seconds (one BLAS thread) of bench_vs_pyrfm's exact Gram cells: rkcore, rkcore at a git
revision ("before"), pyrfm; the load-robust companion of ``bench_vs_pyrfm.py --only gram``.

Usage: python benchmarks/maps/gram_cpu_vs_pyrfm.py [repeats] [before-revision]   (pyrfm built by setup_pyrfm.sh)
Prints one markdown row per cell: rkcore ms, before ms, pyrfm ms, rkcore / pyrfm (min-max), before / pyrfm.
"""
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_vs_pyrfm import PYRFM_DIR, import_before, movielens_shaped  # noqa: E402  (puts this checkout first)

from rkcore.kernels import exact as K  # noqa: E402

sys.path.insert(0, str(PYRFM_DIR))
import pyrfm  # noqa: E402

R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
KM = import_before(sys.argv[2] if len(sys.argv) > 2 else "430bad8", Path(tempfile.mkdtemp()))[1]
ml = movielens_shaped(2000, seed=3)
print(f"load {os.getloadavg()[0]:.1f}")
with threadpool_limits(1, user_api="blas"):
    for label, X in (("dense", ml.toarray()), ("CSR", ml)):
        cases = [("all-subsets", lambda X=X: K.all_subsets_kernel(X), lambda X=X: KM.all_subsets_kernel(X), lambda X=X: pyrfm.kernels.all_subsets(X, X))]
        for m in (2, 3):
            cases.append((f"ANOVA-{m}", lambda X=X, m=m: K.anova_kernel(X, degree=m), lambda X=X, m=m: KM.anova_kernel(X, degree=m),
                          lambda X=X, m=m: pyrfm.kernels.anova(X, X, m)))
        for name, a, b, c in cases:
            for f in (a, b, c): f()
            t = {0: [], 1: [], 2: []}
            for _ in range(R):
                for i, f in enumerate((a, b, c)):
                    t0 = time.process_time(); f(); t[i].append(time.process_time() - t0)
            ta, tb, tc = (np.array(t[i]) for i in range(3))
            print(f"| {label} | {name} | {np.median(ta)*1e3:.0f} | {np.median(tb)*1e3:.0f} | {np.median(tc)*1e3:.0f} | "
                  f"{np.median(ta/tc):.2f} ({(ta/tc).min():.2f}-{(ta/tc).max():.2f}) | {np.median(tb/tc):.2f} |", flush=True)
print(f"load {os.getloadavg()[0]:.1f}")
