"""gelu_core.budget: how the one memory budget is set, and the caps it gives.

References: host limits written by the test into a directory laid out like / (cgroup v2 and v1 files,
/proc/self/cgroup) and a stated physical memory; the caps at the default budget are the numbers the lab was
built around, written out here: 128 MiB and 2**25 values a file, (8, 1024, 3072) hidden and (8, 1024, 768)
input values a lab run.  Integers throughout: tolerance 0, except the 60 % share (rounded down to a byte).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gelu_core import budget
from gelu_core.budget import DEFAULT_CAP, cache_entries, host_memory, memory_budget, shares

MIB, GIB = 2**20, 2**30
ROOT = Path(__file__).resolve().parents[1]


def fake_root(tmp_path: Path, files: dict[str, str]) -> Path:
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_the_environment_variable_sets_it_as_it_is():
    assert memory_budget({"GELU_MEMORY_BUDGET_MB": "512"}) == 512 * MIB
    assert memory_budget({"GELU_MEMORY_BUDGET_MB": " 4096 "}) == 4096 * MIB  # above the default cap: asked for
    assert memory_budget({"GELU_MEMORY_BUDGET_MB": "0.5"}) == MIB  # never under 1 MiB


@pytest.mark.parametrize("raw", ["abc", "-5", "0", "nan", "inf"])
def test_a_bad_environment_variable_is_one_sentence_naming_it(raw):
    with pytest.raises(ValueError) as err:
        memory_budget({"GELU_MEMORY_BUDGET_MB": raw})
    message = str(err.value)
    assert "GELU_MEMORY_BUDGET_MB" in message and "MiB" in message and "\n" not in message


@pytest.mark.parametrize("files, physical, want", [
    ({"sys/fs/cgroup/memory.max": "1073741824\n"}, 16 * GIB, int(GIB * 0.6)),  # cgroup v2 limit, 60 %
    ({"sys/fs/cgroup/memory.max": "max\n"}, 16 * GIB, DEFAULT_CAP),  # no limit: physical, capped at 1.5 GiB
    ({"sys/fs/cgroup/memory/memory.limit_in_bytes": "2147483648"}, 16 * GIB, int(2 * GIB * 0.6)),  # cgroup v1
    ({"sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712"}, 2 * GIB, int(2 * GIB * 0.6)),
    ({}, 690 * MIB, int(690 * MIB * 0.6)),  # Community Cloud's smallest, no cgroup files
    ({"proc/self/cgroup": "0::/app.slice/gelu\n", "sys/fs/cgroup/memory.max": "max",
      "sys/fs/cgroup/app.slice/gelu/memory.max": "536870912"}, 16 * GIB, int(512 * MIB * 0.6)),  # its own cgroup
    ({"proc/self/cgroup": "4:memory:/docker/abc\n1:cpu:/x\n",
      "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "805306368"}, 16 * GIB, int(768 * MIB * 0.6)),
])
def test_host_limit_sets_it_when_the_variable_is_unset(tmp_path, files, physical, want):
    assert memory_budget({}, root=fake_root(tmp_path, files), physical=physical) == want


def test_unknown_host_gives_the_default_cap(tmp_path):
    assert host_memory(tmp_path, physical=0) is None
    assert memory_budget({}, root=tmp_path, physical=0) == DEFAULT_CAP


def test_default_budget_keeps_the_lab_caps():
    """At 1.5 GiB: the caps the lab and loader had before the budget, so GPT-2 small batches still run."""
    s = shares(DEFAULT_CAP)
    assert s["loaded_bytes"] == 128 * MIB and s["loaded_elements"] == 2**25
    assert s["hidden_elements"] == 8 * 1024 * 3072 and s["input_elements"] == 8 * 1024 * 768
    assert s["cache_bytes"] == (1536 - 2 * 128 - 2 * 3 * 96) * MIB  # two lab runs at once, each peaking at 3x
    # the float16 MLP of a GPT-2 XL block (2 x 1600 x 6400 values) loads, as float32
    assert 2 * 1600 * 6400 * 4 <= s["loaded_bytes"]


@pytest.mark.parametrize("mib", [100, 414, 1000, 1536, 8192])
def test_every_share_fits_in_the_budget(mib):
    s = shares(mib * MIB)
    assert 2 * s["loaded_bytes"] + budget.RUN_LANES * 3 * 4 * s["hidden_elements"] + s["cache_bytes"] <= mib * MIB
    assert s["loaded_bytes"] % MIB == 0  # whole MiB: a message names the limit exactly
    assert 4 * s["input_elements"] == s["hidden_elements"]


def test_smaller_budgets_never_give_larger_caps():
    previous = None
    for mib in (64, 200, 414, 690, 1000, 1536, 3000):
        current = shares(mib * MIB)
        if previous:
            assert all(current[key] >= previous[key] for key in current)
        previous = current


def test_cache_entries():
    assert cache_entries(128 * MIB, share=0.5, cache_bytes=992 * MIB) == 3  # 496 MiB / 128 MiB
    assert cache_entries(10 * GIB, cache_bytes=992 * MIB) == 1  # always room for the entry in use
    assert cache_entries(MIB, share=0.25, cache_bytes=100 * MIB) == 25
    assert cache_entries(MIB) == budget.CACHE_BYTES // MIB


@pytest.mark.slow  # a fresh process that imports torch and runs the lab
def test_the_variable_reaches_the_loader_and_the_lab():
    """A fresh process with GELU_MEMORY_BUDGET_MB=384: a quarter of every cap, and a file over the loader's is
    refused naming it.  Reference: shares(384 MiB) and a float32 .npy of 36 MiB made in that process."""
    script = (
        "import io, numpy as np\n"
        "from gelu_core import lab, tensor_io\n"
        "print(tensor_io.MAX_LOADED_BYTES, tensor_io.MAX_ELEMENTS, lab.MAX_HIDDEN_ELEMENTS, lab.MAX_INPUT_ELEMENTS)\n"
        "buffer = io.BytesIO(); np.save(buffer, np.zeros(9 * 2**20, np.float32))\n"
        "try:\n    tensor_io.load_tensors(buffer.getvalue(), 'x.npy')\n"
        "except tensor_io.TensorFileError as error:\n    print(error)\n"
    )
    env = {**os.environ, "GELU_MEMORY_BUDGET_MB": "384"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    numbers, message = done.stdout.splitlines()
    s = shares(384 * MIB)
    assert numbers.split() == [str(s[k]) for k in ("loaded_bytes", "loaded_elements", "hidden_elements",
                                                    "input_elements")]
    assert s["loaded_bytes"] == 32 * MIB
    assert "the limit is 8,388,608 in one file" in message
