/**
 * The checks cfgtool makes on a SAML response beyond the library's
 * (signature, `InResponseTo`, times, audience), and the person an
 * accepted assertion names.
 *
 * - {@linkcode inspectResponse} reads the raw response before anything
 *   trusts it: a bounded shape first, by a linear scan before any parser
 *   sees it (XML parsers slow down with the square of some inputs, such as
 *   a namespace declared at each of thousands of nested levels, and the
 *   response is parsed several times), then no DTD, no XML comment inside
 *   an assertion (a comment in a
 *   signed `NameID` survives exclusive canonicalisation, so
 *   `eve@acme.com<!---->.evil.example` keeps a valid signature and a naive
 *   reader sees `eve@acme.com`), and a `Destination`, when present, equal
 *   to this server's assertion consumer URL.
 * - {@linkcode inspectAssertion} reads the signed assertion the library
 *   verified: its `Issuer` is the tenant's identity provider, a bearer
 *   `SubjectConfirmationData` names this server's consumer URL as
 *   `Recipient` and this sign-in's request as `InResponseTo` (the
 *   library checks the unsigned `Response`'s `InResponseTo`, and the
 *   signed one only when present: an assertion the provider sent unasked
 *   must not become the answer to someone else's request), and gives the assertion id and lifetime (for replay
 *   refusal) and the authentication context (assurance).
 * - {@linkcode identityFromProfile} makes the person: the email from the
 *   NameID or the policy's `email_attribute`, printable ASCII only, in the
 *   allowed domains; the groups from `groups_attribute` (default
 *   `groups`), exactly as sent (no trimming: `flag-admins\u00a0` is not
 *   `flag-admins`).
 *
 * Every refusal is a 403 `LoginError` with a stable reason.
 *
 * @module
 */
import { DOMParser } from "@xmldom/xmldom";
import { LoginError } from "../errors.ts";
import { assertAdmittedDomain, assertPlainEmail } from "./email_rules.ts";
import { asciiTrim } from "../ascii.ts";
import { emailDomain, type SamlLoginPolicy } from "../protocol/login_policy.ts";
import type { VerifiedIdentity } from "./sign_in.ts";

/** The SAML 2.0 assertion namespace. */
const SAML = "urn:oasis:names:tc:SAML:2.0:assertion";
/** The bearer subject confirmation method. */
const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";
/** NameID formats whose value may be an email address. */
const EMAIL_FORMATS = [
  "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
];
/** DOM node type of a comment. */
const COMMENT_NODE = 8;

/** Thrown from the parser's error handler to stop at the first error. */
class NotWellFormed extends Error {}

/**
 * Parses XML strictly (null when it is not well-formed). The parse stops at
 * the first error: left to recover, the parser reports one error per stray
 * `<` and takes seconds on a few hundred KiB of them.
 */
function parseXml(xml: string): Document | null {
  const stop = () => {
    throw new NotWellFormed();
  };
  const parser = new DOMParser({
    errorHandler: { warning: () => {}, error: stop, fatalError: stop },
  });
  try {
    const doc = parser.parseFromString(xml, "text/xml") as unknown as Document;
    return doc?.documentElement == null ? null : doc;
  } catch {
    return null;
  }
}

/** The elements named `local` in namespace `ns` under `parent`. */
function elements(parent: Element | Document, ns: string, local: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS(ns, local) as ArrayLike<Element>);
}

/** Whether a comment node sits anywhere under `node` (iterative: depth costs no stack). */
function holdsComment(node: Node): boolean {
  const stack: Node[] = [node];
  while (stack.length > 0) {
    for (let c = stack.pop()!.firstChild; c !== null; c = c.nextSibling) {
      if (c.nodeType === COMMENT_NODE) return true;
      stack.push(c);
    }
  }
  return false;
}

/**
 * Limits of a response's shape, far above what identity providers send (a
 * response holds some tens of elements; a person in hundreds of groups adds
 * one `AttributeValue` each). The signature check's XPath searches take,
 * for each element, time that grows with its number of siblings: 2,900
 * siblings held the server for a second; these limits keep a response that
 * passes them within some tens of milliseconds.
 */
export const RESPONSE_SHAPE_LIMITS = {
  /** Namespace declarations (`xmlns` / `xmlns:p` attributes). */
  namespaces: 100,
  /** Element nesting depth. */
  depth: 40,
  /** Elements. */
  elements: 500,
  /** Children of one element. */
  children: 300,
  /** Attributes (counted as `=` signs outside quoted values), all elements together. */
  attributes: 3_000,
  /** Characters of one attribute value (ids, URIs, instants are short). */
  attributeValue: 2_048,
  /** Comments, processing instructions, CDATA sections and declarations (`<!…`, `<?…`). */
  markup: 1_000,
};

