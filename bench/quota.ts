/**
 * Benchmark: a filtered page of quota rules out of 100,000, through real HTTP (REST and GraphQL), next to a bare
 * Node http server that returns a body of the same size, measured with the same client.
 *
 *   npx tsx bench/quota.ts                                   # SQLite (fresh file in a temp dir)
 *   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/quota.ts   # fresh PG database
 *
 * Knobs (env): BENCH_RULES (100000), BENCH_CONCURRENCY (16), BENCH_DURATION (10 s), BENCH_WARMUP (2 s),
 * BENCH_SQLITE_ANALYZE=0 (skip the server's hourly ANALYZE after loading on SQLite; PostgreSQL is always analyzed, as autovacuum would),
 * BENCH_PROFILE=1 (CPU-profile the Patchbay process during the REST scenario and print self time by package; the
 * bundle's code, Patchbay's and the packages bundled with it, counts as one),
 * BENCH_WRITE_RULES (10000; 0 skips it): rules created through POST /api/storage/quota/rules after the read scenarios.
 *
 * The servers run in child processes (one for Patchbay, one for the bare server), so the load generator in this
 * process does not share an event loop with the server it measures. The fixture is bulk-inserted with Prisma
 * createMany inside the Patchbay process; it is not what is measured.
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ask, BARE_ROLE, check, CONCURRENCY, DURATION_S, freshDatabase, machineLine, measure, patchbayLibrary, printTable, request, serveBare, startBare, startChild, stopChildren, WARMUP_S, type Result } from "./harness.js";

const SELF = fileURLToPath(import.meta.url);
const env = process.env;
const RULES = Number(env.BENCH_RULES ?? 100_000);
const WRITE_RULES = Number(env.BENCH_WRITE_RULES ?? 10_000);
/** The volume the write scenario fills (svm1, no rules in the fixture). */
const WRITE_VOLUME = "writes";

const SVMS = 4;
const VOLUMES_PER_SVM = 5;
const QTREES_PER_VOLUME = 100;
const PAGE = 50;

/** The measured REST query, encoded as Python requests (Ansible, netapp_ontap) would send it. */
const REST_PATH =
  "/api/storage/quota/rules?svm.name=svm2&files.hard_limit=%3E500%7Cnull&type=user&max_records=50&fields=uuid%2Ctype%2Cfiles%2Cspace%2Cusers";
const GQL_NODE = "uuid type qtreeName spaceHardLimitBytes spaceSoftLimitBytes filesHardLimit filesSoftLimit users { name id }";
const GQL_FILTER = { svmName: { eq: "svm2" }, type: ["USER"], or: [{ filesHardLimit: { gt: "500" } }, { filesHardLimit: { isNull: true } }] };
const gqlBody = (withCount: boolean) =>
  JSON.stringify({
    query: `query Q($f: QuotaRuleFilter) { quotaRules(filter: $f, first: ${PAGE}) { ${withCount ? "totalCount " : ""}edges { node { ${GQL_NODE} } } } }`,
    variables: { f: GQL_FILTER },
  });

// ------------------------------------------------------------------------------------------------ fixture

/** Deterministic PRNG (mulberry32) so every run loads the same mix. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface FixtureCounts {
  rules: number;
  users: number;
  /** Rules the measured filter must match (computed from the generated rows, not from the server). */
  expectedMatches: number;
  loadMs: number;
}

