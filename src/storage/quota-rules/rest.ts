import type { Router } from "express";
import type { AppContext } from "../../platform/context.js";
import { handle, respondWrite } from "../ontap/respond.js";
import { parseWriteQuery } from "../ontap/query.js";
import { mountReads, type ResourceSpec } from "../ontap/resource.js";
import { parseCreateRule, parsePatchRule } from "./input.js";
import { createRule, deleteRule, getRule, RULE_INCLUDE, updateRule } from "./operations.js";
import { ruleFilterFields, ruleOrder, RULE_SORTABLE } from "./filters.js";
import { ruleHref, ruleRecords } from "./representation.js";

type RuleRow = Awaited<ReturnType<typeof getRule>>;

export function mountQuotaRules(router: Router, ctx: AppContext): void {
  const spec: ResourceSpec<RuleRow> = {
    filterable: ruleFilterFields(ctx),
    sortable: RULE_SORTABLE,
    defaults: ["svm", "volume"],
    keys: ["uuid"],
    source: {
      keyColumn: "uuid",
      orderFor: ruleOrder,
      findMany: (args) => ctx.db.quotaRule.findMany({ ...(args as object), include: RULE_INCLUDE }),
      count: (args) => ctx.db.quotaRule.count(args as never),
      keyOf: (r) => r.uuid,
    },
    records: (rows) => ruleRecords(ctx, rows),
  };
  const records = async (uuid: string) => ruleRecords(ctx, [await getRule(ctx, uuid)]);

  mountReads(router, "/storage/quota/rules", "/:uuid", spec, (p) => getRule(ctx, p.uuid));

  router.post(
    "/storage/quota/rules",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, true);
      const { uuid, job } = await createRule(ctx, parseCreateRule(req.body));
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
      const patch = parsePatchRule(req.body);
      const job = await updateRule(ctx, uuid, patch);
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
