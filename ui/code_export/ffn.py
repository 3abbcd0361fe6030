"""The feed-forward lab's script: GPT-2's block seeded as the page seeds it (or read from the student's files), the
two activations on the same hidden values, the page's metrics and tables, and the backward pass if it is on.

What the page computes with is gelu_core's own code, printed: the seeded weights and the demo input
(``seeded_init``, ``lab._demo``), a file's layout and its weights into the layers (``weights._layout``,
``_set_weights``), the activation modules (``activation_module``), the forward's statistics (``lab._input_sides``,
``_output_sides``, ``_kept``: the page adds them up over row chunks of 2**20 values, the script takes every row at
once, the same numbers for an input of one chunk) and the backward step (``gradients.backward_chunk``).  What the
template writes: the block's wiring (c_fc once, each activation, c_proj), the reading of a student's file (the page
reads uploads with gelu_core.tensor_io's guarded parser, not code for a notebook) and the print lines.  An
uploaded file's name is not among the control values: the script names it in a variable at its top, for the
student to set.
"""

from __future__ import annotations

from gelu_core.activations import ACTIVATIONS
from ui.code_export.common import Values, fill, settings, source
from ui.controls import DEMO_SHAPES, FFN
from ui.format import count, share, sig


def modules(names, label: str = "short") -> tuple[str, list[type]]:
    """The activations' dict, name -> module, as gelu_core.ffn.activation_module builds each one (PyTorch's own
    module, written as it prints itself), and the source of any module of gelu_core's own among them."""
    from gelu_core.ffn import activation_module  # torch: imported when the page asks

    lines, own = [], []
    for name in dict.fromkeys(names):
        module = activation_module(name)
        if type(module).__module__.startswith("torch."):
            lines.append(f'    "{getattr(ACTIVATIONS[name], label)}": torch.nn.{module!r},')
        else:
            lines.append(f'    "{getattr(ACTIVATIONS[name], label)}": {type(module).__name__}(),')
            own.append(type(module))
    return "\n".join(lines), own


HEAD = '''
"""GELU Explorer, Feed-forward lab: GPT-2's block Linear(d, 4d) -> activation -> Linear(4d, d), run with
$first and with $second on the same weights and the same input."""

$imports

# GELU Explorer's own code (gelu_core, and the number formats of ui/format.py), as the page runs it
$code


first, second = "$first", "$second"  # the activation, and the one it is compared with
activations = {  # the modules the page runs; an activation owns no weights
$modules
}
'''

SEEDED = '''
config = {
    "d_model": $d_model,  # features per token (768: GPT-2 small); the hidden layer is 4 x d_model wide
    "seed": $seed,  # seeds the weights, and (plus 1) the demo input
}
d_model, hidden = config["d_model"], 4 * config["d_model"]

# The block, named as in GPT-2, seeded as the page seeds it
c_fc = torch.nn.Linear(d_model, hidden)  # (..., d) -> (..., 4d)
c_proj = torch.nn.Linear(hidden, d_model)  # (..., 4d) -> (..., d)
seeded_init((c_fc, c_proj), config["seed"])
'''

FILE_WEIGHTS = '''
WEIGHTS_FILE = "weights.pt"  # the state dict you uploaded on the page (a .pt): put its path here
FIRST, SECOND = "c_fc", "c_proj"  # the block's two layers as the file names them, e.g. "h.0.mlp.c_fc"

state = torch.load(WEIGHTS_FILE, weights_only=True)  # data only: no code in the file runs
w_fc, w_proj = state[FIRST + ".weight"], state[SECOND + ".weight"]
b_fc, b_proj = state.get(FIRST + ".bias"), state.get(SECOND + ".bias")
# nn.Linear stores a layer as (out, in), GPT-2's Conv1D as (in, out): told apart by the shapes, as the page does
found, _ = layout(tuple(w_fc.shape), None if b_fc is None else tuple(b_fc.shape), FIRST)
if found == CONV1D:
    w_fc, w_proj = w_fc.T, w_proj.T
hidden, d_model = w_fc.shape
c_fc = torch.nn.Linear(d_model, hidden)  # (..., d) -> (..., 4d)
c_proj = torch.nn.Linear(hidden, d_model)  # (..., 4d) -> (..., d)
set_weights(c_fc, c_proj, w_fc, w_proj, b_fc, b_proj)
'''

DEMO = '''
# The demo input: standard-normal numbers, about what LayerNorm hands the block, from a generator of its own
batch, tokens = $batch, $tokens
x = demo(d_model, $demo_seed, batch, tokens)  # (B, T, d)
'''

UPLOAD = '''
INPUT_FILE = "activations.npy"  # the file you uploaded on the page: put its path here (.npy, .npz, .pt or .csv)


def load(path):
    """The file's first tensor (where a file holds several, the page lets you choose: take that one)."""
    if path.endswith(".npy"):
        return torch.from_numpy(np.load(path))
    if path.endswith(".npz"):
        with np.load(path) as archive:
            return torch.from_numpy(archive[archive.files[0]])
    if path.endswith(".csv"):
        return torch.from_numpy(np.loadtxt(path, delimiter=",", ndmin=2))  # a header row: add skiprows=1
    loaded = torch.load(path, weights_only=True)  # a tensor, or a dict of them; data only, no code runs
    return loaded if isinstance(loaded, torch.Tensor) else next(iter(loaded.values()))


x = load(INPUT_FILE)
x = x.reshape((1,) * (3 - x.dim()) + tuple(x.shape)).to(torch.float32)  # (d,) or (T, d) -> (B, T, d), float32
'''

