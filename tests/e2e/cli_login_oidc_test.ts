/**
 * `cfgtool login --no-browser` end to end against a real server and a real
 * OpenID provider (npm `oidc-provider`): the CLI prints the code, the
 * person (a cookie-keeping web client) opens the URL, signs in at the
 * provider's own login and consent pages, confirms the code, and the CLI
 * saves a session that `whoami` reports as an OIDC sign-in.
 */
import { assert, assertEquals, assertMatch, assertStringIncludes } from "../assert.ts";
import { runCli, startInstallation } from "./installation.ts";
import { oidcTenant } from "./oidc_tenant.ts";
import { parseForms, signInAtProvider, WebClient } from "./web_client.ts";
import { spawnCli } from "./cli_live.ts";

Deno.test("cfgtool login --no-browser with an OIDC tenant: provider sign-in, code confirmed, whoami", async () => {
  const inst = await startInstallation();
  try {
    await using op = await oidcTenant(inst, [
      { sub: "ada", email: "ada@acme.com", groups: ["ops"], password: "ada-pw" },
    ], ["ops"]);
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
    // The device page sends a person without a session to sign in, then to the provider.
    const toProvider = await web.follow(url!, {
      stopBefore: (u) => u.origin === new URL(op.url).origin,
    });
    assert(toProvider.stopped, "the sign-in goes on at the provider");
    const back = await signInAtProvider(web, toProvider.url, {
      login: "ada@acme.com",
      password: "ada-pw",
    });
    assertEquals(back.pathname, "/auth/oidc/callback");
    const confirmPage = await web.follow(back);
    assert(!confirmPage.stopped);
    const page = confirmPage.response;
    assertEquals(page.status, 200, page.text);
    assertStringIncludes(page.text, code!);
    const form = parseForms(page.text, page.url).find((f) =>
      f.action.pathname === "/auth/cli/device/confirm"
    );
    assert(form, page.text);
    const done = await web.submit(form, { decision: "allow" }, { headers: { origin: inst.url } });
    assertEquals(done.status, 200, done.text);

    const r = await cli.done();
    assertEquals(r.code, 0, r.stderr);
    assertStringIncludes(r.stdout, "as ada@acme.com (tenant acme)");
    const who = await runCli(["whoami"], { env });
    assertEquals(who.code, 0, who.stderr);
    assertMatch(who.stdout, /^session: +ssn_\S+ \(cli, oidc\)/m);
    assertMatch(who.stdout, /^tenants: +acme \(admin\)/m, "the ops group is acme's admin group");
  } finally {
    await inst.close();
  }
});
