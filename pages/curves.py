"""curves page (being built)."""

import streamlit as st

st.title("curves")
st.info("This page is being built.")