export async function loadFixture(db: import("../src/platform/db/client.js").Db): Promise<FixtureCounts> {
  const { ruleIdentity } = await import("../src/storage/quota-rules/identity.js");
  const started = performance.now();
  const rand = rng(42);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const KiB = 1024n;

  const svms = Array.from({ length: SVMS }, (_, i) => ({ uuid: randomUUID(), name: `svm${i + 1}` }));
  await db.svm.createMany({ data: svms });
  const volumes = svms.flatMap((svm) =>
    Array.from({ length: VOLUMES_PER_SVM }, (_, j) => ({ uuid: randomUUID(), name: `vol${j + 1}`, svmUuid: svm.uuid, sizeBytes: 1024n ** 4n, svmName: svm.name })),
  );
  await db.volume.createMany({ data: volumes.map(({ svmName: _s, ...v }) => v) });
  await db.volume.create({ data: { uuid: randomUUID(), name: WRITE_VOLUME, svmUuid: svms[0].uuid, sizeBytes: 1024n ** 4n } });
  const qtrees = volumes.flatMap((v) =>
    Array.from({ length: QTREES_PER_VOLUME }, (_, k) => ({ key: `${v.uuid}/${k + 1}`, volumeUuid: v.uuid, qtreeId: k + 1, name: `qt${k + 1}` })),
  );
  await db.qtree.createMany({ data: qtrees });

  type RuleRow = Extract<NonNullable<Parameters<typeof db.quotaRule.createMany>[0]>["data"], unknown[]>[number];
  const rules: RuleRow[] = [];
  const users: { ruleUuid: string; position: number; name: string | null; userId: string | null }[] = [];
  let expectedMatches = 0;
  const perVolume = Math.floor(RULES / volumes.length);

  const limits = () => {
    const filesHard = rand() < 0.25 ? null : int(0, 1000);
    const filesSoft = filesHard === null || rand() < 0.5 ? null : Math.floor(filesHard * 0.8);
    const spaceHard = rand() < 0.2 ? null : BigInt(int(1024, 100 * 1024 * 1024)) * KiB; // 1 MiB .. 100 GiB
    const spaceSoft = spaceHard === null || rand() < 0.4 ? null : (spaceHard * 8n) / 10n / KiB * KiB;
    return {
      filesHardLimit: filesHard === null ? null : BigInt(filesHard),
      filesSoftLimit: filesSoft === null ? null : BigInt(filesSoft),
      spaceHardLimit: spaceHard,
      spaceSoftLimit: spaceSoft,
    };
  };

  for (const [vi, v] of volumes.entries()) {
    const count = vi === volumes.length - 1 ? RULES - perVolume * (volumes.length - 1) : perVolume;
    for (let i = 0; i < count; i++) {
      const uuid = randomUUID();
      const base = { uuid, svmUuid: v.svmUuid, volumeUuid: v.uuid, ...limits() };
      let type: string;
      let qtreeName: string | null = null;
      let groupName: string | null = null;
      let ruleUsers: { name: string | null; userId: string | null }[] = [];
      if (i < 3) {
        // The volume's default rules.
        type = ["tree", "user", "group"][i];
        if (type === "tree") qtreeName = "";
        if (type === "user") ruleUsers = [{ name: "", userId: null }];
        if (type === "group") groupName = "";
      } else if (i < 3 + QTREES_PER_VOLUME) {
        type = "tree";
        qtreeName = `qt${i - 2}`;
      } else {
        type = rand() < 0.75 ? "user" : "group";
        if (rand() < 0.2) qtreeName = `qt${int(1, QTREES_PER_VOLUME)}`;
        if (type === "group") groupName = `group${i}`;
        else {
          const r = rand();
          ruleUsers =
            r < 0.1 ? [{ name: null, userId: String(10_000 + i) }] // a UID
            : r < 0.15 ? [{ name: `user${i}`, userId: null }, { name: `user${i}b`, userId: null }, { name: null, userId: String(50_000 + i) }] // multi-user
            : [{ name: `user${i}`, userId: null }];
        }
      }
      const target = { type, qtreeName, groupName, groupId: null };
      rules.push({ ...base, ...target, userMapping: type === "user" ? false : null, identity: ruleIdentity(target, ruleUsers) });
      ruleUsers.forEach((u, position) => users.push({ ruleUuid: uuid, position, ...u }));
      if (v.svmName === "svm2" && type === "user" && (base.filesHardLimit === null || base.filesHardLimit > 500n)) expectedMatches++;
    }
  }
  const BATCH = 2000;
  for (let i = 0; i < rules.length; i += BATCH) await db.quotaRule.createMany({ data: rules.slice(i, i + BATCH) });
  for (let i = 0; i < users.length; i += BATCH) await db.quotaRuleUser.createMany({ data: users.slice(i, i + BATCH) });
  return { rules: rules.length, users: users.length, expectedMatches, loadMs: performance.now() - started };
}

// ------------------------------------------------------------------------------------------------ child roles

