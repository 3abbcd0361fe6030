"""A feed-forward block's weights from a state dict: GPT-2's names and layout, nn.Linear's, and a few others.

Names recognised, as (first layer, second layer) under any dotted prefix:

* ``c_fc`` / ``c_proj``: GPT-2 (``h.0.mlp.c_fc.weight``) and nanoGPT;
* ``fc1`` / ``fc2``: the common hand-written MLP;
* ``linear1`` / ``linear2``: ``torch.nn.TransformerEncoderLayer``;
* ``dense_h_to_4h`` / ``dense_4h_to_h``: GPT-NeoX, Bloom, Megatron;
* ``0`` / ``2``: an ``nn.Sequential(Linear, GELU, Linear)``, e.g. chapter 4's ``layers.0`` / ``layers.2``.

Layout: ``nn.Linear`` stores (out, in); GPT-2's ``Conv1D`` stores (in, out), so
Hugging Face's ``mlp.c_fc.weight`` is (768, 3072).  The two are told apart by
shape: a bias, when present, has the layer's output size; without biases the
hidden layer is taken to be the wider one (every GPT-style MLP expands).  Square
weights without biases are read as nn.Linear, and say so.

Size: a block wider than the lab runs (d_model over 1,600 or a hidden layer
over 6,400, GPT-2 XL's) is refused from the tensors' shapes before it is built;
``check_block_shapes`` does the same from a file's declared shapes, as the ``check``
of ``tensor_io.load_tensors_with_notes``, before the file's data is read.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from gelu_core.budget import MAX_D_MODEL, MAX_HIDDEN
from gelu_core.ffn import FeedForward
from gelu_core.messages import N_, Message, Refusal

NAME_PAIRS: tuple[tuple[str, str], ...] = (
    ("c_fc", "c_proj"),
    ("fc1", "fc2"),
    ("linear1", "linear2"),
    ("dense_h_to_4h", "dense_4h_to_h"),
    ("0", "2"),
)

LINEAR, CONV1D = Message(N_("nn.Linear (out, in)")), Message(N_("Conv1D (in, out), transposed on load"))


class WeightsError(Refusal, ValueError):
    """Weights that cannot make a feed-forward block, with a message fit to show as it is: a whole sentence (a
    template and parameters, gelu_core.messages), English as ``str()``."""


@dataclass(frozen=True)
class Candidate:
    """A place in a state dict that names a feed-forward block: ``prefix + first + ".weight"`` and so on."""

    prefix: str  # "h.0.mlp." or ""
    first: str  # "c_fc"
    second: str  # "c_proj"

    def name(self, layer: str, part: str) -> str:
        return f"{self.prefix}{layer}.{part}"

    @property
    def label(self) -> str:
        return f"{self.prefix}{{{self.first}, {self.second}}}"


@dataclass(frozen=True)
class LoadedBlock:
    """A block built from a file's weights, and how they were read."""

    block: FeedForward  # float32, the file's weights (transposed if Conv1D)
    candidate: Candidate
    layout: Message  # LINEAR or CONV1D
    d_model: int
    hidden: int
    notes: tuple[Message, ...]  # things a learner should know: biases missing, dtype cast, a guess


def find_blocks(tensors: dict[str, torch.Tensor]) -> list[Candidate]:
    """Every prefix under which a recognised pair of weight names both exist, in the file's order.

    >>> w = torch.zeros(2, 2)
    >>> find_blocks({"h.0.mlp.c_fc.weight": w, "h.0.mlp.c_proj.weight": w, "h.0.attn.c_attn.weight": w})
    [Candidate(prefix='h.0.mlp.', first='c_fc', second='c_proj')]
    """
    found: list[Candidate] = []
    for key in tensors:
        for first, second in NAME_PAIRS:
            tail = f"{first}.weight"
            if not key.endswith(tail):
                continue
            prefix = key[: -len(tail)]
            if prefix and not prefix.endswith("."):
                continue  # "xfc1.weight" is not "fc1.weight"
            candidate = Candidate(prefix, first, second)
            if candidate.name(second, "weight") in tensors and candidate not in found:
                found.append(candidate)
    return found


