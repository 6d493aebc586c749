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

  // JSON objects checked as you type: <textarea data-json="object">, its
  // message in the element named last by its aria-describedby. The server
  // checks again on every post; this only says it sooner.
  document.addEventListener("input", (event) => {
    const field = event.target;
    if (!(field instanceof HTMLTextAreaElement) || field.dataset.json !== "object") return;
    const ids = (field.getAttribute("aria-describedby") || "").split(" ");
    const out = document.getElementById(ids[ids.length - 1] || "");
    let problem = "";
    if (field.value.trim() !== "") {
      try {
        const value = JSON.parse(field.value);
        if (value === null || typeof value !== "object" || Array.isArray(value)) {
          problem = 'A JSON object is written in braces: {"key": value}';
        }
      } catch (err) {
        problem = `Not JSON yet: ${err instanceof Error ? err.message : err}`;
      }
    }
    field.setCustomValidity(problem);
    if (out) out.textContent = problem;
  });

  // Rollout weights summed as you type: <fieldset data-weights> holding
  // <input data-weight>, the sum in its [data-weight-sum] element.
  document.addEventListener("input", (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement) || !input.hasAttribute("data-weight")) return;
    const set = input.closest("[data-weights]");
    const out = set ? set.querySelector("[data-weight-sum]") : null;
    if (!set || !out) return;
    let sum = 0;
    for (const w of set.querySelectorAll("input[data-weight]")) sum += Number(w.value) || 0;
    out.textContent = `The weights add up to ${sum}.`;
  });

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
