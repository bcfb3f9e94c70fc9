import type { Router } from "express";
import type { AppContext } from "../../platform/context.js";
import { handle } from "../ontap/respond.js";
import { parseWriteQuery } from "../ontap/query.js";
import { mountReads, type ResourceSpec } from "../ontap/resource.js";
import { mountCreate, respondSync, respondWrite } from "../jobs/respond.js";
import { WireForm } from "../ontap/wire.js";
import { svmRef } from "../svms/operations.js";
import { createVolume, deleteVolume, getVolume, updateVolume } from "./operations.js";
import { createVolumeSchema, updateVolumeSchema, type CreateVolumeInput, type UpdateVolumeInput } from "./schema.js";

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

export const POST_BODY = new WireForm({ name: ["name", "text"], "svm.name": ["svm.name", "text"], "svm.uuid": ["svm.uuid", "text"], size: ["size", "integer"] }, [], createVolumeSchema);
export const PATCH_BODY = new WireForm({ "quota.enabled": ["quotaEnabled", "boolean"], size: ["size", "integer"] }, [], updateVolumeSchema);

const COLUMNS: Record<string, string> = { uuid: "uuid", name: "name", "svm.uuid": "svmUuid", size: "sizeBytes", "quota.enabled": "quotaEnabled", "quota.state": "quotaState" };

export function mountVolumes(router: Router, ctx: AppContext): void {
  const spec: ResourceSpec<VolumeRow> = {
    filterable: {
      uuid: { type: "string", column: "uuid" },
      name: { type: "string", column: "name" },
      "svm.uuid": { type: "string", column: "svmUuid" },
      "svm.name": { type: "string", column: "name", path: ["svm"] },
      size: { type: "bigint", column: "sizeBytes", nullable: true },
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
  mountCreate(router, ctx, "/storage/volumes", {
    body: POST_BODY,
    create: (input: CreateVolumeInput) => createVolume(ctx, input),
    subject: (volume) => ({ action: "create", resource: "volume", key: volume.uuid }),
    svmUuid: (volume) => volume.svmUuid,
    href: (volume) => href(volume.uuid),
    record: volumeRecord,
  });
  router.patch(
    "/storage/volumes/:uuid",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, false);
      const uuid = String(req.params.uuid);
      const job = await PATCH_BODY.run(() => updateVolume(ctx, uuid, PATCH_BODY.toDomain(req.body) as UpdateVolumeInput));
      await respondWrite(req, res, job, { returnTimeout: wq.returnTimeout, okStatus: 200 });
    }),
  );
  router.delete(
    "/storage/volumes/:uuid",
    handle(async (req, res) => {
      const wq = parseWriteQuery(req.query as Record<string, unknown>, false);
      const volume = await getVolume(ctx, String(req.params.uuid));
      await deleteVolume(ctx, volume.uuid);
      await respondSync(ctx, req, res, { subject: { action: "delete", resource: "volume", key: volume.uuid }, svmUuid: volume.svmUuid, returnTimeout: wq.returnTimeout, okStatus: 200 });
    }),
  );
}
