"""Random Kernel Explorer: `streamlit run app.py`. The pages are in pages/, the frame in rkapp/."""
from rkapp.navigation import run

run()
