import { assert, assertEquals, assertRejects } from "../assert.ts";
import { DEFAULT_KV_PATH, kvLocation, openKv, whileLocked } from "../../lib/store/kv.ts";

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

Deno.test("whileLocked() tries again only while SQLite says the database is locked", async () => {
  let calls = 0;
  const locked = () => {
    calls++;
    return Promise.reject(new Error("database is locked"));
  };
  await assertRejects(() => whileLocked(locked), Error, "database is locked");
  assertEquals(calls, 50, "gives up after 50 attempts");
  calls = 0;
  await assertRejects(
    () =>
      whileLocked(() => {
        calls++;
        return Promise.reject(new Error("disk I/O error"));
      }),
    Error,
    "disk I/O",
  );
  assertEquals(calls, 1, "any other failure is thrown at once");
});

Deno.test("processes starting together on one new store file all open it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-kv-open-" });
  try {
    const kvModule = new URL("../../lib/store/kv.ts", import.meta.url).href;
    const script = `${dir}/child.ts`;
    await Deno.writeTextFile(
      script,
      `import { openKv } from ${JSON.stringify(kvModule)};
const kv = await openKv(Deno.args[0]);
await kv.atomic().set(["child", Deno.args[1]], true).commit();
kv.close();`,
    );
    const children = Array.from({ length: 4 }, (_, i) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--unstable-kv", script, `${dir}/kv.sqlite3`, String(i)],
        stdout: "null",
        stderr: "piped",
      }).output());
    for (const out of await Promise.all(children)) {
      assert(out.success, new TextDecoder().decode(out.stderr));
    }
    const kv = await Deno.openKv(`${dir}/kv.sqlite3`);
    const seen = await Array.fromAsync(kv.list({ prefix: ["child"] }));
    kv.close();
    assertEquals(seen.length, 4);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
