/**
 * `cfgtool change …`: change requests of a namespace on a remote service
 * (list, show, approve, reject, comment, apply now or at a time, cancel a
 * schedule, withdraw, open a progressive rollout), and
 * `cfgtool namespace protect` (lib/cli/namespace.ts registers it from
 * here). `cfgtool push --propose` opens a request from a directory
 * (lib/cli/push.ts).
 *
 * @module
 */
import type { Command } from "commander";
import { Option } from "commander";
import type { ChangeRequestDetails, ChangeRequestInfo, ChangeStatus } from "../client/api.ts";
import { UsageError } from "../errors.ts";
import { CHANGE_STATUSES } from "../protocol/changes.ts";
import { parseDuration, parseTimestamp } from "./duration.ts";
import { pageQuery, printPage, withPageOptions } from "./listing.ts";
import {
  cell,
  openClient,
  parseWholeNumber,
  printFields,
  printJson,
  type RemoteOptionValues,
  withRemoteOptions,
} from "./remote_options.ts";

const EXAMPLES = "\nExamples:\n" +
  '  cfgtool push ./flags --tenant acme --namespace checkout --propose --message "new rule"\n' +
  "  cfgtool change list --tenant acme --namespace checkout --status open,approved\n" +
  "  cfgtool change show cr_01J0… --tenant acme --namespace checkout\n" +
  '  cfgtool change approve cr_01J0… --tenant acme --namespace checkout --comment "ok"\n' +
  "  cfgtool change apply cr_01J0… --tenant acme --namespace checkout --at 2026-12-24T06:00:00Z\n" +
  "  cfgtool change rollout new-checkout --tenant acme --namespace checkout --env production \\\n" +
  '      --steps 5,25,50,100 --every 1d --message "new checkout for everyone"\n';

/** The namespace options every subcommand takes. */
interface Scope {
  tenant: string;
  namespace: string;
}

/**
 * Registers `change` and its subcommands.
 *
 * @param program the root command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerChangeCommands } from "./change.ts";
 * const program = new Command();
 * registerChangeCommands(program);
 * const change = program.commands.find((c) => c.name() === "change");
 * const names = change?.commands.map((c) => c.name()).join();
 * if (names !== "list,show,approve,reject,comment,apply,cancel,withdraw,rollout") throw new Error(names);
 * ```
 */
export function registerChangeCommands(program: Command): void {
  const change = program
    .command("change")
    .description(
      "Review changes before they land: list, read, approve or reject change requests, apply " +
        "them now or at a time, and roll a flag out in steps. Protected environments " +
        "(`cfgtool namespace protect`) only change through an approved request.",
    )
    .addHelpText("after", EXAMPLES);

  withPageOptions(
    scopeOnly(
      change.command("list").description("List a namespace's change requests, newest first."),
    ),
  )
    .option(
      "--status <list>",
      `only these statuses, comma-separated (${CHANGE_STATUSES.join(", ")})`,
    )
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool change list --tenant acme --namespace checkout --status open\n",
    )
    .action(async (opts) => {
      const status = opts.status === undefined ? undefined : statuses(opts.status);
      const page = await (await openClient(opts)).listChangeRequests(opts.tenant, opts.namespace, {
        ...pageQuery(opts),
        ...(status === undefined ? {} : { status }),
      });
      printPage(
        page,
        opts.json === true,
        ["ID", "STATUS", "APPROVALS", "IMPACT", "AUTHOR", "UPDATED", "MESSAGE"],
        (r) => [
          r.id,
          r.status,
          `${r.approvals.length}/${r.required_approvals}`,
          cell(r.impact),
          cell(r.author_email ?? r.author_id),
          r.updated_at,
          firstLine(r.message),
        ],
      );
    });

  scoped(
    change.command("show")
      .description(
        "Show a change request: status, impact, approvals, what it changes value by value, " +
          "the files' line diff against its base (--diff), comments.",
      )
      .argument("<id>", "change request id (cr_…)"),
  )
    .option("--diff", "also print each changed file, before and after")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool change show cr_01J0… --tenant acme --namespace checkout --diff\n",
    )
    .action(async (id, opts) => {
      const d = await (await openClient(opts)).getChangeRequest(opts.tenant, opts.namespace, id);
      if (opts.json) return printJson(d);
      await printDetails(d, opts.diff === true);
    });

  step(change, "approve", "Approve a change request (people only; not its author).")
    .option("--comment <text>", "a note with the approval")
    .option(
      "--revision <n>",
      "approve only if its files are still this revision (the one `change show` printed)",
    )
    .action(async (id, opts) => {
      await runStep(opts, id, "approve", {
        ...(opts.comment === undefined ? {} : { comment: opts.comment }),
        ...revisionOf(opts.revision),
      });
    });

  step(change, "reject", "Reject a change request, with the reason; it is closed.")
    .requiredOption("--comment <text>", "why")
    .option("--revision <n>", "reject only if its files are still this revision")
    .action(async (id, opts) => {
      await runStep(opts, id, "reject", { comment: opts.comment, ...revisionOf(opts.revision) });
    });

  step(change, "comment", "Comment on a change request.")
    .requiredOption("--text <text>", "the comment")
    .action(async (id, opts) => {
      const c = await (await openClient(opts)).commentOnChangeRequest(
        opts.tenant,
        opts.namespace,
        id,
        opts.text,
      );
      if (opts.json) return printJson(c);
      console.log(`commented on ${id}`);
    });

  step(
    change,
    "apply",
    "Apply an approved change request now (a new version), or schedule it with --at. A " +
      "rollout request starts (or resumes) its steps.",
  )
    .option("--at <time>", "apply at this RFC 3339 time (2026-12-24T06:00:00Z) instead of now")
    .action(async (id, opts) => {
      const at = opts.at === undefined ? undefined : parseTimestamp(opts.at, "--at");
      await runStep(opts, id, "apply", at === undefined ? {} : { at: at.toISOString() });
    });

  step(
    change,
    "cancel",
    "Cancel a scheduled apply, or stop a rollout after the steps it took (the request goes " +
      "back to approved).",
  ).action(async (id, opts) => {
    await runStep(opts, id, "cancel-schedule", {});
  });

  step(change, "withdraw", "Withdraw your own change request; it is closed.").action(
    async (id, opts) => {
      await runStep(opts, id, "withdraw", {});
    },
  );

  scoped(
    change.command("rollout")
      .description(
        "Open a progressive rollout: one change request whose approval sets the weights of the " +
          "flag's rollout in the environment step by step (each step a version). The flag needs " +
          "a rule with a rollout of two variations there.",
      )
      .argument("<flag>", "the flag's key"),
  )
    .requiredOption("--env <environment>", "the environment")
    .requiredOption("--steps <list>", "percentages, increasing, like 5,25,50,100")
    .requiredOption("--every <duration>", "time between steps: 1d, 6h, 30m (at least 1m)")
    .requiredOption("--message <text>", "what the rollout is for")
    .option("--variation <name>", "the variation rolled out (default: the rollout's first entry)")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool change rollout new-checkout --tenant acme --namespace checkout \\\n" +
        '      --env production --steps 5,25,50,100 --every 1d --message "new checkout"\n',
    )
    .action(async (flag, opts) => {
      const steps = opts.steps.split(",").map((s: string) => parseWholeNumber(s, "--steps"));
      const r = await (await openClient(opts)).openRollout(opts.tenant, opts.namespace, {
        flag,
        environment: opts.env,
        steps,
        every_ms: parseDuration(opts.every, "--every"),
        message: opts.message,
        ...(opts.variation === undefined ? {} : { variation: opts.variation }),
      });
      if (opts.json) return printJson({ change_request: r });
      printRequest(r);
    });
}

