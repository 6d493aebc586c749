/**
 * `cfgtool login --no-browser` end to end against a real server and a real
 * SAML identity provider (tests/e2e/saml_idp.ts): the CLI prints the code,
 * the person (a cookie-keeping web client) opens the URL, signs in at the
 * provider's login form, posts its response back to cfgtool, confirms the
 * code, and the CLI saves a session that `whoami` reports as a SAML sign-in.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../assert.ts";
import { runCli, startInstallation } from "./installation.ts";
import { signInAtIdp, startSamlIdp } from "./saml_idp.ts";
import { parseForms, WebClient } from "./web_client.ts";
import { spawnCli } from "./cli_live.ts";

Deno.test("cfgtool login --no-browser with a SAML tenant: IdP sign-in, code confirmed, whoami", async () => {
  const inst = await startInstallation();
  try {
    await using idp = await startSamlIdp({
      users: [{ email: "ada@acme.com", password: "ada-pw", groups: ["ops"] }],
    });
    const created = await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
    assertEquals(created.status, 201, JSON.stringify(created.body));
    const policy = await inst.api("PUT", "/api/v1/tenants/acme/login", inst.admin, {
      method: "saml",
      idp_metadata_url: idp.metadataUrl,
      allowed_email_domains: ["acme.com"],
      admin_groups: ["ops"],
    });
    assertEquals(policy.status, 200, JSON.stringify(policy.body));
    const env = {
      XDG_CONFIG_HOME: `${inst.dir}/config`,
      CFGTOOL_TOKEN: "",
      CFGTOOL_SERVER: "",
      BROWSER: "/nonexistent/browser",
    };

    const cli = spawnCli(["login", "--server", inst.url, "--tenant", "acme", "--no-browser"], env);
    const [, url] = await cli.waitFor(/\(or open (\S+) \)/);
    const [, code] = await cli.waitFor(/enter the code +([A-Z]{4}-[A-Z]{4})/);

    const web = new WebClient({ accept: "text/html" });
    // The device page sends a person without a session to sign in, then to the IdP.
    const toIdp = await web.follow(url!, { stopBefore: (u) => u.origin === idp.url });
    assert(toIdp.stopped, "the sign-in goes on at the identity provider");
    const { form } = await signInAtIdp(web, toIdp.url, {
      username: "ada@acme.com",
      password: "ada-pw",
    });
    assertEquals(form.action.pathname, "/auth/saml/acs");
    const accepted = await web.submit(form, {}, { headers: { origin: idp.url } });
    assertEquals(accepted.status, 303, accepted.text);
    const confirmPage = await web.follow(accepted);
    assert(!confirmPage.stopped);
    const page = confirmPage.response;
    assertEquals(page.status, 200, page.text);
    assertStringIncludes(page.text, code!);
    const confirm = parseForms(page.text, page.url).find((f) =>
      f.action.pathname === "/auth/cli/device/confirm"
    );
    assert(confirm, page.text);
    const done = await web.submit(confirm, { decision: "allow" }, {
      headers: { origin: inst.url },
    });
    assertEquals(done.status, 200, done.text);

    const r = await cli.done();
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stdout, "as ada@acme.com (tenant acme)");
    const who = await runCli(["whoami"], { env });
    assertEquals(who.code, 0, who.stderr);
    assertMatch(who.stdout, /^session: +ssn_\S+ \(cli, saml\)/m);
    assertMatch(who.stdout, /^tenants: +acme \(admin\)/m, "the ops group is acme's admin group");
  } finally {
    await inst.close();
  }
});
