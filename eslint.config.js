// ESLint for the browser code in draw/ (npm run lint; .ci/run runs it).
import js from "@eslint/js";
import globals from "globals";

// The names plotly_private.js defines; live.js and race_player.js are joined after it (draw/assets.py).
const plotlyPrivate = Object.fromEntries(
  ["plotlyFull", "plotlyToPixel", "plotlyAxisOffset", "plotlyPlotArea", "plotlyTraceOf", "plotlyQuietly",
   "plotlyPrivateMissing"].map((name) => [name, "readonly"]));

export default [
  js.configs.recommended,
  {
    files: ["draw/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "script", globals: { ...globals.browser } },
  },
  {  // the components' modules (st.components.v2 imports each as an ES module)
    files: ["draw/live.js", "draw/race_player.js", "draw/loader.js"],
    languageOptions: { sourceType: "module", globals: { ...globals.browser, ...plotlyPrivate } },
  },
  {  // defines what the components use: each name is used in the file joined after it
    files: ["draw/plotly_private.js"],
    rules: { "no-unused-vars": ["error", { varsIgnorePattern: "^plotly" }] },
  },
];
