/**
 * `cfgtool audit list`: the audit log of a remote service (`GET
 * /api/v1/audit`) with the API's filters, as a table (newest first), as
 * JSON lines (`--json`, one entry per line), or followed (`--follow`: the
 * latest entries oldest first, then each new entry as it appears, until
 * Ctrl-C).
 *
 * Following polls the service with `since=<entry id>`: each poll asks for
 * the entries newer than the newest one seen, less a few seconds
 * ({@linkcode FOLLOW_LAG_MS}: an entry committed late, or by a process
 * whose clock runs a little behind, is still found), drops those already
 * printed, and prints the rest oldest first. The cursor moves with the
 * newest entry of the (tenant's) log, whatever the filters, so a sparse
 * filter never makes a poll read more than what is new.
 *
 * Everything the server sent is printed without terminal control
 * characters (lib/cli/printable.ts).
 *
 * @module
 */
import type { Command } from "commander";
import type { ServiceClient } from "../client/api.ts";
import { CfgtoolError, UsageError } from "../errors.ts";
import type { AuditQuery } from "../protocol/requests.ts";
import type { AuditEntryInfo } from "../protocol/responses.ts";
import { parseDuration } from "./duration.ts";
import { cellText, jsonLine } from "./printable.ts";
import { openClient, parseWholeNumber, withRemoteOptions } from "./remote_options.ts";

/** How far back of the newest entry seen each poll of `--follow` looks again, ms. */
export const FOLLOW_LAG_MS = 5_000;
/** How many entries `--follow` prints before following, unless `--limit` says. */
export const FOLLOW_HISTORY = 10;
/** Page size of the polls of `--follow` (the API's largest). */
const POLL_PAGE = 500;

/** The detail fields worth a place in the table, in order; the rest is in `--json`. */
const DETAIL_FIELDS: readonly string[] = [
  "version",
  "rolled_back_to",
  "message",
  "file_count",
  "email",
  "scope",
  "reason",
  "method",
  "previous_method",
  "client",
  "email_domain",
  "new_user",
  "description",
];

/** Widths of the fixed columns (an ISO time, the longest event type, a `tok_`/`usr_` id). */
const WIDTHS = { time: 24, type: 27, actor: 30, target: 24 } as const;

/** The header line of the table. */
export const AUDIT_HEADER: string = row(["TIME", "TYPE", "ACTOR", "TARGET", "DETAILS"]);

function row(cells: [string, string, string, string, string]): string {
  const [time, type, actor, target, details] = cells;
  return [
    time.padEnd(WIDTHS.time),
    type.padEnd(WIDTHS.type),
    actor.padEnd(WIDTHS.actor),
    target.padEnd(WIDTHS.target),
    details,
  ].join("  ").trimEnd();
}

/**
 * What an entry is about, in a few words: `tenant/namespace[/environment]`
 * (`(installation)` for installation-level entries) and the token's public
 * prefix when it is about a token.
 *
 * @param e the entry
 * @returns the target text
 *
 * @example
 * ```ts
 * import { auditTarget } from "./audit.ts";
 * const t = auditTarget({ tenant_slug: "acme", namespace_slug: "web", token_prefix: "svc_read_AbCdE" });
 * if (t !== "acme/web svc_read_AbCdE") throw new Error(t);
 * if (auditTarget({ tenant_slug: null }) !== "(installation)") throw new Error();
 * ```
 */
export function auditTarget(e: AuditEntryInfo): string {
  const scope = typeof e.tenant_slug === "string"
    ? [e.tenant_slug, e.namespace_slug, e.environment_slug].filter((x) => typeof x === "string")
      .join("/")
    : "(installation)";
  return typeof e.token_prefix === "string" ? `${scope} ${e.token_prefix}` : scope;
}

