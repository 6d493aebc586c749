/**
 * The authoring edit library: every edit a person can make to a flag
 * manifest in the console, as a pure text edit of its TOML files that
 * keeps their comments and formatting. Each edit takes the texts of the
 * version being edited (path → text) and returns the files it changes
 * (path → new text, or `null` to delete); bad input throws an
 * `InvalidRequestError` whose `details.field` names the form field, and a
 * removal that something still refers to is refused naming what refers
 * (`details.referenced_by`). The caller applies the edits, validates the
 * whole manifest and commits it.
 *
 * - flags.ts: create, description, default, variations (add, rename with
 *   every use, value, remove), delete
 * - rules.ts: add, replace, remove and move the rules of a flag or of an
 *   environment's override
 * - overrides.ts: `enabled`, `default`, own rules of an environment
 * - promotion.ts: copy what is in force in one environment to another
 * - segments.ts: create, edit (predicates, match, description), delete
 * - environments.ts: add, `public_evaluate`, remove; the namespace's description
 * - as_written.ts: the files as written, to prefill forms
 * - references.ts: who refers to a segment, an environment, a variation
 * - edit_toml.ts: the text editing all of them share (with quick changes)
 *
 * @example
 * ```ts
 * import { addRule, applyFileEdits, createFlag, createSegment } from "./mod.ts";
 * import { filesOf } from "./texts.ts";
 * import { validateManifest } from "../validate.ts";
 * let texts: Map<string, string> = new Map();
 * texts = applyFileEdits(texts, createSegment(texts, {
 *   key: "staff",
 *   predicates: [{ attribute: "user.email", op: "ends_with", value: "@example.com" }],
 * }));
 * texts = applyFileEdits(texts, createFlag(texts, {
 *   key: "dark-mode", type: "boolean", default: "off",
 *   variations: [{ name: "on", value: true }, { name: "off", value: false }],
 * }));
 * texts = applyFileEdits(texts, addRule(texts, { flag: "dark-mode", rule: { segment: "staff", variation: "on" } }));
 * const { problems, manifest } = validateManifest(filesOf(texts));
 * if (problems.length !== 0 || manifest?.flags["dark-mode"]?.rules[0]?.segment !== "staff") throw new Error();
 * ```
 *
 * @module
 */
export * from "./texts.ts";
export * from "./flags.ts";
export * from "./rules.ts";
export * from "./overrides.ts";
export * from "./promotion.ts";
export * from "./segments.ts";
export * from "./environments.ts";
export * from "./as_written.ts";
export * from "./references.ts";
