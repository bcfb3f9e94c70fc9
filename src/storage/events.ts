import type { AppContext } from "../platform/context.js";
import { channelTopic } from "../platform/events.js";

/** Rule and volume-quota changes, for the GraphQL subscription (scoped by SVM/volume by the subscriber). */
const QUOTA_CHANNEL = "storage:quota";

export type QuotaChangeKind = "RULE_CREATED" | "RULE_UPDATED" | "RULE_DELETED" | "VOLUME_QUOTA_CHANGED";

export interface QuotaChange {
  kind: QuotaChangeKind;
  svmUuid: string;
  volumeUuid: string;
  ruleUuid?: string;
}

declare module "../platform/events.js" {
  interface EventChannels {
    "storage:quota": QuotaChange;
  }
}

export const quotaTopic = channelTopic(QUOTA_CHANNEL);

export const publishQuotaChange = (ctx: AppContext, change: QuotaChange) => ctx.bus.publish(QUOTA_CHANNEL, change);
