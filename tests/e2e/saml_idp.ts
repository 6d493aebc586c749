/**
 * Test helper: a real SAML 2.0 identity provider on loopback, for the
 * sign-in tests. npm `samlify` in its IdentityProvider role makes and signs
 * the responses (a fresh RSA-2048 key and self-signed certificate per
 * provider); `Deno.serve` answers the browser on a free port:
 *
 * | route | what |
 * |---|---|
 * | `GET /metadata` | its metadata (entity id, signing certificate, HTTP-Redirect single sign-on at `/sso`) |
 * | `GET /sso?SAMLRequest&RelayState&SigAlg&Signature` | reads the AuthnRequest, fetches the service provider's metadata from the request's `Issuer` (cfgtool's entity id is its metadata URL), verifies the redirect signature with that metadata's certificate (400 when it does not verify), and shows a login form |
 * | `POST /sso/login` | checks the password and answers a page whose "Continue" form posts `SAMLResponse` and `RelayState` to the consumer service |
 * | `/slo` | 501: single logout is not offered |
 *
 * For the refusal tests it also makes responses without a browser
 * ({@linkcode SamlIdp.respond}, with overrides of every checked field, the
 * signature's place and key) and the two XML attacks: signature wrapping
 * ({@linkcode SamlIdp.respondWrapped}) and a comment injected in a signed
 * NameID ({@linkcode SamlIdp.respondWithComment}).
 *
 * @module
 */
import samlify from "npm:samlify@^2.13.1";
import { DOMParser } from "@xmldom/xmldom";
import { X509Certificate } from "node:crypto";
import { makeCertificate, type TestCertificate } from "../login/saml_fixtures.ts";
import { type HtmlForm, parseForms, type WebClient, type WebResponse } from "./web_client.ts";

/** SAML namespaces, bindings and formats the provider uses. */
const NS = {
  protocol: "urn:oasis:names:tc:SAML:2.0:protocol",
  assertion: "urn:oasis:names:tc:SAML:2.0:assertion",
  metadata: "urn:oasis:names:tc:SAML:2.0:metadata",
  dsig: "http://www.w3.org/2000/09/xmldsig#",
};
const REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
const POST_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";
const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
const RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
const SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success";
const PASSWORD_CONTEXT = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport";

/** A signing key of the provider: a private key and its self-signed certificate, PEM. */
export type SigningKey = TestCertificate;

/**
 * Makes an RSA-2048 key and a self-signed certificate (for
 * {@linkcode ResponseOverrides.key}: a key no metadata names).
 *
 * @param commonName the certificate's subject
 * @returns the key pair
 */
export function makeSigningKey(commonName = "idp.acme.test"): Promise<SigningKey> {
  return makeCertificate(commonName);
}

/** A person registered at the provider. */
export interface SamlUser {
  /** The NameID (format emailAddress) and the `email` attribute. */
  email: string;
  password: string;
  /** The `groups` attribute (several values); default none. */
  groups?: string[];
}

/** An AuthnRequest the provider read and verified. */
export interface SamlRequest {
  /** Its `ID` (the response's `InResponseTo`). */
  id: string;
  /** Its `AssertionConsumerServiceURL`, listed in the SP metadata. */
  acsUrl: string;
  /** Its `Issuer`: the service provider's entity id (and metadata URL). */
  spEntityId: string;
  /** The `RelayState` it came with, or null. */
  relayState: string | null;
}

/** Fields of a response a test forges (each default is what a correct provider sends). */
export interface ResponseOverrides {
  /** `Audience` (default the SP entity id). */
  audience?: string;
  /** `SubjectConfirmationData/@Recipient` (default the consumer URL). */
  recipient?: string;
  /** The response's `Destination` (default the consumer URL). */
  destination?: string;
  /** `Conditions/@NotBefore` (default now − 1 min). */
  notBefore?: Date;
  /** `Conditions/@NotOnOrAfter` and the confirmation's (default now + 5 min). */
  notOnOrAfter?: Date;
  /** `InResponseTo` of the response and the confirmation (default the request's id; null: none). */
  inResponseTo?: string | null;
  /** What is signed (default `assertion`, what cfgtool's metadata asks for). */
  sign?: "assertion" | "response" | "both" | "none";
  /** Sign with this key instead of the one in the metadata. */
  key?: SigningKey;
  /** The NameID and `email` attribute (default the user's email). */
  email?: string;
}

