import fs from "node:fs";
import { createClient, type Client } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { parsePcap } from "../../src/emulation/runtime/pcap.js";
import { TelnetClient } from "../../src/emulation/runtime/telnet-client.js";
import { findVpcs } from "../../src/emulation/runtime/vpcs.js";
import { icmpEchoes } from "../support/lab.js";
import { step } from "../support/steps.js";
import { waitFor } from "../support/wait.js";
import { call, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";
import { toolAvailable } from "../support/tools.js";

/**
 * The acceptance lab of runtime-api.test.ts (PC1 — SW1 — PC2, capture, ping), built and driven only through
 * GraphQL: mutations over POST /graphql, node status changes over a graphql-ws `projectEvents` subscription.
 */

const ERR = `... on Error { __typename message }`;

/** Runs one mutation field and returns its payload, failing on GraphQL errors or an error member of the result union. */
async function mutate(s: TestServer, field: string, query: string, variables: Record<string, unknown>) {
  const r = await gql(s.url, query, variables);
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  const result = r.data[field];
  expect(result.__typename, JSON.stringify(result)).toBe(`${field[0].toUpperCase()}${field.slice(1)}Payload`);
  return result;
}

describe.skipIf(!toolAvailable("vpcs", findVpcs() !== null))("the same lab built through GraphQL works too (requires the vpcs package)", () => {
  let s: TestServer;
  let client: Client;
  let stopEvents = () => {};
  let projectId: string;
  const ids: Record<string, string> = {};
  const links: string[] = [];
  const events: { action: string; payload: any; at: number }[] = [];
  const subscriptionErrors: unknown[] = [];
  let consoles: TelnetClient[] = [];

  const statusEvent = (nodeId: string, status: string) =>
    events.find((e) => e.action === "node.updated" && e.payload.node_id === nodeId && e.payload.status === status);

  beforeAll(async () => {
    s = await startTestServer();
    client = createClient({ url: `${s.url.replace(/^http/, "ws")}/graphql`, webSocketImpl: WebSocket, lazy: true });
  });

  afterAll(async () => {
    consoles.forEach((c) => c.close());
    stopEvents();
    await client?.dispose();
    await s?.close();
  });

  it("builds the lab through mutations, starts it under a projectEvents subscription, captures, pings and stops it", async () => {
    await step("creates the project, PC1, PC2, SW1 and both links through mutations", async () => {
      const { project } = await mutate(
        s,
        "createProject",
        `mutation($i: CreateProjectInput!) { createProject(input: $i) { __typename ... on CreateProjectPayload { project { projectId name status } } ${ERR} } }`,
        { i: { name: `gql-lab-${Date.now()}` } },
      );
      expect(project.status).toBe("OPENED");
      projectId = project.projectId;

      for (const [name, nodeType] of [["PC1", "VPCS"], ["PC2", "VPCS"], ["SW1", "ETHERNET_SWITCH"]]) {
        const { node } = await mutate(
          s,
          "createNode",
          `mutation($i: CreateNodeInput!) { createNode(input: $i) { __typename ... on CreateNodePayload { node { nodeId name nodeType status } } ${ERR} } }`,
          { i: { projectId, name, nodeType } },
        );
        expect(node).toMatchObject({ name, nodeType, status: nodeType === "VPCS" ? "STOPPED" : "STARTED" });
        ids[name] = node.nodeId;
      }

      for (const [pc, port] of [["PC1", 0], ["PC2", 1]] as const) {
        const { link } = await mutate(
          s,
          "createLink",
          `mutation($i: CreateLinkInput!) { createLink(input: $i) { __typename ... on CreateLinkPayload { link { linkId capturing endpoints { node { name } adapterNumber portNumber } } } ${ERR} } }`,
          {
            i: {
              projectId,
              ends: [
                { nodeId: ids[pc], adapterNumber: 0, portNumber: 0 },
                { nodeId: ids.SW1, adapterNumber: 0, portNumber: port },
              ],
            },
          },
        );
        expect(link.capturing).toBe(false);
        expect(link.endpoints.map((e: any) => [e.node.name, e.adapterNumber, e.portNumber])).toEqual([
          [pc, 0, 0],
          ["SW1", 0, port],
        ]);
        links.push(link.linkId);
      }
    });

    await step("subscribes to projectEvents, then sees each node start announced as it happens", async () => {
      stopEvents = client.subscribe(
        {
          query: `subscription($p: ID!) { projectEvents(projectId: $p) { __typename ... on SubscriptionProjectEventsSuccess { data { action payload } } ${ERR} } }`,
          variables: { p: projectId },
        },
        {
          next: (v) => {
            const r = (v.data as any)?.projectEvents;
            if (v.errors || r?.__typename !== "SubscriptionProjectEventsSuccess") subscriptionErrors.push(v.errors ?? r);
            else events.push({ ...r.data, at: Date.now() });
          },
          error: (e) => subscriptionErrors.push(e),
          complete: () => {},
        },
      );
      // The subscription is live once it delivers: nudge SW1 until its node.updated comes through.
      let x = 0;
      await waitFor(async () => {
        await mutate(
          s,
          "updateNode",
          `mutation($i: UpdateNodeInput!) { updateNode(input: $i) { __typename ... on UpdateNodePayload { node { x } } ${ERR} } }`,
          { i: { id: ids.SW1, x: ++x } },
        );
        await new Promise((r) => setTimeout(r, 50));
        return events.some((e) => e.action === "node.updated" && e.payload.node_id === ids.SW1);
      });
      expect(subscriptionErrors).toEqual([]);
      expect(statusEvent(ids.PC1, "started")).toBeUndefined();

      const { node: pc1 } = await mutate(
        s,
        "startNode",
        `mutation($n: ID!) { startNode(input: { id: $n }) { __typename ... on StartNodePayload { node { nodeId status console commandLine } } ${ERR} } }`,
        { n: ids.PC1 },
      );
      expect(pc1).toMatchObject({ nodeId: ids.PC1, status: "STARTED" });
      expect(pc1.commandLine).toContain(`-p ${pc1.console}`);
      await waitFor(() => statusEvent(ids.PC1, "started") !== undefined);
      expect(statusEvent(ids.PC2, "started")).toBeUndefined(); // PC2 has not been started yet

      const started = Date.now();
      const all = await mutate(
        s,
        "projectNodesAction",
        `mutation($p: ID!) { projectNodesAction(input: { projectId: $p, action: START }) { __typename ... on ProjectNodesActionPayload { project { nodes { edges { node { status } } } } } ${ERR} } }`,
        { p: projectId },
      );
      expect(nodesOf(all.project.nodes).map((n: any) => n.status)).toEqual(["STARTED", "STARTED", "STARTED"]);
      await waitFor(() => statusEvent(ids.PC2, "started") !== undefined);
      expect(statusEvent(ids.PC2, "started")!.at).toBeGreaterThanOrEqual(started);
      expect(events.indexOf(statusEvent(ids.PC1, "started")!)).toBeLessThan(events.indexOf(statusEvent(ids.PC2, "started")!));
      expect(subscriptionErrors).toEqual([]);
    });

    await step("starts a capture on the PC1 — SW1 link", async () => {
      const { link: capture } = await mutate(
        s,
        "startCapture",
        `mutation($l: ID!) { startCapture(input: { id: $l }) { __typename ... on StartCapturePayload { link { linkId capturing captureCompute { name } captureFileName captureFilePath } } ${ERR} } }`,
        { l: links[0] },
      );
      expect(capture).toEqual({
        linkId: links[0],
        capturing: true,
        captureCompute: { name: (await call(s.url, "GET", "/v2/computes/local")).body.name },
        captureFileName: "PC1_0-0_to_SW1_0-0.pcap",
        captureFilePath: `${s.dataDir}/projects/${projectId}/project-files/captures/PC1_0-0_to_SW1_0-0.pcap`,
      });
      expect(fs.existsSync(capture.captureFilePath)).toBe(true);
    });

    await step("one query returns the project with its started nodes (console ports) and its links (capturing)", async () => {
      const r = await gql(
        s.url,
        `query($p: ID!) { project(id: $p) { projectId status
          nodes { edges { node { nodeId name nodeType status console consoleType } } }
          links { edges { node { linkId capturing captureFileName captureFilePath endpoints { node { nodeId } } } } } } }`,
        { p: projectId },
      );
      expect(r.errors).toBeUndefined();
      const p = r.data.project;
      expect(p).toMatchObject({ projectId, status: "OPENED" });
      const byName = Object.fromEntries(nodesOf(p.nodes).map((n: any) => [n.name, n]));
      expect(Object.keys(byName).sort()).toEqual(["PC1", "PC2", "SW1"]);
      for (const pc of ["PC1", "PC2"]) {
        expect(byName[pc]).toMatchObject({ nodeId: ids[pc], nodeType: "VPCS", status: "STARTED", consoleType: "TELNET" });
        expect(byName[pc].console).toBeGreaterThanOrEqual(s.ctx.config.consolePorts[0]);
        expect(byName[pc].console).toBeLessThanOrEqual(s.ctx.config.consolePorts[1]);
      }
      expect(byName.PC1.console).not.toBe(byName.PC2.console);
      expect(byName.SW1.status).toBe("STARTED");
      const byId = Object.fromEntries(nodesOf(p.links).map((l: any) => [l.linkId, l]));
      expect(byId[links[0]]).toMatchObject({ capturing: true, captureFileName: "PC1_0-0_to_SW1_0-0.pcap" });
      expect(byId[links[0]].captureFilePath).toMatch(/project-files\/captures\/PC1_0-0_to_SW1_0-0\.pcap$/);
      expect(byId[links[1]].capturing).toBe(false);

      consoles = [await TelnetClient.connect(byName.PC1.console), await TelnetClient.connect(byName.PC2.console)];
    });

    await step("pings PC2 from PC1 over the consoles; after stopCapture the pcap holds the ICMP echo request and reply", async () => {
      await consoles[0].waitFor(/VPCS> $/);
      await consoles[1].waitFor(/VPCS> $/);
      await consoles[0].run("ip 10.0.0.1/24");
      await consoles[1].run("ip 10.0.0.2/24");
      const out = await consoles[0].run("ping 10.0.0.2 -c 3", 20_000);
      expect(out.match(/10\.0\.0\.2 icmp_seq=\d ttl=64/g)).toHaveLength(3);

      const { link: stop } = await mutate(
        s,
        "stopCapture",
        `mutation($l: ID!) { stopCapture(input: { id: $l }) { __typename ... on StopCapturePayload { link { capturing captureCompute { name } captureFileName captureFilePath } } ${ERR} } }`,
        { l: links[0] },
      );
      expect(stop).toMatchObject({ capturing: false, captureCompute: null, captureFileName: "PC1_0-0_to_SW1_0-0.pcap" });

      const link = (await gql(s.url, `query($l: ID!) { link(id: $l) { ... on Link { capturing captureFilePath } } }`, { l: links[0] })).data.link;
      expect(link.capturing).toBe(false);
      const fromDisk = fs.readFileSync(link.captureFilePath);
      const fromRest = await fetch(`${s.url}/v2/projects/${projectId}/files/project-files/captures/${stop.captureFileName}`);
      expect(fromRest.status).toBe(200);
      expect(Buffer.from(await fromRest.arrayBuffer()).equals(fromDisk)).toBe(true);

      const pcap = parsePcap(fromDisk);
      expect(pcap.linktype).toBe(1);
      const echoes = icmpEchoes(pcap.packets.map((p) => p.data));
      expect(echoes).toContainEqual({ type: 8, src: "10.0.0.1", dst: "10.0.0.2" });
      expect(echoes).toContainEqual({ type: 0, src: "10.0.0.2", dst: "10.0.0.1" });
    });

    await step("stops the nodes through GraphQL: STOPPED in the results, the events and the project query", async () => {
      consoles.forEach((c) => c.close());
      const { node: stopped } = await mutate(
        s,
        "stopNode",
        `mutation($n: ID!) { stopNode(input: { id: $n }) { __typename ... on StopNodePayload { node { nodeId status } } ${ERR} } }`,
        { n: ids.PC1 },
      );
      expect(stopped).toEqual({ nodeId: ids.PC1, status: "STOPPED" });
      await waitFor(() => statusEvent(ids.PC1, "stopped") !== undefined);
      await mutate(
        s,
        "projectNodesAction",
        `mutation($p: ID!) { projectNodesAction(input: { projectId: $p, action: STOP }) { __typename ${ERR} } }`,
        { p: projectId },
      );
      await waitFor(() => statusEvent(ids.PC2, "stopped") !== undefined);

      const r = await gql(s.url, `query($p: ID!) { project(id: $p) { nodes { edges { node { name status } } } } }`, { p: projectId });
      expect(r.errors).toBeUndefined();
      const status = Object.fromEntries(nodesOf(r.data.project.nodes).map((n: any) => [n.name, n.status]));
      expect(status).toMatchObject({ PC1: "STOPPED", PC2: "STOPPED" });
      expect(subscriptionErrors).toEqual([]);
      const rest = await call(s.url, "GET", `/v2/projects/${projectId}/nodes/${ids.PC2}`);
      expect(rest.body.status).toBe("stopped");
    });
  }, 180_000);
});
