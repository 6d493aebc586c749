/**
 * Worker entry of {@linkcode checkManifest}: validates the one file set it is
 * sent, with the options it is sent, and posts back what
 * {@linkcode checkInPlace} returns.
 *
 * @module
 */
import { checkInPlace, type CheckRequest } from "./check_off_thread.ts";

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<CheckRequest>) => void) | null;
  postMessage(data: unknown): void;
};
scope.onmessage = (e) => scope.postMessage(checkInPlace(e.data.files, e.data.options));
