/**
 * The two forms of a namespace's Changes page: its protected environments
 * (shown to everyone; the form to people who may change them: tenant and
 * namespace admins, superadmins), and a progressive rollout (a flag, an
 * environment, steps like `5,25,50,100`, an interval like `1d`, a
 * message), which opens one change request; with the readers of what they
 * post and what a refused post sends back to the page (the inputs kept,
 * the problem shown as an alert).
 *
 * @module
 */
import { InvalidRequestError } from "../errors.ts";
import { MAX_MESSAGE_LENGTH } from "../protocol/limits.ts";
import { durationMsOf } from "../protocol/time_text.ts";
import type { RolloutAsk } from "../services/change_apply.ts";
import type { ChangesOverview } from "../services/change_lists.ts";
import { MAX_REQUIRED_APPROVALS } from "../services/protection.ts";
import { approvals } from "./change_status.tsx";
import { Field, Options } from "./form_fields.tsx";
import type { PageOptions } from "./layout.tsx";
import { ui } from "./urls.ts";
import { CsrfField, ProblemNotice } from "./widgets.tsx";

/** A post of one of the page's forms that was refused: the page shows it again with the problem. */
export interface ListRefusal {
  form: "rollout" | "protection";
  message: string;
  /** The field the problem is about, if any. */
  field?: string | undefined;
  status: NonNullable<PageOptions["status"]>;
  /** The posted fields, to fill the form in again. */
  values: ReadonlyMap<string, string>;
}

/** The prefix of a protection form's fields: `approvals.<environment>`. */
const APPROVALS_FIELD = "approvals.";

/**
 * The protection a form posts: environment → approvals, as the protection
 * service reads a body (a number it cannot read stays NaN, which the
 * service refuses naming the environment).
 *
 * @param form the posted fields
 * @returns the body for `parseProtection`
 *
 * @example
 * ```ts
 * import { protectionBody } from "./change_list_forms.tsx";
 * const body = protectionBody(new Map([["approvals.production", "2"], ["approvals.staging", "0"], ["_csrf", "x"]]));
 * if (JSON.stringify(body) !== '{"environments":{"production":{"required_approvals":2},"staging":{"required_approvals":0}}}') {
 *   throw new Error(JSON.stringify(body));
 * }
 * ```
 */
export function protectionBody(
  form: ReadonlyMap<string, string>,
): { environments: Record<string, { required_approvals: number }> } {
  const environments: Record<string, { required_approvals: number }> = {};
  for (const [name, value] of form) {
    if (!name.startsWith(APPROVALS_FIELD)) continue;
    const text = value.trim();
    environments[name.slice(APPROVALS_FIELD.length)] = {
      required_approvals: /^\d{1,2}$/.test(text) ? Number(text) : NaN,
    };
  }
  return { environments };
}

/**
 * The rollout a form asks for: steps are comma-separated whole
 * percentages, the interval a whole number and a unit (`1d`, `12h`); 400
 * naming the field that cannot be read (the service checks the rest: the
 * flag, its rollout, the plan, the message).
 *
 * @param form the posted fields
 * @returns what to ask the rollout service for
 *
 * @example
 * ```ts
 * import { rolloutAskOf } from "./change_list_forms.tsx";
 * const ask = rolloutAskOf(new Map([["flag", "f"], ["environment", "production"], ["steps", "5, 25,50,100"],
 *   ["every", "1d"], ["message", "slowly"], ["variation", ""]]));
 * if (ask.steps.join() !== "5,25,50,100" || ask.every_ms !== 86_400_000 || ask.variation !== undefined) {
 *   throw new Error(JSON.stringify(ask));
 * }
 * let field = "";
 * try { rolloutAskOf(new Map([["steps", "5,half"], ["every", "1d"]])); } catch (e) {
 *   field = (e as { details: { field: string } }).details.field;
 * }
 * if (field !== "steps") throw new Error(field);
 * ```
 */
