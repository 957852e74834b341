"""Bounded input (issue 12) and bounded itemset counting (issue 11, item 8).

Every case reproduces a hostile or careless input from the issues: each must give a clear
ValueError (or the right answer) with small memory. Speed is not asserted with clocks: the
tests bound what is computed instead (tracemalloc peaks, the size of the big integers built).
"""
from __future__ import annotations

import io
import math
import tracemalloc
from fractions import Fraction
from math import comb

import numpy as np
import pytest

from rkcore.data import files as data_files
from rkcore.data import datasets as ds
from rkcore.kernels import itemsets as its
from rkcore.kernels.itemsets import ItemsetFamily
from rkcore.studies.family_views import family_counts
from rkcore.data.textformats import MAX_INDEX, parse_fields, parse_itemsets

SMALL = 32 * 2**20  # bytes: far below what the refused inputs would allocate


def traced(fn):
    tracemalloc.start()
    try:
        try:
            out = fn()
        except Exception as exc:  # noqa: BLE001 - returned to the test
            out = exc
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def upload(data: bytes, name: str) -> io.BytesIO:
    b = io.BytesIO(data)
    b.name = name
    return b


# ============================================================================ LIBSVM
@pytest.mark.parametrize("index", [100_000_000, 1_000_000_000, 10**40])
def test_libsvm_huge_feature_index_is_refused_before_allocating(index):
    f = upload(f"1 1:1 {index}:2\n".encode(), "bomb.svm")
    out, peak = traced(lambda: ds.load_libsvm(f))
    assert isinstance(out, ValueError), out
    msg = str(out)
    assert (f"{index:,}" if index < 10**30 else "(41 digits)") in msg and f"at most {ds.MAX_FEATURES:,} features" in msg
    assert peak < SMALL


def test_libsvm_index_scan_finds_the_largest():
    scan = data_files._libsvm_largest_index  # indices with more digits than the limit, from the bytes
    assert scan(b"1 1:1 100001:2\n0 0009999:1 2:0.5\n", 10_000) == (100_001, "100,001")
    assert scan(b"1 1:1 10000:2 qid:123456\n0 00000000001:1\n", 10_000) is None
    assert scan(b"1 5:1 123:3\n", 10) == (123, "123")
    assert scan(b"1 " + b"9" * 5000 + b":1\n", 10)[1].endswith("(5,000 digits)")
    # as many digits as the limit: refused from the parsed matrix's width (a CSR width costs nothing)
    with pytest.raises(ValueError, match="feature index 10,001; at most 10,000 features"):
        ds.load_libsvm(upload(b"1 1:1 10001:2\n0 2:0.5 0009999:1\n", "wide.svm"))


def test_libsvm_limit_is_configurable_and_comments_ignored():
    f = upload(b"1 1:1 20:2 # 99999999:1 in a comment\n0 2:1\n", "ok.svm")
    data = ds.load_libsvm(f)
    assert data.X.shape == (2, 20) and len(data.feature_names) == 20
    with pytest.raises(ValueError, match="index 20; at most 10 features"):
        ds.load_libsvm(upload(b"1 1:1 20:2\n", "x.svm"), max_features=10)


@pytest.mark.parametrize("line", [b"1 1:nan 2:1\n", b"1 1:inf\n", b"1 2:-inf\n", b"nan 1:1\n"])
def test_libsvm_nan_inf_rejected_like_csv(line):
    with pytest.raises(ValueError, match=r"NaN or infinite values on 1 line\(s\) \(line 2\)"):
        ds.load_libsvm(upload(b"0 1:1\n" + line, "bad.svm"))


def test_libsvm_utf16_file():
    data = ds.load_libsvm(upload("1 1:0.5 3:2\n0 2:1\n".encode("utf-16"), "u16.svm"))
    assert data.X.toarray().tolist() == [[0.5, 0.0, 2.0], [0.0, 1.0, 0.0]]


# ============================================================================ CSV
def test_csv_with_100000_columns_refused_from_the_header():
    cols = 100_000
    text = ",".join(f"c{j}" for j in range(cols)) + "\n" + "\n".join(",".join(["1"] * cols) for _ in range(20)) + "\n"
    f = upload(text.encode(), "wide.csv")
    out, peak = traced(lambda: ds.load_csv(f))
    assert isinstance(out, ValueError), out
    assert "100,000 columns" in str(out) and f"at most {ds.MAX_FEATURES:,} feature columns" in str(out)
    assert peak < 20 * len(text)  # the text and its decoded copy, never a parsed frame
    with pytest.raises(ValueError, match="100,000 columns"):
        ds.csv_columns(upload(text.encode(), "wide.csv"))


