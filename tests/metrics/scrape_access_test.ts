import { assertEquals, assertRejects } from "../assert.ts";
import { ForbiddenError, UnauthorizedError } from "../../lib/errors.ts";
import { isLoopback, ScrapeAccess } from "../../lib/metrics/scrape_access.ts";

const headers = (h: Record<string, string> = {}) => new Headers(h);

Deno.test("loopback addresses are 127.0.0.0/8 and ::1 in their spellings, nothing else", () => {
  for (const ip of ["127.0.0.1", "127.255.0.9", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1"]) {
    assertEquals(isLoopback(ip), true, ip);
  }
  for (
    const ip of ["192.0.2.7", "10.0.0.1", "::2", "::", "1::1", "::ffff:192.0.2.7", "128.0.0.1", ""]
  ) {
    assertEquals(isLoopback(ip), false, ip);
  }
});

Deno.test("without a token only direct loopback clients may scrape (403 otherwise)", async () => {
  const access = new ScrapeAccess();
  await access.check(null, headers(), "127.0.0.1");
  await access.check(null, headers(), "::1");
  await assertRejects(() => access.check(null, headers(), "192.0.2.7"), ForbiddenError, "loopback");
  await assertRejects(() => access.check(null, headers(), undefined), ForbiddenError);
  for (const h of ["forwarded", "x-forwarded-for", "x-real-ip"]) {
    await assertRejects(
      () => access.check(null, headers({ [h]: "198.51.100.4" }), "127.0.0.1"),
      ForbiddenError,
      "proxy",
    );
  }
});

Deno.test("with a token: the right one is accepted from anywhere, a wrong one nowhere", async () => {
  const access = new ScrapeAccess("s3cret-token");
  await access.check("s3cret-token", headers(), "192.0.2.7");
  await access.check("s3cret-token", headers(), undefined);
  await access.check("s3cret-token", headers({ "x-forwarded-for": "198.51.100.4" }), "127.0.0.1");
  for (const wrong of ["s3cret-tokeN", "s3cret", "s3cret-token-and-more"]) {
    await assertRejects(() => access.check(wrong, headers(), "192.0.2.7"), UnauthorizedError);
    await assertRejects(() => access.check(wrong, headers(), "127.0.0.1"), UnauthorizedError);
  }
});

Deno.test("with a token, refusals ask for it (401) and loopback still needs none", async () => {
  const access = new ScrapeAccess("t");
  await access.check(null, headers(), "127.0.0.1");
  await assertRejects(() => access.check(null, headers(), "192.0.2.7"), UnauthorizedError, "token");
  await assertRejects(
    () => access.check(null, headers({ forwarded: "for=198.51.100.4" }), "127.0.0.1"),
    UnauthorizedError,
    "proxy",
  );
});

Deno.test("a server without a token refuses every bearer credential", async () => {
  await assertRejects(
    () => new ScrapeAccess().check("x", headers(), "127.0.0.1"),
    UnauthorizedError,
  );
  assertEquals(new ScrapeAccess("").hasToken, false);
});
