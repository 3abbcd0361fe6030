"""What tests, benchmarks and scripts share, never imported by the app itself.

- ``browser``: drive the real app from outside: a served `streamlit run app.py`, Chromium, Streamlit's
  websocket protocol (the browser tests in `tests/e2e`, the class tests, `benchmarks/`, `scripts/`).
- ``tensor_corpus``: tensor files made in memory, good and hostile, format by format.
- ``hostile_files``: named hostile uploads, each with the uploader it targets and the refusal it must get.
- ``memory``: how much a call grew this process's peak resident memory.
"""
