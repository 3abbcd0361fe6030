"""GELU Explorer: page config, navigation over pages/ (ui.pages), the shared sidebar, and the server around them.

`streamlit run app.py` imports this file once, as a module, and serves the ``st.App`` it finds at the
bottom (start-up and guards: hosting/); every student's script run then executes it as ``__main__``.
"""

from pathlib import Path

import streamlit as st

import hosting


def N_(message: str) -> str:  # noqa: N802
    """A message marked for extraction (as ui.i18n.N_, without importing gelu_core before the server listens)."""
    return message


SOURCES = N_("""
- **GELU**: Dan Hendrycks and Kevin Gimpel, *Gaussian Error Linear Units (GELUs)*, arXiv:1606.08415 (2016):
  x·Φ(x), and the tanh and sigmoid (1.702) approximations.
- **The block and the tanh form in code**: Sebastian Raschka, *Build a Large Language Model (From Scratch)*,
  Manning (2024), chapter 4.
- **GPT-2**: Alec Radford, Jeffrey Wu, Rewon Child, David Luan, Dario Amodei and Ilya Sutskever, *Language
  Models are Unsupervised Multitask Learners*, OpenAI (2019).
""")

# A local icon: a ":material/...:" one is fetched from a font server, which a school network may block.
ICON = Path(__file__).parent / "assets" / "icon.png"


def main() -> None:
    """One student's script run: the frame around the page they asked for."""
    # here, not at the top: the server imports this file at start-up, before it listens
    from draw import class_poll, frame, i18n, lesson
    from ui.i18n import _
    from ui.pages import PAGES

    bad_language = i18n.choose()  # first: every word below is in the reader's language
    st.set_page_config(page_title="GELU Explorer", page_icon=str(ICON), layout="wide")

    lesson_section, aside_section = _("The lesson"), _("Aside")
    sections: dict[str, list[st.Page]] = {lesson_section: [], aside_section: []}
    for row in PAGES.values():
        sections[aside_section if row.aside else lesson_section].append(
            st.Page(row.file, title=_(row.title), icon=row.icon, url_path=row.url_path, default=row.default))
    page = st.navigation(sections)
    pages = {p.url_path or "home": p for p in sections[lesson_section] + sections[aside_section]}
    name = page.url_path or "home"
    controls = PAGES[name].controls

    if frame.presenting():
        frame.presenter_style(controls)
    lesson.note_arrival(name)  # a shared view is shown whole: read before the link check drops an unusable value
    class_poll.check_link()  # before the sidebar: a student in a class sees no teacher's tool
    with st.sidebar:
        st.markdown(_(
            "**GELU Explorer** shows what the GELU activation does to numbers, "
            "side by side with ReLU: the curve, its gate, its slope, and its place "
            "inside GPT-2's feed-forward block."
        ))
        i18n.selector()
        hide_key = f"share_hide_{name}"
        role = class_poll.role()
        frame.share_link(st.session_state.get(hide_key, []), role)
        if controls is not None and role != "student":
            bound = [c for c in controls if c.bound]
            labels = {c.key: _(c.label) for c in bound}
            st.multiselect(_("Hide in the presenter view"), list(labels), format_func=labels.__getitem__,
                           key=hide_key, placeholder=_("Controls to hide"),
                           help=_("The presenter link hides the sidebar and these controls, and enlarges the type."))
        class_poll.sidebar()
        with st.expander(_("Sources"), icon=":material/menu_book:"):
            st.markdown(_(SOURCES))
    if bad_language:
        i18n.note_bad(bad_language)
    frame.check_link(controls)
    lesson.lesson_top(name, tuple(pages))
    class_poll.console(name, PAGES[name].question, lesson.lesson_form())  # the teacher's, above the page
    lesson.page_body(page, name)  # the page and, once answered, the code for its view: its own widgets rerun it alone
    lesson.lesson_footer(name, pages)


if __name__ == "__main__":
    with hosting.warm.script_run():  # first of all: no page code runs beside a half-imported numpy, pandas or Plotly
        main()
else:
    app = st.App(__file__, lifespan=hosting.lifespan, middleware=hosting.MIDDLEWARE)
