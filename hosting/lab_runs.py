"""The lab on the server: its runs two at a time at most, identical ones shared, each kept for the sessions that asked.

``gelu_core.lab`` computes; this module decides who waits for whom (``hosting.runs.RUN_SLOT``), what a waiting
student reads (``describe_run``), and what is kept and for whom (``SharedRuns`` by key, each entry remembering
the sessions, ``owner``, that used it, so the janitor gives it back once they have all left).  The keys are the
core's plain data: a block's (seeded: width and seed; a file: its content hash and place), an input's
(``Tokens.key``), both activations and the direction.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable
from contextlib import contextmanager

import torch

from gelu_core import budget
from gelu_core.ffn import FeedForward
from gelu_core.lab import (
    HIST_BINS,
    MAX_D_MODEL,
    MAX_HIDDEN,
    MAX_INPUT_ELEMENTS,
    LabResult,
    Tokens,
    check_run_size,
    demo_input,
    demo_tokens,
)
from gelu_core.lab import run_lab as _run_lab
from gelu_core.messages import N_, Message
from gelu_core.weights import check_block_shapes, load_block
from hosting.runs import RUN_SLOT, Busy, SharedRuns, Waiting

__all__ = ["BLOCKS", "Busy", "FILES", "HIST_BINS", "LAB_RESULTS", "FeedForward", "demo_input", "demo_tokens",
           "describe_run", "run_lab", "shared_file", "shared_file_block", "shared_run_lab", "shared_seeded_block"]

# What the lab keeps between runs, shared by every student who asks for the same thing and given back when they
# have all left (hosting.runs): each a quarter of the budget's cache bytes, in entries of the largest size.
RESULT_BYTES = 3 * MAX_INPUT_ELEMENTS * 4  # a LabResult at the largest run: two outputs, their norms, histograms
# (the backward adds two (hidden,) masks and numbers)
BLOCK_BYTES = 2 * MAX_D_MODEL * MAX_HIDDEN * 4  # the widest block's weights, float32: 82 MB
LAB_RESULTS = SharedRuns.within(RESULT_BYTES, 0.25)
BLOCKS = SharedRuns.within(BLOCK_BYTES, 0.25)
FILES = SharedRuns.within(budget.LOADED_BYTES, 0.25)


def run_lab(
    block: FeedForward,
    x: torch.Tensor | Tokens,
    activation: str = "gelu_tanh",
    compare: str = "relu",
    bins: int = HIST_BINS,
    *,
    backward: bool = False,
    on_wait: Waiting | None = None,
    timeout: float | None = None,
) -> LabResult:
    """``gelu_core.lab.run_lab`` in one of the process's run lanes (``RUN_SLOT``, on its share of the cores, taken
    again between its steps: two threads alone, one beside another run): a caller finding them taken waits its
    turn, told what runs through ``on_wait``, and gives up with ``Busy`` if a run under way has held its lane
    ``timeout`` seconds."""
    with RUN_SLOT.hold(describe_run(_shape(x), block, backward), on_wait=on_wait, timeout=timeout) as cores:
        with torch_threads(cores):
            return _run_lab(block, x, activation, compare, bins, backward=backward, pace=_take_share)


def _take_share() -> None:
    """Between a run's steps: its torch threads set to its share now (``RunSlot.share``).  Set every time, not
    only on a change: MKL's count is the process's, and a run that ended may have put back its own."""
    torch.set_num_threads(RUN_SLOT.share())


@contextmanager
def torch_threads(n: int):
    """torch's threads for the calling thread's operations, ``n`` while inside (OpenMP's thread count is each
    thread's own: a run on another thread keeps its count)."""
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def shared_run_lab(block: FeedForward, tokens: Tokens, activation: str, compare: str, *, backward: bool = False,
                   on_wait: Waiting | None = None, timeout: float | None = None, owner: str | None = None) -> LabResult:
    """run_lab, computed once for everyone who asks for the same run, and kept in ``LAB_RESULTS``: the key is
    the block's (``shared_seeded_block``, ``shared_file_block``), the input's (``Tokens.key``: a file by the hash
    of its bytes), both activations and the direction.  A block built elsewhere is run, not shared."""
    block_key = _BLOCK_KEYS.get(block)

    def compute() -> LabResult:
        return run_lab(block, tokens, activation, compare, backward=backward, on_wait=on_wait, timeout=timeout)

    if block_key is None:
        return compute()
    key = (block_key, tokens.key, activation, compare, backward)
    return LAB_RESULTS.get(key, compute, what=describe_run(tokens.shape, block, backward), on_wait=on_wait,
                           owner=owner)


def _keyed(block, key: Hashable):
    _BLOCK_KEYS[block if isinstance(block, FeedForward) else block.block] = key
    return block


_BLOCK_KEYS: weakref.WeakKeyDictionary[FeedForward, Hashable] = weakref.WeakKeyDictionary()  # a shared block's key


def shared_seeded_block(d_model: int, seed: int, *, owner: str | None = None) -> FeedForward:
    """FeedForward(d_model, seed=seed), built once for everyone who asks; never mutated."""
    check_run_size(1, 1, d_model, 4 * d_model)
    key = ("seeded", d_model, seed)
    return BLOCKS.get(key, lambda: _keyed(FeedForward(d_model, seed=seed), key), owner=owner)


def shared_file(digest: str, filename: str, data: bytes, uploader: str = "input", *, owner: str | None = None):
    """(tensors, notes) of an uploaded file, loaded once per content hash and uploader.

    ``uploader="weights"``: a block wider than the lab runs is refused from the declared shapes, before the
    data is read (weights.check_block_shapes).
    """
    from gelu_core import tensor_io

    check = check_block_shapes if uploader == "weights" else None
    return FILES.get((digest, uploader), lambda: tensor_io.load_tensors_with_notes(data, filename, check=check),
                     owner=owner)


def shared_file_block(digest: str, tensors, candidate, *, owner: str | None = None):
    """A LoadedBlock from a file's weights under ``candidate`` (None: the only one; refused with the names the
    lab knows if there is none), built once per content hash and place in the file."""
    key = ("file", digest, None if candidate is None else (candidate.prefix, candidate.first, candidate.second))
    return BLOCKS.get(key, lambda: _keyed(load_block(tensors, candidate), key), owner=owner)


def describe_run(shape: tuple[int, ...], block: FeedForward, backward: bool = False) -> Message:
    r"""What a run is, in words a waiting student can read (a ``Message``: ``ui.format.say`` writes it in theirs).

    >>> import re; [re.findall(r"\(.*\)|d_model \S+|and back", describe_run(s, FeedForward(8), backward=b))
    ...                 for s, b in (((8, 1024, 768), False), ((2, 3, 8), True))]
    [['(8, 1024, 768)', 'd_model 8'], ['(2, 3, 8)', 'd_model 8', 'and back']]
    """
    template = (N_("{shape} through a block of d_model {d_model} and back") if backward else
                N_("{shape} through a block of d_model {d_model}"))
    return Message(template, shape=str(tuple(int(n) for n in shape)), d_model=int(block.d_model))


def _shape(x: torch.Tensor | Tokens) -> tuple[int, ...]:
    return x.shape if isinstance(x, Tokens) else tuple(x.shape)
