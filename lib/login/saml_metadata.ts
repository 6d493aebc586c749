/**
 * What the server knows of a tenant's SAML identity provider, read from
 * its metadata document: the entity id (the `Issuer` its assertions
 * carry), the single sign-on URL of the HTTP-Redirect binding (where the
 * person is sent with the request), and the certificates it signs with.
 * {@linkcode parseIdpMetadata} reads a document (a policy's
 * `idp_metadata_xml`, checked when the policy is set);
 * {@linkcode idpMetadataOf} gives the metadata of a policy at sign-in,
 * fetching `idp_metadata_url` (time limit, size limit, kept in memory for
 * a few minutes per process). A document with a DTD is refused (no entity
 * expansion); metadata signatures are not checked: the document is trusted
 * because a superadmin set it, or because it came over HTTPS.
 *
 * @module
 */
import { DOMParser } from "@xmldom/xmldom";
import { X509Certificate } from "node:crypto";
import { UnavailableError } from "../errors.ts";
import type { SamlLoginPolicy } from "../protocol/login_policy.ts";
import { isLoopbackHost } from "../net/loopback.ts";

/** The SAML 2.0 metadata namespace. */
const MD = "urn:oasis:names:tc:SAML:2.0:metadata";
/** The XML signature namespace. */
const DS = "http://www.w3.org/2000/09/xmldsig#";
/** The HTTP-Redirect binding. */
export const REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";

/** Largest metadata document read (bytes of UTF-8). */
export const METADATA_MAX_BYTES = 1024 * 1024;
/** How long fetched metadata is reused, ms. */
export const METADATA_TTL_MS = 5 * 60_000;
/** Time limit of one metadata fetch, ms. */
export const METADATA_TIMEOUT_MS = 10_000;

/** A SAML identity provider, as its metadata describes it. */
export interface IdpMetadata {
  /** Its entity id: the `Issuer` of its responses and assertions. */
  entityId: string;
  /** Where the HTTP-Redirect binding's authentication request goes. */
  ssoUrl: string;
  /** Its signing certificates, PEM. */
  certificates: string[];
}

/** What {@linkcode parseIdpMetadata} found: the metadata, or what is wrong. */
export type MetadataReading = { ok: true; metadata: IdpMetadata } | { ok: false; problem: string };

/** The direct and nested elements of `parent` named `local` in namespace `ns`. */
function elements(parent: Element | Document, ns: string, local: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS(ns, local) as ArrayLike<Element>);
}

/** The certificate text of a `ds:X509Certificate` as PEM, or null when it is not a certificate. */
function certificatePem(text: string): string | null {
  const b64 = text.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return null;
  const pem = `-----BEGIN CERTIFICATE-----\n${
    b64.match(/.{1,64}/g)!.join("\n")
  }\n-----END CERTIFICATE-----\n`;
  try {
    new X509Certificate(pem);
    return pem;
  } catch {
    return null;
  }
}

/**
 * Reads an identity provider's metadata document: an `EntityDescriptor`
 * (or an `EntitiesDescriptor` holding exactly one identity provider) with
 * an `IDPSSODescriptor` that has a `SingleSignOnService` of the
 * HTTP-Redirect binding (`https://`, or `http://` on a loopback host) and
 * at least one signing certificate (`KeyDescriptor` with `use="signing"`
 * or no `use`). Anything else is a problem a person can act on.
 *
 * @param xml the document
 * @returns the metadata, or the problem
 *
 * @example
 * ```ts
 * import { parseIdpMetadata } from "./saml_metadata.ts";
 * const r = parseIdpMetadata("<EntityDescriptor xmlns='urn:oasis:names:tc:SAML:2.0:metadata' entityID='x'/>");
 * if (r.ok || !r.problem.includes("IDPSSODescriptor")) throw new Error();
 * ```
 */