def _no_block_found() -> WeightsError:
    pairs = ", ".join(f"{a}/{b}" for a, b in NAME_PAIRS)
    return WeightsError(N_("No feed-forward weights found. Expected two layers named like mlp.c_fc.weight and "
                           "mlp.c_proj.weight (recognised pairs: {pairs})."), pairs=pairs)


def _layout(w1: tuple[int, ...], b1: tuple[int, ...] | None, name: str) -> tuple[Message, Message | None]:
    """LINEAR or CONV1D for a first-layer weight's shape (and its bias's), plus a note when it is a guess."""
    rows, cols = w1
    if b1 is not None and rows != cols:
        if b1[0] == rows:
            return LINEAR, None
        if b1[0] == cols:
            return CONV1D, None
        raise WeightsError(N_("{name}.bias has {count} values; {name}.weight is {rows} x {cols}."), name=name,
                           count=b1[0], rows=rows, cols=cols)
    if rows != cols:  # no bias to tell: the hidden layer is the wider side
        return (LINEAR if rows > cols else CONV1D), Message(N_("no biases: the wider side was taken as the hidden "
                                                               "layer"))
    return LINEAR, Message(N_("square weights: read as nn.Linear (out, in); a Conv1D file would need transposing"))


def _check_width(d_model: int, hidden: int, label: str) -> None:
    """Refuse a block wider than the lab runs, naming the limit."""
    if d_model > MAX_D_MODEL:
        raise WeightsError(N_("The block {block} has d_model = {d_model}; the lab runs blocks up to d_model = "
                              "{most} (GPT-2 XL)."), block=label, d_model=d_model, most=MAX_D_MODEL)
    if hidden > MAX_HIDDEN:
        raise WeightsError(N_("The block {block} has a hidden layer of {hidden}; the lab runs hidden layers up to "
                              "{most} (GPT-2 XL)."), block=label, hidden=hidden, most=MAX_HIDDEN)


def check_block_shapes(shapes: dict[str, tuple[int, ...]]) -> None:
    """Refuse, from declared shapes alone, a file with no block the lab could run: none found, or all too wide.

    For ``tensor_io.load_tensors_with_notes(data, name, check=check_block_shapes)``: it runs before the file's data
    is read, so a compressed file that declares a 2**24-wide layer is refused without being inflated.  Shapes
    that would not make a block at all are left to load_block, which says what is wrong.

    >>> check_block_shapes({"mlp.c_fc.weight": (768, 3072), "mlp.c_proj.weight": (3072, 768)})
    >>> check_block_shapes({"c_fc.weight": (1, 131072), "c_fc.bias": (1,), "c_proj.weight": (131072, 1)})
    Traceback (most recent call last):
    ...
    gelu_core.weights.WeightsError: ...{c_fc, c_proj}...d_model = 131,072...
    """
    found = find_blocks(shapes)
    if not found:
        raise _no_block_found()
    refusal = None
    for candidate in found:
        w1 = shapes[candidate.name(candidate.first, "weight")]
        b1 = shapes.get(candidate.name(candidate.first, "bias"))
        if len(w1) != 2 or (b1 is not None and len(b1) != 1):
            return  # not a block as it stands: load_block explains
        try:
            layout, _ = _layout(w1, b1, candidate.prefix + candidate.first)
            hidden, d_model = w1 if layout == LINEAR else w1[::-1]
            _check_width(d_model, hidden, candidate.label)
        except WeightsError as error:
            refusal = refusal or error
        else:
            return  # one block the lab can run is enough: the student chooses
    raise refusal


