"""draw.frame.part on a real server: a move of an explorer page's control reruns the part that draws it, and the whole
page while something outside the part shows the controls' values (the code for this view) or the link's note.

References: Streamlit's websocket protocol as the browser speaks it (harness/streamlit_client.py: a control drawn by
an st.fragment asks for that fragment's run, whose new_session names it); the page as a full run draws it (the
sidebar, delta_path[0] == 1, is drawn only by a full run); the controls' grids (ui/controls.py).
"""

from __future__ import annotations

import pytest

from harness import browser as driver
from harness.streamlit_client import MAIN, Session, run_sync
from ui.pages import PAGES

EXPLORER = ("home", "gate", "curves", "derivative", "steps", "approximations")
SIDEBAR = 1  # delta_path[0] of the sidebar (RootContainer)


@pytest.fixture(scope="module")
def server():
    with driver.Server() as server:
        driver.wait_ready(server.base_url)
        yield server


class Watched(Session):
    """A session that counts, for its latest run, the deltas by where they go."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.drawn: list[tuple[int, ...]] = []

    def rerun_message(self, *args, **kwargs):
        self.drawn = []
        return super().rerun_message(*args, **kwargs)

    def handle(self, msg):
        if msg.WhichOneof("type") in ("delta", "ref_hash"):
            self.drawn.append(tuple(msg.metadata.delta_path))
        super().handle(msg)


def full_run(s: Watched) -> bool:
    return any(path[0] == SIDEBAR for path in s.drawn)


@pytest.mark.parametrize("page", EXPLORER)
def test_a_move_reruns_its_part_alone(server, page):
    async def student():
        async with Watched(server.base_url, "" if page == "home" else page, timeout_s=60) as s:
            await s.run()
            await s.show_me()  # past the page's question: the whole page drawn
            first = len(s.drawn)
            moved = []
            for _ in range(2):
                await s.move()
                moved.append((full_run(s), len(s.drawn), all(p[0] == MAIN for p in s.drawn)))
            return s, first, moved

    s, first, moved = run_sync(student())
    assert s.control().fragment_id, f"/{page}: its first control is drawn by no part"
    assert not s.troubles
    for full, drawn, main_only in moved:
        assert not full and main_only and 0 < drawn < first


@pytest.mark.parametrize("page", sorted(name for name, row in PAGES.items() if not row.waits))
def test_show_me_reruns_the_page_alone_and_draws_it_whole(server, page):
    """"Show me" reruns the page alone (draw.lesson.page_body): the frame around it (the sidebar, the lesson's top) is
    not sent again, nor a part's second, whole-page run; and the page is drawn whole: what the client then holds is
    what the same session's next full run draws (the reference), element by element."""
    async def student():
        async with Watched(server.base_url, "" if page == "home" else page, timeout_s=60) as s:
            await s.run()
            await s.show_me()
            shown, held = list(s.drawn), dict(s.elements)
            await s.run(list(s.moved.values()))  # a full run: the frame and the page
            return s, shown, held, full_run(s)

    s, shown, held, reference_full = run_sync(student())
    assert not s.troubles
    assert reference_full
    assert shown and not any(path[0] == SIDEBAR for path in shown), "the frame was sent again"
    assert held == s.elements


@pytest.mark.parametrize("page", ["ffn", "training"])  # the lab's line, the race: runs that can wait long
def test_a_page_whose_run_waits_on_long_work_unfolds_in_a_run_of_the_app(server, page):
    """The race and the lab: a click during their run (Stop, another input) must interrupt it, which Streamlit does
    for a run of the app and not for a fragment's.  Reference: the sidebar, drawn only by a full run."""
    async def student():
        async with Watched(server.base_url, page, timeout_s=60) as s:
            await s.run()
            await s.show_me()
            return s, full_run(s)

    s, full = run_sync(student())
    assert not s.troubles
    assert full


# What a move of each page's first control draws, element by element (blocks aside): only what the live layer cannot
# keep at the thumb's value.  Everything else the move changes is drawn by the page's full run at the control's
# value, outside the part, and written in the browser by the layer while the thumb goes (tests/e2e/test_live.py
# holds the page after a release to a fresh session's page at that value).  A chart's words (what a screen reader
# hears of the chart and its probe) are the page's where the layer's table holds them at every step (Curves', the
# gate's, Step by step's), and the part's elsewhere (Home's, Approximations'); a metric whose help holds the value's
# digits is the part's.  A chart whose probe the layer moves and then writes into the plot's data at rest (Curves',
# the gate's, Step by step's, Home's: ``settle`` in ui/live.py) is the page's too.
MOVE_DRAWS = {
    "home": ["html", "number_input", "number_input", "number_input", "number_input", "number_input"],  # the five
    # inputs and the chart's words; the chart, the table and the paragraphs: the layers'; the table's download: the
    # page's (its table made at the click, ``draw.frame.latest``)
    "derivative": ["slider"],  # the sentence, the two gradients and the caption: the layer's
    "approximations": ["html"] * 3 + ["slider"],  # the three charts' words; their view and the captions: the layer's
    "curves": ["slider"],  # the chart, its words and the three readouts: the layer's
    "gate": ["metric", "slider"],  # the gate's readout (its help holds six digits); the charts, their words, GELU's
    # and ReLU's readouts: the layer's
    "steps": ["metric", "metric", "number_input", "slider"],  # the number its pick follows, the two forms' readouts
    # (their help holds every digit); the chart and its words, the difference, the step table and its caption: the
    # layer's (the pick is the page's first slider); the downloads: the page's (made at the click)
}


@pytest.mark.parametrize("page", sorted(MOVE_DRAWS))
def test_a_move_draws_only_what_the_live_layer_cannot_keep(server, page):
    async def student():
        async with Watched(server.base_url, "" if page == "home" else page, timeout_s=60) as s:
            await s.run()
            await s.show_me()  # past the page's question: the whole page drawn
            kinds = []
            for direction in (1, -1):  # a value not drawn yet, then back to one the client holds (a cached chart)
                await s.move(direction)
                drawn = [s.elements[p].kind for p in s.drawn if p in s.elements]
                kinds.append(sorted(kind for kind in drawn if kind != "block"))
            return s, kinds

    s, kinds = run_sync(student())
    assert not s.troubles
    assert kinds == [MOVE_DRAWS[page]] * 2, kinds


@pytest.mark.parametrize("page, label, between, on", [("steps", "Exact x", 1.234, 1.5), ("home", "x2", 1.25, 1.5)])
def test_a_number_typed_between_the_layer_s_steps_reruns_the_whole_page_which_draws_the_table_at_it(
        server, page, label, between, on):
    """A live layer has a row for each step of its control's grid (Step by step's pick: tenths; Home's inputs: 0.5);
    a number typed between them reruns the whole page, which draws the table at it (its values:
    tests/test_page_steps.py and test_page_home.py, against mpmath); one on the grid reruns the part alone, which
    sends no table (the layer writes it)."""
    async def student():
        async with Watched(server.base_url, "" if page == "home" else page, timeout_s=60) as s:
            await s.run()
            await s.show_me()  # past the page's question: the whole page drawn
            seen = []
            for value in (between, on):
                number = next(e.control for e in s.elements.values() if e.control and e.control.label == label)
                s.enter(label, value)
                await s.run(list(s.moved.values()), number.fragment_id)
                tables = [s.elements[p] for p in s.drawn if p in s.elements and s.elements[p].kind == "table"]
                seen.append((full_run(s), len(tables)))
            return s, seen

    s, seen = run_sync(student())
    assert not s.troubles
    assert seen == [(True, 1), (False, 0)], seen


def test_a_gate_move_across_zero_reruns_the_whole_page_which_puts_the_label_in_its_corner(server):
    """The gate chart's label sits top left for x <= 0 and bottom right for x > 0 (ui.gate.gate_figure, where no gate
    reaches).  The chart is the page's, and the live layer keeps the label where the page drew it, so a move that
    crosses 0 reruns the whole page, which draws the chart with its label in the other corner; a move on the same
    side reruns the part alone, which sends no chart.  Reference: the run's own messages (a full run redraws the
    sidebar), from x = 0.1 by steps of 0.1."""
    async def student():
        async with Watched(server.base_url, "gate", "gate_x=0.1", timeout_s=60) as s:
            await s.run()
            await s.show_me()  # past the page's question: the whole page drawn
            seen = []
            for direction in (-1, -1, 1, 1, 1):  # 0.0, -0.1, 0.0, 0.1, 0.2
                await s.move(direction)
                charts = sum(s.elements[p].kind == "plotly_chart" for p in s.drawn if p in s.elements)
                seen.append((full_run(s), charts))
            return s, seen

    s, seen = run_sync(student())
    assert not s.troubles
    assert seen == [(True, 3), (False, 0), (False, 0), (True, 3), (False, 0)], seen


def test_a_curves_probe_move_into_or_out_of_the_view_reruns_the_whole_page_whose_words_say_it_or_not(server):
    """The chart's words (the page's, ui/describe.py) say the probe while it lies in the range's view, and the live
    layer writes what they say of it at rest; a move that takes the probe into or out of the view reruns the whole
    page, whose words then say it or not.  Reference: the run's own messages, from x = 2.9 by steps of 0.1 on the
    default range, -3 to 3 (ui.curves.probe_names: "ReLU(3.00)")."""
    async def student():
        async with Watched(server.base_url, "curves", "curves_x=2.9", timeout_s=60) as s:
            await s.run()
            await s.show_me()  # past the page's question: the whole page drawn
            seen = []
            for direction in (1, 1, 1, -1, -1):  # 3.0, 3.1, 3.2, 3.1, 3.0
                await s.move(direction)
                words = [s.elements[p].text for p in s.drawn if p in s.elements and s.elements[p].kind == "html"
                         and "Chart data as a table" in (s.elements[p].text or "")]
                seen.append((full_run(s), [("ReLU(3.00) at x = 3 is 3" in w, "ReLU(" in w) for w in words]))
            return s, seen

    s, seen = run_sync(student())
    assert not s.troubles
    assert seen == [(False, []), (True, [(False, False)]), (False, []), (False, []), (True, [(True, True)])], seen


def test_a_gate_move_that_changes_the_shaded_area_s_rows_reruns_the_whole_page(server):
    """The bell chart's words table the shaded area by eleven of its points, fewer near the left end (ui.gate.bell_area:
    the bell curve's points left of x, every 0.02; one point at -4, said as a marked one), and the live layer writes
    them where their rows are the page's: a move that changes how many reruns the whole page, whose words are then at
    its x.  Reference: the run's own messages, from x = -3.7 by steps of 0.1 (the area's words name it: "area =
    Φ(-3.90)")."""
    async def student():
        async with Watched(server.base_url, "gate", "gate_x=-3.7", timeout_s=60) as s:
            await s.run()
            await s.show_me()  # past the page's question: the whole page drawn
            seen = []
            for direction in (-1, -1, -1, 1, 1, 1):  # -3.8, -3.9, -4.0, -3.9, -3.8, -3.7
                await s.move(direction)
                x = s.control().value[0]
                words = [s.elements[p].text for p in s.drawn if p in s.elements and s.elements[p].kind == "html"
                         and "area = Φ(" in (s.elements[p].text or "")]
                seen.append((full_run(s), [f"area = Φ({x:.2f})" in w for w in words]))
            return s, seen

    s, seen = run_sync(student())
    assert not s.troubles
    assert seen == [(False, []), (True, [True]), (True, [True]), (True, [True]), (True, [True]), (False, [])], seen


def test_while_the_code_is_open_a_move_reruns_the_whole_page(server):
    """The code for this view (below the page, built from every control's value) follows each move while open."""
    async def student():
        async with Watched(server.base_url, "gate", timeout_s=60) as s:
            await s.run()
            await s.show_me()  # past the page's question: the whole page drawn
            kinds = []
            for open_ in (None, True, False):
                if open_ is not None:
                    await s.expand("Code for this view", open_)
                await s.move()
                kinds.append(full_run(s))
            return s, kinds

    s, kinds = run_sync(student())
    assert kinds == [False, True, False] and not s.troubles


def test_after_a_bad_link_the_first_move_reruns_the_whole_page_and_drops_the_note(server):
    async def student():
        async with Watched(server.base_url, "gate", "gate_x=99", timeout_s=60) as s:
            await s.run()
            await s.show_me()  # past the page's question: the whole page drawn
            noted = [e.text for e in s.elements.values() if e.kind == "alert" and "could not be used" in e.text]
            await s.move()
            first = full_run(s), [e.text for e in s.elements.values() if "could not be used" in e.text]
            await s.move()
            return noted, first, full_run(s)

    noted, (first_full, left), second_full = run_sync(student())
    assert noted and first_full and not left and not second_full


def test_a_range_too_narrow_to_chart_reruns_the_whole_page_and_so_does_the_move_back(server):
    """Approximations' charts are drawn by the page, not by the range's part (their data are the same for every
    range; the live layer sets the view): a move that leaves the range too narrow to chart (one value) reruns the
    whole page, which shows the note and no chart, and the move back draws the three charts again.  A move within
    chartable ranges reruns the part alone and sends no chart (the page keeps the ones it drew)."""
    def drawn(s: Watched) -> list:  # what the latest run drew
        return [s.elements[p] for p in s.drawn if p in s.elements]

    def charts(s: Watched) -> int:
        return sum(seen.kind == "plotly_chart" for seen in drawn(s))

    def note(s: Watched) -> bool:
        return any(seen.kind == "alert" and "Pick a range" in seen.text for seen in drawn(s))

    async def student():
        async with Watched(server.base_url, "approximations", "approximations_range=1&approximations_range=2",
                           timeout_s=60) as s:
            await s.run()
            await s.show_me()  # past the page's question: the whole page drawn
            seen = [(full_run(s), charts(s), note(s))]
            for direction in (1, 1, -1):  # 1.5 … 2, then 2 … 2 (one value), then back to 1.5 … 2
                await s.move(direction)
                seen.append((full_run(s), charts(s), note(s)))
            return s, seen

    s, seen = run_sync(student())
    assert not s.troubles
    assert seen == [(True, 3, False), (False, 0, False), (True, 0, True), (True, 3, False)], seen
