import { connectionCoordinates } from "../../platform/graphql/connection.js";
import { useReadCache } from "../../platform/graphql/read-cache.js";
import type { ReadViews } from "../../platform/read-views.js";

/**
 * The fields of a quota rule page whose every change is published (rule changes, volume quota state and size,
 * SVM, volume and qtree creation, renaming and deletion): a query made only of them is answered from memory
 * until the next storage change. Not here: jobs, quota reports, the qtree and volume lists.
 */
export const RULE_PAGE_FIELDS = new Set([
  "Query.quotaRules",
  "Query.quotaRule",
  ...connectionCoordinates("QueryQuotaRulesConnection"),
  ...["uuid", "type", "qtreeName", "qtree", "users", "group", "volume", "spaceHardLimit", "spaceSoftLimit", "filesHardLimit", "filesSoftLimit", "userMapping"].map(
    (f) => `QuotaRule.${f}`,
  ),
  // a rule's qtree id moves with qtree creation, renaming and deletion, which are published
  ...["id", "name"].map((f) => `QuotaQtree.${f}`),
  ...["id", "name"].map((f) => `QuotaUser.${f}`),
  ...["id", "name"].map((f) => `QuotaGroup.${f}`),
  ...["uuid", "name", "quotaEnabled", "quotaState", "size", "svm"].map((f) => `Volume.${f}`),
  ...["uuid", "name"].map((f) => `Svm.${f}`),
]);

/** Rule page queries answered from memory while no storage change was published (the rule pages' version). */
export const useRulePagesReadCache = (pages: Pick<ReadViews, "version">) => useReadCache(RULE_PAGE_FIELDS, () => pages.version());