/**
 * An entry's details as `name=value` pairs of the fields a reader looks
 * for first (strings with spaces quoted), after `result=failure` when the
 * request failed.
 *
 * @param e the entry
 * @returns the details text ("" when none of the fields is there)
 *
 * @example
 * ```ts
 * import { auditDetails } from "./audit.ts";
 * const d = auditDetails({ details: { version: 3, message: "add dark", file_count: 2, closure_hash: "sha256:…" } });
 * if (d !== 'version=3 message="add dark" file_count=2') throw new Error(d);
 * if (auditDetails({ result: "failure", details: { reason: "state" } }) !== "result=failure reason=state") throw new Error();
 * ```
 */
export function auditDetails(e: AuditEntryInfo): string {
  const parts: string[] = e.result === "failure" ? ["result=failure"] : [];
  const details = e.details ?? {};
  for (const field of DETAIL_FIELDS) {
    const v = details[field];
    if (v === undefined || v === null) continue;
    const text = typeof v === "string" && /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
    parts.push(`${field}=${text}`);
  }
  return parts.join(" ");
}

/**
 * One entry as a table line: time, type, actor, target and details, each
 * made safe for the terminal (no control characters, no line breaks).
 *
 * @param e the entry
 * @returns the line
 *
 * @example
 * ```ts
 * import { auditLine } from "./audit.ts";
 * const line = auditLine({
 *   timestamp: "2030-01-01T00:00:00.000Z", type: "manifest.pushed", actor_id: "usr_1",
 *   tenant_slug: "acme", namespace_slug: "web", details: { version: 2, message: "x\u001b[2J" },
 * });
 * if (!line.startsWith("2030-01-01T00:00:00.000Z  manifest.pushed ") || line.includes("\u001b")) {
 *   throw new Error(line);
 * }
 * ```
 */
export function auditLine(e: AuditEntryInfo): string {
  const text = (v: unknown) => cellText(typeof v === "string" ? v : v == null ? "-" : String(v));
  return row([
    text(e.timestamp),
    text(e.type),
    text(e.actor_id),
    text(auditTarget(e)),
    cellText(auditDetails(e)),
  ]);
}

/**
 * The `since` of a poll that looks {@linkcode FOLLOW_LAG_MS} back from an
 * entry id: an entry id made of the time `lagMs` before the id's own time
 * (ULIDs begin with their millisecond time) and the smallest random part.
 *
 * @param id the newest entry id seen
 * @param lagMs how far back to look again
 * @returns an entry id to pass as `since`
 *
 * @example
 * ```ts
 * import { sinceBefore } from "./audit.ts";
 * const id = "01J0000001ZZZZZZZZZZZZZZZZ";
 * const since = sinceBefore(id, 0);
 * if (since !== "01J00000010000000000000000" || !(since < id)) throw new Error(since);
 * if (!(sinceBefore(id, 5000) < since)) throw new Error();
 * ```
 */
export function sinceBefore(id: string, lagMs: number): string {
  let t = 0;
  for (const ch of id.slice(0, 10)) t = t * 32 + CROCKFORD.indexOf(ch);
  let ms = Math.max(0, t - lagMs);
  let time = "";
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[ms % 32]! + time;
    ms = Math.floor(ms / 32);
  }
  return time + "0".repeat(16);
}

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

const EXAMPLES = "\nExamples:\n" +
  "  cfgtool audit list --tenant acme\n" +
  "  cfgtool audit list --tenant acme --namespace web --type manifest.pushed --limit 20\n" +
  "  cfgtool audit list --tenant acme --token-id tok_01J0… --json\n" +
  "  cfgtool audit list --tenant acme --follow\n" +
  "  cfgtool audit list --follow --type tenant.deleted --json | jq .actor_id\n";

