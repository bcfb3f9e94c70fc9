import type { Router } from "express";
import type { AppContext } from "../../platform/context.js";
import { invalid } from "../ontap/body.js";
import { handle } from "../ontap/respond.js";
import { parseWriteQuery } from "../ontap/query.js";
import { mountReads, type ResourceSpec } from "../ontap/resource.js";
import { mountCreate, respondWrite } from "../jobs/respond.js";
import { WireForm, type WireFields } from "../ontap/wire.js";
import { svmRef } from "../svms/operations.js";
import { volumeRef } from "../quota-rules/serialize.js";
import { createQtree, deleteQtree, getQtree, updateQtree } from "./operations.js";
import { createQtreeSchema, updateQtreeSchema, type CreateQtreeInput, type UpdateQtreeInput } from "./schema.js";

type QtreeRow = Awaited<ReturnType<typeof getQtree>>;
const href = (q: { volumeUuid: string; qtreeId: number }) => `/api/storage/qtrees/${q.volumeUuid}/${q.qtreeId}`;

const qtreeRecord = (q: QtreeRow) => ({
  svm: svmRef(q.volume.svm),
  volume: volumeRef(q.volume),
  id: q.qtreeId,
  name: q.name,
  security_style: q.securityStyle,
  unix_permissions: q.unixPermissions,
  path: `/vol/${q.volume.name}/${q.name}`,
  _links: { self: { href: href(q) } },
});

const SETTINGS: WireFields = { name: ["name", "text"], security_style: ["securityStyle", "text"], unix_permissions: ["unixPermissions", "int"] };
export const POST_BODY = new WireForm(
  { ...SETTINGS, "svm.name": ["svm.name", "text"], "svm.uuid": ["svm.uuid", "text"], "volume.name": ["volume.name", "text"], "volume.uuid": ["volume.uuid", "text"] },
  [],
  createQtreeSchema,
);
export const PATCH_BODY = new WireForm(SETTINGS, [], updateQtreeSchema);
const qtreeId = (v: unknown) => {
  const s = String(v);
  if (!/^\d{1,9}$/.test(s)) throw invalid("id", "an integer");
  return Number(s);
};

const COLUMNS: Record<string, string> = { id: "qtreeId", name: "name", "volume.uuid": "volumeUuid", security_style: "securityStyle", unix_permissions: "unixPermissions" };

export function mountQtrees(router: Router, ctx: AppContext): void {
  const include = { volume: { include: { svm: true } } };
  const spec: ResourceSpec<QtreeRow> = {
    filterable: {
      id: { type: "int", column: "qtreeId" },
      name: { type: "string", column: "name" },
      "volume.uuid": { type: "string", column: "volumeUuid" },
      "volume.name": { type: "string", column: "name", path: ["volume"] },
      "svm.uuid": { type: "string", column: "svmUuid", path: ["volume"] },
      "svm.name": { type: "string", column: "name", path: ["volume", "svm"] },
      security_style: { type: "string", column: "securityStyle" },
      unix_permissions: { type: "int", column: "unixPermissions" },
    },
    sortable: new Set([...Object.keys(COLUMNS), "volume.name"]),
    defaults: ["svm", "volume", "name"],
    keys: ["id"],
    source: {
      keyColumn: "key",
      orderFor: (f, dir) => (f === "volume.name" ? { volume: { name: dir } } : { [COLUMNS[f]]: dir }),
      findMany: (args) => ctx.db.qtree.findMany({ ...(args as object), include }),
      count: (args) => ctx.db.qtree.count(args as never),
      keyOf: (q) => q.key,
    },
    records: async (rows) => rows.map(qtreeRecord),
  };
  const one = (req: { params: Record<string, unknown> }) => getQtree(ctx, String(req.params.volume), qtreeId(req.params.id));

  mountReads(router, "/storage/qtrees", "/:volume/:id", spec, (p) => one({ params: p }));
  mountCreate(router, ctx, "/storage/qtrees", {
    body: POST_BODY,
    create: (input: CreateQtreeInput) => createQtree(ctx, input),
    subject: (qtree) => ({ action: "create", resource: "qtree", key: `${qtree.volumeUuid}/${qtree.qtreeId}` }),
    svmUuid: (qtree) => qtree.volume.svmUuid,
    href,
    record: qtreeRecord,
  });
  router.patch(
    "/storage/qtrees/:volume/:id",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, false);
      const body = PATCH_BODY.toDomain(req.body) as UpdateQtreeInput;
      const job = await PATCH_BODY.run(() => updateQtree(ctx, String(req.params.volume), qtreeId(req.params.id), body));
      await respondWrite(req, res, job, { returnTimeout: wq.returnTimeout, okStatus: 200 });
    }),
  );
  router.delete(
    "/storage/qtrees/:volume/:id",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, false);
      const job = await deleteQtree(ctx, String(req.params.volume), qtreeId(req.params.id));
      await respondWrite(req, res, job, { returnTimeout: wq.returnTimeout, okStatus: 200 });
    }),
  );
}
