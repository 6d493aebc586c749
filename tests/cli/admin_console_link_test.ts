/**
 * `cfgtool admin console-link` through the real CLI, on the KV file of a
 * running `cfgtool serve`: the printed link opens the console as the
 * operator (every tenant), once.
 */
import { assertEquals, assertStringIncludes } from "../assert.ts";
import { runCli, startInstallation } from "../e2e/installation.ts";

Deno.test("admin console-link prints a one-time link that opens the console as operator", async () => {
  const inst = await startInstallation();
  try {
    const made = await inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" });
    assertEquals(made.status, 201);
    const r = await runCli([
      "admin",
      "console-link",
      "--kv",
      inst.kvPath,
      "--user",
      "ops@example.com",
      "--url",
      inst.url,
    ]);
    assertEquals(r.code, 0, r.stderr);
    const link = new URL(r.stdout.trim().split("\n").at(-1)!);
    assertEquals(link.origin + link.pathname, `${inst.url}/auth/operator`);
    assertStringIncludes(r.stdout, "ops@example.com");
    const post = () =>
      fetch(`${inst.url}/auth/operator`, {
        method: "POST",
        redirect: "manual",
        headers: { origin: inst.url },
        body: new URLSearchParams({ code: link.searchParams.get("code")! }),
      });
    const opened = await post();
    assertEquals(opened.status, 303);
    const cookie = opened.headers.get("set-cookie")!.split(";")[0]!;
    const home = await fetch(`${inst.url}/ui`, { headers: { cookie } });
    assertEquals(home.status, 200);
    assertStringIncludes(await home.text(), 'href="/ui/t/acme"');
    const again = await post();
    assertEquals(again.status, 403);
    await again.body?.cancel();

    const bad = await runCli([
      "admin",
      "console-link",
      "--kv",
      inst.kvPath,
      "--user",
      "x@y.z",
      "--url",
      "ftp://x",
    ]);
    assertEquals(bad.code, 2);
    assertStringIncludes(bad.stderr, "--url must be an origin");
  } finally {
    await inst.close();
  }
});
