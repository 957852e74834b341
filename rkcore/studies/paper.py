"""The paper's fixed study grids, standard library only: the command line's ``--help`` reads them without the
numeric stack, and the engines (:mod:`rkcore.studies.timing`, :mod:`rkcore.studies.table1`) take them from here.
"""
from __future__ import annotations

#: The paper's Figure 1: RK, SCRK, TS and RM timed on ANOVA m = 2 (the polynomial kernel for TS and RM),
#: D = 8192, d = 512 ... 4096, n = 1000.
FIGURE1 = {"maps": ["rk", "scrk", "ts", "rm"], "d": [512, 1024, 2048, 4096], "D": [8192], "n": [1000], "degree": 2}
#: The paper's Table 1: D as multiples of d.
TABLE1_MULTIPLES = (2, 4, 8, 16)
