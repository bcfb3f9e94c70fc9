import type { Router } from "express";
import { handle } from "../ontap/respond.js";
import { getOne } from "../ontap/resource.js";
import { CLUSTER } from "./serialize.js";

export function mountCluster(router: Router): void {
  const cluster = { ...CLUSTER, _links: { self: { href: "/api/cluster" } } };
  router.get("/cluster", handle((req, res) => getOne(req, res, { keys: ["uuid"], records: async (rows) => rows }, cluster)));
}
