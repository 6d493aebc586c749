/**
 * Tests of the test identity provider (tests/e2e/saml_idp.ts) against an
 * independent service provider: npm `samlify` in its ServiceProvider role,
 * whose metadata a small loopback server publishes at the URL that is its
 * entity id. They check what the sign-in tests rely on: the metadata is
 * usable, a request is verified against the SP's own metadata (and refused
 * when its signature does not verify), and the responses (the normal one
 * and the comment-injected one) carry signatures a service provider
 * verifies.
 */
import samlify from "npm:samlify@^2.13.1";
import { DOMParser } from "@xmldom/xmldom";
import {
  assert,
  assertEquals,
  assertMatch,
  assertRejects,
  assertStringIncludes,
} from "../assert.ts";
import { parseIdpMetadata } from "../../lib/login/saml_metadata.ts";
import {
  makeSigningKey,
  type SamlIdp,
  SamlRequestError,
  type SamlUser,
  signInAtIdp,
  type SigningKey,
  startSamlIdp,
} from "./saml_idp.ts";
import { parseForms, WebClient } from "./web_client.ts";

const ADA: SamlUser = { email: "ada@acme.com", password: "ada-pw", groups: ["eng", "ops"] };
const POST = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";
const SAML = "urn:oasis:names:tc:SAML:2.0:assertion";

// samlify's SP checks responses against the SAML XSD only through a validator it is given.
samlify.setSchemaValidator({ validate: () => Promise.resolve("skipped") });

/** A samlify service provider whose metadata is served at its entity id. */
interface TestSp extends AsyncDisposable {
  entityId: string;
  acsUrl: string;
  /** A signed HTTP-Redirect AuthnRequest to `idp`, signed with `key` (default the SP's own). */
  redirect(idp: SamlIdp, relayState: string, key?: SigningKey): string;
  /** Parses and verifies a response of `idp` as samlify's SP does. */
  parse(idp: SamlIdp, samlResponse: string): Promise<{ nameID: string | undefined }>;
}

