"""A slider move in German against the same move in English, for every page: the server's work per move, and the
ratio of the two (the target: within 10 %, 1.10).

    python benchmarks/bench_languages.py [--moves 20] [--rounds 2] [--lang de] [--page steps ...]

Each page is measured as benchmarks/bench_rerun.py measures it (AppTest, the page's own script timed inside the
whole rerun), once opened with ``?lang=en`` and once with ``?lang=de``, the two interleaved round by round so that
the machine's drift falls on both.  The figure per language is the median over every move of every round; the
ratio is German's over English's, for the page script and for the whole rerun.  Both languages compute the same
numbers: what a move costs more in German is the catalog's lookups and the reader's number format.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_rerun import SLIDER, _page_timer, measure, pages_of_app  # noqa: E402
from benchmarks.results import printed, record  # noqa: E402

TARGET = 1.10  # German's cost per move over English's


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--lang", default="de", help="the language set against English")
    parser.add_argument("--page", action="append", help="url_path(s) to measure (default: all)")
    args = parser.parse_args(argv)

    times = _page_timer()
    header = (f"{'page':<16}{'en script ms':>14}{args.lang + ' script ms':>14}{'ratio':>8}"
              f"{'en rerun ms':>13}{args.lang + ' rerun ms':>13}{'ratio':>8}")
    print(header)
    print("-" * len(header))
    worst = 0.0
    for url, path in pages_of_app():
        if args.page and url not in args.page:
            continue
        got: dict[str, tuple[list[float], list[float]]] = {"en": ([], []), args.lang: ([], [])}
        for _round in range(args.rounds):
            for lang in ("en", args.lang):
                result = measure(str(ROOT / "app.py"), path, SLIDER.get(url), args.moves, times, {"lang": lang})
                if result is None:
                    break
                got[lang][0].extend(result[0])
                got[lang][1].extend(result[1])
        if not got["en"][0]:
            print(f"{url:<16}(no slider or number)")
            continue
        (en_whole, en_page), (other_whole, other_page) = got["en"], got[args.lang]
        scripts = statistics.median(en_page) * 1e3, statistics.median(other_page) * 1e3
        reruns = statistics.median(en_whole) * 1e3, statistics.median(other_whole) * 1e3
        script_ratio, rerun_ratio = scripts[1] / scripts[0], reruns[1] / reruns[0]
        worst = max(worst, rerun_ratio)
        print(f"{url:<16}{scripts[0]:>14.1f}{scripts[1]:>14.1f}{script_ratio:>8.2f}"
              f"{reruns[0]:>13.1f}{reruns[1]:>13.1f}{rerun_ratio:>8.2f}")
    print(f"\nworst rerun ratio, {args.lang} over en: {worst:.2f} "
          f"({'meets' if worst <= TARGET else 'misses'} the {TARGET:.2f} target)")
    return 0


if __name__ == "__main__":
    with printed() as lines:
        status = main()
    record("bench_languages", None, lines)
    sys.exit(status)
