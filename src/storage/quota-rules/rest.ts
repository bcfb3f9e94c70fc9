import type { Router } from "express";
import type { AppContext } from "../../platform/context.js";
import { handle } from "../ontap/respond.js";
import { parseWriteQuery } from "../ontap/query.js";
import { mountReads, type ResourceSpec } from "../ontap/resource.js";
import { respondWrite } from "../jobs/respond.js";
import { WireForm, type WireFields } from "../ontap/wire.js";
import { RULE_PAGES } from "../core/events.js";
import { createRule, deleteRule, getRule, updateRule } from "./operations.js";
import { findRulePage, type RulePageRow } from "./page.js";
import { createRuleSchema, ruleLimitsSchema, type CreateRuleInput, type RuleLimitsInput } from "./schema.js";
import { ruleFilterFields, RULE_ORDER, RULE_SORTABLE } from "./filters.js";
import { ruleHref, ruleRecords } from "./serialize.js";

type RuleRow = Awaited<ReturnType<typeof getRule>> | RulePageRow;

const LIMIT_FIELDS: WireFields = {
  "space.hard_limit": ["spaceHardLimit", "limit"],
  "space.soft_limit": ["spaceSoftLimit", "limit"],
  "files.hard_limit": ["filesHardLimit", "limit"],
  "files.soft_limit": ["filesSoftLimit", "limit"],
  user_mapping: ["userMapping", "boolean"],
};
/** PATCH takes space, files and user_mapping only (anything else is refused, as the reference says). */
export const PATCH_BODY = new WireForm(LIMIT_FIELDS, [], ruleLimitsSchema);
export const POST_BODY = new WireForm(
  {
    type: ["type", "text"],
    "qtree.name": ["qtreeName", "text"],
    "group.name": ["group.name", "text"],
    "group.id": ["group.id", "text"],
    "svm.name": ["svm.name", "text"],
    "svm.uuid": ["svm.uuid", "text"],
    "volume.name": ["volume.name", "text"],
    "volume.uuid": ["volume.uuid", "text"],
    "users.name": ["users.name", "text"],
    "users.id": ["users.id", "text"],
    ...LIMIT_FIELDS,
  },
  ["users"],
  createRuleSchema,
);

export function mountQuotaRules(router: Router, ctx: AppContext): void {
  const spec: ResourceSpec<RuleRow> = {
    filterable: ruleFilterFields(ctx),
    sortable: RULE_SORTABLE,
    defaults: ["svm", "volume"],
    keys: ["uuid"],
    source: {
      ...RULE_ORDER,
      findMany: (args) => findRulePage(ctx, args),
      count: (args) => ctx.db.quotaRule.count(args as never),
      keyOf: (r) => r.uuid,
    },
    records: (rows) => ruleRecords(ctx, rows),
    cache: (key, build) => ctx.services.storage.pages.view(RULE_PAGES, key, build),
  };
  const records = async (uuid: string) => ruleRecords(ctx, [await getRule(ctx, uuid)]);

  mountReads(router, "/storage/quota/rules", "/:uuid", spec, (p) => getRule(ctx, p.uuid));

  router.post(
    "/storage/quota/rules",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, true);
      const { uuid, job } = await POST_BODY.run(() => createRule(ctx, POST_BODY.toDomain(req.body) as CreateRuleInput));
      await respondWrite(req, res, job, {
        returnTimeout: wq.returnTimeout,
        okStatus: 201,
        location: ruleHref(uuid),
        records: wq.returnRecords ? await records(uuid) : undefined,
      });
    }),
  );
  router.patch(
    "/storage/quota/rules/:uuid",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, true);
      const uuid = String(req.params.uuid);
      const job = await PATCH_BODY.run(() => updateRule(ctx, uuid, PATCH_BODY.toDomain(req.body) as RuleLimitsInput));
      await respondWrite(req, res, job, { returnTimeout: wq.returnTimeout, okStatus: 200, records: wq.returnRecords ? await records(uuid) : undefined });
    }),
  );
  router.delete(
    "/storage/quota/rules/:uuid",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, false);
      const job = await deleteRule(ctx, String(req.params.uuid));
      await respondWrite(req, res, job, { returnTimeout: wq.returnTimeout, okStatus: 200 });
    }),
  );
}
