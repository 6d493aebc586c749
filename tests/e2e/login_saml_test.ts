/**
 * SAML 2.0 sign-in against real parts: a real `cfgtool serve`, a real
 * identity provider (npm `samlify`, tests/e2e/saml_idp.ts) that verifies
 * cfgtool's signed AuthnRequest against cfgtool's own SP metadata, shows
 * its login form, and posts the signed response back to
 * `/auth/saml/acs`; a cookie-keeping client plays the browser. A sign-in the
 * tenant's policy admits ends at `/auth/saml/finish` with a session cookie
 * that `GET /api/v1/me` accepts; each refusal creates no user and no
 * session, leaves one `login.failed` audit entry and one log line with its
 * reason, and shows the person a readable page.
 *
 * The forged responses come from the same provider
 * ({@linkcode SamlIdp.respond} with overrides, signed by samlify), except
 * the two XML attacks, which rewrite a correctly signed response:
 * signature wrapping (three placements of an unsigned assertion for the
 * admin next to the signed one for a member) and a comment in the signed
 * NameID (`eve@acme.com<!---->.evil.example`).
 */
import { DOMParser } from "@xmldom/xmldom";
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { type Installation, startInstallation } from "./installation.ts";
import {
  makeSigningKey,
  type ResponseOverrides,
  type SamlIdp,
  type SamlRequest,
  type SamlUser,
  signInAtIdp,
  startSamlIdp,
  type WrapVariant,
} from "./saml_idp.ts";
import { WebClient, type WebResponse } from "./web_client.ts";

const ACS = "/auth/saml/acs";
const ADA: SamlUser = { email: "ada@acme.com", password: "ada-pw", groups: ["eng", "flag-admins"] };
const BOB: SamlUser = { email: "bob@acme.com", password: "bob-pw", groups: ["eng"] };
const EVE_OTHER: SamlUser = { email: "eve@other.example", password: "eve-pw" };
const EVE_EVIL: SamlUser = { email: "eve@acme.com.evil.example", password: "eve-pw" };
const USERS = [ADA, BOB, EVE_OTHER, EVE_EVIL];

/** An installation with tenant `acme` and a running identity provider. */
interface Site {
  inst: Installation;
  idp: SamlIdp;
  /** The SP entity id of acme (its metadata URL). */
  spEntityId: string;
  /** The consumer service URL. */
  acsUrl: string;
}

/**
 * Runs `fn` on a fresh installation with tenant `acme` and an identity
 * provider for {@linkcode USERS}, then closes both.
 */
async function withSite(fn: (site: Site) => Promise<void>) {
  const inst = await startInstallation();
  try {
    const created = await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
    assertEquals(created.status, 201, JSON.stringify(created.body));
    await using idp = await startSamlIdp({ users: USERS });
    await fn({
      inst,
      idp,
      spEntityId: `${inst.url}/auth/saml/metadata?tenant=acme`,
      acsUrl: `${inst.url}${ACS}`,
    });
  } finally {
    await inst.close();
  }
}

/** Sets acme's policy: SAML through the site's provider, acme.com only, `flag-admins` are admins. */
async function setPolicy(site: Site, source: "url" | "xml" = "url") {
  const res = await site.inst.api("PUT", "/api/v1/tenants/acme/login", site.inst.admin, {
    method: "saml",
    ...(source === "url"
      ? { idp_metadata_url: site.idp.metadataUrl }
      : { idp_metadata_xml: site.idp.metadata }),
    allowed_email_domains: ["acme.com"],
    admin_groups: ["flag-admins"],
  });
  assertEquals(res.status, 200, JSON.stringify(res.body));
}

/** A browser stand-in. */
function browser(): WebClient {
  return new WebClient({ accept: "text/html,application/xhtml+xml", "user-agent": "login-test" });
}

/** Opens cfgtool's sign-in for acme and returns the provider URL it redirects to. */
async function beginSignIn(site: Site, web: WebClient, next?: string): Promise<URL> {
  const query = new URLSearchParams({ tenant: "acme" });
  if (next !== undefined) query.set("next", next);
  const res = await web.request(`${site.inst.url}/auth/login?${query}`);
  assertEquals(res.status, 303, res.text);
  assert(res.location !== null);
  assertEquals(`${res.location.origin}${res.location.pathname}`, site.idp.ssoUrl);
  return res.location;
}

