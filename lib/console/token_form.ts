/**
 * The console's token-creation form: the fields as a person typed them
 * (kept to show the form again after a refusal), and their translation into
 * the body `createToken` takes (lib/auth/issuance.ts), with the console's
 * own choices: an expiry picked from a list or as a date, allowed origins
 * one per line, and the namespace, environment and origins sent only for
 * the types that take them.
 *
 * @module
 */
import type { CreateTokenInput } from "../auth/issuance.ts";
import { InvalidRequestError } from "../errors.ts";

/** The expiry choices of the form (`expiry` field), in order. */
export const EXPIRY_CHOICES = {
  "30": "In 30 days",
  "90": "In 90 days",
  "180": "In 180 days",
  "date": "On a date…",
  "never": "Never (not recommended)",
} as const;

/** An `expiry` value. */
export type ExpiryChoice = keyof typeof EXPIRY_CHOICES;

/** The form's fields, as typed (every one a string; empty when left out). */
export interface TokenForm {
  name: string;
  type: string;
  description: string;
  namespace: string;
  environment: string;
  /** One origin per line. */
  origins: string;
  expiry: string;
  /** `YYYY-MM-DD`, used when `expiry` is `date`. */
  expires_on: string;
}

/** The form's control ids, by the `details.field` of a refusal. */
export const FORM_FIELD: Readonly<Record<string, keyof TokenForm>> = {
  name: "name",
  type: "type",
  description: "description",
  namespace_slug: "namespace",
  environment_slug: "environment",
  allowed_origins: "origins",
  expires_at: "expiry",
};

/**
 * Reads the form's fields from a posted form (missing fields are empty;
 * the expiry defaults to 90 days, the recommended lifetime of most types).
 *
 * @param form the posted fields
 * @returns the fields as typed
 *
 * @example
 * ```ts
 * import { tokenFormOf } from "./token_form.ts";
 * const f = tokenFormOf(new Map([["name", "ci"], ["type", "namespace-read"]]));
 * if (f.name !== "ci" || f.environment !== "" || f.expiry !== "90") throw new Error();
 * ```
 */
export function tokenFormOf(form: ReadonlyMap<string, string>): TokenForm {
  const get = (k: string) => form.get(k) ?? "";
  return {
    name: get("name"),
    type: get("type"),
    description: get("description"),
    namespace: get("namespace"),
    environment: get("environment"),
    origins: get("origins"),
    expiry: form.get("expiry") || "90",
    expires_on: get("expires_on"),
  };
}

const DAY_MS = 24 * 60 * 60 * 1000;

const bad = (field: string, message: string) =>
  new InvalidRequestError(message, { details: { field } });

/**
 * Turns the form into a token-creation body for `tenant`: the namespace
 * only for namespace tokens, the environment and the allowed origins (one
 * per line, blank lines ignored) only for `namespace-client`, which is
 * refused (400) when they are filled in for another type; the expiry as a
 * number of days from `now`, a date (midnight UTC starting that day), or
 * none. The rest (names, slugs, origins, the date being in the future) is
 * checked by `createToken`.
 *
 * @param tenant the tenant of the page
 * @param f the form's fields
 * @param now the current time
 * @returns the body for `createToken`
 *
 * @example
 * ```ts
 * import { createInputOf, tokenFormOf } from "./token_form.ts";
 * const body = createInputOf("acme", tokenFormOf(new Map([
 *   ["name", "shop"], ["type", "namespace-client"], ["namespace", "web"],
 *   ["environment", "staging"], ["origins", "https://shop.test\n\nhttps://a.test\n"],
 *   ["expiry", "30"],
 * ])), new Date("2030-01-01T00:00:00Z"));
 * if (body.expires_at !== "2030-01-31T00:00:00.000Z") throw new Error(String(body.expires_at));
 * if (body.allowed_origins?.join(" ") !== "https://shop.test https://a.test") throw new Error();
 * ```
 */
export function createInputOf(tenant: string, f: TokenForm, now: Date): CreateTokenInput {
  const client = f.type === "namespace-client";
  const origins = f.origins.split(/\r?\n/).map((o) => o.trim()).filter((o) => o !== "");
  const environment = f.environment.trim();
  if (!client && environment !== "") {
    throw bad(
      "environment_slug",
      "Only a namespace-client token has an environment: leave it empty",
    );
  }
  if (!client && origins.length > 0) {
    throw bad(
      "allowed_origins",
      "Only a namespace-client token has allowed origins: leave them empty",
    );
  }
  if (client && environment === "") {
    throw bad("environment_slug", "A namespace-client token needs an environment");
  }
  const input: CreateTokenInput = {
    type: f.type,
    name: f.name.trim(),
    tenant_slug: tenant,
    expires_at: expiryOf(f, now),
  };
  const description = f.description.trim();
  if (description !== "") input.description = description;
  if (f.type.startsWith("namespace-")) {
    if (f.namespace === "") throw bad("namespace_slug", "Choose the token's namespace");
    input.namespace_slug = f.namespace;
  }
  if (client) {
    input.environment_slug = environment;
    input.allowed_origins = origins;
  }
  return input;
}

/** The expiry the form asks for, as an RFC 3339 instant, or null for none. */
function expiryOf(f: TokenForm, now: Date): string | null {
  switch (f.expiry) {
    case "30":
    case "90":
    case "180":
      return new Date(now.getTime() + Number(f.expiry) * DAY_MS).toISOString();
    case "never":
      return null;
    case "date": {
      const day = f.expires_on.trim();
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) {
        throw bad("expires_at", "Give the expiry date as YYYY-MM-DD");
      }
      if (Date.parse(`${day}T00:00:00Z`) <= now.getTime()) {
        throw bad("expires_at", `Cannot expire on ${day}: choose a date after today`);
      }
      return `${day}T00:00:00Z`;
    }
    default:
      throw bad("expires_at", `Choose an expiry: ${Object.values(EXPIRY_CHOICES).join(", ")}`);
  }
}