def test_csv_cell_limit_from_line_count():
    text = "a,b\n" + "1,2\n" * 1000
    with pytest.raises(ValueError, match=r"about 1,000 rows x 2 columns = 2,000 cells; at most 1,000 cells"):
        ds.load_csv(upload(text.encode(), "long.csv"), max_cells=1000)
    assert ds.load_csv(upload(text.encode(), "long.csv")).X.shape == (1000, 2)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-8-sig", "latin-1", "cp1252"])
def test_csv_encodings(encoding):
    text = "größe;b;label\n1;2;0\n3;4;1\n" if encoding in ("latin-1", "cp1252") else "größe,b,label\n1,2,0\n3,4,1\n"
    raw = text.encode(encoding)
    if encoding == "utf-16-le":
        raw = b"\xff\xfe" + raw  # BOM
    data = ds.load_csv(upload(raw, "enc.csv"), target="label")
    assert data.feature_names == ("größe", "b")
    assert data.X.tolist() == [[1.0, 2.0], [3.0, 4.0]] and data.y.tolist() == [0, 1]
    assert ds.csv_columns(upload(raw, "enc.csv")) == ["größe", "b", "label"]


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_csv_delimiters(sep):
    text = sep.join(["a", "b", "label"]) + "\n" + sep.join(["1.5", "2", "0"]) + "\n" + sep.join(["3", "4", "1"]) + "\n"
    data = ds.load_csv(upload(text.encode(), "d.csv"), target="label")
    assert data.X.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    assert "separated" in data.description


def test_csv_comma_decimal_parsed_correctly():
    data = ds.load_csv(upload(b"a;b;label\n1,5;2,25;0\n-3,0;4,75;1\n", "dec.csv"), target="label")
    assert data.X.tolist() == [[1.5, 2.25], [-3.0, 4.75]]
    assert "decimal comma" in data.description
    # quoted decimal commas in a comma-separated file
    data = ds.load_csv(upload(b'a,b\n"1,5","2,5"\n"3,25","4"\n', "q.csv"))
    assert data.X.tolist() == [[1.5, 2.5], [3.25, 4.0]]


def test_csv_mixed_decimal_marks_refused_with_example():
    with pytest.raises(ValueError, match=r"'a' \(it mixes decimal commas like '1,5' and decimal points like '2\.5'"):
        ds.load_csv(upload(b"a;b\n1,5;1\n2.5;2\n3,5;3\n", "mixed.csv"))


def test_csv_continuous_target_is_explained_not_called_classes():
    rng = np.random.RandomState(0)
    rows = "\n".join(f"{a:.3f},{b:.3f},{t:.4f}" for a, b, t in rng.rand(40, 3))
    with pytest.raises(ValueError, match=r"'target' looks continuous \(\d+ distinct values in 40 rows.*Choose no target"):
        ds.load_csv(upload(("a,b,target\n" + rows).encode(), "reg.csv"), target="target")
    # integer ids (one per row) are not classes either
    rows = "\n".join(f"{k},{k % 3},{1000 + k}" for k in range(40))
    with pytest.raises(ValueError, match="looks continuous"):
        ds.load_csv(upload(("a,b,id\n" + rows).encode(), "ids.csv"), target="id")
    # real classes still work
    rows = "\n".join(f"{k},{k % 3},{k % 2}" for k in range(40))
    assert set(ds.load_csv(upload(("a,b,y\n" + rows).encode(), "c.csv"), target="y").y) == {0, 1}


def test_csv_messages_speak_to_app_users():
    with pytest.raises(ValueError) as info:
        ds.load_csv(upload(b"a,b\n1,\n3,4\n", "nan.csv"))
    assert "dropna" not in str(info.value) and "'b' (1 row(s))" in str(info.value)
    assert "in your file" in str(info.value)
    # the library option still works
    assert ds.load_csv(upload(b"a,b\n1,\n3,4\n", "nan.csv"), dropna=True).X.tolist() == [[3.0, 4.0]]


def test_csv_column_named_none_is_an_ordinary_column():
    """A column literally called "(none)" is read like any other (the app's no-target choice is None)."""
    data = ds.load_csv(upload(b"(none),b\n1,0\n2,1\n", "n.csv"), target="(none)")
    assert data.feature_names == ("b",) and data.y.tolist() == [1, 2]
    data = ds.load_csv(upload(b"(none),b\n1,0\n2,1\n", "n.csv"), target=None)
    assert data.feature_names == ("(none)", "b") and data.y is None


