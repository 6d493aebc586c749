/**
 * Subscriptions of the event stream (docs/events.md): `ns=<slug>:<flag-list>`
 * query values, where `<flag-list>` is `*` or comma-separated flag keys; the
 * canonical form of a flag list (sorted byte-wise, without repeats) and its
 * URL-safe base64 encoding, which the closure endpoint's `subscription`
 * parameter carries; and `since` / `Last-Event-ID` resume hints.
 *
 * @module
 */
import { base64urlnopad } from "base";
import { compareUtf8 } from "../bytes.ts";
import { UsageError } from "../errors.ts";

/** The subscribed flags of one namespace: every flag, or a set of keys. */
export type FlagSelection = "*" | readonly string[];

/** One parsed `ns` value. */
export interface NamespaceSubscription {
  /** Tenant written as `<tenant>/<slug>`, or null when relative to the principal's tenant. */
  tenant: string | null;
  /** Namespace slug. */
  slug: string;
  /** `*` or the flag keys, canonical (sorted byte-wise, no repeats). */
  flags: FlagSelection;
}

/** Flags allowed per namespace in one subscription (a `*` counts as one). */
export const MAX_FLAGS_PER_NAMESPACE = 64;
/** Namespaces allowed per connection. */
export const MAX_NAMESPACES = 32;

// A flag key as lib/flags/model.ts defines it, and a tenant or namespace slug as
// lib/protocol/slug.ts does (tests/protocol/subscription_test.ts checks they agree).
const FLAG_KEY_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const SLUG_RE = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Parses a flag list: `*` or comma-separated flag keys. The result is
 * canonical. Bad syntax throws {@linkcode UsageError} (400).
 *
 * @param text the flag list
 * @returns `*` or the sorted, deduplicated keys
 *
 * @example
 * ```ts
 * import { parseFlagList } from "./subscription.ts";
 * const flags = parseFlagList("b,a,b");
 * if (flags === "*" || flags.join() !== "a,b") throw new Error();
 * ```
 */
export function parseFlagList(text: string): FlagSelection {
  if (text === "*") return "*";
  if (text === "") {
    throw new UsageError("Cannot parse flag list: it is empty (use * for every flag)");
  }
  const keys = new Set<string>();
  for (const key of text.split(",")) {
    if (key === "*") {
      throw new UsageError(`Cannot parse flag list "${text}": * must stand alone`);
    }
    if (!FLAG_KEY_RE.test(key)) {
      throw new UsageError(
        `Cannot parse flag list "${text}": "${key}" is not a flag key (keys match ${FLAG_KEY_RE.source})`,
      );
    }
    keys.add(key);
  }
  return [...keys].sort(compareUtf8);
}

/**
 * The canonical text of a flag selection: `*`, or the keys sorted byte-wise
 * and joined by commas.
 *
 * @param flags a selection
 * @returns the canonical flag list
 *
 * @example
 * ```ts
 * import { canonicalFlagList } from "./subscription.ts";
 * if (canonicalFlagList(["b", "a"]) !== "a,b" || canonicalFlagList("*") !== "*") throw new Error();
 * ```
 */
export function canonicalFlagList(flags: FlagSelection): string {
  if (flags === "*") return "*";
  return [...new Set(flags)].sort(compareUtf8).join(",");
}

/**
 * The closure endpoint's `subscription` parameter: URL-safe base64 without
 * padding of the canonical flag list.
 *
 * @param flags a selection
 * @returns the encoded subscription
 *
 * @example
 * ```ts
 * import { encodeSubscription } from "./subscription.ts";
 * if (encodeSubscription("*") !== "Kg") throw new Error();
 * ```
 */
export function encodeSubscription(flags: FlagSelection): string {
  return base64urlnopad.encode(encoder.encode(canonicalFlagList(flags)));
}

/**
 * Decodes a `subscription` parameter. It must be URL-safe base64 without
 * padding of a flag list in canonical form; anything else throws
 * {@linkcode UsageError} (400 `invalid_request`).
 *
 * @param param the parameter value
 * @returns the selection
 *
 * @example
 * ```ts
 * import { decodeSubscription, encodeSubscription } from "./subscription.ts";
 * const back = decodeSubscription(encodeSubscription(["a", "b"]));
 * if (back === "*" || back.join() !== "a,b") throw new Error();
 * ```
 */
export function decodeSubscription(param: string): FlagSelection {
  let text: string;
  try {
    text = decoder.decode(base64urlnopad.decode(param));
  } catch {
    throw new UsageError(
      "Cannot parse subscription: it must be URL-safe base64 without padding of a flag list",
    );
  }
  const flags = parseFlagList(text);
  if (canonicalFlagList(flags) !== text) {
    throw new UsageError(
      `Cannot parse subscription "${text}": flag list is not canonical (sorted, no repeats)`,
    );
  }
  return flags;
}

/**
 * Parses one `ns` query value, `<slug>:<flag-list>` or
 * `<tenant>/<slug>:<flag-list>`. Bad syntax throws {@linkcode UsageError}.
 * Caps are checked by the caller (they are a different error).
 *
 * @param value the query value
 * @returns the parsed subscription
 *
 * @example
 * ```ts
 * import { parseNamespaceParam } from "./subscription.ts";
 * const s = parseNamespaceParam("acme/web:b,a");
 * if (s.tenant !== "acme" || s.slug !== "web" || s.flags === "*" || s.flags.join() !== "a,b") {
 *   throw new Error();
 * }
 * ```
 */
export function parseNamespaceParam(value: string): NamespaceSubscription {
  const colon = value.indexOf(":");
  if (colon < 0) {
    throw new UsageError(`Cannot parse ns "${value}": expected <slug>:<flag-list>`);
  }
  const { tenant, slug } = parseNamespaceRef(value.slice(0, colon), "ns");
  return { tenant, slug, flags: parseFlagList(value.slice(colon + 1)) };
}

/** A resume hint: the last version a client saw of a namespace. */
export interface ResumeHint {
  /** Tenant when written as `<tenant>/<slug>`, else null. */
  tenant: string | null;
  /** Namespace slug. */
  slug: string;
  /** The version. */
  version: number;
}

/**
 * Parses a `since` parameter (`<slug>:<version>,<slug2>:<version>`) or a
 * `Last-Event-ID` header (one `<slug>:<version>`).
 *
 * @param text the parameter or header value
 * @param what its name, for messages
 * @returns the hints in order
 *
 * @example
 * ```ts
 * import { parseResumeHints } from "./subscription.ts";
 * const h = parseResumeHints("web:3,api:10", "since");
 * if (h.length !== 2 || h[1]!.version !== 10) throw new Error();
 * ```
 */
export function parseResumeHints(text: string, what: string): ResumeHint[] {
  if (text.trim() === "") return [];
  return text.split(",").map((part) => {
    const m = /^\s*([^:\s]+):(\d{1,15})\s*$/.exec(part);
    if (!m) throw new UsageError(`Cannot parse ${what} "${part}": expected <slug>:<version>`);
    return { ...parseNamespaceRef(m[1]!, what), version: Number(m[2]) };
  });
}

function parseNamespaceRef(ref: string, what: string): { tenant: string | null; slug: string } {
  const parts = ref.split("/");
  if (parts.length > 2 || !parts.every((p) => SLUG_RE.test(p))) {
    throw new UsageError(
      `Cannot parse ${what} "${ref}": expected <slug> or <tenant>/<slug> (slugs match ${SLUG_RE.source})`,
    );
  }
  return parts.length === 2
    ? { tenant: parts[0]!, slug: parts[1]! }
    : { tenant: null, slug: parts[0]! };
}
