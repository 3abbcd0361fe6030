// Plotly's private fields, named here once.  The live layer (live.js) and the race player (race_player.js) are this
// file followed by their own (draw/assets.py joins them), and reach Plotly's internals only through these names.
// Read in plotly.js as Streamlit 1.67.0 bundles it; tests/e2e/test_plotly_private.py fails, naming the field, when
// an upgrade removes one.  A plot ("gd") is the element Plotly drew into: `.js-plotly-plot`.

/* exported plotlyFull, plotlyToPixel, plotlyAxisOffset, plotlyPlotArea, plotlyTraceOf, plotlyQuietly,
   plotlyPrivateMissing */

// A drawn plot's full layout (Plotly's computed copy of its layout: axes with their scales, margins, the plot
// area, labels), or null before Plotly has drawn it.
const plotlyFull = (gd) => (gd && gd._fullLayout) || null;

// Where ``value`` on a full layout's axis falls, in px from the start of its subplot.
const plotlyToPixel = (axis, value) => axis.c2p(value);

// Where a full layout's axis starts, in px from the plot's edge (shapes are drawn in the plot's frame).
const plotlyAxisOffset = (axis) => axis._offset;

// The plot area Plotly placed inside its margins: {l, r, t, b, w, h} in px.
const plotlyPlotArea = (gd) => gd._fullLayout._size;

// The trace (as Plotly holds it: meta, x, y, line, axes) that a drawn group (`.trace`, `.hm`, `.contour`) shows:
// the data d3 bound to that node.
const plotlyTraceOf = (node) => (node && node.__data__ && node.__data__[0] && node.__data__[0].trace) || null;

// Call ``draw()`` with the plot's events named in ``names`` reaching Plotly's own listeners only (not those a page
// added with gd.on) until the promise ``draw`` returns settles.  Plotly emits through gd.emit, which calls its
// internal emitter (gd._internalEv) and then the page's listeners.
const plotlyQuietly = (gd, names, draw) => {
  if (!gd.__geluQuiet) {
    const emit = gd.emit;
    gd.__geluQuiet = { n: 0, names };
    gd.emit = function (name, event) {
      if (gd.__geluQuiet.n > 0 && gd.__geluQuiet.names.has(name))
        return gd._internalEv && gd._internalEv.emit(name, event);
      return emit.call(this, name, event);
    };
  }
  gd.__geluQuiet.n++;
  let done;
  try { done = draw(); } finally {
    Promise.resolve(done).catch(() => {}).finally(() => { gd.__geluQuiet.n--; });
  }
};

// The private fields above that a drawn plot lacks, by name: [] while this Plotly still has them all.
const plotlyPrivateMissing = (gd) => {
  const missing = [], fl = gd && gd._fullLayout, xa = fl && fl.xaxis;
  if (!fl) return ["gd._fullLayout"];
  if (!xa || typeof xa.c2p !== "function") missing.push("_fullLayout.xaxis.c2p");
  if (!xa || typeof xa._offset !== "number") missing.push("_fullLayout.xaxis._offset");
  const size = fl._size;
  if (!size || !["l", "r", "t", "b", "w", "h"].every((side) => typeof size[side] === "number"))
    missing.push("_fullLayout._size");
  const group = gd.querySelector(".scatterlayer .trace, .hm, .contour");
  if (!group || !plotlyTraceOf(group)) missing.push("trace group's __data__[0].trace");
  if (typeof gd.emit !== "function") missing.push("gd.emit");
  if (!gd._internalEv || typeof gd._internalEv.emit !== "function") missing.push("gd._internalEv.emit");
  return missing;
};
