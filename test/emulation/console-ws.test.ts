import { randomUUID } from "node:crypto";
import net from "node:net";
import { createClient, type Client } from "graphql-ws";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { COMPUTE_HOST, computeInstance, twoHosts } from "../support/computes.js";
import { call, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";
import { pause, waitFor } from "../support/wait.js";

/**
 * Issue 23 point 1: the web console, `GET /v2/projects/{p}/nodes/{n}/console/ws` (controller) and
 * `/v2/compute/projects/{p}/{emulator}/nodes/{n}/console/ws` (compute), black-box through the real server with a
 * `ws` client, as the GNS3 Web UI uses it (compat "The web console").
 */
const LISTED = "http://127.0.0.1:4200";
const FOREIGN = "http://evil.example";
const AUTH = { user: "admin", password: "s3cret" };
const CREDENTIALS = { authorization: `Basic ${Buffer.from(`${AUTH.user}:${AUTH.password}`).toString("base64")}` };
const IAC_DO_ECHO = Buffer.from([0xff, 0xfd, 0x01]);

/** A console WebSocket: every frame kept with its kind; `text()` is the output so far (latin1: raw bytes shown 1:1). */
async function openConsole(url: string, headers: Record<string, string> = CREDENTIALS) {
  const ws = new WebSocket(url, { headers });
  const frames: { data: Buffer; binary: boolean }[] = [];
  let closed: { code: number } | undefined;
  ws.on("message", (data: Buffer, binary) => frames.push({ data, binary }));
  ws.on("close", (code) => (closed = { code }));
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  const bytes = () => Buffer.concat(frames.map((f) => f.data));
  return {
    ws,
    frames,
    bytes,
    text: () => bytes().toString("latin1"),
    closed: () => closed,
    /** Waits until the output after byte `from` matches. */
    waitFor: (re: RegExp, from = 0, ms = 10_000) => waitFor(() => re.test(bytes().subarray(from).toString("latin1")), ms, `console output matching ${re}`),
    close: () => ws.close(),
  };
}

/** The status of an upgrade that is refused (or 101), with the refusal's JSON body. */
function upgrade(url: string, headers: Record<string, string> = CREDENTIALS): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on("unexpected-response", (_req, res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    ws.on("open", () => {
      ws.close();
      resolve({ status: 101, body: undefined });
    });
    ws.on("error", reject);
  });
}

const wsUrl = (s: { url: string }, path: string) => s.url.replace(/^http/, "ws") + path;

const CONSOLE = `subscription ($n: ID!) { nodeConsole(id: $n) {
  __typename ... on NodeConsoleOutput { session data text } ... on Error { message } } }`;
const INPUT = `mutation ($session: ID!, $text: String, $data: String) { sendNodeConsoleInput(input: { session: $session, text: $text, data: $data }) {
  __typename ... on SendNodeConsoleInputPayload { bytesWritten } ... on Error { message } } }`;