export function parseIdpMetadata(xml: string): MetadataReading {
  if (new TextEncoder().encode(xml).length > METADATA_MAX_BYTES) {
    return { ok: false, problem: `the metadata is larger than ${METADATA_MAX_BYTES} bytes` };
  }
  if (/<!DOCTYPE/i.test(xml)) {
    return { ok: false, problem: "the metadata carries a DTD (<!DOCTYPE>), which is not accepted" };
  }
  let doc: Document;
  try {
    let error: string | undefined;
    const parser = new DOMParser({
      errorHandler: {
        warning: () => {},
        error: (m: string) => (error ??= m),
        fatalError: (m: string) => (error ??= m),
      },
    });
    doc = parser.parseFromString(xml, "text/xml") as unknown as Document;
    if (error !== undefined || doc?.documentElement == null) {
      return { ok: false, problem: "the metadata is not well-formed XML" };
    }
  } catch {
    return { ok: false, problem: "the metadata is not well-formed XML" };
  }
  const idps = elements(doc, MD, "IDPSSODescriptor");
  if (idps.length === 0) {
    return { ok: false, problem: "the metadata describes no identity provider (IDPSSODescriptor)" };
  }
  if (idps.length > 1) {
    return {
      ok: false,
      problem:
        `the metadata describes ${idps.length} identity providers; give the one of this tenant`,
    };
  }
  const idp = idps[0]!;
  const entity = idp.parentNode as Element | null;
  const entityId = entity?.localName === "EntityDescriptor" && entity.namespaceURI === MD
    ? entity.getAttribute("entityID") ?? ""
    : "";
  if (entityId === "") {
    return { ok: false, problem: "the identity provider's EntityDescriptor has no entityID" };
  }
  const sso = elements(idp, MD, "SingleSignOnService").find((e) =>
    e.getAttribute("Binding") === REDIRECT_BINDING
  );
  if (sso === undefined) {
    return {
      ok: false,
      problem: "the identity provider offers no SingleSignOnService with the HTTP-Redirect binding",
    };
  }
  const location = sso.getAttribute("Location") ?? "";
  let url: URL;
  try {
    url = new URL(location);
  } catch {
    return {
      ok: false,
      problem: `the single sign-on Location ${JSON.stringify(location)} is not a URL`,
    };
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopbackHost(url.hostname))) {
    return {
      ok: false,
      problem:
        "the single sign-on Location must be an https:// URL (http:// only on a loopback host)",
    };
  }
  const certificates: string[] = [];
  for (const kd of elements(idp, MD, "KeyDescriptor")) {
    const use = kd.getAttribute("use");
    if (use !== null && use !== "" && use !== "signing") continue;
    for (const c of elements(kd, DS, "X509Certificate")) {
      const pem = certificatePem(c.textContent ?? "");
      if (pem === null) {
        return { ok: false, problem: "a signing certificate in the metadata cannot be read" };
      }
      if (!certificates.includes(pem)) certificates.push(pem);
    }
  }
  if (certificates.length === 0) {
    return { ok: false, problem: "the metadata names no signing certificate (KeyDescriptor)" };
  }
  return { ok: true, metadata: { entityId, ssoUrl: url.href, certificates } };
}

const parsed = new Map<string, IdpMetadata>();
const fetched = new Map<string, { metadata: IdpMetadata; until: number }>();

/** Keeps at most 100 entries in a cache map (oldest out first). */
function bound<V>(map: Map<string, V>): void {
  while (map.size > 100) map.delete(map.keys().next().value!);
}

/**
 * The identity provider of a SAML policy: its `idp_metadata_xml` read, or
 * its `idp_metadata_url` fetched (cached for {@linkcode METADATA_TTL_MS}).
 * 503 `login_unavailable` when the URL does not answer in time, answers
 * with an error or too much, or the document is not usable metadata.
 *
 * @param policy the tenant's SAML policy
 * @returns the identity provider
 *
 * @example
 * ```ts
 * import { idpMetadataOf } from "./saml_metadata.ts";
 * let code = "";
 * try { await idpMetadataOf({ method: "saml", idp_metadata_url: "http://127.0.0.1:9/metadata" }); }
 * catch (e) { code = (e as { code: string }).code; }
 * if (code !== "login_unavailable") throw new Error(code);
 * ```
 */
export async function idpMetadataOf(policy: SamlLoginPolicy): Promise<IdpMetadata> {
  if (policy.idp_metadata_xml !== undefined) {
    const known = parsed.get(policy.idp_metadata_xml);
    if (known !== undefined) return known;
    const reading = parseIdpMetadata(policy.idp_metadata_xml);
    if (!reading.ok) throw unusable(reading.problem);
    parsed.set(policy.idp_metadata_xml, reading.metadata);
    bound(parsed);
    return reading.metadata;
  }
  const url = policy.idp_metadata_url ?? "";
  const cached = fetched.get(url);
  if (cached !== undefined && cached.until > Date.now()) return cached.metadata;
  const reading = parseIdpMetadata(await fetchMetadata(url));
  if (!reading.ok) throw unusable(reading.problem);
  fetched.set(url, { metadata: reading.metadata, until: Date.now() + METADATA_TTL_MS });
  bound(fetched);
  return reading.metadata;
}

/** 503 for metadata that cannot be used (the operator or tenant admin must fix the policy). */
function unusable(problem: string): UnavailableError {
  return new UnavailableError(
    "login_unavailable",
    `The identity provider's metadata cannot be used: ${problem}`,
  );
}

/** Fetches a metadata document (no redirects to other schemes, size- and time-limited). */
async function fetchMetadata(url: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, {
      signal: AbortSignal.timeout(METADATA_TIMEOUT_MS),
      headers: { accept: "application/samlmetadata+xml, application/xml, text/xml" },
      redirect: "error",
    });
  } catch (err) {
    throw new UnavailableError(
      "login_unavailable",
      "The identity provider's metadata URL does not answer",
      { cause: err },
    );
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new UnavailableError(
      "login_unavailable",
      `The identity provider's metadata URL answered ${res.status}`,
    );
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body ?? new ReadableStream<Uint8Array>()) {
      size += chunk.length;
      if (size > METADATA_MAX_BYTES) {
        await res.body?.cancel().catch(() => {});
        throw unusable(`the metadata is larger than ${METADATA_MAX_BYTES} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof UnavailableError) throw err;
    throw new UnavailableError(
      "login_unavailable",
      "The identity provider's metadata URL did not finish its answer in time",
      { cause: err },
    );
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return new TextDecoder().decode(all);
}
