/**
 * examples/deploy/compose.yaml and its Caddyfile, without Docker: the file
 * parsed as Compose reads it (variables interpolated), its cfgtool service
 * checked against the Dockerfile it builds, every `cfgtool` command line it
 * names (and those of docs/quickstart.md and docs/concepts.md) checked
 * against the CLI's command tree, the service's command run for real (the
 * volume a temp dir, the port a free one) with its health check and the
 * admin commands its comments give, and, where Caddy is installed, Caddy
 * with this Caddyfile in front of a real cfgtool.
 */
import type { Command } from "commander-core";
import { parse } from "yaml";
import { assert, assertEquals, assertNotEquals } from "../assert.ts";
import { type CompletionNode, completionTree } from "../../lib/cli/completions.ts";
import { buildProgram } from "../../lib/cli/program.ts";
import { parseDocBlocks } from "../docs/doc_blocks.ts";
import {
  DEPLOY,
  dockerInstructions,
  execForm,
  freePort,
  hasProgram,
  type Instruction,
  optionValue,
  rewrite,
  ROOT,
  runCliOnce,
  runCommand,
  startCli,
} from "./deploy_files.ts";

const COMPOSE_TEXT = await Deno.readTextFile(new URL("compose.yaml", DEPLOY));
const CADDYFILE = await Deno.readTextFile(new URL("Caddyfile", DEPLOY));
const DOCKERFILE = dockerInstructions(await Deno.readTextFile(new URL("Dockerfile", DEPLOY)));
const DOMAIN = "flags.example.com";

/** What this test reads of a Compose service. */
interface Service {
  build?: { context: string; dockerfile: string };
  image?: string;
  command?: string[];
  env_file?: { path: string; required?: boolean }[];
  environment?: Record<string, string>;
  volumes?: string[];
  expose?: string[];
  ports?: string[];
  healthcheck?: { test: string[]; interval: string; timeout: string; retries: number };
  depends_on?: Record<string, { condition: string }>;
  stop_signal?: string;
}

/** What this test reads of a Compose file. */
interface ComposeFile {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

/**
 * Compose's interpolation of one string: `${VAR}`, `${VAR:-default}`,
 * `${VAR:?message}` (an error when unset or empty) and `$$`.
 */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}/g,
    (whole, name: string | undefined, op: string | undefined, arg: string | undefined) => {
      if (whole === "$$") return "$";
      const value = env[name!] ?? "";
      if (value !== "") return value;
      if (op === "?") throw new Error(`required variable ${name} is missing a value: ${arg}`);
      return op === "-" ? arg! : "";
    },
  );
}

/** Every string of a parsed YAML value interpolated, as Compose does after parsing. */
function interpolateAll(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === "string") return interpolate(value, env);
  if (Array.isArray(value)) return value.map((v) => interpolateAll(v, env));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, interpolateAll(v, env)]),
    );
  }
  return value;
}

/** The compose file as Compose sees it with `.env` holding `env`. */
function composeWith(env: Record<string, string>): ComposeFile {
  return interpolateAll(parse(COMPOSE_TEXT), env) as ComposeFile;
}

const compose = composeWith({ CFGTOOL_DOMAIN: DOMAIN });
const cfgtool = compose.services.cfgtool!;
const caddy = compose.services.caddy!;
const command = cfgtool.command!;

/** The last Dockerfile instruction with this keyword (the runtime stage's). */
function dockerfile(keyword: string): Instruction {
  const found = DOCKERFILE.filter((i) => i.keyword === keyword).at(-1);
  assert(found, `the Dockerfile has no ${keyword}`);
  return found;
}
const VOLUME_DIR = execForm(dockerfile("VOLUME").rest)[0]!;
const IMAGE_KV = dockerfile("ENV").rest.replace(/^CFGTOOL_KV=/, "");

/** A `source:target[:mode]` volume entry. */
function volume(spec: string): { source: string; target: string } {
  const [source, target] = spec.split(":");
  return { source: source!, target: target! };
}

