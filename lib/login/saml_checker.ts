/**
 * Runs SAML response checks (lib/login/saml_check.ts) on a worker of their
 * own, off the thread that serves every request: the XML and signature
 * libraries take time that grows faster than a response's size on some
 * shapes (a few hundred elements already take tens of milliseconds), and
 * the consumer service takes anonymous posts. One worker, started on first
 * use; jobs wait their turn (at most {@linkcode SAML_CHECK_QUEUE}, beyond
 * which a post is refused as busy), and a job still running after
 * {@linkcode SAML_CHECK_TIMEOUT_MS} is refused and its worker replaced, so
 * no response holds sign-in for longer either.
 *
 * @module
 */
import { CfgtoolError, LoginError, UnavailableError } from "../errors.ts";
import type { SamlChecked, SamlCheckInput } from "./saml_check.ts";
import type { SamlCheckReply, SamlCheckRequest, SamlRefusal } from "./saml_check_worker.ts";

/** Longest a check may run before its worker is replaced, ms. */
export const SAML_CHECK_TIMEOUT_MS = 5_000;
/** Checks that may wait for the worker; more are refused (503 `login_unavailable`). */
export const SAML_CHECK_QUEUE = 32;

interface Job {
  request: SamlCheckRequest;
  resolve: (value: SamlChecked) => void;
  reject: (err: unknown) => void;
}

/**
 * The error a refusal from the worker stands for: a `LoginError` with its
 * reason, or the typed error of its code.
 *
 * @param r the refusal as the worker sent it
 * @returns the error to throw
 *
 * @example
 * ```ts
 * import { refusalError } from "./saml_checker.ts";
 * const err = refusalError({ code: "login_failed", reason: "signature", message: "no", status: 403 });
 * if ((err as { reason?: string }).reason !== "signature") throw new Error();
 * ```
 */
export function refusalError(r: SamlRefusal): Error {
  const cause = r.cause === undefined ? {} : { cause: new Error(r.cause) };
  if (r.code === "login_failed") {
    return new LoginError(r.reason ?? "assertion", r.message, {
      status: r.status === 400 ? 400 : 403,
      ...cause,
    });
  }
  if (r.code === "login_unavailable") return new UnavailableError(r.code, r.message, cause);
  return new CfgtoolError(r.code, r.message, { status: r.status, ...cause });
}

/**
 * One worker that checks SAML responses, with a queue and a deadline per
 * check (see the module documentation).
 *
 * @example
 * ```ts
 * import { SamlChecker } from "./saml_checker.ts";
 * const checker = new SamlChecker();
 * let reason = "";
 * try {
 *   await checker.check({
 *     encoded: btoa("<a".repeat(1000)), endpoints: { entityId: "https://f.test/md", acsUrl: "https://f.test/acs" },
 *     idp: { entityId: "https://idp.test", ssoUrl: "https://idp.test/sso", certificates: [] },
 *     privateKey: "", policy: { method: "saml" }, requestId: "_r1", requestedAt: Date.now(),
 *   });
 * } catch (e) { reason = (e as { reason: string }).reason; }
 * checker.close();
 * if (reason !== "assertion") throw new Error(reason);
 * ```
 */
export class SamlChecker {
  readonly #timeoutMs: number;
  readonly #queue: Job[] = [];
  #worker: Worker | null = null;
  #running: { job: Job; timer: ReturnType<typeof setTimeout> } | null = null;
  #nextId = 1;
  #closed = false;

  /** @param options the deadline of one check (default {@linkcode SAML_CHECK_TIMEOUT_MS}) */
  constructor(options: { timeoutMs?: number } = {}) {
    this.#timeoutMs = options.timeoutMs ?? SAML_CHECK_TIMEOUT_MS;
  }

  /**
   * Checks one response on the worker.
   *
   * @param input the response and what it is checked against
   * @returns what the verified response says
   */
  check(input: SamlCheckInput): Promise<SamlChecked> {
    if (this.#closed) return Promise.reject(busy("the server is stopping"));
    if (this.#queue.length >= SAML_CHECK_QUEUE) {
      return Promise.reject(busy("too many sign-ins are being checked"));
    }
    return new Promise<SamlChecked>((resolve, reject) => {
      this.#queue.push({ request: { id: this.#nextId++, input }, resolve, reject });
      this.#next();
    });
  }

  /** Stops the worker; checks waiting are refused. */
  close(): void {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) job.reject(busy("the server is stopping"));
    if (this.#running !== null) {
      clearTimeout(this.#running.timer);
      this.#running.job.reject(busy("the server is stopping"));
      this.#running = null;
    }
    this.#worker?.terminate();
    this.#worker = null;
  }

  #next(): void {
    if (this.#running !== null || this.#closed) return;
    const job = this.#queue.shift();
    if (job === undefined) return;
    const worker = this.#worker ??= this.#spawn();
    const timer = setTimeout(() => {
      // Too slow: refuse it, and give the next check a fresh worker.
      this.#running = null;
      this.#worker?.terminate();
      this.#worker = null;
      job.reject(
        new LoginError(
          "assertion",
          "The identity provider's answer could not be accepted (it took too long to check)",
        ),
      );
      this.#next();
    }, this.#timeoutMs);
    this.#running = { job, timer };
    worker.postMessage(job.request);
  }

  #spawn(): Worker {
    const worker = new Worker(new URL("./saml_check_worker.ts", import.meta.url), {
      type: "module",
    });
    worker.onmessage = (e: MessageEvent<SamlCheckReply>) => this.#answer(e.data);
    worker.onerror = (e) => {
      e.preventDefault();
      this.#fail(new Error(`SAML check worker failed: ${e.message}`));
    };
    return worker;
  }

  #answer(reply: SamlCheckReply): void {
    const running = this.#running;
    if (running === null || running.job.request.id !== reply.id) return; // a check that timed out
    clearTimeout(running.timer);
    this.#running = null;
    if ("ok" in reply) running.job.resolve(reply.ok);
    else if ("refused" in reply) running.job.reject(refusalError(reply.refused));
    else running.job.reject(new Error(reply.crashed));
    this.#next();
  }

  #fail(err: Error): void {
    const running = this.#running;
    this.#worker?.terminate();
    this.#worker = null;
    if (running !== null) {
      clearTimeout(running.timer);
      this.#running = null;
      running.job.reject(err);
    }
    this.#next();
  }
}

function busy(why: string): UnavailableError {
  return new UnavailableError(
    "login_unavailable",
    `Sign-in cannot be checked right now (${why}); try again in a moment`,
  );
}
