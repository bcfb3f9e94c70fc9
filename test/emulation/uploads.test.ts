import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { makeNode, makeProject } from "./nodes-support.js";

/** Uploads (node files, project files, imports) have their own limit, PATCHBAY_UPLOAD_LIMIT, separate from JSON bodies. */
let s: TestServer;
beforeAll(async () => void (s = await startTestServer({ uploadLimit: "64kb", bodyLimit: "1kb" })));
afterAll(() => s.close());

it("takes node files up to the upload limit, refuses larger ones with 413 and writes nothing", async () => {
  const project = await makeProject(s);
  const node = await makeNode(s, project, { name: "PC1", node_type: "vpcs" });
  const base = `/v2/projects/${project}/nodes/${node.node_id}/files`;
  const ok = await call(s.url, "POST", `${base}/startup.vpc`, "ip 10.0.0.1/24\n".repeat(200)); // ~3 KB: above bodyLimit, below uploadLimit
  expect(ok.status).toBe(201);
  const big = await call(s.url, "POST", `${base}/big.bin`, "x".repeat(100 * 1024));
  expect(big.status).toBe(413);
  expect(big.body).toMatchObject({ status: 413 });
  const dir = path.join(s.dataDir, "projects", project, "project-files", "vpcs", node.node_id);
  expect(fs.existsSync(path.join(dir, "big.bin"))).toBe(false);
  expect((await call(s.url, "GET", `${base}/startup.vpc`)).text.length).toBe(15 * 200);
});
