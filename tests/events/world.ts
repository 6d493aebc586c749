/**
 * Test helper: the service-level world, on the auth-level one
 * (tests/auth/world.ts): an in-process flag service (createServer over a
 * `:memory:` KV) with a superadmin, tenant `acme` and namespace `web`, plus
 * request, push, mint and stream helpers. Requests go straight to the fetch
 * handler.
 *
 * @module
 */
import { createServer, type FlagServer } from "../../server.ts";
import type { ServiceSettings } from "../../lib/settings.ts";
import { authWorld } from "../auth/world.ts";
import { LocalClosures, readSse, type SseClient } from "./sse_client.ts";

/** Origin of in-process requests. */
export const ORIGIN = "http://cfg.test";

/** A JSON response. */
export interface Res {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
  bytes: Uint8Array;
}

/** The in-process world. */
export interface World {
  kv: Deno.Kv;
  key: CryptoKey;
  server: FlagServer;
  admin: string;
  request(
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<Res>;
  push(files: Record<string, string>, ns?: string, tenant?: string): Promise<number>;
  mint(body: Record<string, unknown>): Promise<string>;
  stream(query: string, token: string | null, headers?: Record<string, string>): Promise<SseClient>;
  local(): LocalClosures;
  close(): Promise<void>;
}

let names = 0;

/** Builds a world; `namespaces` are created in tenant acme (default `web`). */
export async function world(
  settings: Partial<ServiceSettings> = {},
  namespaces: string[] = ["web"],
): Promise<World> {
  const { kv, key, boot } = await authWorld({ namespaces });
  const server = createServer({
    kv,
    key,
    log: () => {},
    settings: { headPollMs: 20, ...settings },
  });
  const streams: SseClient[] = [];
  const fetchFn = (req: Request) => Promise.resolve(server.fetch(req));
  const w: World = {
    kv,
    key,
    server,
    admin: boot.secret,
    async request(method, path, token, body, headers = {}) {
      const h = new Headers(headers);
      if (token !== null) h.set("authorization", `Bearer ${token}`);
      let payload: string | undefined;
      if (body !== undefined) {
        payload = JSON.stringify(body);
        h.set("content-type", "application/json");
      }
      const res = await fetchFn(
        new Request(`${ORIGIN}${path}`, { method, headers: h, body: payload ?? null }),
      );
      const bytes = new Uint8Array(await res.arrayBuffer());
      let parsed: unknown = null;
      if ((res.headers.get("content-type") ?? "").includes("json") && bytes.length > 0) {
        parsed = JSON.parse(new TextDecoder().decode(bytes));
      }
      return { status: res.status, headers: res.headers, body: parsed, bytes };
    },
    async push(files, ns = "web", tenant = "acme") {
      const res = await w.request(
        "PUT",
        `/api/v1/tenants/${tenant}/namespaces/${ns}/manifest`,
        w.admin,
        {
          files,
        },
      );
      if (res.status !== 201 && res.status !== 200) {
        throw new Error(`push ${res.status} ${JSON.stringify(res.body)}`);
      }
      return res.body.version;
    },
    async mint(body) {
      const res = await w.request("POST", "/api/v1/tokens", w.admin, {
        name: `t-${++names}`,
        ...body,
      });
      if (res.status !== 201) throw new Error(`mint ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.secret;
    },
    async stream(query, token, headers = {}) {
      const ac = new AbortController();
      const h = new Headers(headers);
      if (token !== null) h.set("authorization", `Bearer ${token}`);
      const res = await fetchFn(
        new Request(`${ORIGIN}/api/v1/events?${query}`, { headers: h, signal: ac.signal }),
      );
      const client = readSse(res, ac);
      streams.push(client);
      return client;
    },
    local() {
      return new LocalClosures((url) => fetchFn(new Request(url)));
    },
    async close() {
      for (const s of streams) s.close();
      await server.close();
      await Promise.all(streams.map((s) => s.ended));
      kv.close();
    },
  };
  return w;
}

/** `namespace.toml` text. */
export const NS_TOML = `schema_version = 1
[namespace]
description = "web"
[namespace.environments.production]
public_evaluate = false
`;

/**
 * A boolean flag file; `segments` are named by rules in order.
 *
 * @param description makes the bytes differ
 * @param segments segments the rules name
 * @returns TOML text
 */
export function flagToml(description: string, segments: string[] = []): string {
  let text = `schema_version = 1
description = "${description}"
type = "boolean"
default = "off"
[variations]
on = true
off = false
`;
  for (const s of segments) text += `[[rule]]\nsegment = "${s}"\nvariation = "on"\n`;
  return text;
}

/**
 * A segment file; `refs` are other segments it references.
 *
 * @param description makes the bytes differ
 * @param refs referenced segments
 * @returns TOML text
 */
export function segmentToml(description: string, refs: string[] = []): string {
  let text = `schema_version = 1
description = "${description}"
match = "all"
[[predicate]]
attribute = "plan"
op = "eq"
value = "pro"
`;
  for (const r of refs) {
    text += `[[predicate]]\nattribute = "segment.${r}"\nop = "eq"\nvalue = true\n`;
  }
  return text;
}
