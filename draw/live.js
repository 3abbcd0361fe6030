// The live layer: while a student drags a slider, the page's readouts and chart follow at frame rate, with no
// server round-trip.  It reads the table ui/live.py built for the control (the page's numbers at every step of the
// slider's grid, already formatted: the browser picks a row, it neither computes nor formats), watches the slider's
// thumb, writes the row's strings into the readouts the page drew, and moves the chart's probe traces and views in
// the SVG Plotly drew.  Mounted by draw/live.py after plotly_private.js (the plotly* names), started by loader.js.
export default function (component, given) {
  const { parentElement } = component;
  // the table, fetched by loader.js (ui/live.as_json's JSON, published), or as the element holds it: as its JSON's
  // UTF-8 bytes, else as an object
  const data = ArrayBuffer.isView(given) ? JSON.parse(new TextDecoder().decode(given)) : given;
  const note = parentElement.querySelector(".gelu-live-note");
  let input = null, inputs = [], shown = -1, stopped = false;
  // a column is a list, or its distinct values and an index ({u, i}: ui/live._packed); null: write nothing there
  const at = (column, k) => (Array.isArray(column) ? column[k] : column.u[column.i[k]]);
  // A page whose own value sits in an exact input beside this slider (a coarse pick) may show a value off the
  // grid: then the layer writes nothing, until a pointer or a key on this slider leads.
  // Whether this slider leads is kept across reruns (each rerun mounts the layer anew, and keys rerun at each step).
  const leads = (window.__geluLiveLead = window.__geluLiveLead || {});
  const held = () => {
    if (data.kind === "number") return !onGrid();  // a typed number off the table's grid: the page's, until Enter
    const exact = !leads[data.control] && data.exact && document.querySelector(data.exact);
    return !!exact && !!input && Number(exact.value) !== Number(input.value);
  };
  const onGrid = (el = input) => {  // a field's value is one of the grid's (a number typed between steps is not)
    const text = el ? el.value.trim() : "", v = Number(text);
    return text !== "" && Number.isFinite(v) && data.grid[step(el)] === v;
  };
  const step = (el) => Math.max(0, Math.min(data.count - 1, Math.round((Number(el.value) - data.min) / data.step)));
  // one thumb: its step; a range slider's two: lo's step × count + hi's
  const gridIndex = () => inputs.reduce((k, el) => k * data.count + step(el), 0);
  const charts = [data.chart, ...(data.charts || [])].filter((spec) => spec.key);
  const plotAt = (key) => document.querySelector(`.st-key-${key} .js-plotly-plot`);  // a chart's plot, by its key
  const plotOf = (spec) => plotAt(spec.key);
  // Home (data.joint): what depends on all five inputs, the chart's view and the paragraphs, is one table for every
  // way the five can stand on their grid (ui/home.joint_table), the same for each input's layer.  Its columns are
  // indexed by picks among the five as they stand (this input at the step shown, the others at their fields'
  // values), found by comparing them: the lowest and highest, the lowest GELU, the most negative, the smallest
  // positive.  A field off the grid (a number typed between steps): no picks, and nothing of it is written until
  // the rerun draws the page's own.
  const joint = data.joint || null;
  const fieldStep = (control) => {
    const el = document.querySelector(`.st-key-${control} ${data.input || "input[type=range]"}`);
    return el && onGrid(el) ? step(el) : -1;
  };
  const picks = (k) => {
    const steps = joint.controls.map((c) => (c === data.control ? k : fieldStep(c)));
    if (steps.some((s) => s < 0)) return null;
    const v = steps.map((s) => data.grid[s]);
    let lo = 0, hi = 0, low = 0, neg = -1, pos = -1;
    steps.forEach((s, j) => {
      if (v[j] < v[lo]) lo = j;
      if (v[j] > v[hi]) hi = j;
      if (joint.gelu[s] < joint.gelu[steps[low]]) low = j;  // the first of the lowest, as the page's argmin
      if (v[j] < 0 && (neg < 0 || v[j] < v[neg])) neg = j;
      if (v[j] > 0 && (pos < 0 || v[j] < v[pos])) pos = j;
    });
    return { pair: joint.lo[steps[lo]] * joint.highs + joint.hi[steps[hi]], max: steps[hi], low: steps[low],
             neg: neg < 0 ? 0 : steps[neg] + 1, pos: pos < 0 ? 0 : steps[pos] + 1 };
  };
  const views = joint ? joint.views : data.views || {};  // a chart's key -> its view's layout keys -> their columns
  // a chart's view at position k, as Plotly.relayout keys (null: none to show there)
  const viewValues = (key, k) => {
    const columns = views[key], p = joint ? picks(k) : null;
    if (!columns || (joint && !p)) return null;
    const update = {};
    for (const [name, column] of Object.entries(columns)) {
      const value = joint ? at(column[1], p[column[0]]) : at(column, k);
      if (value != null) update[name] = value;
    }
    return update;
  };
  // how many characters the widest y tick label in range has (ui/home.tick_width): views alike in it share margins
  const tickWidth = (range, vals, texts) => (range && vals && texts
    ? Math.max(...texts.filter((_, j) => vals[j] <= range[1]).map((t) => t.length)) : "");
  const px = (v) => Math.round(v * 100) / 100;  // as Plotly writes its paths
  // Plotly drew the figure; move its probe markers and lines the way it places them (an axis's c2p, points in
  // the subplot's frame, shapes in the page's), without a redraw.  The axes' ranges are fixed by the figure, so
  // a moved probe changes nothing else; the next rerun's figure has them where they are now.
  const moveChart = (k) => { for (const spec of charts) moveOne(spec, k); };
  const moveOne = (spec, k) => {
    const gd = plotOf(spec), fl = plotlyFull(gd);
    if (!fl || !fl.xaxis || !fl.yaxis) return;
    const xa = fl.xaxis, ya = fl.yaxis, [x0, x1] = [Math.min(...xa.range), Math.max(...xa.range)];
    const toX = (v) => plotlyToPixel(xa, v), toY = (v) => plotlyToPixel(ya, v);
    const drawn = {};  // meta -> [its group, its trace as Plotly holds it]
    for (const g of gd.querySelectorAll(".scatterlayer .trace")) {
      const trace = plotlyTraceOf(g);
      if (trace) drawn[trace.meta] = [g, trace];
      const traceSpec = trace && spec.traces[trace.meta];
      if (!traceSpec) continue;
      const x = traceSpec.x[k], y = traceSpec.y[k], inside = x0 <= x && x <= x1;
      const points = [...g.querySelectorAll("path.point")];  // a trace of several points: only its own moves
      for (const point of traceSpec.point == null ? points : points.slice(traceSpec.point, traceSpec.point + 1)) {
        point.setAttribute("transform", `translate(${toX(x)},${toY(y)})`);
        point.style.display = inside ? "" : "none";
      }
      if (traceSpec.segment != null) {  // a line trace of segments (None between them): its own, from y0 to y1 at x
        const path = g.querySelectorAll("path.js-line")[traceSpec.segment];
        if (path) {
          path.setAttribute("d", `M${toX(x)},${toY(traceSpec.y0[k])}L${toX(x)},${toY(traceSpec.y1[k])}`);
          path.style.display = inside ? "" : "none";
        }
      }
    }
    // An area filled to y = 0 under another trace's curve: that trace's first n points (the server's), drawn as
    // Plotly draws a "tozeroy" fill (from the base's right end to its left, then along the points).
    for (const [meta, fill] of Object.entries(spec.fills || {})) {
      const [own, curve] = [drawn[meta], drawn[fill.of]];
      const area = own && own[0].querySelector("path.js-fill"), edge = own && own[0].querySelector("path.js-line");
      const n = fill.n[k];
      if (!area || !curve || !(n >= 1)) continue;
      const xs = curve[1].x, ys = curve[1].y, base = px(toY(0));
      let along = "";
      for (let i = 0; i < n; i++) along += `${i ? "L" : ""}${px(toX(xs[i]))},${px(toY(ys[i]))}`;
      area.setAttribute("d", `M${px(toX(xs[n - 1]))},${base}L${px(toX(xs[0]))},${base}L${along}`);
      if (edge) edge.setAttribute("d", `M${along}`);
      const line = fill.edge != null && gd.querySelector(`.shapelayer path[data-index="${fill.edge}"]`);
      if (line) {
        const at = px(plotlyAxisOffset(xa) + toX(xs[n - 1]));
        line.setAttribute("d", `M${at},${px(plotlyAxisOffset(ya) + toY(0))}L${at},${px(plotlyAxisOffset(ya) + toY(ys[n - 1]))}`);
      }
    }
    for (const [index, column] of Object.entries(spec.lines || {})) {
      const line = gd.querySelector(`.shapelayer path[data-index="${index}"]`);
      const m = line && /^M[^,]+,([^L]+)L[^,]+,(.+)$/.exec(line.getAttribute("d"));
      if (!m) continue;
      const at = plotlyAxisOffset(xa) + toX(column[k]);
      line.setAttribute("d", `M${at},${m[1]}L${at},${m[2]}`);
      line.style.display = x0 <= column[k] && column[k] <= x1 ? "" : "none";
    }
    for (const [index, leaves] of Object.entries(spec.annotations || {})) {  // a label's text, piece by piece
      const text = gd.querySelector(`.annotation[data-index="${index}"] .annotation-text`);
      const walk = text && document.createTreeWalker(text, NodeFilter.SHOW_TEXT);
      for (let j = 0, node; walk && j < leaves.length && (node = walk.nextNode()); j++)
        if (node.nodeValue !== at(leaves[j], k)) node.nodeValue = at(leaves[j], k);
    }
  };
  // At rest (no pointer or key held), a chart the page draws (spec.settle: a move's rerun sends only its words) gets
  // the row into its own data and layout, as the page's figure at this value holds them: the one-point probes' x, y
  // and name, a filled area's points and edge line, the lines' x, the labels' text (spec.labels, with their markup).
  // Plotly then draws them itself, so its hover labels and PNG export show the value the view shows, not the one the
  // page was drawn at.  One quiet Plotly.update a chart, none where the plot holds them already (Streamlit's redraw
  // of its own figure, at a resize, brings the page's values back: plotly_afterplot settles again).
  const settle = () => {
    if (stopped || press || keyDrag || typed || shown < 0 || !input || held()) return;
    for (const spec of charts) {
      if (spec.words) settleWords(spec.words, shown);
      if (spec.settle) settleOne(spec, shown);
    }
  };
  // The chart's words (ui/describe.py), drawn by the page beside it: at rest, what they say of each marked point (its
  // name where the table gives one, its two numbers, and the sentence they make), each label's words, and the
  // sentence and rows of a shaded area or of a curve whose view a control sets (and the chart's name, which names the
  // area), so a move's rerun sends none of them.  Written at rest only: the page's polite live region reads a changed
  // summary once.
  const settleWords = (words, k) => {
    const box = document.querySelector(`.gelu-chart-text[data-chart="${words.chart}"]`);
    if (!box) return;
    const spans = new Map([...box.querySelectorAll("span[data-said]")].map((el) => [el.dataset.said, el]));
    const rows = new Map([...box.querySelectorAll("tr[data-said]")].map((el) => [el.dataset.said, el]));
    const put = (el, text) => { if (el && text != null && el.textContent !== text) el.textContent = text; };
    for (const [meta, mark] of Object.entries(words.marks)) {
      const a = at(mark.x, k), b = at(mark.y, k), name = mark.name ? at(mark.name, k) : null;
      put(spans.get(`${meta}:name`), name);
      put(spans.get(`${meta}:${mark.point}`), words.said.replace("{a}", () => a).replace("{b}", () => b));
      const cells = rows.get(`${meta}:${mark.point}`)?.cells;
      if (cells && cells.length === 3) { put(cells[0], name); put(cells[1], a); put(cells[2], b); }
    }
    for (const [i, column] of Object.entries(words.labels || {})) put(spans.get(`label:${i}`), at(column, k));
    if (words.names) {  // the chart's name, which names a shaded area: its words' and the plot's (a11y.js)
      const name = at(words.names, k);
      if (name != null && box.dataset.name !== name) box.dataset.name = name;
      put(box.querySelector("caption"), name);
    }
    for (const [meta, curve] of Object.entries(words.curves || {})) {  // a shaded area's or viewed curve's words
      put(spans.get(`${meta}:curve`), at(curve.curve, k));
      const name = at(curve.name, k);
      let tr = rows.get(`${meta}:rows`);  // its first row; the rest follow it
      for (const [a, b] of at(curve.rows, k) || []) {
        if (tr && tr.cells.length === 3) { put(tr.cells[0], name); put(tr.cells[1], a); put(tr.cells[2], b); }
        tr = tr && tr.nextElementSibling;
      }
    }
  };
  const settleSoon = () => requestAnimationFrame(() => setTimeout(settle));
  const sameValues = (a, b) => a != null && b != null && a.length === b.length
    && Array.prototype.every.call(a, (v, i) => v === b[i]);
  const settleOne = (spec, k) => {
    const gd = plotOf(spec);
    if (!gd || !Array.isArray(gd.data) || !gd.layout || !plotlyFull(gd) || !window.Plotly) return;
    const index = new Map(gd.data.map((trace, i) => [trace.meta, i]));
    const drawn = {};  // meta -> the trace as Plotly holds it (its arrays decoded: the figure's are base64)
    for (const g of gd.querySelectorAll(".scatterlayer .trace")) {
      const trace = plotlyTraceOf(g);
      if (trace) drawn[trace.meta] = trace;
    }
    const traces = [], data = { x: [], y: [], name: [], customdata: [] };
    const put = (meta, x, y, name, custom) => {
      const i = index.get(meta), now = drawn[meta] || gd.data[i];
      if (name == null) name = gd.data[i].name;
      if (custom == null) custom = gd.data[i].customdata ?? null;
      if (sameValues(now.x, x) && sameValues(now.y, y) && gd.data[i].name === name
          && JSON.stringify(gd.data[i].customdata ?? null) === JSON.stringify(custom)) return;
      traces.push(i); data.x.push(x); data.y.push(y); data.name.push(name); data.customdata.push(custom);
    };
    for (const [meta, t] of Object.entries(spec.traces)) {
      if (!index.has(meta)) continue;
      if (t.point == null && t.segment == null) {  // a one-point probe
        put(meta, [t.x[k]], [t.y[k]], t.name ? at(t.name, k) : null, t.customdata ? at(t.customdata, k) : null);
        continue;
      }
      // this control's own point of a trace of several (Home's five inputs), or its segment of a line trace of
      // segments (two points each, null between them); the others' stay as they are
      const now = drawn[meta] || gd.data[index.get(meta)], xs = Array.from(now.x), ys = Array.from(now.y);
      if (t.point != null) [xs[t.point], ys[t.point]] = [t.x[k], t.y[k]];
      else {
        let start = 0;
        for (let j = 0; j < t.segment && start < xs.length; start++) if (xs[start] == null) j++;
        if (start + 1 >= xs.length) continue;
        [xs[start], xs[start + 1], ys[start], ys[start + 1]] = [t.x[k], t.x[k], t.y0[k], t.y1[k]];
      }
      put(meta, xs, ys, null, null);
    }
    const layout = {};
    for (const [meta, fill] of Object.entries(spec.fills || {})) {
      const curve = drawn[fill.of], n = fill.n[k];
      if (!index.has(meta) || !curve || !(n >= 1) || curve.x.length < n) continue;
      const xs = Array.from(curve.x).slice(0, n), ys = Array.from(curve.y).slice(0, n);
      put(meta, xs, ys, fill.name ? at(fill.name, k) : null, null);
      if (fill.edge != null) {
        const edge = `shapes[${fill.edge}]`;
        Object.assign(layout, { [`${edge}.x0`]: xs[n - 1], [`${edge}.x1`]: xs[n - 1], [`${edge}.y1`]: ys[n - 1] });
      }
    }
    for (const [i, column] of Object.entries(spec.lines || {})) {
      Object.assign(layout, { [`shapes[${i}].x0`]: column[k], [`shapes[${i}].x1`]: column[k] });
    }
    for (const [i, column] of Object.entries(spec.labels || {})) layout[`annotations[${i}].text`] = at(column, k);
    for (const name of Object.keys(layout)) if (layoutAt(gd.layout, name) === layout[name]) delete layout[name];
    if (!traces.length && !Object.keys(layout).length) return;
    quietly(gd, () => window.Plotly.update(gd, traces.length ? data : {}, layout, traces.length ? traces : undefined));
  };
  // A chart whose view a control sets (a range: its axes): the axes' ranges and ticks the table holds for this
  // position, drawn by Plotly (setView); the data stay.  Skipped where the chart already shows that view.
  // Only a chart on the screen follows each move: a view's redraw costs 4-6 ms for the forms chart and 10-12 ms
  // for a log-axis one (several times that on a loaded machine), and a chart off the screen, relaid out beside a
  // move, made that frame late (measured: with a catch-up once the moves paused 120 ms, the two error charts were
  // relaid out at 12 of 15 steps of a slow drag).  A chart off the screen follows when it comes into view (an
  // IntersectionObserver), and the others once no pointer or key is held (at the release), one chart a frame.
  let wave = 0;  // the latest catch-up; a later one replaces it
  const visible = new Map();  // plot -> on the screen, as the observer last said
  const keyOf = new Map();  // plot -> its chart's key
  const watched = new WeakSet();  // the plots the observer watches
  const seen = typeof IntersectionObserver === "function" ? new IntersectionObserver((entries) => {
    for (const entry of entries) {
      visible.set(entry.target, entry.isIntersecting);
      if (entry.isIntersecting && !stopped && shown >= 0) setView(viewAt(keyOf.get(entry.target), shown));
    }
  }) : null;
  const inView = (gd) => {
    if (visible.has(gd)) return visible.get(gd);
    if (seen && !watched.has(gd)) { watched.add(gd); seen.observe(gd); }
    const r = gd.getBoundingClientRect();  // until the observer's first word
    return r.bottom > 0 && r.top < window.innerHeight && r.right > 0 && r.left < window.innerWidth;
  };
  // chart key -> its plot and the layout keys that give position k's view, or null: no chart, or already that view
  const viewAt = (key, k) => {
    const gd = views[key] && plotAt(key);
    if (!plotlyFull(gd) || !window.Plotly) return null;
    keyOf.set(gd, key);
    const update = viewValues(key, k) || {};
    const tag = JSON.stringify(update);
    if (!Object.keys(update).length || (gd.__geluView === tag && gd.__geluLayout === gd.layout)) return null;
    // only what differs from what the plot shows (an axis whose range stays is not drawn again; a label alone is
    // Plotly's cheapest redraw), each value a copy (Plotly keeps what it is given in its layout, and may change it)
    const changed = {};
    for (const [name, v] of Object.entries(update)) {
      const json = JSON.stringify(v);
      if (JSON.stringify(layoutAt(gd.layout, name)) !== json) changed[name] = Array.isArray(v) ? JSON.parse(json) : v;
    }
    if (!Object.keys(changed).length) {  // a figure or a relayout that shows it already
      [gd.__geluView, gd.__geluLayout] = [tag, gd.layout];
      return null;
    }
    return { gd, update: changed, tag, cls: marginClass(key, k) };
  };
  // The view is drawn by Plotly.relayout, with its event kept from Streamlit's chart.  That chart listens (gd.on) for
  // plotly_relayout, _restyle and _redraw, and on each copies the plot's figure into its React state, which queues a
  // Plotly.react of it.  One landing while a react of Streamlit's was still queued (a rerun's new chart: its first
  // draw, then its draw at the measured width) left two figures in that queue, and each react's end put its own
  // figure back as the state, queuing it again behind the other: Plotly redrew the two in turn without end (CI's
  // key-stepping test hung 20 min).  Streamlit's state needs no copy: relayout changes the plot's own layout, the
  // object that state holds.  Plotly.react on that layout emits none of those events either, but costs ~1.8 times
  // a relayout (27 against 15 ms a view on Step by step's chart, one run at load 5).  So, for the relayout's own
  // call and until its promise settles, those events go to Plotly's internal listeners only.
  const QUIET = new Set(["plotly_relayout", "plotly_restyle", "plotly_redraw"]);
  const quietly = (gd, draw) => plotlyQuietly(gd, QUIET, draw);
  // A chart whose view changes no tick label's width (data.steady): its margins held where Plotly's auto-margins
  // put them on Streamlit's draw at the chart's measured width (the legend's rows, the titles), so a relayout skips
  // the auto-margin pass: 10 ms a view on Step by step's chart against 27 (medians of 48, one run, load 7).  Not on
  // Streamlit's first draw, before the width is measured (Plotly's default width: the legend in fewer rows), and let
  // go when a draw has another width (a resize); the rerun's figure has its auto-margins back.  A chart whose views
  // fall in classes of their own margins (joint.steady: Home's, by the width of its y tick labels, ``tickWidth``)
  // holds each class's, as Plotly put them when it last drew a view of that class with its auto-margins at that
  // width: a view of a class not drawn yet at this width is drawn with the auto-margin pass, once.
  // (data.steady: chart keys; joint.steady: a chart key -> the narrowest plot area, in px, whose margins are held;
  // narrower, Plotly's auto-margins may change within a class: x tick labels turn)
  const steady = new Map(joint ? Object.entries(joint.steady).map(([key, min]) => [key, { width: true, min }])
                               : (data.steady || []).map((key) => [key, { width: false, min: 0 }]));
  const marginClass = (key, k) => {
    const view = steady.get(key) && steady.get(key).width ? viewValues(key, k) : null;
    return view ? tickWidth(view["yaxis.range"], view["yaxis.tickvals"], view["yaxis.ticktext"]) : "";
  };
  // While margins are held, the axes' automargin is off too: with it on, Plotly measures every tick label of an axis
  // it draws (getBoundingClientRect, ~7 ms a view on Home at load 7) to push margins that are held anyway.
  const AXES = ["xaxis", "yaxis"];
  const ownMargins = (gd) => {
    const own = gd.__geluMargin || {}, axes = gd.__geluAutomargin || {};
    const update = { "margin.l": own.l ?? null, "margin.r": own.r ?? null, "margin.t": own.t ?? null,
                     "margin.b": own.b ?? null, "margin.autoexpand": own.autoexpand ?? true };
    for (const ax of AXES) if (gd.layout[ax]) update[`${ax}.automargin`] = axes[ax] ?? null;
    return update;
  };
  // gd.__geluHeld: {layout, width, cls} while its margins are held (on that layout object: a rerun's figure is a new
  // one, with the page's margins); gd.__geluSizes: {width, by: class -> margins} as Plotly last placed them itself;
  // gd.__geluAuto: the class of the view our last relayout with auto-margins drew; gd.__geluOwn: the layout object
  // the layer last relaid out (until then, what Plotly shows is the page's figure, at the page's own position).
  const heldOn = (gd) => (gd.__geluHeld && gd.__geluHeld.layout === gd.layout ? gd.__geluHeld : null);
  const letGo = () => {  // after a draw at another width than the one the margins were held at
    for (const key of steady.keys()) {
      const gd = plotAt(key), held = gd && heldOn(gd);
      if (!held || !gd.layout || gd.layout.width === held.width) continue;
      gd.__geluHeld = null;
      gd.__geluAuto = held.cls;  // what it shows, drawn now with Plotly's own margins at the new width
      quietly(gd, () => window.Plotly.relayout(gd, ownMargins(gd)));
    }
  };
  const holdMargins = (gd, key, cls, update) => {
    const fl = plotlyFull(gd), size = plotlyPlotArea(gd), width = gd.layout.width, held = heldOn(gd), spec = steady.get(key);
    if (typeof width !== "number" || !size) return;  // Streamlit's first draw, before the width is measured
    if (size.w < spec.min) {  // too narrow to hold: Plotly's own margins
      if (held) Object.assign(update, ownMargins(gd));
      gd.__geluHeld = null;
      return;
    }
    if (!gd.__geluSizes || gd.__geluSizes.width !== width) gd.__geluSizes = { width, by: {} };
    const by = gd.__geluSizes.by;
    if (!held && fl.margin.autoexpand !== false) {  // what Plotly drew itself: the margins of its view's class
      const y = gd.layout.yaxis || {};
      const drawn = gd.__geluOwn !== gd.layout  // the rerun's figure: the class of the view it shows
        ? (spec.width ? tickWidth(y.range, y.tickvals, y.ticktext) : "")
        : gd.__geluAuto;
      if (drawn !== undefined) by[drawn] = { l: size.l, r: size.r, t: size.t, b: size.b };
    }
    if (held && held.width === width && held.cls === cls) return;  // held already, as this view needs
    const want = by[cls];
    gd.__geluMargin = gd.__geluMargin || { ...(gd.layout.margin || {}) };
    if (!gd.__geluAutomargin) {
      gd.__geluAutomargin = {};
      for (const ax of AXES) if (gd.layout[ax]) gd.__geluAutomargin[ax] = gd.layout[ax].automargin;
    }
    if (want && ["l", "r", "t", "b"].every((side) => want[side] === size[side])) {
      // the margins it is drawn with already: held by writing them into its layout and Plotly's full copy (a
      // relayout of margins redraws the whole chart, ~30 ms here; this draws nothing, and the next view is drawn
      // in them)
      gd.layout.margin = gd.layout.margin || {};
      for (const m of [gd.layout.margin, fl.margin]) Object.assign(m, { ...want, autoexpand: false });
      for (const ax of AXES) if (gd.layout[ax] && fl[ax]) gd.layout[ax].automargin = fl[ax].automargin = false;
      gd.__geluHeld = { layout: gd.layout, width, cls };
    } else if (want) {
      Object.assign(update, { "margin.l": want.l, "margin.r": want.r, "margin.t": want.t, "margin.b": want.b,
                              "margin.autoexpand": false });
      for (const ax of AXES) if (gd.layout[ax]) update[`${ax}.automargin`] = false;
      gd.__geluHeld = { layout: gd.layout, width, cls };
    } else {  // a class not drawn yet at this width: Plotly places its margins (and they are noted at the next view)
      if (held || fl.margin.autoexpand === false) Object.assign(update, ownMargins(gd));
      gd.__geluHeld = null;
    }
    gd.__geluAuto = want ? undefined : cls;
  };
  // A label's place and text (annotations[i].x, .text, ...) are written into the plot's layout and Plotly's full
  // copy of it, not relaid out: Plotly's relayout of any of them recomputes the whole figure (their edit type is
  // "calc": 30-90 ms a step on Home's chart, load 7, against 8-15 for its axes).  The axes' relayout then draws the
  // label anew where it now says; with no axis to move, a relayout of its "align" to the value it has (an edit of
  // type "arraydraw") draws that label alone, ~4 ms.
  const LABEL = /^annotations\[(\d+)\]\.(\w+)$/;
  const setView = (view) => {
    if (!view) return;
    const gd = view.gd, key = keyOf.get(gd), update = {}, labels = new Set();
    const own = gd.layout.annotations || [], full = (plotlyFull(gd) && plotlyFull(gd).annotations) || [];
    for (const [name, v] of Object.entries(view.update)) {
      const m = LABEL.exec(name), i = m && Number(m[1]);
      // (a label Plotly holds as hidden has none of its other attributes in the full copy: relaid out)
      if (!m || !own[i] || !full[i] || full[i].xref == null) { update[name] = v; continue; }
      own[i][m[2]] = v;
      full[i][m[2]] = v;
      labels.add(i);
    }
    if (steady.has(key)) holdMargins(gd, key, view.cls, update);
    if (!Object.keys(update).length) for (const i of labels) update[`annotations[${i}].align`] = full[i].align;
    gd.__geluView = view.tag;
    gd.__geluLayout = gd.__geluOwn = gd.layout;  // a rerun's figure is a new layout: its view is the figure's own
    quietly(gd, () => window.Plotly.relayout(gd, update));
  };
  // Margins are held ahead, once Streamlit has drawn a figure at its measured width and nothing is held on the page
  // (the page's own margins, written in place: no redraw).
  const holdAhead = () => {
    if (stopped || press || keyDrag || typed || shown < 0 || !Object.keys(views).length) return;
    for (const key of steady.keys()) {
      const gd = plotAt(key);
      if (!gd || !gd.layout || !plotlyFull(gd) || heldOn(gd) || !(key in views)) continue;
      keyOf.set(gd, key);
      const update = {};
      holdMargins(gd, key, marginClass(key, shown), update);
      if (!Object.keys(update).length) continue;  // held in place (its own margins), or none to hold
      gd.__geluOwn = gd.layout;
      quietly(gd, () => window.Plotly.relayout(gd, update));
    }
  };
  const moveViews = (k) => {
    let behind = false;
    for (const key of Object.keys(views)) {
      const view = viewAt(key, k);
      if (view && inView(view.gd)) setView(view);
      else if (view) behind = true;
    }
    if (behind && !press) catchUpSoon();
  };
  const catchUpSoon = () => {
    const w = ++wave;
    requestAnimationFrame(() => setTimeout(() => catchUp(w)));
  };
  const catchUp = (w) => {  // the first chart still behind, then the next one a frame later
    if (stopped || w !== wave) return;
    for (const key of Object.keys(views)) {
      const view = viewAt(key, shown);
      if (!view) continue;
      setView(view);
      requestAnimationFrame(() => setTimeout(() => catchUp(w)));
      return;
    }
  };
  const write = (selector, nth, text, child) => {
    const el = document.querySelectorAll(selector)[nth];
    if (!el || text == null) return;
    const node = el.childNodes[child || 0];  // the text node React owns: change it in place, so a rerun updates it
    if (node && node.nodeType === 3) { if (node.nodeValue !== text) node.nodeValue = text; }
    else if (el.textContent !== text) el.textContent = text;
  };
  const writeTexts = (k) => {
    for (const [selector, nth, column, child] of data.texts) write(selector, nth, at(column, k), child);
    const p = joint ? picks(k) : null;  // Home's paragraphs
    for (const [selector, nth, [pick, column], child] of p ? joint.texts : []) {
      write(selector, nth, at(column, p[pick]), child);
    }
    const sentence = data.note ? at(data.note, k) : "";
    if (note && note.textContent !== sentence) note.textContent = sentence;
  };
  const cost = (window.__geluLiveMs = window.__geluLiveMs || []);  // for benchmarks/bench_drag.py
  const apply = (k) => {
    const t0 = performance.now();
    shown = k;  // first: a redraw the moves below cause (plotly_afterplot, within them) follows this row
    // the views first: Plotly measures tick labels as it draws a view (getBoundingClientRect), which makes the browser
    // lay out the page anew if anything in it changed since the last frame, the texts written below included (on
    // Home, 10-20 ms a step at load 8); then a chart whose view and probe both follow puts its probe on the new axes
    moveViews(k);
    writeTexts(k);
    moveChart(k);
    speak();
    if (cost.length < 5000) cost.push([t0, performance.now() - t0]);
  };
  let press = null;  // a pointer held on the slider (below): while it is, the pointer's value leads
  const current = () => (press ? shown : gridIndex());
  // What a screen reader hears of each thumb: the value and what it is ("x = −1.00"), and aria-valuenow, at the
  // step shown (a pointer's, a frame before React moves the thumb); written again whenever React rewrites them.
  const speak = () => {
    if (data.kind === "number") return;  // a number input is a spinbutton: its own value is what it says
    const steps = inputs.length === 1 ? [current()] : inputs.map(step);
    inputs.forEach((el, j) => {
      const text = data.spoken[j][steps[j]], now = String(data.grid[steps[j]]);
      if (el.getAttribute("aria-valuetext") !== text) el.setAttribute("aria-valuetext", text);
      if (el.getAttribute("aria-valuenow") !== now) el.setAttribute("aria-valuenow", now);
    });
  };
  const onChange = () => {
    if (input && !stopped) speak();
    if (!input || stopped || press) return;
    const k = gridIndex();
    if (held()) shown = k;  // the page moved the thumb to the step nearest what it shows: not a gesture
    else if (k !== shown) { apply(k); settleSoon(); }  // a key the slider keeps (Home, End, Page Up / Down)
  };
  // An arrow key on the thumb: Streamlit's slider commits each key press (a rerun per auto-repeat of a held key).
  // Instead the key drives the thumb as a pointer would, by synthetic pointer events one step's width apart on
  // react-aria's own move handlers: the thumb, the readouts and the chart follow each repeat with no message sent,
  // and the key's release is the pointer's, one commit.  Home, End and the page keys are left to the slider.
  const ARROWS = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 };
  let keyDrag = null;
  const fire = (target, type, x, y) => target.dispatchEvent(new PointerEvent(type, {
    bubbles: true, cancelable: true, composed: true, pointerId: 9001, pointerType: "mouse", isPrimary: true,
    button: type === "pointermove" ? -1 : 0, buttons: type === "pointerup" ? 0 : 1, clientX: x, clientY: y }));
  const endKeyDrag = () => {
    if (!keyDrag) return;
    const { x, y } = keyDrag;
    keyDrag = null;
    fire(window, "pointerup", x, y);
  };
  const onKey = (e) => {
    leads[data.control] = !!input && e.target === input;  // not a key in the exact input
    const dir = ARROWS[e.key], at = inputs.indexOf(e.target);
    if (stopped || !dir || at < 0 || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    e.stopPropagation();  // before React's listener: the slider never sees the key
    const el = inputs[at], t = track(), thumb = el.parentElement.parentElement;
    if (!t || !thumb) return;
    // the step the key leads to: not past an end, nor past a range's other thumb (there the key does nothing)
    const now = inputs.length === 1 ? current() : step(el);
    const lo = at > 0 ? step(inputs[at - 1]) : 0, hi = at < inputs.length - 1 ? step(inputs[at + 1]) : data.count - 1;
    if (now + dir < lo || now + dir > hi) return;
    if (!keyDrag) {
      const r = thumb.getBoundingClientRect();
      keyDrag = { x: r.left + r.width / 2, y: r.top + r.height / 2 };
      fire(thumb, "pointerdown", keyDrag.x, keyDrag.y);
    }
    keyDrag.x += (dir * t.getBoundingClientRect().width) / (data.count - 1);
    fire(window, "pointermove", keyDrag.x, keyDrag.y);
  };
  const onKeyUp = (e) => {
    if (keyDrag && ARROWS[e.key]) endKeyDrag();
    if (typed && (e.key === "ArrowUp" || e.key === "ArrowDown")) {  // the held key's release: one commit (Enter)
      typed = false;
      const enter = { key: "Enter", code: "Enter", bubbles: true, cancelable: true };
      input.dispatchEvent(new KeyboardEvent("keydown", enter));
      settleSoon();
    }
  };
  // A number input (Home's): ArrowUp / ArrowDown step its value, and Streamlit commits each (a rerun per repeat of a
  // held key).  Instead the layer writes the next step's value into the field as Streamlit writes a typed one (an
  // input event: the field holds it, uncommitted), shows that step, and on the key's release presses Enter for it,
  // once.  Typing a number on the grid shows it at once too; Enter (or leaving the field) commits it as before.
  let typed = false;
  const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set;
  const onNumberKey = (e) => {
    const dir = { ArrowUp: 1, ArrowDown: -1 }[e.key];
    if (stopped || !dir || !input || e.target !== input || held() || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    e.stopPropagation();
    const k = current() + dir;
    if (k < 0 || k >= data.count) return;
    setValue.call(input, data.values[k]);
    input.dispatchEvent(new Event("input", { bubbles: true }));
    typed = true;
  };
  const onInput = (e) => {
    if (!input || e.target !== input || stopped || held()) return;
    const k = gridIndex();
    if (k !== shown) apply(k);
    if (!typed) settleSoon();  // a number typed on the grid (a held arrow key's steps settle at its release)
  };
  // A rerun for an earlier position (a key press is sent at once, and the thumb may have moved on since) draws
  // that position's numbers: the thumb wins, so whatever the page redraws is set back to the thumb's row.
  const hooked = new Map();  // chart key -> the plot whose redraws are watched
  const afterPlot = () => {
    if (!stopped) letGo();
    if (!input || stopped || held()) return;
    const k = current();
    if (Object.keys(views).length) {
      followView(k);
      requestAnimationFrame(() => setTimeout(holdAhead));
    }
    moveChart(k);
    settleSoon();
  };
  // After a redraw, the view too: the figure's own when it is this row's (noted as shown: no redraw), else the row's.
  const layoutAt = (layout, name) => name.split(".").reduce((o, part) => {
    const m = /^(\w+)\[(\d+)\]$/.exec(part);
    return o == null ? o : m ? o[m[1]]?.[Number(m[2])] : o[part];
  }, layout);
  const followView = (k) => {
    for (const key of Object.keys(views)) {
      const gd = plotAt(key);
      if (!gd || !gd.layout || gd.__geluLayout === gd.layout) continue;
      const update = viewValues(key, k) || {};
      const own = Object.entries(update).every(([name, v]) => JSON.stringify(layoutAt(gd.layout, name))
                                                                === JSON.stringify(v));
      if (own) [gd.__geluView, gd.__geluLayout] = [JSON.stringify(update), gd.layout];
    }
    moveViews(k, true);
  };
  const hookChart = () => {
    for (const spec of charts) {
      const gd = plotOf(spec), was = hooked.get(spec.key);
      if (!gd || gd === was || !gd.on) continue;
      if (was && was.removeListener) was.removeListener("plotly_afterplot", afterPlot);
      gd.on("plotly_afterplot", afterPlot);
      hooked.set(spec.key, gd);
    }
  };
  // A pointer (mouse or finger) on the slider: the value it will give, computed as react-aria's slider computes
  // it (a press on the track jumps there; then the thumb moves by the pointer's travel over the track's width,
  // snapped to the step), and shown in the same event, not when React next draws the thumb (a frame or two
  // later).  The thumb's own value, when React sets it, is watched as well and has the last word.
  const span = () => data.step * (data.count - 1);
  const track = () => input && input.closest("[role=group]")?.querySelector(":scope > [data-orientation]");
  // the position a pointer gives: its thumb's step (between a range's other thumb and the track's end), the others'
  // as they are
  const fromPointer = (e) => {
    const v = press.v0 + ((e.pageX - press.x0) / press.size) * span();
    const j = press.thumb, steps = inputs.map(step);
    const lo = j > 0 ? steps[j - 1] : 0, hi = j < inputs.length - 1 ? steps[j + 1] : data.count - 1;
    steps[j] = Math.max(lo, Math.min(hi, Math.round((v - data.min) / data.step)));
    return steps.reduce((k, s) => k * data.count + s, 0);
  };
  const onDown = (e) => {
    const t = track();
    const on = !!t && t.contains(e.target);
    if (!stopped) leads[data.control] = on;
    if (stopped || !on || e.button > 0) return;
    const box = t.getBoundingClientRect();
    const j = inputs.findIndex((el) => el.parentElement.parentElement.contains(e.target));
    if (j < 0 && inputs.length > 1) return;  // a press on a range's track: react-aria picks the thumb, React leads
    const v0 = j >= 0 ? Number(inputs[j].value) : data.min + ((e.clientX - box.left) / box.width) * span();
    const snapped = data.min + Math.round((v0 - data.min) / data.step) * data.step;
    // the fractional width, as react-aria
    press = { id: e.pointerId, x0: e.pageX, size: box.width, v0: snapped, thumb: Math.max(0, j) };
    const k = fromPointer(e);
    if (k !== shown) apply(k);
  };
  const onMove = (e) => {
    if (!press || e.pointerId !== press.id || stopped) return;
    const k = fromPointer(e);
    if (k !== shown) apply(k);
  };
  // A move is shown as it reaches the page (pointerrawupdate, where the browser has it: a secure page), in the time
  // between two frames, rather than when Chromium dispatches the coalesced pointermove at the start of the next
  // frame, where the layer's work (Approximations' view, ~5 ms) would hold that frame back.  At most one such
  // move a frame (a mouse may report 1000 times a second); the frame's pointermove then shows where it is by then.
  let early = false;
  const onRaw = (e) => {
    if (early || !press || e.pointerId !== press.id || stopped) return;
    const k = fromPointer(e);
    if (k === shown) return;
    early = true;
    requestAnimationFrame(() => { early = false; });
    apply(k);
  };
  const onUp = (e) => {  // from here the thumb leads again (React draws its last value a frame or two later)
    if (press && e.pointerId === press.id) {
      press = null;
      catchUpSoon();  // the charts off the screen (the rerun, 0.2-0.7 s later, draws them again as the server has them)
      requestAnimationFrame(() => requestAnimationFrame(() => { onChange(); settle(); }));
    }
  };
  window.addEventListener("pointerdown", onDown, true);
  window.addEventListener("pointermove", onMove, true);
  window.addEventListener("pointerrawupdate", onRaw, true);
  window.addEventListener("pointerup", onUp, true);
  window.addEventListener("pointercancel", onUp, true);
  window.addEventListener("keydown", data.kind === "number" ? onNumberKey : onKey, true);
  window.addEventListener("input", onInput, true);
  window.addEventListener("keyup", onKeyUp, true);
  window.addEventListener("blur", endKeyDrag);
  const watch = new MutationObserver(onChange);
  const find = () => {
    const all = [...document.querySelectorAll(`.st-key-${data.control} ${data.input || "input[type=range]"}`)];
    if (all.length === (data.thumbs || 1) && all[0] !== input) {
      [input, inputs] = [all[0], all];
      watch.disconnect();
      const attributeFilter = ["aria-valuetext", "aria-valuenow", "value"];
      for (const el of inputs) watch.observe(el, { attributes: true, attributeFilter });
      if (held()) shown = gridIndex(); else apply(gridIndex());
      speak();
    }
  };
  const again = new MutationObserver(() => {
    if (stopped) return;
    if (!input || !input.isConnected) find();
    hookChart();
    if (input && !held()) writeTexts(current());
  });
  find();
  hookChart();
  again.observe(document.body, { childList: true, subtree: true, characterData: true });
  // One layer a control: a rerun that sends a control new data mounts a new one, and the one before may still be
  // there for a while (two would each step a held key: two steps a press); the new one stops it.
  const stops = (window.__geluLiveStops = window.__geluLiveStops || {});
  if (stops[data.control]) stops[data.control]();
  const stop = () => {
    if (stopped) return;
    if (stops[data.control] === stop) delete stops[data.control];
    stopped = true; watch.disconnect(); again.disconnect();
    if (seen) seen.disconnect();
    window.removeEventListener("pointerdown", onDown, true);
    window.removeEventListener("pointermove", onMove, true);
    window.removeEventListener("pointerrawupdate", onRaw, true);
    window.removeEventListener("pointerup", onUp, true);
    window.removeEventListener("pointercancel", onUp, true);
    window.removeEventListener("keydown", data.kind === "number" ? onNumberKey : onKey, true);
    window.removeEventListener("input", onInput, true);
    window.removeEventListener("keyup", onKeyUp, true);
    window.removeEventListener("blur", endKeyDrag);
    endKeyDrag();
    for (const gd of hooked.values()) if (gd.removeListener) gd.removeListener("plotly_afterplot", afterPlot);
  };
  stops[data.control] = stop;
  return stop;
}
