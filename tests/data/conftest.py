"""Fixtures of the study-engine tests: a tiny MovieLens 100K folder written by the test (never
/work/shared), with the rows it holds, for the loader tests and the Table 1 command line."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

USERS = [  # id, age, gender, occupation, zip
    (1, 24, "M", "technician", "85711"),
    (2, 25, "F", "other", "94043"),      # tie: 25 -> 20 (round half to even)
    (3, 35, "M", "writer", "T8H1N"),     # tie: 35 -> 40; Canadian postal code -> zip=T
    (4, 7, "F", "student", "01002"),
    (5, 73, "M", "retired", "e2a4h"),    # lower case letter prefix -> zip=E
]
ITEMS = [  # id, title, date, genre indices
    (1, "Toy Story (1995)", "01-Jan-1995", [3, 4, 5]),   # 1995 -> 2000 (tie to even)
    (2, "Café au lait (1994)", "01-Jan-1994", [5, 14]),  # latin-1 title
    (3, "unknown", "", [0]),                             # missing date -> year=missing
    (4, "Metropolis (1926)", "01-Jan-1926", [8, 15]),
    (5, "Casablanca (1942)", "01-Jan-1942", [8, 14, 17]),
    (6, "Grease (1978)", "15-Jun-1978", [5, 12, 14]),
]
RATINGS = [(u, i, 1 + (3 * u + i) % 5) for u in range(1, 6) for i in range(1, 7)][:20]


def write_movielens(folder):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "u.data").write_text("".join(f"{u}\t{i}\t{r}\t88125094{k % 10}\n" for k, (u, i, r) in enumerate(RATINGS)))
    (folder / "u.user").write_text("".join(f"{u}|{a}|{g}|{o}|{z}\n" for u, a, g, o, z in USERS))
    lines = []
    for i, title, date, genres in ITEMS:
        flags = ["1" if g in genres else "0" for g in range(19)]
        lines.append("|".join([str(i), title, date, "", f"http://x/{i}"] + flags) + "\n")
    (folder / "u.item").write_bytes("".join(lines).encode("latin-1"))
    return folder


@pytest.fixture
def movielens():
    """``movielens.write(folder)`` writes u.data, u.user and u.item there and returns the folder;
    ``movielens.users``, ``.items``, ``.ratings`` are the rows written."""
    return SimpleNamespace(write=write_movielens, users=USERS, items=ITEMS, ratings=RATINGS)
