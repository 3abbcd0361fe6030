"""Streamlit-free figure builders and shared page furniture (palette, labels, links)."""
