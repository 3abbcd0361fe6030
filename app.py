"""GELU Explorer: page config, navigation over pages/, and the shared sidebar."""

import streamlit as st

from ui.links import share_url

st.set_page_config(page_title="GELU Explorer", page_icon=":material/function:", layout="wide")

PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", url_path="home", default=True),
    st.Page("pages/curves.py", title="Curves", icon=":material/show_chart:", url_path="curves"),
    st.Page("pages/gate.py", title="The gate", icon=":material/door_open:", url_path="gate"),
    st.Page("pages/derivative.py", title="Slopes", icon=":material/trending_up:", url_path="derivative"),
    st.Page("pages/approximations.py", title="Approximations", icon=":material/compare:", url_path="approximations"),
    st.Page("pages/steps.py", title="Step by step", icon=":material/stairs:", url_path="steps"),
    st.Page("pages/ffn.py", title="Feed-forward lab", icon=":material/hub:", url_path="ffn"),
]

page = st.navigation(PAGES)

with st.sidebar:
    st.markdown(
        "**GELU Explorer** shows what the GELU activation does to numbers, "
        "side by side with ReLU: the curve, its gate, its slope, and its place "
        "inside GPT-2's feed-forward block."
    )
    link_slot = st.container()

page.run()

# After the page ran, so its widgets have written their values into the URL.
with link_slot:
    url = share_url(st.context.url, {k: st.query_params.get_all(k) for k in st.query_params})
    st.caption("Link to exactly this view")
    st.code(url, language=None, wrap_lines=True)
