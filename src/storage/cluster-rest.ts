import type { Router } from "express";
import type { AppContext } from "../platform/context.js";
import { CLUSTER } from "./cluster.js";
import { handle } from "./ontap/respond.js";
import { getOne } from "./ontap/resource.js";
import { getJob } from "./jobs/operations.js";
import { jobRecord } from "./jobs/representation.js";

export function mountCluster(router: Router, ctx: AppContext): void {
  const cluster = { ...CLUSTER, _links: { self: { href: "/api/cluster" } } };
  router.get("/cluster", handle((req, res) => getOne(req, res, { keys: ["uuid"], records: async (rows) => rows }, cluster)));
  router.get(
    "/cluster/jobs/:uuid",
    handle(async (req, res) => {
      const job = await getJob(ctx, String(req.params.uuid));
      const svm = job.svmUuid ? await ctx.db.svm.findUnique({ where: { uuid: job.svmUuid } }) : null;
      await getOne(req, res, { keys: ["uuid"], records: async (rows) => rows }, jobRecord(job, svm?.name));
    }),
  );
}
