import type { Client } from "graphql-ws";
import { describe, expect, it } from "vitest";
import { globalId } from "../../src/platform/graphql/global-id.js";
import { busSubscribed, call, gql, nodesOf, serverWithGraphqlClient, type TestServer } from "../support/server.js";

const VPCS_ID = "19021f99-e36f-394d-b4a1-8aaa902ab9cc";
const FRAME_RELAY_ID = "dd0f6f3a-ba58-3249-81cb-a1dd88407a47";
const TEMPLATE = "id templateId name templateType category builtin compute { computeId } symbol defaultNameFormat consoleType settings { __typename ... on VpcsSettings { baseScriptFile } ... on EthernetSwitchSettings { ports { portNumber type vlan } } }";
const ERR = "... on Error { __typename code message }";

describe("emulation: templates (GraphQL)", () => {
  let s: TestServer;
  let client: Client;
  serverWithGraphqlClient((server, ws) => ((s = server), (client = ws)));

  it("lists the built-ins as the REST face does, and reads one", async () => {
    const r = await gql(s.url, `{ templates(first: 100) { totalCount edges { node { ${TEMPLATE} } } } template(id: "${VPCS_ID}") { name settings { ... on VpcsSettings { baseScriptFile } } } node(id: "${globalId("Template", VPCS_ID)}") { ... on Template { templateId } } }`);
    expect(r.errors).toBeUndefined();
    const rest = (await call(s.url, "GET", "/v2/templates")).body;
    expect(r.data.templates.totalCount).toBe(rest.length);
    expect(nodesOf(r.data.templates).map((t: any) => t.templateId)).toEqual(rest.map((t: any) => t.template_id));
    expect(nodesOf(r.data.templates).find((t: any) => t.templateId === VPCS_ID)).toEqual({
      id: globalId("Template", VPCS_ID),
      templateId: VPCS_ID,
      name: "VPCS",
      templateType: "VPCS",
      category: "GUEST",
      builtin: true,
      compute: null,
      symbol: ":/symbols/vpcs_guest.svg",
      defaultNameFormat: "PC{0}",
      consoleType: null,
      settings: { __typename: "VpcsSettings", baseScriptFile: "vpcs_base_config.txt" },
    });
    expect(r.data.template).toEqual({ name: "VPCS", settings: { baseScriptFile: "vpcs_base_config.txt" } });
    expect(r.data.node).toEqual({ templateId: VPCS_ID });
  });

  it("create, update, duplicate and delete through mutations, each seen on templateEvents; typed errors", async () => {
    const events: any[] = [];
    const before = s.ctx.bus.subscriberCount();
    const stop = client.subscribe(
      { query: `subscription { templateEvents { __typename ... on TemplateEvent { cursor kind action template { id name consoleType } } } }` },
      { next: (m: any) => events.push(m.data.templateEvents), error: () => {}, complete: () => {} },
    );
    await busSubscribed(s, before);

    const id = "8f0a8d67-1f5e-4d8a-a7a2-0e7c5f3a9b10";
    const gid = globalId("Template", id);
    const CREATE = `mutation($i: CreateTemplateInput!) { createTemplate(input: $i) { __typename ... on CreateTemplatePayload { template { ${TEMPLATE} } } ${ERR} } }`;
    const input = { id, name: "Access SW", templateType: "ETHERNET_SWITCH", computeId: "local", consoleType: "TELNET" };
    const created = await gql(s.url, CREATE, { i: input });
    expect(created.data.createTemplate.template).toMatchObject({
      id: gid,
      templateId: id,
      name: "Access SW",
      templateType: "ETHERNET_SWITCH",
      category: "SWITCH",
      builtin: false,
      compute: { computeId: "local" },
      defaultNameFormat: "Switch{0}",
    });
    expect(created.data.createTemplate.template).toMatchObject({ consoleType: "TELNET", settings: { __typename: "EthernetSwitchSettings", ports: expect.any(Array) } });
    expect(created.data.createTemplate.template.settings.ports[3]).toEqual({ portNumber: 3, type: "ACCESS", vlan: 1 });
    // The same template through REST.
    expect((await call(s.url, "GET", `/v2/templates/${id}`)).body).toMatchObject({ template_id: id, name: "Access SW", console_type: "telnet" });
    // A taken client-chosen id is ALREADY_EXISTS.
    expect((await gql(s.url, CREATE, { i: input })).data.createTemplate).toMatchObject({ __typename: "ConflictError", code: "ALREADY_EXISTS" });

    const updated = await gql(
      s.url,
      `mutation { updateTemplate(input: { id: "${gid}", name: "Edge SW", category: ROUTER }) { __typename ... on UpdateTemplatePayload { template { name category } } ${ERR} } }`,
    );
    expect(updated.data.updateTemplate.template).toEqual({ name: "Edge SW", category: "ROUTER" });
    const dup = await gql(s.url, `mutation { duplicateTemplate(input: { id: "${id}" }) { __typename ... on DuplicateTemplatePayload { template { templateId name } } ${ERR} } }`);
    expect(dup.data.duplicateTemplate.template).toMatchObject({ name: "Edge SW", templateId: expect.not.stringMatching(id) });
    const DELETE = `mutation($id: ID!) { deleteTemplate(input: { id: $id }) { __typename ... on DeleteTemplatePayload { deletedIds } ${ERR} } }`;
    expect((await gql(s.url, DELETE, { id: gid })).data.deleteTemplate).toEqual({ __typename: "DeleteTemplatePayload", deletedIds: [gid] });
    expect((await gql(s.url, DELETE, { id: gid })).data.deleteTemplate).toMatchObject({ __typename: "NotFoundError", code: "NOT_FOUND" });

    const builtin = await gql(s.url, DELETE, { id: VPCS_ID });
    expect(builtin.data.deleteTemplate).toMatchObject({ __typename: "ConflictError", message: expect.stringContaining("builtin") });
    const bad = await gql(s.url, `mutation { createTemplate(input: { name: "x", templateType: VPCS, consoleType: VNC }) { __typename ${ERR} } }`);
    expect(bad.data.createTemplate.__typename).toBe("InvalidInputError");
    const missing = await gql(s.url, `{ template(id: "${id}") { name } }`);
    expect([missing.errors, missing.data.template]).toEqual([undefined, null]);
    // Relay's node(id:) answers null for an entity that is gone, beside the ones that are there.
    const looked = await gql(s.url, `query($ids: [ID!]!) { nodes(ids: $ids) { __typename } }`, { ids: [gid, globalId("Template", VPCS_ID), globalId("Compute", "local")] });
    expect(looked.data.nodes).toEqual([null, { __typename: "Template" }, { __typename: "Compute" }]);

    const deadline = Date.now() + 3000;
    while (events.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stop();
    expect(events.map((e) => [e.kind, e.action, e.template.name])).toEqual([
      ["CREATED", "template.created", "Access SW"],
      ["UPDATED", "template.updated", "Edge SW"],
      ["CREATED", "template.created", "Edge SW"],
      ["DELETED", "template.deleted", "Edge SW"],
    ]);
    expect(events[0].cursor).toEqual(expect.any(String));
  });

  it("createNodeFromTemplate names the nodes PC1, PC2 and refuses a type this server cannot run", async () => {
    const projectId = (await call(s.url, "POST", "/v2/projects", { name: "gql-templates" })).body.project_id;
    const q = `mutation($p: ID!, $t: ID!) { createNodeFromTemplate(input: { projectId: $p, templateId: $t, x: 10, y: 20, computeId: "local" }) {
      __typename ... on CreateNodeFromTemplatePayload { node { name nodeType template { templateId } x y consoleType } } ${ERR} } }`;
    const first = await gql(s.url, q, { p: projectId, t: globalId("Template", VPCS_ID) });
    expect(first.data.createNodeFromTemplate.node).toEqual({ name: "PC1", nodeType: "VPCS", template: { templateId: VPCS_ID }, x: 10, y: 20, consoleType: "TELNET" });
    expect((await gql(s.url, q, { p: projectId, t: VPCS_ID })).data.createNodeFromTemplate.node.name).toBe("PC2");
    const frsw = await gql(s.url, q, { p: projectId, t: FRAME_RELAY_ID });
    expect(frsw.data.createNodeFromTemplate).toMatchObject({ __typename: "ConflictError", message: expect.stringMatching(/cannot run frame_relay_switch nodes/) });
  });
});
