// The race player: plays a finished race's film over the two charts the page drew (decision regions and borders,
// loss curves, each run's accuracy), at data.fps frames a second, from the table ui/race_player.py built.  Mounted
// by draw/race_player.py after plotly_private.js (the plotly* names), started by loader.js with the element's table.
export default function (component, data) {
  const { parentElement } = component;
  const button = parentElement.querySelector("button");
  if (button && data.replay && button.textContent !== data.replay) button.textContent = data.replay;
  const label = parentElement.querySelector(".gelu-race-step");
  const state = (window.__geluRace = window.__geluRace || { played: {}, shown: [], ticks: [] });
  const reduce = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  const chart = (key) => document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const n = data.grid, frames = data.steps.length;
  let film = null, stopped = false, playing = false;
  const decode = async () => {  // the film: (frames, 2, n, n) uint8 in whole percent, deflated and base64'd by Python
    const bytes = Uint8Array.from(atob(data.film), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new Uint8Array(await new Response(stream).arrayBuffer());
  };
  const axis = (fl, name, letter) => fl[name === letter ? `${letter}axis` : `${letter}axis${name.slice(1)}`];
  const canvas = document.createElement("canvas");
  canvas.width = n; canvas.height = n;
  const paint = canvas.getContext("2d"), pixels = paint.createImageData(n, n);
  const rgba = data.colors;  // the chart's colour scale at every whole percent, 101 x [r, g, b, a 0-255]
  const image = (k, run) => {  // a frame's regions as the heatmap's colour scale paints them, row 0 at the bottom
    const base = (k * 2 + run) * n * n;
    for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) {
      const colour = rgba[film[base + r * n + c]], at = ((n - 1 - r) * n + c) * 4;
      pixels.data[at] = colour[0]; pixels.data[at + 1] = colour[1]; pixels.data[at + 2] = colour[2];
      pixels.data[at + 3] = colour[3];
    }
    paint.putImageData(pixels, 0, 0);
    return canvas.toDataURL();
  };
  // The 50 % line through a frame's grid: marching squares, each crossing placed linearly along its cell's edge,
  // the pieces joined into lines and drawn smoothed through their midpoints (as Plotly smooths its contours).
  const border = (k, run, xa, ya) => {
    const base = (k * 2 + run) * n * n, g = data.axis, level = 50;
    const v = (r, c) => film[base + r * n + c];
    const at = (i) => g[0] + (g[n - 1] - g[0]) * i / (n - 1);  // a fractional grid index, in data units
    const points = new Map(), links = new Map();
    const hit = (id, c, r) => { if (!points.has(id)) points.set(id, [plotlyToPixel(xa, at(c)), plotlyToPixel(ya, at(r))]); return id; };
    const link = (p, q) => {
      if (!links.has(p)) links.set(p, []);
      if (!links.has(q)) links.set(q, []);
      links.get(p).push(q); links.get(q).push(p);
    };
    const cut = (a, b) => (level - a) / (b - a);
    for (let r = 0; r < n - 1; r++) for (let c = 0; c < n - 1; c++) {
      const a = v(r, c), b = v(r, c + 1), e = v(r + 1, c + 1), f = v(r + 1, c);  // corners counter-clockwise
      const up = [a >= level, b >= level, e >= level, f >= level], hits = [];
      if (up[0] !== up[1]) hits.push(hit(2 * (r * n + c), c + cut(a, b), r));  // bottom edge
      if (up[1] !== up[2]) hits.push(hit(2 * (r * n + c + 1) + 1, c + 1, r + cut(b, e)));  // right edge
      if (up[2] !== up[3]) hits.push(hit(2 * ((r + 1) * n + c), c + cut(f, e), r + 1));  // top edge
      if (up[3] !== up[0]) hits.push(hit(2 * (r * n + c) + 1, c, r + cut(a, f)));  // left edge
      if (hits.length === 2) link(hits[0], hits[1]);
      else if (hits.length === 4) {  // a saddle: the centre's side decides which corners are cut off
        const centre = (a + b + e + f) / 4 >= level;
        if (centre === up[0]) { link(hits[0], hits[1]); link(hits[2], hits[3]); }
        else { link(hits[0], hits[3]); link(hits[1], hits[2]); }
      }
    }
    const seen = new Set(), f1 = (p) => `${p[0].toFixed(1)},${p[1].toFixed(1)}`;
    let d = "";
    const walk = (start) => {
      const line = [start];
      seen.add(start);
      for (let here = start, next; (next = links.get(here).find((q) => !seen.has(q))) !== undefined; here = next) {
        seen.add(next); line.push(next);
      }
      if (links.get(line[line.length - 1]).includes(start) && line.length > 2) line.push(start);  // a loop
      const xy = line.map((id) => points.get(id));
      d += `M${f1(xy[0])}`;
      for (let i = 1; i < xy.length - 1; i++)
        d += `Q${f1(xy[i])} ${f1([(xy[i][0] + xy[i + 1][0]) / 2, (xy[i][1] + xy[i + 1][1]) / 2])}`;
      if (xy.length > 1) d += `L${f1(xy[xy.length - 1])}`;
    };
    for (const [id, next] of links) if (next.length === 1 && !seen.has(id)) walk(id);  // lines ending at the edge
    for (const id of links.keys()) if (!seen.has(id)) walk(id);  // then closed loops
    return d;
  };
  // Plotly's drawing of each chart, found afresh at every frame (a redraw by Streamlit may replace its nodes).
  const parts = () => {
    const regions = chart(data.regions), loss = chart(data.loss);
    if (!plotlyFull(regions) || !plotlyFull(loss)) return null;
    const fl = plotlyFull(regions), images = [...regions.querySelectorAll(".hm")];
    const borders = [...regions.querySelectorAll(".contour")];
    if (images.length !== 2 || borders.length !== 2) return null;
    const runs = images.map((g, run) => {
      const trace = plotlyTraceOf(g);
      return { image: g.querySelector("image"), border: borders[run], color: plotlyTraceOf(borders[run]).line.color,
               xa: axis(fl, trace.xaxis, "x"), ya: axis(fl, trace.yaxis, "y"),
               title: regions.querySelectorAll(`.annotation[data-index="${run}"] .annotation-text tspan.line`)[1] };
    });
    const lines = [...loss.querySelectorAll(".scatterlayer .trace")].map((g) => g.querySelector("path.js-line"));
    if (runs.some((r) => !r.image || !r.title) || lines.length !== data.curves.y.length || lines.some((l) => !l))
      return null;
    return { regions, runs, lines, xa: plotlyFull(loss).xaxis, ya: plotlyFull(loss).yaxis };
  };
  const ours = (run) => {  // our border path in the run's contour group, Plotly's smoothed one hidden meanwhile
    let path = run.border.querySelector("path.gelu-race-border");
    if (!path) {
      for (const other of run.border.querySelectorAll("path")) other.style.visibility = "hidden";
      path = document.createElementNS("http://www.w3.org/2000/svg", "path");
      path.setAttribute("class", "gelu-race-border");
      path.setAttribute("style", `fill:none;stroke:${run.color};stroke-width:3px;stroke-linejoin:round`);
      run.border.appendChild(path);
    }
    return path;
  };
  const IMAGE = ["href", "x", "y", "width", "height"];
  let saved = null;  // what Plotly drew where the film draws, to put back when it ends
  const show = (k, p) => {
    p.runs.forEach((run, i) => {
      const xa = run.xa, ya = run.ya, g = data.axis, half = (g[n - 1] - g[0]) / (n - 1) / 2;
      const x0 = plotlyToPixel(xa, g[0] - half), x1 = plotlyToPixel(xa, g[n - 1] + half);  // the cells' edges: a pixel per cell
      const y0 = plotlyToPixel(ya, g[n - 1] + half), y1 = plotlyToPixel(ya, g[0] - half);
      const attributes = [image(k, i), x0, y0, x1 - x0, y1 - y0];
      IMAGE.forEach((name, j) => run.image.setAttribute(name, attributes[j]));
      ours(run).setAttribute("d", border(k, i, xa, ya));
      run.title.textContent = data.titles[k][i];
    });
    const upTo = data.records[k];
    p.lines.forEach((line, j) => {
      const xs = data.curves.x[j], ys = data.curves.y[j];
      let d = "";
      for (let i = 0; i < upTo; i++) d += `${i ? "L" : "M"}${plotlyToPixel(p.xa, xs[i]).toFixed(2)},${plotlyToPixel(p.ya, ys[i]).toFixed(2)}`;
      line.setAttribute("d", d || "M0,0");
    });
    if (label) label.textContent = data.texts[k];
    const grid = (run) => film.subarray((k * 2 + run) * n * n, (k * 2 + run + 1) * n * n).join(",");
    const drew = state.check ? [grid(0), grid(1)] : [];  // for a test: the grids this frame drew
    state.shown.push({ id: data.id, k, step: data.steps[k], t: performance.now(), z: drew });
  };
  const end = () => {  // the last frame is the finished race: Plotly's own drawing of it comes back
    const p = parts();
    if (p && saved) {
      p.runs.forEach((run, i) => {
        IMAGE.forEach((name, j) => run.image.setAttribute(name, saved.images[i][j]));
        run.title.textContent = saved.titles[i];
        run.border.querySelector("path.gelu-race-border")?.remove();
        for (const path of run.border.querySelectorAll("path")) path.style.visibility = "";
      });
      p.lines.forEach((line, j) => line.setAttribute("d", saved.lines[j]));
    }
    if (label) label.textContent = data.texts[frames - 1];
    playing = false;
    if (button) button.disabled = false;
  };
  const play = async () => {
    if (playing || stopped) return;
    const p = parts();
    if (!p) { requestAnimationFrame(play); return; }  // the charts are drawn a moment after this layer
    playing = true;
    if (button) button.disabled = true;
    film = film || (await decode());
    state.played[data.id] = true;
    saved = { images: p.runs.map((r) => IMAGE.map((name) => r.image.getAttribute(name))),
              titles: p.runs.map((r) => r.title.textContent), lines: p.lines.map((l) => l.getAttribute("d")) };
    const every = 1000 / data.fps;
    let k = 0, due = performance.now();
    const tick = (now) => {
      state.ticks.push(now);
      if (stopped) return;
      if (now + 2 >= due) {
        const q = parts();
        if (!q) { end(); return; }
        show(k, q);
        k += 1;
        due = Math.max(due + every, now);  // a slow frame delays the next one; none is skipped
      }
      if (k < frames) requestAnimationFrame(tick);
      else end();
    };
    requestAnimationFrame(tick);
  };
  if (button) button.addEventListener("click", play);
  if (!reduce && !state.played[data.id]) play();
  return () => {
    stopped = true;
    if (button) button.removeEventListener("click", play);
    if (playing) end();  // a rerun mid-film: Plotly's own drawing back
  };
}
