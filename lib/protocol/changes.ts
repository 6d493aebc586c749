/**
 * The wire shapes of protected environments and change requests
 * (`/api/v1/tenants/{t}/namespaces/{ns}/protection` and
 * `…/change-requests`), shared by the service and its clients.
 *
 * @module
 */

/** Where a change request is in its life. */
export type ChangeStatus =
  | "open"
  | "approved"
  | "scheduled"
  | "applied"
  | "rejected"
  | "withdrawn"
  | "failed";

/** Every status, in life order. */
export const CHANGE_STATUSES: readonly ChangeStatus[] = [
  "open",
  "approved",
  "scheduled",
  "applied",
  "rejected",
  "withdrawn",
  "failed",
];

/** One environment's protection. */
export interface EnvironmentProtection {
  /** Approvals a change that affects the environment needs (1–5). */
  required_approvals: number;
}

/** `GET|PUT …/protection`. */
export interface ProtectionInfo {
  /** The protected environments (an environment not listed is not protected). */
  environments: Record<string, EnvironmentProtection>;
  updated_at: string | null;
}

/** One approval of a change request. */
export interface ApprovalInfo {
  user_id: string;
  email: string | null;
  at: string;
  comment?: string;
}

/** A progressive rollout: one rollout rule's weights, step after step. */
export interface RolloutPlanInfo {
  flag: string;
  environment: string;
  /** The rule stepped (0-based, among the rules in force in the environment). */
  rule: number;
  /** The variation rolled out. */
  variation: string;
  /** Its percentage at each step. */
  steps: number[];
  /** Time between two steps, ms. */
  every_ms: number;
  /** Steps applied so far. */
  done: number;
}

/** A change request as the API shows it. */
export interface ChangeRequestInfo {
  /** `cr_<ulid>`. */
  id: string;
  tenant_slug: string;
  namespace_slug: string;
  /** The head version the files were proposed on. */
  base_version: number;
  /** 1 when opened, one more at each update: a review names the revision it read. */
  revision: number;
  /** Paths the request adds, changes or removes. */
  changed_paths: string[];
  message: string;
  author_id: string;
  author_kind: "user" | "token";
  author_email: string | null;
  created_at: string;
  updated_at: string;
  /** Environments whose evaluation the request changes. */
  impact: string[];
  /** Approvals its protected environments need (0: none). */
  required_approvals: number;
  /** Approvals still missing. */
  approvals_missing: number;
  approvals: ApprovalInfo[];
  rejection: { user_id: string; email: string | null; at: string; comment: string } | null;
  status: ChangeStatus;
  /** When a scheduled apply (or a rollout's next step) is due. */
  scheduled_at: string | null;
  /** The version the apply (or the rollout's last step so far) committed. */
  applied_version: number | null;
  /** Why a scheduled apply failed. */
  failure: string | null;
  plan: RolloutPlanInfo | null;
}

/** One comment on a change request. */
export interface ChangeCommentInfo {
  id: string;
  author_id: string;
  author_email: string | null;
  at: string;
  text: string;
}

/** One value-level change (`flag a in production: enabled: true → false`). */
export interface ValueChangeInfo {
  environment: string | null;
  subject: "namespace" | "environment" | "flag" | "segment";
  key: string;
  change: "added" | "removed" | "changed";
  what: string[];
}

/** `GET …/change-requests/{id}`: the request and what a reader needs to review it. */
export interface ChangeRequestDetails {
  change_request: ChangeRequestInfo;
  comments: ChangeCommentInfo[];
  /** What the proposal changes, value by value (null: its base version was pruned). */
  changes: ValueChangeInfo[] | null;
  /** Each changed path's proposed text (null: removed). */
  files: Record<string, string | null>;
  /** Each changed path's text at the base (null: absent), or null when the base was pruned. */
  base: Record<string, string | null> | null;
  /** The steps the reader may take now. */
  can: {
    approve: boolean;
    reject: boolean;
    apply: boolean;
    /** Cancel a scheduled apply, or stop a rollout. */
    cancel: boolean;
    update: boolean;
    withdraw: boolean;
    comment: boolean;
  };
}

/** `POST …/change-requests/{id}/apply`: the version (null when scheduled) and the request. */
export interface ApplyResult {
  version: number | null;
  change_request: ChangeRequestInfo;
}

/** Body of `POST …/rollouts`. */
export interface RolloutInput {
  flag: string;
  environment: string;
  /** The variation rolled out (default: the rollout's first entry). */
  variation?: string;
  /** Percentages, increasing. */
  steps: number[];
  /** Time between steps: `1d`, `6h`, … (or `every_ms`). */
  every?: string;
  every_ms?: number;
  message: string;
}
