"""Figure builders: pure functions from tidy DataFrames / arrays to plotly figures.

One module per dashboard topic. No widgets, no streamlit: each builder can be
tested by inspecting the figure JSON.
"""
try:
    import plotly  # noqa: F401  (the one optional dependency of the figures)
except ModuleNotFoundError as exc:  # the library itself works without plotly
    if exc.name != "plotly":
        raise
    raise ModuleNotFoundError("rkcore.figures draws with plotly, which is not installed: "
                              "pip install 'rkcore[figures]'", name="plotly") from exc