/** Self time of a V8 CPU profile, bucketed by package (or src/ file), as percentages of the samples. */
function summarize(profile: { nodes: { id: number; callFrame: { url: string; functionName: string } }[]; samples: number[] }) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const buckets = new Map<string, number>();
  for (const id of profile.samples) {
    const { url, functionName } = byId.get(id)!.callFrame;
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    // The bundle holds Patchbay and most of its packages in one file: its samples are one bucket.
    const bundled = url.endsWith("/dist/patchbay.cjs") ? "dist/patchbay.cjs (Patchbay and its bundled packages)" : undefined;
    const key = pkg ?? bundled ?? (url ? (url.startsWith("node:") ? url : "other js") : `(${functionName || "native"})`);
    buckets.set(key, (buckets.get(key) ?? 0) + 1);
  }
  return [...buckets].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, n]) => `${((n / profile.samples.length) * 100).toFixed(1).padStart(5)} %  ${k}`);
}

/** The server child: the bundle production runs (harness.ts), with the fixture loaded through its database client. */
async function servePatchbay(databaseUrl: string, dataDir: string) {
  const { loadConfig, startServer, optimizeDatabase } = await patchbayLibrary();
  const server = await startServer({ ...loadConfig([], {}), port: 0, dataDir, databaseUrl, logRequests: false, redisUrl: undefined });
  const fixture = await loadFixture(server.ctx.db);
  // PostgreSQL's autovacuum would analyze the new rows within a minute, and on SQLite the server runs its hourly
  // ANALYZE (src/platform/db/maintenance.ts); do either now so the planner has statistics.
  // BENCH_SQLITE_ANALYZE=0 measures SQLite as it is right after a bulk load, before that maintenance.
  if (/^postgres/.test(databaseUrl)) await server.ctx.db.$executeRawUnsafe("ANALYZE");
  else if (env.BENCH_SQLITE_ANALYZE !== "0") await optimizeDatabase(server.ctx.db, databaseUrl);
  process.send!({ port: server.port, fixture });
  const profiler = env.BENCH_PROFILE === "1" ? new (await import("node:inspector")).Session() : undefined;
  const post = (method: string) => new Promise<any>((res, rej) => profiler!.post(method, (err, r) => (err ? rej(err) : res(r))));
  process.on("message", async (m) => {
    if (m === "profile-start" && profiler) {
      profiler.connect();
      await post("Profiler.enable");
      await post("Profiler.start");
    }
    if (m === "profile-stop" && profiler) process.send!({ profile: summarize((await post("Profiler.stop")).profile) });
    if (m === "stop") {
      await server.close();
      process.exit(0);
    }
  });
}

// ------------------------------------------------------------------------------------------------ load generator

/**
 * Writes: WRITE_RULES user rules created through the REST API by CONCURRENCY connections, each POST waiting for
 * its job as Ansible does (return_timeout=30). The first rule also creates the volume's default user rule.
 */
