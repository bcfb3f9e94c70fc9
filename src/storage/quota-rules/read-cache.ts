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
  // a global `id` is its entity's uuid (or qtree key) encoded: it changes only with it
  ...["id", "uuid", "type", "qtreeName", "qtree", "users", "group", "svm", "volume", "spaceHardLimitBytes", "spaceSoftLimitBytes", "filesHardLimit", "filesSoftLimit", "userMapping"].map(
    (f) => `QuotaRule.${f}`,
  ),
  // a rule's qtree moves with qtree creation, renaming, changes and deletion, which are published
  ...["qtreeId", "name", "qtree"].map((f) => `QuotaQtree.${f}`),
  ...["id", "qtreeId", "name", "securityStyle", "unixPermissions", "volume"].map((f) => `Qtree.${f}`),
  ...["id", "name"].map((f) => `QuotaUser.${f}`),
  ...["id", "name"].map((f) => `QuotaGroup.${f}`),
  ...["id", "uuid", "name", "quotaEnabled", "quotaState", "sizeBytes", "svm"].map((f) => `Volume.${f}`),
  ...["id", "uuid", "name"].map((f) => `Svm.${f}`),
]);

/** Rule page queries answered from memory while no storage change was published (the rule pages' version). */
export const useRulePagesReadCache = (pages: Pick<ReadViews, "version">) => useReadCache(RULE_PAGE_FIELDS, () => pages.version());
