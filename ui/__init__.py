"""What the pages show: Streamlit-free figure builders, controls, formats, the lesson's words and the code
export, plus one module that draws with Streamlit, ``ui.frame`` (the furniture every page shares)."""
