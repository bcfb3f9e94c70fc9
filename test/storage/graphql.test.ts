import { createClient } from "graphql-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { busSubscribed, gql, nodesOf, startTestServer, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";
import { storageFixture, volumePerTest } from "./fixture.js";

let s: TestServer;
/** Bus subscribers of an idle server (its own listeners), and a wait for the ones a previous test left to go. */
let idle: number;
const busIdle = () => waitFor(() => s.ctx.bus.subscriberCount() === idle, 10_000, "earlier subscriptions released");
beforeAll(async () => {
  s = await startTestServer();
  await storageFixture(s.url, "warmup", "warmup");
  idle = s.ctx.bus.subscriberCount(); // after a first fixture: the server's own subscribers (some start on first use) are in
});
afterAll(() => s.close());

let svm: string;
let volumeName: string;
let volumeUuid: string;
volumePerTest(() => s, (v) => ({ svm, volumeName, volumeUuid } = v));

const CREATE = `mutation($input: CreateQuotaRuleInput!) {
  createQuotaRule(input: $input) {
    __typename
    ... on CreateQuotaRulePayload { quotaRule { id uuid type qtreeName users { name id } filesHardLimit spaceHardLimitBytes } }
    ... on Error { message code ontapCode target }
  }
}`;
const create = (input: object) => gql(s.url, CREATE, { input: { svm: { name: svm }, volume: { name: volumeName }, ...input } });

/** Collects subscription payloads over graphql-ws until `n` arrived. */
function subscribeWs(query: string, n: number) {
  const client = createClient({ url: s.url.replace("http", "ws") + "/graphql", webSocketImpl: WebSocket });
  const got: any[] = [];
  const done = new Promise<any[]>((resolve, reject) => {
    client.subscribe({ query }, {
      next: (m) => {
        got.push(m.data);
        if (got.length === n) resolve(got);
      },
      error: reject,
      complete: () => resolve(got),
    });
  });
  return { done, dispose: () => client.dispose() };
}

