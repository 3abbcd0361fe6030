"""The code behind each view: a short, self-contained PyTorch/NumPy script that prints the numbers on screen.

Streamlit-free.  One module per page, its ``script(values)`` named in the page's row of ``ui.pages`` (which
also gives ``code_for(page, values)``): ``values`` are the page's controls' current values by key, as in
``ui.controls``; a key left out, or a value the control cannot hold, counts as its default.  The scripts
import only torch, numpy and scipy (never this repository: a student copies one into a notebook), print each
number labelled as the page labels it, to the digits the page shows, and ``tests/test_code_export.py`` runs
each against the page.

What the page computes with is not restated: a script prints the gelu_core functions the page calls (the
registry's formulas, ``GATES`` and ``GATE_SLOPES`` and GELU's product rule, the tanh formula's operations, the seeded
draws, the activation modules, the lab's statistics and backward step, the race's points, network and dead units)
and ui.format's number formats from their source (``common.source``), looked up when the script is built, so a
change there reaches the script; ``tests/test_code_export_source.py`` shows it for each.  A template holds the
wiring between them and the print lines; each module's docstring says what else it writes and why.
"""

from ui.code_export import approximations, curves, derivative, ffn, gate, home, steps, training  # noqa: F401
