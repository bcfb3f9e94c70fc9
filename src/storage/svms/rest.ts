import type { Router } from "express";
import type { AppContext } from "../../platform/context.js";
import { handle } from "../ontap/respond.js";
import { parseWriteQuery } from "../ontap/query.js";
import { mountReads, type ResourceSpec } from "../ontap/resource.js";
import { mountCreate, respondSync } from "../jobs/respond.js";
import { WireForm } from "../ontap/wire.js";
import { createSvm, deleteSvm, getSvm } from "./operations.js";
import { createSvmSchema } from "./schema.js";

export const POST_BODY = new WireForm({ name: ["name", "text"] }, [], createSvmSchema);

type SvmRow = Awaited<ReturnType<typeof getSvm>>;
const href = (uuid: string) => `/api/svm/svms/${uuid}`;
const svmRecord = (s: SvmRow) => ({ uuid: s.uuid, name: s.name, state: "running", _links: { self: { href: href(s.uuid) } } });

export function mountSvms(router: Router, ctx: AppContext): void {
  const spec: ResourceSpec<SvmRow> = {
    filterable: { uuid: { type: "string", column: "uuid" }, name: { type: "string", column: "name" } },
    sortable: new Set(["uuid", "name"]),
    defaults: ["name"],
    keys: ["uuid"],
    source: {
      keyColumn: "uuid",
      orderFor: (f, dir) => ({ [f]: dir }),
      findMany: (args) => ctx.db.svm.findMany(args as never),
      count: (args) => ctx.db.svm.count(args as never),
      keyOf: (s) => s.uuid,
    },
    records: async (rows) => rows.map(svmRecord),
  };
  mountReads(router, "/svm/svms", "/:uuid", spec, (p) => getSvm(ctx, p.uuid));
  mountCreate(router, ctx, "/svm/svms", {
    body: POST_BODY,
    create: (input) => createSvm(ctx, input),
    subject: (svm) => ({ action: "create", resource: "svm", key: svm.uuid }),
    svmUuid: (svm) => svm.uuid,
    href: (svm) => href(svm.uuid),
    record: svmRecord,
  });
  router.delete(
    "/svm/svms/:uuid",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, false);
      const uuid = String(req.params.uuid);
      await deleteSvm(ctx, uuid);
      await respondSync(ctx, req, res, { subject: { action: "delete", resource: "svm", key: uuid }, svmUuid: null, returnTimeout: wq.returnTimeout, okStatus: 200 });
    }),
  );
}
