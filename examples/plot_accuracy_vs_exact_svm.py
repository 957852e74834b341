"""
Accuracy of linear models on random features against the exact kernel SVM
==========================================================================

The paper's Figures 2 and 3 in miniature: on a small labelled set, a linear SVM on the features of every
map the accuracy study has (RK, SCRK, tensor sketch TS and random Maclaurin RM; ``rkcore.registry.METHODS``),
against the kernel SVM on the exact second-order ANOVA kernel, as D grows. :func:`rkcore.studies.accuracy.accuracy_study` picks C on a validation split and
reports test accuracy per method, D and trial.
"""
import warnings

import matplotlib.pyplot as plt
from sklearn.exceptions import ConvergenceWarning

from rkcore import data as datasets
from rkcore.registry import KernelSpec
from rkcore.studies.accuracy import accuracy_study, summarize

warnings.simplefilter("ignore", ConvergenceWarning)  # a few fits stop at their iteration limit

data = datasets.load_builtin("interactions", n_samples=400, random_state=0)
X = datasets.normalize(data.X, "l1")
d = X.shape[1]

df = accuracy_study((X, data.y), ["kernel_svm", "rk", "scrk", "ts", "rm"], [2 * d, 8 * d, 32 * d], 2,
                    kernel=KernelSpec("anova", 2), split=(0.5, 0.1, 0.4), C_grid=[0.1, 1.0, 10.0, 100.0],
                    random_state=0)
summary = summarize(df)
print(summary.to_string(index=False, float_format="%.4g"))

# %%
# The exact kernel SVM is one horizontal line; the maps approach it as D grows.
fig, ax = plt.subplots(figsize=(6, 3.8), constrained_layout=True)
exact = df[df["method"] == "kernel_svm"]["accuracy"].mean()
ax.axhline(exact, color="k", linestyle="--", label="exact ANOVA-2 kernel SVM")
for method, part in df[df["method"] != "kernel_svm"].groupby("method"):
    means = part.groupby("D")["accuracy"].mean()
    ax.semilogx(means.index, means.values, "o-", label=method)
ax.set_xlabel("D (random features)")
ax.set_ylabel("test accuracy")
ax.legend(fontsize="small")
plt.show()