def load_block(
    tensors: dict[str, torch.Tensor],
    candidate: Candidate | None = None,
    activation: str = "gelu_tanh",
) -> LoadedBlock:
    """Build a FeedForward from the file's weights under ``candidate`` (the only block found, if None)."""
    if candidate is None:
        found = find_blocks(tensors)
        if not found:
            raise _no_block_found()
        if len(found) > 1:
            raise WeightsError(N_("This file holds {count} feed-forward blocks; choose one."), count=len(found))
        candidate = found[0]
    first, second = candidate.first, candidate.second
    w1 = tensors.get(candidate.name(first, "weight"))
    w2 = tensors.get(candidate.name(second, "weight"))
    b1 = tensors.get(candidate.name(first, "bias"))
    b2 = tensors.get(candidate.name(second, "bias"))
    if w1 is None or w2 is None:
        raise WeightsError(N_("Both {first} and {second} are needed."), first=candidate.name(first, "weight"),
                           second=candidate.name(second, "weight"))
    notes: list[Message] = []
    for label, t in ((candidate.name(first, "weight"), w1), (candidate.name(second, "weight"), w2)):
        if t.dim() != 2:
            raise WeightsError(N_("{name} should be a matrix; it has shape {shape}."), name=label,
                               shape=str(tuple(t.shape)))
    for label, t in ((candidate.name(first, "bias"), b1), (candidate.name(second, "bias"), b2)):
        if t is not None and t.dim() != 1:
            raise WeightsError(N_("{name} should be a vector; it has shape {shape}."), name=label,
                               shape=str(tuple(t.shape)))
    if tuple(w2.shape) != tuple(w1.shape)[::-1]:
        raise WeightsError(N_("The layers do not chain: {first}.weight is {shape_1} but {second}.weight is {shape_2} "
                              "(expected {expected})."), first=first, second=second, shape_1=str(tuple(w1.shape)),
                           shape_2=str(tuple(w2.shape)), expected=str(tuple(w1.shape)[::-1]))
    layout, guess = _layout(tuple(w1.shape), None if b1 is None else tuple(b1.shape), candidate.prefix + first)
    if guess:
        notes.append(guess)
    if layout == CONV1D:
        w1, w2 = w1.t(), w2.t()  # Conv1D (in, out) -> Linear (out, in)
    hidden, d_model = w1.shape
    _check_width(d_model, hidden, candidate.label)  # from the shapes, before the block is built
    if b1 is not None and b1.shape[0] != hidden:
        raise WeightsError(N_("{name}.bias has {count} values; the hidden layer has {hidden}."), name=first,
                           count=int(b1.shape[0]), hidden=int(hidden))
    if b2 is not None and b2.shape[0] != d_model:
        raise WeightsError(N_("{name}.bias has {count} values; d_model is {d_model}."), name=second,
                           count=int(b2.shape[0]), d_model=int(d_model))
    if b1 is None or b2 is None:
        notes.append(Message(N_("a bias is missing from the file: it is set to zero")))
    parts = [w1, w2] + [b for b in (b1, b2) if b is not None]
    if any(not t.is_floating_point() for t in parts):
        raise WeightsError(N_("Weights must be floating-point numbers."))
    if any(not bool(torch.isfinite(t).all()) for t in parts):
        raise WeightsError(N_("The weights hold NaN or infinite values; the block cannot run on them."))
    if any(t.dtype != torch.float32 for t in parts):
        notes.append(Message(N_("weights converted to float32, the type the block runs in")))

    block = FeedForward(d_model=d_model, hidden=hidden, activation=activation)
    _set_weights(block.c_fc, block.c_proj, w1, w2, b1, b2)
    return LoadedBlock(block, candidate, layout, d_model, hidden, tuple(notes))


@torch.no_grad()
def _set_weights(c_fc, c_proj, w_fc, w_proj, b_fc, b_proj) -> None:
    """A file's weights into the block's two nn.Linear layers (weights (out, in)); a missing bias is 0."""
    c_fc.weight.copy_(w_fc)
    c_proj.weight.copy_(w_proj)
    c_fc.bias.copy_(b_fc if b_fc is not None else torch.zeros(c_fc.out_features))
    c_proj.bias.copy_(b_proj if b_proj is not None else torch.zeros(c_proj.out_features))
