"""The feed-forward lab page, run from app.py in AppTest: what it shows against a hand computation in the test.

Reference: the block written out with torch.nn.functional (linear, and each activation's own function: gelu, relu,
silu) on the page's own weights (FeedForward(d, seed) draws them; the uploads are files made here), statistics in
float64 numpy.
Tolerance: each number as displayed, i.e. within half a unit of its last shown digit (plus 1e-9).
"""

from __future__ import annotations

import io
import os
import pickle
import re
import zipfile

import numpy as np
import pytest
import torch

from gelu_core import FeedForward, demo_input
from tests.conftest import chart_spec, functional, show_me

PAGE = "pages/ffn.py"


def answer(form: str = "tanh") -> tuple[str, str]:
    """The question's right choice and a number its reveal must quote: ReLU zeroes every negative hidden value of
    the seeded (2, 3, 768) demo, by hand in float64 here (``by_hand``): about half of 18,432."""
    want = by_hand(demo_input(768, 0), *seeded(768))
    share = want["zeroed_b"] / want["hidden_numel"]
    return ("about half" if 0.35 < share < 0.65 else "?"), f"{want['hidden_numel']:,}"


def open_lab(app, **params):
    """The lab with these URL values, past its question ("Show me")."""
    for key, value in params.items():
        app.query_params[key] = str(value)
    app.switch_page(PAGE)
    return show_me(app.run())


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def flow_of(at) -> str:
    """The shape flow's text: the page draws it as a plain <pre> (ui.ffn.flow_html, through st.html), not with
    st.code, whose syntax highlighter the browser would have to fetch."""
    import html

    assert not at.code, "the shape flow is a plain <pre>; st.code would load the syntax highlighter"
    flows = [h.value for h in at.html if 'class="gelu-flow"' in h.value]
    assert len(flows) == 1, [h.value[:80] for h in at.html]
    return html.unescape(re.sub(r"<[^>]+>", "", flows[0]))


def value_of(text: str) -> float:
    """'50.1%' -> 50.1, '9,233' -> 9233, '−0.3073' -> -0.3073."""
    return float(text.replace(",", "").replace("%", "").replace("\u2212", "-"))


def assert_shown(text: str, want: float):
    """The displayed number equals ``want`` to the digits shown (half a unit of the last one)."""
    digits = text.replace(",", "").replace("%", "").split("e")[0]
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    assert abs(value_of(text) - want) <= 0.5 * 10.0 ** -decimals + 1e-9, (text, want)


def by_hand(x: torch.Tensor, w1, b1, w2, b2, act="gelu_tanh", vs="relu") -> dict:
    """The lab's headline numbers, written out: x (B, T, d) -> h (B, T, 4d) -> act -> (B, T, d)."""
    h = torch.nn.functional.linear(x, w1, b1)
    ya, yb = functional(act)(h), functional(vs)(h)  # torch.nn.functional, not the lab's activation_module
    out_a = torch.nn.functional.linear(ya, w2, b2).double().numpy()
    out_b = torch.nn.functional.linear(yb, w2, b2).double().numpy()
    h64, ya64, yb64 = h.double().numpy(), ya.double().numpy(), yb.double().numpy()
    neg = h64 < 0
    return dict(
        negative_pct=100.0 * neg.mean(),
        negative_count=int(neg.sum()),
        zeroed_b=int((neg & (yb64 == 0)).sum()),
        kept_a_pct=100.0 * np.abs(ya64[neg]).sum() / np.abs(h64[neg]).sum(),
        max_diff=np.abs(out_a - out_b).max(),
        hidden_numel=h64.size,
    )


def seeded(d: int, seed: int = 0):
    block = FeedForward(d, seed=seed)
    return [p.detach() for p in (block.c_fc.weight, block.c_fc.bias, block.c_proj.weight, block.c_proj.bias)]


def check_headline(at, want: dict, act_label="GELU tanh", vs_label="ReLU"):
    shown = metrics(at)
    assert_shown(shown["Hidden values below 0"], want["negative_pct"])
    assert value_of(shown[f"{vs_label} sets to 0"]) == want["zeroed_b"]
    assert_shown(shown[f"{act_label} keeps of h < 0"], want["kept_a_pct"])
    assert_shown(shown["Outputs differ by, at most"], want["max_diff"])