def test_repeated_and_empty_column_names():
    with pytest.raises(ValueError, match="repeats the column name"):
        ds.load_csv(upload(b"a,b,a\n1,2,3\n", "dup.csv"))
    assert ds.csv_columns(upload(b"a,,c\n1,2,3\n", "e.csv")) == ["a", "Unnamed: 1", "c"]
    assert ds.load_csv(upload(b"a,,c\n1,2,3\n", "e.csv")).feature_names == ("a", "Unnamed: 1", "c")


def test_binary_file_refused():
    with pytest.raises(ValueError, match="binary file"):
        ds.load_csv(upload(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "img.csv"))


# ============================================================================ MovieLens path
@pytest.mark.parametrize("path", ["a" * 10_000, "/tmp/" + "b" * 300, "bad\x00path"])
def test_movielens_path_length_and_bad_names(path):
    with pytest.raises(ValueError, match="MovieLens folder"):
        ds.load_movielens(path)


# ============================================================================ typed itemsets and fields
def test_parse_fields_huge_range_is_refused_arithmetically():
    out, peak = traced(lambda: parse_fields("0-30000000 | 30000001"))
    assert isinstance(out, ValueError) and "30000000" in str(out) and f"{MAX_INDEX:,}" in str(out), out
    assert peak < 2**20
    with pytest.raises(ValueError, match="indices go from 0 to 9"):
        parse_fields("0-4 | 5-10", d=10)
    # overlapping ranges that list more indices than features
    out, peak = traced(lambda: parse_fields(" | ".join(["0-99999"] * 50)))
    assert isinstance(out, ValueError) and "must not overlap" in str(out), out
    assert peak < 4 * 2**20  # (one field of 100,000 is fine to build; 50 are never built)


def test_parse_fields_still_reads_normal_text():
    assert parse_fields("0-2 | 3,5 7") == ((0, 1, 2), (3, 5, 7))
    assert parse_fields("0 - 1; 2", d=3) == ((0, 1), (2,))
    with pytest.raises(ValueError, match="empty"):
        parse_fields("4-2 | 5")
    with pytest.raises(ValueError, match="out of range"):
        parse_fields("0-" + "9" * 5000)  # int() of 5000 digits is never attempted


def test_parse_itemsets_bounds():
    assert parse_itemsets("0,1; 2,3; {}") == ((0, 1), (2, 3), ())
    with pytest.raises(ValueError, match="at most 10,000 are allowed"):
        parse_itemsets("; ".join(str(i % 100) for i in range(10_001)))
    with pytest.raises(ValueError, match="characters long"):
        parse_itemsets("1," * 60_000)
    with pytest.raises(ValueError, match="indices go from 0 to 4"):
        parse_itemsets("0,1; 5", d=5)
    with pytest.raises(ValueError, match="out of range"):
        parse_itemsets("1" * 5000)


def test_cross_field_degree_message_speaks_of_fields():
    with pytest.raises(ValueError) as info:
        ItemsetFamily.cross_fields([(0, 1), (2, 3)], 20)
    msg = str(info.value)
    assert "2, the number of fields" in msg and "(the number of features)" not in msg


# ============================================================================ itemset counts (issue 11, item 8)
@pytest.fixture
def comb_bits(monkeypatch):
    """Record the bit length of every binomial rkcore.kernels.itemsets computes."""
    seen: list[int] = []

    def counting_comb(n, k):
        value = comb(n, k)
        seen.append(value.bit_length())
        return value

    monkeypatch.setattr(its, "comb", counting_comb)
    return seen


def test_huge_families_do_no_big_integer_work(comb_bits):
    fam = ItemsetFamily.all_subsets(20000)
    text = fam.describe()
    assert "2^20000" in text and "10^6,020" in text
    assert ItemsetFamily.all_subsets(200000).n_itemsets == 1 << 200000
    assert ItemsetFamily.all_subsets(200000).log2_n_itemsets == 200000
    up = ItemsetFamily.up_to(10**6, 10**5)
    assert up.n_itemsets == math.inf
    assert "10^141,178" in up.describe()
    assert ItemsetFamily.anova(10**6, 10**5).n_itemsets == math.inf
    assert max(comb_bits, default=0) <= its.EXACT_COUNT_BITS  # never a binomial beyond the bound


