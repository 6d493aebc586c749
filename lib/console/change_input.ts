/**
 * What a person asks for on a quick-change form, read from the form: the
 * kind of change, its environment, the version the form was built from
 * (`base`), the message, and the fields of the change as typed (kept whole
 * to draw the form again); then the change itself, as lib/flags/
 * quick_change.ts applies it, with a 400 naming the field that cannot be
 * read. Pure: no store, no rendering.
 *
 * @module
 */
import type { Context } from "hono";
import { InvalidRequestError } from "../errors.ts";
import type { QuickChange } from "../flags/quick_change.ts";
import type { ConsoleEnv } from "./env.ts";
import { environmentIn, type NamespaceView } from "../services/versions.ts";

/** The quick changes, by `?kind=`, with their names. */
export const KINDS = {
  toggle: "Turn on or off",
  default: "Default variation",
  weights: "Rollout weights",
} as const;

/** A quick change's kind (`?kind=`). */
export type Kind = keyof typeof KINDS;

/** What the person asked for, as typed: kept whole to draw the form again. */
export interface ChangeInput {
  kind: Kind;
  /** The environment; undefined: the flag's own default or rules. */
  env: string | undefined;
  /** The head version the form was built from. */
  base: number;
  message: string;
  /** toggle: "true" or "false". */
  enabled?: string | undefined;
  /** default: the variation. */
  variation?: string | undefined;
  /** weights: the rule's index, as typed. */
  rule?: string | undefined;
  /** weights: variation → weight as typed, in form order. */
  weights: [string, string][];
}

/** A refusal to show beside the form. */
export interface FormError {
  message: string;
  /** The field it is about (`weight.<variation>`, `weights`, `rule`, `message`, …). */
  field?: string;
}

/**
 * The version a posted form was built from (400 when `base` is not one).
 *
 * @param form the posted fields
 * @returns the version
 *
 * @example
 * ```ts
 * import { baseOf } from "./change_input.ts";
 * if (baseOf(new Map([["base", "3"]])) !== 3) throw new Error();
 * let status = 0;
 * try { baseOf(new Map()); } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 400) throw new Error();
 * ```
 */
export function baseOf(form: ReadonlyMap<string, string>): number {
  const base = Number(form.get("base"));
  if (!Number.isInteger(base) || base < 0) {
    throw new InvalidRequestError("base must be the version the form was built from", {
      details: { field: "base" },
    });
  }
  return base;
}

/**
 * The posted form's fields as typed (a field missing from the form is read
 * from the query): 400 for an unknown kind or a toggle without an
 * environment, 404 for an environment the version does not declare.
 *
 * @param c the route's context (its form and query)
 * @param view the version the form was built from
 * @param base its number
 * @returns the inputs
 *
 * @example
 * ```ts ignore
 * const input = inputOf(c, view, 3);
 * ```
 */
export function inputOf(c: Context<ConsoleEnv>, view: NamespaceView, base: number): ChangeInput {
  const form = c.get("form");
  const field = (name: string) => form.get(name) ?? c.req.query(name);
  const weights: [string, string][] = [];
  for (const [k, v] of form) if (k.startsWith("weight.")) weights.push([k.slice(7), v]);
  const kind = kindOf(field("kind"));
  const env = envIn(view, field("env"));
  if (kind === "toggle" && env === undefined) {
    throw new InvalidRequestError("Choose the environment to turn the flag on or off in", {
      details: { field: "env" },
    });
  }
  return {
    kind,
    env,
    base,
    message: form.get("message") ?? "",
    enabled: form.get("enabled"),
    variation: form.get("variation"),
    rule: form.get("rule"),
    weights,
  };
}

