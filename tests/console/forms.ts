/**
 * Test helper: what a browser sends when a button of a console page is
 * pressed: the fields of the button's form as the page filled them in
 * (hidden fields, inputs, the selected option, textareas), without the
 * CSRF field (the world's `post` adds it), plus the button's own name and
 * value.
 *
 * @module
 */
import { assert } from "../assert.ts";
import type { LoadedPage } from "./world.ts";

/**
 * The fields the form holding `button` sends when it is pressed.
 *
 * @param page the loaded page
 * @param button a CSS selector of the button
 * @returns name → value
 */
export function pressed(page: LoadedPage, button: string): Record<string, string> {
  const el = page.doc.querySelector(button);
  assert(el !== null, `no ${button} in:\n${page.text}`);
  const form = el.closest("form");
  assert(form !== null, `${button} is in no form`);
  const out: Record<string, string> = {};
  for (const field of form.querySelectorAll("input, select, textarea")) {
    const name = field.getAttribute("name");
    if (name === null || name === "_csrf") continue;
    if (field.tagName === "SELECT") {
      const option = field.querySelector("option[selected]") ?? field.querySelector("option");
      out[name] = option.getAttribute("value");
    } else if (field.tagName === "TEXTAREA") {
      out[name] = field.textContent;
    } else if (field.getAttribute("type") === "checkbox") {
      if (field.hasAttribute("checked")) out[name] = field.getAttribute("value") ?? "on";
    } else {
      out[name] = field.getAttribute("value") ?? "";
    }
  }
  const name = el.getAttribute("name");
  if (name !== null) out[name] = el.getAttribute("value") ?? "";
  return out;
}

/**
 * The fields of the form that holds the button `step=<step>` (the quick
 * change's steps), with `step` set.
 *
 * @param page the loaded page
 * @param step the button's value
 * @returns name → value
 */
export function formFields(page: LoadedPage, step: string): Record<string, string> {
  return pressed(page, `button[name="step"][value="${step}"]`);
}