/** Starts a service provider on a free loopback port. */
async function startSp(): Promise<TestSp> {
  const key = await makeSigningKey("sp.acme.test");
  const { promise: ready, resolve } = Promise.withResolvers<Deno.NetAddr>();
  let metadata = "";
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: (addr) => resolve(addr as Deno.NetAddr) },
    (req) =>
      new URL(req.url).pathname === "/metadata"
        ? new Response(metadata, { headers: { "content-type": "application/samlmetadata+xml" } })
        : new Response("not found", { status: 404 }),
  );
  const base = `http://127.0.0.1:${(await ready).port}`;
  const entityId = `${base}/metadata`;
  const acsUrl = `${base}/acs`;
  const spWith = (k: SigningKey) =>
    samlify.ServiceProvider({
      entityID: entityId,
      authnRequestsSigned: true,
      wantAssertionsSigned: true,
      signingCert: k.certificate,
      privateKey: k.privateKey,
      requestSignatureAlgorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
      nameIDFormat: ["urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"],
      assertionConsumerService: [{ Binding: POST, Location: acsUrl }],
    });
  const sp = spWith(key);
  metadata = sp.getMetadata();
  return {
    entityId,
    acsUrl,
    redirect(idp, relayState, signer = key) {
      const entity = samlify.IdentityProvider({ metadata: idp.metadata });
      return spWith(signer).createLoginRequest(entity, "redirect", { relayState }).context;
    },
    async parse(idp, samlResponse) {
      const entity = samlify.IdentityProvider({ metadata: idp.metadata });
      const result = await sp.parseLoginResponse(entity, "post", {
        body: { SAMLResponse: samlResponse },
      });
      return { nameID: result.extract.nameID };
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/** The root of an XML document. */
function xmlRoot(xml: string): Element {
  return new DOMParser().parseFromString(xml, "text/xml").documentElement as unknown as Element;
}

Deno.test("the test IdP's metadata is usable SAML metadata: entity id, signing certificate, HTTP-Redirect single sign-on", async () => {
  await using idp = await startSamlIdp({ users: [ADA] });
  const served = await fetch(idp.metadataUrl);
  assertEquals(served.status, 200);
  assertStringIncludes(String(served.headers.get("content-type")), "samlmetadata+xml");
  assertEquals(await served.text(), idp.metadata);

  const reading = parseIdpMetadata(idp.metadata);
  assert(reading.ok, JSON.stringify(reading));
  assertEquals(reading.metadata.entityId, idp.entityId);
  assertEquals(reading.metadata.ssoUrl, `${idp.url}/sso`);
  assertEquals(reading.metadata.certificates.length, 1);
  const der = (pem: string) => pem.replace(/-----[A-Z ]+-----|\s+/g, "");
  assertEquals(der(reading.metadata.certificates[0]!), der(idp.key.certificate));

  const root = xmlRoot(idp.metadata);
  const md = "urn:oasis:names:tc:SAML:2.0:metadata";
  const keys = root.getElementsByTagNameNS(md, "KeyDescriptor");
  assertEquals(keys.length, 1);
  assertEquals(keys[0]!.getAttribute("use"), "signing");
});

Deno.test("the test IdP signs a person in for a request signed with the key of the SP's metadata", async () => {
  await using idp = await startSamlIdp({ users: [ADA] });
  await using sp = await startSp();
  const web = new WebClient();
  const redirect = sp.redirect(idp, "relay-1");

  const login = await web.request(redirect);
  assertEquals(login.status, 200, login.text);
  assertStringIncludes(login.text, '<label for="username">');
  assertStringIncludes(login.text, '<label for="password">');
  const [form] = parseForms(login.text, login.url);
  const wrong = await web.submit(form!, { username: ADA.email, password: "not-it" });
  assertEquals(wrong.status, 401);
  assert(!wrong.text.includes("SAMLResponse"), wrong.text);

  const { form: post } = await signInAtIdp(web, redirect, {
    username: ADA.email,
    password: ADA.password,
  });
  assertEquals(post.action.href, sp.acsUrl);
  assertEquals(post.method, "POST");
  const fields = new Map(post.fields);
  assertEquals(fields.get("RelayState"), "relay-1");
  const request = idp.requests().at(-1)!;
  assertEquals([request.spEntityId, request.acsUrl], [sp.entityId, sp.acsUrl]);

  const xml = new TextDecoder().decode(
    Uint8Array.from(atob(fields.get("SAMLResponse")!), (c) => c.charCodeAt(0)),
  );
  const response = xmlRoot(xml);
  assertEquals(response.getAttribute("Destination"), sp.acsUrl);
  assertEquals(response.getAttribute("InResponseTo"), request.id);
  const [assertion] = Array.from(response.getElementsByTagNameNS(SAML, "Assertion"));
  assertEquals(assertion!.getElementsByTagNameNS(SAML, "Audience")[0]!.textContent, sp.entityId);
  const groups = Array.from(assertion!.getElementsByTagNameNS(SAML, "Attribute"))
    .find((a) => a.getAttribute("Name") === "groups")!;
  assertEquals(
    Array.from(groups.getElementsByTagNameNS(SAML, "AttributeValue")).map((v) => v.textContent),
    ["eng", "ops"],
  );
  // An independent service provider verifies the signed assertion.
  assertEquals((await sp.parse(idp, fields.get("SAMLResponse")!)).nameID, ADA.email);
});

Deno.test("the test IdP refuses (400) a request whose signature does not verify with the SP's metadata", async () => {
  await using idp = await startSamlIdp({ users: [ADA] });
  await using sp = await startSp();
  const other = await makeSigningKey("impostor.acme.test");
  const signedByOther = sp.redirect(idp, "relay-2", other);
  const relayChanged = sp.redirect(idp, "relay-3").replace(
    "RelayState=relay-3",
    "RelayState=relay-4",
  );
  const unsigned = new URL(sp.redirect(idp, "relay-5"));
  unsigned.searchParams.delete("Signature");
  for (
    const [what, url] of [
      ["signed by a key not in the SP metadata", signedByOther],
      ["RelayState changed after signing", relayChanged],
      ["no Signature", unsigned.href],
    ]
  ) {
    const res = await new WebClient().request(url!);
    assertEquals(res.status, 400, `${what}: ${res.text}`);
    assertMatch(res.text, /signature does not verify|not signed/, what);
    assert(!res.text.includes('name="password"'), `${what}: login form shown`);
    await assertRejects(() => idp.readRequest(url!), SamlRequestError);
  }
  assertEquals(idp.requests(), []);
});

Deno.test("the test IdP's comment injection keeps a signature that verifies", async () => {
  await using idp = await startSamlIdp({ users: [] });
  await using sp = await startSp();
  await idp.readRequest(sp.redirect(idp, "relay-6"));
  const request = idp.requests()[0]!;
  const user = { email: "eve@acme.com.evil.example", password: "x" };
  const injected = await idp.respondWithComment({ request, user }, "eve@acme.com");
  const xml = new TextDecoder().decode(
    Uint8Array.from(atob(injected), (c) => c.charCodeAt(0)),
  );
  assertStringIncludes(xml, ">eve@acme.com<!---->.evil.example</saml:NameID>");
  // samlify's SP verifies it: the attack is carried by a valid signature.
  await sp.parse(idp, injected);
  // …while the same NameID rewritten without the comment breaks it.
  const rewritten = btoa(xml.replace("eve@acme.com<!---->.evil.example<", "eve@acme.com<"));
  await assertRejects(() => sp.parse(idp, rewritten));
});
