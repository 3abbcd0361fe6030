"""Make sure a page always runs inside app.py's frame (navigation, page config, share link).

The one module in ui/ that touches Streamlit.  Streamlit keeps a process-wide
flag, ``PagesManager.uses_pages_directory``, that is True whenever a folder
named ``pages/`` sits beside the main script, and only clears it once some
session has run ``st.navigation``.  Until then, the first visit to a deep link
such as ``/curves?curves_x=2`` on a freshly started server runs
``pages/curves.py`` alone, in the old pages-folder mode: no page config, a
sidebar of raw file names, no share link.  Hosted apps restart (Community
Cloud sleeps idle apps), so a student opening a teacher's link would land there.

Calling ``require_app_frame()`` first in every page clears the flag and reruns
the script; the rerun goes through app.py, which routes to the same page with
the same URL parameters.  In a normal run the flag is already False and this
costs one attribute read.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager


def require_app_frame() -> None:
    """Rerun through app.py if Streamlit ran this page on its own (legacy pages/ mode)."""
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
