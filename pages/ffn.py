"""Feed-forward lab: GPT-2's Linear(d, 4d) -> activation -> Linear(4d, d) on a demo tensor or your own file."""

import hashlib

import streamlit as st

import gelu_core
from gelu_core import tensor_io
from ui import ffn as view
from ui.frame import require_app_frame

require_app_frame()  # first of all: a deep link on a fresh server must run inside app.py's frame

MAX_D_MODEL = 1600  # GPT-2 XL's width, the largest of the family


@st.cache_resource(max_entries=4, show_spinner=False)
def seeded_block(d_model: int, seed: int):
    """One FeedForward per (d_model, seed) for the whole server; never mutated."""
    return gelu_core.FeedForward(d_model, seed=seed)


@st.cache_resource(max_entries=4, ttl=3600, show_spinner=False)
def file_tensors(digest: str, filename: str, _data: bytes, uploader: str = "input"):
    """The tensors of an uploaded file (load_tensors refuses anything unsafe), by content hash and uploader.

    Weights: a block wider than the lab runs is refused from the declared shapes, before the data is read.
    """
    check = gelu_core.check_block_shapes if uploader == "weights" else None
    return tensor_io.load_tensors_with_notes(_data, filename, check=check)


@st.cache_resource(max_entries=4, ttl=3600, show_spinner=False)
def file_block(digest: str, place: tuple, _tensors, _candidate):
    """A block built from a file's weights, by content hash and place in the state dict; never mutated."""
    return gelu_core.load_block(_tensors, _candidate)


@st.cache_resource(max_entries=3, ttl=900, show_spinner=False)
def lab(block_key: tuple, input_key: tuple, activation: str, compare: str, _block, _x):
    """run_lab for one (block, input, activation pair); results are read-only."""
    return gelu_core.run_lab(_block, _x, activation, compare)


def uploaded(file):
    """(digest, name, bytes) of an st.file_uploader value."""
    data = file.getvalue()
    return hashlib.sha256(data).hexdigest(), file.name, data


def match_width(width: int):
    st.session_state["ffn_d_model"] = width


gelu_core.use_cpu_threads()  # once per server process: one torch thread per CPU it may use
st.title("Feed-forward lab")
st.markdown(
    "After attention, every token in GPT-2 goes through a small two-layer network on its own. The first "
    "**Linear** layer widens the token's 768 numbers to 3072, the **activation** bends each of those numbers "
    "separately, and a second Linear layer folds them back to 768. Only the two Linear layers learn weights; "
    "the activation has none. Send a tensor through it and compare GELU with ReLU on the very same weights."
)

block_col, input_col = st.columns(2, gap="large")
with block_col:
    st.subheader("The block")
    source = st.segmented_control("Weights", view.WEIGHT_SOURCES, default=view.DEFAULTS["ffn_weights"],
                                  required=True, key="ffn_weights", bind="query-params",
                                  help="Random weights drawn like nn.Linear's own, or one block from a state dict.")
    a1, a2 = st.columns(2)
    activation = a1.selectbox("Activation", tuple(view.ACT_LABELS), format_func=view.ACT_LABELS.__getitem__,
                              index=tuple(view.ACT_LABELS).index(view.DEFAULTS["ffn_act"]), key="ffn_act",
                              bind="query-params", help="GPT-2 uses GELU's tanh form.")
    compare = a2.selectbox("Compared with", tuple(view.ACT_LABELS), format_func=view.ACT_LABELS.__getitem__,
                           index=tuple(view.ACT_LABELS).index(view.DEFAULTS["ffn_vs"]), key="ffn_vs",
                           bind="query-params", help="Runs on the same weights and the same input.")
    block = block_key = None
    if source == "Seeded":
        s1, s2 = st.columns(2)
        d_model = s1.number_input("d_model (features per token)", min_value=1, max_value=MAX_D_MODEL,
                                  value=view.DEFAULTS["ffn_d_model"], step=1, key="ffn_d_model",
                                  bind="query-params",
                                  help="768 is GPT-2 small; try 8 to read single numbers. Hidden width: 4 × this.")
        seed = s2.number_input("Weight seed", min_value=0, max_value=2**31 - 1, value=view.DEFAULTS["ffn_seed"],
                               step=1, key="ffn_seed", bind="query-params",
                               help="Same seed, same weights (and the same demo input).")
        block, block_key = seeded_block(int(d_model), int(seed)), ("seeded", int(d_model), int(seed))
    else:
        weights_file = st.file_uploader("A state dict with one feed-forward block", type=view.WEIGHT_TYPES,
                                        key="ffn_weights_file",
                                        help="GPT-2's mlp.c_fc / mlp.c_proj (Conv1D, stored transposed), "
                                             "nanoGPT's, fc1 / fc2, or chapter 4's layers.0 / layers.2.")
        if weights_file is None:
            st.info("Choose a file with the weights of one block, or switch back to seeded weights.")
        else:
            digest, name, data = uploaded(weights_file)
            try:
                tensors, _ = file_tensors(digest, name, data, "weights")
                found = gelu_core.find_blocks(tensors)
                if not found:
                    gelu_core.load_block(tensors)  # raises the message that lists the names it knows
                choice = found[0]
                if len(found) > 1:
                    choice = st.selectbox(f"This file holds {len(found)} blocks", found,
                                          format_func=lambda c: c.label, key="ffn_weights_block")
                loaded = file_block(digest, (choice.prefix, choice.first, choice.second), tensors, choice)
            except (gelu_core.TensorFileError, gelu_core.WeightsError) as err:
                st.error(str(err))
            else:
                block, block_key = loaded.block, ("file", digest, choice.prefix, choice.first)
                d_model = loaded.d_model
                st.caption(f"{choice.label}: d_model = {d_model:,}, hidden = {loaded.hidden:,}, "
                           f"read as {loaded.layout}.")
                for note in loaded.notes:
                    st.caption(f"Note: {note}.")
    flow_slot = st.container()  # the shape flow, once the input is known

