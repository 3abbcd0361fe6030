"""The browser code beside this folder's modules (``.js`` and ``.css`` files), and the custom components built from
it.

Each file is plain JavaScript or CSS that an editor and ESLint read (package.json, eslint.config.js).  A component's
script is its files joined in order: ``plotly_private.js`` first where a script reads Plotly's private fields, so
that every such field is named in that one file.
"""

from __future__ import annotations

from pathlib import Path

from hosting import published

HERE = Path(__file__).resolve().parent


def text(*names: str) -> str:
    """The files ``names`` of this folder, joined in order (each caller reads them once: at import, or at its
    component's registration)."""
    return "\n".join((HERE / name).read_text(encoding="utf-8") for name in names)


def component(name: str, *, html: str, css: str, js: tuple[str, ...]):
    """A components-v2 component (``st.components.v2``) from this folder's files, registered with Streamlit on its
    first draw: the callable that mounts it.

    Its script travels apart from its elements: each element carries ``loader.js`` (a few hundred bytes), which
    fetches the script, published under the hash of its bytes (``hosting.published``), once for every page and
    mount; each mount publishes it again, so a name the server let go is served again by the next page that draws it.
    The element Streamlit draws for it says which mount it holds and which has started (``data-gelu-mount``,
    ``data-gelu-started``: harness/browser.py waits until they agree)."""
    made = []
    code = text(*js).encode()

    def mount(**kwargs):
        script = published.publish(code, ".js")
        if not made:
            import streamlit as st

            lines = text("loader.js").replace("__GELU_CODE__", script).splitlines()
            loader = "\n".join(line for line in lines if not line.lstrip().startswith("//"))  # sent with each mount
            made.append(st.components.v2.component(name, html=html, css=text(css), js=loader))
        return made[0](**kwargs)

    return mount
