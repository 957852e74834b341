"""
Out of core on Dask: features of a row-chunked array
====================================================

:func:`rkcore.studies.distributed.transform_dask` maps a ``dask.array`` chunk by chunk with a fitted
map, lazily; a reduction such as :math:`Z^\\top Z` then holds only a few chunks at a time. The same lines
run on a cluster (``connect("tcp://scheduler:8786")`` and ``da.from_zarr(...)`` of any length); here a
small local cluster of threads in this process (``LocalCluster(processes=False)``) and 40,000 rows.
The study engines take the same client (``error_study(..., client=client)``).
"""
import dask.array as da
import numpy as np

from rkcore import RandomKernel
from rkcore.registry import KernelSpec
from rkcore.studies.distributed import close, connect, transform_dask
from rkcore.studies.errors import error_study

client = connect("local", n_workers=1, threads_per_worker=2, processes=False)

X_big = da.random.default_rng(0).random((40_000, 20), chunks=(5_000, 20))
rk = RandomKernel(128, random_state=0).fit(X_big[:1000].compute())
Z = transform_dask(rk, X_big)  # lazy, the same row chunks
print(Z)
second_moment = (Z.T @ Z).compute()
print("Z^T Z:", second_moment.shape)

# %%
# The chunked result equals the in-memory transform, chunk for chunk (to rounding).
first = Z[:5_000].compute()
print("largest difference to rk.transform on the first chunk:",
      np.abs(first - rk.transform(X_big[:5_000].compute())).max())

# %%
# A study engine on the same client: each trial is a task, the data scattered once.
X_small = X_big[:200].compute()
X_small = X_small / X_small.sum(axis=1, keepdims=True)
errors = error_study(X_small, KernelSpec("anova", 2), [("rk", "rademacher"), ("scrk", None)], [40, 160], 4,
                     client=client, random_state=0)
rms = errors[errors["metric"] == "rms_error"]
print(rms.groupby(["method", "D"])["value"].mean().to_string())
close(client)