/** What {@linkcode SamlIdp.respond} answers. */
export interface RespondOptions {
  /** The request answered; null: an unsolicited response (no `InResponseTo`). */
  request: SamlRequest | null;
  /** The service provider, when `request` is null (default: the one of the last request read). */
  sp?: { entityId: string; acsUrl: string };
  user: SamlUser;
  overrides?: ResponseOverrides;
}

/**
 * The ways {@linkcode SamlIdp.respondWrapped} wraps a signed assertion:
 * - `evil-first`: an unsigned assertion for the evil identity before the
 *   signed one, both children of the response;
 * - `signed-inside-evil`: the signed assertion moved inside the evil one
 *   (the only assertion child of the response);
 * - `extensions-same-id`: the signed assertion moved into the response's
 *   `Extensions`, and in its place a copy naming the evil identity with the
 *   same `ID` and the original `Signature` (whose reference resolves to the
 *   first element of that id: the genuine, signed one).
 */
export type WrapVariant = "evil-first" | "signed-inside-evil" | "extensions-same-id";

/** A running provider. `await using` stops it. */
export interface SamlIdp extends AsyncDisposable {
  /** Where it listens: `http://127.0.0.1:<port>` (or `http://localhost:<port>`). */
  url: string;
  /** Its entity id (the `Issuer` of its responses): `<url>/metadata`. */
  entityId: string;
  /** Its metadata URL, `<url>/metadata`. */
  metadataUrl: string;
  /** Its HTTP-Redirect single sign-on URL, `<url>/sso`. */
  ssoUrl: string;
  /** Its metadata document. */
  metadata: string;
  /** The key it signs with (named by its metadata). */
  key: SigningKey;
  /**
   * Reads and verifies the AuthnRequest of a redirect to its single
   * sign-on URL, as `GET /sso` does (without showing a form); rejects when
   * it does not verify.
   */
  readRequest(redirect: string | URL): Promise<SamlRequest>;
  /** A base64 `SAMLResponse` for `options.user`, as a test wants it. */
  respond(options: RespondOptions): Promise<string>;
  /**
   * A correctly signed response for `options.user`, then rewritten so that
   * a second, unsigned assertion names `evil` (see {@linkcode WrapVariant}).
   */
  respondWrapped(options: RespondOptions, evil: SamlUser, variant: WrapVariant): Promise<string>;
  /**
   * A correctly signed response for `options.user`, then a comment
   * `<!---->` inserted in the NameID text right after `prefix` (exclusive
   * C14N drops comments, so the signature still verifies).
   */
  respondWithComment(options: RespondOptions, prefix: string): Promise<string>;
  /** The requests `GET /sso` and {@linkcode readRequest} verified, oldest first. */
  requests(): SamlRequest[];
  /** Stops the server. */
  close(): Promise<void>;
}

/** Options of {@linkcode startSamlIdp}. */
export interface SamlIdpOptions {
  /** The people who can sign in. */
  users: SamlUser[];
  /**
   * The host name of its URLs (it always listens on 127.0.0.1): `localhost`
   * makes it another site than a server on `127.0.0.1`.
   */
  host?: "127.0.0.1" | "localhost";
}

/** Raised when a request to `GET /sso` is refused (answered 400). */
export class SamlRequestError extends Error {
  /** @param message why */
  constructor(message: string) {
    super(message);
    this.name = "SamlRequestError";
  }
}

/** Escapes text for XML and HTML. */
function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

/** Parses XML, failing on any error. */
function parseXml(xml: string): Document {
  let error: string | undefined;
  const doc = new DOMParser({
    errorHandler: {
      warning: () => {},
      error: (m: string) => (error ??= m),
      fatalError: (m: string) => (error ??= m),
    },
  }).parseFromString(xml, "text/xml") as unknown as Document;
  if (error !== undefined || doc?.documentElement == null) {
    throw new SamlRequestError(`not well-formed XML: ${error ?? "no root"}`);
  }
  return doc;
}

