/**
 * Test helper: a real HTTP receiver of webhook deliveries (`Deno.serve` on
 * a free loopback port) that records every request and answers each with
 * the status the test chooses, and verifies signatures with the
 * `standardwebhooks` library's own `Webhook.verify`.
 *
 * @module
 */
import { Webhook } from "webhooks-signing";

/** One request the receiver got. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The status it was answered with. */
  status: number;
}

/** A running receiver. */
export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Every request so far, in order. */
  requests: ReceivedRequest[];
  /** Resolves once `n` requests have come (or fails after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Stops it. */
  close(): Promise<void>;
}

/**
 * Starts a receiver; `answer` picks each request's status from its number
 * (1 for the first), 204 by default.
 *
 * @example
 * ```ts ignore
 * const receiver = await startReceiver((n) => (n === 1 ? 500 : 204));
 * ```
 */
export function startReceiver(answer: (n: number) => number = () => 204): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: (() => void)[] = [];
  const { promise: listening, resolve } = Promise.withResolvers<number>();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => resolve(port) },
    async (req) => {
      const body = await req.text();
      const status = answer(requests.length + 1);
      requests.push({
        method: req.method,
        path: new URL(req.url).pathname,
        headers: Object.fromEntries(req.headers),
        body,
        status,
      });
      for (const w of waiters.splice(0)) w();
      return new Response(status === 204 ? null : `status ${status}`, { status });
    },
  );
  return listening.then((port) => ({
    origin: `http://127.0.0.1:${port}`,
    requests,
    async waitFor(n, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() > end) {
          throw new Error(`the receiver got ${requests.length} request(s), not ${n}`);
        }
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
      return requests.slice(0, n);
    },
    close: () => server.shutdown(),
  }));
}

/**
 * Verifies a received delivery with the `standardwebhooks` library (throws
 * when the signature, id or timestamp does not check) and returns the
 * parsed body.
 *
 * @example
 * ```ts ignore
 * const payload = verified(secret, receiver.requests[0]!);
 * ```
 */
// deno-lint-ignore no-explicit-any
export function verified(secret: string, request: ReceivedRequest): any {
  return new Webhook(secret).verify(request.body, {
    "webhook-id": request.headers["webhook-id"]!,
    "webhook-timestamp": request.headers["webhook-timestamp"]!,
    "webhook-signature": request.headers["webhook-signature"]!,
  });
}
