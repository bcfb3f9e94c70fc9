import { describe, expect, it } from "vitest";
import { gql, type TestServer } from "../support/server.js";
import { serverWithFixture, storageFixture } from "./fixture.js";

/**
 * The storage side as one graph a client cache can normalise (issue 22): global ids that `node(id:)` finds, id
 * arguments that take the global id or the ONTAP one, edges instead of bare keys, and one rule for a taken name
 * (ALREADY_EXISTS) and for deleting what does not exist (NOT_FOUND).
 */
let s: TestServer;
serverWithFixture((server) => (s = server));

const ERR = "__typename ... on Error { code ontapCode target message }";
const ok = async (document: string, variables: Record<string, unknown> = {}) => {
  const r = await gql(s.url, document, variables);
  expect(r.errors, JSON.stringify(r.errors)).toBeUndefined();
  return r.data;
};
const rule = async (input: object) =>
  (await ok(`mutation($i: CreateQuotaRuleInput!) { createQuotaRule(input: $i) { ${ERR} ... on CreateQuotaRulePayload { quotaRule { id uuid } job { id uuid } } } }`, { i: input }))
    .createQuotaRule;

describe("storage GraphQL: one graph", () => {
  it("node(id:) finds every storage entity by its global id, and each type's id is its own", async () => {
    await rule({ svm: { name: "svm1" }, volume: { name: "vol1" }, type: "TREE", qtreeName: "qt1", limits: { filesHardLimit: 5 } });
    const vol = (await ok(`{ volumes(first: 1, svm: { name: "svm1" }) { edges { node { id uuid svm { id } qtrees { edges { node { id qtreeId } } } } } } }`)).volumes.edges[0].node;
    const on = (await ok(`mutation($v: ID!) { setVolumeQuota(input: { id: $v, enabled: true }) { ... on SetVolumeQuotaPayload { job { id } } } }`, { v: vol.id })).setVolumeQuota;
    const rules = (await ok(`query($v: String!) { quotaRules(filter: { volumeUuid: { eq: $v } }) { edges { node { id qtreeName svm { id } } } } }`, { v: vol.uuid })).quotaRules.edges;
    const reports = (await ok(`query($v: ID!) { quotaReports(volumeId: $v) { edges { node { id rule { id } } } } }`, { v: vol.id })).quotaReports.edges;
    const qtree = vol.qtrees.edges[0].node;
    const ids = [vol.svm.id, vol.id, qtree.id, rules[0].node.id, reports[0].node.id, on.job.id];
    const found = await ok(`query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, { ids });
    expect(found.nodes).toEqual(["Svm", "Volume", "Qtree", "QuotaRule", "QuotaReport", "Job"].map((__typename, i) => ({ __typename, id: ids[i] })));
    expect(new Set(ids).size).toBe(ids.length);
    expect(rules.every((r: any) => r.node.svm.id === vol.svm.id)).toBe(true); // the rule's SVM as an edge
    expect(reports.map((r: any) => r.node.rule.id).sort()).toEqual(rules.map((r: any) => r.node.id).sort());
    // A volume's global id is no SVM's: never looked up as one, so no SVM has it.
    expect((await ok(`query($id: ID!) { svm(id: $id) { id } }`, { id: vol.id })).svm).toBeNull();
  });

  it("gives qtrees of the same number in two volumes two ids; a rule's qtree is an edge to the Qtree", async () => {
    await storageFixture(s.url, "svm2", "vol2"); // qt1 and qt2 again: numbers 1 and 2, as in vol1
    const page = (await ok(`{ qtrees(first: 10) { edges { node { id qtreeId name volume { name } } } } }`)).qtrees.edges.map((e: any) => e.node);
    const ones = page.filter((q: any) => q.qtreeId === 1);
    expect(ones.map((q: any) => q.volume.name).sort()).toEqual(["vol1", "vol2"]);
    expect(ones[0].id).not.toBe(ones[1].id);
    const made = await rule({ svm: { name: "svm2" }, volume: { name: "vol2" }, type: "USER", users: [{ name: "ann" }], qtreeName: "qt1" });
    const read = await ok(`query($id: ID!) { node(id: $id) { ... on QuotaRule { qtree { name qtreeId qtree { id volume { name } } } } } }`, { id: made.quotaRule.id });
    const qt1 = ones.find((q: any) => q.volume.name === "vol2");
    expect(read.node.qtree).toEqual({ name: "qt1", qtreeId: 1, qtree: { id: qt1.id, volume: { name: "vol2" } } });
  });

  it("takes an entity's global id or its ONTAP id wherever an argument names it", async () => {
    const { volumeUuid } = await storageFixture(s.url, "svm3", "vol3");
    const vol = (await ok(`query($u: ID!) { volume(id: $u) { id name } }`, { u: volumeUuid })).volume;
    const byGlobal = (await ok(`query($v: ID!) { volume(id: $v) { uuid } }`, { v: vol.id })).volume;
    expect(byGlobal).toEqual({ uuid: volumeUuid });
    const made = await rule({ svm: { name: "svm3" }, volume: { id: vol.id }, type: "GROUP", group: { name: "g" } });
    for (const id of [made.quotaRule.id, made.quotaRule.uuid]) {
      expect((await ok(`query($id: ID!) { quotaRule(id: $id) { id } }`, { id })).quotaRule).toEqual({ id: made.quotaRule.id });
    }
    expect((await ok(`query($id: ID!) { job(id: $id) { id } }`, { id: made.job.uuid })).job).toEqual({ id: made.job.id });
  });

  it("refuses a taken name or a duplicate rule with ALREADY_EXISTS or DUPLICATE_RULE, the ONTAP number apart", async () => {
    const svm = await ok(`mutation { createSvm(input: { name: "svm1" }) { ${ERR} } }`);
    expect(svm.createSvm).toMatchObject({ __typename: "ConflictError", code: "ALREADY_EXISTS", ontapCode: "5308547", target: "name" });
    const volume = await ok(`mutation { createVolume(input: { svm: { name: "svm1" }, name: "vol1" }) { ${ERR} } }`);
    expect(volume.createVolume).toMatchObject({ __typename: "ConflictError", code: "ALREADY_EXISTS", ontapCode: "5308547" });
    const qtree = await ok(`mutation { createQtree(input: { svm: { name: "svm1" }, volume: { name: "vol1" }, name: "qt2" }) { ${ERR} } }`);
    expect(qtree.createQtree).toMatchObject({ __typename: "ConflictError", code: "ALREADY_EXISTS", ontapCode: "5308547" });
    const input = { svm: { name: "svm1" }, volume: { name: "vol1" }, type: "USER", users: [{ name: "dup" }] };
    expect((await rule(input)).__typename).toBe("CreateQuotaRulePayload");
    expect(await rule(input)).toMatchObject({ __typename: "ConflictError", code: "DUPLICATE_RULE", ontapCode: "5308546" });
  });

  it("answers each delete with the global ids it removed, cascades included, and a second delete with NOT_FOUND", async () => {
    await storageFixture(s.url, "svm4", "vol4");
    const vol = (await ok(`{ volumes(svm: { name: "svm4" }) { edges { node { id uuid svm { id } qtrees { edges { node { id name } } } } } } }`)).volumes.edges[0].node;
    const [qt1, qt2] = vol.qtrees.edges.map((e: any) => e.node);
    const scoped = await rule({ svm: { name: "svm4" }, volume: { name: "vol4" }, type: "USER", users: [{ name: "eve" }], qtreeName: "qt1" });
    const tree = await rule({ svm: { name: "svm4" }, volume: { name: "vol4" }, type: "TREE", qtreeName: "qt2" });
    expect((await ok(`mutation($v: ID!) { setVolumeQuota(input: { id: $v, enabled: true }) { __typename } }`, { v: vol.id })).setVolumeQuota.__typename).toBe("SetVolumeQuotaPayload");
    const reportId = async (ruleId: string) => (await ok(`query($v: ID!) { quotaReports(volumeId: $v) { edges { node { id rule { id } } } } }`, { v: vol.id })).quotaReports.edges.find((e: any) => e.node.rule?.id === ruleId)?.node.id;

    const deletes = {
      rule: `mutation($id: ID!) { deleteQuotaRule(input: { id: $id }) { ${ERR} ... on DeleteQuotaRulePayload { deletedIds job { state } } } }`,
      qtree: `mutation($id: ID!) { deleteQtree(input: { id: $id }) { ${ERR} ... on DeleteQtreePayload { deletedIds job { state } } } }`,
      volume: `mutation($id: ID!) { deleteVolume(input: { id: $id }) { ${ERR} ... on DeleteVolumePayload { deletedIds } } }`,
      svm: `mutation($id: ID!) { deleteSvm(input: { id: $id }) { ${ERR} ... on DeleteSvmPayload { deletedIds } } }`,
    };
    const treeReport = await reportId(tree.quotaRule.id);
    const r = (await ok(deletes.rule, { id: tree.quotaRule.id })).deleteQuotaRule;
    expect(r).toEqual({ __typename: "DeleteQuotaRulePayload", deletedIds: [tree.quotaRule.id, treeReport], job: { state: "SUCCESS" } }); // quota on: the resize dropped its entry

    const scopedReport = await reportId(scoped.quotaRule.id);
    const q = (await ok(deletes.qtree, { id: qt1.id })).deleteQtree;
    expect(q.deletedIds).toEqual([qt1.id, scoped.quotaRule.id, scopedReport]);

    const inSvm = (await ok(deletes.svm, { id: vol.svm.id })).deleteSvm;
    expect(inSvm).toMatchObject({ __typename: "ConflictError", code: "CONFLICT" }); // still has a volume
    const contents = await ok(`query($v: ID!, $u: String!) { quotaRules(filter: { volumeUuid: { eq: $u } }) { edges { node { id } } } quotaReports(volumeId: $v) { edges { node { id } } } }`, { v: vol.id, u: vol.uuid });
    const rulesAndReports = [...contents.quotaRules.edges, ...contents.quotaReports.edges].map((e: any) => e.node.id);
    expect(rulesAndReports).toHaveLength(4); // the default user and tree rules the creates brought, and their entries
    const v = (await ok(deletes.volume, { id: vol.id })).deleteVolume;
    expect(v.deletedIds.slice(0, 2)).toEqual([vol.id, qt2.id]);
    expect(v.deletedIds.slice(2).sort()).toEqual(rulesAndReports.sort());
    expect((await ok(deletes.svm, { id: vol.svm.id })).deleteSvm).toEqual({ __typename: "DeleteSvmPayload", deletedIds: [vol.svm.id] });

    // Deleting what does not exist is never a silent success.
    for (const [name, id] of [["rule", tree.quotaRule.id], ["qtree", qt1.id], ["volume", vol.id], ["svm", vol.svm.id]] as const) {
      const again = Object.values(await ok(deletes[name], { id }))[0];
      expect(again, name).toMatchObject({ __typename: "NotFoundError", code: "NOT_FOUND", ontapCode: "4" });
    }
    const left = await ok(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: [...v.deletedIds, ...q.deletedIds] });
    expect(left.nodes.every((n: unknown) => n === null)).toBe(true);
  });
});