Deno.test("the compose file needs CFGTOOL_DOMAIN and builds the image of the Dockerfile", async () => {
  let refused = "";
  try {
    composeWith({});
  } catch (err) {
    refused = (err as Error).message;
  }
  assert(refused.endsWith("set CFGTOOL_DOMAIN in .env"), refused);

  const context = new URL(`${cfgtool.build!.context}/`, DEPLOY);
  assertEquals(context.href, ROOT.href, "the build context is the checkout");
  const built = new URL(cfgtool.build!.dockerfile, context);
  assertEquals(built.href, new URL("Dockerfile", DEPLOY).href);
  assertEquals(execForm(dockerfile("ENTRYPOINT").rest), ["/usr/local/bin/cfgtool"]);
  // the secrets file is optional: compose starts without it
  for (const file of cfgtool.env_file ?? []) {
    const exists = await Deno.stat(new URL(file.path, DEPLOY)).then(() => true, () => false);
    assert(exists || file.required === false, `${file.path} is required but not in the repository`);
  }
  assert(!/token|smtp|password/i.test(JSON.stringify(command)), "no secret on the command line");
});

Deno.test("the store lies in a declared volume where the image keeps it; mounted files exist", async () => {
  const used = new Set<string>();
  for (const [name, service] of Object.entries(compose.services)) {
    for (const spec of service.volumes ?? []) {
      const { source } = volume(spec);
      if (source.startsWith(".") || source.startsWith("/")) {
        const file = new URL(source, DEPLOY);
        assert((await Deno.stat(file)).isFile, `${name} mounts ${source}, which is missing`);
      } else {
        assert(source in compose.volumes, `${name} uses volume ${source}, which is not declared`);
        used.add(source);
      }
    }
  }
  assertEquals([...used].sort(), Object.keys(compose.volumes).sort(), "every volume is used");

  const store = (cfgtool.volumes ?? []).map(volume).find((v) => v.target === VOLUME_DIR);
  assert(store, `no volume on the image's ${VOLUME_DIR}`);
  const kv = optionValue(command, "--kv")!;
  assert(kv.startsWith(`${VOLUME_DIR}/`), kv);
  assertEquals(IMAGE_KV, kv, "`docker compose exec cfgtool cfgtool admin …` opens the same store");
});

