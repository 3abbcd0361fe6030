"""The code behind each view: a short, self-contained PyTorch/NumPy script that prints the numbers on screen.

Streamlit-free.  One module per page, its ``script(values)`` named in the page's row of ``ui.pages`` (which
also gives ``code_for(page, values)``): ``values`` are the page's controls' current values by key, as in
``ui.controls``; a key left out, or a value the control cannot hold, counts as its default.  The scripts
import only torch, numpy and scipy (never this repository: a student copies one into a notebook), print each
number labelled as the page labels it, to the digits the page shows, and ``tests/test_code_export.py`` runs
each against the page.

What the page computes with is not restated: a script prints gelu_core's own functions (the registry's formulas,
``GATES`` and ``GATE_SLOPES``, the seeded draws, the activation modules) and ui.format's number formats from their
source (``common.source``), so a change there reaches the script; ``tests/test_code_export_source.py`` shows it.
"""

from ui.code_export import approximations, curves, derivative, ffn, gate, home, steps, training  # noqa: F401
