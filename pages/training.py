"""Training race: two copies of one small network, ReLU against GELU, trained live on a task a student can see."""

import streamlit as st

from draw.frame import chart, require_app_frame
from draw.lesson import ask_first
from draw.race_player import play
from gelu_core import training
from hosting.races import LANE
from ui import training as view
from ui.format import count, local
from ui.i18n import _, ngettext
from ui.race_player import film_table
from ui.training import CONTROLS as TRAINING

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

PRESET_DYING = {"training_task": "circle", "training_lr": 0.1, "training_seed": 1}  # ReLU's last layer dies


def use_preset(values: dict) -> None:
    for key, value in values.items():
        st.session_state[key] = value


def stop(config) -> None:
    st.session_state["training_stopped"] = config


st.title(_("Training race"))
st.markdown(_(
    "Two copies of the same small network learn to separate two classes of points: same points, same "
    "starting weights, same mini-batches, same optimiser. The only difference is the activation, which owns "
    "no weights. Watch the loss fall and the border take shape, and count the **dead units**: hidden units "
    "whose slope is exactly 0 on every training point, so no gradient reaches the weights that feed them."
))

ask_first("training")  # the race and its verdict answer the question: they wait for the prediction

settings, live = st.columns([1, 2.2], gap="large")
with settings:
    task = st.segmented_control(**TRAINING["task"].kwargs())
    a1, a2 = st.columns(2)
    first = a1.selectbox(**TRAINING["a"].kwargs())
    second = a2.selectbox(**TRAINING["b"].kwargs())
    learning_rate = st.segmented_control(**TRAINING["lr"].kwargs())
    steps = st.slider(**TRAINING["steps"].kwargs())
    with st.expander(_("The network and the data")):
        width = st.slider(**TRAINING["width"].kwargs())
        depth = st.slider(**TRAINING["depth"].kwargs())
        noise = st.slider(**TRAINING["noise"].kwargs())
        seed = st.number_input(**TRAINING["seed"].kwargs())
    st.button(_("Where ReLU units die: circle, learning rate {lr}, seed 1").format(lr=local("0.1")),
              on_click=use_preset, args=(PRESET_DYING,), key="training_preset_dying", icon=":material/skull:")

config = view.race_config(dict(task=task, a=first, b=second, lr=learning_rate, steps=steps, width=width, depth=depth,
                               noise=noise, seed=seed))

with live:
    status = st.empty()
    player_slot = st.empty()
    regions_slot, curves_slot = st.empty(), st.empty()
    dead_slot = st.empty()


def draw(snapshot) -> tuple:
    """One snapshot's three charts, drawn once a run; (the regions' figure, the loss's), for the player."""
    regions, loss = view.decision_regions_figure(snapshot), view.loss_figure(snapshot)
    with regions_slot.container():
        chart(regions, "training-regions")
    with curves_slot.container():
        chart(loss, "training-loss")
    with dead_slot.container():
        st.caption(_("Dead units over the whole race (the replay above moves the regions and the loss only)."))
        chart(view.dead_units_figure(snapshot), "training-dead")
    return regions, loss


def tell_waiting(before: int, seconds: float) -> None:
    status.info(ngettext("Queued: {n} other race trains before yours, about {seconds} s. They train together with "
                         "yours where they can.",
                         "Queued: {n} other races train before yours, about {seconds} s. They train together with "
                         "yours where they can.", before).format(n=before, seconds=f"{max(seconds, 1):.0f}"),
                icon=":material/hourglass_top:")


def follow(job):
    """The finished race, its queue and progress told in words meanwhile (a few times a second: the charts are
    drawn once, finished, and the race is played over them in the browser at frame rate)."""
    while True:
        try:
            return job.result(timeout=0.25)
        except TimeoutError:
            pass
        latest = job.latest
        if job.started is None:
            tell_waiting(*LANE.ahead(job))
        elif latest is not None:
            st.session_state["training_last"] = latest
            status.progress(latest.step / config.steps,
                            text=_("Training: step {step} of {total} ({seconds} s)").format(
                                step=count(latest.step), total=count(config.steps),
                                seconds=local(f"{latest.seconds:.1f}")))


snapshot = None
if st.session_state.get("training_stopped") == config:
    snapshot = st.session_state.get("training_last")
    if snapshot is not None and snapshot.config != config:  # the race before: this one was stopped before its first
        snapshot = None  # report ("Stopped at step 100 of 3,000" said that race's last step)
    status.warning(_("Stopped at step {step} of {total}.").format(step=count(snapshot.step), total=count(config.steps))
                   if snapshot else _("Stopped."), icon=":material/pause_circle:")
    live.button(_("Train again"), key="training_again", on_click=st.session_state.pop, args=("training_stopped",),
                icon=":material/play_arrow:")
    if snapshot is not None and snapshot.config == config:
        draw(snapshot)
else:
    stop_slot = live.empty()
    stop_slot.button(_("Stop"), key="training_stop", on_click=stop, args=(config,), icon=":material/stop:")
    job = LANE.submit(config)
    snapshot = follow(job)
    st.session_state["training_last"] = snapshot
    status.empty()
    regions, loss = draw(snapshot)
    with player_slot:
        play(film_table(snapshot, job.film, regions, loss, regions_key="chart_training-regions",
                        loss_key="chart_training-loss"), key="training_player")
    stop_slot.empty()

if snapshot is not None and snapshot.done and snapshot.config == config:
    verdict = training.verdict(snapshot)
    # the whole race's result, whatever step the replay above has reached
    st.markdown(_("**The whole race, all {steps} steps: {verdict}**").format(
        steps=count(snapshot.config.steps), verdict=view.verdict_text(snapshot, verdict)))
    st.caption(view.race_notes(snapshot, verdict))
