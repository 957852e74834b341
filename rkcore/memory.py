"""Memory accounting for the views: bytes of float64 arrays, a readable size, and what a view would need."""
from __future__ import annotations

import math
from dataclasses import dataclass


def nbytes(*shapes: tuple[int, ...], itemsize: int = 8) -> int:
    """Bytes of float64 arrays with these shapes."""
    return int(sum(math.prod(int(s) for s in shape) for shape in shapes) * itemsize)


def format_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024 or unit == "TB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


@dataclass(frozen=True)
class CostEstimate:
    """What a view would need: bytes of memory, and a human description of the biggest arrays."""

    bytes: int
    parts: tuple[tuple[str, int], ...]

    def describe(self) -> str:
        return ", ".join(f"{name} {format_bytes(b)}" for name, b in self.parts)
