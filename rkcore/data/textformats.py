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


#: Typed itemsets / fields: longest text, most itemsets, largest feature index (when d is not given;
#: uploads have at most rkcore.data.datasets.MAX_FEATURES columns). Checked before anything is built.
MAX_TEXT_LENGTH = 100_000
MAX_ITEMSETS = 10_000
MAX_INDEX = 99_999
_MAX_DIGITS = 12  # longer digit strings are refused before int() (Python refuses > 4300 digits anyway)


def _index_limit(d: int | None) -> tuple[int, str]:
    if d is None:
        return MAX_INDEX, f"the largest allowed index is {MAX_INDEX:,}"
    return int(d) - 1, f"the data has d={int(d)} features, so indices go from 0 to {int(d) - 1}"


def _check_text(text, what: str, example: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"No {what} given: write them like {example}.")
    if len(text) > MAX_TEXT_LENGTH:
        raise ValueError(f"The {what} text is {len(text):,} characters long, more than the {MAX_TEXT_LENGTH:,} "
                         f"allowed; write them like {example}.")
    return text


def _index(token: str, piece: str, limit: int, limit_text: str) -> int:
    if len(token) > _MAX_DIGITS or int(token) > limit:
        shown = token if len(token) <= 20 else token[:20] + "…"
        raise ValueError(f"The index {shown} in {piece[:80]!r} is out of range: {limit_text}.")
    return int(token)


def parse_itemsets(text: str, d: int | None = None, *, max_itemsets: int = MAX_ITEMSETS) -> tuple[tuple[int, ...], ...]:
    """Read ``"0,1; 2,3; 1,2,4"`` into ((0, 1), (2, 3), (1, 2, 4)).

    Raises ValueError naming the piece that is not a list of non-negative integers, an
    index above d - 1 (or :data:`MAX_INDEX` when d is None), more than ``max_itemsets``
    itemsets, or a text longer than :data:`MAX_TEXT_LENGTH`. Duplicate checks are left to
    :meth:`ItemsetFamily.custom`.

    Parameters
    ----------
    text : str
        The typed itemsets.
    d : int, optional
        Number of features (None: indices up to :data:`MAX_INDEX`).
    max_itemsets : int, default=MAX_ITEMSETS
        Most itemsets accepted.

    Returns
    -------
    tuple of tuple of int
        The itemsets.
    """
    example = '"0,1; 2,3; 1,2,4" (itemsets separated by ";")'
    text = _check_text(text, "itemsets", example)
    limit, limit_text = _index_limit(d)
    pieces = [p.strip() for p in re.split(r"[;\n]", text) if p.strip()]
    if len(pieces) > max_itemsets:
        raise ValueError(f"{len(pieces):,} itemsets were given; at most {max_itemsets:,} are allowed. "
                         "Use a named family (ANOVA, up-to-m, all subsets) for large families.")
    out: list[tuple[int, ...]] = []
    for piece in pieces:
        if piece in ("{}", "()", "[]", "∅"):
            out.append(())
            continue
        tokens = [t for t in re.split(r"[,\s]+", piece.strip("{}()[] ")) if t]
        bad = [t for t in tokens if not _INDEX.match(t)]
        if bad or not tokens:
            raise ValueError(
                f"Could not read the itemset {piece[:80]!r}: {', '.join(repr(t[:20]) for t in bad[:5]) or 'it is empty'} "
                "is not a feature index. Write itemsets like \"0,1; 2,3; 1,2,4\" "
                "(non-negative integers separated by commas, itemsets separated by semicolons).")
        out.append(tuple(_index(t, piece, limit, limit_text) for t in tokens))
    if not out:
        raise ValueError(f"No itemsets given: write them like {example}.")
    return tuple(out)


def parse_fields(text: str, d: int | None = None) -> tuple[tuple[int, ...], ...]:
    """Read ``"0-4 | 5-9"`` into ((0, 1, 2, 3, 4), (5, 6, 7, 8, 9)).

    Raises ValueError naming the piece that is neither an index nor a range ``a-b``, an
    index above d - 1 (or :data:`MAX_INDEX` when d is None), or fields that list more
    indices in total than there are features (so they would overlap). Ranges are checked
    arithmetically before any is expanded, so "0-30000000" costs nothing.

    Parameters
    ----------
    text : str
        The typed fields.
    d : int, optional
        Number of features (None: indices up to :data:`MAX_INDEX`).

    Returns
    -------
    tuple of tuple of int
        The fields.
    """
    example = '"0-4 | 5-9" (fields separated by "|")'
    text = _check_text(text, "fields", example)
    limit, limit_text = _index_limit(d)
    parsed: list[list[tuple[int, int]]] = []  # per field, inclusive (start, stop) runs
    total = 0
    for piece in re.split(r"[|;\n]", text):
        piece = piece.strip()
        if not piece:
            continue
        runs: list[tuple[int, int]] = []
        for token in [t for t in re.split(r"[,\s]+", re.sub(r"\s*-\s*", "-", piece)) if t]:
            if _INDEX.match(token):
                j = _index(token, piece, limit, limit_text)
                runs.append((j, j))
                continue
            match = _RANGE.match(token)
            if not match:
                raise ValueError(
                    f"Could not read {token[:40]!r} in the field {piece[:80]!r}: use indices and inclusive ranges "
                    "a-b with a <= b, e.g. \"0-4 | 5-9\" or \"0,2,4 | 1,3\".")
            a, b = (_index(g, piece, limit, limit_text) for g in match.groups())
            if a > b:
                raise ValueError(f"The range {token!r} in the field {piece[:80]!r} is empty: write a-b with a <= b, "
                                 "e.g. \"0-4 | 5-9\".")
            runs.append((a, b))
            total += b - a + 1
            if total > limit + 1:
                raise ValueError(f"The fields list {total:,} or more indices, but {limit_text}; fields must not "
                                 "overlap, so they cannot list more indices than there are features.")
        parsed.append(runs)
    if not parsed:
        raise ValueError(f"No fields given: write them like {example}.")
    return tuple(tuple(j for a, b in runs for j in range(a, b + 1)) for runs in parsed)


def format_itemsets(itemsets) -> str:
    """The inverse of :func:`parse_itemsets`.

    Parameters
    ----------
    itemsets : sequence of sequence of int
        The itemsets.

    Returns
    -------
    str
        E.g. ``"0,1; 2,3"`` (``{}`` for the empty itemset).
    """
    return "; ".join(",".join(map(str, v)) if v else "{}" for v in itemsets)


def format_fields(fields) -> str:
    """A compact text for fields, using ranges for runs: ((0,1,2),(3,4)) -> "0-2 | 3-4".

    Parameters
    ----------
    fields : sequence of sequence of int
        The fields.

    Returns
    -------
    str
        E.g. ``"0-2 | 3-4"``.
    """
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
