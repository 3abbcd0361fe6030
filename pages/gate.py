"""gate page (being built)."""

import streamlit as st

st.title("gate")
st.info("This page is being built.")
