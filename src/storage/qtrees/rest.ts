import type { Router } from "express";
import type { AppContext } from "../../platform/context.js";
import { expandDottedKeys, invalid, rejectUnknown, toBigInt, toStr } from "../ontap/body.js";
import { handle, respondSync, respondWrite } from "../ontap/respond.js";
import { parseWriteQuery } from "../ontap/query.js";
import { mountReads, type ResourceSpec } from "../ontap/resource.js";
import { startJob } from "../jobs/operations.js";
import { svmRef } from "../svms/operations.js";
import { volumeRef } from "../quota-rules/representation.js";
import { createQtree, deleteQtree, getQtree, SECURITY_STYLES, updateQtree } from "./operations.js";

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

function securityStyle(v: unknown) {
  const s = toStr("security_style", v);
  if (!(SECURITY_STYLES as readonly string[]).includes(s)) throw invalid("security_style", SECURITY_STYLES.join(", "));
  return s;
}
function permissions(v: unknown) {
  const n = Number(toBigInt("unix_permissions", v));
  if (n < 0 || n > 7777) throw invalid("unix_permissions", "an octal-looking integer up to 7777");
  return n;
}
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
  router.post(
    "/storage/qtrees",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, true);
      const body = expandDottedKeys(req.body) as Record<string, any>;
      rejectUnknown(body, { svm: { name: true, uuid: true }, volume: { name: true, uuid: true }, name: true, security_style: true, unix_permissions: true });
      const qtree = await createQtree(ctx, {
        svm: body.svm ?? {},
        volume: body.volume ?? {},
        name: toStr("name", body.name ?? ""),
        ...(body.security_style !== undefined ? { securityStyle: securityStyle(body.security_style) } : {}),
        ...(body.unix_permissions !== undefined ? { unixPermissions: permissions(body.unix_permissions) } : {}),
      });
      await respondSync(ctx, req, res, { description: "POST /api/storage/qtrees", svmUuid: qtree.volume.svmUuid, returnTimeout: wq.returnTimeout, okStatus: 201, location: href(qtree), records: wq.returnRecords ? [qtreeRecord(qtree)] : undefined });
    }),
  );
  router.patch(
    "/storage/qtrees/:volume/:id",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, false);
      const body = expandDottedKeys(req.body) as Record<string, any>;
      rejectUnknown(body, { name: true, security_style: true, unix_permissions: true });
      const current = await one(req);
      const job = await startJob(ctx, `PATCH ${href(current)}`, current.volume.svmUuid, async () => {
        await updateQtree(ctx, current.volumeUuid, current.qtreeId, {
          ...(body.name !== undefined ? { name: toStr("name", body.name) } : {}),
          ...(body.security_style !== undefined ? { securityStyle: securityStyle(body.security_style) } : {}),
          ...(body.unix_permissions !== undefined ? { unixPermissions: permissions(body.unix_permissions) } : {}),
        });
      });
      await respondWrite(req, res, job, { returnTimeout: wq.returnTimeout, okStatus: 200 });
    }),
  );
  router.delete(
    "/storage/qtrees/:volume/:id",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, false);
      const current = await one(req);
      const job = await startJob(ctx, `DELETE ${href(current)}`, current.volume.svmUuid, () => deleteQtree(ctx, current.volumeUuid, current.qtreeId));
      await respondWrite(req, res, job, { returnTimeout: wq.returnTimeout, okStatus: 200 });
    }),
  );
}