with input_col:
    st.subheader("The input")
    input_source = st.segmented_control("Tokens", view.INPUT_SOURCES, default=view.DEFAULTS["ffn_input"],
                                        required=True, key="ffn_input", bind="query-params")
    x = input_key = None
    if input_source == "Demo":
        demo = st.selectbox("Demo shape (batch x tokens)", tuple(view.DEMO_SHAPES),
                            index=tuple(view.DEMO_SHAPES).index(view.DEFAULTS["ffn_demo"]), key="ffn_demo",
                            bind="query-params",
                            help="Standard-normal numbers, about what LayerNorm hands the block in GPT-2. "
                                 "8 x 1024 is eight full GPT-2 contexts.")
        st.caption("Seeded from the weight seed, so a link brings back the very same numbers.")
        if block is not None:
            batch, tokens = view.DEMO_SHAPES[demo]
            seed_for_demo = block_key[2] if block_key[0] == "seeded" else 0
            try:  # the whole run's size, before the input is drawn
                gelu_core.check_run_size(batch, tokens, block.d_model, block.hidden)
            except gelu_core.LabInputError as err:
                st.error(str(err))
            else:
                x = gelu_core.demo_input(block.d_model, seed_for_demo, batch, tokens)
                input_key = ("demo", block.d_model, seed_for_demo, batch, tokens)
    else:
        tensor_file = st.file_uploader(
            "Activations: one token (d_model), a sequence (tokens, d_model) or a batch (batch, tokens, d_model)",
            type=view.INPUT_TYPES,
            key="ffn_file",
            help=f"Up to {tensor_io.MAX_BYTES // 2**20} MB and {tensor_io.MAX_ELEMENTS:,} numbers. Files are read "
                 "as data only: a .pt is opened with torch.load(weights_only=True), never unpickled freely.")
        if tensor_file is None:
            st.info("Choose a file: activations you saved from your own model, as .pt, .npy, .npz, "
                    ".safetensors or .csv.")
        else:
            digest, name, data = uploaded(tensor_file)
            try:
                tensors, notes = file_tensors(digest, name, data)
            except gelu_core.TensorFileError as err:
                st.error(str(err))
            else:
                names = list(tensors)
                chosen = names[0]
                if len(names) > 1:
                    chosen = st.selectbox(f"This file holds {len(names)} tensors", names, key="ffn_tensor",
                                          format_func=lambda n: f"{n} {view.shape(tensors[n].shape)}")
                x, input_key = tensors[chosen], ("file", digest, chosen)
                st.caption(f"{chosen}: shape {view.shape(x.shape)}, {str(x.dtype).removeprefix('torch.')}.")
                for note in notes:
                    st.caption(note)

if block is None or x is None:
    st.stop()

try:
    tokens_in = gelu_core.as_tokens(x, block.d_model, block.hidden)
except gelu_core.WidthMismatch as err:
    if source == "Seeded" and err.width <= MAX_D_MODEL:
        st.warning(f"{err} Set d_model to {err.width:,} to run it through a block of that width.")
        st.button(f"Set d_model to {err.width:,}", on_click=match_width, args=(err.width,), key="ffn_match",
                  type="primary")
    elif source == "Seeded":
        st.error(f"{err} The lab builds blocks up to d_model = {MAX_D_MODEL:,}.")
    else:
        st.error(f"{err} The weights in the file fix d_model; choose an input of that width.")
    st.stop()
except gelu_core.LabInputError as err:
    st.error(str(err))
    st.stop()

