/**
 * Reading a login policy from a request body: every field checked, unknown
 * fields refused, so a typo never silently weakens a tenant's sign-in
 * (400 `invalid_request` with `details.field`). Also resolves an OIDC
 * policy's `client_secret_ref` when a sign-in needs the secret: the secret
 * lives in the server's environment or a file, never in the store.
 *
 * @module
 */
import { InvalidRequestError, UnavailableError } from "../errors.ts";
import type { LoginPolicy, SamlLoginPolicy } from "../protocol/login_policy.ts";
import { parseIdpMetadata } from "./saml_metadata.ts";
import { isLoopbackHost } from "../net/loopback.ts";

const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const SECRET_REF = /^(env:[A-Za-z_][A-Za-z0-9_]{0,127}|file:\/.{1,1023})$/;
const MAX_LIST = 100;
const MAX_TEXT = 256;
/** Largest `idp_metadata_xml` kept in a policy (the record must fit one KV value). */
export const MAX_METADATA_XML = 48 * 1024;

const bad = (field: string, message: string) =>
  new InvalidRequestError(message, { details: { field } });

function text(o: Record<string, unknown>, field: string, required: boolean): string | undefined {
  const v = o[field];
  if (v === undefined && !required) return undefined;
  if (typeof v !== "string" || v.trim() === "" || v.length > MAX_TEXT) {
    throw bad(field, `${field} must be a non-empty string of at most ${MAX_TEXT} characters`);
  }
  return v;
}

function list(
  o: Record<string, unknown>,
  field: string,
  check: (s: string) => string,
  required: boolean,
): string[] | undefined {
  const v = o[field];
  if (v === undefined && !required) return undefined;
  if (!Array.isArray(v) || v.length > MAX_LIST || (required && v.length === 0)) {
    throw bad(
      field,
      `${field} must be a list of ${required ? "1" : "0"} to ${MAX_LIST} strings`,
    );
  }
  return [
    ...new Set(v.map((x) => {
      if (typeof x !== "string") throw bad(field, `${field} must hold strings`);
      return check(x);
    })),
  ];
}

function domain(field: string) {
  return (d: string) => {
    const lower = d.trim().toLowerCase();
    if (!DOMAIN.test(lower)) {
      throw bad(field, `${JSON.stringify(d)} in ${field} is not a domain name like acme.com`);
    }
    return lower;
  };
}

const group = (field: string) => (g: string) => {
  if (g === "" || g.length > MAX_TEXT) {
    throw bad(field, `groups in ${field} must be 1 to ${MAX_TEXT} characters`);
  }
  return g;
};

function onlyFields(o: Record<string, unknown>, allowed: readonly string[]): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) {
      throw bad(k, `Unknown field ${JSON.stringify(k)}; expected one of ${allowed.join(", ")}`);
    }
  }
}

/**
 * The issuer URL rule: `https://`, or `http://` on a loopback host (a
 * provider on the same machine, for development and tests); no query or
 * fragment.
 */
function issuerUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad("issuer", `issuer must be a URL, not ${JSON.stringify(raw)}`);
  }
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    throw bad("issuer", "issuer must be an https:// URL (http:// only on a loopback host)");
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw bad("issuer", "issuer must not carry a query, a fragment or credentials");
  }
  return raw.replace(/\/$/, "");
}

/**
 * A SAML policy's metadata URL: `https://`, or `http://` on a loopback
 * host; no fragment or credentials.
 */
function metadataUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad("idp_metadata_url", `idp_metadata_url must be a URL, not ${JSON.stringify(raw)}`);
  }
  const loopback = isLoopbackHost(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) {
    throw bad(
      "idp_metadata_url",
      "idp_metadata_url must be an https:// URL (http:// only on a loopback host)",
    );
  }
  if (url.hash !== "" || url.username !== "" || url.password !== "") {
    throw bad("idp_metadata_url", "idp_metadata_url must not carry a fragment or credentials");
  }
  return url.href;
}

