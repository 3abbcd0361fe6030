"""Shareable links: the page's address plus the query parameters that hold the view."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlencode


def share_url(base: str | None, params: Mapping[str, str | Iterable[str]]) -> str:
    """``base?k=v&...`` with params in a stable (sorted) order; repeated keys for lists.

    >>> share_url("http://localhost:8501/curves", {"curves_x": "1.5", "a": ["1", "2"]})
    'http://localhost:8501/curves?a=1&a=2&curves_x=1.5'
    """
    base = (base or "").split("?", 1)[0]
    pairs: list[tuple[str, str]] = []
    for key in sorted(params):
        value = params[key]
        values = [value] if isinstance(value, str) else list(value)
        pairs.extend((key, v) for v in values)
    return f"{base}?{urlencode(pairs)}" if pairs else base
