/**
 * The full check of a store: what `cfgtool admin check` and the end of
 * `cfgtool admin restore` report. It reads every record kind whose parts
 * must agree and lists each disagreement:
 *
 * - every namespace has a head, every head a namespace record and a stored
 *   version with the head's closure hash;
 * - every stored blob is complete (its chunks add up to its metadata) and
 *   its content hashes to its id; every version's tree lists blobs that
 *   are stored, as many files as the version records, and those files
 *   hash to the version's closure hash (the closure hash of
 *   lib/closure/hash.ts, passed in as `closureHashOfDigests`: the store
 *   does not import the layers above it);
 * - service tokens and their indexes (digest, tenant, namespace, name)
 *   point at each other; so do live sessions and theirs, users and their
 *   email index, admin memberships and their by-user index.
 *
 * A finding is a `problem` (the store is damaged: restore from a good
 * backup) or a `warning` (harmless leftovers, such as the versions of a
 * namespace whose deletion was interrupted). Read a consistent store: a
 * copy (lib/store/backup/snapshot.ts) or one no server writes to; on a live
 * KV Connect store a write during the check may show up as a finding.
 *
 * @module
 */
import { sha256Hex } from "../../bytes.ts";
import type { BlobMeta } from "../blobs.ts";
import { INSTALLATION, TENANT_WIDE } from "../keys.ts";
import type { NamespaceRecord } from "../namespaces.ts";
import type { SessionRecord } from "../sessions.ts";
import type { TokenRecord } from "../tokens.ts";
import type { UserRecord } from "../users.ts";
import type { Head, VersionMeta } from "../versions.ts";

/** One thing the check found. */
export interface StoreFinding {
  /** `problem`: the store is damaged; `warning`: a harmless leftover. */
  severity: "problem" | "warning";
  /** The record it is about: `acme/web v3`, `token tok_…`, `blob 9f2c…`. */
  where: string;
  /** What is wrong, in plain words. */
  message: string;
}

/** What a check read and found. */
export interface StoreCheckReport {
  /** How many records of each kind were read. */
  counts: {
    tenants: number;
    namespaces: number;
    versions: number;
    /** Versions whose files were read and hashed to their closure hash. */
    versions_verified: number;
    blobs: number;
    blob_bytes: number;
    tokens: number;
    sessions: number;
    users: number;
  };
  /** The token-key fingerprint the store records, or null. */
  key_fingerprint: string | null;
  /** Damage: restore from a good backup. */
  problems: StoreFinding[];
  /** Harmless leftovers. */
  warnings: StoreFinding[];
}

/** Options of {@linkcode checkStore}. */
export interface CheckOptions {
  /**
   * The closure hash of files given by path and SHA-256 digest
   * (`closureHashOfDigests` of lib/closure/hash.ts).
   */
  closureHashOfDigests: (entries: readonly (readonly [string, Uint8Array])[]) => Promise<string>;
  /** The time that decides which sessions and tokens are live (default now). */
  now?: Date;
}

/** Shortens a 64-digit hex id for messages. */
const shortId = (id: string) => id.length > 16 ? `${id.slice(0, 12)}…` : id;

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

/** Key parts `idx` of `key`, joined by `/`. */
const parts = (key: Deno.KvKey, ...idx: number[]) => idx.map((i) => String(key[i])).join("/");

/** Every entry under a prefix. */
async function all<T>(kv: Deno.Kv, prefix: Deno.KvKey): Promise<Deno.KvEntry<T>[]> {
  const out: Deno.KvEntry<T>[] = [];
  for await (const e of kv.list<T>({ prefix })) out.push(e);
  return out;
}

