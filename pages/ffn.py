"""ffn page (being built)."""

import streamlit as st

st.title("ffn")
st.info("This page is being built.")
