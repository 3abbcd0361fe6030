"""Feed-forward lab: GPT-2's Linear(d, 4d) -> activation -> Linear(4d, d) on a demo tensor or your own file."""

import hashlib

import streamlit as st

import gelu_core
from draw.frame import chart, require_app_frame, session_owner
from draw.lesson import ask_first
from gelu_core import tensor_io
from gelu_core.budget import MAX_D_MODEL
from hosting.runs import Busy
from ui import ffn as view
from ui import gradients as backward_view
from ui.ffn import CONTROLS as FFN
from ui.ffn import DEMO_SHAPES
from ui.format import count, refusal, say, shape, share, sig
from ui.i18n import _

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame


LAB_PATIENCE = 120  # seconds one run in front may hold the lab before a waiting student is told it is busy
# Blocks, files and results are shared between students and bounded by the memory budget (hosting.lab_runs);
# each remembers which sessions used it, so the server gives it back once they have all left (hosting.janitor).
OWNER = session_owner()


def lab_runs():
    """hosting.lab_runs, the lab's shared runs (torch: imported once a block or file is needed)."""
    from hosting import lab_runs

    return lab_runs


def uploaded(file):
    """(digest, name, bytes) of an st.file_uploader value."""
    data = file.getvalue()
    return hashlib.sha256(data).hexdigest(), file.name, data


def match_width(width: int):
    st.session_state["ffn_d_model"] = width


def file_weights():
    """The block from an uploaded state dict, or None with the reason on screen."""
    weights_file = st.file_uploader(_("A state dict with one feed-forward block"), type=tensor_io.WEIGHT_TYPES,
                                    key="ffn_weights_file",
                                    help=_("GPT-2's mlp.c_fc / mlp.c_proj (Conv1D, stored transposed), nanoGPT's, "
                                           "fc1 / fc2, or chapter 4's layers.0 / layers.2."))
    if weights_file is None:
        st.info(_("Choose a file with the weights of one block, or switch back to seeded weights."))
        return None
    digest, name, data = uploaded(weights_file)
    try:
        tensors, _shapes = lab_runs().shared_file(digest, name, data, "weights", owner=OWNER)
        found = gelu_core.find_blocks(tensors)
        choice = None
        if len(found) > 1:
            choice = st.selectbox(_("This file holds {n} blocks").format(n=count(len(found))), found,
                                  format_func=lambda c: c.label,
                                  key="ffn_weights_block")
        elif found:
            choice = found[0]
        loaded = lab_runs().shared_file_block(digest, tensors, choice, owner=OWNER)  # none found: names the pairs
    except (gelu_core.TensorFileError, gelu_core.WeightsError) as err:
        st.error(refusal(err))
        return None
    st.caption(_("{block}: d_model = {d_model}, hidden = {hidden}, read as {layout}.").format(
        block=loaded.candidate.label, d_model=count(loaded.d_model), hidden=count(loaded.hidden),
        layout=say(loaded.layout)))
    for note in loaded.notes:
        st.caption(_("Note: {note}.").format(note=say(note)))
    return loaded.block


