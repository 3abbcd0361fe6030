"""Screenshots of every page of the app, light and dark, desktop and phone, into screenshots/ (git-ignored);
then the views a page's default hides (another tab, every overlay, the far tails), named in VIEWS.

    python scripts/screenshots.py                  # starts its own server on a free port
    python scripts/screenshots.py --url http://127.0.0.1:8501 --pages curves gate
    python scripts/screenshots.py --pages approximations --views   # only that page's extra views

Needs Debian's Chromium at /usr/bin/chromium (or GELU_CHROMIUM) and the playwright package.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness import browser as driver  # noqa: E402

# name -> (page url_path, query): views worth a look that no page opens on
VIEWS = {
    "home-far-inputs": ("home", "home_x1=-20&home_x2=-0.25&home_x5=20"),
    "gate-card-minus-3": ("gate", "gate_x=-3"),
    "gate-hard-step": ("gate", "gate_sigma=0"),
    "curves-every-overlay": ("curves", "curves_form=exact&" + "&".join(
        f"curves_more={name.replace(' ', '+')}" for name in ("Sigmoid", "Tanh", "SiLU", "Leaky ReLU", "ELU", "Softplus",
                                                             "GELU tanh", "GELU sigmoid"))),
    "derivative-tanh-wide-nudge": ("derivative", "derivative_form=tanh&derivative_nudge=1"),
    "steps-every-digit": ("steps", "steps_x=-9.5&steps_full=true"),
    "approximations-tails": ("approximations", "approx_range=-12&approx_range=0"),
    "approximations-pytorch": ("approximations", "approx_view=What+PyTorch+computes&approx_fw_dtypes=float32&"
                                                 "approx_fw_dtypes=bfloat16&approx_fw_dtypes=float16"),
}


def shoot_views(browser, base_url: str, out_dir: Path, views: dict[str, tuple[str, str]]) -> list[Path]:
    """Each view, light and dark, desktop and phone, as full-length PNGs named after it."""
    written = []
    for name, (path, query) in views.items():
        for device, viewport in (("desktop", driver.DESKTOP), ("phone", driver.PHONE)):
            page = driver.new_page(browser, color_scheme="light", viewport=viewport)
            try:
                driver.open_app(page, f"{base_url}/{'' if path == 'home' else path}?{query}")
                for scheme in ("light", "dark"):
                    driver.set_scheme(page, scheme)
                    written.append(out_dir / f"{name}-{scheme}-{device}.png")
                    driver.screenshot_full(page, written[-1])
            finally:
                page.context.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running app to shoot (default: start one)")
    parser.add_argument("--pages", nargs="*", help="url paths of the pages to shoot (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots", help="folder for the PNGs")
    parser.add_argument("--views", action="store_true", help="only the extra views (of --pages, if given)")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    pages = [] if args.views else [p for p in driver.app_pages() if not args.pages or p.url_path in args.pages]
    views = {name: v for name, v in VIEWS.items() if not args.pages or v[0] in args.pages}
    started = time.perf_counter()
    with nullcontext(args.url) if args.url else driver.Server() as server, sync_playwright() as playwright:
        base_url = server if isinstance(server, str) else server.base_url
        browser = driver.launch(playwright)
        written = driver.shoot_pages(browser, base_url.rstrip("/"), args.out, pages) if pages else []
        written += shoot_views(browser, base_url.rstrip("/"), args.out, views)
        browser.close()
    for path in written:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    print(f"{len(written)} screenshots in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
