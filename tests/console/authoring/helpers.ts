/**
 * Test helpers shared by the console authoring tests: what a browser
 * sends for a form, the page's labels, the head manifest and a file of it
 * read through the API, an evaluation, a preview then its commit, and a
 * reader's forged commit.
 *
 * @module
 */
import { assert, assertEquals } from "../../assert.ts";
import type { ConsoleWorld, LoadedPage } from "../world.ts";

/** The manifest API of a namespace of acme. */
const api = (ns: string) => `/api/v1/tenants/acme/namespaces/${ns}`;

/**
 * The fields a browser sends for the form holding `button`: checked radios
 * and checkboxes only, no submit buttons, no CSRF field (the world adds it).
 *
 * @param page the loaded page
 * @param button a CSS selector of a control in the form
 * @returns name → value
 */
export function filled(page: LoadedPage, button: string): Record<string, string> {
  const el = page.doc.querySelector(button);
  assert(el !== null, `no ${button} in:\n${page.text}`);
  const out: Record<string, string> = {};
  for (const field of el.closest("form").querySelectorAll("input, select, textarea")) {
    const name = field.getAttribute("name");
    const type = field.getAttribute("type");
    if (name === null || name === "_csrf") continue;
    if (field.tagName === "SELECT") {
      const option = field.querySelector("option[selected]") ?? field.querySelector("option");
      out[name] = option?.getAttribute("value") ?? "";
    } else if (field.tagName === "TEXTAREA") {
      out[name] = field.textContent;
    } else if (type === "radio" || type === "checkbox") {
      if (field.hasAttribute("checked")) out[name] = field.getAttribute("value") ?? "on";
    } else if (type !== "submit") {
      out[name] = field.getAttribute("value") ?? "";
    }
  }
  return out;
}

/**
 * Asserts every id of a page stands once and every label names a control
 * that exists.
 *
 * @param page the loaded page
 */
export function wellLabelled(page: LoadedPage): void {
  const ids = [...page.doc.querySelectorAll("[id]")].map((e) => e.getAttribute("id"));
  assertEquals(ids.filter((id, i) => ids.indexOf(id) !== i), [], "duplicate ids");
  for (const label of page.doc.querySelectorAll("label[for]")) {
    assert(ids.includes(label.getAttribute("for")), `label for ${label.getAttribute("for")}`);
  }
}

/**
 * The head manifest of a namespace of acme, read through the API as the
 * superadmin.
 *
 * @param w the console world
 * @param ns the namespace
 * @returns its version and files
 */
export async function manifest(
  w: ConsoleWorld,
  ns = "web",
): Promise<{ version: number; files: Record<string, string> }> {
  const res = await w.json("GET", `${api(ns)}/manifest`, {
    bearer: w.admin,
    headers: { accept: "application/json" },
  });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  return res.body as { version: number; files: Record<string, string> };
}

/**
 * The text of one file of acme/web's head manifest.
 *
 * @param w the console world
 * @param path the file's path in the manifest
 * @returns its text, or undefined where there is no such file
 */
export async function fileText(w: ConsoleWorld, path: string): Promise<string | undefined> {
  return (await manifest(w)).files[path];
}

/** What an evaluation through the API answers. */
export interface Evaluated {
  value: unknown;
  variation: string;
  reason: string;
  rule_index?: number;
  error_code?: string;
}

/**
 * Evaluates a flag of acme/web in an environment for a context.
 *
 * @param w the console world
 * @param env the environment
 * @param flag the flag key
 * @param context the evaluation context
 * @returns the API's answer
 */
export async function evaluate(
  w: ConsoleWorld,
  env: string,
  flag: string,
  context: Record<string, unknown> = {},
): Promise<Evaluated> {
  const res = await w.json("POST", `${api("web")}/environments/${env}/evaluate`, {
    bearer: w.admin,
    json: { flag, context },
  });
  assertEquals(res.status, 200, JSON.stringify(res.body));
  return res.body as unknown as Evaluated;
}

/**
 * Posts `fields` to `path` as the writer (the preview, which must answer
 * 200), then the commit form of that preview.
 *
 * @param w the console world
 * @param path where the form posts
 * @param fields the preview's fields
 * @returns the answer to the commit
 */
export async function previewThenCommit(
  w: ConsoleWorld,
  path: string,
  fields: Record<string, string>,
): Promise<LoadedPage> {
  const preview = await w.post(path, w.writer, fields);
  assertEquals(preview.status, 200, preview.text);
  return await w.post(path, w.writer, {
    ...filled(preview, "button[name=step][value=commit]"),
    step: "commit",
  });
}

/**
 * Posts a commit forged by the member (a reader) on the head version and
 * asserts it is refused with 403.
 *
 * @param w the console world
 * @param path where the form posts
 * @param fields the editor's own fields
 */
export async function forgedCommitRefused(
  w: ConsoleWorld,
  path: string,
  fields: Record<string, string>,
): Promise<void> {
  const forged = await w.post(path, w.member, {
    base: String((await manifest(w)).version),
    ...fields,
    message: "sneak",
    step: "commit",
  });
  assertEquals(forged.status, 403, forged.text);
}

/**
 * Posts `fields` to `path` as the writer and asserts the form comes back
 * refused (400) with the control `#control` marked invalid.
 *
 * @param w the console world
 * @param path where the form posts
 * @param fields the posted fields
 * @param control the id of the control the refusal names
 * @returns the refused page
 */
export async function refusedAt(
  w: ConsoleWorld,
  path: string,
  fields: Record<string, string>,
  control: string,
): Promise<LoadedPage> {
  const page = await w.post(path, w.writer, fields);
  assertEquals(page.status, 400, page.text);
  assertEquals(page.doc.querySelector(`#${control}`)?.getAttribute("aria-invalid"), "true");
  return page;
}