/** Whether a UTF-16 code unit is XML whitespace. */
function isXmlSpace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0d || code === 0x0a;
}

/**
 * Namespace declarations (`xmlns="…"`, `xmlns:p="…"`) in the text of one
 * tag, `xml.slice(from, to)`: each `xmlns` after whitespace, then an
 * optional `:prefix`, optional whitespace and `=`. One pass: the search
 * resumes where the previous candidate's scan ended.
 */
function namespaceDeclarations(xml: string, from: number, to: number): number {
  let count = 0;
  let i = from;
  while (i < to) {
    const at = xml.indexOf("xmlns", i);
    if (at === -1 || at + 5 > to) break;
    i = at + 5;
    if (at === from || !isXmlSpace(xml.charCodeAt(at - 1))) continue;
    if (xml.charCodeAt(i) === 0x3a /* : */) {
      while (i < to && !isXmlSpace(xml.charCodeAt(i)) && xml.charCodeAt(i) !== 0x3d) i++;
    }
    while (i < to && isXmlSpace(xml.charCodeAt(i))) i++;
    if (i < to && xml.charCodeAt(i) === 0x3d /* = */) count++;
  }
  return count;
}

/**
 * The attributes of the text of one tag, `xml.slice(from, to)`: how many
 * (`=` signs outside quoted values) and the length of the longest quoted
 * value. One pass.
 */
function attributesOf(xml: string, from: number, to: number): { count: number; longest: number } {
  let count = 0;
  let longest = 0;
  let quote = 0;
  let start = 0;
  for (let i = from; i < to; i++) {
    const c = xml.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) {
        longest = Math.max(longest, i - start);
        quote = 0;
      }
    } else if (c === 0x22 /* " */ || c === 0x27 /* ' */) {
      quote = c;
      start = i + 1;
    } else if (c === 0x3d /* = */) {
      count++;
    }
  }
  // A value left open runs to the tag's end (the parser will refuse it).
  return { count, longest: quote === 0 ? longest : Math.max(longest, to - start) };
}

/**
 * Whether the text's shape is within {@linkcode RESPONSE_SHAPE_LIMITS}, by
 * one forward scan of its tags before any parser sees it: each `<` is
 * matched with the next `>`, and the scan goes on after it, so every
 * character is looked at a bounded number of times (a regular expression
 * that looks for the `>` again from every `<` takes the square of the
 * length on text with many `<` and no `>`). Every `<` not followed by `/`,
 * `!` or `?` counts as an element, whatever its name starts with (a name
 * may start with any letter: `<é/>` is an element too). A tag ends at its
 * first `>`; in a well-formed document no element's `<` hides inside
 * another tag (attribute values may not hold `<`), so elements are never
 * undercounted.
 *
 * @param xml the decoded response
 * @returns whether it is within the limits
 *
 * @example
 * ```ts
 * import { shapeWithinLimits } from "./saml_assertion.ts";
 * if (!shapeWithinLimits('<r xmlns="urn:x"><a/><b>t</b></r>')) throw new Error();
 * if (shapeWithinLimits("<a>".repeat(41))) throw new Error("41 levels");
 * if (!shapeWithinLimits("<a".repeat(100_000))) throw new Error("no tag ever closes");
 * if (shapeWithinLimits(`<a>${"<!---->".repeat(1001)}</a>`)) throw new Error("1,001 comments");
 * if (shapeWithinLimits(`<r>${"<\u00e9/>".repeat(301)}</r>`)) throw new Error("301 children");
 * if (shapeWithinLimits(`<r a="${"x".repeat(2049)}"/>`)) throw new Error("a long attribute value");
 * ```
 */
export function shapeWithinLimits(xml: string): boolean {
  const limits = RESPONSE_SHAPE_LIMITS;
  let namespaces = 0;
  let elements = 0;
  let attributes = 0;
  let markup = 0;
  /** Children so far of each open element, outermost first (the document is the first). */
  const children: number[] = [0];
  let i = xml.indexOf("<");
  while (i !== -1) {
    const close = xml.indexOf(">", i + 1);
    if (close === -1) break; // no tag completes after this point
    const next = xml.charCodeAt(i + 1);
    if (next === 0x21 /* ! */ || next === 0x3f /* ? */) {
      if (++markup > limits.markup) return false;
    } else if (next === 0x2f /* / */) {
      if (children.length > 1) children.pop();
    } else {
      namespaces += namespaceDeclarations(xml, i + 1, close);
      if (namespaces > limits.namespaces) return false;
      const attrs = attributesOf(xml, i + 1, close);
      attributes += attrs.count;
      if (attributes > limits.attributes || attrs.longest > limits.attributeValue) return false;
      if (++elements > limits.elements) return false;
      if (++children[children.length - 1]! > limits.children) return false;
      if (xml.charCodeAt(close - 1) !== 0x2f /* / */) {
        children.push(0);
        if (children.length - 1 > limits.depth) return false;
      }
    }
    i = xml.indexOf("<", close + 1);
  }
  return true;
}

