/**
 * lib/relay/disk.ts: the closures a relay keeps, one file per namespace,
 * written atomically and verified again when read back; a file that does
 * not verify is refused (logged, never served), the others still load.
 */
import { assert, assertEquals } from "../assert.ts";
import { ClosureDisk } from "../../lib/relay/disk.ts";
import type { ClosureState } from "../../lib/client/closure_state.ts";
import { themeState } from "./theme_fixture.ts";

const state = (version: number, ns = "web", theme = "light"): Promise<ClosureState> =>
  themeState(version, { ns, theme });

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "cfgtool-relay-disk-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("saved and read back, verified, one private file per namespace", () =>
  withDir(async (dir) => {
    const disk = new ClosureDisk(dir);
    const web = await state(3);
    await disk.save("acme", web);
    await disk.save("acme", await state(1, "api"));
    const back = (await new ClosureDisk(dir).loadAll())
      .sort((a, b) => a.state.namespace < b.state.namespace ? -1 : 1);
    assertEquals(back.map((b) => `${b.tenant}/${b.state.namespace}@${b.state.version}`), [
      "acme/api@1",
      "acme/web@3",
    ]);
    assertEquals(back[1]!.state.hash, web.hash);
    assertEquals([...back[1]!.state.files.keys()].sort(), [...web.files.keys()].sort());
    const names = [...Deno.readDirSync(`${dir}/namespaces/acme`)].map((e) => e.name).sort();
    assertEquals(names, ["api.json", "web.json"], "no temporary file left behind");
    assertEquals((await Deno.stat(`${dir}/namespaces/acme/web.json`)).mode! & 0o077, 0);
  }));

Deno.test("writes of one namespace land in order: the last version wins", () =>
  withDir(async (dir) => {
    const disk = new ClosureDisk(dir);
    const states = await Promise.all([1, 2, 3, 4, 5].map((v) => state(v, "web", `t${v}`)));
    for (const s of states) void disk.save("acme", s);
    await disk.settled();
    const [back] = await disk.loadAll();
    assertEquals(back!.state.version, 5);
    await disk.remove("acme", "web");
    assertEquals(await disk.loadAll(), []);
  }));

Deno.test("a file that does not verify is refused on load; the others load", () =>
  withDir(async (dir) => {
    const warnings: string[] = [];
    const disk = new ClosureDisk(dir, (level, _msg, fields) => {
      if (level === "warn") warnings.push(String(fields?.path));
    });
    for (const ns of ["good", "edited", "cut", "hash", "renamed", "zero"]) {
      await disk.save("acme", await state(2, ns));
    }
    const path = (ns: string) => `${dir}/namespaces/acme/${ns}.json`;
    const read = async (ns: string) => JSON.parse(await Deno.readTextFile(path(ns)));
    // a file's bytes changed: the closure hash no longer matches
    const edited = await read("edited");
    const name = Object.keys(edited.files).find((p) => p.startsWith("flags/"))!;
    edited.files[name] = btoa('schema_version = 1\ndescription = "evil"\n');
    await Deno.writeTextFile(path("edited"), JSON.stringify(edited));
    // cut short (a torn write from something else than the relay)
    const cut = await Deno.readTextFile(path("cut"));
    await Deno.writeTextFile(path("cut"), cut.slice(0, cut.length / 2));
    // another hash announced
    const hash = await read("hash");
    hash.closure_hash = "sha256:" + "0".repeat(64);
    await Deno.writeTextFile(path("hash"), JSON.stringify(hash));
    // a file copied under another name
    await Deno.copyFile(path("good"), path("renamed"));
    // no valid version
    const zero = await read("zero");
    zero.version = 0;
    await Deno.writeTextFile(path("zero"), JSON.stringify(zero));
    // not a namespace file at all
    await Deno.writeTextFile(`${dir}/namespaces/acme/notes.txt`, "hello");
    await Deno.mkdir(`${dir}/namespaces/Not A Slug`);

    const loaded = await disk.loadAll();
    assertEquals(loaded.map((l) => l.state.namespace), ["good"]);
    assertEquals(
      warnings.map((p) => p.slice(p.lastIndexOf("/") + 1)).sort(),
      ["cut.json", "edited.json", "hash.json", "renamed.json", "zero.json"],
    );
  }));

Deno.test("a path that is not a slug is never written", () =>
  withDir(async (dir) => {
    const disk = new ClosureDisk(dir);
    let threw = false;
    try {
      await disk.save("../etc", await state(1));
    } catch {
      threw = true;
    }
    assert(threw);
    assertEquals([...Deno.readDirSync(dir)], []);
  }));
