"""approximations page (being built)."""

import streamlit as st

st.title("approximations")
st.info("This page is being built.")