def test_log2_counts_match_exact_counts():
    for fam in (ItemsetFamily.anova(300, 150), ItemsetFamily.up_to(200, 60), ItemsetFamily.all_subsets(90),
                ItemsetFamily.cross_fields([range(0, 7), range(7, 20), range(20, 23)], 2), ItemsetFamily.dot(17)):
        exact = fam.counts_by_size()
        for k, l2 in fam.log2_counts_by_size().items():
            assert l2 == pytest.approx(math.log2(exact[k]), abs=1e-9)
        assert fam.log2_n_itemsets == pytest.approx(math.log2(fam.n_itemsets), abs=1e-9)
    assert ItemsetFamily.up_to(20, 3).n_itemsets == 1 + 20 + 190 + 1140
    assert ItemsetFamily.anova(4000, 2000).n_itemsets == comb(4000, 2000)  # ~3990 bits: still exact


def test_cross_field_counts_exact_and_log_space():
    fields = [range(10 * f, 10 * f + 10) for f in range(500)]
    fam = ItemsetFamily.cross_fields(fields, 250)
    # e_250 of 500 tens = C(500, 250) 10^250: exact when small enough, else inf with the right logarithm
    expected = Fraction(comb(500, 250)) * 10**250
    assert fam.log2_n_itemsets == pytest.approx(math.log2(comb(500, 250)) + 250 * math.log2(10), rel=1e-12)
    assert fam.n_itemsets in (int(expected), math.inf)
    assert "10^" in fam.describe()


def test_family_counts_no_overflow_beyond_d_1030():
    for d in (1031, 2000, 20000):
        df = family_counts(ItemsetFamily.all_subsets(d))
        assert len(df) == d + 1
        assert np.isfinite(df["log10_count"]).all()
        mid = d // 2
        assert df["log10_count"][mid] == pytest.approx(math.log10(comb(d, mid)) if d <= 2000 else
                                                       math.lgamma(d + 1) / math.log(10) - 2 * math.lgamma(mid + 1) / math.log(10),
                                                       rel=1e-9)
        assert df["count_text"][1] == f"{d:,}"
    df = family_counts(ItemsetFamily.all_subsets(70))
    assert df["count_text"][35] == f"{comb(70, 35):,}"  # exact where the integer is cheap


def test_family_counts_figure_handles_overflowing_counts():
    from rkcore.figures.itemsets import family_counts_figure

    fig = family_counts_figure(family_counts(ItemsetFamily.all_subsets(1500)))
    assert "log10" in fig.layout.yaxis.title.text
    assert np.isfinite(np.asarray(fig.data[0].y, dtype=float)).all()


def test_len_of_astronomical_family_is_a_clear_error():
    with pytest.raises(OverflowError, match="too many for len"):
        len(ItemsetFamily.all_subsets(100))
    assert len(ItemsetFamily.anova(10, 2)) == 45


def test_enumerate_refusal_message_is_cheap():
    with pytest.raises(ValueError, match=r"≈ .* × 10\^"):
        ItemsetFamily.all_subsets(5000).enumerate()


# ============================================================================ through the app
UPLOAD_KEY = "_rk_upload"  # pages.common.UPLOAD_STATE_KEY


@pytest.mark.parametrize("name, raw", [
    ("u16.csv", "a;b;label\n0,5;1;0\n1,5;0;1\n2,0;1;0\n0,25;2;1\n".encode("utf-16")),
    ("latin.csv", "größe\tb\tlabel\n0.5\t1\t0\n1.5\t0\t1\n2\t1\t0\n0.25\t2\t1\n".encode("latin-1")),
])
def test_app_reads_utf16_semicolon_and_latin1_tab_uploads(run_page, name, raw):
    from tests.conftest import error_texts, plotly_figures

    at = run_page("pages/1_Gram_matrices.py", ds="upload", target="label", session={UPLOAD_KEY: (name, raw)})
    assert not at.exception and not error_texts(at), error_texts(at)
    assert "label" in at.sidebar.selectbox(key="target").options
    assert len(plotly_figures(at)) == 1  # the Gram page draws its default view (one figure)


@pytest.mark.parametrize("name, raw, expected", [
    ("bomb.svm", b"1 1:1 100000000:2\n", "at most 10,000 features"),
    ("wide.csv", (",".join(f"c{j}" for j in range(20_000)) + "\n" + ",".join(["1"] * 20_000) + "\n").encode(),
     "20,000 columns"),
])
def test_app_refuses_bombs_in_place(run_page, name, raw, expected):
    from tests.conftest import error_texts

    at = run_page("pages/1_Gram_matrices.py", ds="upload", session={UPLOAD_KEY: (name, raw)})
    assert not at.exception
    assert any(expected in e for e in error_texts(at)), error_texts(at)
