"""The race, played: the component that moves the border and the loss in the browser at frame rate, over the
finished race's charts (``race_player.js``; its table: ``ui.race_player.film_table``)."""

from __future__ import annotations

from draw.assets import component

_mount = component("gelu_race_player",
                   html=('<div class="gelu-race-player"><button type="button">Replay the training</button>'
                         '<span class="gelu-race-step"></span></div>'),
                   css="race_player.css", js=("plotly_private.js", "race_player.js"))


def play(table: dict, key: str) -> None:
    """Mount the player (once per page run, after the two charts it moves)."""
    _mount(key=key, data=table, height="content")