/** Starts a sign-in in `web` and has the provider read (and verify) its request. */
async function startedRequest(site: Site, web: WebClient): Promise<SamlRequest> {
  return await site.idp.readRequest(await beginSignIn(site, web));
}

/** Posts a response to the consumer service as the provider's page would. */
function postToAcs(
  site: Site,
  web: WebClient,
  samlResponse: string | null,
  relayState: string | null,
): Promise<WebResponse> {
  const body = new URLSearchParams();
  if (samlResponse !== null) body.set("SAMLResponse", samlResponse);
  if (relayState !== null) body.set("RelayState", relayState);
  return web.request(site.acsUrl, { method: "POST", body, headers: { origin: site.idp.url } });
}

/** The `login.failed` / `login.succeeded` entries of acme's audit log, newest first. */
async function loginAudit(site: Site, type: "login.failed" | "login.succeeded") {
  const res = await site.inst.api(
    "GET",
    `/api/v1/audit?tenant=acme&type=${type}`,
    site.inst.admin,
  );
  assertEquals(res.status, 200, JSON.stringify(res.body));
  // deno-lint-ignore no-explicit-any
  return res.body.entries as any[];
}

/** The server's "saml sign-in refused" log lines so far. */
async function refusalLogs(site: Site): Promise<string[]> {
  return (await site.inst.server.logsSettled()).split("\n")
    .filter((l) => l.includes("saml sign-in refused"));
}

/** What a refusal step starts from: the audit entries and log lines already there. */
interface Before {
  failedIds: Set<string>;
  /** Ids of every `login.failed` entry of the installation (any tenant, or none). */
  allFailedIds: Set<string>;
  logLines: number;
}

/** Every `login.failed` entry of the installation (the superadmin's view), newest first. */
async function allLoginFailures(site: Site) {
  const res = await site.inst.api("GET", "/api/v1/audit?type=login.failed", site.inst.admin);
  assertEquals(res.status, 200, JSON.stringify(res.body));
  // deno-lint-ignore no-explicit-any
  return res.body.entries as any[];
}

/** Notes the audit entries and log lines before a refusal, so only new ones are counted. */
async function before(site: Site): Promise<Before> {
  return {
    failedIds: new Set((await loginAudit(site, "login.failed")).map((e) => e.id)),
    allFailedIds: new Set((await allLoginFailures(site)).map((e) => e.id)),
    logLines: (await refusalLogs(site)).length,
  };
}

/**
 * Checks a refusal: the status, a readable "Sign-in failed" page with no
 * stack trace, no session cookie, no user, no successful sign-in, one new
 * `login.failed` entry of acme with method `saml` and the reason, and one
 * new log line with that reason. `reason` may list the reasons accepted.
 * With `tenant: null` (a response that names no sign-in of this server, so
 * no tenant is known), the entry is in the installation's log instead.
 * Returns the reason seen.
 */
async function assertRefused(
  site: Site,
  web: WebClient,
  res: WebResponse,
  was: Before,
  expected: { status: 400 | 403; reason: string | string[]; tenant?: null },
): Promise<string> {
  assertEquals(res.status, expected.status, res.text);
  assert(
    res.headers.get("content-type")?.startsWith("text/html"),
    String(res.headers.get("content-type")),
  );
  assertStringIncludes(res.text, "Sign-in failed");
  for (const leak of [/\bat .*:\d+:\d+/, /Error:/, /node_modules/, /node-saml/, /xml-crypto/]) {
    assert(!leak.test(res.text), `page leaks ${leak}: ${res.text}`);
  }
  assertEquals(await web.cookie(site.inst.url, "cfgtool_session"), null);
  assert(
    !res.headers.getSetCookie().some((c) => c.startsWith("cfgtool_session=")),
    "a refusal set a session cookie",
  );
  const users = await site.inst.api("GET", "/api/v1/users", site.inst.admin);
  assertEquals(users.body.users, [], "a refused sign-in made a user");
  assertEquals(await loginAudit(site, "login.succeeded"), []);
  const lines = (await refusalLogs(site)).slice(was.logLines);
  assertEquals(lines.length, 1, lines.join("\n"));
  const logged = JSON.parse(lines[0]!);
  const allowed = typeof expected.reason === "string" ? [expected.reason] : expected.reason;
  assert(allowed.includes(logged.reason), `refused for another reason: ${lines[0]}`);
  const fresh = expected.tenant === null
    ? (await allLoginFailures(site)).filter((e) => !was.allFailedIds.has(e.id))
    : (await loginAudit(site, "login.failed")).filter((e) => !was.failedIds.has(e.id));
  if (expected.tenant === null) {
    assertEquals(fresh.map((e) => e.tenant_slug), [null], "the installation's log has it");
  }
  if (fresh.length !== 1) {
    const all = await site.inst.api("GET", "/api/v1/audit?type=login.failed", site.inst.admin);
    assert(
      false,
      `acme's audit has ${fresh.length} new login.failed entries; the newest of the installation: ${
        JSON.stringify(all.body.entries?.[0])
      }`,
    );
  }
  const entry = fresh[0];
  assertEquals(entry.details.reason, logged.reason);
  assertEquals(entry.details.method, "saml");
  assertEquals(entry.result, "failure");
  return logged.reason;
}

