/**
 * An OpenFeature server provider (`@openfeature/server-sdk`) backed by a
 * {@linkcode FlagClient}: one namespace and one environment, evaluated
 * locally on the client's verified model.
 *
 * Events: the SDK emits `PROVIDER_READY` when {@linkcode CfgtoolProvider.initialize}
 * (which waits for {@linkcode FlagClient.ready}) resolves and
 * `PROVIDER_ERROR` when it rejects. After that the provider emits
 * `PROVIDER_CONFIGURATION_CHANGED` (with `flagsChanged`) after each verified
 * change of its namespace, `PROVIDER_ERROR` when a refresh fails (evaluation
 * goes on with the last good model) and `PROVIDER_READY` again on the next
 * verified apply. A fatal client error (401/403, `protocol_downgrade`) is a
 * `PROVIDER_ERROR` with error code `PROVIDER_FATAL`.
 *
 * The OpenFeature `targetingKey` is passed to the engine as
 * `targeting_key`, the default `bucket_by` of rollouts. A `Date` in the
 * context, at any depth, is passed as its RFC 3339 text (`toISOString()`,
 * as JSON carries it to OFREP), which the `before` and `after` operators
 * compare; an invalid `Date` is passed as null, as JSON does.
 *
 * @module
 */
import {
  ErrorCode,
  type EvaluationContext,
  type JsonValue,
  OpenFeatureEventEmitter,
  type Provider,
  ProviderEvents,
  ProviderFatalError,
  type ResolutionDetails,
} from "@openfeature/server-sdk";
import type { EvaluationResult } from "../flags/evaluate.ts";
import type { FlagType } from "../flags/model.ts";
import { FlagClient, type FlagClientOptions } from "./flag_client.ts";

/** Options of {@linkcode CfgtoolProvider}. */
export type CfgtoolProviderOptions =
  & {
    /** The namespace (slug) whose flags this provider resolves. */
    namespace: string;
    /** The environment of the namespace to evaluate in. */
    environment: string;
    /** How long `initialize` waits for the first closure, ms (default: the client's). */
    readyTimeoutMs?: number;
  }
  & (
    /** Use this client (the caller closes it). */
    | { client: FlagClient }
    /** Or create and own a client with these options (closed by `onClose`). */
    | { clientOptions: FlagClientOptions }
  );

const CODE_MAP: Record<string, ErrorCode> = {
  FLAG_NOT_FOUND: ErrorCode.FLAG_NOT_FOUND,
  TYPE_MISMATCH: ErrorCode.TYPE_MISMATCH,
  PARSE_ERROR: ErrorCode.PARSE_ERROR,
  GENERAL: ErrorCode.GENERAL,
};

/**
 * The cfgtool OpenFeature provider.
 *
 * @example
 * ```ts ignore
 * import { OpenFeature } from "@openfeature/server-sdk";
 * import { CfgtoolProvider } from "@cfgtool/cfgtool";
 *
 * const provider = new CfgtoolProvider({
 *   namespace: "checkout",
 *   environment: "production",
 *   clientOptions: { server: "https://flags.example.com", token, namespaces: ["checkout:*"] },
 * });
 * await OpenFeature.setProviderAndWait(provider);
 * const client = OpenFeature.getClient();
 * const on = await client.getBooleanValue("new-checkout", false, { targetingKey: "u1" });
 * await OpenFeature.close();
 * ```
 */
export class CfgtoolProvider {
  /** Provider metadata. */
  readonly metadata = { name: "cfgtool" } as const;
  /** Server-side provider. */
  readonly runsOn = "server" as const;
  /**
   * The provider's event emitter (read by the OpenFeature SDK).
   *
   * @ignore
   */
  readonly events: OpenFeatureEventEmitter = new OpenFeatureEventEmitter();
  /** The client the provider evaluates on. */
  readonly client: FlagClient;
  readonly #namespace: string;
  readonly #environment: string;
  readonly #owned: boolean;
  readonly #readyTimeoutMs: number | undefined;
  #initialized = false;
  #inError = false;
  #unsubscribe: (() => void)[] = [];

  /**
   * A provider for one namespace and environment, on the given client or on
   * a client it creates (and closes in {@linkcode CfgtoolProvider.onClose}).
   *
   * @param options namespace, environment, and a client or the options to create one
   */
  constructor(options: CfgtoolProviderOptions) {
    this.#namespace = options.namespace;
    this.#environment = options.environment;
    this.#readyTimeoutMs = options.readyTimeoutMs;
    if ("client" in options) {
      this.client = options.client;
      this.#owned = false;
    } else {
      this.client = new FlagClient(options.clientOptions);
      this.#owned = true;
    }
  }

