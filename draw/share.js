// The sidebar's share box (draw/frame.py): the page's URL, which holds every bound control, shown and copied from the
// browser's address bar.  The presenter link adds present=true and the controls to hide, and keeps a teacher's key
// (the teacher's presenter view); every other link drops the key.  Every link holds the reader's language (lang=)
// where it is not English (a link without one opens in the visitor's own), and the document element's lang
// attribute is set to it.  The box shows what the last button copied, with
// the note that names it, until the address changes.
(() => {
  const root = document.currentScript.closest(".gelu-share") || document;
  const box = root.querySelector(".gelu-share-url"), note = root.querySelector(".gelu-share-note");
  const words = JSON.parse(root.dataset.share || "{}");
  const hide = words.hide || [];
  if (words.lang && document.documentElement.lang !== words.lang) document.documentElement.lang = words.lang;
  const linkFor = (present) => {
    const url = new URL(window.location.href);
    for (const key of ["present", "hide"]) url.searchParams.delete(key);
    if (words.carry && !url.searchParams.has("lang")) url.searchParams.set("lang", words.lang);
    if (present) {
      url.searchParams.set("present", "true");
      for (const key of hide) url.searchParams.append("hide", key);
    } else {
      url.searchParams.delete("teacher");
    }
    return url.toString();
  };
  let copied = null;  // {present, at}: what the last button copied, and the address it was copied at
  const show = () => {  // written only when the link changed: writing an input's value repaints it
    if (copied && copied.at !== window.location.href) {
      copied = null;
      note.textContent = words.note;
    }
    const link = linkFor(copied ? copied.present : false);
    if (document.activeElement !== box && box.value !== link) box.value = link;
  };
  clearInterval(window.__geluShareTimer);
  window.__geluShareTimer = setInterval(show, 400);
  show();
  const copy = async (present) => {
    const text = linkFor(present);
    copied = { present, at: window.location.href };
    box.value = text;
    try {
      await navigator.clipboard.writeText(text);
    } catch {  // plain http on a school network has no clipboard API: select it for Ctrl+C
      box.focus(); box.select();
      try { document.execCommand("copy"); } catch { /* the selection stays for Ctrl+C */ }
    }
    note.textContent = present ? words.copiedPresent : words.copied;
  };
  root.querySelector(".gelu-copy").addEventListener("click", () => copy(false));
  const presentButton = root.querySelector(".gelu-copy-present");
  if (presentButton) presentButton.addEventListener("click", () => copy(true));
})();