export function rolloutAskOf(form: ReadonlyMap<string, string>): RolloutAsk {
  const text = (name: string) => (form.get(name) ?? "").trim();
  const steps = text("steps").split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (steps.some((s) => !/^\d{1,3}$/.test(s))) {
    throw new InvalidRequestError(
      `Steps are whole percentages separated by commas, like 5,25,50,100, not ${
        JSON.stringify(text("steps").slice(0, 40))
      }`,
      { details: { field: "steps" } },
    );
  }
  const every = durationMsOf(text("every"));
  if (every === null) {
    throw new InvalidRequestError(
      `The time between steps is a whole number and a unit (m, h, d, w), like 1d or 12h, not ${
        JSON.stringify(text("every").slice(0, 40))
      }`,
      { details: { field: "every" } },
    );
  }
  const variation = text("variation");
  return {
    flag: text("flag"),
    environment: text("environment"),
    variation: variation === "" ? undefined : variation,
    steps: steps.map(Number),
    every_ms: every,
    message: form.get("message") ?? "",
  };
}

/**
 * The protection section: which environments are protected and how many
 * approvals each needs, and for who may change it, the form.
 *
 * @param props the page's model, the CSRF token and a refused post
 * @returns the section
 *
 * @example
 * ```tsx ignore
 * <ProtectionSection tenant="acme" namespace="web" overview={overview} csrf={csrf} refused={undefined} />
 * ```
 */
export function ProtectionSection(
  props: {
    tenant: string;
    namespace: string;
    overview: ChangesOverview;
    csrf: string;
    refused: ListRefusal | undefined;
  },
) {
  const { overview } = props;
  const protection = overview.protection;
  const refused = props.refused?.form === "protection" ? props.refused : undefined;
  // the head's environments, and any protected one it no longer declares
  const envs = [
    ...overview.environments,
    ...Object.keys(protection).filter((e) => !overview.environments.includes(e)),
  ];
  const protectedEnvs = Object.keys(protection);
  return (
    <section class="card" aria-labelledby="protection-heading">
      <h2 id="protection-heading">Protected environments</h2>
      <p>
        A change that affects a protected environment lands only through a change request with
        enough approvals; a quick change or a rollback there is proposed for review instead.
      </p>
      {protectedEnvs.length === 0 ? <p>No environment of {props.namespace} is protected.</p> : (
        <ul>
          {protectedEnvs.map((env) => (
            <li>
              <strong>{env}</strong>: a change needs{" "}
              {approvals(protection[env]!.required_approvals)}
            </li>
          ))}
        </ul>
      )}
      {!overview.may.protect
        ? (
          <p class="small muted">
            Tenant admins and admins of {props.namespace}{" "}
            can change which environments are protected.
          </p>
        )
        : envs.length === 0
        ? <p class="small muted">The head declares no environment to protect.</p>
        : (
          <form
            method="post"
            action={ui.changesForm(props.tenant, props.namespace, "protection")}
            aria-label="Protected environments"
          >
            <CsrfField token={props.csrf} />
            <ProblemNotice id="protection-error" message={refused?.message} />
            {envs.map((env) => {
              const id = `protect-${env}`;
              const chosen = refused?.values.get(`${APPROVALS_FIELD}${env}`) ??
                String(protection[env]?.required_approvals ?? 0);
              return (
                <Field id={id} label={`Approvals needed in ${env}`}>
                  <select
                    id={id}
                    name={`${APPROVALS_FIELD}${env}`}
                    aria-invalid={refused?.field === `environments.${env}.required_approvals`
                      ? "true"
                      : undefined}
                  >
                    <Options
                      choices={Array.from(
                        { length: MAX_REQUIRED_APPROVALS + 1 },
                        (_, n) => [String(n), n === 0 ? "0: not protected" : String(n)] as const,
                      )}
                      selected={chosen}
                    />
                  </select>
                </Field>
              );
            })}
            <div class="actions">
              <button type="submit">Save protection</button>
            </div>
          </form>
        )}
    </section>
  );
}

