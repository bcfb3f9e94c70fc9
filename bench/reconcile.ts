/**
 * Reopening a large project (run: `npm run bench:reconcile`): how long the local runtime takes to wire the links of
 * an open project of 1,000 vpcs nodes and 1,166 links (what a project open, a snapshot restore and a server started
 * with the project open do before it answers), and the SQL statements it sends. In-process, SQLite; 3 runs.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { patchbayLibrary } from "./harness.js";

const { loadConfig, startServer } = await patchbayLibrary(); // the bundle production runs
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pb-reconcile-"));
let statements = 0;
const server = await startServer(
  { ...loadConfig([], {}), port: 0, dataDir: dir, databaseUrl: `file:${dir}/db.sqlite`, logRequests: false, redisUrl: undefined, consolePorts: [20000, 29999] },
  { onSqlStatement: () => void statements++ },
);
const db = server.ctx.db;
const projectId = randomUUID();
await db.project.create({ data: { id: projectId, name: "large", filename: "large.gns3", status: "opened" } });
const nodes = Array.from({ length: 1000 }, (_, i) => ({ id: randomUUID(), projectId, nodeType: "vpcs", name: `PC${i + 1}` }));
await db.node.createMany({ data: nodes });
const links = Array.from({ length: 1166 }, () => ({ id: randomUUID(), projectId }));
await db.link.createMany({ data: links });
await db.linkEndpoint.createMany({
  data: links.flatMap((l, i) => [
    { linkId: l.id, position: 0, nodeId: nodes[i % 1000].id, adapterNumber: i < 1000 ? 0 : 2, portNumber: 0 },
    { linkId: l.id, position: 1, nodeId: nodes[(i * 7 + 1) % 1000].id, adapterNumber: i < 1000 ? 1 : 3, portNumber: 0 },
  ]),
});
const runtime = server.ctx.services.emulation.runtime;
for (let r = 0; r < 3; r++) {
  await runtime.releaseProject(projectId);
  const s0 = statements;
  const t0 = performance.now();
  await runtime.reconcileProject(projectId);
  console.log(`wire 1,166 links: ${(performance.now() - t0).toFixed(0)} ms, ${statements - s0} SQL statements, wired ${runtime.snapshot().links.length}, load ${os.loadavg()[0].toFixed(1)}`);
}
await server.close();
fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
