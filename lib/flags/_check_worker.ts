/**
 * Worker entry of {@linkcode checkManifest}: validates the one file set it is
 * sent and posts back `{problems, environments}`.
 *
 * @module
 */
import { checkInPlace } from "./check_off_thread.ts";

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<Map<string, Uint8Array>>) => void) | null;
  postMessage(data: unknown): void;
};
scope.onmessage = (e) => scope.postMessage(checkInPlace(e.data));
