"""The feed-forward lab's script: GPT-2's block seeded as the page seeds it (or read from the student's files), the
two activations on the same hidden values, the page's metrics and tables, and the backward pass if it is on.

The seeded weights, the demo input, a file's layout and the activation modules come from gelu_core's own code
(``seeded_init``, ``lab._demo``, ``weights._layout``, ``activation_module``), so the script holds the page's numbers
bit for bit.  An uploaded file's name is not among the control values: the script names it in a variable at its
top, for the student to set.
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
with torch.no_grad():
    c_fc.weight.copy_(w_fc)
    c_proj.weight.copy_(w_proj)
    c_fc.bias.copy_(b_fc if b_fc is not None else torch.zeros(hidden))  # a missing bias is 0
    c_proj.bias.copy_(b_proj if b_proj is not None else torch.zeros(d_model))
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
    negative = h < 0  # (B, T, 4d)
    runs = {}
    for name, activation in activations.items():
        y = activation(h)  # (B, T, 4d), shape kept
        output = c_proj(y)  # (B, T, 4d) -> (B, T, d)
        runs[name] = {
            "output": output,
            "zeroed": (negative & (y == 0)).sum(),  # negative h made exactly 0
            # how much signal survives: sum |act(h)| / sum |h| where h < 0, sum act(h) / sum h where h >= 0
            "negative kept": y[negative].double().abs().sum() / h[negative].double().abs().sum(),
            "positive kept": y[~negative].double().sum() / h[~negative].double().sum(),
            "range": (y.min(), y.max()),
            "mean norm": torch.linalg.vector_norm(output, dim=-1).double().mean(),  # mean over tokens of ||y||
        }

print(f"Hidden values below 0: {share(negative.double().mean())}")
print(f"{second} sets to 0: {count(runs[second]['zeroed'])}")
print(f"{first} keeps of h < 0: {share(runs[first]['negative kept'])}")
print(f"Outputs differ by, at most: {sig((runs[first]['output'] - runs[second]['output']).abs().max())}")
for name, run in runs.items():
    print(name)
    print(f"  h < 0 set to exactly 0: {count(run['zeroed'])} of {count(negative.sum())}")
    print(f"  negative signal kept: {share(run['negative kept'])}")
    print(f"  positive signal kept: {share(run['positive kept'])}")
    print(f"  act(h) from … to: {sig(run['range'][0], 3)} … {sig(run['range'][1], 3)}")
    print(f"  mean ‖output‖ per token: {sig(run['mean norm'])}")
'''

BACKWARD = '''
# Backwards: the loss L = ½ · mean(y²) over every output number, and the gradient dL/dh reaching each hidden value
print("Backwards")
for name, activation in activations.items():
    h_in = h.detach().requires_grad_()  # (B, T, 4d)
    y = c_proj(activation(h_in))  # (B, T, d)
    loss = 0.5 * y.square().sum() / y.numel()
    (grad_h,) = torch.autograd.grad(loss, h_in)  # (B, T, 4d): 0 wherever the activation's slope is 0
    zero = grad_h == 0
    runs[name].update(
        loss=loss.detach(),
        zero=zero.sum(),
        zero_share=zero.double().mean(),
        dead=zero.reshape(-1, hidden).all(dim=0).sum(),  # units that no token of this input sends a gradient
        grad_h=grad_h,
        grad_fc=grad_h.reshape(-1, hidden).T @ x.reshape(-1, d_model),  # dL/dW of c_fc: (4d, B·T) @ (B·T, d)
    )

for name in dict.fromkeys((second, first)):
    print(f"{name}: gradient exactly 0: {share(runs[name]['zero_share'])}")
print(f"Units dead for this input ({second} / {first}): {int(runs[second]['dead'])} / {int(runs[first]['dead'])}")
for name, run in runs.items():
    print(name)
    print(f"  L = ½ · mean(y²): {sig(run['loss'])}")
    print(f"  dL/dh exactly 0: {count(run['zero'])} of {count(run['grad_h'].numel())} ({share(run['zero_share'])})")
    print(f"  units dead for this input: {count(run['dead'])}")
    print(f"  mean |dL/dh|: {sig(run['grad_h'].abs().double().mean())}")
    print(f"  largest |dL/dh|: {sig(run['grad_h'].abs().max())}")
    print(f"  ‖dL/dW‖ reaching c_fc: {sig(torch.linalg.vector_norm(run['grad_fc'].double()))}")
'''


def script(values: Values) -> str:
    from gelu_core.ffn import seeded_init  # torch: imported when the page asks, as the page's
    from gelu_core.lab import _demo
    from gelu_core.weights import _layout

    v = settings(FFN, values)
    first, second = (ACTIVATIONS[v[key]].short for key in ("act", "vs"))
    listed, own = modules((v["act"], v["vs"]))
    upload, seeded = v["input"] != "Demo", v["weights"] == "Seeded"
    parts = [HEAD, SEEDED if seeded else FILE_WEIGHTS, UPLOAD if upload else DEMO, FORWARD, *[BACKWARD] * v["backward"]]
    batch, tokens = DEMO_SHAPES[v["demo"]]
    return fill("\n\n".join(part.strip() for part in parts), first=first, second=second, modules=listed,
                code=source(seeded_init if seeded else _layout, *own, share, sig, count,
                            names={} if upload else {"demo": _demo}),
                d_model=int(v["d_model"]), seed=int(v["seed"]), batch=batch, tokens=tokens,
                demo_seed='config["seed"]' if seeded else "0")  # a file's block: seed 0, as the page
