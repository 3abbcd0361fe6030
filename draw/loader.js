// A component's script as Streamlit mounts it: a few lines that fetch the component's own code and, where the mount
// names one, its table from the app's server (hosting/published.py serves both under the hash of their bytes, so the
// browser keeps them, once for every page and mount), then start the code with the table.  Streamlit calls what this
// returns when it unmounts the component: it stops the code, or, before the code has started, keeps it from starting.
// draw/assets.py writes the code's name in for CODE.
const CODE = "__GELU_CODE__";

// Where the app's server answers: beside Streamlit's own static/ folder (its script's address), so a base path or a
// proxy's prefix is kept.
const base = () => {
  const script = document.querySelector("script[src*='static/js/']");
  return script ? script.src.slice(0, script.src.indexOf("static/js/")) : new URL(".", window.location.href).href;
};

// name -> the promise of what it holds, and once it is here, what it holds: one of each per browser tab.  A name the
// server no longer holds (it answers 404) is asked again, a little later each time: the page's run publishes it
// again.  A failure is not kept.
const got = (window.__geluPublished = window.__geluPublished || new Map());
const have = (window.__geluHave = window.__geluHave || new Map());
const fetched = (name, read) => {
  if (!got.has(name)) {
    const load = async () => {
      for (let wait = 200; ; wait *= 2) {
        const response = await fetch(`${base()}_gelu/${name}`);
        if (response.ok) return read(response);
        if (wait > 3200) throw new Error(`${name}: ${response.status}`);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    };
    got.set(name, load().then((value) => { have.set(name, value); return value; },
                              (err) => { got.delete(name); throw err; }));
  }
  return got.get(name);
};
const moduleOf = async (response) => {
  const url = URL.createObjectURL(new Blob([await response.text()], { type: "text/javascript" }));
  try { return await import(url); } finally { URL.revokeObjectURL(url); }
};

export default function (component) {
  const given = component.data;
  const table = given && typeof given === "object" && !ArrayBuffer.isView(given) && given.published;
  // The element Streamlit drew for this component (outside its shadow root) says which mount it holds and which has
  // started: harness/browser.py's wait_drawn waits until each has started what it holds.
  const host = component.parentElement.getRootNode().host || component.parentElement;
  const mount = String((window.__geluMounts = (window.__geluMounts || 0) + 1));
  host.dataset.geluMount = mount;
  let stop = null, gone = false;
  const start = (code, data) => {
    if (gone) return;
    stop = code.default(component, data);
    host.dataset.geluStarted = mount;
  };
  if (have.has(CODE) && (!table || have.has(table))) {  // both fetched before: started at once, as an inline script
    start(have.get(CODE), table ? have.get(table) : given);
  } else {
    Promise.all([fetched(CODE, moduleOf), table ? fetched(table, (response) => response.json()) : given])
      .then(([code, data]) => start(code, data))
      .catch((err) => console.error("GELU Explorer: a live layer could not start", err));
  }
  return () => {
    gone = true;
    if (stop) stop();
  };
}
