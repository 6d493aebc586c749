/**
 * Shared by the load scripts: how long a piece of work holds a server's
 * event loop, seen from outside, by a loop asking `GET /healthz` one
 * request after another while the work runs.
 *
 * @module
 */

/** The work's time, the slowest `/healthz` answer meanwhile, and how many were asked. */
export interface Probed {
  took: number;
  slowest: number;
  probes: number;
}

/**
 * Runs `work` while a loop asks `<url>/healthz`; returns the work's time
 * and the slowest probe (ms).
 *
 * @param url the server's base URL
 * @param work what to measure
 * @returns the timings
 */
export async function probed(url: string, work: () => Promise<unknown>): Promise<Probed> {
  let going = true;
  let slowest = 0;
  let probes = 0;
  const probe = (async () => {
    while (going) {
      const t0 = performance.now();
      await (await fetch(`${url}/healthz`)).body?.cancel();
      slowest = Math.max(slowest, performance.now() - t0);
      probes++;
    }
  })();
  const t0 = performance.now();
  try {
    await work();
  } finally {
    going = false;
  }
  const took = performance.now() - t0;
  await probe;
  return { took, slowest, probes };
}
