/**
 * Server time and size of the web console's pages for a namespace of 500
 * flags, in process (no network): the app of `cfgtool serve` on a
 * `:memory:` KV, a person signed in with a browser session (tenant admin),
 * and each page requested sequentially. The yardstick, measured in the
 * same run, is `GET /healthz` through the same app (the request pipeline
 * alone). Sizes are the raw HTML and its gzip size (what crosses the wire:
 * `Deno.serve` compresses text responses for clients that accept it).
 *
 * The namespace also holds a segment whose `in` list has 10,000 user ids
 * (`user-000001`…): its edit form, and the preview of that form posted
 * with one id more (the body a browser sends: CRLF line ends), are
 * measured with the namespace's segment list; the same preview in a
 * namespace holding only that segment shows what the segment itself costs
 * (the preview of any edit also validates and compares the whole
 * manifest, which grows with the namespace).
 *
 * ```sh
 * deno run -A bench/console_pages.ts [--flags 500] [--requests 200]
 * ```
 *
 * @module
 */
import { createApp } from "../lib/server/app.ts";
import { randomTokenKey } from "../lib/auth/hmac_key.ts";
import { bootstrapSuperadmin } from "../lib/auth/bootstrap.ts";
import { signIn } from "../lib/login/sign_in.ts";
import { csrfToken } from "../lib/http/auth/session_cookie.ts";
import { Runtime } from "../lib/runtime/runtime.ts";
import { DEFAULT_SETTINGS } from "../lib/settings.ts";
import { realisticNamespaceFiles } from "./fixtures/realistic_namespace.ts";
import { editSegment } from "../lib/flags/authoring/mod.ts";
import { readPredicateRows } from "../lib/console/authoring/predicate_rows.tsx";
import { lineDiff } from "../lib/console/diff_view.tsx";
import { checkFiles, compareFiles } from "../lib/workers/manifest_work.ts";

const args = new Map<string, string>();
for (let i = 0; i < Deno.args.length; i += 2) args.set(Deno.args[i]!, Deno.args[i + 1] ?? "");
const FLAGS = Number(args.get("--flags") ?? 500);
const REQUESTS = Number(args.get("--requests") ?? 200);
const ORIGIN = "http://127.0.0.1:8080";