/** Posts `samlResponse` with `relayState` from a fresh browser that started it, and checks the refusal. */
async function refuseAtAcs(
  site: Site,
  web: WebClient,
  samlResponse: string | null,
  relayState: string | null,
  expected: { status: 400 | 403; reason: string | string[]; tenant?: null },
): Promise<string> {
  const was = await before(site);
  const res = await postToAcs(site, web, samlResponse, relayState);
  return await assertRefused(site, web, res, was, expected);
}

Deno.test("SAML: the service-provider metadata names the entity id, the consumer service and a signing certificate", async () => {
  await withSite(async (site) => {
    const res = await fetch(`${site.inst.url}/auth/saml/metadata?tenant=acme`);
    assertEquals(res.status, 200);
    assert(
      res.headers.get("content-type")?.startsWith("application/samlmetadata+xml"),
      String(res.headers.get("content-type")),
    );
    const doc = new DOMParser().parseFromString(await res.text(), "text/xml");
    const md = "urn:oasis:names:tc:SAML:2.0:metadata";
    const root = doc.documentElement!;
    assertEquals([root.namespaceURI, root.localName], [md, "EntityDescriptor"]);
    assertEquals(root.getAttribute("entityID"), site.spEntityId);
    const sp = root.getElementsByTagNameNS(md, "SPSSODescriptor")[0]!;
    assertEquals(sp.getAttribute("AuthnRequestsSigned"), "true");
    assertEquals(sp.getAttribute("WantAssertionsSigned"), "true");
    const key = sp.getElementsByTagNameNS(md, "KeyDescriptor")[0]!;
    assertEquals(key.getAttribute("use"), "signing");
    const cert =
      key.getElementsByTagNameNS("http://www.w3.org/2000/09/xmldsig#", "X509Certificate")[0];
    assert((cert?.textContent ?? "").trim().length > 500, "no certificate");
    const acs = sp.getElementsByTagNameNS(md, "AssertionConsumerService")[0]!;
    assertEquals(acs.getAttribute("Binding"), "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST");
    assertEquals(acs.getAttribute("Location"), site.acsUrl);
  });
});

Deno.test("SAML: a policy whose identity provider cannot be read is refused, naming the field", async () => {
  await withSite(async (site) => {
    const put = (policy: Record<string, unknown>) =>
      site.inst.api("PUT", "/api/v1/tenants/acme/login", site.inst.admin, {
        method: "saml",
        ...policy,
      });
    const notXml = await put({ idp_metadata_xml: "<EntityDescriptor" });
    assertEquals(notXml.status, 400, JSON.stringify(notXml.body));
    assertEquals(notXml.body.code, "invalid_request");
    assertEquals(notXml.body.details.field, "idp_metadata_xml");
    const noIdp = await put({
      idp_metadata_xml: site.idp.metadata.replace(/IDPSSODescriptor/g, "X"),
    });
    assertEquals(noIdp.status, 400, JSON.stringify(noIdp.body));
    assertEquals(noIdp.body.details.field, "idp_metadata_xml");
    for (
      const both of [
        { idp_metadata_xml: site.idp.metadata, idp_metadata_url: site.idp.metadataUrl },
        {},
        { idp_metadata_url: "http://idp.example.com/metadata" },
      ]
    ) {
      const res = await put(both);
      assertEquals(res.status, 400, JSON.stringify(res.body));
      assertEquals(res.body.code, "invalid_request");
    }
    const got = await site.inst.api("GET", "/api/v1/tenants/acme/login", site.inst.admin);
    assert(got.body?.policy?.method !== "saml", JSON.stringify(got.body));
  });
});

