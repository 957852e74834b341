"""The landing page: what it states is computed elsewhere and re-exported here (``pages/Home.py`` imports only
``rkapp`` and ``rkcore.views``). It computes nothing itself: :data:`VIEWS` is empty.
"""
from __future__ import annotations

from rkcore.teaching.claims import HOME_VARIANCE_CLAIM

VIEWS = ()

__all__ = ["HOME_VARIANCE_CLAIM"]
