/**
 * openKv() on a KV Connect URL that cannot be opened: a typed error saying
 * what to set. Only loopback URLs on a closed port are used.
 */
import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { openKv } from "../../lib/store/kv.ts";
import { KvOpenError } from "../../lib/errors.ts";

function closedPort(): number {
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Runs `fn` with DENO_KV_ACCESS_TOKEN set to `value` (or unset), then restores it. */
async function withAccessToken(value: string | undefined, fn: () => Promise<void>) {
  const before = Deno.env.get("DENO_KV_ACCESS_TOKEN");
  if (value === undefined) Deno.env.delete("DENO_KV_ACCESS_TOKEN");
  else Deno.env.set("DENO_KV_ACCESS_TOKEN", value);
  try {
    await fn();
  } finally {
    if (before === undefined) Deno.env.delete("DENO_KV_ACCESS_TOKEN");
    else Deno.env.set("DENO_KV_ACCESS_TOKEN", before);
  }
}

Deno.test("a KV Connect URL without DENO_KV_ACCESS_TOKEN says to set it, or to use a path", async () => {
  const url = `http://127.0.0.1:${closedPort()}`;
  await withAccessToken(undefined, async () => {
    const err = await assertRejects(() => openKv(url), KvOpenError);
    assertEquals(err.code, "kv_access_token_missing");
    assertStringIncludes(err.message, `Cannot open the KV Connect store ${url}`);
    assertStringIncludes(err.message, "DENO_KV_ACCESS_TOKEN is not set. Set it to");
    assertStringIncludes(err.message, "a file path");
    assert(!err.message.includes("console.deno.com"), err.message);
  });
});

Deno.test("a KV Connect URL on a closed port is kv_unavailable: connection refused", async () => {
  const url = `http://127.0.0.1:${closedPort()}`;
  await withAccessToken("test-access-token", async () => {
    const err = await assertRejects(() => openKv(url), KvOpenError);
    assertEquals(err.code, "kv_unavailable");
    assertEquals(err.details?.reason, "connection_refused");
    assertStringIncludes(
      err.message,
      `Cannot open the KV Connect store ${url}: connection refused`,
    );
    assertStringIncludes(err.message, "--kv / CFGTOOL_KV");
    assert(!err.message.includes("Could not open Deno KV database"), err.message);
    assert(!err.message.includes("test-access-token"), "the access token is never shown");
  });
});

Deno.test("credentials in a KV Connect URL are not repeated in the error", async () => {
  const port = closedPort();
  await withAccessToken(undefined, async () => {
    const err = await assertRejects(() => openKv(`http://user:pw@127.0.0.1:${port}`), KvOpenError);
    assert(!err.message.includes("pw@"), err.message);
    assertStringIncludes(err.message, `http://127.0.0.1:${port}`);
  });
});