const kv = await Deno.openKv(":memory:");
const key = await randomTokenKey();
const runtime = new Runtime({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS });
const app = createApp({ kv, key, log: () => {}, settings: DEFAULT_SETTINGS, runtime });
const boot = await bootstrapSuperadmin(kv, key);
const admin = { authorization: `Bearer ${boot.secret}`, "content-type": "application/json" };
const api = async (method: string, path: string, body?: unknown) => {
  const res = await app.request(`${ORIGIN}${path}`, {
    method,
    headers: admin,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return await res.json();
};
await api("POST", "/api/v1/tenants", { slug: "bench" });
await api("POST", "/api/v1/tenants/bench/namespaces", { slug: "web" });
const files: Record<string, string> = {};
for (const [path, bytes] of realisticNamespaceFiles(FLAGS)) {
  files[path] = new TextDecoder().decode(bytes);
}
const IDS = Array.from({ length: 10_000 }, (_, i) => `user-${String(i + 1).padStart(6, "0")}`);
files["segments/allow-list.toml"] = 'schema_version = 1\ndescription = "Early access"\n\n' +
  '[[predicate]]\nattribute = "user.id"\nop = "in"\n' +
  `value = [\n${IDS.map((id) => `  "${id}",\n`).join("")}]\n`;
let head = (await api("PUT", "/api/v1/tenants/bench/namespaces/web/manifest", {
  files,
  message: "first",
})).version as number;
for (let v = 0; v < 5; v++) { // a short history: each version changes one flag
  const path = `flags/flag-${String(v * 37).padStart(3, "0")}.toml`;
  files[path] = files[path]!.replace(/description = "[^"]*"/, `description = "changed in ${v}"`);
  head = (await api("PUT", "/api/v1/tenants/bench/namespaces/web/manifest", {
    files,
    message: `v${v}`,
  })).version as number;
}
for (let i = 0; i < 20; i++) {
  await api("POST", "/api/v1/tokens", {
    type: "namespace-read",
    name: `reader-${i}`,
    tenant_slug: "bench",
    namespace_slug: "web",
  });
}
// The same segment alone in a namespace of its own.
await api("POST", "/api/v1/tenants/bench/namespaces", { slug: "one" });
const alone = (await api("PUT", "/api/v1/tenants/bench/namespaces/one/manifest", {
  files: {
    "namespace.toml": files["namespace.toml"]!,
    "segments/allow-list.toml": files["segments/allow-list.toml"]!,
  },
  message: "first",
})).version as number;
const made = await signIn(
  { kv, key },
  {
    tenant: "bench",
    email: "ana@bench.test",
    method: "email",
    assurance: ["email-link"],
    groups: [],
  },
  "browser",
  { requestId: "bench" },
);
await api("POST", "/api/v1/tenants/bench/admins", { user_id: made.session.user_id });
const cookie = `cfgtool_session=${made.secret}`;
const csrf = await csrfToken(key, made.session.id);

interface Case {
  name: string;
  path: string;
  form?: Record<string, string>;
  /** A text the page must hold (a preview rather than a refusal). */
  expect?: string;
}
const CASES: Case[] = [
  { name: "GET /healthz (yardstick)", path: "/healthz" },
  { name: `flags of an environment (${FLAGS} flags)`, path: "/ui/t/bench/ns/web/env/production" },
  { name: "flags, searched", path: "/ui/t/bench/ns/web/env/production?q=flag-1" },
  { name: "one flag", path: "/ui/t/bench/ns/web/flags/flag-010?env=production" },
  { name: "namespaces of a tenant", path: "/ui/t/bench" },
  { name: "versions", path: "/ui/t/bench/ns/web/versions" },
  { name: "diff of two versions", path: "/ui/t/bench/ns/web/diff?from=1&to=6" },
  {
    name: `playground (${FLAGS} flags evaluated)`,
    path: "/ui/t/bench/ns/web/env/production/playground",
    form: { context: JSON.stringify({ targeting_key: "u1", user: { country: "DE" } }) },
  },
  { name: "tokens", path: "/ui/t/bench/tokens" },
  { name: "people", path: "/ui/t/bench/people" },
  { name: "audit log", path: "/ui/t/bench/audit" },
  { name: `segments (${FLAGS} flags)`, path: "/ui/t/bench/ns/web/segments" },
  {
    name: "segment edit form (10,000 values)",
    path: "/ui/t/bench/ns/web/edit/segments/allow-list",
  },
  segmentPreview("segment edit preview (10,000 values, one added)", "web", head),
  segmentPreview("the same, the segment alone in its namespace", "one", alone),
];

/** The preview of the 10,000-id segment's form posted with one id more. */
function segmentPreview(name: string, ns: string, base: number): Case {
  return {
    name,
    path: `/ui/t/bench/ns/${ns}/edit/segments/allow-list`,
    form: {
      base: String(base),
      description: "Early access",
      match: "all",
      "predicates.0.attribute": "user.id",
      "predicates.0.op": "in",
      "predicates.0.value": [...IDS.slice(0, 5000), "user-new", ...IDS.slice(5000)].join("\r\n"),
      "predicates.1.attribute": "",
      "predicates.1.op": "",
      "predicates.1.value": "",
      message: "One more",
      step: "preview",
    },
    expect: "What this edit does",
  };
}

async function once(c: Case): Promise<{ ms: number; status: number; body: Uint8Array }> {
  const headers: Record<string, string> = { cookie };
  let body: URLSearchParams | undefined;
  if (c.form) {
    body = new URLSearchParams({ _csrf: csrf, ...c.form });
    headers.origin = ORIGIN;
  }
  const t0 = performance.now();
  const res = await app.request(`${ORIGIN}${c.path}`, {
    method: c.form ? "POST" : "GET",
    headers,
    ...(body ? { body } : {}),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { ms: performance.now() - t0, status: res.status, body: bytes };
}

async function gzipSize(bytes: Uint8Array): Promise<number> {
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return (await new Response(stream).arrayBuffer()).byteLength;
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

const rows: string[] = [];
let yardstick = 0;
for (const c of CASES) {
  const first = await once(c);
  if (c.expect !== undefined && !new TextDecoder().decode(first.body).includes(c.expect)) {
    throw new Error(`${c.name}: ${first.status} without "${c.expect}"`);
  }
  for (let i = 0; i < 20; i++) await once(c); // warm-up
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) times.push((await once(c)).ms);
  const p50 = quantile(times, 0.5);
  if (c.path === "/healthz") yardstick = p50;
  const kb = (n: number) => (n / 1024).toFixed(1);
  rows.push(
    `| ${c.name} | ${first.status} | ${p50.toFixed(2)} | ${quantile(times, 0.95).toFixed(2)} | ` +
      `${(p50 / yardstick).toFixed(0)}× | ${kb(first.body.length)} | ${
        kb(await gzipSize(first.body))
      } |`,
  );
}
console.log(`\n${FLAGS} flags, ${REQUESTS} sequential requests per page, in process\n`);
console.log("| page | status | p50 ms | p95 ms | p50 / healthz | KiB raw | KiB gzip |");
console.log("|---|---|---|---|---|---|---|");
for (const r of rows) console.log(r);

// Where a segment preview's time goes: the steps of the flow, alone, on the same data.
const encoder = new TextEncoder();
const posted = segmentPreview("", "web", head).form!;
const namespaces = {
  [`${FLAGS} flags`]: files,
  "the segment alone": {
    "namespace.toml": files["namespace.toml"]!,
    "segments/allow-list.toml": files["segments/allow-list.toml"]!,
  },
};
const steps: string[] = [];
for (const [label, texts] of Object.entries(namespaces)) {
  const before = new Map(Object.entries(texts).map(([p, t]) => [p, encoder.encode(t)]));
  const form = new Map(Object.entries(posted));
  const { predicates } = readPredicateRows(form);
  const edited = editSegment(new Map(Object.entries(texts)), {
    segment: "allow-list",
    description: "Early access",
    match: "all",
    predicates,
  });
  const after = new Map(before);
  const text = edited.get("segments/allow-list.toml")!;
  after.set("segments/allow-list.toml", encoder.encode(text));
  const time = (name: string, f: () => unknown) => {
    f();
    const ts: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      f();
      ts.push(performance.now() - t0);
    }
    steps.push(`| ${label} | ${name} | ${quantile(ts, 0.5).toFixed(2)} |`);
  };
  time("read the form's rows (readPredicateRows)", () => readPredicateRows(form));
  time(
    "the edit (editSegment)",
    () =>
      editSegment(new Map(Object.entries(texts)), {
        segment: "allow-list",
        description: "Early access",
        match: "all",
        predicates,
      }),
  );
  time("validate the manifest (checkFiles)", () => checkFiles(after, {}));
  time("compare the versions (compareFiles)", () => compareFiles(before, after, true));
  time(
    "line diff of the file (lineDiff)",
    () => lineDiff(texts["segments/allow-list.toml"]!, text),
  );
}
console.log("\nA segment preview's steps, alone (20 runs each, p50 ms)\n");
console.log("| namespace | step | p50 ms |");
console.log("|---|---|---|");
for (const r of steps) console.log(r);
runtime.close();
kv.close();
