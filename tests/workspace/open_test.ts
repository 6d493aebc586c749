import fc from "fast-check";
import { assert, assertEquals, assertRejects } from "../assert.ts";
import { formatProblem, NotFoundError, ProblemsError } from "../../lib/errors.ts";
import { workspaceFingerprint } from "../../lib/workspace/fingerprint.ts";
import { lintWorkspace } from "../../lib/workspace/lint.ts";
import { openWorkspace } from "../../lib/workspace/open.ts";
import { initWorkspace } from "../../lib/workspace/init.ts";
import { EXAMPLE_DIR, exampleCopy, exampleFiles, VARIABLE } from "../fixtures/workspace/build.ts";

Deno.test("openWorkspace() resolves from memory: files are not read again", async () => {
  const dir = await exampleCopy();
  const ws = await openWorkspace(dir);
  const fingerprint = ws.sourceFingerprint();
  await Deno.remove(dir, { recursive: true });
  const r = await ws.resolveVariable(VARIABLE, { notification: { kind: "security_alert" } });
  assertEquals(r.value_key, "immediate-security");
  assertEquals(ws.sourceFingerprint(), fingerprint);
});

Deno.test("openWorkspace() lists variables and counts", async () => {
  const ws = await openWorkspace(EXAMPLE_DIR);
  assertEquals(ws.variables(), [VARIABLE]);
  assertEquals(ws.counts(), { variables: 1, catalogs: 1, entries: 3, qualifiers: 5 });
  assertEquals(ws.lint(), []);
});

Deno.test("openWorkspace() rejects an unknown variable with variable_not_found", async () => {
  const ws = await openWorkspace(EXAMPLE_DIR);
  const e = await assertRejects(() => ws.resolveVariable("nope", {}), NotFoundError, '"nope"');
  assertEquals(e.code, "variable_not_found");
});

Deno.test("openWorkspace() throws workspace_not_found for a missing directory", async () => {
  const e = await assertRejects(() => openWorkspace("/nonexistent/cfgtool/ws"), NotFoundError);
  assertEquals(e.code, "workspace_not_found");
});

Deno.test("openWorkspace() throws ProblemsError with every blocking problem", async () => {
  const dir = await exampleCopy({
    "variables/notification-delivery-policy.toml": "schema_version = 2\n",
    "NOTES.txt": "x",
  });
  const e = await assertRejects(() => openWorkspace(dir), ProblemsError);
  assertEquals(e.problems.map((p) => p.path), [
    "NOTES.txt",
    "variables/notification-delivery-policy.toml",
    "variables/notification-delivery-policy.toml",
    "variables/notification-delivery-policy.toml",
  ]);
});

Deno.test("openWorkspace() opens despite a missing or stale context contract and reports it", async () => {
  for (const contract of [null, "{}\n"]) {
    const dir = await exampleCopy({ "schemas/context.schema.json": contract });
    const ws = await openWorkspace(dir);
    assertEquals(ws.lint().map((p) => p.path), ["schemas/context.schema.json"]);
    assertEquals((await ws.resolveVariable(VARIABLE, {})).value_key, "default");
  }
});