/**
 * Checks that the records of a store agree (see the module comment) and
 * reports what it read and every finding.
 *
 * @param kv the store (a consistent one: a snapshot copy, or one no server writes)
 * @param options the closure-hash function and the current time
 * @returns counts and findings; the store is sound when `problems` is empty
 *
 * @example
 * ```ts
 * import { checkStore } from "./check.ts";
 * import { closureHashOfDigests } from "../../closure/hash.ts";
 * import { initialVersionOps } from "../versions.ts";
 * const kv = await Deno.openKv(":memory:");
 * const ns = { tenant_slug: "acme", slug: "web", description: null, created_at: "", created_by: "" };
 * await kv.set(["tenant", "acme"], { slug: "acme" });
 * const add = await initialVersionOps(kv, "acme", "web", "usr_1", new Date());
 * await add(kv.atomic().set(["ns", "acme", "web"], ns)).commit();
 * const ok = await checkStore(kv, { closureHashOfDigests });
 * if (ok.problems.length !== 0 || ok.counts.versions_verified !== 1) throw new Error();
 * // the head's version disappears: a problem
 * await kv.delete(["version", "acme", "web", 0]);
 * const bad = await checkStore(kv, { closureHashOfDigests });
 * if (bad.problems[0]?.where !== "acme/web") throw new Error(JSON.stringify(bad.problems));
 * kv.close();
 * ```
 */
export async function checkStore(kv: Deno.Kv, options: CheckOptions): Promise<StoreCheckReport> {
  const now = (options.now ?? new Date()).getTime();
  const problems: StoreFinding[] = [];
  const warnings: StoreFinding[] = [];
  const problem = (where: string, message: string) =>
    problems.push({ severity: "problem", where, message });
  const warning = (where: string, message: string) =>
    warnings.push({ severity: "warning", where, message });

  const manifests = await checkManifests(kv, options, problem, warning);
  const tokens = await checkTokens(kv, now, problem);
  const sessions = await checkSessions(kv, now, problem, warning);
  const users = await checkUsers(kv, problem);
  await checkMemberships(kv, problem);
  const fingerprint = (await kv.get<string>(["token_key_check"])).value;
  if (fingerprint === null && tokens + sessions > 0) {
    warning(
      "token key",
      "the store records no token-key fingerprint: the key file it needs cannot be checked",
    );
  }
  return {
    counts: { ...manifests, tokens, sessions, users },
    key_fingerprint: fingerprint,
    problems,
    warnings,
  };
}

type Report = (where: string, message: string) => void;