  /**
   * Waits for the client's first verified closures; the SDK then emits
   * `PROVIDER_READY` (or `PROVIDER_ERROR` if this rejects).
   *
   * @returns resolves when ready
   */
  async initialize(): Promise<void> {
    this.#subscribe();
    try {
      await (this.#readyTimeoutMs === undefined
        ? this.client.ready()
        : this.client.ready(this.#readyTimeoutMs));
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== "ready_timeout") {
        throw new ProviderFatalError((err as Error).message, { cause: err });
      }
      throw err;
    }
    this.#initialized = true;
  }

  /**
   * Stops listening; closes the client when the provider created it.
   *
   * @returns resolves when done
   */
  async onClose(): Promise<void> {
    for (const u of this.#unsubscribe) u();
    this.#unsubscribe = [];
    if (this.#owned) await this.client.close();
  }

  /**
   * Resolves a boolean flag (called by the OpenFeature SDK).
   *
   * @ignore
   */
  resolveBooleanEvaluation(
    flagKey: string,
    defaultValue: boolean,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<boolean>> {
    return Promise.resolve(this.#resolve(flagKey, defaultValue, context, "boolean"));
  }

  /**
   * Resolves a string flag (called by the OpenFeature SDK).
   *
   * @ignore
   */
  resolveStringEvaluation(
    flagKey: string,
    defaultValue: string,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<string>> {
    return Promise.resolve(this.#resolve(flagKey, defaultValue, context, "string"));
  }

  /**
   * Resolves a number flag (called by the OpenFeature SDK).
   *
   * @ignore
   */
  resolveNumberEvaluation(
    flagKey: string,
    defaultValue: number,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<number>> {
    return Promise.resolve(this.#resolve(flagKey, defaultValue, context, "number"));
  }

  /**
   * Resolves an object flag (called by the OpenFeature SDK).
   *
   * @ignore
   */
  resolveObjectEvaluation<T extends JsonValue>(
    flagKey: string,
    defaultValue: T,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<T>> {
    return Promise.resolve(this.#resolve(flagKey, defaultValue, context, "object"));
  }

  #resolve<T>(
    flagKey: string,
    defaultValue: T,
    context: EvaluationContext,
    type: FlagType,
  ): ResolutionDetails<T> {
    const state = this.client.closure(this.#namespace);
    if (state === undefined) {
      return {
        value: defaultValue,
        reason: "ERROR",
        errorCode: ErrorCode.PROVIDER_NOT_READY,
        errorMessage: `namespace ${this.#namespace} has no verified closure yet`,
      };
    }
    const declared = this.client.flagType(this.#namespace, flagKey);
    if (declared !== undefined && declared !== type) {
      return {
        value: defaultValue,
        reason: "ERROR",
        errorCode: ErrorCode.TYPE_MISMATCH,
        errorMessage: `flag "${flagKey}" is a ${declared} flag, not ${type}`,
        flagMetadata: { version: state.version },
      };
    }
    const r: EvaluationResult = this.client.evaluate(
      this.#namespace,
      this.#environment,
      flagKey,
      toEngineContext(context),
    );
    if (r.reason === "ERROR") {
      return {
        value: defaultValue,
        reason: "ERROR",
        errorCode: CODE_MAP[r.error_code ?? "GENERAL"] ?? ErrorCode.GENERAL,
        errorMessage: r.error_message ?? "evaluation failed",
        flagMetadata: { version: r.version },
      };
    }
    return {
      value: r.value as T,
      variant: r.variation ?? undefined,
      reason: r.reason,
      flagMetadata: { version: r.version },
    } as ResolutionDetails<T>;
  }

  #subscribe(): void {
    if (this.#unsubscribe.length > 0) return;
    this.#unsubscribe.push(
      this.client.onChange((change) => {
        if (!this.#initialized || change.namespace !== this.#namespace) return;
        if (this.#inError) {
          this.#inError = false;
          this.events.emit(ProviderEvents.Ready, { message: `v${change.version} applied` });
        }
        this.events.emit(ProviderEvents.ConfigurationChanged, {
          flagsChanged: change.changedFlags,
          message: `${change.namespace} v${change.version} (${change.delivery})`,
          metadata: { version: change.version, closure_hash: change.closureHash },
        });
      }),
      this.client.onError((error) => {
        if (!this.#initialized) return;
        if (error.namespace !== null && error.namespace !== this.#namespace) return;
        this.#inError = true;
        const fatal = this.client.fatalError() !== null;
        this.events.emit(ProviderEvents.Error, {
          message: error.message,
          errorCode: fatal ? ErrorCode.PROVIDER_FATAL : ErrorCode.GENERAL,
          metadata: { code: error.code, check: error.check ?? "" },
        });
      }),
    );
  }
}

/** Deepest level {@linkcode datesAsText} looks at (a context is JSON-like, not cyclic). */
const MAX_DATE_DEPTH = 32;

/**
 * `v` with every `Date` in it as JSON would write it (`toISOString()`, null
 * for an invalid date): `v` itself when it holds none, else a copy of the
 * objects and arrays on the way to each date.
 */
function datesAsText(v: unknown, depth: number): unknown {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (v === null || typeof v !== "object" || depth >= MAX_DATE_DEPTH) return v;
  if (Array.isArray(v)) {
    let copy: unknown[] | undefined;
    v.forEach((x, i) => {
      const y = datesAsText(x, depth + 1);
      if (y !== x) (copy ??= [...v])[i] = y;
    });
    return copy ?? v;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [k, x] of Object.entries(v)) {
    const y = datesAsText(x, depth + 1);
    // defineProperty: a `__proto__` key (JSON.parse makes one) stays a plain key
    if (y !== x) Object.defineProperty(copy ??= { ...v }, k, { value: y, enumerable: true });
  }
  return copy ?? v;
}

// A CfgtoolProvider is an OpenFeature server provider. It is checked here rather than with
// `implements Provider`, which would make the SDK's types part of this package's documented
// API; the members only the SDK calls (`events`, `resolve*Evaluation`) are `@ignore`d for the
// same reason.
const _isProvider: (p: CfgtoolProvider) => Provider = (p) => p;

/**
 * OpenFeature's `targetingKey` becomes the engine's `targeting_key`; dates
 * become their text at any depth.
 */
function toEngineContext(context: EvaluationContext): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(context)) {
    if (k === "targetingKey") continue;
    out[k] = datesAsText(v, 0);
  }
  if (typeof context.targetingKey === "string" && out.targeting_key === undefined) {
    out.targeting_key = context.targetingKey;
  }
  return out;
}
