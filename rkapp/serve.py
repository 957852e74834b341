"""The server entry: `streamlit run serve.py` (what `rkcore-app` runs; rkapp/serve.py is the same file in a
wheel). Streamlit's public st.App around app.py, whose middleware gives each browser the app's own owner
cookie (rkapp.identity: signed, HttpOnly, SameSite=Strict). `streamlit run app.py` still works, without
that cookie: uploads are then private to their session (a reload asks to upload again)."""
import streamlit as st
from starlette.middleware import Middleware

from rkapp.identity import OwnerCookie

# streamlit run finds this st.App by reading this file; "app.py" is the entry script next to it
app = st.App("app.py", middleware=[Middleware(OwnerCookie)])
