import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { projectToRest } from "../projects/serialize.js";
import { sendJson, type Gns3Routes } from "../rest/kit.js";
import { createSnapshot, deleteSnapshot, listSnapshots, restoreSnapshot } from "./operations.js";
import { snapshotFields } from "./schema.js";
import { snapshotToRest } from "../projects/snapshot-store.js";

/** GNS3's snapshot body over the contract's field rules. */
const createSchema = z.strictObject({ name: snapshotFields.name, description: snapshotFields.description.optional() });

export function snapshotRoutes(routes: Gns3Routes, ctx: AppContext): void {
  const S = "/v2/projects/{project_id}/snapshots";
  routes.add("GET", S, async ({ res, params }) => sendJson(res, 200, (await listSnapshots(ctx, params.project_id)).map(snapshotToRest)));
  routes.add(
    "POST",
    S,
    async ({ res, params, body }) => sendJson(res, 201, snapshotToRest(await createSnapshot(ctx, params.project_id, body))),
    { schema: createSchema },
  );
  routes.add("DELETE", `${S}/{snapshot_id}`, async ({ res, params }) => {
    await deleteSnapshot(ctx, params.project_id, params.snapshot_id);
    res.status(204).end();
  });
  routes.add("POST", `${S}/{snapshot_id}/restore`, async ({ res, params }) => {
    sendJson(res, 201, projectToRest(ctx, await restoreSnapshot(ctx, params.project_id, params.snapshot_id)));
  });
}
