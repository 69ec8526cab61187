"""Variability ratios, histogram bins, JSON files and predictions on hand-made profiles."""

from __future__ import annotations

import json

import pytest

from benchlab.errors import UserError
from benchlab.machines.predict import AppResult, bounds, predict, read_app_results
from benchlab.machines.profile import MethodResult, Profile, load_profile_file
from benchlab.machines.variability import (
    compute_variability,
    histogram,
    load_variability_file,
    parse_kinds,
)
from benchlab.report.machines_figures import (
    fleet_matrix_text,
    variability_text,
    write_variability_figure,
)


def make(name, values, lower=(), kinds=None):
    kinds = kinds or {}
    return Profile(name, {k: MethodResult(k, list(v) if isinstance(v, (list, tuple)) else [v],
                                          higher_is_better=k not in lower, kind=kinds.get(k, "cpu-method"))
                          for k, v in values.items()})


def test_ratios_are_speedups_for_rates_and_times():
    base = make("base", {"a": 100.0, "b": 10.0, "app": 50.0}, lower={"app"}, kinds={"app": "application"})
    target = make("t", {"a": 250.0, "b": 10.0, "app": 25.0, "extra": 1.0}, kinds={"app": "application"})
    v = compute_variability(target, base)
    assert v.ratios == {"a": 2.5, "b": 1.0}
    assert v.only_in_target == ["extra"]
    v = compute_variability(target, base, kinds=parse_kinds("all"))
    assert v.ratios["app"] == 2.0  # a time halved is a 2x speedup
    s = v.summary()
    assert (s["min"], s["max"], s["length"], s["median"]) == (1.0, 2.5, 1.5, 2.0)
    assert s["iqr"] == pytest.approx(s["q3"] - s["q1"])


def test_profile_value_is_the_median_of_repetitions_and_cv_uses_sample_sd():
    m = MethodResult("a", [100.0, 110.0, 90.0, 400.0])
    assert m.value == 105.0
    assert m.cv == pytest.approx(150.222 / 175, abs=1e-4)  # sqrt(67700 / 3) / mean
    assert MethodResult("b", [3.0]).cv != MethodResult("b", [3.0]).cv  # NaN below 2 values


def test_histogram_bins_are_right_closed_tenths():
    h = histogram([2.3, 2.4, 2.35, 2.41, 0.6])
    counts = {(b["low"], b["high"]): b["count"] for b in h}
    assert counts[(2.3, 2.4)] == 2  # 2.35 and 2.4 (right-closed); 2.3 belongs to (2.2, 2.3]
    assert counts[(2.2, 2.3)] == 1
    assert counts[(2.4, 2.5)] == 1
    assert counts[(0.5, 0.6)] == 1
    assert sum(b["count"] for b in h) == 5
    assert h[0]["low"] == 0.5 and h[-1]["high"] == 2.5


def test_no_common_method_and_unknown_kind_are_user_errors():
    with pytest.raises(UserError, match="share no cpu-method"):
        compute_variability(make("t", {"a": 1.0}), make("b", {"c": 1.0}))
    with pytest.raises(UserError, match="unknown method kind"):
        parse_kinds("cpu")
    with pytest.raises(UserError, match="in neither profile"):
        compute_variability(make("t", {"a": 1.0}), make("b", {"a": 1.0}), methods=["zz"])


def test_profile_and_variability_json_round_trip(tmp_path):
    prof = make("m", {"a": [1.0, 2.0, 3.0]})
    prof.save(tmp_path / "p.json")
    back = load_profile_file(tmp_path / "p.json")
    assert back.methods["a"].values == [1.0, 2.0, 3.0] and back.name == "m"
    v = compute_variability(make("t", {"a": 3.0, "b": 1.0}), make("b", {"a": 1.0, "b": 1.0}))
    (tmp_path / "v.json").write_text(json.dumps(v.to_dict()))
    assert load_variability_file(tmp_path / "v.json").range == (1.0, 3.0)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(UserError, match="not valid JSON"):
        load_profile_file(tmp_path / "bad.json")
    with pytest.raises(UserError, match="not a variability document"):
        load_variability_file(tmp_path / "p.json")
    with pytest.raises(UserError, match="not a benchlab profile"):
        load_profile_file(tmp_path / "v.json")


