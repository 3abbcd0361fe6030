"""What the pages show, pure (no Streamlit, no server): the table of pages, every control, the lesson's questions and
words, the figures and tables, the live layer's tables, number formats and the code for each view."""