/** Heads, namespaces, versions and blobs. */
async function checkManifests(
  kv: Deno.Kv,
  options: CheckOptions,
  problem: Report,
  warning: Report,
) {
  const tenants = new Set(
    (await all(kv, ["tenant"])).map((e) => e.key[1] as string),
  );
  const namespaces = new Map(
    (await all<NamespaceRecord>(kv, ["ns"])).map((e) => [parts(e.key, 1, 2), e.value]),
  );
  const heads = new Map(
    (await all<Head>(kv, ["ns_head"])).map((e) => [parts(e.key, 1, 2), e.value]),
  );
  for (const id of namespaces.keys()) {
    if (!heads.has(id)) problem(id, "the namespace has no head (no current version)");
    const tenant = id.slice(0, id.indexOf("/"));
    if (!tenants.has(tenant)) {
      warning(id, `a namespace of tenant ${tenant}, which is deleted (an interrupted deletion)`);
    }
  }
  const versions: { ns: string; v: number; meta: VersionMeta }[] = [];
  for (const e of await all<VersionMeta>(kv, ["version"])) {
    const ns = parts(e.key, 1, 2);
    const v = e.key[3];
    const meta = e.value;
    if (
      typeof v !== "number" || meta === null || typeof meta !== "object" ||
      typeof meta.tree !== "string" || typeof meta.closure_hash !== "string"
    ) {
      problem(`${ns} v${String(v)}`, "the version record is malformed");
      continue;
    }
    versions.push({ ns, v, meta });
  }
  const byVersion = new Map(versions.map((x) => [`${x.ns} v${x.v}`, x.meta]));
  for (const [id, head] of heads) {
    if (!namespaces.has(id)) problem(id, "a head without a namespace record");
    const meta = byVersion.get(`${id} v${head.version}`);
    if (meta === undefined) {
      problem(id, `the head names version ${head.version}, which is not stored`);
    } else if (meta.closure_hash !== head.closure_hash) {
      problem(
        id,
        `the head says version ${head.version} has closure hash ${head.closure_hash}, the ` +
          `version records ${meta.closure_hash}`,
      );
    }
  }
  const leftovers = new Map<string, number>();
  for (const { ns, v } of versions) {
    const head = heads.get(ns);
    if (head === undefined) leftovers.set(ns, (leftovers.get(ns) ?? 0) + 1);
    else if (v > head.version) {
      problem(`${ns} v${v}`, `a version above the head (v${head.version})`);
    }
  }
  for (const [ns, n] of leftovers) {
    warning(ns, `${n} version(s) of a deleted namespace (an interrupted deletion)`);
  }

  const blobs = await checkBlobs(kv, new Set(versions.map((x) => x.meta.tree)), problem, warning);
  let verified = 0;
  for (const { ns, v, meta } of versions) {
    const where = `${ns} v${v}`;
    const tree = blobs.trees.get(meta.tree);
    if (tree === undefined) {
      problem(where, `its tree (blob ${shortId(meta.tree)}) is missing or damaged`);
      continue;
    }
    let pairs: unknown;
    try {
      pairs = JSON.parse(new TextDecoder().decode(tree));
    } catch {
      pairs = undefined;
    }
    if (
      !Array.isArray(pairs) ||
      !pairs.every((p) =>
        Array.isArray(p) && p.length === 2 && typeof p[0] === "string" &&
        typeof p[1] === "string" && /^[0-9a-f]{64}$/.test(p[1])
      )
    ) {
      problem(where, `its tree (blob ${shortId(meta.tree)}) is not a list of [path, blob id]`);
      continue;
    }
    const files = pairs as [string, string][];
    const missing = files.filter(([, id]) => !blobs.good.has(id));
    for (const [path, id] of missing) {
      problem(where, `file ${path}: blob ${shortId(id)} is missing or damaged`);
    }
    if (files.length !== meta.file_count) {
      problem(
        where,
        `the version records ${meta.file_count} files, its tree lists ${files.length}`,
      );
    }
    if (missing.length > 0) continue;
    const hash = await options.closureHashOfDigests(files.map(([p, id]) => [p, hexBytes(id)]));
    if (hash !== meta.closure_hash) {
      problem(where, `its files hash to ${hash}, the version records ${meta.closure_hash}`);
      continue;
    }
    verified++;
  }
  return {
    tenants: tenants.size,
    namespaces: namespaces.size,
    versions: versions.length,
    versions_verified: verified,
    blobs: blobs.good.size,
    blob_bytes: blobs.bytes,
  };
}

/**
 * Reads every blob chunk once, in key order (blob by blob), and checks
 * each blob against its metadata and its id. Keeps the content of the
 * blobs in `trees`.
 */
async function checkBlobs(kv: Deno.Kv, trees: Set<string>, problem: Report, warning: Report) {
  const metas = new Map(
    (await all<BlobMeta>(kv, ["blob_meta"])).map((e) => [e.key[1] as string, e.value]),
  );
  const good = new Set<string>();
  const contents = new Map<string, Uint8Array>();
  const seen = new Set<string>();
  let bytes = 0;
  let orphans = 0;
  let current: string | null = null;
  let chunks: { index: unknown; bytes: unknown }[] = [];
  const finish = async () => {
    if (current === null) return;
    const id = current;
    seen.add(id);
    const meta = metas.get(id);
    if (meta === undefined) {
      orphans++;
      return;
    }
    const reason = await blobFault(id, meta, chunks);
    if (reason !== null) return problem(`blob ${shortId(id)}`, reason);
    good.add(id);
    bytes += meta.size;
    if (trees.has(id)) contents.set(id, concat(chunks.map((c) => c.bytes as Uint8Array)));
  };
  for await (const e of kv.list({ prefix: ["blob"] })) {
    const id = String(e.key[1]);
    if (id !== current) {
      await finish();
      current = id;
      chunks = [];
    }
    chunks.push({ index: e.key[2], bytes: e.value });
  }
  await finish();
  for (const id of metas.keys()) {
    if (!seen.has(id)) problem(`blob ${shortId(id)}`, "its metadata exists but no content");
  }
  if (orphans > 0) {
    warning(
      "blobs",
      `${orphans} blob(s) with content but no metadata (a write or deletion that was ` +
        "interrupted, or in progress when the store was read); harmless",
    );
  }
  return { good, trees: contents, bytes };
}

