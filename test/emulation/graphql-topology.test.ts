import type { Client } from "graphql-ws";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Db } from "../../src/platform/db/client.js";
import { busSubscribed, call, gql, graphqlWsClient, nodesOf, startTestServer, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";
import { makeProject } from "./nodes-support.js";

const NODE = `fragment N on EmulatedNode { id nodeId name nodeType status console consoleType label { text x y } ports { name shortName adapterNumber portNumber linkType } }`;
const ERR = `... on Error { __typename message }`;

/** Collects the items of one graphql-ws subscription. */
function subscribe(client: Client, query: string, variables: Record<string, unknown>) {
  const items: any[] = [];
  const errors: unknown[] = [];
  const stop = client.subscribe(
    { query, variables },
    { next: (v) => (v.errors ? errors.push(...v.errors) : items.push(v.data)), error: (e) => errors.push(e), complete: () => {} },
  );
  return {
    items,
    errors,
    stop,
    async take(n: number, ms = 3000) {
      const deadline = Date.now() + ms;
      while (items.length < n) {
        if (Date.now() > deadline) throw new Error(`timeout: ${items.length}/${n} ${JSON.stringify(errors)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      return items.slice(0, n);
    },
  };
}

describe("emulation: GraphQL topology", () => {
  let s: TestServer;
  let pid: string;
  let client: Client;
  const createNode = (input: Record<string, unknown>) =>
    gql(s.url, `mutation($i: CreateNodeInput!) { createNode(input: $i) { __typename ... on CreateNodePayload { node { ...N } } ${ERR} } } ${NODE}`, { i: input });
  /** Bus subscribers of an idle server (its own listeners), and a wait for the ones an earlier test left to go. */
  let idle: number;
  const busIdle = () =>
    waitFor(() => s.ctx.bus.subscriberCount() === idle, 10_000, "earlier subscriptions released").catch((e: Error) => {
      throw new Error(`${e.message}: ${s.ctx.bus.subscriberCount()} bus subscribers, ${idle} when idle`);
    });
  beforeAll(async () => {
    s = await startTestServer();
    client = graphqlWsClient(s);
    // The runtime follows the event stream once it has rewired the opened projects, in the background of start-up.
    await s.ctx.services.emulation.runtime.ready;
    idle = s.ctx.bus.subscriberCount();
  });
  // Each test works in its own project: the nodes, names and events it sees are only its own.
  beforeEach(async () => {
    pid = await makeProject(s);
  });
  /** PC1 and SW1, the nodes the rename and link tests start from. */
  const pcAndSwitch = async () => {
    for (const [name, nodeType] of [["PC1", "VPCS"], ["SW1", "ETHERNET_SWITCH"]]) {
      const r = await createNode({ projectId: pid, name, nodeType });
      expect(r.data.createNode.node.name).toBe(name);
    }
  };
  afterAll(async () => {
    await client.dispose();
    await s.close();
  });

  it("creates nodes with typed results and enums", async () => {
    const r = await createNode({ projectId: pid, name: "PC 1", nodeType: "VPCS" });
    expect(r.errors).toBeUndefined();
    const node = r.data.createNode.node;
    expect(node).toMatchObject({ name: "PC1", nodeType: "VPCS", status: "STOPPED", consoleType: "TELNET", label: { text: "PC1", y: -40 } });
    expect(node.ports).toEqual([{ name: "Ethernet0", shortName: "e0", adapterNumber: 0, portNumber: 0, linkType: "ETHERNET" }]);
    const sw = (await createNode({ projectId: pid, name: "SW1", nodeType: "ETHERNET_SWITCH" })).data.createNode.node;
    expect(sw).toMatchObject({ status: "STARTED", consoleType: "NONE" });
    expect(sw.ports).toHaveLength(8);
  });

  it("follows a node's compute and template as edges (template null: none, or deleted since)", async () => {
    const VPCS_TEMPLATE = "19021f99-e36f-394d-b4a1-8aaa902ab9cc"; // GNS3's built-in VPCS
    const user = (await call(s.url, "POST", "/v2/templates", { name: "Hub E", template_type: "ethernet_hub", compute_id: "local" })).body;
    await createNode({ projectId: pid, name: "PC1", nodeType: "VPCS", templateId: VPCS_TEMPLATE });
    await createNode({ projectId: pid, name: "HUB1", nodeType: "ETHERNET_HUB", templateId: user.template_id });
    await createNode({ projectId: pid, name: "SW1", nodeType: "ETHERNET_SWITCH" });
    const read = async () =>
      nodesOf(
        (await gql(s.url, `query($p: ID!) { project(id: $p) { nodes { edges { node { name compute { name } template { name templateType } } } } } }`, { p: pid })).data.project.nodes,
      );
    const local = (await call(s.url, "GET", "/v2/computes/local")).body.name;
    expect(await read()).toEqual([
      { name: "PC1", compute: { name: local }, template: { name: "VPCS", templateType: "VPCS" } },
      { name: "HUB1", compute: { name: local }, template: { name: "Hub E", templateType: "ETHERNET_HUB" } },
      { name: "SW1", compute: { name: local }, template: null },
    ]);
    // A template deleted since: the node keeps its template id, the edge is null (not an error).
    expect((await call(s.url, "DELETE", `/v2/templates/${user.template_id}`)).status).toBe(204);
    expect((await read())[1].template).toBeNull();
  });

  it("returns typed errors: unknown project, unknown compute, bad input, locked node", async () => {
    await pcAndSwitch();
    const ghost = "e01323a4-2775-4b53-8cc8-84e3dba6f74f";
    expect((await createNode({ projectId: ghost, name: "X", nodeType: "VPCS" })).data.createNode).toEqual({
      __typename: "NotFoundError",
      message: `Project ID ${ghost} doesn't exist`,
    });
    expect((await createNode({ projectId: pid, name: "X", nodeType: "VPCS", computeId: "nope" })).data.createNode.__typename).toBe("NotFoundError");
    expect((await createNode({ projectId: pid, name: "X", nodeType: "VPCS", console: 70000 })).data.createNode.__typename).toBe("InvalidInputError");
    expect((await createNode({ projectId: pid, name: "X", nodeType: "VPCS", consoleType: "VNC" })).data.createNode.__typename).toBe("InvalidInputError");
    const locked = (await createNode({ projectId: pid, name: "L", nodeType: "VPCS", locked: true })).data.createNode.node;
    const del = await gql(s.url, `mutation($id: ID!) { deleteNode(input: { id: $id }) { __typename ${ERR} } }`, { id: locked.nodeId });
    expect(del.data.deleteNode).toEqual({ __typename: "ConflictError", message: "Node L cannot be deleted because it is locked" });
    const upd = await gql(
      s.url,
      `mutation($id: ID!) { updateNode(input: { id: $id, locked: false, name: "PC1", x: 5 }) { ... on UpdateNodePayload { node { name x } } } }`,
      { id: locked.nodeId },
    );
    expect(upd.data.updateNode.node).toEqual({ name: "PC2", x: 5 });
    const ok = await gql(s.url, `mutation($id: ID!) { deleteNode(input: { id: $id }) { ... on DeleteNodePayload { deletedIds } } }`, { id: locked.nodeId });
    expect(ok.data.deleteNode.deletedIds).toEqual([locked.id]);
    // Deleting what is gone is NOT_FOUND, never a silent success.
    const gone = await gql(s.url, `mutation($id: ID!) { deleteNode(input: { id: $id }) { __typename ... on Error { code } } }`, { id: locked.nodeId });
    expect(gone.data.deleteNode).toEqual({ __typename: "NotFoundError", code: "NOT_FOUND" });
  });

  it("answers PROJECT_CLOSED as a typed error when a node of a closed project is started, stopped or acted on all at once", async () => {
    const closed = (await call(s.url, "POST", "/v2/projects", { name: "closed-lab" })).body.project_id as string;
    const node = (await call(s.url, "POST", `/v2/projects/${closed}/nodes`, { name: "PC1", node_type: "vpcs", compute_id: "local" })).body.node_id;
    expect((await call(s.url, "POST", `/v2/projects/${closed}/close`, {})).status).toBe(204);
    for (const m of ["startNode", "stopNode", "suspendNode", "reloadNode"]) {
      const r = await gql(s.url, `mutation($id: ID!) { ${m}(input: { id: $id }) { __typename ... on Error { code message } } }`, { id: node });
      expect(r.data[m], m).toEqual({ __typename: "ForbiddenError", code: "PROJECT_CLOSED", message: "The project is not opened" });
    }
    const all = await gql(s.url, `mutation($p: ID!) { projectNodesAction(input: { projectId: $p, action: START }) { __typename ... on Error { code } } }`, { p: closed });
    expect(all.data.projectNodesAction).toEqual({ __typename: "ForbiddenError", code: "PROJECT_CLOSED" });
  });

  it("creates, updates and deletes links with typed errors", async () => {
    await pcAndSwitch();
    const { body: nodes } = await call(s.url, "GET", `/v2/projects/${pid}/nodes`);
    const [pc, sw] = nodes;
    const create = (ends: object[], extra: object = {}) =>
      gql(
        s.url,
        `mutation($i: CreateLinkInput!) { createLink(input: $i) { __typename ... on CreateLinkPayload { link { linkId linkType filters { delay { latencyMs jitterMs } corruptPercent } endpoints { node { name } adapterNumber portNumber label { text } } } } ${ERR} } }`,
        { i: { projectId: pid, ends, ...extra } },
      );
    const made = await create(
      [
        { nodeId: pc.node_id, adapterNumber: 0, portNumber: 0 },
        { nodeId: sw.node_id, adapterNumber: 0, portNumber: 0 },
      ],
      { filters: { delay: { latencyMs: 10, jitterMs: 2 }, corruptPercent: 0 } },
    );
    const link = made.data.createLink.link;
    expect(link).toMatchObject({ linkType: "ETHERNET", filters: { delay: { latencyMs: 10, jitterMs: 2 }, corruptPercent: null } }); // corrupt 0: off
    // Stored as GNS3 stores them (a filter that is off left out), so REST and the GUI see the same filters.
    expect((await call(s.url, "GET", `/v2/projects/${pid}/links/${link.linkId}`)).body.filters).toEqual({ delay: [10, 2] });
    expect(link.endpoints.map((e: any) => [e.node.name, e.portNumber, e.label.text])).toEqual([
      ["PC1", 0, "0/0"],
      ["SW1", 0, "0/0"],
    ]);
    const used = await create([
      { nodeId: sw.node_id, adapterNumber: 0, portNumber: 0 },
      { nodeId: pc.node_id, adapterNumber: 0, portNumber: 0 },
    ]);
    expect(used.data.createLink).toEqual({ __typename: "ConflictError", message: "Port is already used" });
    // The filters are typed: a name GNS3 does not know cannot be sent, a value out of a filter's range is refused.
    const unknownFilter = await create([], { filters: { jitter: [1] } });
    expect(unknownFilter.errors?.[0].message).toMatch(/"jitter" is not defined by type "LinkFiltersInput"/);
    const outOfRange = await create([], { filters: { packetLossPercent: 101 } });
    expect(outOfRange.data.createLink.__typename).toBe("InvalidInputError");
    const upd = await gql(
      s.url,
      `mutation($id: ID!) { updateLink(input: { id: $id, suspend: true, linkStyle: { color: "#f00" } }) { ... on UpdateLinkPayload { link { suspend linkStyle { color widthPixels } } } } }`,
      { id: link.linkId },
    );
    expect(upd.data.updateLink.link).toEqual({ suspend: true, linkStyle: { color: "#f00", widthPixels: null } });
    const q = await gql(s.url, `query($id: ID!) { link(id: $id) { ... on Link { linkId suspend } } }`, { id: link.linkId });
    expect(q.data.link).toEqual({ linkId: link.linkId, suspend: true });
  });

  it("takes and answers typed adapters, link styles and end labels, stored as GNS3 stores them", async () => {
    const made = await gql(
      s.url,
      `mutation($p: ID!) { createNode(input: { projectId: $p, name: "QA", nodeType: ETHERNET_HUB,
          customAdapters: [{ adapterNumber: 0, portName: "uplink", macAddress: "0c:00:00:00:00:01" }] }) {
        ... on CreateNodePayload { node { nodeId customAdapters { adapterNumber portName adapterType macAddress } ports { name dataLinkTypes { name dlt } } } } ${ERR} } }`,
      { p: pid },
    );
    const node = made.data.createNode.node;
    expect(node.customAdapters).toEqual([{ adapterNumber: 0, portName: "uplink", adapterType: null, macAddress: "0c:00:00:00:00:01" }]);
    expect(node.ports[0].dataLinkTypes).toEqual([{ name: "Ethernet", dlt: "EN10MB" }]);
    const rest = (await call(s.url, "GET", `/v2/projects/${pid}/nodes/${node.nodeId}`)).body;
    expect(rest.custom_adapters).toEqual([{ adapter_number: 0, port_name: "uplink", mac_address: "0c:00:00:00:00:01" }]);

    const other = (await call(s.url, "POST", `/v2/projects/${pid}/nodes`, { name: "QB", node_type: "ethernet_hub", compute_id: "local" })).body.node_id;
    const link = await gql(
      s.url,
      `mutation($p: ID!, $a: ID!, $b: ID!) { createLink(input: { projectId: $p, linkStyle: { color: "#00ff00", widthPixels: 3 },
          ends: [{ nodeId: $a, adapterNumber: 0, portNumber: 1, label: { text: "up", x: 5, y: -5 } }, { nodeId: $b, adapterNumber: 0, portNumber: 0 }] }) {
        ... on CreateLinkPayload { link { linkId linkStyle { color widthPixels type } endpoints { label { text x y } } } } ${ERR} } }`,
      { p: pid, a: node.nodeId, b: other },
    );
    const l = link.data.createLink.link;
    expect(l.linkStyle).toEqual({ color: "#00ff00", widthPixels: 3, type: null });
    expect(l.endpoints[0].label).toEqual({ text: "up", x: 5, y: -5 });
    const restLink = (await call(s.url, "GET", `/v2/projects/${pid}/links/${l.linkId}`)).body;
    expect(restLink.link_style).toEqual({ color: "#00ff00", width: 3 });
    expect(restLink.nodes[0].label).toMatchObject({ text: "up", x: 5, y: -5 });
  });

  it("reads a project with its nodes, ports and links in a constant number of queries (no N+1)", async () => {
    const big = await makeProject(s);
    const small = await makeProject(s);
    const sws: string[] = [];
    for (let i = 0; i < 10; i++) sws.push((await createNode({ projectId: big, name: "SW1", nodeType: "ETHERNET_SWITCH" })).data.createNode.node.nodeId);
    for (let i = 0; i < 9; i++) {
      await call(s.url, "POST", `/v2/projects/${big}/links`, { nodes: [{ node_id: sws[i], adapter_number: 0, port_number: 1 }, { node_id: sws[i + 1], adapter_number: 0, port_number: 2 }] });
    }
    const a = (await createNode({ projectId: small, name: "A", nodeType: "VPCS" })).data.createNode.node.nodeId;
    const b = (await createNode({ projectId: small, name: "B", nodeType: "VPCS" })).data.createNode.node.nodeId;
    await call(s.url, "POST", `/v2/projects/${small}/links`, { nodes: [{ node_id: a, adapter_number: 0, port_number: 0 }, { node_id: b, adapter_number: 0, port_number: 0 }] });

    const query = `query($id: ID!) { project(id: $id) { name nodes { edges { node { nodeId name nodeType nodeDirectory ports { name } } } }
      links { edges { node { linkId endpoints { adapterNumber portNumber node { nodeId name } } } } } } }`;
    const original = s.ctx.db;
    let count = 0;
    // Count the topology reads only: background work (compute monitor, runtime) shares the client.
    s.ctx.db = original.$extends({
      query: {
        $allModels: {
          $allOperations({ model, args, query: run }) {
            if (["Project", "Node", "Link", "LinkEndpoint"].includes(model)) count++;
            return run(args);
          },
        },
      },
    }) as unknown as Db;
    try {
      const counts: number[] = [];
      for (const id of [small, big]) {
        // The runtime wires new links in the background (reading the same tables): take the quietest of 3 runs.
        let r: Awaited<ReturnType<typeof gql>> = {};
        const runs: number[] = [];
        for (let i = 0; i < 3; i++) {
          s.ctx.services.emulation.reads.invalidate(id); // measure the execution, not the read cache
          count = 0;
          r = await gql(s.url, query, { id });
          expect(r.errors).toBeUndefined();
          runs.push(count);
        }
        counts.push(Math.min(...runs));
        if (id === big) {
          expect(r.data.project.nodes.edges).toHaveLength(10);
          expect(r.data.project.links.edges).toHaveLength(9);
          expect(r.data.project.links.edges[0].node.endpoints.map((e: any) => e.node.nodeId)).toEqual([sws[0], sws[1]]);
          expect(r.data.project.nodes.edges[0].node.ports).toHaveLength(8);
        }
      }
      expect(counts[0]).toBeGreaterThan(0); // the counter sees the queries
      expect(counts[1]).toBe(counts[0]);
      expect(counts[1]).toBeLessThanOrEqual(4);
      // Asked again with nothing changed, the same query is answered from the read cache: no statement at all.
      count = 0;
      expect((await gql(s.url, query, { id: big })).errors).toBeUndefined();
      expect(count).toBe(0);
    } finally {
      s.ctx.db = original;
    }
  });

  it("projectEvents: typed cursor per event; resubscribing with `after` replays what was missed", async () => {
    const Q = `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) { ... on SubscriptionProjectEventsSuccess { data { cursor action payload } } } }`;
    await busIdle(); // a release still under way would cancel out the new subscriber in the count
    const before = s.ctx.bus.subscriberCount();
    const first = subscribe(client, Q, { p: pid });
    await busSubscribed(s, before);
    const n1 = (await createNode({ projectId: pid, name: "E1", nodeType: "VPCS" })).data.createNode.node;
    const [e1] = await first.take(1);
    expect(e1.projectEvents.data).toMatchObject({ action: "node.created", payload: { node_id: n1.nodeId, name: "E1", project_id: pid } });
    first.stop(); // the client goes away...

    const n2 = (await createNode({ projectId: pid, name: "E2", nodeType: "VPCS" })).data.createNode.node;
    await call(s.url, "PUT", `/v2/projects/${pid}/nodes/${n2.nodeId}`, { x: 7 });
    await call(s.url, "DELETE", `/v2/projects/${pid}/nodes/${n1.nodeId}`);

    // ...and comes back with the last cursor it saw: nothing lost, nothing repeated, same order.
    const again = subscribe(client, Q, { p: pid, after: e1.projectEvents.data.cursor });
    const events = (await again.take(3)).map((d) => d.projectEvents.data);
    again.stop();
    expect(events.map((e) => [e.action, e.payload.name])).toEqual([
      ["node.created", "E2"],
      ["node.updated", "E2"],
      ["node.deleted", "E1"],
    ]);
    expect(new Set(events.map((e) => e.cursor)).size).toBe(3);
  });

  it("projectEvents rejects an unknown project and a malformed cursor; controllerEvents carries controller events", async () => {
    const Q = `subscription($p: ID!, $after: String) { projectEvents(projectId: $p, after: $after) { __typename ${ERR} } }`;
    const ghost = subscribe(client, Q, { p: "e01323a4-2775-4b53-8cc8-84e3dba6f74f" });
    const bad = subscribe(client, Q, { p: pid, after: "yesterday" });
    expect(await ghost.take(1)).toEqual([
      { projectEvents: { __typename: "NotFoundError", message: "Project ID e01323a4-2775-4b53-8cc8-84e3dba6f74f doesn't exist" } },
    ]);
    expect(await bad.take(1)).toEqual([{ projectEvents: { __typename: "InvalidInputError", message: "yesterday is not an event cursor" } }]);

    const C = `subscription($after: String) { controllerEvents(after: $after) { ... on SubscriptionControllerEventsSuccess { data { cursor action payload } } } }`;
    await busIdle(); // a release still under way would cancel out the new subscriber in the count
    const before = s.ctx.bus.subscriberCount();
    const ctl = subscribe(client, C, {});
    await busSubscribed(s, before);
    const created = await call(s.url, "POST", "/v2/projects", { name: "via-rest" });
    expect(created.status).toBe(201);
    const [ev] = await ctl.take(1);
    ctl.stop();
    expect(ev.controllerEvents.data).toMatchObject({ action: "project.created", payload: { name: "via-rest", project_id: created.body.project_id } });
    expect(ev.controllerEvents.data.cursor).toMatch(/^\d+-\d+$/);
  });
});