Deno.test("SAML: signing in through the identity provider's own pages", async (t) => {
  await withSite(async (site) => {
    await setPolicy(site, "url");

    await t.step(
      "an admin-group member gets a session, the admin role and login_method saml",
      async () => {
        const web = browser();
        const toIdp = await beginSignIn(site, web, "/api/v1/me");
        for (const p of ["SAMLRequest", "RelayState", "SigAlg", "Signature"]) {
          assert(toIdp.searchParams.get(p), `no ${p} in ${toIdp.href}`);
        }
        assertEquals(
          toIdp.searchParams.get("SigAlg"),
          "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
        );
        const flow = await web.cookie(site.inst.url, "cfgtool_saml");
        assert(flow !== null, "no cfgtool_saml cookie");
        const { form } = await signInAtIdp(web, toIdp, {
          username: ADA.email,
          password: ADA.password,
        });
        // The provider verified the request against cfgtool's SP metadata.
        const request = site.idp.requests().at(-1)!;
        assertEquals(request.spEntityId, site.spEntityId);
        assertEquals(request.acsUrl, site.acsUrl);
        assertEquals(request.relayState, toIdp.searchParams.get("RelayState"));
        assertEquals(form.action.href, site.acsUrl);

        // The provider's page posts from its own origin: no cfgtool cookie rides along.
        const accepted = await web.submit(form, {}, { headers: { origin: site.idp.url } });
        assertEquals(accepted.status, 303, accepted.text);
        assertEquals(accepted.location?.pathname, "/auth/saml/finish");
        assertEquals(await web.cookie(site.inst.url, "cfgtool_session"), null);
        const landed = await web.request(accepted.location!);
        assertEquals(landed.status, 303, landed.text);
        assertEquals(landed.location?.href, `${site.inst.url}/api/v1/me`);
        const setCookie = landed.headers.getSetCookie().find((c) =>
          c.startsWith("cfgtool_session=")
        );
        assert(setCookie !== undefined, JSON.stringify(landed.headers.getSetCookie()));
        assert(/HttpOnly/i.test(setCookie) && /SameSite=Lax/i.test(setCookie), setCookie);
        assertEquals(await web.cookie(site.inst.url, "cfgtool_saml"), null, "flow cookie kept");

        const me = await web.request(landed.location!);
        assertEquals(me.status, 200, me.text);
        const principal = JSON.parse(me.text).principal;
        assertEquals(principal.user.email, ADA.email);
        assertEquals(principal.tenants, [{ slug: "acme", role: "admin" }]);
        assertEquals(principal.session.login_method, "saml");

        const [entry] = await loginAudit(site, "login.succeeded");
        assertEquals(entry.details.method, "saml");
        assertEquals(await loginAudit(site, "login.failed"), []);
      },
    );

    await t.step("the flow cookie is HttpOnly and SameSite=Lax", async () => {
      const res = await browser().request(`${site.inst.url}/auth/login?tenant=acme`);
      const flow = res.headers.getSetCookie().find((c) => c.startsWith("cfgtool_saml="));
      assert(flow !== undefined, JSON.stringify(res.headers.getSetCookie()));
      assert(/HttpOnly/i.test(flow) && /SameSite=Lax/i.test(flow), flow);
    });

    await t.step(
      "with the metadata given inline, a person outside admin_groups signs in as a member",
      async () => {
        await setPolicy(site, "xml");
        const web = browser();
        const { form } = await signInAtIdp(web, await beginSignIn(site, web), {
          username: BOB.email,
          password: BOB.password,
        });
        const accepted = await web.submit(form, {}, { headers: { origin: site.idp.url } });
        assertEquals(accepted.status, 303, accepted.text);
        const landed = await web.request(accepted.location!);
        assertEquals(landed.status, 303, landed.text);
        assertEquals(landed.location?.pathname, "/auth/signed-in");
        const me = JSON.parse((await web.request(`${site.inst.url}/api/v1/me`)).text);
        assertEquals(me.principal.user.email, BOB.email);
        assertEquals(me.principal.tenants, [{ slug: "acme", role: "member" }]);
        assertEquals(me.principal.session.login_method, "saml");
      },
    );
  });
});

