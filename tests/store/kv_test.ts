import { assertEquals } from "../assert.ts";
import { DEFAULT_KV_PATH, kvLocation, openKv } from "../../lib/store/kv.ts";

Deno.test("openKv() creates the parent directory of a path", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const kv = await openKv(`${dir}/nested/data/kv.sqlite3`);
    await kv.set(["x"], 1);
    kv.close();
    assertEquals((await Deno.stat(`${dir}/nested/data`)).isDirectory, true);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("kvLocation() tells memory, remote URLs and files apart", () => {
  assertEquals(kvLocation(":memory:"), { kind: "memory" });
  assertEquals(kvLocation("https://kv.example.com/db"), {
    kind: "remote",
    url: "https://kv.example.com/db",
  });
  assertEquals(kvLocation(DEFAULT_KV_PATH), {
    kind: "file",
    path: DEFAULT_KV_PATH,
    dir: "./cfgtool-data",
  });
});
