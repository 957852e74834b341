"""A test page (never part of the app): a class of one lecturer and its students around one question, set up
the way the class code does it (rkapp.question_box.show_live_question), then a page chart that waits for the
reveal. ``?role=lecturer|student|hands&code=...`` picks the session's part; run with AppTest or ``streamlit run``."""
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from rkapp import chart, page
from rkapp.class_contract import CLASS_KEY, LESSON_QUESTION_KEY
from rkapp.question_box import show_live_question

QUESTION = {"id": "lesson-1/step-3", "text": "Which weights give the lower error at D = 64?",
            "choices": ["Rademacher", "Gaussian", "About the same"]}

page("Predict, then reveal", "A test page for the question box.")
role = st.query_params.get("role", "student")
code = st.query_params.get("code", "CLASS1")
if role == "hands":  # a lecturer without a class
    st.session_state.pop(CLASS_KEY, None)
else:
    st.session_state[CLASS_KEY] = {"code": code, "role": role}
if role in ("lecturer", "hands"):
    st.session_state[LESSON_QUESTION_KEY] = QUESTION
show_live_question(code, QUESTION, role)
d = np.arange(1, 9)
frame = pd.DataFrame({"D": d, "error": 1 / np.sqrt(d)})
fig = go.Figure(go.Scatter(x=frame["D"], y=frame["error"], mode="lines+markers", name="error"))
fig.update_layout(title_text="Error against D", xaxis_title_text="D", yaxis_title_text="error")
chart(fig, frame, "the error against D")
chart(fig, frame, "the error again", key="second")
