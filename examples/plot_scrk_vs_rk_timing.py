"""
SCRK against RK: mapping time as d grows
========================================

RK for the ANOVA kernel costs :math:`O(mDd)`; the signed circulant RK (Section 4 of the paper) replaces
the random matrix by circulant blocks multiplied through FFTs, :math:`O(mD\\log d)`. The timing engine
:func:`rkcore.studies.timing.time_maps` measures both (median of repeated ``transform`` calls); the
times on this page are from the machine that built it, so read the ratio and the slope, not the seconds.
"""
import matplotlib.pyplot as plt
from threadpoolctl import threadpool_limits

from rkcore.studies.timing import growth_exponent, median_table, time_maps

# %%
# One BLAS thread, as in the paper's Figure 1 (one core per map).
with threadpool_limits(limits=1, user_api="blas"):
    df = time_maps(["rk", "scrk"], [64, 256, 1024], [1024], [200], kernel_degree=2, repeats=3, random_state=0)
table = median_table(df)
print(table)
print(growth_exponent(df, "d"))

# %%
fig, ax = plt.subplots(figsize=(5.5, 3.5), constrained_layout=True)
for key, part in df[df["phase"] == "transform"].groupby("map"):
    medians = part.groupby("d")["seconds"].median()
    ax.loglog(medians.index, medians.values, "o-", label=key)
ax.set_xlabel("d (input features)")
ax.set_ylabel("transform seconds, n = 200, D = 1024")
ax.legend()
plt.show()