/** Reads a SAML policy: exactly one metadata source, checked. */
function parseSamlPolicy(o: Record<string, unknown>): SamlLoginPolicy {
  onlyFields(o, [
    "method",
    "idp_metadata_xml",
    "idp_metadata_url",
    "allowed_email_domains",
    "email_attribute",
    "groups_attribute",
    "admin_groups",
  ]);
  const hasXml = o.idp_metadata_xml !== undefined;
  if (hasXml === (o.idp_metadata_url !== undefined)) {
    throw bad(
      hasXml ? "idp_metadata_url" : "idp_metadata_xml",
      "Give exactly one of idp_metadata_xml (the identity provider's metadata document) " +
        "and idp_metadata_url (where to fetch it)",
    );
  }
  const policy: SamlLoginPolicy = { method: "saml" };
  if (hasXml) {
    const xml = o.idp_metadata_xml;
    if (typeof xml !== "string" || xml.trim() === "") {
      throw bad("idp_metadata_xml", "idp_metadata_xml must be the metadata document as a string");
    }
    if (new TextEncoder().encode(xml).length > MAX_METADATA_XML) {
      throw bad(
        "idp_metadata_xml",
        `idp_metadata_xml is larger than ${MAX_METADATA_XML} bytes; give idp_metadata_url instead`,
      );
    }
    const reading = parseIdpMetadata(xml);
    if (!reading.ok) {
      throw bad("idp_metadata_xml", `idp_metadata_xml cannot be used: ${reading.problem}`);
    }
    policy.idp_metadata_xml = xml;
  } else {
    policy.idp_metadata_url = metadataUrl(text(o, "idp_metadata_url", true)!);
  }
  const domains = list(o, "allowed_email_domains", domain("allowed_email_domains"), false);
  if (domains !== undefined) policy.allowed_email_domains = domains;
  const email = text(o, "email_attribute", false);
  if (email !== undefined) policy.email_attribute = email;
  const groupsAttr = text(o, "groups_attribute", false);
  if (groupsAttr !== undefined) policy.groups_attribute = groupsAttr;
  const groups = list(o, "admin_groups", group("admin_groups"), false);
  if (groups !== undefined) policy.admin_groups = groups;
  return policy;
}

/**
 * Reads a login policy from a parsed JSON body; 400 `invalid_request`
 * naming the field for anything wrong (a SAML policy's metadata document
 * is read and must describe a usable identity provider).
 *
 * @param body the parsed body
 * @returns the policy, normalised (domains lower case, duplicates removed)
 *
 * @example
 * ```ts
 * import { parseLoginPolicy } from "./policy.ts";
 * const p = parseLoginPolicy({ method: "email", domains: ["Acme.com"] });
 * if (p.method !== "email" || p.domains[0] !== "acme.com") throw new Error();
 * let field = "";
 * try { parseLoginPolicy({ method: "oidc", issuer: "http://idp.example.com", client_id: "c", client_secret_ref: "env:S" }); }
 * catch (e) { field = (e as { details: { field: string } }).details.field; }
 * if (field !== "issuer") throw new Error(field);
 * ```
 */
export function parseLoginPolicy(body: unknown): LoginPolicy {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw bad("method", "The login policy must be a JSON object with a method");
  }
  const o = body as Record<string, unknown>;
  switch (o.method) {
    case "email": {
      onlyFields(o, ["method", "domains"]);
      return { method: "email", domains: list(o, "domains", domain("domains"), true)! };
    }
    case "oidc": {
      onlyFields(o, [
        "method",
        "issuer",
        "client_id",
        "client_secret_ref",
        "allowed_email_domains",
        "groups_claim",
        "admin_groups",
      ]);
      const ref = text(o, "client_secret_ref", true)!;
      if (!SECRET_REF.test(ref)) {
        throw bad(
          "client_secret_ref",
          "client_secret_ref names where the secret is read: env:VARIABLE or file:/absolute/path " +
            "(the secret itself is never sent or stored)",
        );
      }
      const policy: LoginPolicy = {
        method: "oidc",
        issuer: issuerUrl(text(o, "issuer", true)!),
        client_id: text(o, "client_id", true)!,
        client_secret_ref: ref,
      };
      const domains = list(o, "allowed_email_domains", domain("allowed_email_domains"), false);
      if (domains !== undefined) policy.allowed_email_domains = domains;
      const claim = text(o, "groups_claim", false);
      if (claim !== undefined) policy.groups_claim = claim;
      const groups = list(o, "admin_groups", group("admin_groups"), false);
      if (groups !== undefined) policy.admin_groups = groups;
      return policy;
    }
    case "saml":
      return parseSamlPolicy(o);
    default:
      throw bad("method", 'method must be "oidc", "saml" or "email"');
  }
}

/**
 * Reads the OIDC client secret a policy refers to: the environment
 * variable of `env:NAME`, or the contents of `file:/path` (trailing
 * newline removed). 503 `login_unavailable` when it is missing: the
 * operator has to provide it; the message names the reference, never a
 * secret.
 *
 * @param ref the policy's `client_secret_ref`
 * @param env where to read variables (default: the process environment)
 * @returns the secret
 *
 * @example
 * ```ts
 * import { readClientSecret } from "./policy.ts";
 * const s = await readClientSecret("env:IDP_SECRET", { get: (n) => n === "IDP_SECRET" ? "s3" : undefined });
 * if (s !== "s3") throw new Error();
 * ```
 */
export async function readClientSecret(
  ref: string,
  env: { get(name: string): string | undefined } = Deno.env,
): Promise<string> {
  let secret: string | undefined;
  if (ref.startsWith("env:")) {
    secret = env.get(ref.slice(4));
  } else if (ref.startsWith("file:")) {
    try {
      secret = (await Deno.readTextFile(ref.slice(5))).replace(/\r?\n$/, "");
    } catch {
      secret = undefined;
    }
  }
  if (secret === undefined || secret === "") {
    throw new UnavailableError(
      "login_unavailable",
      `The sign-in client secret (${ref}) is not available to the server`,
    );
  }
  return secret;
}