big = tokens_in.shape[0] * tokens_in.shape[1] >= 1024
try:
    with st.spinner(f"Running {view.shape(tokens_in.shape)} through the block…", show_time=big):
        result = lab(block_key, input_key, activation, compare, block, tokens_in)
except gelu_core.LabInputError as err:
    st.error(str(err))
    st.stop()

a, b = result.a, result.b
short_a, short_b = view.ACT_LABELS[a.name], view.ACT_LABELS[b.name]
with flow_slot:
    st.markdown("**Shapes, and trainable parameters per layer**")
    st.code(view.flow_text(result.input_shape, result.flow, result.total_params), language=None)
    if tuple(x.shape) != result.input_shape:
        st.caption(f"The input {view.shape(x.shape)} was read as {view.shape(result.input_shape)}: "
                   "(batch, tokens, d_model).")

st.subheader("What the activation changes")
m1, m2, m3, m4 = st.columns(4)
m1.metric("Hidden values below 0", view.share(result.negative_share),
          help=f"{view.count(result.negative_count)} of {view.count(result.hidden_numel)} pre-activations h < 0.")
m2.metric(f"{short_b} sets to 0", view.count(b.zeroed),
          help="Hidden values with h < 0 whose output is exactly 0.")
m3.metric(f"{short_a} keeps of h < 0", view.share(a.negative_kept),
          help="Σ|act(h)| over h < 0, as a share of Σ|h| over h < 0: how much negative signal survives. "
               "ReLU keeps 0%.")
m4.metric("Outputs differ by, at most", view.number(result.max_abs_diff),
          help=f"Largest |{a.label} output − {b.label} output| over every output number; "
               f"the mean is {view.number(result.mean_abs_diff)}.")
t1, t2 = st.columns([3, 2], gap="large")
t1.markdown(view.comparison_table(result))
t2.markdown(
    "For a negative h, ReLU returns exactly 0: that part of the signal is gone. GELU returns h·Φ(h), and "
    "Φ(h) < ½ there, so a negative value comes out smaller but keeps its sign; the closer h is to zero, "
    "the more of it survives. On the positive side GELU trims small values a little too (Φ(h) < 1), "
    "where ReLU passes every positive h unchanged."
)
t2.caption("Negative signal kept: Σ|act(h)| ÷ Σ|h| over the hidden values with h < 0. "
           "Positive signal kept: Σ act(h) ÷ Σ h over h ≥ 0.")

left, right = st.columns(2, gap="large")
with left:
    st.markdown("**What the activation receives**")
    st.plotly_chart(view.hidden_histogram(result.hidden_hist.edges, result.hidden_hist.counts,
                                          result.negative_share),
                    theme="streamlit", config={"displayModeBar": False})
    st.caption("The hidden pre-activations h = c_fc(x). ReLU turns every bar left of zero into 0; "
               "GELU multiplies each h by Φ(h), so a negative h shrinks but a trace of it survives.")
with right:
    st.markdown("**What it hands on**")
    st.plotly_chart(view.post_histogram(a.post_hist.edges, a.post_hist.counts, b.post_hist.counts,
                                        key_a=a.name, label_a=a.label, key_b=b.name, label_b=b.label),
                    theme="streamlit", config={"displayModeBar": False})
    st.caption("Both outputs on the same bins; counts on a log scale, because ReLU piles half of all "
               "values onto exactly 0.")

st.markdown("**Each token's output**")
profiles = [(r.label, r.name, gelu_core.token_profile(r.token_norms)) for r in ((a, b) if a is not b else (a,))]
batch, tokens = result.input_shape[:2]
st.plotly_chart(view.token_norms_figure(profiles[0][2].position, [(lbl, key, p.mean) for lbl, key, p in profiles],
                                        bucket=profiles[0][2].bucket, tokens=tokens, batch=batch),
                theme="streamlit", config={"displayModeBar": False})
st.caption(f"The length ‖c_proj(act(h))‖ of each output token. Mean |Δ| between the two outputs: "
           f"{view.number(result.mean_abs_diff)}, against a mean |output| of {view.number(result.mean_abs_output)}.")

st.markdown("**Download the output** (" + a.label + ", shape " + view.shape(a.output.shape) + ")")
d1, d2, _ = st.columns([1, 1, 3])
stem = f"ffn_{a.name}_{'x'.join(str(n) for n in a.output.shape)}"
d1.download_button("Download .npy", data=lambda: gelu_core.array_bytes(a.output, "npy"), file_name=stem + ".npy",
                   mime="application/octet-stream", on_click="ignore", icon=":material/download:", key="ffn_npy")
d2.download_button("Download .pt", data=lambda: gelu_core.array_bytes(a.output, "pt"), file_name=stem + ".pt",
                   mime="application/octet-stream", on_click="ignore", icon=":material/download:", key="ffn_pt")