async function measureWrites(port: number): Promise<Result & { total: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  let next = 0;
  let errors = 0;
  const t0 = performance.now();
  const worker = async () => {
    for (let i = next++; i < WRITE_RULES; i = next++) {
      const body = JSON.stringify({
        svm: { name: "svm1" },
        volume: { name: WRITE_VOLUME },
        type: "user",
        users: [{ name: `writer${i}` }],
        space: { hard_limit: 1024 * 1024 * (1 + (i % 100)) },
        files: { hard_limit: 1000 + i },
      });
      const s = performance.now();
      const res = await request(agent, port, { method: "POST", path: "/api/storage/quota/rules?return_timeout=30", body });
      latencies.push(performance.now() - s);
      if (res.status !== 201) {
        if (errors++ === 0) console.log(`write failed: ${res.status} ${res.body.slice(0, 300)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = (performance.now() - t0) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { name: `REST POST quota rule (${WRITE_RULES} rules, ${elapsed.toFixed(1)} s)`, rps: WRITE_RULES / elapsed, p50: q(0.5), p99: q(0.99), bytes: 0, errors, load: os.loadavg()[0], total: elapsed };
}

// ------------------------------------------------------------------------------------------------ main

async function main() {
  const db = await freshDatabase();
  const analyzed = db.kind === "PostgreSQL" || env.BENCH_SQLITE_ANALYZE !== "0" ? "ANALYZE after load" : "no ANALYZE";
  console.log(`patchbay quota benchmark: ${db.kind} (${analyzed}), ${RULES} rules, ${CONCURRENCY} keep-alive connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per scenario`);
  console.log(machineLine());
  const children: ChildProcess[] = [];
  try {
    const t0 = performance.now();
    const pb = await startChild(SELF, ["--serve-patchbay", db.url, db.dataDir]);
    children.push(pb.child);
    const { port, fixture } = pb.msg as { port: number; fixture: FixtureCounts };
    console.log(
      `fixture: ${fixture.rules} rules, ${fixture.users} rule users loaded in ${(fixture.loadMs / 1000).toFixed(1)} s ` +
        `(server start + migrations + load ${((performance.now() - t0) / 1000).toFixed(1)} s); the measured filter matches ${fixture.expectedMatches}`,
    );

    // Sanity: the answers are right before they are timed.
    const agent = new http.Agent({ keepAlive: true });
    const rest = await request(agent, port, { method: "GET", path: REST_PATH });
    check(rest.status === 200, `REST status ${rest.status}: ${rest.body.slice(0, 300)}`);
    const restJson = JSON.parse(rest.body);
    check(restJson.num_records === PAGE && restJson.records.length === PAGE, "REST returns a full page");
    check(Boolean(restJson._links.next), "REST has a next link");
    for (const r of restJson.records) {
      check(r.type === "user" && Array.isArray(r.users), "REST record is a user rule with users");
      check(r.files?.hard_limit === undefined || r.files.hard_limit > 500, `REST files.hard_limit ${r.files?.hard_limit} matches >500|null`);
    }
    const all = await request(agent, port, { method: "GET", path: "/api/storage/quota/rules?svm.name=svm2&files.hard_limit=%3E500%7Cnull&type=user&return_records=false" });
    check(JSON.parse(all.body).num_records === fixture.expectedMatches, `REST count ${all.body} = ${fixture.expectedMatches}`);
    const gql = await request(agent, port, { method: "POST", path: "/graphql", body: gqlBody(true) });
    const gqlJson = JSON.parse(gql.body);
    check(!gqlJson.errors, `GraphQL errors ${JSON.stringify(gqlJson.errors)}`);
    check(gqlJson.data.quotaRules.totalCount === fixture.expectedMatches, `GraphQL totalCount ${gqlJson.data.quotaRules.totalCount}`);
    check(gqlJson.data.quotaRules.edges.length === PAGE, "GraphQL returns a full page");
    agent.destroy();

    const bare = await startBare(SELF, rest.body);
    children.push(bare.child);

    const results: Result[] = [];
    results.push(await measure("bare node http (same JSON body)", bare.msg.port, { method: "GET", path: REST_PATH }));
    if (env.BENCH_PROFILE === "1") pb.child.send("profile-start");
    results.push(await measure("REST GET /api/storage/quota/rules", port, { method: "GET", path: REST_PATH }));
    if (env.BENCH_PROFILE === "1") {
      const { profile } = await ask(pb.child, "profile-stop", "profile");
      console.log(`\nPatchbay CPU self time during the REST scenario (BENCH_PROFILE=1; the profiler itself costs some throughput):\n  ${profile.join("\n  ")}`);
    }
    results.push(await measure("GraphQL quotaRules first:50 + totalCount", port, { method: "POST", path: "/graphql", body: gqlBody(true) }));
    results.push(await measure("GraphQL quotaRules first:50 (no totalCount)", port, { method: "POST", path: "/graphql", body: gqlBody(false) }));

    printTable(results);

    if (WRITE_RULES > 0) {
      const writes = await measureWrites(port);
      const check = await request(new http.Agent(), port, { method: "GET", path: `/api/storage/quota/rules?volume.name=${WRITE_VOLUME}&return_records=false` });
      console.log(`\nwrites: ${WRITE_RULES} rules created through POST in ${writes.total.toFixed(1)} s; the volume now holds ${JSON.parse(check.body).num_records} rules (with its default rule)`);
      printTable([writes], () => writes);
    }
  } finally {
    await stopChildren(children);
    await db.drop();
  }
}

// Run only as a script (the fixture loader can be imported for analysis).
if (process.argv[1] && path.resolve(process.argv[1]) === SELF) {
  const role = process.argv[2];
  if (role === "--serve-patchbay") await servePatchbay(process.argv[3], process.argv[4]);
  else if (role === BARE_ROLE) serveBare(process.argv[3]);
  else await main();
}
