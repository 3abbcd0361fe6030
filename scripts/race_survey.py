"""The training race over many seeds: how often each activation ends ahead, on every task, with the numbers.

One race says what happened on one seed; this says what is typical.  For each task it runs the default race
(gelu_core.training.RaceConfig, or the settings given) for seeds 0 .. N-1 and prints each seed's final test
accuracy and dead units, the means, and how often ``verdict`` called each run ahead.

    python scripts/race_survey.py [--seeds 10] [--tasks spiral,circle] [--set width=12 --set optimizer=sgd]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from gelu_core.training import TASKS, RaceConfig, train, verdict  # noqa: E402


def parse_settings(pairs: list[str]) -> dict:
    """["width=12", "activations=relu,silu"] -> RaceConfig fields, typed as the defaults are."""
    defaults = RaceConfig()
    settings = {}
    for pair in pairs:
        key, _, text = pair.partition("=")
        if key not in {f.name for f in dataclasses.fields(RaceConfig)}:
            raise SystemExit(f"unknown setting {key!r}")
        default = getattr(defaults, key)
        settings[key] = tuple(text.split(",")) if isinstance(default, tuple) else type(default)(text)
    return settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    args = parser.parse_args()
    torch.set_num_threads(1)
    settings = parse_settings(args.set)
    print(f"torch {torch.__version__}; seeds 0..{args.seeds - 1}; settings "
          f"{dataclasses.replace(RaceConfig(), **settings)} (task as listed)")
    for task in args.tasks.split(","):
        config = dataclasses.replace(RaceConfig(), task=task, **settings)
        a, b = config.activations
        started = time.perf_counter()
        rows, leaders = [], []
        for seed in range(args.seeds):
            snapshot = train(dataclasses.replace(config, seed=seed))
            rows.append([(run.final_test_accuracy, int(run.dead_units[-1].sum())) for run in snapshot.runs])
            leaders.append(verdict(snapshot).leader)
        seconds = (time.perf_counter() - started) / args.seeds
        total = config.width * config.depth
        print(f"\n{task}: final test accuracy (dead units of {total}) per seed, {a} | {b}; {seconds:.1f} s a race")
        print("  " + "  ".join(f"{s}: {ra:.1%} ({da}) | {rb:.1%} ({db})"
                               for s, ((ra, da), (rb, db)) in enumerate(rows)))
        for i, name in enumerate((a, b)):
            accuracy = [row[i][0] for row in rows]
            dead = [row[i][1] for row in rows]
            print(f"  {name:<12} mean {statistics.mean(accuracy):.1%} (min {min(accuracy):.1%}, max "
                  f"{max(accuracy):.1%}); dead units mean {statistics.mean(dead):.1f}")
        print(f"  verdict: {a} ahead {leaders.count(a)}, {b} ahead {leaders.count(b)}, "
              f"about the same {leaders.count(None)} (of {args.seeds})")


if __name__ == "__main__":
    main()
