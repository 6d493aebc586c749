/**
 * Signing in with SAML in real Chromium, as in production: the identity
 * provider (tests/e2e/saml_idp.ts) is on `localhost` and cfgtool on
 * `127.0.0.1`, two sites, so the provider's form post to cfgtool's
 * consumer service is cross-site and carries no SameSite=Lax cookie. The
 * sign-in must still finish: the consumer service checks the response and
 * redirects to `/auth/saml/finish`, a top-level navigation that carries the
 * browser's flow cookie. Skipped (saying why) where no Chromium binary
 * exists.
 */
import { assert, assertEquals, assertStringIncludes } from "../assert.ts";
import { startInstallation } from "../e2e/installation.ts";
import { startSamlIdp } from "../e2e/saml_idp.ts";
import { chromiumPath, launchChromium } from "./chromium.ts";

const path = chromiumPath();
Deno.test({
  name:
    "a person signs in through a SAML identity provider on another site in Chromium, and reads /api/v1/me",
  ignore: path === null,
  async fn() {
    const inst = await startInstallation();
    try {
      await using idp = await startSamlIdp({
        users: [{ email: "ada@acme.com", password: "ada-pw", groups: ["eng"] }],
        host: "localhost",
      });
      assertEquals(new URL(idp.url).hostname, "localhost");
      assertEquals(new URL(inst.url).hostname, "127.0.0.1");
      const created = await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
      assertEquals(created.status, 201, JSON.stringify(created.body));
      const policy = await inst.api("PUT", "/api/v1/tenants/acme/login", inst.admin, {
        method: "saml",
        idp_metadata_xml: idp.metadata,
        allowed_email_domains: ["acme.com"],
      });
      assertEquals(policy.status, 200, JSON.stringify(policy.body));

      await using browser = await launchChromium(path!);
      const page = await browser.newPage();
      // The cookies Chromium sends to cfgtool's consumer service and finishing step.
      const sent = new Map<string, Promise<string>>();
      page.on("request", (req) => {
        const p = new URL(req.url()).pathname;
        if (p === "/auth/saml/acs" || p === "/auth/saml/finish") {
          sent.set(`${req.method()} ${p}`, req.allHeaders().then((h) => h["cookie"] ?? ""));
        }
      });

      await page.goto(`${inst.url}/auth/login`);
      await page.getByLabel("Tenant").fill("acme");
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL((u) => u.origin === idp.url);
      await page.getByLabel("Username").fill("ada@acme.com");
      await page.getByLabel("Password").fill("ada-pw");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL(`${inst.url}/auth/signed-in`);
      assertStringIncludes(await page.textContent("main") ?? "", "ada@acme.com");

      // The cross-site post came without the flow cookie; the redirect after it brought it.
      const acs = await sent.get("POST /auth/saml/acs");
      const finish = await sent.get("GET /auth/saml/finish");
      assert(acs !== undefined && finish !== undefined, JSON.stringify([...sent.keys()]));
      assert(!acs.includes("cfgtool_saml="), `the cross-site post carried ${acs}`);
      assert(finish.includes("cfgtool_saml="), `the finishing step carried ${finish}`);

      const cookies = await page.context().cookies(inst.url);
      const session = cookies.find((c) => c.name === "cfgtool_session");
      assert(session !== undefined, JSON.stringify(cookies.map((c) => c.name)));
      assertEquals([session.httpOnly, session.sameSite], [true, "Lax"]);

      const me = await page.goto(`${inst.url}/api/v1/me`);
      const body = await me!.json();
      assertEquals(body.principal.user.email, "ada@acme.com");
      assertEquals(body.principal.session.login_method, "saml");
      assertEquals(body.principal.tenants, [{ slug: "acme", role: "member" }]);
    } finally {
      await inst.close();
    }
  },
});
