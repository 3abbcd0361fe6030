"""The Approximations script, for the tab on screen: the largest error of the tanh and sigmoid forms, or what
PyTorch's GELU returns in each chosen dtype at the table's inputs."""

from __future__ import annotations

import inspect

import gelu_core
from gelu_core.activations import GATES
from gelu_core.analysis import worst_error
from ui.approximations import TABLE_X
from ui.code_export.common import Values, fill, number, settings, source
from ui.controls import APPROXIMATIONS, APPROXIMATIONS_VIEWS, DTYPES

FORMS = '''
"""GELU Explorer, Approximations: how far the tanh and sigmoid forms stray from exact GELU, at their worst."""

$imports

# GELU Explorer's own gates (gelu_core, here for float64 numpy): GELU(x) = x * gate(x) in every form
$code


def largest_error(gate):
    """(x, |x * gate(x) - x * phi(x)|) where that error peaks.  It is the same at -x and +x (GELU(x) - GELU(-x)
    = x in every form), so x >= 0 covers both sides."""
    def error(x):
        return np.abs(x * gate(x) - x * phi(x))

    grid = np.linspace($lo, $hi, $points)  # ($points,): find the peak on a grid, then refine it between its neighbours
    i = int(np.argmax(error(grid)))
    worst = minimize_scalar(lambda x: -error(x), bounds=(grid[i - 1], grid[i + 1]), method="bounded",
                            options={"xatol": 1e-12}).x
    return worst, error(worst)


for name, gate in (("tanh", tanh_gate), ("sigmoid", sigmoid_gate)):
    worst, error = largest_error(gate)
    print(f"Largest error, {name} form: {error:.2e} at x = ±{worst:.2f}")
'''

PYTORCH = '''
"""GELU Explorer, Approximations: what torch.nn.functional.gelu ($form form) returns in low precision, against the
float64 truth."""

$imports

approximate = "$approximate"  # PyTorch's name: "none" is the exact form, "tanh" GPT-2's
dtypes = [$dtypes]  # the number formats chosen on the page
# the table's inputs, each exact in every dtype: all the error below is the kernel's
x = torch.tensor([$inputs], dtype=torch.float64)  # ($count,)

# GELU Explorer's own code (gelu_core): the float64 reference, written so that nothing cancels (far left it is
# tiny, but not 0), and how it calls PyTorch's GELU
$code


exact = x * $gate(x)
table = {"x": x, "exact (float64)": exact}
for dtype in dtypes:
    name = str(dtype).removeprefix("torch.")
    value = torch_gelu(x.to(dtype), approximate).double()
    table[f"torch {name}"] = value
    table[f"rel. error {name}"] = torch.abs(value - exact) / torch.abs(exact)  # 1 where torch returns 0
if dtypes:
    ours = dtypes[0]  # this app's own result (gelu_core): the float64 truth rounded once to the dtype
    table[f"gelu_core {str(ours).removeprefix('torch.')}"] = exact.to(ours).double()

print("  ".join(f"{name:>11}" for name in table))
for row in zip(*table.values(), strict=True):
    cells = [f"{row[0]:.1f}"] + [f"{value:.4e}" for value in row[1:]]
    print("  ".join(f"{cell:>{max(11, len(name))}}" for name, cell in zip(table, cells, strict=True)))
'''


def script(values: Values) -> str:
    v = settings(APPROXIMATIONS, values)
    if v["view"] == APPROXIMATIONS_VIEWS[0]:
        names = {"phi": GATES["none"], "tanh_gate": GATES["tanh"], "sigmoid_gate": GATES["sigmoid"]}
        search = {k: p.default for k, p in inspect.signature(worst_error).parameters.items()}  # the page's own grid
        return fill(FORMS, lo=number(search["lo"]), hi=number(search["hi"]), points=search["points"],
                    code=source(backend="numpy", names=names))
    from gelu_core.frameworks import _torch_gelu  # torch: imported when this tab asks, as the page's

    order = [d for d in DTYPES if d in v["fw_dtypes"]]  # the page's order, whatever the order chosen
    gate = GATES[v["fw_form"]]
    return fill(PYTORCH, form=gelu_core.form_word(v["fw_form"]), approximate=v["fw_form"],
                dtypes=", ".join(f"torch.{d}" for d in order), inputs=", ".join(number(x) for x in TABLE_X),
                count=len(TABLE_X), gate=gate.__name__.lstrip("_"), code=source(gate, _torch_gelu))
