import { assert, assertEquals } from "../assert.ts";
import { RefetchFeeds } from "../../lib/events/refetch_feed.ts";
import { createSseStream, type SseStream } from "../../lib/events/sse.ts";
import type { HeadListener, HeadWatcher } from "../../lib/store/head_watcher.ts";
import type { Head } from "../../lib/store/versions.ts";
import { nextTurn } from "../../lib/events/next_turn.ts";

/** A head watcher the test drives: listeners per namespace, and a count of watches. */
function fakeHeads() {
  const listeners = new Map<string, Set<HeadListener>>();
  let watches = 0;
  const heads = {
    watch(tenant: string, namespace: string, l: HeadListener) {
      watches++;
      const id = `${tenant}/${namespace}`;
      if (!listeners.has(id)) listeners.set(id, new Set());
      listeners.get(id)!.add(l);
      return () => listeners.get(id)!.delete(l);
    },
  } as unknown as HeadWatcher;
  return {
    heads,
    get watches() {
      return watches;
    },
    listening: (id: string) => listeners.get(id)?.size ?? 0,
    change: (id: string, head: Head | null) => listeners.get(id)?.forEach((l) => l(head)),
  };
}

const head = (version: number, publicEnvs: string[]): Head => ({
  version,
  closure_hash: `h${version}`,
  environments: Object.fromEntries(publicEnvs.map((e) => [e, { public_evaluate: true }])),
});

const text = async (s: SseStream) => {
  s.close();
  return await new Response(s.body).text();
};

Deno.test("RefetchFeeds: one head listener per namespace and one frame per head for all its streams", async () => {
  const f = fakeHeads();
  let built = 0;
  const feeds = new RefetchFeeds(f.heads, (h) => {
    built++;
    return new TextEncoder().encode(`id: ${h.version}\n\n`);
  });
  const streams = [createSseStream(), createSseStream(), createSseStream()];
  for (const s of streams) feeds.add(s, "acme", "web", "production");
  assertEquals([f.watches, f.listening("acme/web"), feeds.size], [1, 1, 3]);
  f.change("acme/web", head(2, ["production"]));
  assertEquals(built, 1);
  assertEquals(feeds.frameOf(head(2, ["production"])).length, "id: 2\n\n".length);
  assertEquals(built, 1, "a connect to the same head reuses the frame");
  for (const s of streams) assertEquals(await text(s), "id: 2\n\n");
  assertEquals([feeds.size, f.listening("acme/web")], [0, 0], "the last stream's close unwatches");
});

Deno.test("RefetchFeeds closes the streams whose environment stopped being public, and all when the namespace goes", () => {
  const f = fakeHeads();
  const feeds = new RefetchFeeds(f.heads, (h) => new TextEncoder().encode(`id: ${h.version}\n\n`));
  const prod = createSseStream();
  const staging = createSseStream();
  feeds.add(prod, "acme", "web", "production");
  feeds.add(staging, "acme", "web", "staging");
  f.change("acme/web", head(2, ["production"]));
  assert(!prod.closed && staging.closed);
  f.change("acme/web", null);
  assert(prod.closed);
  assertEquals(feeds.size, 0);
});

Deno.test("RefetchFeeds writes to more streams than one slice over several turns, every stream once", async () => {
  const f = fakeHeads();
  const feeds = new RefetchFeeds(f.heads, (h) => new TextEncoder().encode(`id: ${h.version}\n\n`));
  const streams = Array.from({ length: 1300 }, () => createSseStream());
  for (const s of streams) feeds.add(s, "acme", "web", "production");
  f.change("acme/web", head(2, ["production"]));
  const first = streams.filter((s) => s.bytesWritten > 0).length;
  assert(first > 0 && first < streams.length, `${first} written at once`);
  for (let i = 0; i < 10; i++) await nextTurn();
  assert(streams.every((s) => s.bytesWritten === "id: 2\n\n".length));
  for (const s of streams) s.close();
});

Deno.test("RefetchFeeds with an access check announces a head only to streams still allowed, and closes the others", async () => {
  const f = fakeHeads();
  const allowed = { allowed: true };
  const refused = { allowed: true };
  const calls: string[] = [];
  const access = {
    sync() {
      calls.push("sync");
      return Promise.resolve();
    },
    check(grants: readonly ({ allowed: boolean } | undefined)[]) {
      calls.push(`check ${grants.length}`);
      refused.allowed = false; // the verdict computed again: this token lost its right
      return Promise.resolve();
    },
  };
  const feeds = new RefetchFeeds(
    f.heads,
    (h) => new TextEncoder().encode(`id: ${h.version}\n\n`),
    access,
  );
  const [a, b, unwatched] = [createSseStream(), createSseStream(), createSseStream()];
  feeds.add(a, "acme", "web", "production", allowed);
  feeds.add(b, "acme", "web", "production", refused);
  feeds.add(unwatched, "acme", "web", "production");
  f.change("acme/web", head(2, ["production"]));
  for (let i = 0; i < 3; i++) await nextTurn();
  assertEquals(calls, ["sync", "check 3"], "one epoch read and one check per head");
  assert(b.closed, "a stream that may no longer evaluate there is closed");
  assertEquals(await text(b), "", "and told nothing of the new head");
  assertEquals(await text(a), "id: 2\n\n");
  assertEquals(await text(unwatched), "id: 2\n\n");
});
