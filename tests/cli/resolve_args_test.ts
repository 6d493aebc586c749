import fc from "fast-check";
import type { Command } from "commander-core";
import { assert, assertEquals } from "../assert.ts";
import { buildProgram } from "../../lib/cli/program.ts";
import { parseResolveArgs, type ResolveInvocation } from "../../lib/cli/resolve_args.ts";

/**
 * What the real command tree makes of `args`: the resolve action's
 * arguments, or undefined when commander refuses them or does not run it.
 */
async function commanderParse(args: string[]): Promise<ResolveInvocation | undefined> {
  const program = buildProgram() as unknown as Command;
  let got: ResolveInvocation | undefined;
  const quiet = { writeOut: () => {}, writeErr: () => {} };
  program.configureOutput(quiet);
  for (const cmd of program.commands) cmd.configureOutput(quiet);
  const resolve = program.commands.find((c) => c.name() === "resolve")!;
  resolve.action(
    (workspace: string, opts: { variable: string; context: string[]; json?: true }) => {
      got = {
        workspace,
        variable: opts.variable,
        context: opts.context,
        json: opts.json === true,
      };
    },
  );
  try {
    await program.parseAsync(args, { from: "user" });
  } catch {
    return undefined;
  }
  return got;
}

const PLAIN: string[][] = [
  ["resolve", "ws", "--variable", "v"],
  ["resolve", "ws", "--variable=v"],
  ["resolve", "--variable", "v", "ws"],
  ["resolve", "ws", "--variable", "v", "--json"],
  ["resolve", "--json", "ws", "--json", "--variable", "v"],
  ["resolve", "ws", "--variable", "v", "--context", "a.b=1", "--context=c=true", "--context", "d="],
  ["resolve", "ws", "--context", "x=-1", "--variable", "v", "--context", 'q="a b"'],
  ["resolve", "", "--variable", ""],
  ["resolve", "ws", "--variable=", "--context="],
  ["resolve", "ws", "--variable", "a=b"],
];

const LEFT_TO_COMMANDER: string[][] = [
  [],
  ["lint", "ws"],
  ["--version"],
  ["resolve"],
  ["resolve", "ws"],
  ["resolve", "--variable", "v"],
  ["resolve", "ws", "other", "--variable", "v"],
  ["resolve", "ws", "--variable"],
  ["resolve", "ws", "--variable", "--json"],
  ["resolve", "ws", "--variable", "-v"],
  ["resolve", "ws", "--variable", "v", "--variable", "w"],
  ["resolve", "ws", "--variable", "v", "--context"],
  ["resolve", "ws", "--variable", "v", "--help"],
  ["resolve", "ws", "--variable", "v", "-h"],
  ["resolve", "ws", "--variable", "v", "--json=true"],
  ["resolve", "ws", "--variable", "v", "--jsn"],
  ["resolve", "ws", "--variable", "v", "--"],
  ["resolve", "-", "--variable", "v"],
  ["resolve", "-5", "--variable", "v"],
  ["resolve", "ws", "--variablex=v"],
  ["-V", "resolve", "ws", "--variable", "v"],
];

Deno.test("the fast path reads plain resolve command lines to what commander reads", async () => {
  for (const args of PLAIN) {
    const fast = parseResolveArgs(args);
    assert(fast !== undefined, `not taken: ${JSON.stringify(args)}`);
    assertEquals(fast, await commanderParse(args), JSON.stringify(args));
  }
});

Deno.test("the fast path leaves help, errors and unusual forms to commander", () => {
  for (const args of LEFT_TO_COMMANDER) {
    assertEquals(parseResolveArgs(args), undefined, JSON.stringify(args));
  }
});

const value = fc.oneof(
  { weight: 8, arbitrary: fc.stringMatching(/^[a-z0-9.=_"]{0,6}$/) },
  { weight: 1, arbitrary: fc.constantFrom("-1", "--json", "-", "--", "") },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);
const option = fc.oneof(
  { weight: 3, arbitrary: value.map((v) => ["--context", v]) },
  { weight: 3, arbitrary: value.map((v) => [`--context=${v}`]) },
  { weight: 2, arbitrary: fc.constant(["--json"]) },
  { weight: 1, arbitrary: value.map((v) => ["--variable", v]) },
  { weight: 1, arbitrary: value.map((v) => [`--variable=${v}`]) },
);
const stray = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("--help", "-h", "--", "-", "extra", "--jsn", "--json=1"),
  },
);
/** Mostly plain command lines (one workspace, one --variable), some with a stray token. */
const commandLine = fc.tuple(
  value,
  value,
  fc.array(option, { maxLength: 4 }),
  stray,
  fc.nat(),
).map(([workspace, variable, options, stray, seed]) => {
  const parts = [[workspace], ["--variable", variable], ...options];
  if (stray !== undefined) parts.push([stray]);
  // a deterministic shuffle: options may come before or after the workspace
  const shuffled = parts.map((p, i) => ({ p, k: (seed * (i + 7)) % 11 }))
    .sort((a, b) => a.k - b.k)
    .flatMap((x) => x.p);
  return ["resolve", ...shuffled];
});

Deno.test("whatever the command line, the fast path never reads it otherwise than commander", async () => {
  let taken = 0;
  await fc.assert(
    fc.asyncProperty(commandLine, async (args) => {
      const fast = parseResolveArgs(args);
      if (fast === undefined) return;
      taken++;
      assertEquals(fast, await commanderParse(args));
    }),
    { numRuns: 500 },
  );
  assert(taken >= 100, `the fast path was taken ${taken} times only`);
});
