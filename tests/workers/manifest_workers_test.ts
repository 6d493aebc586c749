import { assert, assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { CfgtoolError, ProblemsError } from "../../lib/errors.ts";
import { manifestFromJson } from "../../lib/flags/files.ts";
import { packArchive, unpackArchive } from "../../lib/closure/archive.ts";
import { closureHash } from "../../lib/closure/hash.ts";
import { sha256Hex } from "../../lib/bytes.ts";
import { checkFiles, loadFiles, MAX_REPORTED_PROBLEMS } from "../../lib/workers/manifest_work.ts";
import {
  IN_PLACE_ARCHIVE_BYTES,
  IN_PLACE_BYTES,
  IN_PLACE_FILES,
  ManifestWorkers,
} from "../../lib/workers/manifest_workers.ts";

const enc = new TextEncoder();
const NS = "schema_version = 1\n[namespace.environments.production]\npublic_evaluate = true\n";
const flag = (i: number) =>
  `schema_version = 1\ntype = "boolean"\ndefault = "off"\n[variations]\non = true\noff = false\n# ${i}\n`;

function manifest(count: number, extra: Record<string, string> = {}) {
  const files = new Map([["namespace.toml", enc.encode(NS)]]);
  for (let i = 0; i < count; i++) files.set(`flags/f${i}.toml`, enc.encode(flag(i)));
  for (const [path, text] of Object.entries(extra)) files.set(path, enc.encode(text));
  return files;
}

/** Runs `f` with a fresh pool that is closed afterwards. */
async function withWorkers<T>(f: (w: ManifestWorkers) => Promise<T>, size?: number): Promise<T> {
  const workers = new ManifestWorkers(size === undefined ? {} : { size });
  try {
    return await f(workers);
  } finally {
    workers.close();
  }
}

/** Counts timer ticks while `f` runs: work done in place would allow none. */
async function ticksDuring<T>(f: () => Promise<T>): Promise<[T, number]> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    return [await f(), ticks];
  } finally {
    clearInterval(timer);
  }
}

function errorOf(f: () => unknown): CfgtoolError {
  try {
    f();
  } catch (e) {
    return e as CfgtoolError;
  }
  throw new Error("did not throw");
}

Deno.test("a large valid manifest checked in a worker gives its environments and no problems", async () => {
  await withWorkers(async (workers) => {
    const files = manifest(IN_PLACE_FILES * 4);
    const off = await workers.check(files);
    assertEquals(off.problems, []);
    assertEquals(off.environments, { production: { public_evaluate: true } });
    assertEquals(off, checkFiles(files), "the same outcome as in place");
  });
});

Deno.test("a large stored version is loaded in a worker into the same model as in place", async () => {
  await withWorkers(async (workers) => {
    const files = manifest(IN_PLACE_FILES * 20, { "segments/beta.toml": seg("beta") });
    const [{ manifest: m, warnings }, ticks] = await ticksDuring(() => workers.load(files));
    assertEquals(warnings, []);
    assertEquals(Object.keys(m.flags).length, IN_PLACE_FILES * 20);
    assertEquals(m, loadFiles(files).manifest);
    assertEquals(Object.keys(m.flags), Object.keys(loadFiles(files).manifest!.flags), "key order");
    assert(ticks > 0, "timers ran while the model arrived");
  });
});

Deno.test("a large invalid manifest checked in a worker reports exactly what in-place validation does", async () => {
  await withWorkers(async (workers) => {
    const files = manifest(IN_PLACE_FILES * 4, {
      "flags/broken.toml": 'schema_version = 1\ntype = "boolean"\ndefault = "of',
      "flags/bad-default.toml": flag(0).replace('default = "off"', 'default = "maybe"'),
      "notes.txt": "x",
    });
    const off = await workers.check(files);
    assertEquals(off, checkFiles(files));
    assertEquals(off.problems.map((p) => p.path), [
      "flags/bad-default.toml",
      "flags/broken.toml",
      "notes.txt",
    ]);
    assertEquals(off.environments, {});
  });
});

Deno.test("a small manifest is checked in place with the same outcome, and starts no worker", async () => {
  await withWorkers(async (workers) => {
    const files = manifest(3, { "flags/x.toml": "schema_version = 2\n" });
    const [check, ticks] = await ticksDuring(() => workers.check(files));
    assertEquals(check, checkFiles(files));
    assertEquals(ticks, 0, "done in place, within one turn of the event loop");
  });
});

const seg = (attr: string) =>
  `schema_version = 1\n[[predicate]]\nattribute = "${attr}"\nop = "eq"\nvalue = true\n`;