const ABOUT = "\nOutput:\n" +
  "  A table, newest first: TIME (UTC), TYPE, ACTOR (user id, token id, or system),\n" +
  "  TARGET (tenant/namespace[/environment] and a token's prefix) and DETAILS (the\n" +
  "  details a reader looks for first; --json has them all). A page that has more\n" +
  "  after it ends with (more: --after <cursor>) on stderr.\n" +
  "  --json prints JSON lines: one entry per line, as GET /api/v1/audit gives it.\n" +
  "  --follow prints the latest entries (10, or --limit; 0 for none) oldest first,\n" +
  "  then each new entry as it appears, until Ctrl-C (exit 0).\n\n" +
  "Who may read: a superadmin, everything; a tenant admin, its tenant (name it with\n" +
  "--tenant when you administer several); a person signed in to a tenant, that tenant.\n\n" +
  "Event types: tenant.created, tenant.deleted, namespace.created, namespace.deleted,\n" +
  "manifest.pushed, manifest.rolled_back, admin.added, admin.removed,\n" +
  "tenant.login_policy_changed, login.succeeded, login.failed, session.revoked,\n" +
  "token.created, token.rotated, token.revoked, token.expired, token.authenticated,\n" +
  "store.migration_started, store.migration_finished (the installation's own).\n";

/**
 * Registers `audit` and its subcommand `list`.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerAuditCommands } from "./audit.ts";
 * const program = new Command();
 * registerAuditCommands(program);
 * const audit = program.commands.find((c) => c.name() === "audit");
 * if (audit?.commands[0]?.name() !== "list") throw new Error();
 * ```
 */
export function registerAuditCommands(program: Command): void {
  const audit = program
    .command("audit")
    .description("Read the audit log of a cfgtool service (event types: docs/api.md, Audit).")
    .addHelpText("after", EXAMPLES);

  withRemoteOptions(
    audit.command("list").description(
      "List audit entries, newest first, with the API's filters; or follow the log as it grows.",
    ),
  )
    .option("--tenant <slug>", "only this tenant's entries")
    .option("--namespace <slug>", "only entries of this namespace")
    .option("--token-id <id>", "only entries about this token (tok_…)")
    .option("--type <type>", "only this event type, e.g. manifest.pushed")
    .option("--limit <n>", "page size (default 50; with --follow, entries shown first, default 10)")
    .option("--after <cursor>", "continue after this cursor (printed at the end of a page)")
    .option("--json", "print JSON lines: one entry per line, as the API gives it")
    .option("--follow", "keep printing new entries, oldest first, until Ctrl-C")
    .option("--interval <duration>", "how often --follow asks for new entries: 1s, 10s", "2s")
    .addHelpText("after", ABOUT + EXAMPLES)
    .action(async (opts) => {
      const follow = opts.follow === true;
      if (follow && opts.after !== undefined) {
        throw new UsageError(
          "--after pages back through older entries; it does not go with --follow",
        );
      }
      const limit = opts.limit === undefined
        ? undefined
        : parseWholeNumber(opts.limit, "--limit", follow ? 0 : 1);
      const interval = parseDuration(opts.interval, "--interval");
      const filters: AuditQuery = {
        ...(opts.tenant === undefined ? {} : { tenant: opts.tenant }),
        ...(opts.namespace === undefined ? {} : { namespace: opts.namespace }),
        ...(opts.tokenId === undefined ? {} : { token_id: opts.tokenId }),
        ...(opts.type === undefined ? {} : { type: opts.type }),
      };
      const client = await openClient(opts);
      const json = opts.json === true;
      if (!follow) {
        const page = await client.listAudit({
          ...filters,
          ...(limit === undefined ? {} : { limit }),
          ...(opts.after === undefined ? {} : { after: opts.after }),
        });
        printEntries(page.items, json, true);
        if (page.next !== null) console.error(`(more: --after ${cellText(page.next)})`);
        return;
      }
      await followAudit(client, filters, {
        history: limit ?? FOLLOW_HISTORY,
        intervalMs: interval,
        json,
      });
    });
}

/** Prints entries in the order given, as a table (with its header) or as JSON lines. */
function printEntries(entries: AuditEntryInfo[], json: boolean, header: boolean): void {
  if (json) {
    for (const e of entries) console.log(jsonLine(e));
    return;
  }
  if (header) {
    if (entries.length === 0) return console.log("(none)");
    console.log(AUDIT_HEADER);
  }
  for (const e of entries) console.log(auditLine(e));
}