/**
 * Registers `namespace protect`: sets how many approvals changes to an
 * environment need.
 *
 * @param ns the `namespace` command
 *
 * @example
 * ```ts
 * import { Command } from "commander";
 * import { registerProtectCommand } from "./change.ts";
 * const ns = new Command("namespace");
 * registerProtectCommand(ns);
 * if (ns.commands[0]?.name() !== "protect") throw new Error();
 * ```
 */
export function registerProtectCommand(ns: Command): void {
  withRemoteOptions(
    ns.command("protect")
      .description(
        "Protect environments of a namespace: a push, rollback or console change that affects " +
          "one is refused (409 approval_required) unless it goes through a change request with " +
          "enough approvals. Without --env, prints the current protection.",
      )
      .argument("<namespace>", "the namespace"),
  )
    .requiredOption("--tenant <slug>", "the tenant")
    .addOption(
      new Option("--env <environment>", "an environment to set; repeatable")
        .argParser((v: string, prev: string[]) => [...prev, v]).default([] as string[], "none"),
    )
    .option("--approvals <n>", "approvals it needs, 0 to 5 (0 unprotects)", "1")
    .option("--json", "print the protection as JSON")
    .addHelpText(
      "after",
      "\nExamples:\n  cfgtool namespace protect checkout --tenant acme --env production --approvals 2\n" +
        "  cfgtool namespace protect checkout --tenant acme --env staging --approvals 0\n" +
        "  cfgtool namespace protect checkout --tenant acme\n",
    )
    .action(async (namespace, opts) => {
      const client = await openClient(opts);
      const current = await client.getProtection(opts.tenant, namespace);
      let shown = current;
      if (opts.env.length > 0) {
        const n = parseWholeNumber(opts.approvals, "--approvals");
        if (n > 5) throw new UsageError("--approvals must be 0 to 5");
        const environments = { ...current.environments };
        for (const env of opts.env as string[]) {
          if (n === 0) delete environments[env];
          else environments[env] = { required_approvals: n };
        }
        shown = await client.setProtection(opts.tenant, namespace, environments);
      }
      if (opts.json) return printJson(shown);
      const rows = Object.entries(shown.environments);
      if (rows.length === 0) console.log(`no protected environment in ${opts.tenant}/${namespace}`);
      for (const [env, p] of rows) {
        console.log(
          `${env}: ${p.required_approvals} approval${p.required_approvals === 1 ? "" : "s"}`,
        );
      }
    });
}

