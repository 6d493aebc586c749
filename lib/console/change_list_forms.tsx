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
import { SelectField, TextField } from "./form_fields.tsx";
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

/** What a section of the page is drawn from. */
export interface ListSectionProps {
  tenant: string;
  namespace: string;
  /** The page's model. */
  overview: ChangesOverview;
  /** The CSRF token of its form. */
  csrf: string;
  /** A refused post of one of the page's forms, if any (a section shows only its own). */
  refused: ListRefusal | undefined;
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
export function ProtectionSection(props: ListSectionProps) {
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
                <SelectField
                  id={id}
                  name={`${APPROVALS_FIELD}${env}`}
                  label={`Approvals needed in ${env}`}
                  choices={Array.from(
                    { length: MAX_REQUIRED_APPROVALS + 1 },
                    (_, n) => [String(n), n === 0 ? "0: not protected" : String(n)] as const,
                  )}
                  selected={chosen}
                  invalid={refused?.field === `environments.${env}.required_approvals`}
                />
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
export function RolloutSection(props: ListSectionProps) {
  const { overview } = props;
  const refused = props.refused?.form === "rollout" ? props.refused : undefined;
  const value = (name: string, fallback = "") => refused?.values.get(name) ?? fallback;
  const control = (name: string) => ({
    id: `rollout-${name}`,
    name,
    invalid: refused?.field === name,
  });
  const text = (name: string, fallback = "") => ({
    ...control(name),
    value: value(name, fallback),
    describedby: refused?.field === name
      ? `rollout-error rollout-${name}-hint`
      : `rollout-${name}-hint`,
  });
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
            <SelectField
              {...control("flag")}
              label="Flag"
              choices={overview.flags}
              selected={value("flag")}
            />
            <SelectField
              id="rollout-environment"
              name="environment"
              label="Environment"
              choices={overview.environments}
              selected={value("environment")}
            />
            <TextField
              {...text("variation")}
              label="Variation rolled out (optional)"
              hint="The variation whose share grows; empty: the rollout's first variation."
            />
            <TextField
              {...text("steps", "5,25,50,100")}
              label="Steps (percent)"
              hint="Increasing whole percentages, separated by commas, like 5,25,50,100."
              required
            />
            <TextField
              {...text("every", "1d")}
              label="Time between steps"
              hint="A whole number and a unit: m (minutes), h (hours), d (days) or w (weeks), like 1d."
              required
            />
            <TextField
              {...text("message")}
              label="Message"
              hint="Why roll out: the request and each version say it."
              required
              maxlength={MAX_MESSAGE_LENGTH}
            />
            <div class="actions">
              <button type="submit">Propose rollout</button>
            </div>
          </form>
        )}
    </section>
  );
}
