"""The study tests share the data tests' tiny MovieLens 100K folder (written by the test, never /work/shared)."""
from tests.data.conftest import movielens, write_movielens  # noqa: F401  (the fixture, and its writer)