def npy_bytes(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_demo_at_gpt2_small(app):
    """Defaults: d_model 768, seed 0, the (2, 3, 768) demo; GELU tanh against ReLU."""
    at = open_lab(app)
    assert not at.exception and not at.error
    x = demo_input(768, 0)
    check_headline(at, by_hand(x, *seeded(768)))
    flow = flow_of(at)
    assert "(2, 3, 768)" in flow and "(2, 3, 3072)" in flow
    # 768·3072 + 3072, 3072·768 + 768, and their sum (arithmetic here, not read from the code)
    for n in (768 * 3072 + 3072, 3072 * 768 + 768, 768 * 3072 + 3072 + 3072 * 768 + 768):
        assert f"{n:,}" in flow
    assert "4,722,432" in flow
    hidden = chart_spec(at, 0)
    assert sum(sum(t["y"]) for t in hidden["data"]) == 2 * 3 * 3072  # every hidden value counted once
    assert len(at.get("plotly_chart")) == 4  # hidden, outputs, tokens; the backward pass's gradient sizes


def test_the_backward_pass_against_autograd(app):
    """Reference: torch autograd on the same seeded block and demo input, L = ½·mean(y²) over every output number;
    the shares of hidden values with dL/dh exactly 0 and the units dead for this input, counted here."""
    at = open_lab(app, ffn_d_model=16, ffn_seed=2, ffn_demo="1x16")
    assert not at.exception and not at.error
    block, x = FeedForward(16, seed=2), demo_input(16, 2, 1, 16)
    counts = {}
    for name in ("gelu_tanh", "relu"):
        h = torch.nn.functional.linear(x, block.c_fc.weight, block.c_fc.bias).detach().requires_grad_(True)
        y = torch.nn.functional.linear(functional(name)(h), block.c_proj.weight, block.c_proj.bias)
        (grad,) = torch.autograd.grad(0.5 * (y * y).mean(), h)
        zero = grad == 0
        counts[name] = (100.0 * zero.double().mean().item(), int(zero.reshape(-1, 64).all(dim=0).sum()))
    shown = metrics(at)
    assert_shown(shown["ReLU: gradient exactly 0"], counts["relu"][0])
    assert_shown(shown["GELU tanh: gradient exactly 0"], counts["gelu_tanh"][0])
    assert shown["Units dead for this input (ReLU / GELU tanh)"] == f"{counts['relu'][1]} / {counts['gelu_tanh'][1]}"
    at.toggle(key="ffn_backward").set_value(False).run()
    assert len(at.get("plotly_chart")) == 3 and "ReLU: gradient exactly 0" not in metrics(at)


def test_good_npy_upload(app):
    """A (2, 4, 8) float32 .npy made here, through a d_model = 8 block with seed 5, GELU exact vs ReLU."""
    x = np.random.default_rng(1).standard_normal((2, 4, 8)).astype(np.float32)
    at = open_lab(app, ffn_d_model=8, ffn_seed=5, ffn_input="Upload", ffn_act="GELU exact")
    at.file_uploader(key="ffn_file").set_value(("acts.npy", npy_bytes(x), "application/octet-stream")).run()
    assert not at.exception and not at.error
    check_headline(at, by_hand(torch.from_numpy(x), *seeded(8, 5), act="gelu"), act_label="GELU exact")
    assert "(2, 4, 8)" in flow_of(at)


def test_the_running_line_is_still_words_and_gone_once_the_result_is_drawn(app):
    """While the lab runs it shows still words (a status) and, for a big run, a seconds count (a timer, not a
    status: a reader hears the words once), not st.spinner; once the result is drawn, neither is left."""
    from ui.ffn import running_html

    line = running_html("Running <(1, 2)> & back…", timed=True)
    assert "<span role='status'>Running &lt;(1, 2)&gt; &amp; back…</span>" in line
    assert "role='timer'" in line and "setInterval" in line and "isConnected" in line  # stops once it is gone
    assert "<script>" not in running_html("Running", timed=False)

    at = open_lab(app, ffn_d_model=8, ffn_seed=5, ffn_demo="8x1024")
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 4
    assert not [h.value for h in at.html if "gelu-running" in h.value]
    assert not at.get("spinner")


class Exploit:
    """Unpickling this would create the marker file."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def malicious_pt(marker) -> bytes:
    """A torch.save zip whose data.pkl is replaced by a pickle that creates ``marker`` when loaded."""
    buffer = io.BytesIO()
    torch.save({"x": torch.zeros(2)}, buffer)
    original = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for info in original.infolist():
            data = original.read(info.filename)
            if info.filename.endswith("data.pkl"):
                data = pickle.dumps(Exploit(str(marker)), protocol=2)
            z.writestr(info, data)
    return out.getvalue()


def test_malicious_pt_is_refused_without_running(app, tmp_path):
    marker = tmp_path / "pwned"
    at = open_lab(app, ffn_d_model=8, ffn_input="Upload")
    at.file_uploader(key="ffn_file").set_value(("acts.pt", malicious_pt(marker), "application/octet-stream")).run()
    assert not at.exception
    assert len(at.error) == 1 and "Traceback" not in at.error[0].value
    assert not os.path.exists(marker)
    assert not at.metric  # nothing ran


def test_wrong_width_offers_to_match(app):
    x = np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32)  # 3 tokens of width 5
    at = open_lab(app, ffn_d_model=8, ffn_input="Upload")
    at.file_uploader(key="ffn_file").set_value(("acts.npy", npy_bytes(x), "application/octet-stream")).run()
    assert not at.exception and not at.metric
    assert "5 features" in at.warning[0].value and "d_model = 8" in at.warning[0].value
    at.button(key="ffn_match").click().run()
    assert not at.exception and not at.warning
    assert at.number_input(key="ffn_d_model").value == 5
    check_headline(at, by_hand(torch.from_numpy(x).reshape(1, 3, 5), *seeded(5)))


def test_nonfinite_input_is_reported(app):
    x = np.ones((4, 8), dtype=np.float32)
    x[2, 1], x[3, 0] = np.nan, -np.inf
    at = open_lab(app, ffn_d_model=8, ffn_input="Upload")
    at.file_uploader(key="ffn_file").set_value(("acts.npy", npy_bytes(x), "application/octet-stream")).run()
    assert not at.exception and not at.metric
    message = at.error[0].value
    assert "1 NaN" in message and "1 -inf" in message and "first: token 2" in message


def test_file_with_several_tensors_offers_a_choice(app):
    buffer = io.BytesIO()
    np.savez(buffer, first=np.zeros((2, 8), np.float32), second=np.full((1, 3, 8), 0.5, np.float32))
    at = open_lab(app, ffn_d_model=8, ffn_input="Upload")
    at.file_uploader(key="ffn_file").set_value(("acts.npz", buffer.getvalue(), "application/octet-stream")).run()
    assert at.selectbox(key="ffn_tensor").options == ["first (2, 8)", "second (1, 3, 8)"]
    at.selectbox(key="ffn_tensor").set_value("second").run()
    assert not at.exception
    check_headline(at, by_hand(torch.full((1, 3, 8), 0.5), *seeded(8)))


def test_gpt2_conv1d_weights_from_a_file(app):
    """A GPT-2 style state dict (Conv1D: c_fc.weight is (d, 4d)); the block must compute x @ W + b."""
    g = torch.Generator().manual_seed(7)
    sd = {
        "h.0.mlp.c_fc.weight": torch.randn(8, 32, generator=g) * 0.3,
        "h.0.mlp.c_fc.bias": torch.randn(32, generator=g),
        "h.0.mlp.c_proj.weight": torch.randn(32, 8, generator=g) * 0.3,
        "h.0.mlp.c_proj.bias": torch.randn(8, generator=g),
    }
    buffer = io.BytesIO()
    torch.save(sd, buffer)
    at = open_lab(app, ffn_weights="File", ffn_demo="1x16")
    at.file_uploader(key="ffn_weights_file").set_value(("gpt2.pt", buffer.getvalue(), "application/octet-stream"))
    at.run()
    assert not at.exception and not at.error
    assert any("Conv1D" in c.value for c in at.caption)
    x = demo_input(8, 0, 1, 16)  # weights from a file: the demo uses seed 0
    w = [sd["h.0.mlp.c_fc.weight"].T, sd["h.0.mlp.c_fc.bias"], sd["h.0.mlp.c_proj.weight"].T, sd["h.0.mlp.c_proj.bias"]]
    check_headline(at, by_hand(x, *w))


def test_weights_file_without_a_block_says_what_it_expected(app):
    buffer = io.BytesIO()
    torch.save({"encoder.weight": torch.zeros(4, 4)}, buffer)
    at = open_lab(app, ffn_weights="File")
    at.file_uploader(key="ffn_weights_file").set_value(("w.pt", buffer.getvalue(), "application/octet-stream")).run()
    assert not at.exception
    assert "c_fc" in at.error[0].value


def test_query_parameters_open_that_view(app):
    at = open_lab(app, ffn_d_model=64, ffn_seed=3, ffn_act="SiLU", ffn_vs="GELU exact", ffn_demo="1x16")
    assert not at.exception
    assert at.number_input(key="ffn_d_model").value == 64
    assert at.number_input(key="ffn_seed").value == 3
    assert at.selectbox(key="ffn_act").value == "silu" and at.selectbox(key="ffn_vs").value == "gelu"
    assert "(1, 16, 64)" in flow_of(at)
    w = seeded(64, 3)
    want = by_hand(demo_input(64, 3, 1, 16), *w, act="silu", vs="gelu")
    shown = metrics(at)
    assert_shown(shown["SiLU keeps of h < 0"], want["kept_a_pct"])
    assert_shown(shown["Outputs differ by, at most"], want["max_diff"])


@pytest.mark.parametrize("key, bad", [("ffn_d_model", "100000"), ("ffn_d_model", "abc"), ("ffn_act", "gelu_fast"),
                                      ("ffn_demo", "9x9")])
def test_bad_query_value_falls_back_to_default(app, key, bad):
    at = open_lab(app, **{key: bad, "ffn_d_model": 8} if key != "ffn_d_model" else {key: bad})
    assert not at.exception
    defaults = {"ffn_d_model": 768, "ffn_act": "gelu_tanh", "ffn_demo": "2x3"}
    widget = at.number_input(key=key) if key == "ffn_d_model" else at.selectbox(key=key)
    assert widget.value == defaults[key]
    assert re.search(r"\(2, 3, \d+\)", flow_of(at))


def test_same_activation_on_both_sides(app):
    """Comparing GELU tanh with itself: one column, one line, and no difference at all."""
    at = open_lab(app, ffn_d_model=8, ffn_vs="GELU tanh")
    assert not at.exception
    assert metrics(at)["Outputs differ by, at most"] == "0.000"
    assert len(chart_spec(at, 2)["data"]) == 1 and len(chart_spec(at, 1)["data"]) == 1


def test_weights_file_fixes_d_model(app):
    """With weights from a file, an input of another width gets a message, not an offer to change d_model."""
    buffer = io.BytesIO()
    torch.save(FeedForward(8, seed=1).state_dict(), buffer)
    at = open_lab(app, ffn_weights="File", ffn_input="Upload")
    at.file_uploader(key="ffn_weights_file").set_value(("w.pt", buffer.getvalue(), "application/octet-stream"))
    at.file_uploader(key="ffn_file").set_value(("x.npy", npy_bytes(np.zeros((2, 6), np.float32)), "application/x"))
    at.run()
    assert not at.exception and not [b for b in at.button if b.key not in ("poll_start", "poll_join")]  # the class poll
    assert "6 features" in at.error[0].value and "file fix" in at.error[0].value


@pytest.mark.parametrize("act, vs", [("SiLU", "Leaky ReLU"), ("GELU tanh", "ReLU")])
def test_the_words_follow_the_chosen_pair(app, act, vs):
    """Reference: the pair on screen; ReLU is the only one of these that sets every h < 0 to exactly 0."""
    at = open_lab(app, ffn_d_model=8, ffn_act=act, ffn_vs=vs)
    assert not at.exception and not at.error
    prose = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    assert f"**{act}**" in prose and f"**{vs}**" in prose
    zeroes = vs == "ReLU"
    notes = [m.value for m in at.markdown if m.value.startswith(f"**{act}**")]
    assert len(notes) == 1 and f"**{vs}**" in notes[0]
    assert ("Φ(h)" in notes[0] or "gate(h)" in notes[0]) == act.startswith("GELU")  # GELU explained only if shown
    legend = [t["name"] for t in chart_spec(at, 0)["data"]]
    assert any(name.endswith("ReLU outputs 0") for name in legend) == zeroes
    assert ("onto exactly 0" in prose) == zeroes
    tokens = chart_spec(at, 2)["layout"]["xaxis"]
    assert tokens["tickformat"] == "d"  # whole tokens
    assert ("Dotted lines mark where each sequence" in prose) == (at.selectbox(key="ffn_demo").value == "2x3")
