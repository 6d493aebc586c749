import { assert, assertEquals } from "../assert.ts";
import { type ChangeEvent, FlagClient } from "../../lib/client/flag_client.ts";
import { startServer } from "./server_process.ts";
import {
  boolFlag,
  NS_TOML,
  planSegment,
  startWorld,
  stringFlag,
  waitFor,
} from "../client/fixture.ts";

const BETA = { plan: "beta", targeting_key: "u1" };
const FREE = { plan: "free", targeting_key: "u2" };

Deno.test("FlagClient follows a chain of pushes (added, modified, enter, leave, removed) from a real server", async () => {
  const world = await startWorld(["web", "api"]);
  const files: Record<string, string> = {
    "namespace.toml": NS_TOML,
    "flags/checkout.toml": boolFlag(),
    "flags/banner.toml": stringFlag("hello"),
    "flags/unrelated.toml": boolFlag(),
    "segments/beta.toml": planSegment("beta"),
  };
  const client = new FlagClient({
    server: world.inst.url,
    token: world.token,
    namespaces: ["web:checkout,banner,promo", { namespace: "api" }],
    readyTimeoutMs: 10_000,
  });
  const changes: ChangeEvent[] = [];
  client.onChange((c) => changes.push(c));
  try {
    assertEquals(await world.push(files), 1);
    assertEquals(await world.push({ "namespace.toml": NS_TOML }, "api"), 1);
    await client.ready();
    const web = () => client.closure("web")!;
    assertEquals(web().version, 1);
    // narrow subscription: the orphan segment and the unsubscribed flag are not in the closure
    assertEquals([...web().files.keys()].sort(), [
      "flags/banner.toml",
      "flags/checkout.toml",
      "namespace.toml",
    ]);
    assertEquals(client.evaluate("web", "production", "banner", {}).value, "hello");
    assertEquals(client.evaluate("web", "production", "promo", {}).error_code, "FLAG_NOT_FOUND");

    const steps: [string, () => void, () => void][] = [
      ["added", () => {
        files["flags/promo.toml"] = boolFlag({ defaultOn: true });
      }, () => {
        assertEquals(client.evaluate("web", "production", "promo", {}).value, true);
      }],
      ["modified", () => {
        files["flags/banner.toml"] = stringFlag("hi");
      }, () => {
        assertEquals(client.evaluate("web", "staging", "banner", {}).value, "hi");
      }],
      ["enter", () => {
        files["flags/checkout.toml"] = boolFlag({ segment: "beta" });
      }, () => {
        assert(web().files.has("segments/beta.toml"));
        assertEquals(client.evaluate("web", "production", "checkout", BETA).value, true);
        assertEquals(
          client.evaluate("web", "production", "checkout", BETA).reason,
          "TARGETING_MATCH",
        );
        assertEquals(client.evaluate("web", "production", "checkout", FREE).value, false);
      }],
      ["leave", () => {
        files["flags/checkout.toml"] = boolFlag({ note: "no rule" });
      }, () => {
        assert(!web().files.has("segments/beta.toml"));
        assertEquals(client.evaluate("web", "production", "checkout", BETA).value, false);
      }],
      ["removed", () => {
        delete files["flags/promo.toml"];
      }, () => {
        assertEquals(
          client.evaluate("web", "production", "promo", {}).error_code,
          "FLAG_NOT_FOUND",
        );
      }],
    ];
    for (const [name, change, check] of steps) {
      change();
      const v = await world.push(files);
      await waitFor(() => client.closure("web")?.version === v, `${name} (v${v})`);
      check();
      const ev = client.evaluate("web", "production", "banner", {});
      assertEquals(ev.version, v, `${name}: results carry the version`);
    }

    // A push that does not touch the closure sends nothing; the next one applies inline on top.
    files["flags/unrelated.toml"] = boolFlag({ defaultOn: true });
    const quiet = await world.push(files);
    files["flags/banner.toml"] = stringFlag("bye");
    const loud = await world.push(files);
    assertEquals(loud, quiet + 1);
    await waitFor(() => client.closure("web")?.version === loud, "the push after a quiet one");
    assertEquals(client.evaluate("web", "production", "banner", {}).value, "bye");

    const webChanges = changes.filter((c) => c.namespace === "web");
    assertEquals(webChanges.map((c) => c.version), [1, 2, 3, 4, 5, 6, 8]);
    assertEquals(webChanges.map((c) => c.delivery), [
      "snapshot",
      "inline",
      "inline",
      "inline",
      "inline",
      "inline",
      "inline",
    ]);
    assertEquals(webChanges[3]!.changedPaths, ["flags/checkout.toml", "segments/beta.toml"]);
    assertEquals(webChanges[2]!.changedFlags, ["banner"]);
    assertEquals(client.lastRefreshError(), null);

    // evaluateAll runs on the same model; the second namespace is tracked independently
    const all = client.evaluateAll("web", "production", BETA);
    assertEquals(Object.keys(all).sort(), ["banner", "checkout"]);
    assertEquals(client.closure("api")?.version, 1);
    assertEquals(client.status().map((s) => [s.namespace, s.version, s.stale]), [
      ["web", 8, false],
      ["api", 1, false],
    ]);
  } finally {
    await client.close();
    await world.close();
  }
});

Deno.test("FlagClient reconnects after the server is killed and restarted on the same KV file", async () => {
  const world = await startWorld();
  const files: Record<string, string> = {
    "namespace.toml": NS_TOML,
    "flags/banner.toml": stringFlag("one"),
  };
  await world.push(files);
  const client = new FlagClient({
    server: world.inst.url,
    token: world.token,
    namespaces: ["web:*"],
    backoff: { initialMs: 50, maxMs: 400 },
  });
  let restarted: Awaited<ReturnType<typeof startServer>> | null = null;
  try {
    await client.ready(10_000);
    assertEquals(client.evaluate("web", "production", "banner").value, "one");
    await world.inst.server.kill();
    await waitFor(() => !client.connected, "the client to notice");
    // evaluation keeps serving the last model while the server is down
    assertEquals(client.evaluate("web", "production", "banner").value, "one");
    await waitFor(() => client.lastRefreshError()?.code === "unreachable", "a failed reconnect");

    const port = new URL(world.inst.url).port;
    restarted = await startServer({
      kv: world.inst.kvPath,
      args: ["--head-poll-ms", "20", "--port", port],
    });
    assertEquals(restarted.url, world.inst.url);
    await waitFor(() => client.connected, "the client to reconnect", 10_000);
    files["flags/banner.toml"] = stringFlag("two");
    const v = await world.push(files);
    await waitFor(() => client.closure("web")?.version === v, "the push after the restart");
    assertEquals(client.evaluate("web", "production", "banner").value, "two");
  } finally {
    await client.close();
    await restarted?.stop();
    await world.close();
  }
});
