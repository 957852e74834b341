"""Figure builders: pure functions from tidy DataFrames / arrays to plotly figures.

One module per dashboard topic. No widgets, no streamlit: each builder can be
tested by inspecting the figure JSON.
"""