const malformed = () =>
  new LoginError("assertion", "The identity provider's answer could not be accepted");

/**
 * Checks the raw response XML before it is verified: a shape within
 * {@linkcode RESPONSE_SHAPE_LIMITS}, well-formed, no DTD, no comment inside
 * an `Assertion`, `Destination` (when present) equal to `acsUrl`.
 * Refusals: `assertion`, `destination`.
 *
 * @param xml the decoded `SAMLResponse`
 * @param acsUrl this server's assertion consumer URL
 * @returns nothing
 *
 * @example
 * ```ts
 * import { inspectResponse } from "./saml_assertion.ts";
 * const xml = (d: string) => `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" Destination="${d}"/>`;
 * inspectResponse(xml("https://flags.example.com/auth/saml/acs"), "https://flags.example.com/auth/saml/acs");
 * let reason = "";
 * try { inspectResponse(xml("https://evil.example/acs"), "https://flags.example.com/auth/saml/acs"); }
 * catch (e) { reason = (e as { reason: string }).reason; }
 * if (reason !== "destination") throw new Error(reason);
 * ```
 */
export function inspectResponse(xml: string, acsUrl: string): void {
  if (/<!DOCTYPE/i.test(xml) || !shapeWithinLimits(xml)) throw malformed();
  const doc = parseXml(xml);
  if (doc === null) throw malformed();
  for (const assertion of elements(doc, SAML, "Assertion")) {
    if (holdsComment(assertion)) {
      throw new LoginError(
        "assertion",
        "The identity provider's answer carries XML comments inside its assertion, " +
          "which cfgtool does not accept",
      );
    }
  }
  const destination = doc.documentElement!.getAttribute("Destination");
  if (destination !== null && destination !== "" && destination !== acsUrl) {
    throw new LoginError(
      "destination",
      "The sign-in response was addressed to another site than this cfgtool",
    );
  }
}

/** What {@linkcode inspectAssertion} read from a verified assertion. */
export interface AssertionFacts {
  /** The assertion's `ID`. */
  id: string;
  /** When it stops being valid (epoch ms), or null when it does not say. */
  notOnOrAfter: number | null;
  /** `AuthnContextClassRef` values (the assurance of the sign-in). */
  contexts: string[];
}

/**
 * Checks the signed assertion the library verified: `Issuer` equal to
 * `idpEntityId` (`issuer`), and a bearer `SubjectConfirmationData` whose
 * `Recipient` is `acsUrl` (`recipient`) and whose `InResponseTo` is
 * `requestId` (`unsolicited` when it has none, `in_response_to` when it
 * names another request).
 *
 * @param xml the verified assertion XML
 * @param idpEntityId the identity provider's entity id
 * @param acsUrl this server's assertion consumer URL
 * @param requestId the id of the request this sign-in sent
 * @returns the assertion's id, lifetime and authentication context
 *
 * @example
 * ```ts
 * import { inspectAssertion } from "./saml_assertion.ts";
 * const a = `<saml:Assertion xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ID="_a1">
 *   <saml:Issuer>https://idp.example.com</saml:Issuer>
 *   <saml:Subject><saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">
 *     <saml:SubjectConfirmationData Recipient="https://f.example.com/auth/saml/acs" InResponseTo="_r1"/>
 *   </saml:SubjectConfirmation></saml:Subject></saml:Assertion>`;
 * if (inspectAssertion(a, "https://idp.example.com", "https://f.example.com/auth/saml/acs", "_r1").id !== "_a1") throw new Error();
 * let reason = "";
 * try { inspectAssertion(a, "https://idp.example.com", "https://other.example.com/acs", "_r1"); }
 * catch (e) { reason = (e as { reason: string }).reason; }
 * if (reason !== "recipient") throw new Error(reason);
 * ```
 */
