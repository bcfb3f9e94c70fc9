import type { AppContext } from "../../platform/context.js";
import { channelTopic } from "../../platform/events.js";

/** Rule and volume-quota changes, for the GraphQL subscription (scoped by SVM/volume by the subscriber). */
const QUOTA_CHANNEL = "storage:quota";
/** SVMs, volumes and qtrees created, changed or deleted: what a rule page shows of them (names, ids, existence). */
const OBJECTS_CHANNEL = "storage:objects";

export type QuotaChangeKind = "RULE_CREATED" | "RULE_UPDATED" | "RULE_DELETED" | "VOLUME_QUOTA_CHANGED";

export interface QuotaChange {
  kind: QuotaChangeKind;
  svmUuid: string;
  volumeUuid: string;
  ruleUuid?: string;
  /** RULE_UPDATED: the rule's fields the change gave a new value (QuotaRule field names). */
  changed?: string[];
}

export interface StorageObjectChange {
  kind: "svm" | "volume" | "qtree";
  /** The SVM's or volume's uuid; a qtree's volume uuid and id ("<volume>/<id>"). */
  key: string;
}

declare module "../../platform/events.js" {
  interface EventChannels {
    "storage:quota": QuotaChange;
    "storage:objects": StorageObjectChange;
  }
}

export const quotaTopic = channelTopic(QUOTA_CHANNEL);
export const objectsTopic = channelTopic(OBJECTS_CHANNEL);

/** The one scope of the storage read views: every published storage change can change a rule page. */
export const RULE_PAGES = "quota-rules";

// Publishing drops the rule pages first: a read after this write's answer must not see them.

export function publishQuotaChange(ctx: AppContext, change: QuotaChange) {
  ctx.services.storage?.pages.invalidate(RULE_PAGES);
  return ctx.bus.publish(QUOTA_CHANNEL, change);
}

export function publishObjectChange(ctx: AppContext, change: StorageObjectChange) {
  ctx.services.storage?.pages.invalidate(RULE_PAGES);
  return ctx.bus.publish(OBJECTS_CHANNEL, change);
}