/** A graphql-ws client of `s` that sends `headers` (credentials) with its upgrade. */
function wsClient(s: { url: string }, headers: Record<string, string> = {}): Client {
  class WithHeaders extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers });
    }
  }
  return createClient({ url: `${s.url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WithHeaders, lazy: true, retryAttempts: 0 });
}

/** A nodeConsole subscription: its items (the field's result), the text so far, and whether it completed. */
function graphqlConsole(client: Client, nodeId: string) {
  const items: any[] = [];
  let completed = false;
  const close = client.subscribe(
    { query: CONSOLE, variables: { n: nodeId } },
    { next: (v) => items.push(v.errors ?? (v.data as any).nodeConsole), error: (e) => items.push({ error: e }), complete: () => (completed = true) },
  );
  const text = () => items.map((i) => i.text ?? "").join("");
  return {
    items,
    text,
    completed: () => completed,
    session: async () => (await waitFor(() => items[0], 10_000, "the first nodeConsole item")).session as string,
    waitFor: (re: RegExp, from = 0) => waitFor(() => re.test(text().slice(from)), 10_000, `nodeConsole text matching ${re}`),
    close,
  };
}

async function sendInput(client: Client, variables: Record<string, unknown>): Promise<any> {
  const result = await new Promise<any>((resolve, reject) => {
    let value: any;
    client.subscribe({ query: INPUT, variables }, { next: (v) => (value = v), error: reject, complete: () => resolve(value) });
  });
  return result.errors ?? result.data.sendNodeConsoleInput;
}

/** The request-log lines the server writes (pino → process.stdout), parsed. */
function captureLog() {
  const lines: Record<string, any>[] = [];
  const original = process.stdout.write.bind(process.stdout);
  const spy = vi.spyOn(process.stdout, "write").mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
    const text = String(chunk);
    if (!text.startsWith("{")) return original(chunk, ...rest);
    for (const line of text.split("\n")) if (line.startsWith("{")) lines.push(JSON.parse(line));
    return true;
  }) as typeof process.stdout.write);
  return { lines, restore: () => spy.mockRestore() };
}

describe("console WebSocket, against a console the test plays (no emulator needed)", () => {
  let s: TestServer;
  let P: string;
  let switchId: string;
  let fakeConsole: net.Server;
  const accepted: net.Socket[] = [];
  let log: ReturnType<typeof captureLog>;

  beforeAll(async () => {
    log = captureLog();
    s = await startTestServer({ auth: AUTH, corsOrigins: [LISTED], logRequests: true });
    P = `/v2/projects/${(await call(s.url, "POST", "/v2/projects", { name: "consoles" }, CREDENTIALS)).body.project_id}`;
    // An ethernet switch runs as soon as it exists; Patchbay serves no console of its own for it, so the port the
    // switch holds is free for the test to listen on as the node's telnet console.
    const sw = await call(s.url, "POST", `${P}/nodes`, { name: "SW1", node_type: "ethernet_switch", compute_id: "local", console_type: "telnet" }, CREDENTIALS);
    expect(sw.status, JSON.stringify(sw.body)).toBe(201);
    expect(sw.body).toMatchObject({ status: "started", console_type: "telnet" });
    switchId = sw.body.node_id;
    fakeConsole = net.createServer((socket) => void accepted.push(socket));
    await new Promise<void>((resolve) => fakeConsole.listen(sw.body.console, "127.0.0.1", resolve));
  });
  afterEach(() => {
    for (const socket of accepted.splice(0)) socket.destroy();
  });
  afterAll(async () => {
    log?.restore();
    await new Promise((r) => fakeConsole?.close(r));
    await s?.close();
  });

  const consoleUrl = () => wsUrl(s, `${P}/nodes/${switchId}/console/ws`);
  const received = (socket: net.Socket) => {
    const chunks: Buffer[] = [];
    socket.on("data", (d) => chunks.push(d));
    return () => Buffer.concat(chunks);
  };

  it("relays raw bytes: a text frame as its UTF-8 bytes, a binary frame as is, output in binary frames of at most 1,024 bytes", async () => {
    const c = await openConsole(consoleUrl());
    await waitFor(() => accepted.length === 1, 5000, "the console connection");
    const fromClient = received(accepted[0]);
    c.ws.send("show ip é\n");
    c.ws.send(Buffer.from([0xff, 0xfb, 0x01, 0x00, 0x80]), { binary: true });
    await waitFor(() => fromClient().length === 16, 5000, "the input on the console");
    expect(fromClient()).toEqual(Buffer.concat([Buffer.from("show ip é\n", "utf8"), Buffer.from([0xff, 0xfb, 0x01, 0x00, 0x80])]));

    const output = Buffer.alloc(5000 + 3);
    for (let i = 0; i < output.length; i++) output[i] = i % 256;
    accepted[0].write(output);
    await waitFor(() => c.bytes().length === output.length, 5000, "the output on the socket");
    expect(c.bytes()).toEqual(output);
    expect(c.frames.every((f) => f.binary)).toBe(true);
    expect(c.frames.every((f) => f.data.length <= 1024)).toBe(true);
    expect(c.frames.length).toBeGreaterThanOrEqual(5); // 5,003 bytes in frames of at most 1,024
    c.close();
  });

  it("gives each client its own connection to the console", async () => {
    const a = await openConsole(consoleUrl());
    const b = await openConsole(consoleUrl());
    await waitFor(() => accepted.length === 2, 5000, "two console connections");
    const [first, second] = accepted.map(received);
    a.ws.send("from a\n");
    b.ws.send("from b\n");
    await waitFor(() => first().length + second().length === 14, 5000, "both inputs");
    expect([first().toString(), second().toString()].sort()).toEqual(["from a\n", "from b\n"]);
    // Output of one connection reaches only its own client.
    const aSocket = first().toString() === "from a\n" ? accepted[0] : accepted[1];
    aSocket.write("for a only");
    await a.waitFor(/for a only/);
    await pause(200);
    expect(b.text()).toBe("");
    a.close();
    b.close();
  });

  it("closes the socket cleanly (1000) when the console closes, and the console connection when the client leaves", async () => {
    const c = await openConsole(consoleUrl());
    await waitFor(() => accepted.length === 1, 5000);
    accepted[0].end();
    await waitFor(() => c.closed(), 5000, "the socket to close");
    expect(c.closed()).toEqual({ code: 1000 });

    const d = await openConsole(consoleUrl());
    await waitFor(() => accepted.length === 2, 5000);
    const ended = new Promise((r) => accepted[1].once("close", r));
    d.close();
    await ended; // the server let go of its connection to the console
  });

  it("stops reading the console while a client does not read (nothing piles up in the server), and loses nothing", async () => {
    const c = await openConsole(consoleUrl());
    await waitFor(() => accepted.length === 1, 5000);
    (c.ws as unknown as { _socket: net.Socket })._socket.pause(); // the client stops reading its socket
    const output = Buffer.alloc(32 * 1024 * 1024);
    for (let i = 0; i < output.length; i += 4) output.writeUInt32BE(i, i);
    accepted[0].write(output);
    await pause(1500);
    // Kernel buffers on loopback hold a few MB; the rest stays with the console, unread, instead of in the server.
    expect(accepted[0].writableLength).toBeGreaterThan(16 * 1024 * 1024);
    (c.ws as unknown as { _socket: net.Socket })._socket.resume();
    await waitFor(() => c.bytes().length === output.length, 30_000, "all the output");
    expect(c.bytes().equals(output)).toBe(true);
    expect(c.frames.every((f) => f.binary && f.data.length <= 1024)).toBe(true);
    c.close();
  });

  it("refuses before the upgrade: unknown project or node 404, a console that is not telnet or a node not started 409, nothing listening 409", async () => {
    expect(await upgrade(wsUrl(s, `/v2/projects/${randomUUID()}/nodes/${switchId}/console/ws`))).toMatchObject({ status: 404, body: { status: 404, message: expect.stringMatching(/^Project ID .* doesn't exist$/) } });
    const unknown = randomUUID();
    expect(await upgrade(wsUrl(s, `${P}/nodes/${unknown}/console/ws`))).toEqual({ status: 404, body: { status: 404, message: `Node ID ${unknown} doesn't exist` } });

    const hub = await call(s.url, "POST", `${P}/nodes`, { name: "HUB1", node_type: "ethernet_hub", compute_id: "local" }, CREDENTIALS);
    expect(await upgrade(wsUrl(s, `${P}/nodes/${hub.body.node_id}/console/ws`))).toEqual({ status: 409, body: { status: 409, message: "Node HUB1 console type is not telnet" } });
    const pc = await call(s.url, "POST", `${P}/nodes`, { name: "PC9", node_type: "vpcs", compute_id: "local", console_type: "none" }, CREDENTIALS);
    expect(await upgrade(wsUrl(s, `${P}/nodes/${pc.body.node_id}/console/ws`))).toEqual({ status: 409, body: { status: 409, message: "Node PC9 console type is not telnet" } });
    const stopped = await call(s.url, "POST", `${P}/nodes`, { name: "PC8", node_type: "vpcs", compute_id: "local" }, CREDENTIALS);
    expect(await upgrade(wsUrl(s, `${P}/nodes/${stopped.body.node_id}/console/ws`))).toEqual({ status: 409, body: { status: 409, message: "Node PC8 is not started" } });

    const sw2 = await call(s.url, "POST", `${P}/nodes`, { name: "SW2", node_type: "ethernet_switch", compute_id: "local", console_type: "telnet" }, CREDENTIALS);
    const silent = await upgrade(wsUrl(s, `${P}/nodes/${sw2.body.node_id}/console/ws`));
    expect(silent).toMatchObject({ status: 409, body: { status: 409, message: expect.stringMatching(/^Cannot connect to node SW2 telnet server: .*ECONNREFUSED/) } });
  });

  it("applies authentication and the origin policy: 401 without credentials, 403 for an unlisted origin, 101 for a listed one", async () => {
    expect((await upgrade(consoleUrl(), {})).status).toBe(401);
    expect((await upgrade(consoleUrl(), { ...CREDENTIALS, origin: FOREIGN })).status).toBe(403);
    expect(accepted).toEqual([]); // refused before any connection to the console
    expect((await upgrade(consoleUrl(), { ...CREDENTIALS, origin: LISTED })).status).toBe(101);
    expect((await upgrade(consoleUrl(), { ...CREDENTIALS, origin: s.url })).status).toBe(101);
  });

  it("holds client messages to the body limit like every socket (1009 beyond it)", async () => {
    const c = await openConsole(consoleUrl());
    c.ws.send(Buffer.alloc(1024 * 1024 + 1), { binary: true });
    await waitFor(() => c.closed(), 5000, "the socket to close");
    expect(c.closed()).toEqual({ code: 1009 });
  });

  it("GraphQL: nodeConsole streams a console connection of its own (first item empty), sendNodeConsoleInput writes to it", async () => {
    const client = wsClient(s, CREDENTIALS);
    try {
      const sub = graphqlConsole(client, switchId);
      const session = await sub.session();
      expect(sub.items[0]).toEqual({ __typename: "NodeConsoleOutput", session, data: "", text: "" });
      await waitFor(() => accepted.length === 1, 5000, "the console connection");
      const fromClient = received(accepted[0]);

      // Raw bytes in `data`; `text` without the telnet negotiation, a UTF-8 character split between writes given whole.
      accepted[0].write(Buffer.from([0xff, 0xfd, 0x01, 0x68, 0xc3]));
      await waitFor(() => sub.items.length >= 2, 5000);
      accepted[0].write(Buffer.from([0xa9, 0x6c, 0x6c, 0x6f]));
      await sub.waitFor(/^héllo$/);
      const raw = Buffer.concat(sub.items.slice(1).map((i) => Buffer.from(i.data, "base64")));
      expect(raw).toEqual(Buffer.from([0xff, 0xfd, 0x01, 0x68, 0xc3, 0xa9, 0x6c, 0x6c, 0x6f]));

      expect(await sendInput(client, { session, text: "show ip\n" })).toEqual({ __typename: "SendNodeConsoleInputPayload", bytesWritten: 8 });
      expect(await sendInput(client, { session, data: Buffer.from([0xff, 0xf4]).toString("base64") })).toMatchObject({ bytesWritten: 2 });
      await waitFor(() => fromClient().length === 10, 5000, "the input on the console");
      expect(fromClient()).toEqual(Buffer.concat([Buffer.from("show ip\n"), Buffer.from([0xff, 0xf4])]));

      expect(await sendInput(client, { session, text: "a", data: "YQ==" })).toEqual({ __typename: "InvalidInputError", message: "Give exactly one of text and data" });
      expect(await sendInput(client, { session, text: "x".repeat(64 * 1024 + 1) })).toMatchObject({ __typename: "InvalidInputError" });
      expect(await sendInput(client, { session: randomUUID(), text: "a" })).toMatchObject({ __typename: "NotFoundError" });

      // The console closes: the subscription completes and its session takes no more input.
      accepted[0].end();
      await waitFor(() => sub.completed(), 5000, "the subscription to complete");
      expect(await sendInput(client, { session, text: "a" })).toMatchObject({ __typename: "NotFoundError", message: `Console session ${session} is not open on this server` });
    } finally {
      await client.dispose();
    }
  });

  it("GraphQL: a subscriber that does not read makes the server stop reading the console, and loses nothing", async () => {
    // graphql-transport-ws by hand, so that the test can stop reading the socket.
    const ws = new WebSocket(wsUrl(s, "/graphql"), "graphql-transport-ws", { headers: CREDENTIALS });
    const received: Buffer[] = [];
    let receivedBytes = 0;
    let acknowledged = false;
    ws.on("message", (data) => {
      const m = JSON.parse(String(data));
      if (m.type === "connection_ack") acknowledged = true;
      if (m.type !== "next") return;
      const chunk = Buffer.from(m.payload.data.nodeConsole.data, "base64");
      received.push(chunk);
      receivedBytes += chunk.length;
    });
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    ws.send(JSON.stringify({ type: "connection_init" }));
    await waitFor(() => acknowledged, 5000, "connection_ack");
    ws.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: CONSOLE, variables: { n: switchId } } }));
    await waitFor(() => accepted.length === 1, 5000, "the console connection");
    const socket = (ws as unknown as { _socket: net.Socket })._socket;
    socket.pause();
    const output = Buffer.alloc(32 * 1024 * 1024);
    for (let i = 0; i < output.length; i += 4) output.writeUInt32BE(i, i);
    accepted[0].write(output);
    await pause(1500);
    expect(accepted[0].writableLength).toBeGreaterThan(12 * 1024 * 1024); // base64 in JSON: a third more on the wire
    socket.resume();
    await waitFor(() => receivedBytes === output.length, 60_000, "all the output");
    expect(Buffer.concat(received).equals(output)).toBe(true);
    ws.close();
  });

  it("GraphQL: refusals are typed errors; a client leaving closes its console connection", async () => {
    const client = wsClient(s, CREDENTIALS);
    try {
      const hub = await call(s.url, "POST", `${P}/nodes`, { name: "HUB2", node_type: "ethernet_hub", compute_id: "local" }, CREDENTIALS);
      const refused = graphqlConsole(client, hub.body.node_id);
      await waitFor(() => refused.completed(), 5000);
      expect(refused.items).toEqual([{ __typename: "ConflictError", message: "Node HUB2 console type is not telnet" }]);
      const unknown = graphqlConsole(client, randomUUID());
      await waitFor(() => unknown.completed(), 5000);
      expect(unknown.items[0].__typename).toBe("NotFoundError");

      const sub = graphqlConsole(client, switchId);
      await sub.session();
      await waitFor(() => accepted.length === 1, 5000);
      const closed = new Promise((r) => accepted[0].once("close", r));
      sub.close();
      await closed;
    } finally {
      await client.dispose();
    }
  });

  it("logs every upgrade with its outcome in the request log, and the close of an opened socket", async () => {
    const id = `console-${randomUUID()}`;
    const c = await openConsole(consoleUrl(), { ...CREDENTIALS, "x-request-id": id });
    c.close();
    const refusedId = `refused-${randomUUID()}`;
    expect((await upgrade(consoleUrl(), { ...CREDENTIALS, origin: FOREIGN, "x-request-id": refusedId })).status).toBe(403);
    const path = `${P}/nodes/${switchId}/console/ws`;
    await waitFor(() => log.lines.some((l) => l.msg === "websocket closed" && l.id === id), 5000, "the close line");
    expect(log.lines.find((l) => l.id === id && l.msg === "request")).toMatchObject({ method: "GET", path, status: 101, websocket: true, ms: expect.any(Number) });
    expect(log.lines.find((l) => l.id === id && l.msg === "websocket closed")).toMatchObject({ path, code: 1005, ms: expect.any(Number) });
    expect(log.lines.find((l) => l.id === refusedId && l.msg === "request")).toMatchObject({ method: "GET", path, status: 403, websocket: true });
    // The earlier tests' upgrades, each a line: opened, refused for credentials, origin, unknown node, console.
    const statuses = new Set(log.lines.filter((l) => l.msg === "request" && l.websocket).map((l) => l.status));
    for (const status of [101, 401, 403, 404, 409]) expect(statuses.has(status), String(status)).toBe(true);
  });
});

