"""The guided lesson's predict-then-reveal questions, one per page (the order and the goals: ui.pages).

Pure: no Streamlit, no server.  Each question's answer is computed by gelu_core when it is revealed, never
written down: ``Question.reveal()`` returns the right choice and a sentence with the numbers.  An answer is
computed once per process and shared (``ANSWERS``): the choice stays on the page, so every later rerun reveals it
again, and the race's and the lab's answers are whole runs (the race's is the page's default race, trained as
PyTorch alone trains it, the same numbers the race lane gives the page).  The frame draws the goal above each page
and the question, Previous and Next below it (``draw.frame.lesson_top`` / ``lesson_footer``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import gelu_core
from gelu_core.shared import SharedResults
from ui.format import fixed, percent, sci


@dataclass(frozen=True)
class Question:
    """A question with a few choices; ``truth()`` computes (right choice, the sentence that shows why)."""

    text: str
    choices: tuple[str, ...]
    truth: Callable[[], tuple[str, str]]

    def reveal(self, chosen: str) -> tuple[bool, str]:
        """(whether ``chosen`` is right, the computed explanation)."""
        right, why = ANSWERS.get(self.text, self.truth, what="the answer to this question")
        return chosen == right, why


def _home():
    y = gelu_core.gelu(-1.0, approximate="tanh")
    right = "a small negative number" if -0.5 < y < 0 else "0, like ReLU" if y == 0 else "something else"
    return right, f"GELU(-1) = {fixed(y)} in the tanh form: small and negative. Negatives are shrunk, not erased."


def _gate():
    g = gelu_core.gelu_gate(0.0)
    right = {0.0: "closed (0%)", 0.5: "half open (50%)", 1.0: "fully open (100%)"}.get(g, "something else")
    return right, (f"Φ(0) = {percent(g)}: a standard-normal sample is as likely to fall below 0 as above it, "
                   f"so GELU(0) = 0 · {fixed(g, 1)} = 0.")


def _curves():
    y = gelu_core.gelu(3.0, approximate="tanh")
    right = "almost exactly 3" if abs(y - 3.0) < 0.01 else "well below 3" if y < 3 else "above 3"
    return right, (f"GELU(3) = {fixed(y)}: the gate is {percent(gelu_core.gelu_gate(3.0, approximate='tanh'))} "
                   "open, so a large positive number passes almost unchanged, as with ReLU.")


def _derivative():
    s = gelu_core.gelu_grad(-2.0)
    right = "exactly 0, like ReLU" if s == 0 else "small, but not 0" if abs(s) < 0.5 else "larger than 1"
    return right, (f"GELU'(-2) = {fixed(s)}: small, but a gradient still flows back through the unit, so its "
                   "weights keep learning. ReLU'(-2) = 0: nothing flows back.")


def _steps():
    t, e = gelu_core.gelu(1.0, approximate="tanh"), gelu_core.gelu(1.0)
    if f"{t:.6f}" == f"{e:.6f}":
        right = "they agree to 6 decimals"
    else:
        right = "the exact form" if e > t else "the tanh form"
    return right, (f"At x = 1 the tanh form gives {fixed(t, 6)} and the exact form {fixed(e, 6)}: "
                   f"they differ by {sci(e - t)}.")


def _ffn():
    from gelu_core.lab import as_tokens, demo_input, run_lab  # torch: only when the answer is asked for

    block = gelu_core.FeedForward(768, seed=0)
    r = run_lab(block, as_tokens(demo_input(768, 0), 768), "gelu_tanh", "relu")
    zeroed = r.b.zeroed / r.hidden_numel
    right = "about half" if 0.35 < zeroed < 0.65 else "about a tenth" if zeroed < 0.35 else "nearly all"
    return right, (f"On the seeded demo (2 x 3 tokens, d_model 768) ReLU set {percent(zeroed)} of the "
                   f"{r.hidden_numel:,} hidden values to exactly 0: every negative one.")


def _training():
    from gelu_core.training import RaceConfig, train, verdict
    from ui.training import verdict_text

    race = train(RaceConfig())
    result = verdict(race)
    right = {"relu": "ReLU", None: "they do about as well"}.get(result.leader, "GELU")
    return right, f"On the default race (spiral, seed 0): {verdict_text(race, result)}"


def _approximations():
    from gelu_core.analysis import worst_error

    _, worst = worst_error("tanh")
    right = ("more than 0.01" if worst > 0.01 else "between 0.0001 and 0.01" if worst > 1e-4
             else "less than 0.0001")
    return right, f"The tanh form is at most {sci(worst)} away from exact GELU, anywhere on the number line."


ANSWERS = SharedResults.within(entry_bytes=16 * 1024, share=0.005)  # question text -> (right choice, why)

# one question per page (ui.pages names each page's), beside the function that answers it
HOME_QUESTION = Question(
    "ReLU turns -1 into 0. What does GELU (tanh form, as in GPT-2) turn -1 into?",
    ("0, like ReLU", "a small negative number", "-1, unchanged"), _home)
GATE_QUESTION = Question(
    "How open is GELU's gate at x = 0?", ("closed (0%)", "half open (50%)", "fully open (100%)"), _gate)
CURVES_QUESTION = Question("What is GELU(3)?", ("well below 3", "almost exactly 3", "above 3"), _curves)
DERIVATIVE_QUESTION = Question(
    "At x = -2 ReLU's slope is exactly 0. What is GELU's slope there?",
    ("exactly 0, like ReLU", "small, but not 0", "larger than 1"), _derivative)
STEPS_QUESTION = Question(
    "At x = 1, which gives the larger GELU?", ("the tanh form", "the exact form", "they agree to 6 decimals"), _steps)
FFN_QUESTION = Question(
    "On standard-normal tokens, what share of the hidden values does ReLU set to exactly 0?",
    ("about a tenth", "about half", "nearly all"), _ffn)
TRAINING_QUESTION = Question(
    "Two copies of one network learn the spiral from the same start. Which ends ahead?",
    ("ReLU", "GELU", "they do about as well"), _training)
APPROXIMATIONS_QUESTION = Question(
    "How far is the tanh form from exact GELU, at worst?",
    ("more than 0.01", "between 0.0001 and 0.01", "less than 0.0001"), _approximations)
