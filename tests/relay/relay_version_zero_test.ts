/**
 * A namespace created at the primary and never pushed (version 0): the
 * primary accepts an event stream on it and sends its first event with
 * the first push. A relay does the same: it knows the namespace once its
 * own upstream stream accepted it, lists it at version 0 (so a relay
 * following this one knows it too), accepts subscriptions on it, and sends
 * the snapshot when the first version arrives. The other namespaces of the
 * tenant are served all along.
 */
import { assert, assertEquals } from "../assert.ts";
import { manifestFiles, startFixture } from "../e2e/evaluation_fixture.ts";
import { startRelay, until } from "./relay_process.ts";

Deno.test("a namespace with no version yet: subscribed at the relay, served from its first push", async () => {
  const f = await startFixture();
  const relays = [];
  try {
    const created = await f.inst.api("POST", "/api/v1/tenants/acme/namespaces", f.inst.admin, {
      slug: "fresh",
    });
    assertEquals(created.status, 201);
    const relay = await startRelay({ upstream: f.inst.url, token: f.inst.admin });
    relays.push(relay);
    const chained = await startRelay({ upstream: relay.url, token: f.inst.admin });
    relays.push(chained);
    // deno-lint-ignore no-explicit-any
    const health = async (url: string): Promise<any> =>
      await (await fetch(`${url}/healthz`)).json();
    for (const r of [relay, chained]) {
      await until(async () => {
        const h = await health(r.url);
        return h.upstream.connected && h.namespaces.length === 3 &&
          h.awaiting_first_version.length === 1;
      }, `${r.url} follows 3 namespaces and knows the fresh one`);
      assertEquals((await health(r.url)).awaiting_first_version, [
        { tenant: "acme", namespace: "fresh" },
      ]);
    }

    // the relay lists it at version 0, as the primary does
    const listed = await (await fetch(`${relay.url}/api/v1/tenants/acme/namespaces`, {
      headers: { authorization: `Bearer ${f.inst.admin}` },
    })).json();
    assertEquals(
      listed.namespaces.map((n: { slug: string; head: { version: number } }) =>
        `${n.slug}@${n.head.version}`
      ),
      ["api@1", "fresh@0", "web@1"],
    );

    // subscribed before its first version: 200, and its snapshot arrives with the push
    const ac = new AbortController();
    const res = await fetch(`${chained.url}/api/v1/events?ns=acme/fresh:*&ns=acme/web:*`, {
      headers: { authorization: `Bearer ${f.inst.admin}` },
      signal: ac.signal,
    });
    assertEquals(res.status, 200, res.status === 200 ? "" : await res.text());
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const read = async (what: string) => {
      const end = Date.now() + 20_000;
      while (!text.includes(what)) {
        assert(Date.now() < end, `no ${what} in:\n${text}`);
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
    };
    await read("id: web:1");
    assert(!text.includes("fresh:"), "nothing about fresh before its first version");
    await f.push(manifestFiles({}), "fresh");
    await read("id: fresh:1");
    assert(text.includes('"delivery":"snapshot"'), text);
    ac.abort();
    await reader.cancel().catch(() => {});
    await until(
      async () => (await health(chained.url)).awaiting_first_version.length === 0,
      "the chained relay holds it",
    );
  } finally {
    for (const r of relays) {
      await r.stop();
      await Deno.remove(r.dataDir, { recursive: true }).catch(() => {});
    }
    await f.inst.close();
  }
});
