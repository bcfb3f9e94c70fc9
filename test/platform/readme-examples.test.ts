import { spawnSync } from "node:child_process";
import dgram from "node:dgram";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { Kind, parse, print, type FieldNode, type OperationDefinitionNode } from "graphql";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { findVpcs, freeTcpPort } from "../../src/emulation/runtime/vpcs.js";
import { globalId } from "../../src/platform/graphql/global-id.js";
import { loadDemoFixture } from "../support/bundle.js";
import { CLI, runCli, runProcess, type ProcessRun } from "../support/cli.js";
import { createPostgresDatabase, postgresReachable } from "../support/databases.js";
import { REDIS_URL, redisUp } from "../support/redis.js";
import { busSubscribed, call, gql, graphqlWsClient, onPostgres, portWindow, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * Issue 12: every example of README.md runs, as written, against a real server, and its result is checked.
 *
 * Each fenced block of the README follows an annotation line `<!-- example: NAME -->`; EXAMPLES below says how
 * the example NAME is run and what its run must show, or why it cannot run in a test. Blocks sharing a NAME are
 * one script, in README order. A block without an annotation, an annotation EXAMPLES does not know, or an entry
 * of EXAMPLES the README no longer has, fails the first test, naming the block.
 *
 * Shell blocks run through bash in a fresh directory (their ./data is fresh) with set -euo pipefail; only these
 * stand-ins differ from a person's terminal (test/support/readme-example.sh): the README's port 3080 (and the
 * placeholder hosts of the multi-host walk-through) become free local ports; `curl` reports each answer's status
 * to the test, and a stream it follows (`-N`) ends after a few seconds as a person's Ctrl-C would; `npm start` /
 * `npm run demo` start the built server in the background and return once it prints its banner. GraphQL blocks
 * run operation by operation (runGraphql), with their `<… id>` placeholders replaced by objects the test made.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const README = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");

const has = (tool: string) => toolAvailable(tool, spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0);
const hasCurl = has("curl");
const hasJq = has("jq");
const hasOpenssl = has("openssl");
const hasVpcs = toolAvailable("vpcs", findVpcs() !== null);
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const hasPostgres = toolAvailable("PostgreSQL", await postgresReachable(ADMIN_URL));

// ---- the README's blocks -------------------------------------------------------------------------------------

interface Block {
  line: number;
  lang: string;
  heading: string;
  name: string | undefined;
  text: string;
}

const ANNOTATION = /^\s*<!-- example: ([\w-]+) -->\s*$/;

function readmeBlocks(markdown: string): Block[] {
  const lines = markdown.split("\n");
  const blocks: Block[] = [];
  let heading = "(top)";
  for (let i = 0; i < lines.length; i++) {
    const h = /^#{1,6} (.*)/.exec(lines[i]);
    if (h) heading = h[1];
    const open = /^(\s*)(`{3,}|~{3,})\s*(\S*)/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && lines[end].trim() !== fence) end++;
    const annotation = ANNOTATION.exec(lines[i - 1] ?? "");
    const text = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()));
    blocks.push({ line: i + 1, lang, heading, name: annotation?.[1], text: text.join("\n") + "\n" });
    i = end; // nothing inside a block is a heading or a fence
  }
  return blocks;
}

const BLOCKS = readmeBlocks(README);
const blocksOf = (name: string) => BLOCKS.filter((b) => b.name === name);
const script = (name: string) => blocksOf(name).map((b) => b.text).join("");
const describeBlock = (b: Block) => `README.md line ${b.line} (\`\`\`${b.lang || "(no language)"} under "${b.heading}", first line: ${JSON.stringify(b.text.split("\n")[0])})`;

// ---- running shell blocks ------------------------------------------------------------------------------------

/** Bash put before every shell example: the stand-ins the file comment describes. */
const PRELUDE = fs.readFileSync(path.join(ROOT, "test/support/readme-example.sh"), "utf8");

interface ScriptRun extends ProcessRun {
  /** Every answer curl received, in order. */
  calls: { status: number; method: string; url: string }[];
  /** For every server `npm` started: its command and its /health/ready answer. */
  started: string[];
  dir: string;
}

interface ScriptOptions {
  /** Text of the README replaced before running: each must be found (the README changed if not). */
  substitute?: [string, string][];
  env?: Record<string, string>;
  /** The test's own checks, run after the README's lines in the same shell (their curl calls are checked too). */
  epilogue?: string;
  followSeconds?: number;
  port?: number;
  /** The console and UDP port window of the servers the script starts. */
  ports?: ReturnType<typeof portWindow>;
  onOutput?: (printed: { stdout: string; stderr: string }, kill: (signal: NodeJS.Signals) => void) => void;
}

const dirs: string[] = [];
const leftovers: number[] = [];
afterAll(() => {
  for (const pid of leftovers) {
    try {
      process.kill(-pid, "SIGKILL"); // a server of a script that was killed before its EXIT trap ran
    } catch {}
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** `text` with each `from` replaced by its `to`; each must be found (if not, the README changed: update the pair). */
function substitute(text: string, pairs: [string, string][]): string {
  for (const [from, to] of pairs) {
    expect(text, `the example no longer contains ${JSON.stringify(from)}: update the test's substitution`).toContain(from);
    text = text.replaceAll(from, to);
  }
  return text;
}

/** A port map of the README's own: `127.0.0.1:3080` is where the server of the example answers. */
const at = (port: number): [string, string] => ["127.0.0.1:3080", `127.0.0.1:${port}`];

async function runScript(text: string, opts: ScriptOptions = {}): Promise<ScriptRun> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-readme-"));
  dirs.push(dir);
  text = substitute(text, opts.substitute ?? []);
  fs.writeFileSync(path.join(dir, "example.sh"), `${PRELUDE}\n${text}\n${opts.epilogue ?? ""}`);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(DATABASE_URL|REDIS_URL|HOST|PORT|PATCHBAY_.*)$/.test(k)) env[k] = v;
  const db = onPostgres ? await createPostgresDatabase(ADMIN_URL, "patchbay_readme") : undefined;
  const ports = opts.ports ?? portWindow();
  try {
    const run = await runProcess("bash", ["example.sh"], {
      cwd: dir,
      timeoutMs: 40_000, // under the test's: a script that hangs is reported with what it printed
      onOutput: opts.onOutput,
      env: {
        ...env,
        ...opts.env,
        README_ROOT: ROOT,
        README_CLI: CLI[0],
        README_DIR: dir,
        README_PORT: String(opts.port ?? (await freeTcpPort())),
        README_DATABASE_URL: db?.url ?? "",
        README_CONSOLE_PORTS: ports.consolePorts.join("-"),
        README_UDP_PORTS: ports.udpPorts.join("-"),
        README_FOLLOW: String(opts.followSeconds ?? 2),
      },
    });
    const calls = [...run.stderr.matchAll(/^HTTP (\d+) (\S+) (\S+)$/gm)].map(([, status, method, url]) => ({ status: Number(status), method, url }));
    const read = (f: string) => (fs.existsSync(path.join(dir, f)) ? fs.readFileSync(path.join(dir, f), "utf8") : "");
    leftovers.push(...read("pids").split("\n").filter(Boolean).map(Number));
    return { ...run, calls, started: read("started").split("\n").filter(Boolean), dir };
  } finally {
    await db?.drop();
  }
}

/** The script ran to its end, and every curl call answered 2xx except those `expected` names (method and path). */
function expectRan(run: ScriptRun, expected: Record<string, number> = {}) {
  const output = `${run.stdout}\n${run.stderr}`;
  expect(run.code, `the example failed:\n${output}`).toBe(0);
  expect(run.calls.length, output).toBeGreaterThan(0);
  for (const call of run.calls) {
    const key = `${call.method} ${new URL(call.url).pathname}`;
    const want = Object.entries(expected).find(([k]) => new RegExp(`^${k}$`).test(key))?.[1];
    if (want !== undefined) expect(call.status, key).toBe(want);
    else expect(call.status >= 200 && call.status < 300, `${key} answered ${call.status}:\n${output}`).toBe(true);
  }
}

// ---- running GraphQL blocks ----------------------------------------------------------------------------------

/**
 * Runs each operation of a README GraphQL block on its own (GraphiQL runs the one under the cursor): the
 * subscriptions first, over graphql-ws, then the queries and mutations in README order over HTTP, then
 * `trigger`; every subscription must receive an event. Nothing may answer an error, and a mutation must answer
 * its payload (`createNode` → CreateNodePayload), not one of its errors.
 */
async function runGraphql(s: TestServer, document: string, trigger?: () => Promise<void>) {
  const operations = parse(document).definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const client = graphqlWsClient(s);
  const events = new Map<string, unknown[]>();
  const cancels: (() => void)[] = [];
  try {
    for (const op of operations.filter((o) => o.operation === "subscription")) {
      const query = print(op);
      const received: unknown[] = [];
      events.set(query, received);
      await subscribed(s, (op.selectionSet.selections[0] as FieldNode).name.value, () =>
        cancels.push(
          client.subscribe({ query }, { next: (r) => void received.push(r), error: (e) => void received.push({ errors: [e] }), complete: () => {} }),
        ),
      );
    }
    const answers = [];
    for (const op of operations.filter((o) => o.operation !== "subscription")) {
      const r = await gql(s.url, print(op));
      expect(r.errors, print(op)).toBeUndefined();
      if (op.operation === "mutation") {
        for (const [field, v] of Object.entries(r.data as Record<string, { __typename?: string }>)) expect(v.__typename, print(op)).toBe(`${field[0].toUpperCase()}${field.slice(1)}Payload`);
      }
      answers.push(r.data);
    }
    await trigger?.();
    for (const [query, received] of events) {
      await waitFor(() => received.length > 0, 20_000, `an event of ${query}`);
      expect(received[0], query).not.toHaveProperty("errors");
      expect(Object.values((received[0] as { data: object }).data)[0], query).toBeTruthy();
    }
    return { answers, events: [...events.values()] };
  } finally {
    for (const cancel of cancels) cancel();
    await client.dispose();
  }
}

/** Open subscriptions of a root field, as /metrics counts them. */
async function openStreams(s: TestServer, field: string): Promise<number> {
  const metrics = await (await fetch(`${s.url}/metrics`)).text();
  return Number(new RegExp(`^patchbay_open_streams\\{kind="graphql:${field}"\\} (\\d+)$`, "m").exec(metrics)?.[1] ?? 0);
}
/** Subscriptions that read something else than the event bus (a capture's packet feed). */
const NOT_ON_THE_BUS = new Set(["linkPackets"]);

/** Runs `open`, then waits until the subscription it opens on `field` is live: counted, and following the bus. */
async function subscribed(s: TestServer, field: string, open: () => void): Promise<void> {
  const [streams, subscribers] = [await openStreams(s, field), s.ctx.bus.subscriberCount()];
  open();
  await waitFor(async () => (await openStreams(s, field)) > streams, 20_000, `a ${field} subscription`);
  if (!NOT_ON_THE_BUS.has(field)) await busSubscribed(s, subscribers);
}

/**
 * The README's "follow a project from a read": the query's eventCursor, then projectEvents after it; a link deleted
 * after the read arrives as a delete that still carries its endpoints' nodes.
 */
async function followFromARead(s: TestServer, project: string): Promise<void> {
  const hub = async (name: string) =>
    (await call(s.url, "POST", `/v2/projects/${project}/nodes`, { name, node_type: "ethernet_hub", compute_id: "local" })).body.node_id as string;
  const ends = [await hub("HUB1"), await hub("HUB2")].map((node_id) => ({ node_id, adapter_number: 0, port_number: 0 }));
  const link = (await call(s.url, "POST", `/v2/projects/${project}/links`, { nodes: ends })).body.link_id as string;
  const [query, subscription] = parse(substitute(script("gns3-graphql-sync"), [['"<project id>"', `"${project}"`]])).definitions.map((d) => print(d));
  const read = await gql(s.url, query);
  expect(read.errors).toBeUndefined();
  expect(read.data.project.links.edges.map((e: { node: { id: string } }) => e.node).find((l: { id: string }) => l.id === globalId("Link", link)).endpoints.map((e: { node: { name: string } }) => e.node.name).sort()).toEqual(["HUB1", "HUB2"]);
  const cursor = read.data.project.eventCursor as string;
  expect(cursor).toEqual(expect.any(String));
  const client = graphqlWsClient(s);
  const received: any[] = [];
  try {
    await subscribed(s, "projectEvents", () =>
      void client.subscribe({ query: subscription.replace('"<eventCursor>"', JSON.stringify(cursor)) }, { next: (r) => void received.push(r), error: (e) => void received.push({ errors: [e] }), complete: () => {} }),
    );
    expect((await call(s.url, "DELETE", `/v2/projects/${project}/links/${link}`)).status).toBe(204);
    const deleted = await waitFor(() => received.map((r) => r.data?.projectEvents?.data).find((e) => e?.kind === "DELETED" && e.link?.id === globalId("Link", link)), 20_000, "the link's delete");
    expect(deleted.link.endpoints.map((e: { node: { name: string } }) => e.node.name).sort()).toEqual(["HUB1", "HUB2"]);
    expect(received.every((r) => !r.errors)).toBe(true);
  } finally {
    await client.dispose();
  }
}

// ---- the examples --------------------------------------------------------------------------------------------

type Example = { notRunnable: string } | { needs: boolean[]; run: () => Promise<void> };

/**
 * The examples run at the same time (they mostly wait: servers starting, streams followed). A worker has only a
 * few console and UDP port windows, handed out in turn (portWindow()), so the servers that run nodes take one each
 * of these, never the same; the other servers bind none of their window's ports.
 */
const [labWindow, graphqlWindow, packetsWindow, controllerWindow, computeWindow] = Array.from({ length: 5 }, portWindow);

const withServer = async (overrides: Parameters<typeof startTestServer>[0], use: (s: TestServer) => Promise<void>) => {
  const s = await startTestServer(overrides);
  try {
    await s.ctx.services.emulation.runtime.ready; // its background start-up subscribes to the bus: counts are stable after it
    await use(s);
  } finally {
    await s.close();
  }
};
const portOf = (s: TestServer) => Number(new URL(s.url).port);

const EXAMPLES: Record<string, Example> = {
  install: {
    notRunnable: "the install and the test command themselves: .ci/run runs `npm ci` (which builds) and `npm test` on a fresh clone; `npm start` is started by the other examples",
  },
  "run-tests": { notRunnable: "the test command itself: .ci/run runs both lines, on SQLite and on PostgreSQL" },
  gns3fy: {
    notRunnable:
      "needs the Python package gns3fy, which CI cannot install (only the npm and Debian registries are reachable); test/emulation/gns3fy-flow.test.ts makes its HTTP calls, in its order",
  },

  "postgres-redis": {
    needs: [hasCurl, hasPostgres, redisUp],
    run: async () => {
      const db = await createPostgresDatabase(ADMIN_URL, "patchbay_readme");
      try {
        const run = await runScript(script("postgres-redis"), {
          substitute: [
            ["postgres://postgres@127.0.0.1:5432/patchbay", db.url],
            ["redis://127.0.0.1:6379", REDIS_URL],
          ],
        });
        expect(run.code, run.stderr).toBe(0);
        expect(run.started).toHaveLength(2);
        expect(run.started[0]).toMatch(/^npm start: \{"status":"ready"/);
        expect(run.started[1]).toMatch(/^npm start: \{"status":"ready".*"redis":"ok"/);
        const client = new pg.Client({ connectionString: db.url });
        await client.connect();
        const migrations = await client.query(`SELECT COUNT(*)::int AS n FROM "_prisma_migrations"`).finally(() => client.end());
        expect(migrations.rows[0].n, "the server migrated the PostgreSQL database it was given").toBeGreaterThan(0);
      } finally {
        await db.drop();
      }
    },
  },

  https: {
    needs: [hasCurl, hasOpenssl],
    run: async () => {
      const port = await freeTcpPort();
      const run = await runScript(script("https"), { substitute: [at(port)], port });
      expectRan(run);
      expect(run.started[0]).toMatch(/^npm start: \{"status":"ready"/);
      expect(run.calls.map((c) => c.url)).toEqual([`https://127.0.0.1:${port}/api/cluster?fields=version`]);
      expect(JSON.parse(run.stdout)).toMatchObject({ version: { full: expect.any(String) } });
    },
  },

  "ontap-rest": {
    needs: [hasCurl, hasJq],
    run: async () => {
      const port = await freeTcpPort();
      const run = await runScript(script("ontap-rest"), { substitute: [at(port)], port });
      expectRan(run, { "POST /api/storage/quota/rules": 201 });
      expect(run.started[0]).toMatch(/^npm run demo: \{"status":"ready"/);
      expect(run.stdout).toContain('"num_records":2'); // the page of max_records=2
      expect(run.stdout).toContain('"next":{"href":"/api/storage/quota/rules?');
      expect(run.stdout).toMatch(/"state":"success"/); // the quota job
      expect(run.stdout).toContain('"quota":{"state":"on"}');
      expect(run.stdout).toMatch(/"qtree":\{"name":"qt1".*"space":\{"hard_limit":1073741824,"used"/); // enforced
    },
  },

  "ontap-graphql": {
    needs: [],
    run: () =>
      withServer({}, async (s) => {
        await loadDemoFixture(s.ctx);
        const { answers, events } = await runGraphql(s, script("ontap-graphql"));
        const { quotaRule, job } = answers[0].createQuotaRule;
        expect(quotaRule).toMatchObject({ type: "USER", users: [{ name: "alice" }], spaceHardLimitBytes: 1048576 });
        expect(job.state).toBe("SUCCESS");
        expect(answers[1].quotaRules.edges.map((e: { node: { id: string } }) => e.node.id)).toContain(quotaRule.id);
        expect(events[0][0]).toMatchObject({ data: { quotaChanges: { kind: "RULE_CREATED", ruleUuid: quotaRule.uuid } } });
      }),
  },

  "ontap-sse": {
    needs: [hasCurl],
    run: () =>
      withServer({}, async (s) => {
        await loadDemoFixture(s.ctx);
        let running!: Promise<ScriptRun>;
        await subscribed(s, "quotaChanges", () => {
          running = runScript(script("ontap-sse"), {
            env: { B: s.url }, // set by the block above
            followSeconds: 60,
            onOutput: ({ stdout }, kill) => void (stdout.includes('"kind":"RULE_CREATED"') && kill("SIGINT")), // Ctrl-C once the event is in
          });
        });
        const created = await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=30&return_records=true", {
          svm: { name: "vs0" }, volume: { name: "vol1" }, type: "tree", qtree: { name: "qt2" }, files: { hard_limit: 10 },
        });
        expect(created.status).toBe(201);
        const rule = created.body.records[0].uuid;
        const run = await running;
        expect(run.stdout).toMatch(/^event: next$/m);
        expect(run.stdout).toContain(`data: {"data":{"quotaChanges":{"kind":"RULE_CREATED","ruleUuid":"${rule}"}}}`);
      }),
  },

  "gns3-lab": {
    needs: [hasCurl, hasJq, hasVpcs],
    // The project stays open for the whole script: the README's next paragraph says what happens 5 s after the
    // notification stream is left, and the commands after it run within that time in a terminal too.
    run: () =>
      withServer({ autoCloseDelayMs: 60_000, ...labWindow }, async (s) => {
        const run = await runScript(script("gns3-lab"), { substitute: [at(portOf(s))] });
        expectRan(run);
        expect(run.stdout).toContain('"action": "ping"'); // the notification stream
        const pcap = fs.readFileSync(path.join(run.dir, "live.pcap"));
        expect(pcap.readUInt32LE(0), "live.pcap is a pcap file").toBe(0xa1b2c3d4);
        expect(fs.readFileSync(path.join(run.dir, "lab.gns3project")).subarray(0, 2).toString()).toBe("PK");
        const projects = (await call(s.url, "GET", "/v2/projects")).body as { name: string; project_id: string }[];
        expect(projects.map((p) => p.name).sort()).toEqual(["copy", "lab"]);
        const lab = projects.find((p) => p.name === "lab")!.project_id;
        const nodes = (await call(s.url, "GET", `/v2/projects/${lab}/nodes`)).body as { name: string; console: number }[];
        expect(run.stdout).toContain(`${nodes.find((n) => n.name === "PC1")!.console}\n`); // jq .console
      }),
  },

  "gns3-graphql": {
    needs: [hasVpcs],
    run: () =>
      withServer(graphqlWindow, async (s) => {
        const project = (await call(s.url, "POST", "/v2/projects", { name: "graphql-example" })).body.project_id as string;
        const node = await call(s.url, "POST", `/v2/projects/${project}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" });
        expect(node.status).toBe(201);
        const document = substitute(script("gns3-graphql"), [
          ['"<project id>"', `"${project}"`],
          ['"<node id>"', `"${node.body.node_id}"`],
          [', after: "<last cursor seen, or omit>"', ""],
        ]);
        const { answers, events } = await runGraphql(s, document, async () => {
          expect((await call(s.url, "PUT", `/v2/projects/${project}`, { name: "renamed" })).status).toBe(200); // a controller event
        });
        // Global ids, with the GNS3 ids the placeholders were given as plain fields.
        expect(answers[0].project).toMatchObject({ id: globalId("Project", project), projectId: project });
        expect(answers[0].project.nodes.edges.map((e: { node: object }) => e.node)).toEqual([expect.objectContaining({ id: globalId("EmulatedNode", node.body.node_id), nodeId: node.body.node_id, name: "PC1" })]);
        expect(answers[1].emulatedNodes.totalCount).toBe(answers[1].emulatedNodes.edges.length);
        expect(answers[1].emulatedNodes.edges.every((e: { node: { status: string } }) => e.node.status === "STARTED")).toBe(true);
        expect(answers[2].createNode.node.name).toBe("PC3");
        expect(answers[3].startNode.node).toMatchObject({ id: globalId("EmulatedNode", node.body.node_id), status: "STARTED" }); // the answer carries the new status
        expect((await call(s.url, "GET", `/v2/projects/${project}/nodes/${node.body.node_id}`)).body.status).toBe("started");
        expect(answers[4].createNode.node.settings.ports).toEqual([
          { portNumber: 0, name: "Uplink", type: "DOT1Q", vlan: 1 },
          { portNumber: 1, name: "Office", type: "ACCESS", vlan: 10 },
        ]);
        expect(events[0][0]).toMatchObject({ data: { projectEvents: { data: { kind: "CREATED", node: { name: "PC3" } } } } });
        await followFromARead(s, project);
      }),
  },
  // Its servers' port windows are all taken (a sixth would share one): the gns3-graphql example runs it on its server.
  "gns3-graphql-sync": { notRunnable: "run by the gns3-graphql example, on its server: followFromARead" },

  "gns3-packets": {
    needs: [],
    run: () =>
      withServer(packetsWindow, async (s) => {
        // A switch and a hub are always running: the link carries what the test sends into its relay, as a node would.
        const project = (await call(s.url, "POST", "/v2/projects", { name: "packets-example" })).body.project_id as string;
        const node = async (name: string, node_type: string) =>
          (await call(s.url, "POST", `/v2/projects/${project}/nodes`, { name, node_type, compute_id: "local" })).body.node_id as string;
        const [sw, hub] = [await node("SW1", "ethernet_switch"), await node("HUB1", "ethernet_hub")];
        const ends = [sw, hub].map((node_id) => ({ node_id, adapter_number: 0, port_number: 0 }));
        const link = (await call(s.url, "POST", `/v2/projects/${project}/links`, { nodes: ends })).body.link_id as string;
        expect((await call(s.url, "POST", `/v2/projects/${project}/links/${link}/start_capture`, {})).status).toBe(201);
        const document = substitute(script("gns3-packets"), [
          ['"<link id>"', `"${link}"`],
          [', after: "<last cursor seen, or omit>"', ""],
        ]);
        // An ARP request, sent again every 200 ms until the subscriber has one: the relay and the capture are
        // wired by the runtime as it follows the events, and a datagram sent before that is lost, as on a wire.
        const sender = dgram.createSocket("udp4");
        const arp = Buffer.from("ffffffffffff005079666800080600010800060400010050796668000a000001000000000000" + "0a000002", "hex");
        let resend: NodeJS.Timeout | undefined;
        try {
          const { events } = await runGraphql(s, document, async () => {
            const send = () => {
              const relay = s.ctx.services.emulation.runtime.snapshot().attachments.find((a) => a.port === `${sw}/0/0`)?.peer;
              if (relay) sender.send(arp, relay, "127.0.0.1");
            };
            send();
            resend = setInterval(send, 200);
          });
          expect(events[0][0]).toMatchObject({
            data: { linkPackets: { ethernet: { src: "00:50:79:66:68:00", dst: "ff:ff:ff:ff:ff:ff" }, arp: { senderIp: "10.0.0.1", targetIp: "10.0.0.2" } } },
          });
        } finally {
          clearInterval(resend);
          sender.close();
        }
      }),
  },

  "graphql-files": {
    needs: [hasCurl, hasJq],
    run: () =>
      withServer({ auth: { user: "admin", password: "secret" } }, async (s) => {
        const run = await runScript(script("graphql-files"), { substitute: [at(portOf(s))] });
        expectRan(run);
        expect(fs.readFileSync(path.join(run.dir, "files.gns3project")).subarray(0, 2).toString(), "the export is a zip archive").toBe("PK");
        expect(JSON.parse(run.stdout)).toMatchObject({ data: { importProject: { __typename: "ImportProjectPayload", project: { name: "files copy" } } } });
      }),
  },

  "gui-server": {
    needs: [hasCurl],
    run: async () => {
      const port = await freeTcpPort();
      const run = await runScript(script("gui-server"), {
        substitute: [["PORT=3080", `PORT=${port}`]],
        port,
        epilogue: [
          `curl -s -u admin:secret http://127.0.0.1:${port}/v2/version   # what the GUI asks first`,
          `curl -s http://127.0.0.1:${port}/v2/projects                  # without the credentials`,
        ].join("\n"),
      });
      expectRan(run, { "GET /v2/projects": 401 });
      expect(run.stdout).toContain('"version": "2.2.59"');
    },
  },

  "multi-host": {
    needs: [hasCurl, hasJq, hasVpcs],
    run: () =>
      withServer(controllerWindow, async (controller) => {
        const computePort = await freeTcpPort();
        const run = await runScript(script("multi-host"), {
          substitute: [
            ["PORT=3080", `PORT=${computePort}`],
            ["192.168.1.10:3080", `127.0.0.1:${portOf(controller)}`],
            ['"host":"192.168.1.20","port":3080', `"host":"127.0.0.1","port":${computePort}`],
          ],
          port: computePort,
          ports: computeWindow,
        });
        expectRan(run);
        expect(run.started[0]).toMatch(/^npm start: \{"status":"ready"/);
        expect(run.stdout).toContain('"connected": true');
        expect(run.stdout).toMatch(/"capturing": true/); // on the cross-host link
        const project = ((await call(controller.url, "GET", "/v2/projects")).body as { name: string; project_id: string }[]).find((p) => p.name === "two-hosts")!;
        const nodes = (await call(controller.url, "GET", `/v2/projects/${project.project_id}/nodes`)).body as { name: string; compute_id: string }[];
        expect(Object.fromEntries(nodes.map((n) => [n.name, n.compute_id]))).toEqual({ PC1: "local", SW1: "local", PC2: "hostb" });
      }),
  },

  operations: {
    needs: [hasCurl],
    run: () =>
      withServer({}, async (s) => {
        const run = await runScript(script("operations"), { substitute: [at(portOf(s))] });
        expectRan(run);
        expect(run.stdout).toContain('{"status":"ready","checks":{');
        expect(run.stdout).toMatch(/^patchbay_http_request_duration_seconds_count\{method="GET",route="\/health\/ready",status="200"\} 1$/m);
      }),
  },

  "startup-failures": {
    needs: [hasPostgres],
    run: async () => {
      // Each line the README shows, and the setting that makes the real CLI print it (README values mapped to this host's).
      const missingDb = `patchbay_readme_missing_${process.pid}`;
      const admin = new URL(ADMIN_URL);
      const closed = await freeTcpPort();
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
      const takenPort = (taken.address() as net.AddressInfo).port;
      const cases: { line: RegExp; env: Record<string, string>; map: (line: string) => string }[] = [
        {
          line: /^patchbay: cannot reach PostgreSQL/,
          env: { DATABASE_URL: `postgres://postgres@127.0.0.1:${closed}/patchbay` },
          map: (l) => l.replace("127.0.0.1:5432", `127.0.0.1:${closed}`),
        },
        {
          line: /^patchbay: database patchbay does not exist/,
          env: { DATABASE_URL: Object.assign(new URL(ADMIN_URL), { pathname: `/${missingDb}` }).toString() },
          map: (l) => l.replace(/(database|createdb) patchbay\b/g, `$1 ${missingDb}`).replace("127.0.0.1:5432", admin.host),
        },
        { line: /^patchbay: port 3080/, env: { PORT: String(takenPort) }, map: (l) => l.replace("port 3080", `port ${takenPort}`) },
        { line: /^patchbay: DATABASE_URL must be/, env: { DATABASE_URL: "mysql://root@127.0.0.1/patchbay" }, map: (l) => l },
        { line: /^patchbay: data directory \/proc\/data/, env: { PATCHBAY_DATA_DIR: "/proc/data" }, map: (l) => l },
      ];
      try {
        const lines = script("startup-failures").trim().split("\n");
        for (const line of lines) expect(cases.some((c) => c.line.test(line)), `no setting known for the README's line ${JSON.stringify(line)}: add a case`).toBe(true);
        expect(lines.length).toBe(cases.length);
        const runs = await Promise.all(
          lines.map((line) => {
            const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-readme-"));
            dirs.push(dataDir);
            return runCli({ PATCHBAY_DATA_DIR: dataDir, ...cases.find((c) => c.line.test(line))!.env }, [], dataDir);
          }),
        );
        lines.forEach((line, i) => {
          expect(runs[i].stderr.trim(), line).toBe(cases.find((c) => c.line.test(line))!.map(line));
          expect(runs[i].code, line).not.toBe(0); // the time it takes is startup-failures.test.ts's
        });
      } finally {
        taken.close();
      }
    },
  },

  development: {
    needs: [hasCurl],
    run: async () => {
      const port = await freeTcpPort();
      const run = await runScript(script("development"), { substitute: [["--port 3081", `--port ${port}`]] });
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.started).toEqual([expect.stringMatching(/^npm run dev -- --port \d+: \{"status":"ready"/)]);
      expect(run.stderr).toContain("npm run build: npm ci runs it (postinstall) in .ci/run");
      expect(JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")).scripts.postinstall).toMatch(/npm run build$/);
    },
  },
};

describe.concurrent("README examples", () => {
  it("every fenced block of README.md is an example this test runs, or one it says why it cannot run", () => {
    const problems: string[] = [];
    for (const b of BLOCKS) {
      if (!b.name) problems.push(`${describeBlock(b)} has no <!-- example: NAME --> line before it`);
      else if (!(b.name in EXAMPLES)) problems.push(`${describeBlock(b)} is example "${b.name}", which EXAMPLES does not know`);
    }
    for (const name of Object.keys(EXAMPLES)) if (!blocksOf(name).length) problems.push(`EXAMPLES has "${name}", which no README block is`);
    expect(
      problems,
      `${problems.join("\n")}\n→ annotate the block and add to EXAMPLES in test/platform/readme-examples.test.ts how to run it and what it must show (or, for what cannot run in a test, why)`,
    ).toEqual([]);
  });

  const runnable = Object.entries(EXAMPLES).flatMap(([name, e]) => ("notRunnable" in e ? [] : [{ name, ...e }]));
  for (const e of runnable) it.skipIf(!e.needs.every(Boolean))(e.name, e.run, 60_000);
});