FORWARD = '''
# Forwards: c_fc runs once, and each activation gets the very same hidden values h
with torch.no_grad():
    h = c_fc(x)  # (B, T, d) -> (B, T, 4d): what the activation receives
    rows = h.reshape(-1, hidden)  # (B·T, 4d): a row per token
    negative, negative_in, positive_in = input_sides(rows)
    runs = {}
    for name, activation in activations.items():
        y = activation(h)  # (B, T, 4d), shape kept
        output = c_proj(y)  # (B, T, 4d) -> (B, T, d)
        zeroed, negative_out, positive_out = output_sides(rows, y.reshape(-1, hidden))
        runs[name] = {
            "output": output,
            "zeroed": zeroed,  # negative h made exactly 0
            # how much signal survives: sum |act(h)| / sum |h| where h < 0, sum act(h) / sum h where h >= 0
            "negative kept": kept(negative_out, negative_in),
            "positive kept": kept(positive_out, positive_in),
            "range": torch.aminmax(y),
            "mean norm": torch.linalg.vector_norm(output, dim=-1).mean(dtype=torch.float64),  # mean ||y|| per token
        }

print(f"Hidden values below 0: {share(negative / rows.numel())}")
print(f"{second} sets to 0: {count(runs[second]['zeroed'])}")
print(f"{first} keeps of h < 0: {share(runs[first]['negative kept'])}")
print(f"Outputs differ by, at most: {sig((runs[first]['output'] - runs[second]['output']).abs().max())}")
for name, run in runs.items():
    print(name)
    print(f"  h < 0 set to exactly 0: {count(run['zeroed'])} of {count(negative)}")
    print(f"  negative signal kept: {share(run['negative kept'])}")
    print(f"  positive signal kept: {share(run['positive kept'])}")
    print(f"  act(h) from … to: {sig(run['range'][0], 3)} … {sig(run['range'][1], 3)}")
    print(f"  mean ‖output‖ per token: {sig(run['mean norm'])}")
'''

BACKWARD = '''
# Backwards: the loss L = ½ · mean(y²) over every output number, and the gradient dL/dh reaching each hidden value
print("Backwards")
for name, activation in activations.items():
    output = runs[name]["output"]  # (B, T, d)
    loss, grad_h = backward(c_proj, activation, rows, output.reshape(-1, d_model), output.numel())  # (B·T, 4d)
    zero = grad_h == 0  # where the activation's slope is 0, no gradient passes
    runs[name].update(
        loss=loss,
        zero=int(zero.sum()),
        dead=int(zero.all(dim=0).sum()),  # units that no token of this input sends a gradient
        grad_h=grad_h,
        grad_fc=grad_h.T @ x.reshape(-1, d_model),  # dL/dW of c_fc: (4d, B·T) @ (B·T, d)
    )

for name in dict.fromkeys((second, first)):
    print(f"{name}: gradient exactly 0: {share(runs[name]['zero'] / grad_h.numel())}")
print(f"Units dead for this input ({second} / {first}): {runs[second]['dead']} / {runs[first]['dead']}")
for name, run in runs.items():
    zero_share = share(run["zero"] / grad_h.numel())
    print(name)
    print(f"  L = ½ · mean(y²): {sig(run['loss'])}")
    print(f"  dL/dh exactly 0: {count(run['zero'])} of {count(grad_h.numel())} ({zero_share})")
    print(f"  units dead for this input: {count(run['dead'])}")
    print(f"  mean |dL/dh|: {sig(total(run['grad_h'].abs()) / grad_h.numel())}")
    print(f"  largest |dL/dh|: {sig(run['grad_h'].abs().max())}")
    print(f"  ‖dL/dW‖ reaching c_fc: {sig(torch.linalg.vector_norm(run['grad_fc'].double()))}")
'''


def script(values: Values) -> str:
    from gelu_core import ffn, gradients, lab, weights  # torch: imported when the page asks

    v = settings(FFN, values)
    first, second = (ACTIVATIONS[v[key]].short for key in ("act", "vs"))
    listed, own = modules((v["act"], v["vs"]))
    upload, seeded = v["input"] != "Demo", v["weights"] == "Seeded"
    parts = [HEAD, SEEDED if seeded else FILE_WEIGHTS, UPLOAD if upload else DEMO, FORWARD, *[BACKWARD] * v["backward"]]
    batch, tokens = DEMO_SHAPES[v["demo"]]
    printed = {  # the script's name -> the function the page runs (looked up now: a test may swap one)
        **({"seeded_init": ffn.seeded_init} if seeded
           else {"layout": weights._layout, "set_weights": weights._set_weights}),
        **({} if upload else {"demo": lab._demo}),
        "input_sides": lab._input_sides, "output_sides": lab._output_sides, "kept": lab._kept,
        **({"backward": gradients.backward_chunk, "total": gradients._total} if v["backward"] else {}),
    }
    return fill("\n\n".join(part.strip() for part in parts), first=first, second=second, modules=listed,
                code=source(*own, share, sig, count, names=printed),
                d_model=int(v["d_model"]), seed=int(v["seed"]), batch=batch, tokens=tokens,
                demo_seed='config["seed"]' if seeded else "0")  # a file's block: seed 0, as the page