Deno.test("the service listens for Caddy on the compose network, healthy when ready", () => {
  assertEquals(command[0], "serve");
  assertEquals(optionValue(command, "--hostname"), "0.0.0.0");
  assertEquals(optionValue(command, "--public-url"), `https://${DOMAIN}`);
  const port = optionValue(command, "--port")!;
  assertEquals(cfgtool.expose, [port]);
  assertEquals(cfgtool.ports, undefined, "only the proxy reaches it");

  const check = cfgtool.healthcheck!;
  assertEquals(check.test[0], "CMD");
  assertEquals(check.test.at(-1), `http://127.0.0.1:${port}/readyz`);
  assertEquals(caddy.depends_on, { cfgtool: { condition: "service_healthy" } });
  assertEquals(cfgtool.stop_signal, dockerfile("STOPSIGNAL").rest);

  assertEquals(caddy.ports, ["80:80", "443:443", "443:443/udp"], "HTTP for ACME, HTTPS, HTTP/3");
  assertEquals(caddy.environment?.CFGTOOL_DOMAIN, DOMAIN);
  assert(caddy.volumes?.includes("./Caddyfile:/etc/caddy/Caddyfile:ro"));
  const site = CADDYFILE.match(/^(\S+) \{$/m)?.[1];
  assertEquals(site, "{$CFGTOOL_DOMAIN}", "the site is the domain compose passes to Caddy");
  const upstream = CADDYFILE.match(/^\s*reverse_proxy (\S+)/m)?.[1];
  assertEquals(upstream, `cfgtool:${port}`, "Caddy proxies to the cfgtool service's port");
});

// ---- command lines ------------------------------------------------------------------------

/** The CLI's command tree, as its `--help` shows it. */
const TREE = completionTree(buildProgram() as unknown as Command);

/** Splits a command's text into words as a shell would, for quotes. */
function shellWords(text: string): string[] {
  const out: string[] = [];
  let word = "";
  let quote: string | null = null;
  let started = false;
  for (const ch of text) {
    if (quote !== null) {
      if (ch === quote) quote = null;
      else word += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      started = true;
    } else if (ch === " " || ch === "\t") {
      if (started || word !== "") out.push(word);
      word = "";
      started = false;
    } else word += ch;
  }
  if (started || word !== "") out.push(word);
  return out;
}

/**
 * The `cfgtool …` command lines in a text: the words after each `cfgtool`
 * that starts a command, up to a pipe, `;`, `&`, `)` or the end of the line.
 * The service name of `docker compose exec cfgtool cfgtool …` and the user of
 * `sudo -u cfgtool cfgtool …` are not commands.
 */
function cfgtoolCommands(text: string): string[][] {
  const plain = text.replace(/\\\n\s*/g, " ")
    .replace(/docker compose exec (?:-T )?cfgtool /g, "")
    .replace(/sudo -u cfgtool /g, "");
  return [...plain.matchAll(/(?<![\w./:@-])cfgtool[ \t]+([^|;&)`\n]*)/g)]
    .map((m) => shellWords(m[1]!.trim()));
}

/** What is wrong with one command line, by the CLI's tree (nothing: an empty list). */
function problemsOf(words: string[], where: string): string[] {
  let node: CompletionNode = TREE;
  let i = 0;
  while (i < words.length) {
    const next = node.commands.find((c) => c.name === words[i] && c.name !== "help");
    if (next === undefined) break;
    node = next;
    i++;
  }
  const rest = words.slice(i);
  const elided = (w: string) => w.startsWith("…");
  const groups = node.commands.filter((c) => c.name !== "help");
  const shown = `${node.path} ${rest.join(" ")}`.trim();
  if (rest.length > 0 && elided(rest[0]!)) return [];
  if (groups.length > 0) {
    return [`${where}: ${shown}: ${rest[0] ?? "(nothing)"} is not a command of ${node.path}`];
  }
  const problems: string[] = [];
  for (const w of rest) {
    if (elided(w)) break;
    if (!w.startsWith("-")) continue;
    const name = w.split("=")[0]!;
    if (!node.options.some((o) => o.names.includes(name))) {
      problems.push(`${where}: ${shown}: ${node.path} has no option ${name}`);
    }
  }
  return problems;
}

/** The command lines of a Markdown page: in shell and console blocks, and in inline code. */
function markdownCommands(doc: string, text: string): { where: string; words: string[] }[] {
  const out: { where: string; words: string[] }[] = [];
  for (const block of parseDocBlocks(text, doc)) {
    if (!["sh", "console", "bash"].includes(block.lang)) continue;
    const lines = block.lang === "console"
      ? block.text.split("\n").filter((l) => l.startsWith("$ ") || l.startsWith("    "))
      : block.text.split("\n");
    const code = lines.map((l) => l.replace(/(^|\s)#.*$/, "")).join("\n");
    for (const words of cfgtoolCommands(code)) out.push({ where: block.where, words });
  }
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, "");
  for (const [, span] of prose.matchAll(/`([^`\n]+)`/g)) {
    if (!/^(cfgtool |sudo -u cfgtool |docker compose exec )/.test(span!)) continue;
    for (const words of cfgtoolCommands(span!)) out.push({ where: `${doc}: \`${span}\``, words });
  }
  return out;
}

/** The `docker compose …` command lines of the compose file's comments. */
function composeCommentCommands(): string[][] {
  const lines = COMPOSE_TEXT.split("\n").map((l) => l.trim())
    .filter((l) => /^#\s+docker compose /.test(l)).map((l) => l.replace(/^#\s+/, ""));
  return lines.flatMap(cfgtoolCommands);
}

Deno.test("every cfgtool command line of compose.yaml and the quickstart names real commands and options", async () => {
  const lines: { where: string; words: string[] }[] = [
    { where: "compose.yaml: services.cfgtool.command", words: command },
    ...composeCommentCommands().map((words) => ({ where: "compose.yaml (comments)", words })),
  ];
  for (const doc of ["docs/quickstart.md", "docs/concepts.md"]) {
    lines.push(...markdownCommands(doc, await Deno.readTextFile(new URL(doc, ROOT))));
  }
  const paths = new Set(lines.map((l) => l.words.slice(0, 2).join(" ")));
  for (
    const needed of ["serve --hostname", "admin console-link", "admin bootstrap", "push flags"]
  ) {
    assert(paths.has(needed), `no cfgtool ${needed} found: ${[...paths].join(", ")}`);
  }
  assertEquals(lines.flatMap((l) => problemsOf(l.words, l.where)), []);
  // the check itself refuses what does not exist
  assertNotEquals(problemsOf(["admin", "console-link", "--kvv", "x"], "t"), []);
  assertNotEquals(problemsOf(["tenant", "make", "acme"], "t"), []);
});

// ---- the service, for real ----------------------------------------------------------------

Deno.test("the compose command serves; its health check passes; the commented admin commands work", async () => {
  const volumeDir = await Deno.makeTempDir({ prefix: "cfgtool-compose-volume-" });
  try {
    const port = optionValue(command, "--port")!;
    // the volume a temp dir, loopback rather than every interface, a free port
    const args = rewrite(command, { [VOLUME_DIR]: volumeDir, "0.0.0.0": "127.0.0.1" });
    args[args.indexOf("--port") + 1] = "0";
    const server = await startCli(args);
    try {
      const actual = new URL(server.url).port;
      for (const path of ["/healthz", "/readyz"]) {
        const res = await fetch(`${server.url}${path}`);
        assertEquals(res.status, 200, path);
        await res.body?.cancel();
      }
      const probe = rewrite(cfgtool.healthcheck!.test.slice(1), {
        [`127.0.0.1:${port}`]: `127.0.0.1:${actual}`,
      });
      if (await hasProgram(probe[0]!)) {
        const healthy = await runCommand(probe);
        assertEquals(healthy.code, 0, healthy.stderr);
      }

      // `docker compose exec cfgtool cfgtool admin …` find the store by the image's CFGTOOL_KV
      const env = { CFGTOOL_KV: rewrite([IMAGE_KV], { [VOLUME_DIR]: volumeDir })[0]! };
      const admin = composeCommentCommands().filter((w) => w[0] === "admin");
      assertEquals(admin.map((w) => w[1]).sort(), ["bootstrap", "console-link"]);
      for (const words of admin) {
        const run = await runCliOnce(words, env);
        assertEquals(run.code, 0, `${words.join(" ")}: ${run.stderr}`);
        const last = run.stdout.trim().split("\n").at(-1)!;
        if (words[1] === "console-link") {
          const link = new URL(last);
          assertEquals(link.origin, `https://${DOMAIN}`, "the link names the public origin");
          const page = await fetch(`${server.url}${link.pathname}${link.search}`);
          assertEquals(page.status, 200, "the server on the volume knows the link");
          await page.body?.cancel();
        } else {
          const tenants = await fetch(`${server.url}/api/v1/tenants`, {
            headers: { authorization: `Bearer ${last}` },
          });
          assertEquals(tenants.status, 200, "the bootstrap token works on the served store");
          await tenants.body?.cancel();
        }
      }
      assertEquals(await server.stop(cfgtool.stop_signal as Deno.Signal), 0);
    } finally {
      await server.stop("SIGKILL");
    }
    const files = [...Deno.readDirSync(volumeDir)].map((e) => e.name);
    assert(files.includes("kv.sqlite3") && files.includes("token.key"), files.join(" "));
  } finally {
    await Deno.remove(volumeDir, { recursive: true });
  }
});

// ---- Caddy, for real ----------------------------------------------------------------------

/** Resolves once something accepts connections on the port (30 s at most). */
async function listening(port: number): Promise<void> {
  const end = Date.now() + 30_000;
  while (true) {
    try {
      (await Deno.connect({ hostname: "127.0.0.1", port })).close();
      return;
    } catch {
      if (Date.now() > end) throw new Error(`nothing listens on ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** The first event of an event stream, or the error body. */
async function firstEvent(url: string, token: string): Promise<string> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(15_000),
  });
  if (res.status !== 200) return `${res.status} ${await res.text()}`;
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!/\n\n/.test(text.replace(/^:[^\n]*\n/gm, ""))) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return text;
}

Deno.test({
  name: "Caddy with the Caddyfile passes requests and event streams to cfgtool and hides /metrics",
  ignore: !(await hasProgram("caddy")),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "cfgtool-caddy-" });
    const server = await startCli(["serve", "--port", "0", "--kv", `${dir}/kv.sqlite3`]);
    let proxy: Deno.ChildProcess | undefined;
    try {
      const upstream = new URL(server.url).host;
      const port = freePort();
      // plain HTTP on loopback instead of the domain (no certificate here); no admin endpoint
      const config = CADDYFILE.replace("{$CFGTOOL_DOMAIN}", `http://127.0.0.1:${port}`)
        .replace(/reverse_proxy cfgtool:\d+/, `reverse_proxy ${upstream}`)
        .replace(/^\{$/m, "{\n\tadmin off\n\tdefault_bind 127.0.0.1")
        .replace(/grace_period \d+s/, "grace_period 1s");
      assert(config.includes("admin off") && config.includes(upstream), config);
      await Deno.writeTextFile(`${dir}/Caddyfile`, config);
      const adapted = await runCommand(["caddy", "adapt", "--config", `${dir}/Caddyfile`]);
      assertEquals(adapted.code, 0, adapted.stderr);
      const example = await new Deno.Command("caddy", {
        args: ["adapt", "--config", new URL("Caddyfile", DEPLOY).pathname],
        env: { CFGTOOL_DOMAIN: DOMAIN },
        stdout: "null",
        stderr: "piped",
      }).output();
      const warnings = new TextDecoder().decode(example.stderr);
      assertEquals([example.code, warnings], [0, ""], "the example adapts without a warning");
      proxy = new Deno.Command("caddy", {
        args: ["run", "--config", `${dir}/Caddyfile`, "--adapter", "caddyfile"],
        env: { HOME: dir, XDG_DATA_HOME: `${dir}/data`, XDG_CONFIG_HOME: `${dir}/config` },
        stdin: "null",
        stdout: "null",
        stderr: "null",
      }).spawn();
      await listening(port);
      const front = `http://127.0.0.1:${port}`;

      const health = await fetch(`${front}/healthz`);
      assertEquals([health.status, (await health.json()).status], [200, "ok"]);
      const metrics = await fetch(`${front}/metrics`);
      assertEquals(metrics.status, 404, "Caddy keeps /metrics from the public");
      await metrics.body?.cancel();
      const direct = await fetch(`${server.url}/metrics`);
      assertEquals(direct.status, 200, "cfgtool itself serves it on loopback");
      await direct.body?.cancel();

      // a superadmin creates, pushes and streams through the proxy
      const boot = await runCliOnce(["admin", "bootstrap", "--kv", `${dir}/kv.sqlite3`]);
      assertEquals(boot.code, 0, boot.stderr);
      const token = boot.stdout.trim().split("\n").at(-1)!;
      const cli = { CFGTOOL_SERVER: front, CFGTOOL_TOKEN: token };
      for (
        const args of [
          ["tenant", "create", "acme"],
          ["namespace", "create", "checkout", "--tenant", "acme"],
          [
            "push",
            new URL("examples/flags", ROOT).pathname,
            "--tenant",
            "acme",
            "--namespace",
            "checkout",
          ],
        ]
      ) {
        const r = await runCliOnce(args, cli);
        assertEquals(r.code, 0, `${args.join(" ")}: ${r.stderr}`);
      }
      const event = await firstEvent(`${front}/api/v1/events?ns=acme/checkout:*`, token);
      assert(event.includes("event: version\nid: checkout:1\n"), event);
      // a stop ends the open streams after the grace period (the stream above is cancelled,
      // Caddy's copy of it to cfgtool is not): it would otherwise wait for them for ever
      const grace = CADDYFILE.match(/^\s*grace_period (\d+)s$/m)?.[1];
      assert(grace !== undefined && Number(grace) < 10, "within docker compose stop's 10 s");
    } finally {
      if (proxy) {
        proxy.kill("SIGTERM");
        await proxy.status;
      }
      await server.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