/** The elements `ns:local` under `parent`. */
function elementsOf(parent: Document | Element, ns: string, local: string): Element[] {
  return Array.from(parent.getElementsByTagNameNS(ns, local) as ArrayLike<Element>);
}

/** Base64 to bytes. */
function fromBase64(b64: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(b64.replace(/\s+/g, "")), (c) => c.charCodeAt(0));
}

/** Raw-inflates bytes (the HTTP-Redirect binding's DEFLATE). */
async function inflate(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return await new Response(stream).text();
}

/** A PEM certificate of a `ds:X509Certificate` text. */
function certificatePem(text: string): string {
  const b64 = text.replace(/\s+/g, "");
  return `-----BEGIN CERTIFICATE-----\n${
    b64.match(/.{1,64}/g)!.join("\n")
  }\n-----END CERTIFICATE-----\n`;
}

/** The raw (still percent-encoded) values of a query string, first occurrence of each name. */
function rawQuery(search: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of search.replace(/^\?/, "").split("&")) {
    const at = part.indexOf("=");
    const name = at < 0 ? part : part.slice(0, at);
    if (name !== "" && !out.has(name)) out.set(name, at < 0 ? "" : part.slice(at + 1));
  }
  return out;
}

/** A query value decoded (form encoding: `+` is a space). */
function decodeQueryValue(raw: string): string {
  return decodeURIComponent(raw.replace(/\+/g, " "));
}

/** A service provider's metadata, as far as the provider needs it. */
interface SpMetadata {
  entityId: string;
  certificates: string[];
  acsUrls: string[];
}

/** Reads a service provider's metadata document. */
function parseSpMetadata(xml: string): SpMetadata {
  const doc = parseXml(xml);
  const root = doc.documentElement!;
  if (root.localName !== "EntityDescriptor" || root.namespaceURI !== NS.metadata) {
    throw new SamlRequestError("the SP metadata is not an EntityDescriptor");
  }
  const [sp] = elementsOf(root, NS.metadata, "SPSSODescriptor");
  if (sp === undefined) throw new SamlRequestError("the SP metadata has no SPSSODescriptor");
  const certificates = elementsOf(sp, NS.metadata, "KeyDescriptor")
    .filter((k) => (k.getAttribute("use") ?? "signing") === "signing")
    .flatMap((k) => elementsOf(k, NS.dsig, "X509Certificate"))
    .map((c) => certificatePem(c.textContent ?? ""));
  const acsUrls = elementsOf(sp, NS.metadata, "AssertionConsumerService")
    .filter((a) => a.getAttribute("Binding") === POST_BINDING)
    .map((a) => a.getAttribute("Location") ?? "");
  return { entityId: root.getAttribute("entityID") ?? "", certificates, acsUrls };
}

/** Whether a URL is on this machine (the provider fetches nothing else). */
function onLoopback(url: URL): boolean {
  return url.protocol === "http:" && ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
}

/** Verifies an RSA-SHA256 signature over `data` with a PEM certificate's key. */
async function verifyRsaSha256(
  certificate: string,
  data: string,
  signature: Uint8Array<ArrayBuffer>,
): Promise<boolean> {
  const spki = new X509Certificate(certificate).publicKey.export({ type: "spki", format: "der" });
  const key = await crypto.subtle.importKey(
    "spki",
    new Uint8Array(spki),
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    false,
    ["verify"],
  );
  return await crypto.subtle.verify(
    "RSASSA-PKCS1-v1_5",
    key,
    signature,
    new TextEncoder().encode(data),
  );
}

/**
 * Reads the HTTP-Redirect binding request of `url`: inflates and parses the
 * AuthnRequest, fetches the SP metadata its `Issuer` names, and verifies
 * the signature over `SAMLRequest=…&RelayState=…&SigAlg=…` (the raw query
 * text) with a certificate of that metadata.
 */
