"""Former grab-bag of the dashboard's small computations, now split by concern; this module
only re-exports them so ``from rkcore.views import ...`` keeps working.

=====================  ==========================================================
rkcore.textformats     parse / format itemsets and fields typed in the sidebar
rkcore.arrays          dense, subsample_rows
rkcore.limits          nbytes, format_bytes, CostEstimate, require_memory, check_allocation
rkcore.gram            gram_pair, gram_errors, gram_error_stats, gram_pairs, gram_long,
                       block_average, gram_view_bytes
rkcore.family_views    family_counts, family_listing, itemset_label, restrict_family,
                       explicit_view_family, explicit_feature_table, kernel_check
=====================  ==========================================================
"""
from .arrays import dense, subsample_rows  # noqa: F401
from .family_views import (  # noqa: F401
    explicit_feature_table, explicit_view_family, family_counts, family_listing, itemset_label, kernel_check,
    restrict_family,
)
from .gram import (  # noqa: F401
    block_average, gram_error_stats, gram_errors, gram_long, gram_pair, gram_pairs,
    gram_view_bytes,
)
from .limits import CostEstimate, format_bytes, nbytes, require_memory  # noqa: F401
from .textformats import format_fields, format_itemsets, parse_fields, parse_itemsets  # noqa: F401
