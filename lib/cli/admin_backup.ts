/**
 * `cfgtool admin backup|restore|check`: backups of the KV store and the
 * full check of a store, on the server host (lib/store/backup/backup.ts,
 * lib/store/backup/restore.ts, lib/store/backup/check.ts do the work). The token key
 * file is not in the KV, so not in a backup: these commands say where it
 * is, and `restore` and `check` compare it with the fingerprint the store
 * records when they can find it.
 *
 * @module
 */
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { ProblemsError, UsageError } from "../errors.ts";
import { DEFAULT_KV_PATH, kvLocation } from "../store/kv.ts";
import type { StoreCheckReport } from "../store/backup/check.ts";

const KV_HELP = "KV store: a file path or a KV Connect URL (default: $CFGTOOL_KV, " +
  "else ./cfgtool-data/kv.sqlite3, as for serve)";
const KEY_HELP = "token key file to compare with the store's key fingerprint (default: " +
  "$CFGTOOL_TOKEN_KEY_FILE, else token.key beside the KV file when it exists)";

const BACKUP_HELP = `
The backup is one JSON-lines file: a header, one line per KV entry (key, value,
expiry) and a closing line with the entry count and the SHA-256 of the rest, so
restore refuses a file that was cut short or accidentally damaged. The SHA-256
is no protection against someone who means harm: whoever can write a backup can
write any record (a token, an admin) into the store restored from it. Keep
backups as private as the store itself. The file is written beside --out under
a temporary name, mode 0600, and renamed when complete.

Sign-ins in progress (console sign-in links, email sign-in codes, CLI sign-ins)
and sign-in rate counters are left out: they are single-use or short-lived.

A store file is copied as of one moment first (SQLite VACUUM INTO), so the
backup is consistent while cfgtool serve keeps running: every version has its
files, every token its indexes. A KV Connect URL has no such copy: it is listed
twice and the backup is kept only if nothing changed in between; stop the
servers first, or use the backend's own backups.

The token key file (token.key beside the store, or --token-key-file of serve)
is NOT in the backup: the tokens and sessions of a restored store authenticate
only with that same key. Back it up separately, and keep it apart from the
backups.

Examples:
  cfgtool admin backup --kv /var/lib/cfgtool/kv.sqlite3 --out /backup/cfgtool-$(date +%F).jsonl
  (umask 077; cfgtool admin backup --kv /var/lib/cfgtool/kv.sqlite3 --out - | gzip > /backup/cfgtool.jsonl.gz)
`;

const RESTORE_HELP = `
Only into an empty store: a new --kv path (a store that holds anything is
refused, nothing is overwritten). The file is read once, into a private copy
(beside the new store when its directory exists, else in the temporary
directory), and the whole copy is checked before anything is written: a backup
that was cut short or damaged, or that holds a key no backup holds, is refused.
The check is against accidents: a backup file must be protected like the store
itself, since whoever can write it can write any record into the restored store.
Entries are written
in atomic batches; progress goes to stderr. Then the full check of
\`cfgtool admin check\` runs on the restored store; the exit status is 1 when it
finds a problem.

Start cfgtool serve on the restored store with the token key file of the
installation the backup came from (token.key beside the new KV file, or
--token-key-file): with another key serve refuses to start, because no token or
session of the store would authenticate.

The restored store is the installation as it was when the backup was taken:
revocations made since are lost. Tokens revoked after the backup are active
again, and sessions ended after it live again until their own expiry: revoke
them again after a restore (or run \`cfgtool admin rekey\`, which revokes every
token and session). Tokens issued after the backup are unknown.

Examples:
  cfgtool admin restore --kv /var/lib/cfgtool-new/kv.sqlite3 --in /backup/cfgtool-2026-11-22.jsonl
  gunzip -k /backup/cfgtool.jsonl.gz && \\
    cfgtool admin restore --kv ./restored/kv.sqlite3 --in /backup/cfgtool.jsonl \\
      --token-key-file /secrets/cfgtool/token.key
`;

