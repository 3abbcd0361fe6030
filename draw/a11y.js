// Accessibility, page-wide: sent with the share box (draw/frame.py), on every page.  Mends Streamlit's markup after
// every redraw: the sidebar navigation's sections (a list item in a div in the list) become lists, a slider's thumb is
// named once (not its label twice), Plotly's off-screen measuring SVG is hidden from a reader, a formula or table
// wider than its column is reachable by keyboard, each chart gets its name and description (ui/describe.py), and a
// changed chart summary is read out once, politely, after a control has settled.
(() => {
  if (window.__geluA11y) return;
  window.__geluA11y = true;
  const live = document.createElement("div");
  live.className = "gelu-sr-only";
  live.id = "gelu-live";
  live.setAttribute("aria-live", "polite");
  document.body.appendChild(live);
  const set = (el, name, value) => { if (el.getAttribute(name) !== value) el.setAttribute(name, value); };
  const said = new Map(), opened = new Set();
  let changed = [], timer = null, queued = false;
  document.addEventListener("toggle", (event) => {
    const text = event.target.closest && event.target.closest(".gelu-chart-text");
    if (text) event.target.open ? opened.add(text.dataset.chart) : opened.delete(text.dataset.chart);
  }, true);
  const mend = () => {
    const app = document.querySelector("[data-testid='stApp']");  // the theme's background, for opaque captions
    const background = app && getComputedStyle(app).backgroundColor;
    if (background && document.documentElement.style.getPropertyValue("--gelu-background") !== background) {
      document.documentElement.style.setProperty("--gelu-background", background);
    }
    const text = app && getComputedStyle(app).color;  // the focus ring: the theme's text colour, 14:1 or more
    if (text && document.documentElement.style.getPropertyValue("--gelu-ring") !== text) {
      document.documentElement.style.setProperty("--gelu-ring", text);
    }
    for (const list of document.querySelectorAll("[data-testid='stSidebarNavItems']")) {
      const sections = [...list.children].filter((c) => c.tagName !== "LI" && c.querySelector(":scope > li"));
      if (!sections.length) continue;
      set(list, "role", "none");
      for (const section of sections) {
        const header = section.querySelector(":scope > header");
        set(section, "role", "list");
        if (!header) continue;
        set(header, "role", "none");  // its words name the list instead (the icon's ligature left out)
        set(section, "aria-label", header.textContent.replace(/expand_(more|less)$/, "").trim());
      }
    }
    // Streamlit's slider names each thumb by its own aria-label and, through aria-labelledby, the group's too: a
    // reader heard "Probe x Probe x"; the thumb's own label ("Probe x", "Range of x — start") names it alone
    for (const thumb of document.querySelectorAll("[data-testid='stSlider'] input[aria-label][aria-labelledby]")) {
      thumb.removeAttribute("aria-labelledby");
    }
    const tester = document.getElementById("js-plotly-tester");  // Plotly's off-screen SVG for measuring text:
    if (tester) set(tester, "aria-hidden", "true");  // read as an unnamed image at the end of every page
    for (const wide of document.querySelectorAll(".katex-display, [data-testid='stMarkdownContainer'] > table")) {
      if (wide.scrollWidth > wide.clientWidth + 1) set(wide, "tabindex", "0");  // scrolls sideways
    }
    for (const text of document.querySelectorAll(".gelu-chart-text")) {
      // its chart: the element just before it, else the chart keyed by its name (a chart the page draws, with its
      // words drawn by the part in the place after it: Approximations')
      const box = text.closest("[data-testid='stElementContainer']");
      const plot = (box && box.previousElementSibling && box.previousElementSibling.querySelector(".js-plotly-plot"))
        || document.querySelector(`.st-key-chart_${text.dataset.chart} .js-plotly-plot`);
      const summary = text.querySelector("p[id]");
      if (plot && summary) {
        set(plot, "role", "figure");
        set(plot, "aria-label", text.dataset.name);
        set(plot, "aria-describedby", summary.id);
        for (const svg of plot.querySelectorAll(".main-svg")) set(svg, "aria-hidden", "true");
      }
      const table = text.querySelector(".gelu-chart-table");
      if (table) { set(table, "tabindex", "0"); set(table, "role", "region"); set(table, "aria-label", "Chart data"); }
      const details = text.querySelector("details");
      if (details && opened.has(text.dataset.chart) && !details.open) details.open = true;
      if (summary && text.dataset.announce === "true") {
        const key = text.dataset.chart, now = summary.textContent;
        if (said.has(key) && said.get(key) !== now) changed.push(now);
        said.set(key, now);
      }
    }
    if (changed.length) {
      clearTimeout(timer);
      timer = setTimeout(() => { live.textContent = changed.join(" "); changed = []; }, 700);
    }
  };
  new MutationObserver(() => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; mend(); });
  }).observe(document.body, {childList: true, subtree: true, characterData: true, attributeFilter: ["class"]});
  mend();
})();
