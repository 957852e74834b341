"""The dashboard's pages: scripts Streamlit runs through app.py's ``st.navigation``, never imported.

A package only so that the import contracts (pyproject.toml, ``pages-thin``) can read them: a page imports
streamlit, :mod:`rkapp` and :mod:`rkcore.views`, and nothing else of rkcore.
"""
