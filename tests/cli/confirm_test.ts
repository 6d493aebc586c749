import { assertEquals, assertRejects, assertStringIncludes } from "../assert.ts";
import { CfgtoolError, UsageError } from "../../lib/errors.ts";
import { confirmDeletion, type ConfirmIO } from "../../lib/cli/confirm.ts";
import { exitCodeFor } from "../../lib/cli/exit.ts";

function terminal(answer: string | null, isTerminal = true): ConfirmIO & { shown: string } {
  const io = {
    shown: "",
    isTerminal: () => isTerminal,
    write: (text: string) => void (io.shown += text),
    readLine: () => Promise.resolve(answer),
  };
  return io;
}

const request = (yes?: boolean) => ({
  yes,
  summary: "namespace delete removes acme/web",
  answer: "web",
  details: () => Promise.resolve(["This deletes namespace acme/web for good:", "  - 3 versions"]),
});

Deno.test("confirmDeletion() goes ahead with --yes without asking", async () => {
  const io = terminal(null, false);
  await confirmDeletion(request(true), io);
  assertEquals(io.shown, "");
});

Deno.test("confirmDeletion() without a terminal and without --yes is a usage error (exit 2) naming --yes", async () => {
  const io = terminal("web", false);
  const err = await assertRejects(() => confirmDeletion(request(), io), UsageError);
  assertStringIncludes(err.message, "namespace delete removes acme/web; pass --yes to go ahead");
  assertEquals(exitCodeFor(err, () => {}), 2);
  assertEquals(io.shown, "", "nothing is asked");
});

Deno.test("confirmDeletion() on a terminal shows what goes and accepts the typed name", async () => {
  const io = terminal(" web ");
  await confirmDeletion(request(), io);
  assertStringIncludes(io.shown, "This deletes namespace acme/web for good:\n  - 3 versions\n");
  assertStringIncludes(io.shown, "Type web to confirm: ");
});

Deno.test("confirmDeletion() on a terminal cancels (exit 1) on any other answer or end of input", async () => {
  for (const answer of ["y", "yes", "", "WEB", null]) {
    const err = await assertRejects(
      () => confirmDeletion(request(), terminal(answer)),
      CfgtoolError,
    );
    assertEquals(err.code, "aborted");
    assertEquals(exitCodeFor(err, () => {}), 1);
  }
});
