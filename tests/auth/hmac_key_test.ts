import { assert, assertEquals, assertRejects } from "../assert.ts";
import { hmacHex } from "../../lib/auth/digest.ts";
import { KEY_FILE_NAME, loadTokenKey } from "../../lib/auth/hmac_key.ts";
import { UsageError } from "../../lib/errors.ts";

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
