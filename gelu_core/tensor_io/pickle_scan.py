"""The pickle inside a .pt, walked opcode by opcode before torch.load sees it; nothing in it is run.

torch.load(weights_only=True) already refuses to import anything outside its
allowlist, so no code in a pickle runs.  That allowlist still admits calls that
cost memory or time: ``bytearray(10**10)`` is 40 bytes of pickle and 10 GB of
zeroed memory, ``UntypedStorage(n)`` and ``Tensor(n)`` allocate memory the file
never filled, and 5 bytes of pickle can repeat a tensor rebuild, each one a
call into torch's pure-Python unpickler.  This walk admits only what torch.save
writes for tensors and dicts of them (protocol 2), a bounded number of times.

Each stack entry is tracked only as "this global" or "something else", so every
call (REDUCE, NEWOBJ) is known to call a tensor rebuilder or OrderedDict;
globals may be those, or storage types and dtypes as values; calls are at most
MAX_PICKLE_CALLS.  Opcodes torch's safe loader does not read are refused too.
"""

from __future__ import annotations

import pickletools

import torch

from gelu_core.messages import N_, Message
from gelu_core.tensor_io.limits import MAX_PICKLE_CALLS, TensorFileError

# What torch.save writes for tensors and dicts of them, protocol 2: the only globals that may be called.
_CALLABLE_GLOBALS = {
    "torch._utils _rebuild_tensor_v2", "torch._utils _rebuild_tensor_v3", "torch._utils _rebuild_parameter",
    "collections OrderedDict",
}
# Globals that may appear as values, never called: storage types (in persistent ids) and dtypes.
# Listed once from torch's namespace: getattr(torch, name) with a name from a file could import
# one of torch's lazily loaded submodules.
_VALUE_GLOBALS = {"torch.storage UntypedStorage"} | {
    f"torch {name}" for name, value in vars(torch).items()
    if isinstance(value, torch.dtype) or (isinstance(value, type) and name.endswith("Storage"))
}
_SPARSE, _QUANTIZED = Message(N_("sparse tensors")), Message(N_("quantized tensors"))
_EXTRA = Message(N_("tensors with extra Python attributes"))
_GLOBAL_WORDS = {  # what a refused global means, in words
    "torch._utils _rebuild_sparse_tensor": _SPARSE, "torch.serialization _get_layout": _SPARSE,
    "torch._utils _rebuild_qtensor": _QUANTIZED, "torch._utils _rebuild_nested_tensor": Message(N_("nested tensors")),
    "torch._utils _rebuild_meta_tensor_no_storage": Message(N_("tensors without data")),
    "torch._utils _rebuild_wrapper_subclass": Message(N_("tensor subclasses")),
    "torch._tensor _rebuild_from_type_v2": _EXTRA,
    "torch._utils _rebuild_parameter_with_state": _EXTRA,
    "torch._utils _rebuild_device_tensor_from_numpy": Message(N_("NumPy arrays")),
}
PYTHON_OBJECTS = N_("This file holds Python objects other than tensors, which could run code; save a tensor or a "
                    "dict of tensors.")
_PUSH_OPCODES = {"NONE", "NEWFALSE", "NEWTRUE", "EMPTY_TUPLE", "EMPTY_LIST", "EMPTY_DICT", "EMPTY_SET", "BININT",
                 "BININT1", "BININT2", "BINFLOAT", "BINUNICODE", "SHORT_BINSTRING", "LONG1"}
_POP_PUSH_OPCODES = {"TUPLE1": (1, 1), "TUPLE2": (2, 1), "TUPLE3": (3, 1), "APPEND": (1, 0), "SETITEM": (2, 0),
                     "BINPERSID": (1, 1), "BUILD": (1, 0), "REDUCE": (2, 1), "NEWOBJ": (2, 1)}


def scan_pickle(pickled: bytes) -> None:
    """Refuse (TensorFileError) a pickle that calls anything but torch's tensor builders, or calls too often.

    Damage the walk meets (unknown opcode, truncated argument, stack underflow, a memo never set) raises a
    plain ValueError, IndexError or KeyError; the caller turns any of those into its "damaged" refusal.
    """
    stack: list = []
    marks: list[int] = []
    memo: dict = {}
    calls = 0
    for opcode, arg, _ in pickletools.genops(pickled):
        name = opcode.name
        if name == "GLOBAL":
            if arg not in _CALLABLE_GLOBALS and arg not in _VALUE_GLOBALS:
                words = _GLOBAL_WORDS.get(arg) or (_QUANTIZED if " per_" in arg else None)
                if words:
                    raise TensorFileError(N_("This file holds {what}; save plain dense tensors."), what=words)
                raise TensorFileError(PYTHON_OBJECTS)
            stack.append(("global", arg))
        elif name in _PUSH_OPCODES:
            stack.append(None)
        elif name in ("BINPUT", "LONG_BINPUT"):
            memo[arg] = stack[-1]
        elif name in ("BINGET", "LONG_BINGET"):
            stack.append(memo[arg])
        elif name == "MARK":
            marks.append(len(stack))
        elif name in ("TUPLE", "APPENDS", "SETITEMS"):
            del stack[marks.pop():]
            if name == "TUPLE":
                stack.append(None)
        elif name in _POP_PUSH_OPCODES:
            pops, pushes = _POP_PUSH_OPCODES[name]
            if len(stack) - (marks[-1] if marks else 0) < pops:
                raise ValueError("stack underflow")
            popped = stack[-pops:]
            del stack[-pops:]
            if name in ("REDUCE", "NEWOBJ"):
                calls += 1
                called = popped[0]
                if not (isinstance(called, tuple) and called[1] in _CALLABLE_GLOBALS):
                    raise TensorFileError(N_("This file's table of contents calls something other than torch's "
                                             "tensor builders; it is refused."))
            stack.extend([None] * pushes)
        elif name not in ("PROTO", "STOP"):
            raise TensorFileError(N_("This file uses pickle features torch's safe loader does not read; save it "
                                     "with torch.save's defaults."))
    if calls > MAX_PICKLE_CALLS:
        raise TensorFileError(N_("This file's table of contents makes {count} calls; the limit is {limit}."),
                              count=calls, limit=MAX_PICKLE_CALLS)
