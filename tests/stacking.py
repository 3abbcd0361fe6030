"""What a phone shows, top to bottom: Streamlit stacks columns in page order below 640 px, so the order of the
elements in the page's tree is the order a student scrolls through."""

from __future__ import annotations

WORDS = ("markdown", "caption", "subheader", "header", "title")  # text that names what follows


def stacked(at) -> list[str]:
    """Every element of the page's main area in document order, as "kind:name": "slider:gate_x",
    "plotly_chart:chart_gate", "metric:gate Φ(1.00)", "markdown:", ... (containers themselves left out, the
    layout-transparent wrapper a fragment's writes into an outside container get among them: it has no DOM node)."""
    out = []
    for e in at.main:
        kind = getattr(e, "type", type(e).__name__.lower())
        if kind in ("column", "flex_container", "block", "expander", "tab", "tabs", "transparent"):
            continue
        if kind == "html" and "gelu-chart-text" in e.value:  # a chart's words (ui.describe) belong to the chart
            continue
        name = getattr(e, "key", None) or (e.label if kind == "metric" else "")
        out.append(f"{kind}:{name}")
    return out


def next_after(at, item: str, skip: tuple[str, ...] = WORDS) -> list[str]:
    """The elements that follow ``item`` on a phone, text that merely names them (``skip``) left out."""
    order = stacked(at)
    assert item in order, f"{item} not on the page: {order}"
    return [e for e in order[order.index(item) + 1:] if e.split(":")[0] not in skip]
