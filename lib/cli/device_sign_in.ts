/**
 * `cfgtool login --no-browser` (the device flow, RFC 8628 shape): asks the
 * service for a device code and a user code, prints where to confirm the
 * user code (any browser, any device), then polls at the service's
 * interval (5 s longer after each `slow_down`) until the person confirms
 * (the CLI session), denies (`access_denied`) or the codes expire.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";
import type { SignInClient } from "../client/sign_in.ts";
import type { CliSessionGrant } from "../protocol/cli_sign_in.ts";

/** What {@linkcode deviceSignIn} needs. */
export interface DeviceOptions {
  /** The service's sign-in client. */
  client: SignInClient;
  /** The tenant to sign in to, if chosen. */
  tenant?: string | undefined;
  /** Writes a progress line (stderr). */
  say: (line: string) => void;
  /** Waits this long, ms (tests shorten it). */
  sleep?: (ms: number) => Promise<void>;
  /** The clock, ms. */
  now?: () => number;
}

/**
 * Runs the device flow to its end: the CLI session, or the refusal the
 * service answered (a `LoginError` with `details.error` `access_denied` or
 * `expired_token`), or a `timeout` once the codes' lifetime has passed.
 *
 * @param options client, tenant, output, sleep and clock
 * @returns the session
 *
 * @example
 * ```ts
 * import { deviceSignIn } from "./device_sign_in.ts";
 * import type { SignInClient } from "../client/sign_in.ts";
 * const grant = { session_token: "ses_x", session: { id: "ssn_1", expires_at: "2030-01-01T00:00:00Z" },
 *   user: { id: "usr_1", email: "ana@acme.test" }, tenant: "acme" };
 * let polls = 0;
 * const client = {
 *   startDevice: () => Promise.resolve({ device_code: "d", user_code: "BCDF-GHJK", expires_in: 600,
 *     interval: 2, verification_uri: "http://x/auth/cli/device",
 *     verification_uri_complete: "http://x/auth/cli/device?user_code=BCDF-GHJK" }),
 *   pollDevice: () => Promise.resolve(++polls < 3 ? { status: "pending" as const } : { status: "granted" as const, grant }),
 * } as unknown as SignInClient;
 * const lines: string[] = [];
 * const got = await deviceSignIn({ client, say: (l) => lines.push(l), sleep: () => Promise.resolve() });
 * if (got.tenant !== "acme" || polls !== 3 || !lines.some((l) => l.includes("BCDF-GHJK"))) throw new Error();
 * ```
 */
export async function deviceSignIn(options: DeviceOptions): Promise<CliSessionGrant> {
  const { client, say } = options;
  const sleep = options.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
  const now = options.now ?? Date.now;
  const d = await client.startDevice(options.tenant);
  const minutes = Math.round(d.expires_in / 60);
  say("To sign in, open this page in a browser (on any device):");
  say("");
  say(`  ${d.verification_uri}`);
  say("");
  say(`and enter the code  ${d.user_code}`);
  say("");
  say(`(or open ${d.verification_uri_complete} )`);
  say(`Waiting for the code to be confirmed; it expires in ${minutes} minutes…`);
  const deadline = now() + d.expires_in * 1000;
  let interval = Math.max(1, d.interval);
  while (now() < deadline) {
    await sleep(interval * 1000);
    const poll = await client.pollDevice(d.device_code);
    if (poll.status === "granted") return poll.grant;
    if (poll.status === "slow_down") interval = Math.max(interval + 5, poll.interval);
  }
  throw new CfgtoolError(
    "timeout",
    `the code ${d.user_code} was not confirmed within ${minutes} minutes; run \`cfgtool login\` again`,
    { status: 504 },
  );
}
