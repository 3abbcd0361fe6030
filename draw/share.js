// The sidebar's share box (draw/frame.py): the page's URL, which holds every bound control, shown and copied from the
// browser's address bar; the presenter link adds present=true and the controls to hide.
(() => {
  const root = document.currentScript.closest(".gelu-share") || document;
  const box = root.querySelector(".gelu-share-url"), note = root.querySelector(".gelu-share-note");
  const hide = JSON.parse(root.dataset.hide || "[]");
  const linkFor = (present) => {
    const url = new URL(window.location.href);
    for (const key of ["present", "hide", "teacher"]) url.searchParams.delete(key);
    if (present) {
      url.searchParams.set("present", "true");
      for (const key of hide) url.searchParams.append("hide", key);
    }
    return url.toString();
  };
  const show = () => {  // written only when the address changed: writing an input's value repaints it
    const link = linkFor(false);
    if (document.activeElement !== box && box.value !== link) box.value = link;
  };
  clearInterval(window.__geluShareTimer);
  window.__geluShareTimer = setInterval(show, 400);
  show();
  const copy = async (present) => {
    const text = linkFor(present);
    box.value = text;
    try {
      await navigator.clipboard.writeText(text);
    } catch {  // plain http on a school network has no clipboard API: select it for Ctrl+C
      box.focus(); box.select();
      try { document.execCommand("copy"); } catch { /* the selection stays for Ctrl+C */ }
    }
    note.textContent = present ? "Presenter link copied." : "Link copied.";
  };
  root.querySelector(".gelu-copy").addEventListener("click", () => copy(false));
  root.querySelector(".gelu-copy-present").addEventListener("click", () => copy(true));
})();
