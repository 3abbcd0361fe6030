"""The Streamlit furniture every page shares: the frame around a page (its guard, link check, share box, presenter
view, lesson, code for the view, charts), the class poll's widgets, and the live components that move the page
under a finger (their JavaScript and CSS in files beside them).

Draws with Streamlit; computes nothing: numbers come from gelu_core, words and figures from ui/, and the server's
runs and stores from hosting/.
"""
