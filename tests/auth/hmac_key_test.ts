import { assert, assertEquals, assertRejects } from "../assert.ts";
import { hmacHex } from "../../lib/auth/digest.ts";
import { KEY_FILE_NAME, loadTokenKey, openTokenKey } from "../../lib/auth/hmac_key.ts";
import { CfgtoolError, UsageError } from "../../lib/errors.ts";

Deno.test("loadTokenKey() creates a 32-byte key file with mode 0600 beside the KV data, then reuses it", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kv = `${dir}/data/kv.sqlite3`;
    const first = await loadTokenKey({ kv });
    assertEquals([first.path, first.created], [`${dir}/data/${KEY_FILE_NAME}`, true]);
    const info = await Deno.stat(first.path!);
    assertEquals(info.size, 32);
    if (Deno.build.os !== "windows") assertEquals(info.mode! & 0o777, 0o600);
    const second = await loadTokenKey({ kv });
    assertEquals(second.created, false);
    assertEquals(await hmacHex(first.key, "x"), await hmacHex(second.key, "x"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("loadTokenKey() reads --token-key-file; :memory: without one gets an in-process key; remote KV needs one", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/key`;
    await Deno.writeFile(file, new Uint8Array(32).fill(3));
    const a = await loadTokenKey({ kv: ":memory:", keyFile: file });
    const b = await loadTokenKey({ kv: "https://kv.example.com", keyFile: file });
    assertEquals(await hmacHex(a.key, "x"), await hmacHex(b.key, "x"));
    const mem = await loadTokenKey({ kv: ":memory:" });
    assertEquals(mem.path, null);
    await assertRejects(() => loadTokenKey({ kv: "https://kv.example.com" }), UsageError);
    await Deno.writeFile(file, new Uint8Array(8));
    await assertRejects(() => loadTokenKey({ kv: ":memory:", keyFile: file }), UsageError);
    assert(true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openTokenKey() refuses to replace a lost key file of a store that has digests", async () => {
  const dir = await Deno.makeTempDir();
  const spec = `${dir}/kv.sqlite3`;
  const kv = await Deno.openKv(spec);
  try {
    const first = await openTokenKey(kv, { kv: spec });
    assertEquals(first.created, true);
    const again = await openTokenKey(kv, { kv: spec });
    assertEquals(again.created, false);
    await Deno.remove(`${dir}/token.key`);
    const err = await assertRejects(() => openTokenKey(kv, { kv: spec }), CfgtoolError);
    assertEquals(err.code, "token_key_missing");
    let exists = true;
    await Deno.stat(`${dir}/token.key`).catch(() => (exists = false));
    assertEquals(exists, false, "no new key file was created");
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("openTokenKey() refuses a key that is not the one the store was used with", async () => {
  const dir = await Deno.makeTempDir();
  const spec = `${dir}/kv.sqlite3`;
  const kv = await Deno.openKv(spec);
  try {
    await openTokenKey(kv, { kv: spec });
    await Deno.writeFile(`${dir}/other.key`, crypto.getRandomValues(new Uint8Array(32)));
    const err = await assertRejects(
      () => openTokenKey(kv, { kv: spec, keyFile: `${dir}/other.key` }),
      CfgtoolError,
    );
    assertEquals(err.code, "token_key_mismatch");
    const missing = await assertRejects(
      () => openTokenKey(kv, { kv: spec, keyFile: `${dir}/nope.key` }),
      CfgtoolError,
      "token key file",
    );
    assertEquals(missing.status, 400);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
});
