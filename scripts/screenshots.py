"""Screenshots of every page of the app, light and dark, desktop and phone, into screenshots/ (git-ignored);
then the views a page's default hides (another tab, every overlay, the far tails), named in VIEWS.

    python scripts/screenshots.py                  # starts its own server on a free port
    python scripts/screenshots.py --url http://127.0.0.1:8501 --pages curves gate
    python scripts/screenshots.py --pages approximations --views   # only that page's extra views
    python scripts/screenshots.py --poll           # only the class poll: teacher's view, a student's answer
    python scripts/screenshots.py --a11y           # keyboard focus, and pages at 200 % zoom on a phone
    python scripts/screenshots.py --predict        # each page's question before and after it is answered
    python scripts/screenshots.py --langs          # every page in German (light, phone) and Chinese (dark, desktop)

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
    "curves-every-overlay": ("curves", "form=exact&" + "&".join(
        f"curves_more={name.replace(' ', '+')}" for name in ("Sigmoid", "Tanh", "SiLU", "Leaky ReLU", "ELU", "Softplus",
                                                             "GELU tanh", "GELU sigmoid"))),
    "derivative-exact-wide-nudge": ("derivative", "form=exact&derivative_nudge=1"),
    "steps-every-digit": ("steps", "steps_x=-9.5&steps_full=true"),
    "approximations-tails": ("approximations", "approximations_range=-12&approximations_range=0"),
    "approximations-pytorch": ("approximations", "approximations_view=What+PyTorch+computes&"
                               "approximations_fw_dtypes=float32&approximations_fw_dtypes=bfloat16&"
                               "approximations_fw_dtypes=float16"),
}


def shoot_one(browser, url: str, png: Path, scheme: str, viewport: dict) -> Path:
    """``url`` opened whole (Show me pressed) in a fresh context of that scheme and size, as one full-length PNG."""
    page = driver.new_page(browser, color_scheme=scheme, viewport=viewport)
    try:
        driver.open_app(page, url)
        driver.screenshot_full(page, png)
    finally:
        page.context.close()
    return png


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


def shoot_predict(browser, base_url: str, out_dir: Path, pages) -> list[Path]:
    """Each page as the lesson reaches it (its question first, nothing that answers it) and once its first choice
    is chosen, light on a desktop and dark on a phone: ``predict-<page>-before|after-<scheme>-<device>.png``."""
    written = []
    for app_page in pages:
        for scheme, device, viewport in (("light", "desktop", driver.DESKTOP), ("dark", "phone", driver.PHONE)):
            page = driver.new_page(browser, color_scheme=scheme, viewport=viewport)
            try:
                driver.open_app(page, f"{base_url}/{'' if app_page.default else app_page.url_path}", show=False)
                written.append(out_dir / f"predict-{app_page.url_path}-before-{scheme}-{device}.png")
                driver.screenshot_full(page, written[-1])
                radio = page.locator(".st-key-lesson_question [role='radiogroup'] label")
                if radio.count():
                    runs = driver.runs(page)
                    radio.first.click()
                    driver.wait_idle(page, runs)
                    written.append(out_dir / f"predict-{app_page.url_path}-after-{scheme}-{device}.png")
                    driver.screenshot_full(page, written[-1])
            finally:
                page.context.close()
    return written


# language -> the scheme and device it is shot in: German's long words on a phone, Chinese's script on a desktop
LANG_SHOTS = {"de": ("light", "phone", driver.PHONE), "zh-Hans": ("dark", "desktop", driver.DESKTOP)}


def shoot_langs(browser, base_url: str, out_dir: Path, pages) -> list[Path]:
    """Each page in each of LANG_SHOTS' languages (``lang=`` in its link), whole (Show me pressed):
    ``lang-<lang>-<page>-<scheme>-<device>.png``."""
    return [shoot_one(browser, f"{base_url}/{'' if app_page.default else app_page.url_path}?lang={lang}",
                      out_dir / f"lang-{lang}-{app_page.url_path}-{scheme}-{device}.png", scheme, viewport)
            for app_page in pages for lang, (scheme, device, viewport) in LANG_SHOTS.items()]


def shoot_poll(browser, base_url: str, out_dir: Path) -> list[Path]:
    """The class poll on Home as a room sees it: a teacher starts a class, five students on phones answer round 1,
    the teacher's presenter view at a projector's 1280 x 720 (what the room sees, not the whole page), light and dark;
    then the teacher reveals, and the teacher's screen and a student's phone are shot again."""
    from draw.class_poll import WATCH_S

    room = {"width": 1280, "height": 720}
    written = []
    teacher = driver.new_page(browser, viewport=driver.DESKTOP)
    students = []
    try:
        driver.open_app(teacher, base_url)
        sidebar = teacher.locator("[data-testid='stSidebar']")
        sidebar.get_by_text("Start a class").first.click()
        driver.act(teacher, lambda: sidebar.get_by_role("button", name="Start a class").click())
        teacher.wait_for_function("() => new URLSearchParams(location.search).has('teacher')")
        written.append(out_dir / "poll-start-a-class-light-desktop.png")
        sidebar.screenshot(path=str(written[-1]))
        query = driver.query(teacher.url)
        code, key = query["class"][0], query["teacher"][0]
        choices = ["a small negative number", "0, like ReLU", "a small negative number", "-1, unchanged",
                   "a small negative number"]
        for choice in choices:
            page = driver.new_page(browser, viewport=driver.PHONE)
            students.append(page)
            driver.open_app(page, f"{base_url}/?class={code}", show=False)
            driver.act(page, lambda p=page, c=choice: p.locator(".st-key-lesson_question [data-testid='stRadio']")
                       .get_by_text(c, exact=True).click())
        teacher.set_viewport_size(room)
        driver.open_app(teacher, f"{base_url}/?present=true&class={code}&teacher={key}", show=False)
        console = teacher.locator(".st-key-class_poll_teacher")
        console.get_by_text(f"{len(choices)} of {len(choices)} answered").wait_for()

        def shoot(stage: str) -> None:
            for scheme in ("light", "dark"):
                for page in (teacher, students[-1]):
                    driver.set_scheme(page, scheme)
                written.append(out_dir / f"poll-teacher-{stage}-{scheme}-1280x720.png")
                teacher.screenshot(path=str(written[-1]))
                written.append(out_dir / f"poll-student-{stage}-{scheme}-phone.png")
                students[-1].screenshot(path=str(written[-1]))

        shoot("round1")
        driver.act(teacher, console.get_by_role("button", name="Reveal the answer").click)
        students[-1].wait_for_timeout((WATCH_S + 2) * 1000)  # the student's watch learns of the reveal
        shoot("revealed")
    finally:
        for page in [teacher, *students]:
            page.context.close()
    return written


def shoot_a11y(browser, base_url: str, out_dir: Path) -> list[Path]:
    """The keyboard focus on the Curves probe's thumb, its GELU-form control, a chart's PNG button (its modebar
    shown), a chart's data table and a Next link (desktop, both themes), and pages as a phone shows them at 200 %
    zoom (390 px wide / 2 = 195 CSS px, light and dark) and at 320 CSS px."""
    written = []
    for scheme in ("light", "dark"):
        page = driver.new_page(browser, color_scheme=scheme)
        try:
            driver.open_app(page, f"{base_url}/curves")
            for name, wanted in (("probe", "[data-testid='stMain'] [data-testid='stSlider']"),
                                 ("gelu-form", "[data-testid='stMain'] [data-testid='stButtonGroup']"),
                                 ("png-button", "[data-testid='stMain'] .modebar-btn"),
                                 ("chart-table", "[data-testid='stMain'] .gelu-chart-data summary"),
                                 ("next", "[data-testid='stMain'] .st-key-lesson_footer a")):
                for _ in range(120):
                    page.keyboard.press("Tab")
                    if page.evaluate("s => !!document.activeElement.closest(s)", wanted):
                        break
                page.wait_for_timeout(400)  # the modebar fades in over 0.3 s
                written.append(out_dir / f"a11y-focus-{name}-{scheme}.png")
                page.screenshot(path=str(written[-1]))
        finally:
            page.context.close()
    shots = [("zoom200-phone", {"width": 195, "height": 422}, scheme) for scheme in ("light", "dark")]
    for label, viewport, scheme in shots + [("reflow320", {"width": 320, "height": 720}, "dark")]:
        for path in ("", "curves", "ffn", "training"):
            png = out_dir / f"a11y-{label}-{scheme}-{path or 'home'}.png"
            written.append(shoot_one(browser, f"{base_url}/{path}", png, scheme, viewport))
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="a running app to shoot (default: start one)")
    parser.add_argument("--pages", nargs="*", help="url paths of the pages to shoot (default: all)")
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots", help="folder for the PNGs")
    parser.add_argument("--views", action="store_true", help="only the extra views (of --pages, if given)")
    parser.add_argument("--poll", action="store_true", help="only the class poll's views (shoot_poll)")
    parser.add_argument("--a11y", action="store_true", help="only the keyboard-focus and zoom shots (shoot_a11y)")
    parser.add_argument("--predict", action="store_true", help="only each page before and after its question")
    parser.add_argument("--langs", action="store_true", help="only each page in German and in Chinese (shoot_langs)")
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    pages = [p for p in driver.app_pages() if not args.pages or p.url_path in args.pages]
    chosen = pages
    only = args.views or args.poll or args.a11y or args.predict or args.langs
    pages = [] if only else pages
    views = {name: v for name, v in VIEWS.items() if not args.pages or v[0] in args.pages}
    views = {} if only and not args.views else views
    started = time.perf_counter()
    with nullcontext(args.url) if args.url else driver.Server() as server, sync_playwright() as playwright:
        base_url = server if isinstance(server, str) else server.base_url
        browser = driver.launch(playwright)
        written = driver.shoot_pages(browser, base_url.rstrip("/"), args.out, pages) if pages else []
        written += shoot_views(browser, base_url.rstrip("/"), args.out, views)
        if args.poll:
            written += shoot_poll(browser, base_url.rstrip("/"), args.out)
        if args.a11y:
            written += shoot_a11y(browser, base_url.rstrip("/"), args.out)
        if args.predict:
            written += shoot_predict(browser, base_url.rstrip("/"), args.out, chosen)
        if args.langs:
            written += shoot_langs(browser, base_url.rstrip("/"), args.out, chosen)
        browser.close()
    for path in written:
        print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
    print(f"{len(written)} screenshots in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