async function blobFault(
  id: string,
  meta: BlobMeta,
  chunks: { index: unknown; bytes: unknown }[],
): Promise<string | null> {
  if (!chunks.every((c, i) => c.index === i && c.bytes instanceof Uint8Array)) {
    return `its chunks are not numbered 0 to ${chunks.length - 1}`;
  }
  if (chunks.length !== meta.chunks) {
    return `${chunks.length} chunk(s) stored, its metadata says ${meta.chunks}`;
  }
  const content = concat(chunks.map((c) => c.bytes as Uint8Array));
  if (content.length !== meta.size) {
    return `${content.length} bytes stored, its metadata says ${meta.size}`;
  }
  if (await sha256Hex(content) !== id) return "its content does not hash to its id";
  return null;
}

function concat(parts: Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Token records and their four indexes. */
async function checkTokens(kv: Deno.Kv, now: number, problem: Report): Promise<number> {
  const records = new Map(
    (await all<TokenRecord>(kv, ["token"])).map((e) => [e.key[1] as string, e.value]),
  );
  const byDigest = new Map<string, string>();
  for (const e of await all<string>(kv, ["token_by_digest"])) {
    const digest = e.key[1] as string;
    byDigest.set(digest, e.value);
    const t = records.get(e.value);
    if (t === undefined) {
      problem(`token ${e.value}`, "its digest is indexed, but the token record is missing");
    } else if (t.digest !== digest) {
      problem(`token ${e.value}`, "the digest index holds a digest the token record does not");
    }
  }
  const tenantIndex = new Set<string>();
  for (const e of await all<string>(kv, ["token_by_tenant"])) {
    const [, tenant, id] = e.key as [string, string, string];
    tenantIndex.add(`${tenant}/${id}`);
    const t = records.get(id);
    if (t === undefined || t.tenant_slug !== tenant || e.value !== id) {
      problem(`token ${id}`, `the tenant index lists it under ${tenant}, its record disagrees`);
    }
  }
  const namespaceIndex = new Set<string>();
  for (const e of await all<string>(kv, ["token_by_namespace"])) {
    const [, tenant, ns, id] = e.key as [string, string, string, string];
    namespaceIndex.add(`${tenant}/${ns}/${id}`);
    const t = records.get(id);
    if (t === undefined || t.tenant_slug !== tenant || t.namespace_slug !== ns || e.value !== id) {
      problem(
        `token ${id}`,
        `the namespace index lists it under ${tenant}/${ns}, its record disagrees`,
      );
    }
  }
  const names = new Map<string, string>();
  for (const e of await all<string>(kv, ["token_by_name"])) {
    const [, tenant, ns, name] = e.key as [string, string, string, string];
    names.set(`${tenant}/${ns}/${name}`, e.value);
    const t = records.get(e.value);
    if (t === undefined || t.name !== name || nameScope(t) !== `${tenant}/${ns}`) {
      problem(
        `token ${e.value}`,
        `the name index holds it as ${name} in ${tenant}/${ns}, its record disagrees`,
      );
    }
  }
  for (const [id, t] of records) {
    const where = `token ${id}`;
    if (byDigest.get(t.digest) !== id) {
      problem(where, "its digest is not indexed: the token cannot authenticate");
    }
    if (t.tenant_slug !== null && !tenantIndex.has(`${t.tenant_slug}/${id}`)) {
      problem(where, `it is missing from the index of tenant ${t.tenant_slug}`);
    }
    if (
      t.tenant_slug !== null && t.namespace_slug !== null &&
      !namespaceIndex.has(`${t.tenant_slug}/${t.namespace_slug}/${id}`)
    ) {
      problem(where, `it is missing from the index of ${t.tenant_slug}/${t.namespace_slug}`);
    }
    const live = t.status === "active" && t.rotated_to_token_id === null &&
      (t.expires_at === null || Date.parse(t.expires_at) > now);
    if (live && names.get(`${nameScope(t)}/${t.name}`) !== id) {
      problem(where, `it is active, but its name ${t.name} is not indexed to it`);
    }
  }
  return records.size;
}

/** The tenant and namespace parts of a token's name-index key. */
function nameScope(t: TokenRecord): string {
  const tenant = t.tenant_slug ?? INSTALLATION;
  const ns = t.namespace_slug ?? (t.tenant_slug === null ? INSTALLATION : TENANT_WIDE);
  return `${tenant}/${ns}`;
}

/** Live sessions and their digest and user indexes. */
async function checkSessions(
  kv: Deno.Kv,
  now: number,
  problem: Report,
  warning: Report,
): Promise<number> {
  const records = new Map(
    (await all<SessionRecord>(kv, ["session"])).map((e) => [e.key[1] as string, e.value]),
  );
  const byDigest = new Map<string, string>();
  let dangling = 0;
  for (const e of await all<string>(kv, ["session_by_digest"])) {
    byDigest.set(e.key[1] as string, e.value);
    const s = records.get(e.value);
    if (s === undefined) dangling++;
    else if (s.digest !== e.key[1]) problem(`session ${e.value}`, "the digest index disagrees");
  }
  const byUser = new Set<string>();
  for (const e of await all<string>(kv, ["session_by_user"])) {
    const [, user, id] = e.key as [string, string, string];
    byUser.add(`${user}/${id}`);
    const s = records.get(id);
    if (s === undefined) dangling++;
    else if (s.user_id !== user) problem(`session ${id}`, `the user index lists it under ${user}`);
  }
  for (const [id, s] of records) {
    if (Date.parse(s.expires_at) <= now) continue;
    if (byDigest.get(s.digest) !== id) {
      problem(`session ${id}`, "its digest is not indexed: the session cannot authenticate");
    }
    if (!byUser.has(`${s.user_id}/${id}`)) {
      problem(`session ${id}`, `it is missing from the session index of ${s.user_id}`);
    }
  }
  if (dangling > 0) {
    warning(
      "sessions",
      `${dangling} session index entr${dangling === 1 ? "y" : "ies"} of ended sessions, ` +
        "not yet removed by the store's expiry; harmless",
    );
  }
  return records.size;
}

/** Users and their email index. */
async function checkUsers(kv: Deno.Kv, problem: Report): Promise<number> {
  const users = new Map(
    (await all<UserRecord>(kv, ["user"])).map((e) => [e.key[1] as string, e.value]),
  );
  const emails = new Map<string, string>();
  for (const e of await all<string>(kv, ["user_by_email"])) {
    const email = e.key[1] as string;
    emails.set(email, e.value);
    const u = users.get(e.value);
    if (u === undefined || u.email !== email) {
      problem(`user ${e.value}`, `the email index holds ${email} for it, its record disagrees`);
    }
  }
  for (const [id, u] of users) {
    if (emails.get(u.email) !== id) problem(`user ${id}`, `its email ${u.email} is not indexed`);
  }
  return users.size;
}

/** Admin memberships of tenants and namespaces against their by-user indexes. */
async function checkMemberships(kv: Deno.Kv, problem: Report): Promise<void> {
  // each side as "user|scope"
  const sides: [Deno.KvKey, (k: Deno.KvKey) => string, Deno.KvKey, (k: Deno.KvKey) => string][] = [
    [
      ["tenant_admin"],
      (k) => `${parts(k, 2)}|${parts(k, 1)}`,
      ["tenant_admin_by_user"],
      (k) => `${parts(k, 1)}|${parts(k, 2)}`,
    ],
    [
      ["ns_admin"],
      (k) => `${parts(k, 3)}|${parts(k, 1, 2)}`,
      ["ns_admin_by_user"],
      (k) => `${parts(k, 1)}|${parts(k, 2, 3)}`,
    ],
  ];
  for (const [listPrefix, fromList, indexPrefix, fromIndex] of sides) {
    const list = new Set((await all(kv, listPrefix)).map((e) => fromList(e.key)));
    const index = new Set((await all(kv, indexPrefix)).map((e) => fromIndex(e.key)));
    const report = (m: string, message: string) => {
      const [user, scope] = m.split("|");
      problem(`user ${user}`, `admin of ${scope}: ${message}`);
    };
    for (const m of list) if (!index.has(m)) report(m, "missing from the by-user index");
    for (const m of index) if (!list.has(m)) report(m, "in the by-user index, but not stored");
  }
}
