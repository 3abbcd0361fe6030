"""GELU Explorer: page config, navigation over pages/, the shared sidebar, and the server around them.

`streamlit run app.py` imports this file once, as a module, and serves the ``st.App`` it finds at the
bottom (start-up and guards: hosting/); every student's script run then executes it as ``__main__``.
"""

from pathlib import Path

import streamlit as st

import hosting
import hosting.warm
from ui.controls import PAGE_CONTROLS, link_params
from ui.links import share_url

# A local icon: a ":material/...:" one is fetched from a font server, which a school network may block.
ICON = Path(__file__).parent / "assets" / "icon.png"


def main() -> None:
    """One student's script run: the frame around the page they asked for."""
    hosting.warm.warm()  # first of all: no page code runs before the heavy imports are complete
    st.set_page_config(page_title="GELU Explorer", page_icon=str(ICON), layout="wide")

    pages = [
        st.Page("pages/home.py", title="Home", icon=":material/home:", url_path="home", default=True),
        st.Page("pages/curves.py", title="Curves", icon=":material/show_chart:", url_path="curves"),
        st.Page("pages/gate.py", title="The gate", icon=":material/door_open:", url_path="gate"),
        st.Page("pages/derivative.py", title="Slopes", icon=":material/trending_up:", url_path="derivative"),
        st.Page("pages/approximations.py", title="Approximations", icon=":material/compare:",
                url_path="approximations"),
        st.Page("pages/steps.py", title="Step by step", icon=":material/stairs:", url_path="steps"),
        st.Page("pages/ffn.py", title="Feed-forward lab", icon=":material/hub:", url_path="ffn"),
    ]
    page = st.navigation(pages)

    with st.sidebar:
        st.markdown(
            "**GELU Explorer** shows what the GELU activation does to numbers, "
            "side by side with ReLU: the curve, its gate, its slope, and its place "
            "inside GPT-2's feed-forward block."
        )
        link_slot = st.container()

    page.run()

    # After the page ran, so every widget of this view holds its value.
    with link_slot:
        declared = PAGE_CONTROLS.get(page.url_path or "home")
        if declared is not None:
            # the page's declared controls, read from session state: right even where the browser has not yet
            # reported its URL (AppTest, the first run after a move)
            params = link_params(declared, st.session_state)
        else:
            # pages without a declaration: the bound widgets' values as the browser's URL reports them
            params = {k: st.query_params.get_all(k) for k in st.query_params}
        st.markdown("**Share this view**")
        st.code(share_url(st.context.url, params), language=None, wrap_lines=True)
        st.caption("The link holds every setting on this page; opening it brings back exactly what you see.")


if __name__ == "__main__":
    main()
else:
    app = st.App(__file__, lifespan=hosting.lifespan, middleware=hosting.MIDDLEWARE)
