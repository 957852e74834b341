"""Timing engine: tidy output, progress, summaries, growth exponents, crossover and the CLI."""
import numpy as np
import pandas as pd
import pytest

from rkcore.studies import timing
from rkcore.registry import MAPS


@pytest.fixture(scope="module")
def small_timings():
    calls = []
    df = timing.time_maps(["rk", "scrk"], [8, 16], [32], [10], repeats=2, warmup=1,
                          progress=lambda f, msg: calls.append((f, msg)))
    return df, calls


def test_tidy_columns_and_one_row_per_observation(small_timings):
    df, _ = small_timings
    assert list(df.columns) == ["map", "d", "D", "n", "repeat", "phase", "seconds"]
    assert len(df) == 2 * 2 * 1 * 1 * 2 * 2  # maps x d x D x n x repeats x phases
    assert set(df["phase"]) == {"fit", "transform"} and set(df["repeat"]) == {0, 1}
    assert not df.duplicated(["map", "d", "D", "n", "repeat", "phase"]).any()
    assert (df["seconds"] > 0).all()


def test_progress_is_monotone_and_ends_at_one(small_timings):
    _, calls = small_timings
    fractions = [f for f, _ in calls]
    assert len(calls) == 2 * 2 * (1 + 2)  # maps x d x (warm-up + repeats)
    assert np.all(np.diff(fractions) > 0) and fractions[-1] == 1.0
    assert all(isinstance(msg, str) and msg for _, msg in calls)


def test_every_registry_map_can_be_timed():
    df = timing.time_maps(list(MAPS), [6], [8], [12], repeats=1, warmup=0)
    assert set(df["map"]) == set(MAPS)


def test_timing_kernel_choice():
    assert timing.timing_kernel("scrk").name == "anova" and timing.timing_kernel("rm", 3).degree == 3
    assert timing.timing_kernel("rff").name == "rbf"
    for key, entry in MAPS.items():
        assert entry.supports(timing.timing_kernel(key))


@pytest.mark.parametrize("kwargs, match", [
    ({"map_keys": ["rk", "fastest"]}, "Unknown map"),
    ({"map_keys": []}, "map_keys is empty"),
    ({"d_values": [0]}, "d_values"),
    ({"repeats": 0}, "repeats"),
    ({"d_values": [1], "kernel_degree": 2}, "exceeds d"),
])
def test_bad_arguments_raise_value_error(kwargs, match):
    args = {"map_keys": ["rk"], "d_values": [4], "D_values": [8], "n_values": [5], **kwargs}
    with pytest.raises(ValueError, match=match):
        timing.time_maps(args.pop("map_keys"), args.pop("d_values"), args.pop("D_values"),
                         args.pop("n_values"), **args)


def _synthetic(slopes: dict, noise=0.0):
    """seconds = C * d^slope per map (times a deterministic +-noise factor across repeats)."""
    rows = []
    for key, slope in slopes.items():
        for d in (64, 128, 256, 512, 1024):
            for r, f in enumerate((1 - noise, 1.0, 1 + noise)):
                for phase in ("fit", "transform"):
                    rows.append((key, d, 4096, 100, r, phase, 2e-4 * d**slope * f))
    return pd.DataFrame(rows, columns=timing.COLUMNS)


def test_growth_exponent_recovers_known_slopes():
    exps = timing.growth_exponent(_synthetic({"rk": 1.0, "scrk": 0.25}, noise=0.3), along="d")
    got = dict(zip(exps["map"], exps["exponent"]))
    assert got == pytest.approx({"rk": 1.0, "scrk": 0.25}, abs=1e-9)
    assert set(exps["phase"]) == {"transform"} and (exps["n_points"] == 5).all()
    with pytest.raises(ValueError, match="along"):
        timing.growth_exponent(_synthetic({"rk": 1.0}), along="m")


def test_summarize_statistics():
    s = timing.summarize(_synthetic({"rk": 1.0}, noise=0.5))
    row = s[(s["d"] == 64) & (s["phase"] == "transform")].iloc[0]
    base = 2e-4 * 64
    assert row["median"] == pytest.approx(base) and row["min"] == pytest.approx(0.5 * base)
    assert row["max"] == pytest.approx(1.5 * base) and row["iqr"] == pytest.approx(0.5 * base)
    assert row["repeats"] == 3 and len(s) == 5 * 2


def test_crossover():
    df = _synthetic({"rk": 1.0, "scrk": 0.0})  # rk = 2e-4 d, scrk = 2e-4: scrk always faster
    assert timing.crossover(df) == 64
    df.loc[(df["map"] == "scrk"), "seconds"] = 2e-4 * 200  # scrk faster from d = 256
    assert timing.crossover(df) == 256
    df.loc[(df["map"] == "scrk"), "seconds"] = 1.0  # never faster
    assert timing.crossover(df) is None


def test_cli_writes_csv_and_prints_table(tmp_path, capsys):
    out = tmp_path / "t.csv"
    code = timing.main(["--maps", "rk,scrk", "--d", "8", "16", "--D", "32", "--n", "10",
                        "--repeats", "1", "--warmup", "0", "--out", str(out), "--quiet"])
    assert code == 0
    df = pd.read_csv(out)
    assert list(df.columns) == timing.COLUMNS and len(df) == 2 * 2 * 2
    text = capsys.readouterr().out
    assert "Median transform time" in text and "Crossover" in text and "RK/SCRK" in text


def test_cli_reports_bad_map(capsys):
    assert timing.main(["--maps", "nope", "--quiet"]) == 2
    assert "Unknown map" in capsys.readouterr().err