Deno.test("openWorkspace() resolves a rule whose qualifier uses after, and types its attribute string", async () => {
  const policy = (await exampleFiles())[`variables/${VARIABLE}.toml`]!;
  const dir = await exampleCopy({
    "qualifiers/new-accounts.toml": `schema_version = 1
description = "Accounts created in 2026 or later."

[[predicate]]
attribute = "account.created_at"
op = "after"
value = "2025-12-31T23:59:59Z"
`,
    [`variables/${VARIABLE}.toml`]: policy +
      `\n[[resolve.rule]]\nqualifier = "new-accounts"\nvalue = "immediate-incident"\n`,
  });
  try {
    await initWorkspace(dir, { context: true });
    const ws = await openWorkspace(dir);
    assertEquals(ws.lint(), []);
    const contract = JSON.parse(await Deno.readTextFile(`${dir}/schemas/context.schema.json`));
    assertEquals(contract.properties.account.properties.created_at, { type: "string" });
    const key = async (created_at: unknown) =>
      (await ws.resolveVariable(VARIABLE, { account: { plan: "standard", created_at } })).value_key;
    assertEquals(await key("2026-01-01T00:00:00Z"), "immediate-incident");
    assertEquals(await key("2026-01-01"), "immediate-incident"); // midnight UTC
    assertEquals(await key("2026-01-01T00:59:59+01:00"), "default"); // 23:59:59Z: not after
    assertEquals(await key("2025-12-31T23:59:59.001Z"), "immediate-incident");
    assertEquals(await key("2025-12-31"), "default");
    assertEquals(await key("2026-01-01T00:00:00"), "default"); // no zone: does not hold
    assertEquals(await key(1767225600000), "default");
    assertEquals(await key(undefined), "default");
    // rule order still decides: a security alert is immediate-security whenever the account was made
    assertEquals(
      (await ws.resolveVariable(VARIABLE, {
        notification: { kind: "security_alert" },
        account: { created_at: "2026-06-01T00:00:00Z" },
      })).value_key,
      "immediate-security",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const contextArb = fc.record({
  account: fc.option(fc.record({ plan: fc.constantFrom("enterprise", "standard", "free") }), {
    nil: undefined,
  }),
  incident: fc.option(fc.record({ active: fc.oneof(fc.boolean(), fc.constant("true")) }), {
    nil: undefined,
  }),
  notification: fc.option(
    fc.record({ kind: fc.constantFrom("security_alert", "incident_update", "marketing") }),
    { nil: undefined },
  ),
}, { requiredKeys: [] });

Deno.test("resolution is deterministic across opened workspaces and repeated calls", async () => {
  const a = await openWorkspace(EXAMPLE_DIR);
  const b = await openWorkspace(await exampleCopy());
  assertEquals(a.sourceFingerprint(), b.sourceFingerprint());
  await fc.assert(
    fc.asyncProperty(contextArb, async (raw) => {
      const ctx = JSON.parse(JSON.stringify(raw));
      const r1 = await a.resolveVariable(VARIABLE, ctx);
      const r2 = await a.resolveVariable(VARIABLE, ctx);
      const r3 = await b.resolveVariable(VARIABLE, structuredClone(ctx));
      assertEquals(r1, r2);
      assertEquals(r1, r3);
      assert(["default", "immediate-security", "immediate-incident"].includes(r1.value_key));
    }),
    { numRuns: 300 },
  );
});

// The schema verdict cache (OpenOptions.verdictCache).

const ENTRY = "catalogs/notification-delivery-policy-entries/default.toml";
const SCHEMA = "schemas/notification-delivery-policy.schema.json";
/** Violates the example's schema: digest without digest_interval_hours, an unknown channel. */
const BAD_ENTRY = 'delivery = "digest"\nchannels = ["fax"]\n' +
  'respect_quiet_hours = true\nfallback_channel = "email"\n';

/** The problem lines lint gives for `dir` (Ajv, no cache). */
async function lintLines(dir: string): Promise<string[]> {
  return (await lintWorkspace(dir)).problems.map(formatProblem);
}

/** The problem lines opening `dir` with `cache` gives; [] when it opens. */
async function openLines(dir: string, cache: string): Promise<string[]> {
  try {
    await openWorkspace(dir, { verdictCache: cache });
    return [];
  } catch (err) {
    if (err instanceof ProblemsError) return err.problems.map(formatProblem);
    throw err;
  }
}

/** The only record file in `cache`. */
function recordFile(cache: string): string {
  const names = [...Deno.readDirSync(cache)].map((e) => e.name);
  assertEquals(names.length, 1, `records: ${names}`);
  return `${cache}/${names[0]}`;
}

/** The record file name of a workspace state. */
async function recordFor(dir: string, cache: string): Promise<string> {
  return `${cache}/${(await workspaceFingerprint(dir)).slice("sha256:".length)}.json`;
}

Deno.test("openWorkspace() with a verdict cache records a clean workspace, then answers from it", async () => {
  const cache = await Deno.makeTempDir();
  const dir = await exampleCopy();
  const first = await openWorkspace(dir, { verdictCache: cache });
  const file = recordFile(cache);
  assertEquals(file, await recordFor(dir, cache));
  // A record that vouches for more than this state needs is used as it is:
  // had Ajv run again, it would have been rewritten without the extra schema.
  const doc = JSON.parse(await Deno.readTextFile(file));
  doc.schemas.push({ text: '{"type":"string"}', entries: ['s"x"'] });
  await Deno.writeTextFile(file, JSON.stringify(doc));
  const second = await openWorkspace(dir, { verdictCache: cache });
  assertEquals(JSON.parse(await Deno.readTextFile(file)).schemas.length, 2);
  const ctx = { notification: { kind: "security_alert" } };
  assertEquals(
    await second.resolveVariable(VARIABLE, ctx),
    await first.resolveVariable(VARIABLE, ctx),
  );
  assertEquals(second.sourceFingerprint(), first.sourceFingerprint());
});

Deno.test("openWorkspace() never records a workspace with blocking problems", async () => {
  const cache = await Deno.makeTempDir();
  const dir = await exampleCopy({ [ENTRY]: BAD_ENTRY });
  await assertRejects(() => openWorkspace(dir, { verdictCache: cache }), ProblemsError);
  assertEquals([...Deno.readDirSync(cache)], []);
});

Deno.test("a schema-violating entry never opens, with a cache from before the edit", async () => {
  const cache = await Deno.makeTempDir();
  const dir = await exampleCopy();
  await openWorkspace(dir, { verdictCache: cache });
  await Deno.writeTextFile(`${dir}/${ENTRY}`, BAD_ENTRY);
  const expected = await lintLines(dir);
  assertEquals(expected, [
    `${ENTRY}: digest_interval_hours: required field is missing`,
    `${ENTRY}: channels[0]: must be one of "email", "in_app", "slack"`,
  ]);
  assertEquals(await openLines(dir, cache), expected);
});

Deno.test("a schema-violating entry never opens, with the clean state's record planted under its name", async () => {
  const cache = await Deno.makeTempDir();
  const clean = await exampleCopy();
  await openWorkspace(clean, { verdictCache: cache });
  const cleanRecord = await Deno.readTextFile(recordFile(cache));
  const bad = await exampleCopy({ [ENTRY]: BAD_ENTRY });
  await Deno.writeTextFile(await recordFor(bad, cache), cleanRecord);
  assertEquals(await openLines(bad, cache), await lintLines(bad));
});

Deno.test("a schema made stricter is checked again, whatever the cache holds", async () => {
  const cache = await Deno.makeTempDir();
  const clean = await exampleCopy();
  await openWorkspace(clean, { verdictCache: cache });
  const cleanRecord = await Deno.readTextFile(recordFile(cache));
  const schema = await Deno.readTextFile(`${clean}/${SCHEMA}`);
  const stricter = await exampleCopy({
    [SCHEMA]: schema.replace('"minimum": 1', '"minimum": 48'),
  });
  await Deno.writeTextFile(await recordFor(stricter, cache), cleanRecord);
  const expected = await lintLines(stricter);
  assertEquals(expected, [`${ENTRY}: digest_interval_hours: must be >= 48`]);
  assertEquals(await openLines(stricter, cache), expected);
});

Deno.test("a corrupt, truncated, foreign or stale record never lets a bad entry open", async () => {
  const cache = await Deno.makeTempDir();
  const clean = await exampleCopy();
  await openWorkspace(clean, { verdictCache: cache });
  const cleanRecord = await Deno.readTextFile(recordFile(cache));
  const doc = JSON.parse(cleanRecord);
  const bad = await exampleCopy({ [ENTRY]: BAD_ENTRY });
  const expected = await lintLines(bad);
  const plant = await recordFor(bad, cache);
  const tampered = [
    "",
    "not json",
    cleanRecord.slice(0, cleanRecord.length - 7),
    cleanRecord.replaceAll("immediate", "digest"),
    JSON.stringify({ ...doc, checker: "cfgtool-schema-check/0 ajv@1" }),
    JSON.stringify({
      ...doc,
      schemas: doc.schemas.map((s: { text: string }) => ({ ...s, entries: [] })),
    }),
    JSON.stringify({ ...doc, schemas: [] }),
    new TextDecoder().decode(crypto.getRandomValues(new Uint8Array(512))),
  ];
  for (const text of tampered) {
    await Deno.writeTextFile(plant, text);
    assertEquals(await openLines(bad, cache), expected, text.slice(0, 60));
  }
});

Deno.test("a corrupt record costs a check, not a wrong answer: the clean workspace opens and is recorded again", async () => {
  const cache = await Deno.makeTempDir();
  const dir = await exampleCopy();
  await openWorkspace(dir, { verdictCache: cache });
  const file = recordFile(cache);
  const good = await Deno.readTextFile(file);
  await Deno.writeTextFile(file, good.slice(0, 100));
  const ws = await openWorkspace(dir, { verdictCache: cache });
  assertEquals((await ws.resolveVariable(VARIABLE, {})).value_key, "default");
  assertEquals(await Deno.readTextFile(file), good);
});

/** Entries near the schema's edges: about half conform. */
const entryArb = fc.oneof(
  fc.record({
    delivery: fc.constantFrom("immediate", "digest", "later", 1),
    channels: fc.array(fc.constantFrom("email", "in_app", "slack", "fax"), { maxLength: 4 }),
    digest_interval_hours: fc.oneof(fc.integer({ min: -5, max: 200 }), fc.constant(2.5)),
    respect_quiet_hours: fc.oneof(fc.boolean(), fc.constant("yes")),
    fallback_channel: fc.constantFrom("email", "fax"),
    extra: fc.boolean(),
  }, { requiredKeys: [] }),
  fc.record({
    delivery: fc.constant("immediate"),
    channels: fc.uniqueArray(fc.constantFrom("email", "in_app", "slack"), { minLength: 1 }),
    respect_quiet_hours: fc.boolean(),
    fallback_channel: fc.constantFrom("email", "in_app", "slack"),
  }),
);

function entryToml(e: Record<string, unknown>): string {
  return Object.entries(e).map(([k, v]) => `${k} = ${JSON.stringify(v)}\n`).join("");
}

Deno.test("with the clean state's record planted, any entry opens exactly when Ajv accepts it", async () => {
  const cache = await Deno.makeTempDir();
  await openWorkspace(await exampleCopy(), { verdictCache: cache });
  const cleanRecord = await Deno.readTextFile(recordFile(cache));
  const dir = await exampleCopy();
  const seen = { opened: 0, refused: 0 };
  await fc.assert(
    fc.asyncProperty(entryArb, async (entry) => {
      await Deno.writeTextFile(`${dir}/${ENTRY}`, entryToml(entry));
      const plant = await recordFor(dir, cache);
      await Deno.writeTextFile(plant, cleanRecord);
      const lines = await openLines(dir, cache);
      assertEquals(lines, await lintLines(dir));
      seen[lines.length === 0 ? "opened" : "refused"]++;
      await Deno.remove(plant).catch(() => {});
    }),
    { numRuns: 60 },
  );
  assert(seen.opened > 0 && seen.refused > 0, JSON.stringify(seen));
});
