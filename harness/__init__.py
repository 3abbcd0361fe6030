"""Drive the real app from outside: a served `streamlit run app.py`, Chromium, Streamlit's websocket protocol.

Shared by the browser tests (`tests/e2e`), the class tests, `benchmarks/` and `scripts/`.  Nothing here is
imported by the app itself.
"""
