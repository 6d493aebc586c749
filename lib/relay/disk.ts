/**
 * A relay's data directory: for each namespace it follows, its latest
 * verified closure, one file per namespace
 * (`namespaces/<tenant>/<slug>.json`: tenant, slug, version, closure hash,
 * when it was saved and the files, base64), written atomically
 * (lib/relay/atomic_file.ts) after every verified change. At start the
 * relay reads them back and verifies each one again (its closure hash and
 * its manifest, as the SDK verifies a snapshot); a file that fails is
 * logged and skipped, never served.
 *
 * @module
 */
import { join } from "node:path";
import { base64 } from "base";
import { ClosureState } from "../client/closure_state.ts";
import type { Logger } from "../log.ts";
import { SLUG_PATTERN } from "../protocol/slug.ts";
import { writeFileAtomic } from "./atomic_file.ts";

/** A closure read back from the data directory. */
export interface SavedClosure {
  tenant: string;
  state: ClosureState;
  savedAt: Date;
}

interface SavedFile {
  tenant: string;
  namespace: string;
  version: number;
  closure_hash: string;
  saved_at: string;
  files: Record<string, string>;
}

/**
 * The closures kept in a data directory.
 *
 * @example
 * ```ts
 * import { ClosureDisk } from "./disk.ts";
 * import { ClosureState } from "../client/closure_state.ts";
 * import { closureHash } from "../closure/hash.ts";
 * const dir = await Deno.makeTempDir();
 * const files = new Map([["namespace.toml", new TextEncoder().encode("schema_version = 1\n")]]);
 * const state = await ClosureState.fromFiles("web", 3, files, await closureHash(files));
 * const disk = new ClosureDisk(dir);
 * await disk.save("acme", state);
 * const [back] = await disk.loadAll();
 * if (back?.tenant !== "acme" || back.state.version !== 3 || back.state.hash !== state.hash) throw new Error();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export class ClosureDisk {
  readonly #root: string;
  readonly #log: Logger;
  /** Writes per namespace, in order: a later version is never overwritten by an earlier one. */
  readonly #queues = new Map<string, Promise<void>>();

  /**
   * @param dataDir the relay's data directory
   * @param log where problems are logged
   */
  constructor(dataDir: string, log: Logger = () => {}) {
    this.#root = join(dataDir, "namespaces");
    this.#log = log;
  }

  /**
   * Keeps a verified state (atomically; a failure is logged, the relay
   * keeps serving from memory).
   *
   * @param tenant tenant slug
   * @param state the verified state
   * @returns resolves once written
   */
  save(tenant: string, state: ClosureState): Promise<void> {
    const path = this.#path(tenant, state.namespace);
    const files: Record<string, string> = {};
    for (const [p, bytes] of state.files) files[p] = base64.encode(bytes);
    const body: SavedFile = {
      tenant,
      namespace: state.namespace,
      version: state.version,
      closure_hash: state.hash,
      saved_at: new Date().toISOString(),
      files,
    };
    const bytes = new TextEncoder().encode(JSON.stringify(body));
    const next = (this.#queues.get(path) ?? Promise.resolve()).then(() =>
      writeFileAtomic(path, bytes).catch((err) =>
        this.#log("warn", "relay: cannot keep a closure on disk", {
          tenant,
          namespace: state.namespace,
          version: state.version,
          error: (err as Error).message,
        })
      )
    );
    this.#queues.set(path, next);
    return next;
  }

  /**
   * Forgets a namespace's file.
   *
   * @param tenant tenant slug
   * @param namespace namespace slug
   * @returns resolves once removed
   */
  async remove(tenant: string, namespace: string): Promise<void> {
    await (this.#queues.get(this.#path(tenant, namespace)) ?? Promise.resolve());
    await Deno.remove(this.#path(tenant, namespace)).catch(() => {});
  }

  /** Resolves once every write started so far is done. */
  async settled(): Promise<void> {
    await Promise.all(this.#queues.values());
  }

  /**
   * Every kept closure that verifies again.
   *
   * @returns the closures, in no particular order
   */
  async loadAll(): Promise<SavedClosure[]> {
    const out: SavedClosure[] = [];
    let tenants: Deno.DirEntry[];
    try {
      tenants = await Array.fromAsync(Deno.readDir(this.#root));
    } catch {
      return out;
    }
    for (const t of tenants) {
      if (!t.isDirectory || !SLUG_PATTERN.test(t.name)) continue;
      for await (const f of Deno.readDir(join(this.#root, t.name))) {
        if (!f.isFile || !f.name.endsWith(".json")) continue;
        const path = join(this.#root, t.name, f.name);
        try {
          out.push(await this.#read(path, t.name, f.name.slice(0, -".json".length)));
        } catch (err) {
          this.#log("warn", "relay: a kept closure does not verify; not serving it", {
            path,
            error: (err as Error).message,
          });
        }
      }
    }
    return out;
  }

  async #read(path: string, tenant: string, namespace: string): Promise<SavedClosure> {
    const saved = JSON.parse(await Deno.readTextFile(path)) as SavedFile;
    if (saved.tenant !== tenant || saved.namespace !== namespace) {
      throw new Error(`the file names ${saved.tenant}/${saved.namespace}`);
    }
    if (!Number.isSafeInteger(saved.version) || saved.version < 1) {
      throw new Error("no valid version");
    }
    const files = new Map<string, Uint8Array>();
    for (const [p, b64] of Object.entries(saved.files ?? {})) files.set(p, base64.decode(b64));
    const state = await ClosureState.fromFiles(namespace, saved.version, files, saved.closure_hash);
    const savedAt = new Date(saved.saved_at);
    return { tenant, state, savedAt: Number.isNaN(savedAt.getTime()) ? new Date(0) : savedAt };
  }

  #path(tenant: string, namespace: string): string {
    if (!SLUG_PATTERN.test(tenant) || !SLUG_PATTERN.test(namespace)) {
      throw new Error(`not a slug: ${tenant}/${namespace}`);
    }
    return join(this.#root, tenant, `${namespace}.json`);
  }
}