const CHECK_HELP = `
Checks that the records of the store agree: every namespace head names a stored
version; every stored file is complete and hashes to its id, and every
version's files hash to its closure hash; service tokens, sessions, users and
admin memberships agree with their indexes; and, when a token key file is found,
that it is the key the store's tokens were digested with. Prints what it read,
warnings (harmless leftovers) and problems; exits 1 when there is a problem.
A store file is checked as a copy taken at one moment, so the check is exact
while cfgtool serve runs; a KV Connect store is read live.

Examples:
  cfgtool admin check --kv /var/lib/cfgtool/kv.sqlite3
  cfgtool admin check --kv ./restored/kv.sqlite3 --token-key-file /secrets/cfgtool/token.key --json
`;

/**
 * Registers `backup`, `restore` and `check` under `admin`.
 *
 * @param admin the `admin` command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerBackupCommands } from "./admin_backup.ts";
 * const admin = new Command("admin");
 * registerBackupCommands(admin);
 * const names = admin.commands.map((c) => c.name());
 * if (names.join() !== "backup,restore,check") throw new Error(names.join());
 * ```
 */
export function registerBackupCommands(admin: Command): void {
  admin.command("backup")
    .description(
      "Write every entry of the KV store to a backup file, consistent while the server runs.",
    )
    .option("--kv <location>", KV_HELP)
    .requiredOption("--out <file>", "the backup file to write (mode 0600), or - for stdout")
    .option("--json", "print {path, entries, bytes, sha256, expired, header} as JSON")
    .addHelpText("after", BACKUP_HELP)
    .action(async (opts) => {
      const spec = kvSpec(opts.kv);
      const { backupStore } = await import("../store/backup/backup.ts");
      const r = await backupStore({ kv: spec, out: opts.out });
      const say = r.path === null ? console.error : console.log;
      if (opts.json) {
        say(JSON.stringify({ ...r, key_file: keyFileHint(spec) }, null, 2));
        return;
      }
      const how = r.header.source.kind === "sqlite_snapshot"
        ? `a snapshot of ${r.header.source.location} taken ${r.header.created_at}`
        : `${r.header.source.location}, listed twice without a change, ${r.header.created_at}`;
      say(
        `wrote ${r.path ?? "the backup to stdout"}: ${count(r.entries, "entry", "entries")}, ` +
          `${size(r.bytes)}, sha256 ${r.sha256}`,
      );
      say(`  from ${how}`);
      if (r.expired > 0) say(`  left out ${count(r.expired, "expired entry", "expired entries")}`);
      if (r.transient > 0) {
        say(
          `  left out ${
            count(
              r.transient,
              "sign-in in progress or rate counter",
              "sign-ins in progress and rate counters",
            )
          }`,
        );
      }
      say(`  not in the backup: the token key file; back it up separately (${keyFileHint(spec)})`);
    });

  admin.command("restore")
    .description(
      "Restore a backup file into an empty KV store, then run the full check on it.",
    )
    .option("--kv <location>", KV_HELP)
    .requiredOption("--in <file>", "the backup file (from `cfgtool admin backup`)")
    .option("--token-key-file <file>", KEY_HELP)
    .option("--quiet", "no progress lines on stderr")
    .option("--json", "print {restored, check} as JSON")
    .addHelpText("after", RESTORE_HELP)
    .action(async (opts) => {
      const spec = kvSpec(opts.kv);
      if (kvLocation(spec).kind === "memory") {
        throw new UsageError("--kv :memory: is a store private to one process: name a KV file");
      }
      const [{ restoreStore }, { stageBackup }, { openKv }] = await Promise.all([
        import("../store/backup/restore.ts"),
        import("../store/backup/stage.ts"),
        import("../store/kv.ts"),
      ]);
      // the whole file first, read once into a private copy: a bad backup never
      // touches (or creates) the target, and the copy is what is restored
      const loc = kvLocation(spec);
      const besideTarget = loc.kind === "file" &&
        await Deno.stat(loc.dir).then((s) => s.isDirectory, () => false);
      const staged = await stageBackup(opts.in, besideTarget ? { dir: loc.dir } : {});
      let kv: Deno.Kv | undefined;
      try {
        kv = await openKv(spec);
        const progress = opts.quiet ? undefined : throttledProgress();
        const r = await restoreStore(
          kv,
          opts.in,
          progress === undefined
            ? { target: spec, staged }
            : { target: spec, staged, onProgress: progress },
        );
        const report = await runCheck(kv);
        const key = await keyVerdict(spec, opts.tokenKeyFile, report.key_fingerprint);
        if (opts.json) {
          console.log(
            JSON.stringify({ restored: r, check: { ...report, token_key: key } }, null, 2),
          );
        } else {
          const h = r.header;
          console.log(
            `restored ${count(r.written, "entry", "entries")} into ${spec} from ${opts.in}`,
          );
          console.log(
            `  backup of ${h.source.location} taken ${h.created_at} by cfgtool ${h.cfgtool_version}`,
          );
          if (r.expired > 0) {
            console.log(`  left out ${count(r.expired, "entry", "entries")} that expired since`);
          }
          printReport(report, key);
          if (key.status === "not_checked" && report.key_fingerprint !== null) {
            console.log(
              `next: put the token key file of the installation this backup came from at ` +
                `${keyFileHint(spec)} (mode 0600), or give it to cfgtool serve with ` +
                "--token-key-file; serve refuses any other key",
            );
          }
        }
        failOnProblems(report, key);
      } finally {
        kv?.close();
        await staged.remove();
      }
    });

  admin.command("check")
    .description(
      "Check that the records of a KV store agree (heads, versions and their files, tokens, " +
        "sessions, users); exit 1 on any problem.",
    )
    .option("--kv <location>", KV_HELP)
    .option("--token-key-file <file>", KEY_HELP)
    .option("--json", "print {counts, key_fingerprint, token_key, problems, warnings} as JSON")
    .addHelpText("after", CHECK_HELP)
    .action(async (opts) => {
      const spec = kvSpec(opts.kv);
      const loc = kvLocation(spec);
      if (loc.kind === "memory") {
        throw new UsageError("--kv :memory: is a store private to one process: name the KV file");
      }
      let report: StoreCheckReport;
      let from: string;
      if (loc.kind === "file") {
        const { snapshotKvFile } = await import("../store/backup/snapshot.ts");
        const dir = await Deno.makeTempDir({ prefix: "cfgtool-check-" });
        try {
          const at = new Date();
          await snapshotKvFile(loc.path, join(dir, "snapshot.sqlite3"));
          const kv = await Deno.openKv(join(dir, "snapshot.sqlite3"));
          try {
            report = await runCheck(kv, at);
          } finally {
            kv.close();
          }
          from = `${loc.path} (a snapshot taken ${at.toISOString()})`;
        } finally {
          await Deno.remove(dir, { recursive: true }).catch(() => {});
        }
      } else {
        const { openKv } = await import("../store/kv.ts");
        const kv = await openKv(spec);
        try {
          report = await runCheck(kv);
        } finally {
          kv.close();
        }
        from = `${spec} (read live)`;
      }
      const key = await keyVerdict(spec, opts.tokenKeyFile, report.key_fingerprint);
      if (opts.json) {
        console.log(JSON.stringify({ ...report, token_key: key }, null, 2));
      } else {
        console.log(`checked ${from}`);
        printReport(report, key);
      }
      failOnProblems(report, key);
    });
}