/** Errors a follower waits out: the service is away, slow, busy or failing for now. */
function passing(err: unknown): boolean {
  if (!(err instanceof CfgtoolError)) return false;
  return err.code === "unreachable" || err.code === "timeout" || err.status === 429 ||
    err.status >= 500;
}

/**
 * Follows the log: prints the latest `history` entries oldest first, then
 * every `intervalMs` the new ones, until SIGINT or SIGTERM. A failure of
 * the first request ends it (the error is the command's); later passing
 * failures (the service away or busy) are reported on stderr and retried.
 */
async function followAudit(
  client: ServiceClient,
  filters: AuditQuery,
  options: { history: number; intervalMs: number; json: boolean },
): Promise<void> {
  const printed = new Set<string>();
  let cursor: string | null = null;

  /** The newest entry of the log the filters read from (tenant only), or null. */
  const newestOfLog = async () => {
    const head = await client.listAudit({
      ...(filters.tenant === undefined ? {} : { tenant: filters.tenant }),
      limit: 1,
    });
    return head.items[0]?.id ?? null;
  };

  /** Every entry the filters select newer than `since` (all when undefined), in any order. */
  const newer = async (since: string | undefined) => {
    const out: AuditEntryInfo[] = [];
    let after: string | undefined;
    do {
      const page = await client.listAudit({
        ...filters,
        limit: POLL_PAGE,
        ...(since === undefined ? {} : { since }),
        ...(after === undefined ? {} : { after }),
      });
      out.push(...page.items);
      after = page.next ?? undefined;
    } while (after !== undefined);
    return out;
  };

  // What there is now: the cursor, the entries a first poll would find again
  // (not new), and the latest entries to show first.
  cursor = await newestOfLog();
  const latest = await client.listAudit({ ...filters, limit: Math.max(1, options.history) });
  const start = cursor;
  const existing = start === null
    ? []
    : (await newer(sinceBefore(start, FOLLOW_LAG_MS))).filter((e) => e.id! <= start);
  for (const e of [...latest.items, ...existing]) {
    if (typeof e.id === "string") printed.add(e.id);
  }
  if (!options.json) console.log(AUDIT_HEADER);
  printEntries(options.history === 0 ? [] : [...latest.items].reverse(), options.json, false);

  let stopped = false;
  let wake: () => void = () => {};
  let interrupts = 0;
  const stop = () => {
    stopped = true;
    wake();
    if (++interrupts > 1) Deno.exit(130); // a second Ctrl-C: do not wait for a request
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
  try {
    while (!stopped) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (stopped) break;
      try {
        const head = await newestOfLog();
        const since = cursor === null ? undefined : sinceBefore(cursor, FOLLOW_LAG_MS);
        const fresh = (await newer(since)).filter((e) =>
          typeof e.id === "string" && !printed.has(e.id)
        );
        fresh.sort((a, b) => (a.id! < b.id! ? -1 : a.id! > b.id! ? 1 : 0));
        printEntries(fresh, options.json, false);
        for (const e of fresh) printed.add(e.id!);
        if (head !== null && (cursor === null || head > cursor)) cursor = head;
        // forget what the next poll cannot return again
        if (cursor !== null) {
          const floor = sinceBefore(cursor, FOLLOW_LAG_MS * 2);
          for (const id of printed) if (id < floor) printed.delete(id);
        }
      } catch (err) {
        if (!passing(err)) throw err;
        const message = err instanceof Error ? err.message : String(err);
        console.error(
          cellText(`audit: ${message}; trying again in ${options.intervalMs / 1000} s`),
        );
      }
    }
  } finally {
    Deno.removeSignalListener("SIGINT", stop);
    Deno.removeSignalListener("SIGTERM", stop);
  }
}
