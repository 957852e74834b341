"""The server entry: `streamlit run serve.py` (what `rkcore-app` runs; rkapp/serve.py is the same file in a
wheel). Streamlit's public st.App around app.py, whose middleware gives each browser the app's own owner
cookie (rkapp.identity: signed, HttpOnly, SameSite=Strict) and bounds the uploads held per page, per browser
and for the server (rkapp.upload_limits). `streamlit run app.py` still works, without either: uploads are
then private to their session (a reload asks to upload again) and bounded per file only."""
import streamlit as st
from starlette.middleware import Middleware

from rkapp.identity import OwnerCookie
from rkapp.upload_limits import UploadLimits

# streamlit run finds this st.App by reading this file; "app.py" is the entry script next to it
app = st.App("app.py", middleware=[Middleware(OwnerCookie), Middleware(UploadLimits)])