/** The `--kv` value, else `CFGTOOL_KV`, else the default path: the same rule as `serve`. */
function kvSpec(kv: string | undefined): string {
  return kv ?? Deno.env.get("CFGTOOL_KV") ?? DEFAULT_KV_PATH;
}

/** Where the token key file of a store is looked for. */
function keyFileHint(spec: string): string {
  const env = Deno.env.get("CFGTOOL_TOKEN_KEY_FILE");
  if (env !== undefined) return env;
  const loc = kvLocation(spec);
  return loc.kind === "file"
    ? join(loc.dir, "token.key")
    : "the file passed to cfgtool serve as --token-key-file";
}

async function runCheck(kv: Deno.Kv, now?: Date): Promise<StoreCheckReport> {
  const [{ checkStore }, { closureHashOfDigests }] = await Promise.all([
    import("../store/backup/check.ts"),
    import("../closure/hash.ts"),
  ]);
  return await checkStore(
    kv,
    now === undefined ? { closureHashOfDigests } : {
      closureHashOfDigests,
      now,
    },
  );
}

/** How a token key file compares with the store's fingerprint. */
interface KeyVerdict {
  /** The file compared, or null when none was found. */
  path: string | null;
  status: "matches" | "differs" | "not_checked" | "no_fingerprint";
}