describe.skipIf(!toolAvailable("vpcs", findVpcs() !== null))("console WebSocket of a VPCS node, local and on a remote compute (requires vpcs)", () => {
  let ctl: TestServer;
  let cmp: TestServer;
  let compute: Awaited<ReturnType<typeof computeInstance>>;
  let P: string;
  let projectId: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    ({ ctl, cmp, compute } = await twoHosts({ corsOrigins: [LISTED] }));
    projectId = (await call(ctl.url, "POST", "/v2/projects", { name: "vpcs-consoles" })).body.project_id;
    P = `/v2/projects/${projectId}`;
    for (const [name, computeId] of [["PC1", "local"], ["PC2", "hostb"]]) {
      const r = await call(ctl.url, "POST", `${P}/nodes`, { name, node_type: "vpcs", compute_id: computeId });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      ids[name] = r.body.node_id;
    }
  }, 40_000);
  afterAll(async () => {
    await ctl?.close();
    await cmp?.close();
    await compute?.drop();
  });

  const start = async (name: string) => expect((await call(ctl.url, "POST", `${P}/nodes/${ids[name]}/start`)).status).toBe(200);
  const consoleOf = (name: string, headers: Record<string, string> = {}) => openConsole(wsUrl(ctl, `${P}/nodes/${ids[name]}/console/ws`), headers);

  it("PC1 (local): the banner and prompt as raw telnet, `show ip` as a text frame answers IP/MASK, closed when the node stops", async () => {
    await start("PC1");
    const c = await consoleOf("PC1", { origin: LISTED });
    await c.waitFor(/Welcome to Virtual PC Simulator[\s\S]*VPCS> $/);
    expect(c.bytes().subarray(0, 3)).toEqual(IAC_DO_ECHO); // vpcs's telnet negotiation, as a telnet client sees it
    const from = c.bytes().length;
    c.ws.send("show ip\n");
    await c.waitFor(/IP\/MASK\s+: 0\.0\.0\.0\/0[\s\S]*VPCS> $/, from);
    expect(c.frames.every((f) => f.binary && f.data.length <= 1024)).toBe(true);

    expect((await call(ctl.url, "POST", `${P}/nodes/${ids.PC1}/stop`)).status).toBe(200);
    await waitFor(() => c.closed(), 10_000, "the console socket to close");
    expect(c.closed()).toEqual({ code: 1000 });
    expect(await upgrade(wsUrl(ctl, `${P}/nodes/${ids.PC1}/console/ws`), {})).toEqual({ status: 409, body: { status: 409, message: "Node PC1 is not started" } });
  });

  it("PC1 over GraphQL: the prompt in nodeConsole, `show ip` through sendNodeConsoleInput", async () => {
    await start("PC1");
    const client = wsClient(ctl);
    try {
      const sub = graphqlConsole(client, ids.PC1);
      const session = await sub.session();
      await sub.waitFor(/VPCS> $/);
      const from = sub.text().length;
      expect(await sendInput(client, { session, text: "show ip\n" })).toMatchObject({ bytesWritten: 8 });
      await sub.waitFor(/IP\/MASK\s+: 0\.0\.0\.0\/0[\s\S]*VPCS> $/, from);
      expect((await call(ctl.url, "POST", `${P}/nodes/${ids.PC1}/stop`)).status).toBe(200);
      await waitFor(() => sub.completed(), 10_000, "the subscription to end with the node");
    } finally {
      await client.dispose();
    }
  });

  it("PC1: two clients, two connections — VPCS serves one console client at a time, the second once the first leaves", async () => {
    await start("PC1");
    const a = await consoleOf("PC1");
    await a.waitFor(/VPCS> $/);
    const b = await consoleOf("PC1");
    b.ws.send("show ip\n"); // queued in b's own connection: vpcs reads it once b's turn comes
    await pause(500);
    expect(b.text()).toBe("");
    a.close();
    await b.waitFor(/IP\/MASK[\s\S]*VPCS> $/);
    expect(b.bytes().subarray(0, 3)).toEqual(IAC_DO_ECHO); // a console session of its own, negotiated afresh
    b.close();
    expect((await call(ctl.url, "POST", `${P}/nodes/${ids.PC1}/stop`)).status).toBe(200);
  });

  it("PC2 (remote compute): the controller relays the compute's console socket both ways (GraphQL too); the compute's refusal is passed on", async () => {
    const url = wsUrl(ctl, `${P}/nodes/${ids.PC2}/console/ws`);
    expect(await upgrade(url, {})).toEqual({ status: 409, body: { status: 409, message: "Node PC2 is not started" } });
    await start("PC2");
    const node = (await call(ctl.url, "GET", `${P}/nodes/${ids.PC2}`)).body;
    expect(node).toMatchObject({ compute_id: "hostb", console_host: COMPUTE_HOST, status: "started" });

    // GraphQL on the controller: the same relay.
    const client = wsClient(ctl);
    try {
      const sub = graphqlConsole(client, ids.PC2);
      const session = await sub.session();
      await sub.waitFor(/VPCS> $/);
      const at = sub.text().length;
      expect(await sendInput(client, { session, text: "show ip\n" })).toMatchObject({ bytesWritten: 8 });
      await sub.waitFor(/IP\/MASK\s+: 0\.0\.0\.0\/0[\s\S]*VPCS> $/, at);
    } finally {
      await client.dispose(); // leaves the console to the next client
    }

    // VPCS greets a later client with its telnet negotiation alone: the prompt comes with the first command.
    const c = await openConsole(url, {});
    await waitFor(() => c.bytes().length >= 3, 10_000, "the console's negotiation");
    expect(c.bytes().subarray(0, 3)).toEqual(IAC_DO_ECHO);
    const from = c.bytes().length;
    c.ws.send(Buffer.from("show ip\n"), { binary: true });
    await c.waitFor(/IP\/MASK\s+: 0\.0\.0\.0\/0[\s\S]*VPCS> $/, from);
    expect(c.frames.every((f) => f.binary && f.data.length <= 1024)).toBe(true);

    // The compute's own route answers the same way; another emulator's path names no node there.
    const direct = await openConsole(wsUrl(cmp, `/v2/compute/projects/${projectId}/vpcs/nodes/${ids.PC2}/console/ws`), {});
    expect((await upgrade(wsUrl(cmp, `/v2/compute/projects/${projectId}/qemu/nodes/${ids.PC2}/console/ws`), {})).status).toBe(404);
    direct.close();
    // The controller's route is not a compute's.
    expect((await upgrade(wsUrl(cmp, `${P}/nodes/${ids.PC2}/console/ws`), {})).status).toBe(403);

    expect((await call(ctl.url, "POST", `${P}/nodes/${ids.PC2}/stop`)).status).toBe(200);
    await waitFor(() => c.closed(), 10_000, "the relayed socket to close");
    expect(c.closed()).toEqual({ code: 1000 });
  });
});