def file_input():
    """(tensor, its file's content hash, its name in the file) from an uploaded activations file, or None with
    the reason on screen."""
    tensor_file = st.file_uploader(
        _("Activations: one token (d_model), a sequence (tokens, d_model) or a batch (batch, tokens, d_model)"),
        type=tensor_io.INPUT_TYPES, key="ffn_file",
        help=_("Up to {mb} MB and {n} numbers. Files are read as data only: a .pt is opened with "
               "torch.load(weights_only=True), never unpickled freely.").format(
            mb=count(tensor_io.MAX_BYTES // 2**20), n=count(tensor_io.MAX_ELEMENTS)))
    if tensor_file is None:
        st.info(_("Choose a file: activations you saved from your own model, as .pt, .npy, .npz, .safetensors or "
                  ".csv."))
        return None
    digest, name, data = uploaded(tensor_file)
    try:
        tensors, notes = lab_runs().shared_file(digest, name, data, owner=OWNER)
    except gelu_core.TensorFileError as err:
        st.error(refusal(err))
        return None
    names = list(tensors)
    chosen = names[0]
    if len(names) > 1:
        chosen = st.selectbox(_("This file holds {n} tensors").format(n=count(len(names))), names, key="ffn_tensor",
                              format_func=lambda n: f"{n} {shape(tensors[n].shape)}")
    x = tensors[chosen]
    st.caption(_("{name}: shape {shape}, {dtype}.").format(name=chosen, shape=shape(x.shape),
                                                           dtype=str(x.dtype).removeprefix("torch.")))
    for note in notes:
        st.caption(say(note))
    return x, digest, chosen


def tokens_for(upload, block, source: str):
    """The uploaded input checked for this block (gelu_core.Tokens), or None with the reason on screen."""
    x, digest, name = upload
    try:
        return gelu_core.file_tokens(x, block, digest, name)
    except gelu_core.WidthMismatch as err:
        if source == "Seeded" and err.width <= MAX_D_MODEL:
            st.warning(_("{problem} Set d_model to {width} to run it through a block of that width.").format(
                problem=say(err), width=count(err.width)))
            st.button(_("Set d_model to {width}").format(width=count(err.width)), on_click=match_width,
                      args=(err.width,), key="ffn_match", type="primary")
        elif source == "Seeded":
            st.error(_("{problem} The lab builds blocks up to d_model = {most}.").format(problem=say(err),
                                                                                         most=count(MAX_D_MODEL)))
        else:
            st.error(_("{problem} The weights in the file fix d_model; choose an input of that width.").format(
                problem=say(err)))
    except gelu_core.LabInputError as err:
        st.error(refusal(err))
    return None


def show_backward(result) -> None:
    """The backward pass: how much gradient reached each hidden value under each activation."""
    a, b = result.a, result.b
    short = {r.name: gelu_core.ACTIVATIONS[r.name].short for r in (a, b)}
    st.subheader(_("Backwards: the gradient reaching each hidden unit"))
    st.markdown(_(
        "Training asks how the loss would change if each hidden value h moved a little: the gradient dL/dh. It "
        "flows back through the activation and is multiplied by its slope. Here the loss is {loss} over every "
        "output number, on the same weights and input as above.").format(loss=result.loss_formula))
    m1, m2, m3 = st.columns(3)
    for column, run in ((m1, b), (m2, a)):
        column.metric(_("{name}: gradient exactly 0").format(name=short[run.name]), share(run.zero_share),
                      help=_("{n} of {of} hidden values pass no gradient back.").format(
                          n=count(run.zero_count), of=count(result.hidden_numel)))
    m3.metric(_("Units dead for this input ({first} / {second})").format(first=short[b.name], second=short[a.name]),
              f"{count(b.dead_count)} / {count(a.dead_count)}",
              help=_("Hidden units whose gradient is exactly 0 for every token of this input: their weights get no "
                     "update from it."))
    left, right = st.columns([3, 2], gap="large")
    with left:
        chart(backward_view.gradient_histogram(result), "lab-gradients")
    with right:
        st.markdown(backward_view.gradient_table(result))
    st.caption(backward_view.zero_words(result))


def show(result) -> None:
    """Everything the lab measured, for the two activations."""
    a, b = result.a, result.b
    short_a, short_b = (gelu_core.ACTIVATIONS[r.name].short for r in (a, b))
    st.subheader(_("What the activation changes"))
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(_("Hidden values below 0"), share(result.negative_share),
              help=_("{n} of {of} pre-activations h < 0.").format(n=count(result.negative_count),
                                                                  of=count(result.hidden_numel)))
    m2.metric(_("{name} sets to 0").format(name=short_b), count(b.zeroed),
              help=_("Hidden values with h < 0 whose output is exactly 0."))
    m3.metric(_("{name} keeps of h < 0").format(name=short_a), share(a.negative_kept),
              help=_("Σ|act(h)| over h < 0, as a share of Σ|h| over h < 0: how much negative signal survives. ReLU "
                     "keeps 0%."))
    m4.metric(_("Outputs differ by, at most"), sig(result.max_abs_diff),
              help=_("Largest |{a} output - {b} output| over every output number; the mean is {mean}.").format(
                  a=a.label, b=b.label, mean=sig(result.mean_abs_diff)))
    t1, t2 = st.columns([3, 2], gap="large")
    t1.markdown(view.comparison_table(result))
    t2.markdown(view.activation_notes(a.name, b.name))
    t2.caption(_("Negative signal kept: Σ|act(h)| ÷ Σ|h| over the hidden values with h < 0. Positive signal kept: "
                 "Σ act(h) ÷ Σ h over h ≥ 0."))

    left, right = st.columns(2, gap="large")
    with left:
        st.markdown(_("**What the activation receives**"))
        zeroed_by = next((r.name for r in (b, a) if r.zeroed == result.negative_count), None)
        chart(view.hidden_histogram(result.hidden_hist.edges, result.hidden_hist.counts, result.negative_share,
                                    zeroed_by=zeroed_by),
              "lab-hidden")
        st.caption(_("The hidden pre-activations h = c_fc(x), before the activation: the bars left of zero are "
                     "what each activation's negative side acts on (see above for what each does)."))
    with right:
        st.markdown(_("**What it hands on**"))
        chart(view.post_histogram(a.post_hist.edges, a.post_hist.counts, b.post_hist.counts, key_a=a.name,
                                  label_a=a.label, key_b=b.name, label_b=b.label), "lab-output")
        st.caption(view.output_caption(result))

    st.markdown(_("**Each token's output**"))
    profiles = [(r.label, r.name, view.token_profile(r.token_norms.numpy())) for r in view.runs(result)]
    batch, tokens = result.input_shape[:2]
    chart(view.token_norms_figure(profiles[0][2].position, [(lbl, key, p.mean) for lbl, key, p in profiles],
                                  bucket=profiles[0][2].bucket, tokens=tokens, batch=batch), "lab-tokens")
    st.caption(view.token_caption(result))

    st.markdown(_("**Download the output** ({name}, shape {shape})").format(name=a.label, shape=shape(a.output.shape)))
    d1, d2, _rest = st.columns([1, 1, 3])
    stem = f"ffn_{a.name}_{'x'.join(str(n) for n in a.output.shape)}"
    d1.download_button(_("Download .npy"), data=lambda: gelu_core.array_bytes(a.output, "npy"), file_name=stem + ".npy",
                       mime="application/octet-stream", on_click="ignore", icon=":material/download:", key="ffn_npy")
    d2.download_button(_("Download .pt"), data=lambda: gelu_core.array_bytes(a.output, "pt"), file_name=stem + ".pt",
                       mime="application/octet-stream", on_click="ignore", icon=":material/download:", key="ffn_pt")


st.title(_("Feed-forward lab"))
st.markdown(_(
    "After attention, every token in GPT-2 goes through a small two-layer network on its own. The first "
    "**Linear** layer widens the token's 768 numbers to 3072, the **activation** bends each of those numbers "
    "separately, and a second Linear layer folds them back to 768. Only the two Linear layers learn weights; "
    "the activation has none. Send a tensor through it and compare GELU with ReLU on the very same weights."
))

ask_first("ffn")  # the lab's run answers the question: it waits for the prediction

block_col, input_col = st.columns(2, gap="large")
with block_col:
    st.subheader(_("The block"))
    source = st.segmented_control(**FFN["weights"].kwargs())
    a1, a2 = st.columns(2)
    activation = a1.selectbox(**FFN["act"].kwargs())
    compare = a2.selectbox(**FFN["vs"].kwargs())
    with_backward = st.toggle(**FFN["backward"].kwargs())
    if source == "Seeded":
        s1, s2 = st.columns(2)
        d_model = s1.number_input(**FFN["d_model"].kwargs())
        seed = s2.number_input(**FFN["seed"].kwargs())
        block = lab_runs().shared_seeded_block(int(d_model), int(seed), owner=OWNER)
        demo_seed = int(seed)
    else:
        block = file_weights()
        demo_seed = 0
    flow_slot = st.container()  # the shape flow, once the input is known

with input_col:
    st.subheader(_("The input"))
    input_source = st.segmented_control(**FFN["input"].kwargs())
    tokens_in = upload = None
    if input_source == "Demo":
        demo = st.selectbox(**FFN["demo"].kwargs())
        st.caption(_("Seeded from the weight seed, so a link brings back the very same numbers."))
        if block is not None:
            try:  # the whole run's size, checked once, before the input is drawn
                tokens_in = gelu_core.demo_tokens(block, demo_seed, *DEMO_SHAPES[demo])
            except gelu_core.LabInputError as err:
                st.error(refusal(err))
    else:
        upload = file_input()

if block is not None and upload is not None:
    tokens_in = tokens_for(upload, block, source)
result = None
if tokens_in is not None:
    waiting = st.empty()

    def tell_waiting(what: str, seconds: float) -> None:
        waiting.info(_("Waiting for the lab ({seconds} s): it runs one batch at a time, and is now running "
                       "{what}.").format(seconds=count(round(seconds)), what=say(what)),
                     icon=":material/hourglass_top:")

    big = tokens_in.shape[0] * tokens_in.shape[1] >= 1024
    running = st.empty()  # still words and a seconds count, not st.spinner (ui.ffn.running_html says why)
    running.html(view.running_html((_("Running {shape} through the block and back…") if with_backward else
                                    _("Running {shape} through the block…")).format(shape=shape(tokens_in.shape)),
                                   timed=big),
                 unsafe_allow_javascript=big)
    try:
        result = lab_runs().shared_run_lab(block, tokens_in, activation, compare, backward=with_backward,
                                           on_wait=tell_waiting, timeout=LAB_PATIENCE, owner=OWNER)
    except (gelu_core.LabInputError, Busy) as err:
        st.error(refusal(err))
    running.empty()
    waiting.empty()
if result is not None:
    with flow_slot:
        st.markdown(_("**Shapes, and trainable parameters per layer**"))
        # a plain <pre>, not st.code: st.code would load the frontend's syntax highlighter (0.51 MB gzipped)
        st.html(view.flow_html(result.input_shape, result.flow, result.total_params))
        if upload is not None and tuple(upload[0].shape) != result.input_shape:
            st.caption(_("The input {shape} was read as {read}: (batch, tokens, d_model).").format(
                shape=shape(upload[0].shape), read=shape(result.input_shape)))
    show(result)
    if result.backward is not None:
        show_backward(result.backward)