/**
 * Compares the token key file (the option, else `CFGTOOL_TOKEN_KEY_FILE`,
 * else `token.key` beside a KV file when it exists) with the fingerprint
 * the store records, without creating or recording anything.
 */
async function keyVerdict(
  spec: string,
  option: string | undefined,
  recorded: string | null,
): Promise<KeyVerdict> {
  let path = option ?? Deno.env.get("CFGTOOL_TOKEN_KEY_FILE") ?? null;
  const loc = kvLocation(spec);
  if (path === null && loc.kind === "file") {
    const beside = join(dirname(loc.path), "token.key");
    path = await Deno.stat(beside).then(() => beside, () => null);
  }
  if (path === null) return { path: null, status: "not_checked" };
  if (recorded === null) return { path, status: "no_fingerprint" };
  // lazy: auth/ (node:crypto) loads only here
  const [{ importTokenKey, KEY_CHECK_INPUT }, { hmacHex }] = await Promise.all([
    import("../auth/hmac_key.ts"),
    import("../auth/digest.ts"),
  ]);
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (err) {
    throw new UsageError(`Cannot read the token key file ${path}: ${(err as Error).message}`);
  }
  const fingerprint = await hmacHex(await importTokenKey(bytes), KEY_CHECK_INPUT);
  return { path, status: fingerprint === recorded ? "matches" : "differs" };
}

function printReport(report: StoreCheckReport, key: KeyVerdict): void {
  const c = report.counts;
  console.log(
    `  ${count(c.tenants, "tenant", "tenants")}, ${
      count(c.namespaces, "namespace", "namespaces")
    }, ` +
      `${count(c.versions, "version", "versions")} (${c.versions_verified} hashed to their ` +
      `closure hash), ${count(c.blobs, "blob", "blobs")} (${size(c.blob_bytes)})`,
  );
  console.log(
    `  ${count(c.tokens, "token", "tokens")}, ${count(c.sessions, "session", "sessions")}, ` +
      `${count(c.users, "user", "users")}`,
  );
  const keyLine = {
    matches: `token key ${key.path}: the key this store's tokens were digested with`,
    differs: `token key ${key.path}: NOT the key this store's tokens were digested with`,
    not_checked: "token key: not checked (no --token-key-file, no token.key beside the store)",
    no_fingerprint: `token key ${key.path}: not checked (the store records no fingerprint)`,
  }[key.status];
  console.log(`  ${keyLine}`);
  for (const w of report.warnings) console.log(`warning: ${w.where}: ${w.message}`);
  if (report.problems.length === 0 && key.status !== "differs") console.log("no problems found");
}

/** Exit 1 through the usual error path when the check found a problem. */
function failOnProblems(report: StoreCheckReport, key: KeyVerdict): void {
  const problems = report.problems.map((p) => ({ path: p.where, message: p.message }));
  if (key.status === "differs") {
    problems.push({
      path: `token key ${key.path}`,
      message: "not the key this store's tokens were digested with: no token or session " +
        "would authenticate (use the installation's original key file)",
    });
  }
  if (problems.length > 0) {
    throw new ProblemsError(problems, "store_check_failed", `${problems.length} problem(s) found`);
  }
}

/** Progress on stderr at most once a second, starting after the first second. */
function throttledProgress(): (done: number, total: number) => void {
  const started = Date.now();
  let last = started;
  return (done, total) => {
    const t = Date.now();
    if (t - last < 1000 && done < total) return;
    if (t - started < 1000) return;
    last = t;
    const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
    console.error(
      `restoring: ${done.toLocaleString("en-US")} of ${
        total.toLocaleString("en-US")
      } entries (${pct}%)`,
    );
  };
}

function count(n: number, one: string, many: string): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