describe("storage GraphQL", () => {
  it("creates rules through the same rules as REST and returns typed errors", async () => {
    const ok = await create({ type: "USER", users: [{ name: "1001" }], limits: { filesHardLimit: 10, spaceHardLimitBytes: "1500" } });
    expect(ok.data.createQuotaRule.quotaRule).toMatchObject({ type: "USER", qtreeName: null, users: [{ name: null, id: "1001" }], filesHardLimit: 10, spaceHardLimitBytes: 2048 });
    const dup = await create({ type: "USER", users: [{ name: "1001" }] });
    expect(dup.data.createQuotaRule).toMatchObject({ __typename: "ConflictError", code: "DUPLICATE_RULE", ontapCode: "5308546" });
    const bad = await create({ type: "TREE", qtreeName: "qt1", group: { name: "g" } });
    expect(bad.data.createQuotaRule).toMatchObject({ __typename: "InvalidInputError", code: "INVALID_INPUT", ontapCode: "5308514", target: "group" });
    const missing = await gql(s.url, CREATE, { input: { svm: { name: "nope" }, volume: { name: volumeName }, type: "TREE", qtreeName: "qt1" } });
    expect(missing.data.createQuotaRule).toMatchObject({ __typename: "NotFoundError", code: "NOT_FOUND" });
  });

  it("queries rules with typed filters, alternatives and totalCount", async () => {
    await create({ type: "TREE", qtreeName: "qt1", limits: { filesHardLimit: 3 } });
    await create({ type: "TREE", qtreeName: "qt2", limits: { filesHardLimit: 30 } });
    const r = await gql(s.url, `{
      quotaRules(first: 10, filter: { svmName: { eq: "${svm}" }, type: [TREE], or: [{ filesHardLimit: { gt: 5 } }, { filesHardLimit: { isNull: true } }] }) {
        totalCount edges { node { qtreeName filesHardLimit volume { name svm { name } } } }
      } }`);
    expect(r.errors).toBeUndefined();
    expect(r.data.quotaRules.totalCount).toBe(2);
    expect(r.data.quotaRules.edges.map((e: any) => e.node.qtreeName).sort()).toEqual(["", "qt2"]);
    expect(r.data.quotaRules.edges[0].node.volume).toEqual({ name: volumeName, svm: { name: svm } });
  });

  it("rejects bad filter values as GraphQL errors, not 500s", async () => {
    const res = await fetch(`${s.url}/graphql`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query: `{ quotaRules(filter: { filesHardLimit: { gt: "lots" } }) { totalCount } }` }) });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.errors[0].message).toMatch(/BigInt/);
  });

  it("turns quota on and reports the enforced limits", async () => {
    await create({ type: "TREE", qtreeName: "qt2", limits: { filesHardLimit: 30 } });
    const on = await gql(s.url, `mutation($v: ID!) { setVolumeQuota(input: { id: $v, enabled: true }) { ... on SetVolumeQuotaPayload { job { state } volume { quotaState } } } }`, { v: volumeUuid });
    expect(on.data.setVolumeQuota).toEqual({ job: { state: "SUCCESS" }, volume: { quotaState: "ON" } });
    const r = await gql(s.url, `query($v: ID!, $svm: String!) { volumes(svm: { name: $svm }) { edges { node { name quotaState } } } quotaReports(volumeId: $v) { totalCount edges { node { type qtreeName filesHardLimit } } } }`, {
      v: volumeUuid,
      svm,
    });
    expect(nodesOf(r.data.volumes)).toEqual([{ name: volumeName, quotaState: "ON" }]);
    expect(r.data.quotaReports.totalCount).toBe(r.data.quotaReports.edges.length);
    expect(nodesOf(r.data.quotaReports).find((x: any) => x.qtreeName === "qt2").filesHardLimit).toBe(30);
  });

  it("streams rule changes scoped by volume over graphql-ws, and resumes from a cursor", async () => {
    // A user rule already there (so its default user rule too: the new one below is one rule, one event), and quota
    // on, so that the new rule resizes the enforced limits.
    await create({ type: "USER", users: [{ name: "1001" }], limits: { filesHardLimit: 10 } });
    await create({ type: "TREE", qtreeName: "qt2", limits: { filesHardLimit: 30 } });
    const on = await gql(s.url, `mutation($v: ID!) { setVolumeQuota(input: { id: $v, enabled: true }) { ... on SetVolumeQuotaPayload { job { state } volume { quotaState } } } }`, { v: volumeUuid });
    expect(on.data.setVolumeQuota).toEqual({ job: { state: "SUCCESS" }, volume: { quotaState: "ON" } });
    const other = await gql(s.url, `mutation($svm: String!) { createVolume(input: { svm: { name: $svm }, name: "other" }) { ... on CreateVolumePayload { volume { id } } } }`, { svm });
    const vol2 = other.data.createVolume.volume.id;
    await busIdle(); // a release still under way would cancel out the new subscriber in the count
    const before = s.ctx.bus.subscriberCount();
    const sub = subscribeWs(`subscription { quotaChanges(volumeId: "${volumeUuid}") { cursor kind ruleUuid rule { type users { name } } } }`, 2);
    await busSubscribed(s, before);
    await gql(s.url, CREATE, { input: { svm: { name: svm }, volume: { id: vol2 }, type: "GROUP", group: { name: "elsewhere" } } });
    await create({ type: "USER", users: [{ name: "zoe" }] });
    const events = await sub.done;
    await sub.dispose();
    expect(events[0].quotaChanges).toMatchObject({ kind: "RULE_CREATED", rule: { type: "USER", users: [{ name: "zoe" }] } });
    expect(events[1].quotaChanges.kind).toBe("VOLUME_QUOTA_CHANGED"); // quota is on: the resize

    // A client that saw only the first event resumes after it and gets the rest, nothing twice.
    const resumed = subscribeWs(`subscription { quotaChanges(volumeId: "${volumeUuid}", after: "${events[0].quotaChanges.cursor}") { cursor kind } }`, 1);
    const [again] = await resumed.done;
    await resumed.dispose();
    expect(again.quotaChanges.cursor).toBe(events[1].quotaChanges.cursor);
  });

  it("types rule events: kind, the rule with its qtree, and the names of the fields an update changed", async () => {
    const made = await create({ type: "USER", users: [{ name: "kim" }], qtreeName: "qt1", limits: { spaceHardLimitBytes: 1024 } });
    const { id, uuid } = made.data.createQuotaRule.quotaRule;
    await busIdle();
    const before = s.ctx.bus.subscriberCount();
    const sub = subscribeWs(`subscription { quotaChanges(volumeId: "${volumeUuid}") { kind changed ruleId rule { uuid userMapping qtree { qtreeId name qtree { id } } } } }`, 3);
    await busSubscribed(s, before);
    const UPDATE = `mutation($u: ID!, $l: QuotaLimitsInput!) { updateQuotaRule(input: { id: $u, limits: $l }) { __typename } }`;
    // same space limit (no change), a new files limit and user mapping; by global id, then by uuid
    expect((await gql(s.url, UPDATE, { u: id, l: { spaceHardLimitBytes: 1024, filesHardLimit: 5, userMapping: true } })).data.updateQuotaRule.__typename).toBe("UpdateQuotaRulePayload");
    await gql(s.url, UPDATE, { u: uuid, l: { spaceHardLimitBytes: 2048 } });
    await create({ type: "TREE", qtreeName: "qt2" });
    const [first, second, third] = (await sub.done).map((e) => e.quotaChanges);
    await sub.dispose();
    const qt1 = (await gql(s.url, `query($svm: String!) { volumes(svm: { name: $svm }) { edges { node { qtrees { edges { node { id qtreeId name } } } } } } }`, { svm })).data.volumes.edges[0].node.qtrees.edges.map((e: any) => e.node).find((q: any) => q.name === "qt1");
    // `rule` is the rule as it is when the event is delivered: the second update may already be in
    expect(first).toMatchObject({ kind: "RULE_UPDATED", changed: ["filesHardLimit", "userMapping"], ruleId: id, rule: { uuid, userMapping: true, qtree: { qtreeId: qt1.qtreeId, name: "qt1", qtree: { id: qt1.id } } } });
    expect(second).toMatchObject({ kind: "RULE_UPDATED", changed: ["spaceHardLimitBytes"] });
    expect(third).toMatchObject({ kind: "RULE_CREATED", changed: null, rule: { qtree: { name: "qt2" } } });
  });

  it("streams over SSE too", async () => {
    const ctrl = new AbortController();
    await busIdle(); // the previous test's subscriptions: a release under way would cancel out the new one
    const before = s.ctx.bus.subscriberCount();
    const res = await fetch(`${s.url}/graphql?query=${encodeURIComponent(`subscription { quotaChanges(svm: { name: "${svm}" }) { kind rule { users { name } } } }`)}`, {
      headers: { accept: "text/event-stream" },
      signal: ctrl.signal,
    });
    expect(res.headers.get("content-type")).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    await busSubscribed(s, before);
    await create({ type: "USER", users: [{ name: "sse-user" }] });
    let text = "";
    while (!text.includes("sse-user")) text += new TextDecoder().decode((await reader.read()).value);
    ctrl.abort();
    expect(text).toMatch(/event: next/);
  });
});
