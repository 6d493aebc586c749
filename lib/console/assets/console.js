// cfgtool console: the page's one event stream, copy buttons. Loaded after
// htmx; no inline script anywhere (the Content-Security-Policy forbids it).
"use strict";
(() => {
  const body = document.body;
  const status = document.getElementById("live-status");
  let source = null;

  /** Opens the page's one event stream, when the page follows one. */
  function follow() {
    const url = body.dataset.live;
    if (!url || source !== null || typeof EventSource === "undefined") return;
    source = new EventSource(url);
    source.addEventListener("version", (event) => {
      let detail = {};
      try {
        detail = JSON.parse(event.data);
      } catch (_) {
        return;
      }
      if (status) status.textContent = `Version ${detail.version} is live.`;
      body.dispatchEvent(new CustomEvent("cfgtool:version", { detail, bubbles: true }));
    });
    source.addEventListener("deleted", () => {
      if (status) status.textContent = "This namespace was deleted.";
      stop();
    });
  }

  /** Closes it: leaving the page must free the connection at once. */
  function stop() {
    if (source !== null) {
      source.close();
      source = null;
    }
  }

  addEventListener("pagehide", stop);
  addEventListener("pageshow", follow);
  follow();

  // Copy buttons: <button data-copy="element-id">.
  document.addEventListener("click", (event) => {
    const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
    if (!button) return;
    const source = document.getElementById(button.getAttribute("data-copy") || "");
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(() => {
      button.textContent = "Copied";
    });
  });
})();
