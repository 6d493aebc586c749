/**
 * The worker that runs {@linkcode checkSamlResponse} for
 * lib/login/saml_checker.ts: one job at a time, each answered with the
 * checked profile or the refusal's reason, message and status (and the
 * library's own message, for the server's log).
 *
 * @module
 */
import { CfgtoolError, LoginError } from "../errors.ts";
import { checkSamlResponse, type SamlChecked, type SamlCheckInput } from "./saml_check.ts";

/** A job for the worker. */
export interface SamlCheckRequest {
  id: number;
  input: SamlCheckInput;
}

/** A refusal as it crosses threads: the error's code, reason, message, status and cause's message. */
export interface SamlRefusal {
  code: string;
  reason?: string;
  message: string;
  status: number;
  cause?: string;
}

/** The worker's answer to one job. */
export type SamlCheckReply =
  | { id: number; ok: SamlChecked }
  | { id: number; refused: SamlRefusal }
  | { id: number; crashed: string };

const scope = self as unknown as {
  onmessage: ((e: MessageEvent<SamlCheckRequest>) => void) | null;
  postMessage(data: SamlCheckReply): void;
};

scope.onmessage = async (e) => {
  const { id, input } = e.data;
  try {
    scope.postMessage({ id, ok: await checkSamlResponse(input) });
  } catch (err) {
    if (err instanceof CfgtoolError) {
      const cause = (err as { cause?: unknown }).cause;
      scope.postMessage({
        id,
        refused: {
          code: err.code,
          ...(err instanceof LoginError ? { reason: err.reason } : {}),
          message: err.message,
          status: err.status,
          ...(cause === undefined ? {} : { cause: String((cause as Error)?.message ?? cause) }),
        },
      });
    } else {
      scope.postMessage({ id, crashed: String((err as Error)?.stack ?? err) });
    }
  }
};
