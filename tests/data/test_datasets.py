"""Tests for rkcore.data.datasets: built-ins, file loaders, normalization, MovieLens (on a written fixture)."""
from __future__ import annotations

import io

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import PolynomialFeatures

from rkcore.data import datasets as ds
from rkcore.theory.bounds import l1_radius


# ---------------------------------------------------------------------------- built-ins
@pytest.mark.parametrize("key", list(ds.BUILTIN))
def test_builtin_shapes_and_reproducible(key):
    a = ds.load_builtin(key, n_samples=120, random_state=3)
    b = ds.load_builtin(key, n_samples=120, random_state=3)
    assert a.X.dtype == np.float64 and a.X.shape == (min(120, a.X.shape[0]), len(a.feature_names))
    assert np.isfinite(a.X).all()
    np.testing.assert_array_equal(a.X, b.X)
    if a.y is not None:
        assert a.y.shape == (a.X.shape[0],)
        np.testing.assert_array_equal(a.y, b.y)


def test_builtin_unknown_key_and_bad_size():
    with pytest.raises(ValueError, match="interactions"):
        ds.load_builtin("nope")
    for key in ("interactions", "wine"):
        with pytest.raises(ValueError, match="n_samples"):
            ds.load_builtin(key, n_samples=0)
        with pytest.raises(ValueError, match="n_samples"):
            ds.load_builtin(key, n_samples="10")


def test_interactions_balanced_and_needs_pairwise_terms():
    data = ds.load_builtin("interactions", n_samples=800, random_state=0)
    # balanced in law: the threshold is the median of a fixed 20,000-point reference sample (so it does
    # not move with n); the count is binomial(800, 1/2 + O(0.004)): sd 14, so 5 sd is 70
    assert abs(int(data.y.sum()) - 400) < 70
    linear = cross_val_score(LogisticRegression(max_iter=1000), data.X, data.y, cv=4).mean()
    pairwise = cross_val_score(
        make_pipeline(PolynomialFeatures(2, interaction_only=True, include_bias=False), LogisticRegression(max_iter=2000)),
        data.X, data.y, cv=4).mean()
    # A linear model is at chance: y depends on an even function of a symmetric x. With 800
    # held-out predictions the SE of an accuracy near 0.5 is ~0.018, so 0.6 is > 5 SE away.
    assert linear < 0.6
    assert pairwise > 0.8
    assert pairwise - linear > 0.2


def test_gaussian_has_no_labels():
    data = ds.load_builtin("gaussian", n_samples=50)
    assert data.y is None and data.X.shape == (50, 50)


# ---------------------------------------------------------------------------- normalize
@pytest.mark.parametrize("norm,order", [("l1", 1), ("l2", 2)])
def test_normalize_rows_and_zero_rows(norm, order):
    X = np.array([[1.0, -3.0, 0.0], [0.0, 0.0, 0.0], [2.0, 2.0, 1.0]])
    Z = ds.normalize(X, norm)
    np.testing.assert_allclose(np.linalg.norm(Z[[0, 2]], ord=order, axis=1), 1.0)
    np.testing.assert_array_equal(Z[1], 0.0)
    np.testing.assert_allclose(Z[0], X[0] / np.linalg.norm(X[0], ord=order))
    Zs = ds.normalize(sp.csr_matrix(X), norm)
    assert sp.issparse(Zs)
    np.testing.assert_allclose(Zs.toarray(), Z)
    assert l1_radius(ds.normalize(X, "l1")) == pytest.approx(1.0)


def test_normalize_none_and_unknown():
    X = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ds.normalize(X, "none"), X)
    with pytest.raises(ValueError, match="l1"):
        ds.normalize(X, "max")


