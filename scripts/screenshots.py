"""Screenshots of every page of the app, light and dark, desktop and phone, into screenshots/ (git-ignored).

    python scripts/screenshots.py                  # starts its own server on a free port
    python scripts/screenshots.py --url http://127.0.0.1:8501 --pages curves gate

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running app to shoot (default: start one)")
    parser.add_argument("--pages", nargs="*", help="url paths of the pages to shoot (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots", help="folder for the PNGs")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    pages = [p for p in driver.app_pages() if not args.pages or p.url_path in args.pages]
    started = time.perf_counter()
    with nullcontext(args.url) if args.url else driver.Server() as server, sync_playwright() as playwright:
        base_url = server if isinstance(server, str) else server.base_url
        browser = driver.launch(playwright)
        written = driver.shoot_pages(browser, base_url.rstrip("/"), args.out, pages)
        browser.close()
    for path in written:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    print(f"{len(written)} screenshots in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