def test_figure_2_is_one_figure_written_as_png_svg_or_pdf(tmp_path):
    """``variability --plot`` draws the report's Figure 2 (one figure for both)."""
    v = compute_variability(make("t", {"a": 3.0, "b": 1.2}), make("b", {"a": 1.0, "b": 1.0}))
    write_variability_figure([v], tmp_path / "f.png")
    write_variability_figure([v, v], tmp_path / "f.svg", labels=["x", "y"])
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    svg = (tmp_path / "f.svg").read_text()
    assert "<svg" in svg[:400] and "Figure 2" in svg
    with pytest.raises(UserError, match=".png, .svg or .pdf"):
        write_variability_figure([v], tmp_path / "f.gif")


def test_variability_and_fleet_text_reports():
    base = make("b", {"a": 1.0, "b": 1.0, "c": 1.0})
    v = compute_variability(make("t", {"a": 3.0, "b": 1.2, "c": 1.25}), base)
    narrow = compute_variability(make("u", {"a": 1.5, "b": 1.2, "c": 1.3}), base)
    text = variability_text(v, [narrow]).splitlines()
    assert text[0] == "t / b: 3 methods (cpu-method)"
    assert text[1].startswith("  range [1.20, 3.00]  length 1.80")
    assert "slowest-gaining b (1.20), fastest-gaining a (3.00)" in text[2]
    assert "    (1.1, 1.2]   1 #" in text and "    (1.2, 1.3]   1 #" in text
    assert text[-1] == "range length u: 0.30 (6.00x narrower than t)"
    from benchlab.machines.fleet import fleet_matrix

    matrix = fleet_matrix([make("m1", {"a": 2.0, "b": 2.0}), make("m2", {"a": 1.0, "b": 1.0})])
    lines = fleet_matrix_text(matrix).splitlines()
    assert lines[2].split()[:2] == ["m1", "-"] and "[2.00, 2.00]" in lines[2]
    assert lines[-1].startswith("slowest common base: m2")


def test_prediction_bounds_and_flags(tmp_path):
    assert bounds(10.0, (0.5, 2.0)) == (5.0, 20.0)
    assert bounds(10.0, (0.5, 2.0), lower_is_better=True) == (5.0, 20.0)
    assert bounds(12.0, (1.5, 3.0), lower_is_better=True) == (4.0, 8.0)
    v = compute_variability(make("t", {"a": 3.0, "b": 1.5}), make("b", {"a": 1.0, "b": 1.0}))
    preds = predict(v, [AppResult("fast", 10.0, 25.0), AppResult("slowtime", 12.0, 2.0, True),
                        AppResult("nocheck", 1.0)])
    assert [p.inside for p in preds] == [True, False, None]
    assert preds[1].speedup == 6.0
    (tmp_path / "apps.csv").write_text("name,base,target,lower_is_better\ncrafty,52.85,20,true\nx,1,,\n")
    apps = read_app_results(tmp_path / "apps.csv")
    assert apps[0] == AppResult("crafty", 52.85, 20.0, True) and apps[1].target is None
    (tmp_path / "apps.json").write_text('[{"name": "s", "base": 2, "target": 4}]')
    assert read_app_results(tmp_path / "apps.json") == [AppResult("s", 2.0, 4.0, False)]
    (tmp_path / "bad.csv").write_text("name,base\nx,abc\n")
    with pytest.raises(UserError, match="not a number"):
        read_app_results(tmp_path / "bad.csv")


def test_per_cpu_second_uses_the_cpu_time_rates():
    base = Profile("b", {"a": MethodResult("a", [100.0], cpu_values=[200.0])})
    target = Profile("t", {"a": MethodResult("a", [150.0], cpu_values=[600.0])})
    assert compute_variability(target, base).ratios["a"] == 1.5
    assert compute_variability(target, base, per_cpu_second=True).ratios["a"] == 3.0
    with pytest.raises(UserError, match="CPU-time rates"):
        compute_variability(make("t", {"a": 1.0}), make("b", {"a": 1.0}), per_cpu_second=True)
