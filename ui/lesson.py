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

from gelu_core.shared import SharedResults


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


ANSWERS = SharedResults.within(entry_bytes=16 * 1024, share=0.005)  # question text -> (right choice, why)