/** A large manifest an earlier release accepted: a JS-only pattern and a 40-deep segment chain. */
function olderRelease() {
  const extra: Record<string, string> = {
    "segments/js.toml":
      'schema_version = 1\n[[predicate]]\nattribute = "name"\nop = "matches"\nvalue = \'^\\u0041\'\n',
  };
  for (let i = 0; i < 40; i++) {
    extra[`segments/s${i}.toml`] = seg(i === 39 ? "beta" : `segment.s${i + 1}`);
  }
  return manifest(IN_PLACE_FILES * 2, extra);
}

Deno.test("a stored check in a worker passes the option through and gives what in-place gives", async () => {
  await withWorkers(async (workers) => {
    const files = olderRelease();
    const off = await workers.check(files, { stored: true });
    assertEquals(off.problems, []);
    assertEquals(off.warnings.map((w) => w.path), ["segments/js.toml"]);
    assertEquals(off, checkFiles(files, { stored: true }));
    // without the option the worker is strict
    const strict = await workers.check(files);
    assertEquals(strict.problems.map((p) => p.path), ["segments/js.toml", "segments/s0.toml"]);
    assertEquals(strict, checkFiles(files));
  });
});

Deno.test("load() gives the model and warnings of an older release's manifest, and refuses one that cannot compile", async () => {
  await withWorkers(async (workers) => {
    const files = olderRelease();
    const { manifest: m, warnings } = await workers.load(files);
    assertEquals(Object.keys(m.segments).length, 41);
    assertEquals(warnings.length, 1);
    files.set("flags/f3.toml", enc.encode("schema_version = 1\ntype = 3\n"));
    const err = await assertRejects(() => workers.load(files), ProblemsError);
    assertEquals(err.problems.every((p) => p.path === "flags/f3.toml"), true);
  });
});

/**
 * Runs `f` with a pool of `size` workers while counting the workers
 * started: `f` gets the pool and a function that reads the count.
 */
async function countingStarts(
  size: number,
  f: (workers: ManifestWorkers, started: () => number) => Promise<void>,
): Promise<void> {
  const Original = globalThis.Worker;
  let started = 0;
  globalThis.Worker = class extends Original {
    constructor(url: string | URL, options?: WorkerOptions) {
      super(url, options);
      started++;
    }
  };
  try {
    await withWorkers((workers) => f(workers, () => started), size);
  } finally {
    globalThis.Worker = Original;
  }
}

Deno.test("a burst of large checks shares the pool's workers: no more start than its size, and they are reused", async () => {
  await countingStarts(2, async (workers, started) => {
    const files = manifest(IN_PLACE_FILES * 2);
    const checks = await Promise.all(Array.from({ length: 6 }, () => workers.check(files)));
    assertEquals(checks.every((c) => c.problems.length === 0), true);
    await workers.check(files);
    assertEquals(started(), 2);
  });
});

Deno.test("start() starts the workers ahead of the first request", async () => {
  await countingStarts(3, async (workers, started) => {
    workers.start();
    assertEquals(started(), 3);
    assertEquals((await workers.check(manifest(IN_PLACE_FILES * 2))).problems, []);
    assertEquals(started(), 3);
  });
});

Deno.test("a few files of large content are validated in a worker too, with the same outcome", async () => {
  await withWorkers(async (workers) => {
    const big = `schema_version = 1\ntype = "string"\ndefault = "a"\n[variations]\na = "${
      "x".repeat(300 * 1024)
    }"\n`;
    const files = manifest(1, { "flags/big.toml": big });
    const [check, ticks] = await ticksDuring(() => workers.check(files));
    assertEquals(check, checkFiles(files));
    assert(ticks > 0, `${ticks} ticks`);
  });
});

Deno.test("a large JSON upload is decoded, validated and digested in a worker, with the same files, message and hashes", async () => {
  await withWorkers(async (workers) => {
    const texts: Record<string, string> = { "namespace.toml": NS };
    for (let i = 0; i < 3000; i++) texts[`flags/f${i}.toml`] = flag(i);
    const body = enc.encode(JSON.stringify({ files: texts, message: "big push" }));
    assert(body.length > IN_PLACE_BYTES);
    const [up, ticks] = await ticksDuring(() => workers.upload(body, "json"));
    assert(ticks > 0, "timers ran while it was decoded");
    const decoded = manifestFromJson(body);
    assertEquals(up.files, decoded.files);
    assertEquals(up.message, "big push");
    assertEquals(up.problems, []);
    assertEquals(up.environments, { production: { public_evaluate: true } });
    assertEquals(up.closureHash, await closureHash(decoded.files));
    const f2999 = decoded.files.get("flags/f2999.toml")!;
    assertEquals(up.blobIds.get("flags/f2999.toml"), await sha256Hex(f2999));
    assertEquals(up.blobIds.size, decoded.files.size);
  });
});

