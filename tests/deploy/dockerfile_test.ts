/**
 * examples/deploy/Dockerfile, without Docker: its build stage compiles with
 * the pinned Deno and the project's compile task, its runtime stage runs as
 * a non-root user with the store in the volume, and the command and health
 * check it declares work against the real CLI (the volume a temp dir, the
 * port a free one).
 */
import { assert, assertEquals, assertNotEquals } from "../assert.ts";
import {
  DEPLOY,
  dockerInstructions,
  execForm,
  hasProgram,
  healthcheck,
  type Instruction,
  optionValue,
  rewrite,
  ROOT,
  runCliOnce,
  runCommand,
  startCli,
} from "./deploy_files.ts";

const DOCKERFILE = await Deno.readTextFile(new URL("Dockerfile", DEPLOY));
const all = dockerInstructions(DOCKERFILE);
const froms = all.flatMap((ins, i) => ins.keyword === "FROM" ? [i] : []);
const build = all.slice(froms[0], froms[1]);
const runtime = all.slice(froms.at(-1));
const VOLUME_DIR = "/var/lib/cfgtool";

/** The last instruction of a stage with this keyword. */
function last(stage: Instruction[], keyword: string): Instruction {
  const found = stage.filter((i) => i.keyword === keyword).at(-1);
  assert(found, `no ${keyword} in the stage`);
  return found;
}

const entrypoint = execForm(last(runtime, "ENTRYPOINT").rest);
const cmd = execForm(last(runtime, "CMD").rest);
const check = healthcheck(last(runtime, "HEALTHCHECK").rest);
const env = Object.fromEntries(
  runtime.filter((i) => i.keyword === "ENV").map((i) => {
    const [k, ...v] = i.rest.split("=");
    return [k!, v.join("=")];
  }),
);

Deno.test("the build stage compiles with the Deno that CI pins, through deno task compile", async () => {
  assertEquals(froms.length, 2, "a build stage and a runtime stage");
  const ci = await Deno.readTextFile(new URL(".ci/run", ROOT));
  const pinned = /^DENO_VERSION="([^"]+)"/m.exec(ci)?.[1];
  assertEquals(build[0]!.rest, `denoland/deno:${pinned} AS build`);
  assert(build.some((i) => i.keyword === "RUN" && /(^|&& )deno task compile( |$)/.test(i.rest)));

  // the runtime stage copies what the compile task writes
  const task = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))).tasks.compile;
  const output = /--output (\S+)/.exec(task)?.[1];
  const workdir = last(build, "WORKDIR").rest;
  const copy = runtime.find((i) => i.keyword === "COPY" && i.rest.startsWith("--from=build "));
  assertEquals(copy?.rest, `--from=build ${workdir}/${output} ${entrypoint[0]}`);
});

Deno.test("the runtime stage runs as a non-root user with the store in the volume", () => {
  assert(/^debian:[a-z]+-slim$/.test(runtime[0]!.rest), "a glibc base with a shell and apt");
  const user = last(runtime, "USER").rest.split(":")[0];
  assert(user !== "root" && user !== "0", `USER ${user}`);
  assertEquals(execForm(last(runtime, "VOLUME").rest), [VOLUME_DIR]);
  assertEquals(cmd[0], "serve");
  assertEquals(optionValue(cmd, "--hostname"), "0.0.0.0");
  const kv = optionValue(cmd, "--kv")!;
  assert(kv.startsWith(`${VOLUME_DIR}/`), kv);
  assertEquals(env.CFGTOOL_KV, kv, "admin commands in the container find the same store");
  const port = optionValue(cmd, "--port");
  assertEquals(last(runtime, "EXPOSE").rest, port);
  assertEquals(check.command.at(-1), `http://127.0.0.1:${port}/readyz`);
  assertEquals(last(runtime, "STOPSIGNAL").rest, "SIGTERM");
});

Deno.test("the build context leaves out only untracked files and keeps .git for the commit", async () => {
  const ignore = (await Deno.readTextFile(new URL("Dockerfile.dockerignore", DEPLOY)))
    .split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
  const ignored = (path: string) =>
    ignore.some((p) => {
      if (p.endsWith("/")) return path.startsWith(p) || path.includes(`/${p}`);
      if (p.startsWith("**/*")) return path.endsWith(p.slice(4));
      if (p.startsWith("**/")) return path === p.slice(3) || path.endsWith(`/${p.slice(3)}`);
      return path === p;
    });
  for (const needed of ["deno.json", "deno.lock", "cli.ts", "lib/cli/program.ts", ".git/HEAD"]) {
    assert(!ignored(needed), `${needed} must reach the build`);
  }
  for (const junk of [".cache/deno/x", "dist/cfgtool", "cfgtool-data/kv.sqlite3", "a/token.key"]) {
    assert(ignored(junk), `${junk} must stay out`);
  }
});

Deno.test({
  name:
    "the image's command serves on the volume and its health check passes, then fails once stopped",
  ignore: !(await hasProgram(check.command[0]!)),
  async fn() {
    const volume = await Deno.makeTempDir({ prefix: "cfgtool-image-volume-" });
    try {
      const port = optionValue(cmd, "--port")!;
      // the volume a temp dir, a free port instead of the image's own, and loopback rather
      // than every interface of a shared machine (the shape test checks 0.0.0.0)
      const args = rewrite(cmd, { [VOLUME_DIR]: volume, "0.0.0.0": "127.0.0.1" });
      args[args.indexOf("--port") + 1] = "0";
      const server = await startCli(args);
      try {
        const actual = new URL(server.url).port;
        const probe = rewrite(check.command, { [`127.0.0.1:${port}`]: `127.0.0.1:${actual}` });
        const healthy = await runCommand(probe);
        assertEquals(healthy.code, 0, healthy.stderr);
        const ready = await fetch(`http://127.0.0.1:${actual}/readyz`);
        assertEquals(await ready.json(), { status: "ready" });

        // `docker exec cfgtool cfgtool admin bootstrap` relies on ENV CFGTOOL_KV alone
        const boot = await runCliOnce(["admin", "bootstrap"], {
          CFGTOOL_KV: rewrite([env.CFGTOOL_KV!], { [VOLUME_DIR]: volume })[0]!,
        });
        assertEquals(boot.code, 0, boot.stderr);
        const secret = boot.stdout.trim().split("\n").at(-1)!;
        const tenants = await fetch(`http://127.0.0.1:${actual}/api/v1/tenants`, {
          headers: { authorization: `Bearer ${secret}` },
        });
        assertEquals(tenants.status, 200, await tenants.text());

        assertEquals(await server.stop(last(runtime, "STOPSIGNAL").rest as Deno.Signal), 0);
        const down = await runCommand(probe);
        assertNotEquals(down.code, 0, "the health check fails when nothing answers");
      } finally {
        await server.stop("SIGKILL");
      }
      const files = [...Deno.readDirSync(volume)].map((e) => e.name).sort();
      assert(files.includes("kv.sqlite3") && files.includes("token.key"), files.join(" "));
    } finally {
      await Deno.remove(volume, { recursive: true });
    }
  },
});
