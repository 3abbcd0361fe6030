"""derivative page (being built)."""

import streamlit as st

st.title("derivative")
st.info("This page is being built.")
