/**
 * The baseline of bench/http_control_plane.ts: a bare `Deno.serve`
 * hello-world on loopback, with no framework, no logging and no storage.
 * Prints `hello listening on http://127.0.0.1:<port>` once it listens and
 * stops on SIGTERM or SIGINT.
 *
 * Run: `deno run --allow-net bench/hello_server.ts [port]` (default 0: a free port).
 *
 * @module
 */

const port = Number(Deno.args[0] ?? "0");
const ac = new AbortController();
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, () => ac.abort());
}

const server = Deno.serve(
  {
    hostname: "127.0.0.1",
    port,
    signal: ac.signal,
    onListen: ({ hostname, port }) => console.log(`hello listening on http://${hostname}:${port}`),
  },
  () => new Response("Hello, world!\n"),
);
await server.finished;
