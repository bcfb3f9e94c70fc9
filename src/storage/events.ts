import type { AppContext } from "../platform/context.js";

/** Rule and volume-quota changes, for the GraphQL subscription (scoped by SVM/volume by the subscriber). */
export const QUOTA_CHANNEL = "storage:quota";

export type QuotaChangeKind = "RULE_CREATED" | "RULE_UPDATED" | "RULE_DELETED" | "VOLUME_QUOTA_CHANGED";

export interface QuotaChange {
  kind: QuotaChangeKind;
  svmUuid: string;
  volumeUuid: string;
  ruleUuid?: string;
}

export const publishQuotaChange = (ctx: AppContext, change: QuotaChange) => ctx.bus.publish(QUOTA_CHANNEL, change);
