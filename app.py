"""Random Kernel Explorer: landing page (minimal until the dashboard frame lands)."""
import streamlit as st

st.set_page_config(page_title="Random Kernel Explorer", layout="wide")
st.title("Random Kernel Explorer")
st.write("Random feature maps for the itemset kernel (Atarashi, Maji & Oyama, AAAI-19).")