/**
 * The rollout section: the form that opens a progressive rollout request
 * (for who may propose changes).
 *
 * @param props the page's model, the CSRF token and a refused post
 * @returns the section
 *
 * @example
 * ```tsx ignore
 * <RolloutSection tenant="acme" namespace="web" overview={overview} csrf={csrf} refused={undefined} />
 * ```
 */
export function RolloutSection(
  props: {
    tenant: string;
    namespace: string;
    overview: ChangesOverview;
    csrf: string;
    refused: ListRefusal | undefined;
  },
) {
  const { overview } = props;
  const refused = props.refused?.form === "rollout" ? props.refused : undefined;
  const value = (name: string, fallback = "") => refused?.values.get(name) ?? fallback;
  const invalid = (field: string) => refused?.field === field ? "true" : undefined;
  const described = (field: string) =>
    refused?.field === field ? `rollout-error rollout-${field}-hint` : `rollout-${field}-hint`;
  return (
    <section class="card" aria-labelledby="rollout-heading">
      <h2 id="rollout-heading">Start a progressive rollout</h2>
      <p>
        A rollout raises the share of one variation of a flag's rollout in one environment, step by
        step. It opens one change request; once approved (at once when no approval is needed) the
        first step applies, and each next step applies by itself one interval later, each a new
        version. Cancelling its schedule stops the steps still to come.
      </p>
      {overview.flags.length === 0 || overview.environments.length === 0
        ? <p class="muted">The head has no flag or no environment to roll out in.</p>
        : (
          <form
            method="post"
            action={ui.changesForm(props.tenant, props.namespace, "rollout")}
            aria-label="Start a progressive rollout"
          >
            <CsrfField token={props.csrf} />
            <ProblemNotice id="rollout-error" message={refused?.message} />
            <Field id="rollout-flag" label="Flag">
              <select id="rollout-flag" name="flag" aria-invalid={invalid("flag")}>
                <Options choices={overview.flags} selected={value("flag")} />
              </select>
            </Field>
            <Field id="rollout-environment" label="Environment">
              <select id="rollout-environment" name="environment">
                <Options choices={overview.environments} selected={value("environment")} />
              </select>
            </Field>
            <Field
              id="rollout-variation"
              label="Variation rolled out (optional)"
              hint="The variation whose share grows; empty: the rollout's first variation."
            >
              <input
                id="rollout-variation"
                type="text"
                name="variation"
                value={value("variation")}
                aria-invalid={invalid("variation")}
                aria-describedby={described("variation")}
              />
            </Field>
            <Field
              id="rollout-steps"
              label="Steps (percent)"
              hint="Increasing whole percentages, separated by commas, like 5,25,50,100."
            >
              <input
                id="rollout-steps"
                type="text"
                name="steps"
                required
                value={value("steps", "5,25,50,100")}
                aria-invalid={invalid("steps")}
                aria-describedby={described("steps")}
              />
            </Field>
            <Field
              id="rollout-every"
              label="Time between steps"
              hint="A whole number and a unit: m (minutes), h (hours), d (days) or w (weeks), like 1d."
            >
              <input
                id="rollout-every"
                type="text"
                name="every"
                required
                value={value("every", "1d")}
                aria-invalid={invalid("every")}
                aria-describedby={described("every")}
              />
            </Field>
            <Field
              id="rollout-message"
              label="Message"
              hint="Why roll out: the request and each version say it."
            >
              <input
                id="rollout-message"
                type="text"
                name="message"
                required
                maxlength={MAX_MESSAGE_LENGTH}
                value={value("message")}
                aria-invalid={invalid("message")}
                aria-describedby={described("message")}
              />
            </Field>
            <div class="actions">
              <button type="submit">Propose rollout</button>
            </div>
          </form>
        )}
    </section>
  );
}
