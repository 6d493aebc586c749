/**
 * FlagClient figures (docs/performance.md, "FlagClient").
 *
 * Local evaluation throughput through the client API:
 *   deno bench -A bench/client_bench.ts
 * The realistic namespace of bench/fixtures (50 flags, 20 segments) is
 * delivered as a verified snapshot by an in-memory fake of the service, then
 * `client.evaluate` / `client.evaluateAll` run against the engine's model,
 * next to the engine called directly as the baseline.
 *
 * Push-to-client latency against a real server process:
 *   deno run -A bench/client_bench.ts latency [pushes=50]
 * Each push (PUT …/manifest changing one flag) is timed from just before the
 * request to the client's onChange (end to end), and from the PUT's
 * response (after commit) to onChange.
 */
import { closureHash } from "../lib/closure/hash.ts";
import { packArchive } from "../lib/closure/archive.ts";
import { FlagClient } from "../lib/client/flag_client.ts";
import { compileManifest, evaluateFlag } from "../lib/flags/evaluate.ts";
import { parseManifest } from "../lib/flags/validate.ts";
import {
  FLAG_KEYS,
  makeContexts,
  realisticNamespaceFiles,
} from "./fixtures/realistic_namespace.ts";

const files = realisticNamespaceFiles();
const contexts = makeContexts(4096, 20240601);
const MASK = contexts.length - 1;

/** A fetch that serves one snapshot of `files` as version 1, then keeps the stream open. */
function fakeService(): typeof fetch {
  return async (input, init) => {
    const url = new URL(String(input));
    if (url.pathname === "/api/v1/events") {
      const hash = await closureHash(files);
      const data = JSON.stringify({
        protocol: "v2",
        namespace: "web",
        version: 1,
        prev_version: null,
        prev_closure_hash: null,
        closure_hash: hash,
        delivery: "snapshot",
        snapshot_url:
          "http://svc.test/api/v1/tenants/acme/namespaces/web/closure?version=1&subscription=Kg&token=t",
        snapshot_size_bytes: 0,
      });
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          c.enqueue(new TextEncoder().encode(`event: version\nid: web:1\ndata: ${data}\n\n`));
          init?.signal?.addEventListener(
            "abort",
            () => c.error(new DOMException("", "AbortError")),
          );
        },
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    }
    return new Response(await packArchive(files) as Uint8Array<ArrayBuffer>, {
      headers: { etag: `"v1-${await closureHash(files)}"` },
    });
  };
}

async function benchThroughput(): Promise<void> {
  const client = new FlagClient({
    server: "http://svc.test",
    token: "t",
    namespaces: ["web:*"],
    fetch: fakeService(),
  });
  await client.ready(10_000);
  await client.close(); // evaluation works on the last verified model after close
  const model = compileManifest(parseManifest(files), 1);
  let i = 0;
  let sink = 0;

  Deno.bench("engine evaluateFlag (baseline)", { group: "single", baseline: true }, () => {
    const r = evaluateFlag(model, "production", FLAG_KEYS[i % 50]!, contexts[i & MASK]!);
    i++;
    if (r.variation === null) sink++;
  });
  Deno.bench("client.evaluate, rotating over the 50 flags", { group: "single" }, () => {
    const r = client.evaluate("web", "production", FLAG_KEYS[i % 50]!, contexts[i & MASK]!);
    i++;
    if (r.variation === null) sink++;
  });
  Deno.bench("client.evaluateAll, 50 flags for one context", { group: "all" }, () => {
    const all = client.evaluateAll("web", "production", contexts[i++ & MASK]!);
    if (all["flag-00"] === undefined) sink++;
  });
  globalThis.addEventListener("unload", () => {
    if (sink === -1) console.log(sink);
  });
}

async function measureLatency(pushes: number): Promise<void> {
  const { startInstallation } = await import("../tests/e2e/installation.ts");
  const inst = await startInstallation();
  const must = async (p: ReturnType<typeof inst.api>) => {
    const r = await p;
    if (r.status >= 300) throw new Error(`${r.status} ${JSON.stringify(r.body)}`);
    return r;
  };
  try {
    await must(inst.api("POST", "/api/v1/tenants", inst.admin, { slug: "acme" }));
    await must(inst.api("POST", "/api/v1/tenants/acme/namespaces", inst.admin, { slug: "web" }));
    const token = (await must(inst.api("POST", "/api/v1/tokens", inst.admin, {
      type: "tenant-admin",
      name: "bench",
      tenant_slug: "acme",
    }))).body.secret as string;
    const dec = new TextDecoder();
    const manifest: Record<string, string> = {};
    for (const [p, b] of files) manifest[p] = dec.decode(b);
    const push = () =>
      must(inst.api("PUT", "/api/v1/tenants/acme/namespaces/web/manifest", inst.admin, {
        files: manifest,
      }));
    await push();
    const client = new FlagClient({ server: inst.url, token, namespaces: ["web:*"] });
    await client.ready(10_000);
    const endToEnd: number[] = [];
    const afterCommit: number[] = [];
    const deliveries = new Map<string, number>();
    for (let n = 0; n < pushes; n++) {
      const key = "flags/flag-00.toml";
      manifest[key] = manifest[key]!.replace(/^description = .*$/m, `description = "push ${n}"`);
      const changed = new Promise<string>((resolve) => {
        const off = client.onChange((c) => {
          off();
          resolve(c.delivery);
        });
      });
      const t0 = performance.now();
      await push();
      const t1 = performance.now();
      const delivery = await changed;
      const t2 = performance.now();
      endToEnd.push(t2 - t0);
      afterCommit.push(t2 - t1);
      deliveries.set(delivery, (deliveries.get(delivery) ?? 0) + 1);
    }
    await client.close();
    const q = (xs: number[], p: number) => {
      const s = [...xs].sort((a, b) => a - b);
      return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!.toFixed(1);
    };
    console.log(`pushes: ${pushes}, deliveries: ${JSON.stringify(Object.fromEntries(deliveries))}`);
    console.log(`| measure | p50 | p99 | max |`);
    for (
      const [name, xs] of [["PUT start → onChange", endToEnd], [
        "PUT response → onChange",
        afterCommit,
      ]] as const
    ) {
      console.log(`| ${name} | ${q(xs, 0.5)} ms | ${q(xs, 0.99)} ms | ${q(xs, 1)} ms |`);
    }
  } finally {
    await inst.close();
  }
}

if (import.meta.main && Deno.args[0] === "latency") {
  await measureLatency(Number(Deno.args[1] ?? 50));
} else {
  await benchThroughput();
}
