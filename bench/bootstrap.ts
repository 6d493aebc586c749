/**
 * Shared by the load scripts: a superadmin for a fresh KV file, made by the
 * real `cfgtool admin bootstrap` command.
 *
 * @module
 */
const CLI = new URL("../cli.ts", import.meta.url).pathname;

/**
 * Runs `cfgtool admin bootstrap --kv <kv>` and returns the superadmin secret
 * it prints on its last line; throws with its stderr when it fails.
 *
 * @param kv path of the KV file (created when missing)
 * @returns the superadmin token secret
 */
export async function bootstrapSuperadmin(kv: string): Promise<string> {
  const boot = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--unstable-kv", CLI, "admin", "bootstrap", "--kv", kv],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!boot.success) throw new Error(`bootstrap failed:\n${new TextDecoder().decode(boot.stderr)}`);
  return new TextDecoder().decode(boot.stdout).trim().split("\n").at(-1)!.trim();
}

/**
 * A JSON request with a bearer token; throws with the status and body
 * unless the answer is 2xx.
 *
 * @param base the server's base URL
 * @param token the bearer secret
 * @param method the HTTP method
 * @param path the path, from `/`
 * @param body a JSON body, if any
 * @returns the decoded JSON answer
 */
export async function api(
  base: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  // deno-lint-ignore no-explicit-any
): Promise<any> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path} → ${res.status} ${JSON.stringify(json)}`);
  return json;
}
