import type { Router } from "express";
import type { AppContext } from "../../platform/context.js";
import { expandDottedKeys, rejectUnknown, toBigInt, toBool, toStr } from "../ontap/body.js";
import { handle, respondSync, respondWrite } from "../ontap/respond.js";
import { parseWriteQuery } from "../ontap/query.js";
import { mountReads, type ResourceSpec } from "../ontap/resource.js";
import { startJob } from "../jobs/operations.js";
import { svmRef } from "../svms/operations.js";
import { createVolume, deleteVolume, getVolume, setQuotaEnabled } from "./operations.js";

type VolumeRow = Awaited<ReturnType<typeof getVolume>>;
const href = (uuid: string) => `/api/storage/volumes/${uuid}`;

export const volumeRecord = (v: VolumeRow) => ({
  uuid: v.uuid,
  name: v.name,
  svm: svmRef(v.svm),
  ...(v.sizeBytes !== null ? { size: Number(v.sizeBytes) } : {}),
  state: "online",
  style: "flexvol",
  type: "rw",
  quota: { enabled: v.quotaEnabled, state: v.quotaState },
  _links: { self: { href: href(v.uuid) } },
});

const COLUMNS: Record<string, string> = { uuid: "uuid", name: "name", "svm.uuid": "svmUuid", size: "sizeBytes", "quota.enabled": "quotaEnabled", "quota.state": "quotaState" };

export function mountVolumes(router: Router, ctx: AppContext): void {
  const spec: ResourceSpec<VolumeRow> = {
    filterable: {
      uuid: { type: "string", column: "uuid" },
      name: { type: "string", column: "name" },
      "svm.uuid": { type: "string", column: "svmUuid" },
      "svm.name": { type: "string", column: "name", path: ["svm"] },
      size: { type: "bigint", column: "sizeBytes" },
      "quota.enabled": { type: "boolean", column: "quotaEnabled" },
      "quota.state": { type: "string", column: "quotaState" },
    },
    sortable: new Set([...Object.keys(COLUMNS), "svm.name"]),
    defaults: ["name"],
    keys: ["uuid"],
    source: {
      keyColumn: "uuid",
      orderFor: (f, dir) => (f === "svm.name" ? { svm: { name: dir } } : { [COLUMNS[f]]: dir }),
      findMany: (args) => ctx.db.volume.findMany({ ...(args as object), include: { svm: true } }),
      count: (args) => ctx.db.volume.count(args as never),
      keyOf: (v) => v.uuid,
    },
    records: async (rows) => rows.map(volumeRecord),
  };

  mountReads(router, "/storage/volumes", "/:uuid", spec, (p) => getVolume(ctx, p.uuid));
  router.post(
    "/storage/volumes",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, true);
      const body = expandDottedKeys(req.body) as Record<string, any>;
      rejectUnknown(body, { name: true, svm: { name: true, uuid: true }, size: true });
      const volume = await createVolume(ctx, {
        name: toStr("name", body.name ?? ""),
        svm: { ...(body.svm?.name !== undefined ? { name: toStr("svm.name", body.svm.name) } : {}), ...(body.svm?.uuid !== undefined ? { uuid: toStr("svm.uuid", body.svm.uuid) } : {}) },
        ...(body.size !== undefined ? { size: toBigInt("size", body.size) } : {}),
      });
      await respondSync(ctx, req, res, { description: "POST /api/storage/volumes", svmUuid: volume.svmUuid, returnTimeout: wq.returnTimeout, okStatus: 201, location: href(volume.uuid), records: wq.returnRecords ? [volumeRecord(volume)] : undefined });
    }),
  );
  router.patch(
    "/storage/volumes/:uuid",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, false);
      const uuid = String(req.params.uuid);
      const body = expandDottedKeys(req.body) as Record<string, any>;
      rejectUnknown(body, { quota: { enabled: true }, size: true });
      const volume = await getVolume(ctx, uuid);
      if (body.size !== undefined) await ctx.db.volume.update({ where: { uuid }, data: { sizeBytes: toBigInt("size", body.size) } });
      const enabled = body.quota?.enabled === undefined ? undefined : toBool("quota.enabled", body.quota.enabled);
      const job = await startJob(ctx, `PATCH /api/storage/volumes/${uuid}`, volume.svmUuid, async () => {
        if (enabled !== undefined) await setQuotaEnabled(ctx, uuid, enabled);
      });
      await respondWrite(req, res, job, { returnTimeout: wq.returnTimeout, okStatus: 200 });
    }),
  );
  router.delete(
    "/storage/volumes/:uuid",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, false);
      const volume = await getVolume(ctx, String(req.params.uuid));
      await deleteVolume(ctx, volume.uuid);
      await respondSync(ctx, req, res, { description: `DELETE /api/storage/volumes/${volume.uuid}`, svmUuid: volume.svmUuid, returnTimeout: wq.returnTimeout, okStatus: 200 });
    }),
  );
}