Deno.test("SAML refuses every response it must not trust, with no user and no session", async (t) => {
  await withSite(async (site) => {
    await setPolicy(site, "url");
    const forged = async (overrides: ResponseOverrides, user: SamlUser = ADA) => {
      const web = browser();
      const request = await startedRequest(site, web);
      const response = await site.idp.respond({ request, user, overrides });
      return { web, request, response };
    };

    await t.step("an unsigned assertion is refused: signature", async () => {
      const { web, request, response } = await forged({ sign: "none" });
      await refuseAtAcs(site, web, response, request.relayState, {
        status: 403,
        reason: "signature",
      });
    });

    await t.step("a response signed by another key is refused: signature", async () => {
      const { web, request, response } = await forged({ key: await makeSigningKey("impostor") });
      await refuseAtAcs(site, web, response, request.relayState, {
        status: 403,
        reason: "signature",
      });
    });

    await t.step(
      "a response signed around an unsigned assertion is refused: signature",
      async () => {
        const { web, request, response } = await forged({ sign: "response" });
        await refuseAtAcs(site, web, response, request.relayState, {
          status: 403,
          reason: "signature",
        });
      },
    );

    for (
      const variant of ["evil-first", "signed-inside-evil", "extensions-same-id"] as WrapVariant[]
    ) {
      await t.step(
        `a wrapped signature (${variant}) never signs in the wrapped admin`,
        async () => {
          const web = browser();
          const request = await startedRequest(site, web);
          const response = await site.idp.respondWrapped({ request, user: BOB }, ADA, variant);
          await refuseAtAcs(site, web, response, request.relayState, {
            status: 403,
            reason: "signature",
          });
        },
      );
    }

    await t.step("a response for another audience is refused: audience", async () => {
      const { web, request, response } = await forged({
        audience: `${site.inst.url}/auth/saml/metadata?tenant=other`,
      });
      await refuseAtAcs(site, web, response, request.relayState, {
        status: 403,
        reason: "audience",
      });
    });

    await t.step("a response whose Recipient is another site is refused: recipient", async () => {
      const { web, request, response } = await forged({ recipient: "http://127.0.0.1:9/acs" });
      await refuseAtAcs(site, web, response, request.relayState, {
        status: 403,
        reason: "recipient",
      });
    });

    await t.step("a response addressed to another consumer is refused: destination", async () => {
      const { web, request, response } = await forged({ destination: "http://127.0.0.1:9/acs" });
      await refuseAtAcs(site, web, response, request.relayState, {
        status: 403,
        reason: "destination",
      });
    });

    await t.step("an assertion that expired ten minutes ago is refused: expired", async () => {
      const now = Date.now();
      const { web, request, response } = await forged({
        notBefore: new Date(now - 20 * 60_000),
        notOnOrAfter: new Date(now - 10 * 60_000),
      });
      await refuseAtAcs(site, web, response, request.relayState, {
        status: 403,
        reason: "expired",
      });
    });

    await t.step(
      "the same SAMLResponse and RelayState posted twice is refused: replayed",
      async () => {
        const { web, request, response } = await forged({});
        const first = await postToAcs(site, web, response, request.relayState);
        assertEquals(first.status, 303, first.text);
        assertEquals(first.location?.pathname, "/auth/saml/finish");
        await refuseAtAcs(site, web, response, request.relayState, {
          status: 403,
          reason: "replayed",
        });
      },
    );

    await t.step(
      "an old response posted with a new sign-in's RelayState is refused: in_response_to",
      async () => {
        const old = await forged({});
        const web = browser();
        const fresh = await startedRequest(site, web);
        await refuseAtAcs(site, web, old.response, fresh.relayState, {
          status: 403,
          reason: "in_response_to",
        });
      },
    );

    await t.step("a response without InResponseTo is refused: unsolicited", async () => {
      const { web, request, response } = await forged({ inResponseTo: null });
      await refuseAtAcs(site, web, response, request.relayState, {
        status: 403,
        reason: "unsolicited",
      });
    });

    await t.step(
      "an assertion sent unasked, its unsigned Response made to answer this sign-in, is refused: unsolicited",
      async () => {
        // Someone holding a person's IdP-initiated assertion starts their own
        // sign-in and writes its request id on the unsigned Response only.
        const { web, request, response } = await forged({ inResponseTo: null });
        const xml = new TextDecoder().decode(
          Uint8Array.from(atob(response), (c) => c.charCodeAt(0)),
        );
        const root = xml.indexOf("<samlp:Response");
        assert(root >= 0, xml);
        const head = xml.slice(root, xml.indexOf(">", root));
        const withId = / InResponseTo="[^"]*"/.test(head)
          ? head.replace(/ InResponseTo="[^"]*"/, ` InResponseTo="${request.id}"`)
          : head.replace("<samlp:Response", `<samlp:Response InResponseTo="${request.id}"`);
        const tampered = xml.slice(0, root) + withId + xml.slice(root + head.length);
        assert(
          !tampered.slice(root + withId.length).includes(request.id),
          "only the Response says it",
        );
        const encoded = btoa(String.fromCharCode(...new TextEncoder().encode(tampered)));
        await refuseAtAcs(site, web, encoded, request.relayState, {
          status: 403,
          reason: "unsolicited",
        });
      },
    );

    await t.step(
      "an unsolicited response with a RelayState this server never issued is refused: unsolicited",
      async () => {
        const web = browser();
        const response = await site.idp.respond({
          request: null,
          sp: { entityId: site.spEntityId, acsUrl: site.acsUrl },
          user: ADA,
        });
        await refuseAtAcs(site, web, response, "a-relay-state-nobody-issued", {
          status: 403,
          reason: "unsolicited",
          tenant: null,
        });
      },
    );

    await t.step("an unsolicited response without RelayState is refused: unsolicited", async () => {
      const web = browser();
      const response = await site.idp.respond({
        request: null,
        sp: { entityId: site.spEntityId, acsUrl: site.acsUrl },
        user: ADA,
      });
      await refuseAtAcs(site, web, response, null, {
        status: 403,
        reason: "unsolicited",
        tenant: null,
      });
    });

    await t.step("an email outside the allowed domains is refused: email_domain", async () => {
      const web = browser();
      const { form } = await signInAtIdp(web, await beginSignIn(site, web), {
        username: EVE_OTHER.email,
        password: EVE_OTHER.password,
      });
      const was = await before(site);
      const res = await web.submit(form, {}, { headers: { origin: site.idp.url } });
      await assertRefused(site, web, res, was, { status: 403, reason: "email_domain" });
      const [entry] = await loginAudit(site, "login.failed");
      assertEquals(entry.details.email_domain, "other.example");
    });

    await t.step("a comment injected in the signed NameID is refused: assertion", async () => {
      const web = browser();
      const request = await startedRequest(site, web);
      const response = await site.idp.respondWithComment(
        { request, user: EVE_EVIL },
        "eve@acme.com",
      );
      await refuseAtAcs(site, web, response, request.relayState, {
        status: 403,
        reason: "assertion",
      });
    });

    await t.step(
      "a response accepted but finished in another browser is refused: state",
      async () => {
        // Login CSRF: the attacker's own sign-in, posted into the victim's browser.
        const attacker = browser();
        const request = await startedRequest(site, attacker);
        const response = await site.idp.respond({ request, user: BOB });
        const victim = browser();
        const accepted = await postToAcs(site, victim, response, request.relayState);
        assertEquals(accepted.status, 303, accepted.text);
        assertEquals(accepted.location?.pathname, "/auth/saml/finish");
        const was = await before(site);
        const res = await victim.request(accepted.location!);
        await assertRefused(site, victim, res, was, { status: 403, reason: "state" });
      },
    );

    await t.step("a post without SAMLResponse is refused with 400", async () => {
      const web = browser();
      const request = await startedRequest(site, web);
      await refuseAtAcs(site, web, null, request.relayState, { status: 400, reason: "assertion" });
    });

    await t.step(
      "a 256 KiB response of `<a` without any `>` is refused: assertion, /healthz answering beside it",
      async () => {
        // Before the shape pre-scan was a forward scan, this one post held the
        // event loop for about 16 s (a regex looked for `>` from every `<`).
        const web = browser();
        const request = await startedRequest(site, web);
        const hostile = btoa("<a".repeat(128 * 1024));
        const was = await before(site);
        const [res, health] = await Promise.all([
          postToAcs(site, web, hostile, request.relayState),
          fetch(`${site.inst.url}/healthz`),
        ]);
        assertEquals(health.status, 200);
        await health.body?.cancel();
        await assertRefused(site, web, res, was, { status: 403, reason: "assertion" });
      },
    );
  });
});
