"""Sentences gelu_core hands a reader (a refusal, a note), as a template and named parameters.

Pure: no Streamlit, no ``ui``.  A ``Message`` is a ``str`` whose text is the English sentence, so code and tests
that read it as text keep working; it also keeps ``template`` (a whole sentence, marked ``N_`` so Babel extracts
it with the app's catalogs: babel.cfg) and ``params``.  ``ui.format.say`` writes it in the reader's language:
the template through gettext, each parameter in the reader's number format.

Templates hold ``{name}`` fields without format specs; the parameters carry their own form:

* an ``int``: a count, written grouped (``16,777,216``);
* ``Fixed(value, digits)``: a decimal number with that many decimals, grouped (``1,234.5``);
* a ``Message``: a word or phrase that is itself translated (``"complex numbers"``);
* a ``str``: a name that stays as it is in every language (a tensor's name, a dtype, a shape, an extension).

Refusals (``TensorFileError``, ``WeightsError``, ``LabInputError``) take ``Refusal`` as a base: raised with a
template and parameters, their ``str()`` is the English sentence and ``.message`` the ``Message``.
"""

from __future__ import annotations

from typing import NamedTuple


def N_(template: str) -> str:  # noqa: N802 - gettext's marker, which Babel extracts
    """A sentence marked for extraction; shown later through ``ui.format.say``."""
    return template


class Fixed(NamedTuple):
    """A decimal number shown with ``digits`` decimals, grouped: ``Fixed(1234.56, 1)`` -> ``1,234.6``."""

    value: float
    digits: int = 1

    def __str__(self) -> str:
        return f"{self.value:,.{self.digits}f}"


def english(value: object) -> str:
    """A parameter as the English sentence writes it.

    >>> english(16777216), english(Fixed(39.06, 1)), english("h.0.mlp."), english(True)
    ('16,777,216', '39.1', 'h.0.mlp.', 'True')
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


class Message(str):
    """A sentence for the reader: the English text, with ``template`` and ``params`` to translate it.

    >>> m = Message(N_("This file holds {count} values; the limit is {limit} in one file."), count=40000000,
    ...             limit=33554432)
    >>> str(m), m.template[:15], m.params["count"]
    ('This file holds 40,000,000 values; the limit is 33,554,432 in one file.', 'This file holds', 40000000)
    """

    template: str
    params: dict[str, object]

    # quoted: this class is printed in the lab's script (ui.code_export), which has no ``__future__`` import
    def __new__(cls, template: str, /, **params: object) -> "Message":  # noqa: UP037
        text = template.format(**{name: english(value) for name, value in params.items()}) if params else template
        self = super().__new__(cls, text)
        self.template, self.params = template, params
        return self

    def __reduce__(self):
        return _rebuild, (self.template, self.params)


def _rebuild(template: str, params: dict[str, object]) -> Message:
    return Message(template, **params)


class Refusal(Exception):
    """Base for gelu_core's refusals: raised with a template and its parameters, ``str()`` is the English sentence
    and ``.message`` the ``Message`` a reader's language is made from."""

    message: Message

    def __init__(self, template: str, /, **params: object):
        self.message = Message(template, **params)
        super().__init__(str(self.message))

    def __reduce__(self):
        return _refusal, (type(self), self.message.template, self.message.params)

    @property
    def template(self) -> str:
        return self.message.template

    @property
    def params(self) -> dict[str, object]:
        return self.message.params


def _refusal(kind: type, template: str, params: dict[str, object]) -> Refusal:
    error = Exception.__new__(kind)
    Refusal.__init__(error, template, **params)
    return error