/** `--tenant`, `--namespace`, `--json` and the remote options. */
function scoped<A extends unknown[]>(cmd: Command<A>) {
  return scopeOnly(cmd).option("--json", "print JSON");
}

/** `--tenant`, `--namespace` and the remote options. */
function scopeOnly<A extends unknown[]>(cmd: Command<A>) {
  return withRemoteOptions(cmd)
    .requiredOption("--tenant <slug>", "the tenant")
    .requiredOption("--namespace <slug>", "the namespace");
}

/** A step on one request: `<id>` and the scope options. */
function step(change: Command, name: string, description: string) {
  return scoped(
    change.command(name).description(description).argument("<id>", "change request id (cr_…)"),
  ).addHelpText(
    "after",
    `\nExamples:\n  cfgtool change ${name} cr_01J0… --tenant acme --namespace checkout\n`,
  );
}

async function runStep(
  opts: Scope & RemoteOptionValues & { json?: boolean | undefined },
  id: string,
  name: "approve" | "reject" | "withdraw" | "apply" | "cancel-schedule",
  body: { comment?: string; at?: string; revision?: number },
): Promise<void> {
  const out = await (await openClient(opts)).changeRequestStep(
    opts.tenant,
    opts.namespace,
    id,
    name,
    body,
  );
  if (opts.json) return printJson(out);
  if (out.version !== null && name === "apply" && out.change_request.plan === null) {
    console.log(`version ${out.version}: ${id} applied`);
    return;
  }
  printRequest(out.change_request);
}

function printRequest(r: ChangeRequestInfo): void {
  printFields([
    ["id", r.id],
    ["status", r.status],
    ["message", r.message],
    ["author", r.author_email ?? r.author_id],
    ["base", `version ${r.base_version}`],
    ["revision", r.revision],
    ["changes", r.changed_paths],
    ["impact", r.impact],
    ["approvals", `${r.approvals.length} of ${r.required_approvals}`],
    ...(r.scheduled_at === null ? [] : [["scheduled", r.scheduled_at] as [string, unknown]]),
    ...(r.applied_version === null
      ? []
      : [["applied", `version ${r.applied_version}`] as [string, unknown]]),
    ...(r.failure === null ? [] : [["failure", r.failure] as [string, unknown]]),
    ...(r.plan === null ? [] : [[
      "rollout",
      `${r.plan.flag} in ${r.plan.environment}: ${r.plan.steps.join("% → ")}%, every ${
        r.plan.every_ms / 60_000
      } min, ${r.plan.done} of ${r.plan.steps.length} done`,
    ] as [string, unknown]]),
  ]);
}

async function printDetails(d: ChangeRequestDetails, diff: boolean): Promise<void> {
  const r = d.change_request;
  printRequest(r);
  for (const a of r.approvals) {
    console.log(
      `approved by ${a.email ?? a.user_id} at ${a.at}${a.comment ? `: ${a.comment}` : ""}`,
    );
  }
  if (r.rejection !== null) {
    console.log(`rejected by ${r.rejection.email ?? r.rejection.user_id}: ${r.rejection.comment}`);
  }
  console.log("");
  if (d.changes === null) console.log("(its base version was pruned: no value diff)");
  else {
    for (const c of d.changes) {
      const head = c.subject === "namespace"
        ? "namespace"
        : `${c.subject} ${c.key}${
          c.environment !== null && c.subject === "flag" ? ` in ${c.environment}` : ""
        }`;
      const lead = c.change === "changed" ? head : `${head} ${c.change}`;
      if (c.what.length === 0) console.log(lead);
      for (const w of c.what) console.log(`${lead}: ${w}`);
    }
  }
  if (diff) {
    // lazy: jsdiff loads only when a diff is printed
    const { createTwoFilesPatch } = await import("diff");
    for (const [path, after] of Object.entries(d.files)) {
      const before = d.base?.[path] ?? "";
      console.log("");
      console.log(
        createTwoFilesPatch(
          `${path} (version ${r.base_version})`,
          `${path} (proposed)`,
          before,
          after ?? "",
          "",
          "",
          { context: 3 },
        ).replace(/^=+\n/, "").trimEnd(),
      );
    }
  }
  for (const c of d.comments) {
    console.log(`\n${c.author_email ?? c.author_id} at ${c.at}:\n${c.text}`);
  }
  const can = Object.entries(d.can).filter(([, ok]) => ok).map(([k]) => k);
  console.log(`\nyou may: ${can.length === 0 ? "nothing" : can.join(", ")}`);
}

function revisionOf(text: string | undefined): { revision?: number } {
  return text === undefined ? {} : { revision: parseWholeNumber(text, "--revision", 1) };
}

function statuses(text: string): ChangeStatus[] {
  return text.split(",").map((s) => {
    const t = s.trim();
    if (!(CHANGE_STATUSES as readonly string[]).includes(t)) {
      throw new UsageError(
        `--status must be among ${CHANGE_STATUSES.join(", ")}, not ${JSON.stringify(t)}`,
      );
    }
    return t as ChangeStatus;
  });
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