Deno.test("a small JSON body of many files is decoded in place and validated in a worker", async () => {
  await withWorkers(async (workers) => {
    const texts: Record<string, string> = { "namespace.toml": NS };
    for (let i = 0; i < IN_PLACE_FILES * 3; i++) texts[`flags/f${i}.toml`] = flag(i);
    texts["flags/f7.toml"] = "schema_version = 1\ntype = 3\n";
    const body = enc.encode(JSON.stringify({ files: texts }));
    assert(body.length <= IN_PLACE_BYTES);
    const up = await workers.upload(body, "json");
    assertEquals(up.problems, checkFiles(manifestFromJson(body).files).problems);
    assert(up.problems.length > 0 && up.problems.every((p) => p.path === "flags/f7.toml"));
    assertEquals(up.closureHash, await closureHash(manifestFromJson(body).files));
  });
});

Deno.test("a large JSON body of the wrong shape is refused with the same 400 as a small one", async () => {
  await withWorkers(async (workers) => {
    const pad = "x".repeat(IN_PLACE_BYTES);
    for (
      const [body, message] of [
        [{ files: { "flags/a.toml": 5 }, pad }, 'files["flags/a.toml"] must be a string'],
        [{ files: [], pad }, "files must be an object of path → text"],
        [{ files: {}, message: 7, pad }, "message must be a string"],
      ] as const
    ) {
      const bytes = enc.encode(JSON.stringify(body));
      const err = await assertRejects(() => workers.upload(bytes, "json"), CfgtoolError);
      const inPlace = errorOf(() => manifestFromJson(bytes));
      assertEquals([err.code, err.status, err.message], [inPlace.code, 400, message]);
    }
    const notJson = await assertRejects(
      () => workers.upload(enc.encode(`{"files": ${pad}`), "json"),
      CfgtoolError,
    );
    assertStringIncludes(notJson.message, "request body is not valid JSON");
  });
});

Deno.test("a large archive upload is unpacked in a worker into the files an in-place unpack gives", async () => {
  await withWorkers(async (workers) => {
    const files = manifest(IN_PLACE_FILES * 10);
    for (const [path, bytes] of files) {
      const noise = crypto.getRandomValues(new Uint8Array(16)).join(",");
      files.set(path, new Uint8Array([...bytes, ...enc.encode(`# ${noise}\n`)]));
    }
    const archive = await packArchive(files);
    assert(archive.length > IN_PLACE_ARCHIVE_BYTES);
    const up = await workers.upload(archive, "archive");
    assertEquals(up.files, await unpackArchive(archive));
    assertEquals(up.problems, []);
    assertEquals(up.message, undefined);
    assertEquals(up.closureHash, await closureHash(files));
  });
});

Deno.test("an archive over the entry limit is refused from the worker with 413 payload_too_large", async () => {
  await withWorkers(async (workers) => {
    const files = new Map<string, Uint8Array>();
    for (let i = 0; i <= 10_000; i++) files.set(`flags/f${i}.toml`, new Uint8Array());
    const archive = await packArchive(files);
    const err = await assertRejects(() => workers.upload(archive, "archive"), CfgtoolError);
    assertEquals([err.code, err.status], ["payload_too_large", 413]);
  });
});

Deno.test("an archive packed in a worker is byte for byte the one packed in place", async () => {
  await withWorkers(async (workers) => {
    const files = manifest(IN_PLACE_FILES * 4);
    assertEquals(await workers.archive(files), await packArchive(files));
    const small = manifest(2);
    assertEquals(await workers.archive(small), await packArchive(small));
  });
});

Deno.test("close() lets running work finish, then refuses new work", async () => {
  const workers = new ManifestWorkers({ size: 1 });
  const files = manifest(IN_PLACE_FILES * 4);
  const running = workers.check(files);
  const waiting = workers.check(files);
  workers.close();
  assertEquals((await running).problems, []);
  assertEquals((await waiting).problems, []);
  const err = await assertRejects(() => workers.check(files), Error);
  assertStringIncludes(err.message, "closed");
  assertEquals((await workers.check(manifest(2))).problems, [], "small work still runs in place");
});

Deno.test("an upload of thousands of broken files reports the first 1,000 problems and counts them all", async () => {
  await withWorkers(async (workers) => {
    const texts: Record<string, string> = { "namespace.toml": NS };
    for (let i = 0; i < 3000; i++) texts[`flags/f${i}.toml`] = "schema_version = 1\ntype = 3\n";
    const up = await workers.upload(enc.encode(JSON.stringify({ files: texts })), "json");
    const all = checkFiles(manifestFromJson(enc.encode(JSON.stringify({ files: texts }))).files);
    assertEquals(up.problems.length, MAX_REPORTED_PROBLEMS);
    assert(up.problemCount >= 3000, `${up.problemCount} problems counted`);
    assertEquals(up.problemCount, all.problemCount);
    assertEquals(up.problems, all.problems, "the same first problems, in order");
  });
});
