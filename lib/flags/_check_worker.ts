/**
 * Worker entry of lib/flags/check_off_thread.ts: validates the file set it is
 * sent (`check`), loads a stored version (`load`), or decodes a JSON manifest
 * body (`json`), and posts back the
 * result, or the message of the `UsageError` that refused it.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import {
  checkInPlace,
  loadInPlace,
  type WorkerReply,
  type WorkerRequest,
} from "./check_off_thread.ts";
import { manifestFromJson } from "./files.ts";

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<WorkerRequest>) => void) | null;
  postMessage(data: unknown): void;
};
scope.onmessage = (e) => {
  const request = e.data;
  let reply: WorkerReply<unknown>;
  try {
    reply = {
      ok: request.op === "check"
        ? checkInPlace(request.files, request.options)
        : request.op === "load"
        ? loadInPlace(request.files)
        : manifestFromJson(request.bytes),
    };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    reply = { refused: { message: err.message, ...(err.details ? { details: err.details } : {}) } };
  }
  scope.postMessage(reply);
};
