"""The lesson's predict-then-check questions: what one is, and its answers computed once per process.

Pure: no Streamlit, no server.  Each page's module declares its ``QUESTION``, asked near the top of the page before
what answers it (``draw.lesson.ask_first``).  An answer is computed by gelu_core when it is revealed, never written
down: ``Question.reveal(chosen, form)`` returns whether the choice is right and a sentence with the numbers, in the
lesson's GELU form where the answer depends on it.  Each answer is computed once per process and form and shared
(``ANSWERS``): the choice stays on the page, so every later rerun reveals it again, and the race's and the lab's
answers are whole runs (the race's is the page's default race, trained as PyTorch alone trains it, the same numbers
the race lane gives the page).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gelu_core.shared import SharedResults
from ui.i18n import _, current, form_name


@dataclass(frozen=True)
class Question:
    """A question with a few choices; ``truth(form)`` computes (right choice, the sentence that shows why) for the
    lesson's GELU form (``"none"``, ``"tanh"`` or ``"sigmoid"``), which ``text`` may name as ``{form}``."""

    text: str
    choices: tuple[str, ...]
    truth: Callable[[str], tuple[str, str]]
    hides: str  # what on the page answers it, and so waits for the student's commitment (the page's row says it)

    def ask(self, form: str = "tanh") -> str:
        """The question as the page asks it, in the lesson's form and the reader's language."""
        return _(self.text).format(form=form_name(form))

    def answer(self, form: str = "tanh") -> tuple[str, str]:
        """(the right choice, the computed explanation), computed once per process and form."""
        return ANSWERS.get((self.text, form, current()), lambda: self.truth(form), what="the answer to this question")

    def reveal(self, chosen: str, form: str = "tanh") -> tuple[bool, str]:
        """(whether ``chosen`` is right, the computed explanation)."""
        right, why = self.answer(form)
        return chosen == right, why


# (question text, form, language) -> (right choice, why)
ANSWERS = SharedResults.within(entry_bytes=16 * 1024, share=0.005)
