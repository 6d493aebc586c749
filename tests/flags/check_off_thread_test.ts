import { assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { ProblemsError, UsageError } from "../../lib/errors.ts";
import { manifestFromJson } from "../../lib/flags/files.ts";
import {
  checkInPlace,
  checkManifest,
  decodeJsonManifest,
  IN_PLACE_BYTES,
  IN_PLACE_FILES,
  loadInPlace,
  loadStoredManifest,
  MAX_WORKERS,
} from "../../lib/flags/check_off_thread.ts";

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

Deno.test("a large valid manifest checked in a worker gives its environments and no problems", async () => {
  const files = manifest(IN_PLACE_FILES * 4);
  const off = await checkManifest(files);
  assertEquals(off.problems, []);
  assertEquals(off.environments, { production: { public_evaluate: true } });
  assertEquals(off, checkInPlace(files), "the same outcome as in place");
});

Deno.test("a large stored version is loaded in a worker into the same model as in place", async () => {
  const files = manifest(IN_PLACE_FILES * 4);
  const { manifest: m, warnings } = await loadStoredManifest(files);
  assertEquals(warnings, []);
  assertEquals(Object.keys(m.flags).length, IN_PLACE_FILES * 4);
  assertEquals(m, loadInPlace(files).manifest);
});

Deno.test("a large invalid manifest checked in a worker reports exactly what in-place validation does", async () => {
  const files = manifest(IN_PLACE_FILES * 4, {
    "flags/broken.toml": 'schema_version = 1\ntype = "boolean"\ndefault = "of',
    "flags/bad-default.toml": flag(0).replace('default = "off"', 'default = "maybe"'),
    "notes.txt": "x",
  });
  const off = await checkManifest(files);
  assertEquals(off, checkInPlace(files));
  assertEquals(off.problems.map((p) => p.path), [
    "flags/bad-default.toml",
    "flags/broken.toml",
    "notes.txt",
  ]);
  assertEquals(off.environments, {});
});

Deno.test("a small manifest is checked in place with the same outcome", async () => {
  const files = manifest(3, { "flags/x.toml": "schema_version = 2\n" });
  assertEquals(await checkManifest(files), checkInPlace(files));
});

/** A large manifest an earlier release accepted: a JS-only pattern and a 40-deep segment chain. */
function olderRelease() {
  const seg = (body: string) => `schema_version = 1\n[[predicate]]\n${body}`;
  const extra: Record<string, string> = {
    "segments/js.toml": seg('attribute = "name"\nop = "matches"\nvalue = \'^\\u0041\'\n'),
  };
  for (let i = 0; i < 40; i++) {
    extra[`segments/s${i}.toml`] = i === 39
      ? seg('attribute = "beta"\nop = "eq"\nvalue = true\n')
      : seg(`attribute = "segment.s${i + 1}"\nop = "eq"\nvalue = true\n`);
  }
  return manifest(IN_PLACE_FILES * 2, extra);
}

Deno.test("a stored check in a worker passes the option through and gives what in-place gives", async () => {
  const files = olderRelease();
  const off = await checkManifest(files, { stored: true });
  assertEquals(off.problems, []);
  assertEquals(off.warnings.map((w) => w.path), ["segments/js.toml"]);
  assertEquals(off, checkInPlace(files, { stored: true }));
  // without the option the worker is strict
  const strict = await checkManifest(files);
  assertEquals(strict.problems.map((p) => p.path), ["segments/js.toml", "segments/s0.toml"]);
  assertEquals(strict, checkInPlace(files));
});

Deno.test("loadStoredManifest() gives the model and warnings of an older release's manifest", async () => {
  const files = olderRelease();
  const { manifest: m, warnings } = await loadStoredManifest(files);
  assertEquals(Object.keys(m.segments).length, 41);
  assertEquals(warnings.length, 1);
  files.set("flags/f3.toml", enc.encode("schema_version = 1\ntype = 3\n"));
  const err = await assertRejects(() => loadStoredManifest(files), ProblemsError);
  assertEquals(err.problems.every((p) => p.path === "flags/f3.toml"), true);
});

Deno.test("a large manifest is validated off the event loop: timers keep firing meanwhile", async () => {
  const files = manifest(IN_PLACE_FILES * 8);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    const check = await checkManifest(files);
    assertEquals(check.problems, []);
  } finally {
    clearInterval(timer);
  }
  // validated in place, the call would run to its end without a single tick
  assertEquals(ticks > 0, true, `${ticks} ticks`);
});

Deno.test("a burst of large checks runs at most MAX_WORKERS workers at once", async () => {
  const Original = globalThis.Worker;
  let alive = 0;
  let most = 0;
  globalThis.Worker = class extends Original {
    constructor(url: string | URL, options?: WorkerOptions) {
      super(url, options);
      most = Math.max(most, ++alive);
    }
    override terminate() {
      alive--;
      super.terminate();
    }
  };
  try {
    const files = manifest(IN_PLACE_FILES * 2);
    const checks = await Promise.all(Array.from({ length: 6 }, () => checkManifest(files)));
    assertEquals(checks.every((c) => c.problems.length === 0), true);
    assertEquals(most, MAX_WORKERS);
  } finally {
    globalThis.Worker = Original;
  }
});

Deno.test("a few files of large content are validated in a worker too, with the same outcome", async () => {
  const big = `schema_version = 1\ntype = "string"\ndefault = "a"\n[variations]\na = "${
    "x".repeat(300 * 1024)
  }"\n`;
  const files = manifest(1, { "flags/big.toml": big });
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    assertEquals(await checkManifest(files), checkInPlace(files));
  } finally {
    clearInterval(timer);
  }
  assertEquals(ticks > 0, true, `${ticks} ticks`);
});

Deno.test("a large JSON manifest body is decoded in a worker into the same files and message", async () => {
  const texts: Record<string, string> = {};
  for (let i = 0; i < 3000; i++) texts[`flags/f${i}.toml`] = flag(i);
  const body = enc.encode(JSON.stringify({ files: texts, message: "big push" }));
  assertEquals(body.length > IN_PLACE_BYTES, true);
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  let decoded;
  try {
    decoded = await decodeJsonManifest(body);
  } finally {
    clearInterval(timer);
  }
  assertEquals(ticks > 0, true, "timers ran while it was decoded");
  assertEquals(decoded, manifestFromJson(body));
  assertEquals(decoded.message, "big push");
  assertEquals(new TextDecoder().decode(decoded.files.get("flags/f2999.toml")), flag(2999));
});

Deno.test("a large JSON body of the wrong shape is refused with the same 400 as a small one", async () => {
  const pad = "x".repeat(IN_PLACE_BYTES);
  for (
    const [body, message] of [
      [{ files: { "flags/a.toml": 5 }, pad }, 'files["flags/a.toml"] must be a string'],
      [{ files: [], pad }, "files must be an object of path → text"],
      [{ files: {}, message: 7, pad }, "message must be a string"],
    ] as const
  ) {
    const bytes = enc.encode(JSON.stringify(body));
    const err = await assertRejects(() => decodeJsonManifest(bytes), UsageError);
    assertEquals([err.message, err.status], [message, 400]);
    assertEquals(
      err.message,
      (() => {
        try {
          manifestFromJson(bytes);
        } catch (e) {
          return (e as Error).message;
        }
      })(),
    );
  }
  const notJson = await assertRejects(
    () => decodeJsonManifest(enc.encode(`{"files": ${pad}`)),
    UsageError,
  );
  assertStringIncludes(notJson.message, "request body is not valid JSON");
});