async function verifyRedirectRequest(url: URL): Promise<SamlRequest> {
  const query = rawQuery(url.search);
  const rawRequest = query.get("SAMLRequest");
  const rawRelay = query.get("RelayState");
  const rawSigAlg = query.get("SigAlg");
  const rawSignature = query.get("Signature");
  if (rawRequest === undefined || rawRequest === "") {
    throw new SamlRequestError("no SAMLRequest");
  }
  if (rawSigAlg === undefined || rawSignature === undefined) {
    throw new SamlRequestError("the request is not signed (SigAlg and Signature missing)");
  }
  if (decodeQueryValue(rawSigAlg) !== RSA_SHA256) {
    throw new SamlRequestError(`unsupported SigAlg ${decodeQueryValue(rawSigAlg)}`);
  }
  let xml: string;
  try {
    xml = await inflate(fromBase64(decodeQueryValue(rawRequest)));
  } catch (err) {
    throw new SamlRequestError(`the SAMLRequest cannot be inflated: ${err}`);
  }
  const doc = parseXml(xml);
  const root = doc.documentElement!;
  if (root.localName !== "AuthnRequest" || root.namespaceURI !== NS.protocol) {
    throw new SamlRequestError("the SAMLRequest is not an AuthnRequest");
  }
  const id = root.getAttribute("ID") ?? "";
  const acsUrl = root.getAttribute("AssertionConsumerServiceURL") ?? "";
  const issuer = elementsOf(root, NS.assertion, "Issuer")
    .find((e) => e.parentNode === root)?.textContent?.trim() ?? "";
  if (id === "" || acsUrl === "" || issuer === "") {
    throw new SamlRequestError("the AuthnRequest lacks ID, AssertionConsumerServiceURL or Issuer");
  }
  let metadataUrl: URL;
  try {
    metadataUrl = new URL(issuer);
  } catch {
    throw new SamlRequestError(`the Issuer ${issuer} is not a metadata URL`);
  }
  if (!onLoopback(metadataUrl)) {
    throw new SamlRequestError(`the Issuer ${issuer} is not on this machine`);
  }
  const res = await fetch(metadataUrl, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new SamlRequestError(`the SP metadata answered ${res.status}`);
  const sp = parseSpMetadata(text);
  if (sp.entityId !== issuer) {
    throw new SamlRequestError(`the SP metadata's entityID ${sp.entityId} is not ${issuer}`);
  }
  if (!sp.acsUrls.includes(acsUrl)) {
    throw new SamlRequestError(`the consumer URL ${acsUrl} is not in the SP metadata`);
  }
  const signed = `SAMLRequest=${rawRequest}` +
    (rawRelay === undefined ? "" : `&RelayState=${rawRelay}`) + `&SigAlg=${rawSigAlg}`;
  const signature = fromBase64(decodeQueryValue(rawSignature));
  let verified = false;
  for (const certificate of sp.certificates) {
    if (await verifyRsaSha256(certificate, signed, signature)) verified = true;
  }
  if (!verified) {
    throw new SamlRequestError("the request's signature does not verify with the SP metadata");
  }
  return {
    id,
    acsUrl,
    spEntityId: issuer,
    relayState: rawRelay === undefined ? null : decodeQueryValue(rawRelay),
  };
}

/** A samlify identity provider entity. */
type IdpEntity = ReturnType<typeof samlify.IdentityProvider>;

/** The samlify identity provider of `entityId` that signs with `key`. */
function idpEntity(entityId: string, ssoUrl: string, key: SigningKey): IdpEntity {
  return samlify.IdentityProvider({
    entityID: entityId,
    signingCert: key.certificate,
    privateKey: key.privateKey,
    nameIDFormat: [EMAIL_FORMAT],
    singleSignOnService: [{ Binding: REDIRECT_BINDING, Location: ssoUrl }],
    // Single logout is not offered (`/slo` answers 501); samlify warns without one.
    singleLogoutService: [{
      Binding: REDIRECT_BINDING,
      Location: ssoUrl.replace(/\/sso$/, "/slo"),
    }],
    wantAuthnRequestsSigned: true,
    requestSignatureAlgorithm: RSA_SHA256,
  });
}

/** A fresh xsd:ID. */
function newId(): string {
  return `_${crypto.randomUUID().replaceAll("-", "")}`;
}

/** The `AttributeStatement` of a person: `email`, and `groups` (several values) when any. */
function attributeStatement(email: string, groups: string[]): string {
  const value = (v: string) =>
    `<saml:AttributeValue xmlns:xs="http://www.w3.org/2001/XMLSchema" ` +
    `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="xs:string">${
      esc(v)
    }</saml:AttributeValue>`;
  const attribute = (name: string, values: string[]) =>
    `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${
      values.map(value).join("")
    }</saml:Attribute>`;
  return `<saml:AttributeStatement>${attribute("email", [email])}${
    groups.length > 0 ? attribute("groups", groups) : ""
  }</saml:AttributeStatement>`;
}

/** The `AuthnStatement` of a password sign-in at `now`. */
function authnStatement(now: Date): string {
  return `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="${newId()}">` +
    `<saml:AuthnContext><saml:AuthnContextClassRef>${PASSWORD_CONTEXT}</saml:AuthnContextClassRef>` +
    `</saml:AuthnContext></saml:AuthnStatement>`;
}

/** Decodes a base64 response. */
function decodeResponse(b64: string): string {
  return new TextDecoder().decode(fromBase64(b64));
}

/** Encodes a response as base64. */
function encodeResponse(xml: string): string {
  const bytes = new TextEncoder().encode(xml);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

/** The one `<saml:Assertion …>…</saml:Assertion>` of samlify's one-line output. */
function assertionOf(xml: string): { start: number; end: number; text: string } {
  const start = xml.indexOf("<saml:Assertion ");
  const close = "</saml:Assertion>";
  const end = xml.lastIndexOf(close) + close.length;
  if (start < 0 || end < close.length || xml.indexOf("<saml:Assertion ", start + 1) >= 0) {
    throw new Error("expected exactly one assertion");
  }
  return { start, end, text: xml.slice(start, end) };
}

/** An HTML page. */
function page(title: string, body: string, status = 200): Response {
  return new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${
      esc(title)
    }</title></head><body><main><h1>${esc(title)}</h1>${body}</main></body></html>`,
    { status, headers: { "content-type": "text/html; charset=utf-8" } },
  );
}

/** The login form of a verified request, kept under `ticket`. */
function loginForm(ticket: string, error?: string): Response {
  return page(
    "Sign in to Acme",
    `${error === undefined ? "" : `<p role="alert">${esc(error)}</p>`}
<form method="post" action="/sso/login">
  <input type="hidden" name="ticket" value="${esc(ticket)}">
  <p><label for="username">Username</label> <input id="username" name="username" type="text" autocomplete="username"></p>
  <p><label for="password">Password</label> <input id="password" name="password" type="password" autocomplete="current-password"></p>
  <p><button type="submit">Sign in</button></p>
</form>`,
    error === undefined ? 200 : 401,
  );
}

/**
 * Starts an identity provider for `options.users` on a free loopback port,
 * with a fresh signing key. `await using` stops it.
 *
 * @param options the people, and the host name of its URLs
 * @returns the running provider
 *
 * @example
 * ```ts ignore
 * await using idp = await startSamlIdp({ users: [{ email: "ada@acme.com", password: "pw" }] });
 * await inst.api("PUT", "/api/v1/tenants/acme/login", inst.admin, {
 *   method: "saml", idp_metadata_url: idp.metadataUrl,
 * });
 * ```
 */
export async function startSamlIdp(options: SamlIdpOptions): Promise<SamlIdp> {
  const key = await makeSigningKey();
  const tickets = new Map<string, SamlRequest>();
  const verified: SamlRequest[] = [];

  const handler = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    if (req.method === "GET" && url.pathname === "/metadata") {
      return new Response(idp.metadata, {
        headers: { "content-type": "application/samlmetadata+xml; charset=utf-8" },
      });
    }
    if (req.method === "GET" && url.pathname === "/sso") {
      let request: SamlRequest;
      try {
        request = await idp.readRequest(url);
      } catch (err) {
        if (!(err instanceof SamlRequestError)) throw err;
        return page("Sign-in request refused", `<p>${esc(err.message)}</p>`, 400);
      }
      const ticket = crypto.randomUUID();
      tickets.set(ticket, request);
      return loginForm(ticket);
    }
    if (req.method === "POST" && url.pathname === "/sso/login") {
      const form = new URLSearchParams(await req.text());
      const ticket = form.get("ticket") ?? "";
      const request = tickets.get(ticket);
      if (request === undefined) {
        return page("Sign-in request refused", "<p>No sign-in in progress.</p>", 400);
      }
      const user = options.users.find((u) =>
        u.email === form.get("username") && u.password === form.get("password")
      );
      if (user === undefined) return loginForm(ticket, "Wrong username or password.");
      tickets.delete(ticket);
      const response = await idp.respond({ request, user });
      const relay = request.relayState === null
        ? ""
        : `\n  <input type="hidden" name="RelayState" value="${esc(request.relayState)}">`;
      return page(
        "Signed in",
        `<p>You are signed in as ${esc(user.email)}.</p>
<form method="post" action="${esc(request.acsUrl)}">
  <input type="hidden" name="SAMLResponse" value="${esc(response)}">${relay}
  <p><button type="submit">Continue</button></p>
</form>`,
      );
    }
    if (url.pathname === "/slo") return page("Single logout is not offered", "", 501);
    return new Response("not found", { status: 404 });
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  const url = `http://${options.host ?? "127.0.0.1"}:${server.addr.port}`;
  const entityId = `${url}/metadata`;
  const ssoUrl = `${url}/sso`;
  const entity = idpEntity(entityId, ssoUrl, key);

  /** Renders and signs a response as `options` say; the XML, not encoded. */
  const render = async (o: RespondOptions): Promise<string> => {
    const ov = o.overrides ?? {};
    const last = verified.at(-1);
    const sp = o.request !== null
      ? { entityId: o.request.spEntityId, acsUrl: o.request.acsUrl }
      : o.sp ?? (last ? { entityId: last.spEntityId, acsUrl: last.acsUrl } : undefined);
    if (sp === undefined) throw new Error("respond: no request and no service provider");
    const now = new Date();
    const until = ov.notOnOrAfter ?? new Date(now.getTime() + 5 * 60_000);
    const email = ov.email ?? o.user.email;
    const inResponseTo = ov.inResponseTo !== undefined ? ov.inResponseTo : o.request?.id ?? null;
    const tags = {
      ID: newId(),
      AssertionID: newId(),
      Destination: ov.destination ?? sp.acsUrl,
      Audience: ov.audience ?? sp.entityId,
      SubjectRecipient: ov.recipient ?? sp.acsUrl,
      Issuer: entityId,
      IssueInstant: now.toISOString(),
      StatusCode: SUCCESS,
      ConditionsNotBefore: (ov.notBefore ?? new Date(now.getTime() - 60_000)).toISOString(),
      ConditionsNotOnOrAfter: until.toISOString(),
      SubjectConfirmationDataNotOnOrAfter: until.toISOString(),
      NameIDFormat: EMAIL_FORMAT,
      NameID: email,
      InResponseTo: inResponseTo,
    };
    const fill = (template: string) =>
      samlify.SamlLib.replaceTagsByValue(
        template.replace(
          "{AuthnStatement}{AttributeStatement}",
          () => authnStatement(now) + attributeStatement(email, o.user.groups ?? []),
        ),
        tags,
      );
    const sign = ov.sign ?? "assertion";
    if (sign === "none") return fill(samlify.SamlLib.defaultLoginResponseTemplate.context);
    const signer = ov.key === undefined ? entity : idpEntity(entityId, ssoUrl, ov.key);
    const spEntity = samlify.ServiceProvider({
      entityID: sp.entityId,
      assertionConsumerService: [{ Binding: POST_BINDING, Location: sp.acsUrl }],
      wantAssertionsSigned: sign !== "response",
      wantMessageSigned: sign === "both",
    });
    const made = await signer.createLoginResponse(
      spEntity,
      { extract: { request: { id: inResponseTo ?? "" } } },
      "post",
      { email },
      { customTagReplacement: (template: string) => ({ id: tags.ID, context: fill(template) }) },
    );
    return decodeResponse(made.context);
  };

  const idp: SamlIdp = {
    url,
    entityId,
    metadataUrl: entityId,
    ssoUrl,
    metadata: entity.getMetadata(),
    key,
    async readRequest(redirect) {
      const request = await verifyRedirectRequest(new URL(redirect));
      verified.push(request);
      return request;
    },
    async respond(o) {
      return encodeResponse(await render(o));
    },
    async respondWrapped(o, evil, variant) {
      const signed = await render({ ...o, overrides: { ...o.overrides, sign: "assertion" } });
      const genuine = assertionOf(signed);
      if (variant === "extensions-same-id") {
        // The same assertion (ID and Signature kept) naming the evil identity.
        const forged = genuine.text.split(o.user.email).join(evil.email)
          .replace(
            /<saml:AttributeStatement>.*<\/saml:AttributeStatement>/,
            () => attributeStatement(evil.email, evil.groups ?? []),
          );
        const issuerEnd = signed.indexOf("</saml:Issuer>") + "</saml:Issuer>".length;
        return encodeResponse(
          signed.slice(0, issuerEnd) +
            `<samlp:Extensions>${genuine.text}</samlp:Extensions>` +
            signed.slice(issuerEnd, genuine.start) + forged + signed.slice(genuine.end),
        );
      }
      const unsigned = assertionOf(
        await render({ ...o, user: evil, overrides: { ...o.overrides, sign: "none" } }),
      ).text;
      if (variant === "evil-first") {
        return encodeResponse(
          signed.slice(0, genuine.start) + unsigned + signed.slice(genuine.start),
        );
      }
      // signed-inside-evil: the genuine assertion becomes the evil one's last child.
      const close = "</saml:Assertion>";
      const nested = unsigned.slice(0, -close.length) + genuine.text + close;
      return encodeResponse(signed.slice(0, genuine.start) + nested + signed.slice(genuine.end));
    },
    async respondWithComment(o, prefix) {
      const signed = await render({ ...o, overrides: { ...o.overrides, sign: "assertion" } });
      const nameId = signed.match(/(<saml:NameID [^>]*>)([^<]*)(<\/saml:NameID>)/);
      if (nameId === null || !nameId[2]!.startsWith(prefix)) {
        throw new Error(`the NameID does not start with ${prefix}`);
      }
      const text = `${prefix}<!---->${nameId[2]!.slice(prefix.length)}`;
      return encodeResponse(signed.replace(nameId[0], () => `${nameId[1]}${text}${nameId[3]}`));
    },
    requests: () => [...verified],
    async close() {
      await server.shutdown();
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
  return idp;
}

/** What the provider's pages answered to a sign-in: the form that posts to the consumer. */
export interface IdpSignIn {
  /** The "Continue" form (`SAMLResponse`, `RelayState`), action = the consumer URL. */
  form: HtmlForm;
  /** The page holding it. */
  page: WebResponse;
}

/**
 * Opens the provider's single sign-on redirect `ssoRedirect` with `client`,
 * fills its login form with `username` and `password`, and returns the
 * "Continue" form that would post the response to the consumer service
 * (not submitted). A page without that form raises an error saying what it
 * showed.
 *
 * @param client the browser stand-in
 * @param ssoRedirect where cfgtool sent the browser
 * @param credentials the person's username and password
 * @returns the form to submit
 *
 * @example
 * ```ts ignore
 * const { form } = await signInAtIdp(web, start.location!, { username: "ada@acme.com", password: "pw" });
 * const accepted = await web.submit(form);
 * ```
 */
export async function signInAtIdp(
  client: WebClient,
  ssoRedirect: string | URL,
  credentials: { username: string; password: string },
): Promise<IdpSignIn> {
  const login = await client.request(ssoRedirect);
  const loginForm = login.status === 200
    ? parseForms(login.text, login.url).find((f) => f.names.includes("password"))
    : undefined;
  if (loginForm === undefined) {
    throw new Error(`the provider answered ${login.status}: ${login.text.slice(0, 500)}`);
  }
  const done = await client.submit(loginForm, credentials);
  const form = done.status === 200
    ? parseForms(done.text, done.url).find((f) => f.names.includes("SAMLResponse"))
    : undefined;
  if (form === undefined) {
    throw new Error(`the provider answered ${done.status}: ${done.text.slice(0, 500)}`);
  }
  return { form, page: done };
}
