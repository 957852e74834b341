"""Text formats the dashboard reads and writes (no streamlit here).

* itemsets: ``"0,1; 2,3; 1,2,4"`` -- itemsets separated by ``;`` (or new lines),
  indices by ``,`` or spaces; ``{}`` or ``()`` denotes the empty itemset.
* fields: ``"0-4 | 5-9"`` -- fields separated by ``|`` (or ``;``), each a list of
  indices and inclusive ranges ``a-b`` separated by ``,`` or spaces.

Parsers raise ValueError naming the piece they could not read; formatters are their inverses.
"""
from __future__ import annotations

import re

_INDEX = re.compile(r"^\d+$")
_RANGE = re.compile(r"^(\d+)\s*-\s*(\d+)$")


def parse_itemsets(text: str) -> tuple[tuple[int, ...], ...]:
    """Read ``"0,1; 2,3; 1,2,4"`` into ((0, 1), (2, 3), (1, 2, 4)).

    Raises ValueError naming the piece that is not a list of non-negative integers.
    Range and duplicate checks against d are left to :meth:`ItemsetFamily.custom`.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError('No itemsets given: write them like "0,1; 2,3; 1,2,4" (itemsets separated by ";").')
    out = []
    for piece in re.split(r"[;\n]", text):
        piece = piece.strip()
        if not piece:
            continue
        if piece in ("{}", "()", "[]", "∅"):
            out.append(())
            continue
        tokens = [t for t in re.split(r"[,\s]+", piece.strip("{}()[] ")) if t]
        bad = [t for t in tokens if not _INDEX.match(t)]
        if bad or not tokens:
            raise ValueError(
                f"Could not read the itemset {piece!r}: {', '.join(map(repr, bad)) or 'it is empty'} "
                "is not a feature index. Write itemsets like \"0,1; 2,3; 1,2,4\" "
                "(non-negative integers separated by commas, itemsets separated by semicolons).")
        out.append(tuple(int(t) for t in tokens))
    if not out:
        raise ValueError('No itemsets given: write them like "0,1; 2,3; 1,2,4" (itemsets separated by ";").')
    return tuple(out)


def parse_fields(text: str) -> tuple[tuple[int, ...], ...]:
    """Read ``"0-4 | 5-9"`` into ((0, 1, 2, 3, 4), (5, 6, 7, 8, 9)).

    Raises ValueError naming the piece that is neither an index nor a range ``a-b``.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError('No fields given: write them like "0-4 | 5-9" (fields separated by "|").')
    fields = []
    for piece in re.split(r"[|;\n]", text):
        piece = piece.strip()
        if not piece:
            continue
        members: list[int] = []
        for token in [t for t in re.split(r"[,\s]+", re.sub(r"\s*-\s*", "-", piece)) if t]:
            if _INDEX.match(token):
                members.append(int(token))
                continue
            match = _RANGE.match(token)
            if not match or int(match.group(1)) > int(match.group(2)):
                raise ValueError(
                    f"Could not read {token!r} in the field {piece!r}: use indices and inclusive ranges "
                    "a-b with a <= b, e.g. \"0-4 | 5-9\" or \"0,2,4 | 1,3\".")
            members.extend(range(int(match.group(1)), int(match.group(2)) + 1))
        fields.append(tuple(members))
    if not fields:
        raise ValueError('No fields given: write them like "0-4 | 5-9" (fields separated by "|").')
    return tuple(fields)


def format_itemsets(itemsets) -> str:
    """The inverse of :func:`parse_itemsets`."""
    return "; ".join(",".join(map(str, v)) if v else "{}" for v in itemsets)


def format_fields(fields) -> str:
    """A compact text for fields, using ranges for runs: ((0,1,2),(3,4)) -> "0-2 | 3-4"."""
    parts = []
    for f in fields:
        f = sorted(f)
        runs, start = [], None
        for a, b in zip(f, f[1:] + [None]):
            start = a if start is None else start
            if b != a + 1:
                runs.append(str(start) if start == a else f"{start}-{a}")
                start = None
        parts.append(",".join(runs))
    return " | ".join(parts)
