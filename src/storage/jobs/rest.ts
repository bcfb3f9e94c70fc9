import type { Router } from "express";
import type { AppContext } from "../../platform/context.js";
import { handle } from "../ontap/respond.js";
import { getOne } from "../ontap/resource.js";
import { getJob } from "./operations.js";
import { jobRecord } from "./serialize.js";

/** GET /api/cluster/jobs/{uuid}: where ONTAP clients poll the job an asynchronous change returned. */
export function mountJobs(router: Router, ctx: AppContext): void {
  router.get(
    "/cluster/jobs/:uuid",
    handle(async (req, res) => {
      const job = await getJob(ctx, String(req.params.uuid));
      const svm = job.svmUuid ? await ctx.db.svm.findUnique({ where: { uuid: job.svmUuid } }) : null;
      await getOne(req, res, { keys: ["uuid"], records: async (rows) => rows }, jobRecord(job, svm?.name));
    }),
  );
}