/**
 * The change the inputs ask for (400 for a field that cannot be read).
 *
 * @param input the inputs
 * @returns the change to apply to the flag file
 *
 * @example
 * ```ts
 * import { changeOf } from "./change_input.ts";
 * const input = { kind: "weights" as const, env: "prod", base: 1, message: "m", rule: "1",
 *   weights: [["on", "50"], ["off", "50"]] as [string, string][] };
 * const change = changeOf(input);
 * if (change.kind !== "weights" || change.weights.on !== 50 || change.rule !== 1) throw new Error();
 * let field = "";
 * try { changeOf({ ...input, weights: [["on", "half"]] }); } catch (e) {
 *   field = (e as { details: { field: string } }).details.field;
 * }
 * if (field !== "weight.on") throw new Error(field);
 * ```
 */
export function changeOf(input: ChangeInput): QuickChange {
  const env = input.env;
  switch (input.kind) {
    case "toggle":
      if (env === undefined) {
        throw new InvalidRequestError("Choose the environment to turn the flag on or off in", {
          details: { field: "env" },
        });
      }
      if (input.enabled !== "true" && input.enabled !== "false") {
        throw new InvalidRequestError("enabled must be true or false", {
          details: { field: "enabled" },
        });
      }
      return { kind: "toggle", environment: env, enabled: input.enabled === "true" };
    case "default":
      return { kind: "default", environment: env, variation: input.variation ?? "" };
    case "weights": {
      if (input.rule === undefined || !/^\d+$/.test(input.rule)) {
        throw new InvalidRequestError("Choose the rollout rule whose weights change", {
          details: { field: "rule" },
        });
      }
      const weights: Record<string, number> = {};
      for (const [variation, raw] of input.weights) {
        const text = raw.trim();
        if (!/^-?\d+(\.\d+)?$/.test(text)) {
          throw new InvalidRequestError(
            `The weight of ${JSON.stringify(variation)} must be a whole number of 0 or more, not ${
              JSON.stringify(raw)
            }`,
            { details: { field: `weight.${variation}` } },
          );
        }
        weights[variation] = Number(text);
      }
      return { kind: "weights", environment: env, rule: Number(input.rule), weights };
    }
  }
}

/**
 * A refusal as the form shows it: its message, and the field it names.
 *
 * @param err the refusal
 * @returns the form's error
 *
 * @example
 * ```ts
 * import { InvalidRequestError } from "../errors.ts";
 * import { refusalOf } from "./change_input.ts";
 * const e = refusalOf(new InvalidRequestError("No", { details: { field: "rule" } }));
 * if (e.field !== "rule" || e.message !== "No") throw new Error();
 * ```
 */
export function refusalOf(err: InvalidRequestError): FormError {
  const field = err.details?.field;
  return typeof field === "string" ? { message: err.message, field } : { message: err.message };
}

/**
 * The kind a form or query names (400 for another).
 *
 * @param raw the `kind` field
 * @returns the kind
 *
 * @example
 * ```ts
 * import { kindOf } from "./change_input.ts";
 * if (kindOf("toggle") !== "toggle") throw new Error();
 * let status = 0;
 * try { kindOf("explode"); } catch (e) { status = (e as { status: number }).status; }
 * if (status !== 400) throw new Error();
 * ```
 */
export function kindOf(raw: string | undefined): Kind {
  if (raw !== undefined && Object.hasOwn(KINDS, raw)) return raw as Kind;
  throw new InvalidRequestError(
    `kind must be one of ${Object.keys(KINDS).join(", ")}, not ${JSON.stringify(raw ?? "")}`,
    { details: { field: "kind" } },
  );
}

/**
 * The environment a form or query names, if any (404 for one the version
 * does not declare).
 *
 * @param view the version
 * @param raw the `env` field
 * @returns the environment, or undefined for none
 *
 * @example
 * ```ts
 * import { envIn } from "./change_input.ts";
 * const view = { tenant: "acme", namespace: "web", meta: { version: 3 },
 *   manifest: { flags: {}, segments: {}, namespace: { environments: { prod: {} } } } } as never;
 * if (envIn(view, "prod") !== "prod" || envIn(view, "") !== undefined) throw new Error();
 * ```
 */
export function envIn(view: NamespaceView, raw: string | undefined): string | undefined {
  return raw === undefined || raw === "" ? undefined : environmentIn(view, raw);
}