export function inspectAssertion(
  xml: string,
  idpEntityId: string,
  acsUrl: string,
  requestId: string,
): AssertionFacts {
  const doc = parseXml(xml);
  const assertion = doc?.documentElement;
  if (assertion == null || assertion.localName !== "Assertion" || assertion.namespaceURI !== SAML) {
    throw malformed();
  }
  const issuer = elements(assertion, SAML, "Issuer").find((e) => e.parentNode === assertion);
  if (issuer?.textContent?.trim() !== idpEntityId) {
    throw new LoginError(
      "issuer",
      "The sign-in response was issued by another identity provider than this tenant's",
    );
  }
  const confirmations = elements(assertion, SAML, "SubjectConfirmation")
    .filter((c) => c.getAttribute("Method") === BEARER)
    .flatMap((c) => elements(c, SAML, "SubjectConfirmationData"));
  const ours = confirmations.filter((d) => d.getAttribute("Recipient") === acsUrl);
  if (ours.length === 0) {
    throw new LoginError(
      "recipient",
      "The sign-in response was meant for another site than this cfgtool",
    );
  }
  if (!ours.some((d) => d.getAttribute("InResponseTo") === requestId)) {
    if (ours.every((d) => (d.getAttribute("InResponseTo") ?? "") === "")) {
      throw new LoginError(
        "unsolicited",
        "The identity provider's assertion answers no sign-in this server asked for; " +
          "start the sign-in from cfgtool",
      );
    }
    throw new LoginError(
      "in_response_to",
      "This sign-in response answers another sign-in than the one in progress; start again",
    );
  }
  const times = [
    ...elements(assertion, SAML, "Conditions"),
    ...confirmations,
  ].map((e) => Date.parse(e.getAttribute("NotOnOrAfter") ?? ""))
    .filter((t) => Number.isFinite(t));
  return {
    id: assertion.getAttribute("ID") ?? "",
    notOnOrAfter: times.length === 0 ? null : Math.max(...times),
    contexts: elements(assertion, SAML, "AuthnContextClassRef")
      .map((e) => e.textContent?.trim() ?? "")
      .filter((v) => v !== ""),
  };
}

/** What the library read from a verified assertion (the fields cfgtool uses). */
export interface SamlProfileLike {
  nameID?: string;
  nameIDFormat?: string;
  attributes?: Record<string, unknown>;
}

/** The non-empty strings of an attribute value (one value, or several), as sent. */
function attributeStrings(value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value];
  return values.filter((v): v is string => typeof v === "string" && v !== "");
}

/**
 * The person a verified assertion names, as `policy` admits them to
 * `tenant`: the email is the policy's `email_attribute` when it sets one,
 * otherwise the NameID when its format may hold an email; it must be an
 * address, and in `allowed_email_domains` when the policy lists them.
 * Refusals: `email_missing`, `email_domain`.
 *
 * @param tenant the tenant signing in
 * @param policy its SAML policy
 * @param profile the NameID and attributes of the assertion
 * @param contexts the assertion's authentication contexts
 * @returns the identity to sign in
 *
 * @example
 * ```ts
 * import { identityFromProfile } from "./saml_assertion.ts";
 * const policy = { method: "saml" as const, idp_metadata_url: "https://idp.example.com/md", allowed_email_domains: ["acme.com"] };
 * const id = identityFromProfile("acme", policy, {
 *   nameID: "ada@acme.com", nameIDFormat: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
 *   attributes: { groups: ["eng", "ops"] },
 * }, []);
 * if (id.email !== "ada@acme.com" || id.groups.join() !== "eng,ops" || id.method !== "saml") throw new Error();
 * ```
 */
export function identityFromProfile(
  tenant: string,
  policy: SamlLoginPolicy,
  profile: SamlProfileLike,
  contexts: string[],
): VerifiedIdentity {
  let email: string | undefined;
  if (policy.email_attribute !== undefined) {
    const first = attributeStrings(profile.attributes?.[policy.email_attribute])[0];
    email = first === undefined ? undefined : asciiTrim(first);
  } else if (
    profile.nameIDFormat === undefined || EMAIL_FORMATS.includes(profile.nameIDFormat)
  ) {
    email = profile.nameID === undefined ? undefined : asciiTrim(profile.nameID);
  }
  if (email !== undefined && email !== "") assertPlainEmail(email);
  if (email === undefined || email === "" || emailDomain(email) === null) {
    throw new LoginError(
      "email_missing",
      policy.email_attribute === undefined
        ? "The identity provider did not send your email address as the NameID, so cfgtool cannot sign you in"
        : `The identity provider did not send your email address (attribute ${policy.email_attribute}), ` +
          "so cfgtool cannot sign you in",
    );
  }
  assertAdmittedDomain(tenant, email, policy.allowed_email_domains);
  return {
    tenant,
    email,
    method: "saml",
    assurance: contexts,
    groups: attributeStrings(profile.attributes?.[policy.groups_attribute ?? "groups"]),
  };
}