# ---------------------------------------------------------------------------- CSV / LIBSVM
def test_load_csv_path_and_buffer(tmp_path):
    text = "a,b,label\n1,2,yes\n3,4.5,no\n0,1,yes\n"
    path = tmp_path / "d.csv"
    path.write_text(text)
    data = ds.load_csv(path, target="label")
    np.testing.assert_array_equal(data.X, [[1, 2], [3, 4.5], [0, 1]])
    np.testing.assert_array_equal(data.y, [1, 0, 1])  # sorted class names: no=0, yes=1
    assert data.feature_names == ("a", "b") and data.name == "d.csv"
    assert "no=0, yes=1" in data.description
    buffered = ds.load_csv(io.BytesIO(b"a,b,c\n1,2,3\n4,5,6\n"), target=None)
    assert buffered.y is None
    np.testing.assert_array_equal(buffered.X, [[1, 2, 3], [4, 5, 6]])
    numeric_target = ds.load_csv(io.BytesIO(b"a,y\n1,2\n4,0\n"), target="y")
    np.testing.assert_array_equal(numeric_target.y, [2, 0])


def test_load_csv_errors(tmp_path):
    with pytest.raises(ValueError, match="empty"):
        ds.load_csv(io.BytesIO(b""))
    with pytest.raises(ValueError, match="no data rows"):
        ds.load_csv(io.BytesIO(b"a,b\n"))
    with pytest.raises(ValueError, match="'city'"):
        ds.load_csv(io.BytesIO(b"a,city,y\n1,Paris,0\n2,Rome,1\n"), target="y")
    with pytest.raises(ValueError, match="'zz'.*'a'"):
        ds.load_csv(io.BytesIO(b"a,y\n1,0\n"), target="zz")
    with pytest.raises(ValueError, match="NaN.*'b'"):
        ds.load_csv(io.BytesIO(b"a,b,y\n1,,0\n2,3,1\n"), target="y")
    dropped = ds.load_csv(io.BytesIO(b"a,b,y\n1,,0\n2,3,1\n"), target="y", dropna=True)
    np.testing.assert_array_equal(dropped.X, [[2, 3]])
    np.testing.assert_array_equal(dropped.y, [1])


def test_load_libsvm(tmp_path):
    text = b"1 1:0.5 3:2\n-1 2:1\n1 1:1 2:1 3:1\n"
    data = ds.load_libsvm(io.BytesIO(text))
    assert sp.issparse(data.X) and data.X.shape == (3, 3)
    np.testing.assert_array_equal(data.X.toarray(), [[0.5, 0, 2], [0, 1, 0], [1, 1, 1]])
    np.testing.assert_array_equal(data.y, [1, -1, 1])
    assert data.y.dtype == np.int64
    path = tmp_path / "d.svm"
    path.write_bytes(text)
    np.testing.assert_array_equal(ds.load_libsvm(str(path)).X.toarray(), data.X.toarray())
    with pytest.raises(ValueError, match="LIBSVM"):
        ds.load_libsvm(io.BytesIO(b"1 a:b\n"))


# ---------------------------------------------------------------------------- MovieLens
def expected_names(movielens, user, item):
    uid, age, gender, occ, zip_code = movielens.users[user - 1]
    _, _, date, genres = movielens.items[item - 1]
    decade = {"1995": 2000, "1994": 1990, "1926": 1930, "1942": 1940, "1978": 1980}.get(date[-4:], None)
    age10 = {24: 20, 25: 20, 35: 40, 7: 10, 73: 70}[age]
    names = {f"age={age10}", f"gender={gender}", f"occupation={occ}", f"zip={zip_code[0].upper()}",
             f"year={decade}" if decade else "year=missing"}
    return names | {f"genre={ds.ML_GENRES[g]}" for g in genres}


def test_movielens_fixture(tmp_path, movielens):
    data = ds.load_movielens(movielens.write(tmp_path / "ml"))
    assert data.X.shape == (20, 78) and ds.ML_N_FEATURES == 78 and len(data.feature_names) == 78
    assert data.fields == (tuple(range(49)), tuple(range(49, 78)))
    assert set(data.X.ravel()) <= {0.0, 1.0}
    for row, (u, i, r) in enumerate(movielens.ratings):
        got = {data.feature_names[j] for j in np.flatnonzero(data.X[row])}
        assert got == expected_names(movielens, u, i), (u, i)
        assert data.y[row] == int(r == 5)
    # user features live in field 0, item features in field 1
    assert all(data.feature_names[j].split("=")[0] in ("age", "gender", "occupation", "zip") for j in data.fields[0])
    assert all(data.feature_names[j].split("=")[0] in ("year", "genre") for j in data.fields[1])


