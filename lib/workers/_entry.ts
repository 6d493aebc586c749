/**
 * Worker entry of lib/workers/manifest_workers.ts: runs one request at a
 * time (upload, prepare, check, load, archive) with the same functions the
 * pool runs in place for small inputs, and posts the result back packed.
 *
 * @module
 */
import { CfgtoolError } from "../errors.ts";
import { packArchive } from "../closure/archive.ts";
import {
  checkFiles,
  compareFiles,
  decodeUpload,
  loadFiles,
  type PreparedUpload,
  prepareFiles,
} from "./manifest_work.ts";
import { packFiles, transferablesOf, unpackFiles } from "./packed_files.ts";
import type { LoadPart, PartAck, PreparedReply, WorkerReply, WorkerRequest } from "./_messages.ts";

/** Entries of a model slice: small enough that the receiving thread never waits long. */
const PART_ENTRIES = 256;

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<WorkerRequest | PartAck>) => void) | null;
  postMessage(data: WorkerReply, transfer?: Transferable[]): void;
};

/** Resolves when the pool has taken the last part sent: one part in flight at a time. */
let acked: (() => void) | null = null;

scope.onmessage = (e) => {
  if ("ack" in e.data) {
    acked?.();
    return;
  }
  const request = e.data;
  run(request).catch((err) => {
    if (err instanceof CfgtoolError) {
      scope.postMessage({
        id: request.id,
        refused: {
          code: err.code,
          status: err.status,
          message: err.message,
          ...(err.details ? { details: err.details } : {}),
        },
      });
    } else {
      scope.postMessage({ id: request.id, crashed: String((err as Error)?.stack ?? err) });
    }
  });
};

async function run(request: WorkerRequest): Promise<void> {
  const { id } = request;
  switch (request.op) {
    case "upload": {
      const { files, message, propose } = await decodeUpload(request.bytes, request.format);
      return postPrepared(id, await prepareFiles(files, message, propose));
    }
    case "prepare":
      return postPrepared(
        id,
        await prepareFiles(unpackFiles(request.files), request.message, request.propose),
      );
    case "check": {
      const { problems, problemCount, warnings, environments } = checkFiles(
        unpackFiles(request.files),
        request.options,
      );
      const ok = {
        problems: JSON.stringify(problems),
        problemCount,
        warnings: JSON.stringify(warnings),
        environments,
      };
      return scope.postMessage({ id, ok });
    }
    case "load": {
      const { problems, warnings, manifest } = loadFiles(unpackFiles(request.files));
      if (manifest) {
        // Each part waits for the pool's ack: the pool's thread takes one
        // part per turn of its event loop instead of all of them in one.
        const parts = [
          ...slices(Object.entries(manifest.segments), (segments) => ({ segments })),
          ...slices(Object.entries(manifest.flags), (flags) => ({ flags })),
        ];
        for (const part of parts) {
          const taken = new Promise<void>((resolve) => acked = resolve);
          scope.postMessage({ id, part });
          await taken;
        }
      }
      const ok = {
        problems: JSON.stringify(problems),
        warnings: JSON.stringify(warnings),
        namespace: manifest?.namespace ?? null,
      };
      return scope.postMessage({ id, ok });
    }
    case "compare": {
      const ok = compareFiles(
        unpackFiles(request.before),
        unpackFiles(request.after),
        request.values,
      );
      return scope.postMessage({ id, ok });
    }
    case "archive": {
      const archive = await packArchive(unpackFiles(request.files));
      return scope.postMessage({ id, ok: archive }, [archive.buffer as ArrayBuffer]);
    }
  }
}

function* slices<T>(entries: T[], wrap: (slice: T[]) => LoadPart): Iterable<LoadPart> {
  for (let i = 0; i < entries.length; i += PART_ENTRIES) {
    yield wrap(entries.slice(i, i + PART_ENTRIES));
  }
}

function postPrepared(id: number, up: PreparedUpload): void {
  const files = packFiles(up.files);
  let blobIds = "";
  for (const path of up.files.keys()) blobIds += up.blobIds.get(path)!;
  const ok: PreparedReply = {
    files,
    message: up.message,
    propose: up.propose,
    blobIds,
    closureHash: up.closureHash,
    problems: JSON.stringify(up.problems),
    problemCount: up.problemCount,
    warnings: JSON.stringify(up.warnings),
    environments: up.environments,
  };
  scope.postMessage({ id, ok }, transferablesOf(files));
}
