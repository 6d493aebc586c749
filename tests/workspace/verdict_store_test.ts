import { assert, assertEquals } from "../assert.ts";
import {
  defaultVerdictDir,
  loadVerdictText,
  MAX_RECORDS,
  saveVerdictText,
} from "../../lib/workspace/verdict_store.ts";

const KEY = `sha256:${"ab".repeat(32)}`;

Deno.test("defaultVerdictDir() is under $XDG_CACHE_HOME, else ~/.cache", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assertEquals(
    defaultVerdictDir(env({ XDG_CACHE_HOME: "/tmp/xdg/", HOME: "/home/ana" })),
    "/tmp/xdg/cfgtool/schema-verdicts",
  );
  assertEquals(
    defaultVerdictDir(env({ HOME: "/home/ana" })),
    "/home/ana/.cache/cfgtool/schema-verdicts",
  );
  // a relative XDG_CACHE_HOME is ignored, as the XDG spec says
  assertEquals(
    defaultVerdictDir(env({ XDG_CACHE_HOME: "cache", HOME: "/home/ana" })),
    "/home/ana/.cache/cfgtool/schema-verdicts",
  );
  assertEquals(defaultVerdictDir(env({})), undefined);
});

Deno.test("a saved record loads back; an absent one is undefined", async () => {
  const dir = `${await Deno.makeTempDir()}/a/b`;
  assertEquals(await loadVerdictText(dir, KEY), undefined);
  await saveVerdictText(dir, KEY, "record");
  assertEquals(await loadVerdictText(dir, KEY), "record");
  assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), [`${"ab".repeat(32)}.json`]);
});

Deno.test("a key that is not a sha256 fingerprint names no file", async () => {
  const dir = await Deno.makeTempDir();
  for (const key of ["../x", "sha256:../../etc", "md5:00", ""]) {
    await saveVerdictText(dir, key, "x");
    assertEquals(await loadVerdictText(dir, key), undefined);
  }
  assertEquals([...Deno.readDirSync(dir)], []);
});

Deno.test("saving where nothing can be written fails quietly", async () => {
  const file = await Deno.makeTempFile();
  await saveVerdictText(`${file}/below-a-file`, KEY, "x");
  assertEquals(await loadVerdictText(`${file}/below-a-file`, KEY), undefined);
});

Deno.test("beyond MAX_RECORDS records the oldest are removed", async () => {
  const dir = await Deno.makeTempDir();
  const key = (i: number) => `sha256:${i.toString(16).padStart(64, "0")}`;
  for (let i = 0; i < MAX_RECORDS; i++) {
    await Deno.writeTextFile(`${dir}/${key(i).slice(7)}.json`, "old");
    await Deno.utime(`${dir}/${key(i).slice(7)}.json`, 1000 + i, 1000 + i);
  }
  await saveVerdictText(dir, key(MAX_RECORDS), "new");
  const names = [...Deno.readDirSync(dir)].map((e) => e.name);
  assertEquals(names.length, MAX_RECORDS);
  assert(!names.includes(`${key(0).slice(7)}.json`), "the oldest record was kept");
  assertEquals(await loadVerdictText(dir, key(MAX_RECORDS)), "new");
  assertEquals(await loadVerdictText(dir, key(1)), "old");
});
