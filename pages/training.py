"""Training race: two copies of one small network, ReLU against GELU, trained live on a task a student can see."""

import time

import streamlit as st

from gelu_core import training
from hosting.races import LANE
from ui import training as view
from ui.controls import TRAINING
from ui.frame import chart, require_app_frame

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

PRESET_DYING = {"training_task": "circle", "training_lr": 0.1, "training_seed": 1}  # ReLU's last layer dies


def use_preset(values: dict) -> None:
    for key, value in values.items():
        st.session_state[key] = value


def stop(config) -> None:
    st.session_state["training_stopped"] = config


st.title("Training race")
st.markdown(
    "Two copies of the same small network learn to separate two classes of points: same points, same "
    "starting weights, same mini-batches, same optimiser. The only difference is the activation, which owns "
    "no weights. Watch the loss fall and the border take shape, and count the **dead units**: hidden units "
    "whose slope is exactly 0 on every training point, so no gradient reaches the weights that feed them."
)

settings, live = st.columns([1, 2.2], gap="large")
with settings:
    task = st.segmented_control(**TRAINING["task"].kwargs())
    a1, a2 = st.columns(2)
    first = a1.selectbox(**TRAINING["a"].kwargs())
    second = a2.selectbox(**TRAINING["b"].kwargs())
    learning_rate = st.segmented_control(**TRAINING["lr"].kwargs())
    steps = st.slider(**TRAINING["steps"].kwargs())
    with st.expander("The network and the data"):
        width = st.slider(**TRAINING["width"].kwargs())
        depth = st.slider(**TRAINING["depth"].kwargs())
        noise = st.slider(**TRAINING["noise"].kwargs())
        seed = st.number_input(**TRAINING["seed"].kwargs())
    st.button("Where ReLU units die: circle, learning rate 0.1, seed 1", on_click=use_preset, args=(PRESET_DYING,),
              key="training_preset_dying", icon=":material/skull:")

config = view.race_config(dict(task=task, a=first, b=second, lr=learning_rate, steps=steps, width=width, depth=depth,
                               noise=noise, seed=seed))

with live:
    status = st.empty()
    regions_slot, curves_slot = st.empty(), st.empty()
    dead_slot = st.empty()


drawn = []  # the snapshots drawn in this run


def draw(snapshot, live: bool = False) -> None:
    """One snapshot into the live slots (the final one too, unless training just drew it).  A live frame
    redraws the border and the loss; the dead units only on the first and the last."""
    if drawn and drawn[-1] is snapshot:
        return
    with regions_slot.container():
        chart(view.decision_regions_figure(snapshot), "training-regions", frame=len(drawn))
    with curves_slot.container():
        chart(view.loss_figure(snapshot), "training-loss", frame=len(drawn))
    if not (live and drawn):
        with dead_slot.container():
            chart(view.dead_units_figure(snapshot), "training-dead", frame=len(drawn))
    drawn.append(snapshot)
    st.session_state["training_last"] = snapshot


def progress(snapshot) -> None:
    status.progress(snapshot.step / config.steps,
                    text=f"Training: step {snapshot.step:,} of {config.steps:,} ({snapshot.seconds:.1f} s)")
    draw(snapshot, live=True)


def tell_waiting(before: int, seconds: float) -> None:
    races = "race trains" if before == 1 else "races train"
    status.info(f"Queued: {before} other {races} before yours, about {max(seconds, 1):.0f} s. They train "
                "together with yours where they can.", icon=":material/hourglass_top:")


def follow(job):
    """Draw the race's snapshots as the lane publishes them, the newest at most every LANE.frame_seconds()
    (0.1 s, longer in a crowd), the others skipped; its final one."""
    seen, last_drawn, waiting = 0, float("-inf"), None
    while True:
        every = LANE.frame_seconds()
        wait = 0.25 if waiting is None else max(0.0, last_drawn + every - time.monotonic())
        frames, latest = job.wait(seen, timeout=wait)
        if frames > seen:
            seen, waiting = frames, latest
            if latest.done:
                return latest
        elif job.started is None:
            tell_waiting(*LANE.ahead(job))
        if waiting is not None and time.monotonic() - last_drawn >= every:
            progress(waiting)
            last_drawn, waiting = time.monotonic(), None


snapshot = None
if st.session_state.get("training_stopped") == config:
    snapshot = st.session_state.get("training_last")
    status.warning(f"Stopped at step {snapshot.step:,} of {config.steps:,}." if snapshot else "Stopped.",
                   icon=":material/pause_circle:")
    live.button("Train again", key="training_again", on_click=st.session_state.pop, args=("training_stopped",),
                icon=":material/play_arrow:")
    if snapshot is not None and snapshot.config == config:
        draw(snapshot)
else:
    stop_slot = live.empty()
    stop_slot.button("Stop", key="training_stop", on_click=stop, args=(config,), icon=":material/stop:")
    snapshot = follow(LANE.submit(config))
    status.empty()
    draw(snapshot)
    stop_slot.empty()

if snapshot is not None and snapshot.done and snapshot.config == config:
    verdict = training.verdict(snapshot)
    st.markdown(f"**{verdict.text}**")
    st.caption(view.race_notes(snapshot, verdict))