def test_movielens_subsample(tmp_path, movielens):
    folder = movielens.write(tmp_path / "ml")
    full = ds.load_movielens(folder)
    first = ds.load_movielens(folder, n_samples=7)
    np.testing.assert_array_equal(first.X, full.X[:7])
    a = ds.load_movielens(folder, n_samples=7, random_state=1)
    b = ds.load_movielens(folder, n_samples=7, random_state=1)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.X.shape == (7, 78)


def test_movielens_missing_files(tmp_path, movielens):
    with pytest.raises(ValueError, match="does not exist"):
        ds.load_movielens(tmp_path / "absent")
    folder = movielens.write(tmp_path / "ml")
    (folder / "u.item").unlink()
    with pytest.raises(ValueError, match="u.item"):
        ds.load_movielens(folder)


def test_movielens_unknown_category(tmp_path, movielens):
    folder = movielens.write(tmp_path / "ml")
    (folder / "u.user").write_text((folder / "u.user").read_text().replace("technician", "astronaut"))
    with pytest.raises(ValueError, match="u.user line 1 has an unknown occupation") as info:
        ds.load_movielens(folder)
    assert "astronaut" not in str(info.value)  # the file's contents are never quoted


def test_movielens_sparse_encoding_is_the_dense_one(tmp_path, movielens):
    folder = movielens.write(tmp_path / "ml")
    dense = ds.load_movielens(folder)
    sparse = ds.load_movielens(folder, sparse=True)
    assert sp.isspmatrix_csr(sparse.X) and sparse.X.has_sorted_indices
    np.testing.assert_array_equal(sparse.X.toarray(), dense.X)
    np.testing.assert_array_equal(sparse.y, dense.y)
    # 5 one-hot fields plus the item's genres: stored entries are exactly the non-zeros
    assert (np.diff(sparse.X.indptr) == (dense.X != 0).sum(axis=1)).all()
    assert (np.diff(sparse.X.indptr) >= 5).all()


def test_interactions_n_is_a_prefix_of_one_fixed_dataset():
    """Changing n keeps the label function: the rows at n = 200 are the first rows at n = 300, with the
    same labels, and the caption names the same f."""
    from rkcore.data.datasets import make_interactions
    from rkcore.spec import load_view_data

    small, large = make_interactions(200, random_state=3), make_interactions(300, random_state=3)
    np.testing.assert_array_equal(small.X, large.X[:200])
    np.testing.assert_array_equal(small.y, large.y[:200])
    assert small.description == large.description.replace("300 samples", "200 samples")
    assert "the same f for every n" in small.description
    other = make_interactions(200, random_state=4)  # the seed, not n, picks f
    assert not np.array_equal(other.y, small.y)
    # as the dashboard loads it (normalized rows, the n field)
    a, b = load_view_data("interactions", "l1", 200), load_view_data("interactions", "l1", 300)
    np.testing.assert_allclose(a.X, b.X[:200])
    np.testing.assert_array_equal(a.y, b.y[:200])



@pytest.mark.parametrize("kwargs, expected", [
    ({"n_interactions": 0}, "n_interactions must be an integer >= 1"),
    ({"noise": float("nan")}, "noise must be a finite number >= 0"),
    ({"noise": float("inf")}, "noise must be a finite number >= 0"),
    ({"noise": -0.1}, "noise must be a finite number >= 0"),
    ({"noise": "0.1"}, "noise must be a finite number >= 0"),
])
def test_interactions_refuses_settings_that_make_every_label_zero(kwargs, expected):
    with pytest.raises(ValueError, match=expected):
        ds.make_interactions(200, **kwargs)
    labels = ds.make_interactions(200, n_interactions=1, noise=0.0).y  # the smallest allowed: both classes
    assert set(np.unique(labels)) == {0, 1}
