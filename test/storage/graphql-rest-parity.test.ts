import { beforeAll, describe, expect, it } from "vitest";
import { call, gql, type TestServer } from "../support/server.js";
import { waitFor } from "../support/wait.js";
import { serverWithFixture, storageFixture } from "./fixture.js";

/**
 * Issue 13: what REST reaches of quota rules, GraphQL reaches with the same meaning — filters on uuid, group.id,
 * qtree.id and user_mapping, order_by, qtree.id on the rule, and return_timeout's job. Each GraphQL answer is
 * checked against REST's answer for the same data.
 */
let s: TestServer;
serverWithFixture((server) => (s = server));

const SVM = "psvm";
const rest = (path: string, body?: object) => call(s.url, body ? "POST" : "GET", path, body);
const postRule = async (volume: string, body: object) => {
  const r = await rest("/api/storage/quota/rules?return_timeout=30&return_records=true", { "svm.name": SVM, "volume.name": volume, ...body });
  expect(r.status, r.text).toBe(201);
  return r.body.records[0].uuid as string;
};

/** REST's records for a query on the data set's SVM, in REST's order. */
const restRules = async (query: string) => {
  const r = await rest(`/api/storage/quota/rules?svm.name=${SVM}&fields=qtree&${query}`);
  expect(r.status, r.text).toBe(200);
  return r.body.records as { uuid: string; qtree?: { id?: number; name: string } }[];
};

const RULES = `query($f: QuotaRuleFilter, $o: [QuotaRuleOrder!], $first: Int, $after: String) {
  quotaRules(filter: $f, orderBy: $o, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } edges { node { uuid qtree { qtreeId name } } }
  }
}`;
const gqlRules = async (filter: object, orderBy?: object[], first = 100, after?: string) => {
  const r = await gql(s.url, RULES, { f: { svmName: { eq: SVM }, ...filter }, o: orderBy, first, after });
  expect(r.errors).toBeUndefined();
  return r.data.quotaRules as { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string }; edges: { node: { uuid: string; qtree: unknown } }[] };
};
const uuids = (page: { edges: { node: { uuid: string } }[] }) => page.edges.map((e) => e.node.uuid);

/**
 * Two volumes with qtrees qt1 and qt2 each, and rules of every kind plus the default rules they bring: 14 rules,
 * 10 in pvol (trees qt1, qt2, ""; users alice@qt1, "", 1001, bob+carol; groups staff, "", id 500), 4 in avol.
 */
const data = { explicit: [] as string[], qt1: 0, groupById: "" };
beforeAll(async () => {
  await storageFixture(s.url, SVM, "pvol");
  await storageFixture(s.url, "psvm2", "avol"); // another SVM: never in the answers
  await rest("/api/storage/volumes?return_timeout=30", { name: "avol", "svm.name": SVM });
  for (const name of ["qt1", "qt2"]) await rest("/api/storage/qtrees?return_timeout=30", { svm: { name: SVM }, volume: { name: "avol" }, name });
  data.qt1 = (await rest(`/api/storage/qtrees?svm.name=${SVM}&volume.name=pvol&name=qt1`)).body.records[0].id;
  data.explicit.push(
    await postRule("pvol", { type: "tree", "qtree.name": "qt1", "space.hard_limit": 2048, "files.hard_limit": 10 }),
    await postRule("pvol", { type: "tree", "qtree.name": "qt2", "files.hard_limit": 30 }),
    await postRule("pvol", { type: "user", "users.name": ["alice"], "qtree.name": "qt1", user_mapping: true, "space.hard_limit": 4096 }),
    await postRule("pvol", { type: "user", "users.name": ["1001"], "space.hard_limit": 4096 }),
    await postRule("pvol", { type: "user", "users.name": ["bob", "carol"] }),
    await postRule("pvol", { type: "group", "group.name": "staff", "files.soft_limit": 5 }),
    (data.groupById = await postRule("pvol", { type: "group", "group.id": "500", "space.hard_limit": 1024 })),
    await postRule("avol", { type: "tree", "qtree.name": "qt2", "space.hard_limit": 1024 }),
    await postRule("avol", { type: "user", "users.name": ["dave"], "qtree.name": "qt2" }),
  );
  await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=30", { "svm.name": "psvm2", "volume.name": "avol", type: "tree", "qtree.name": "qt1" });
});

/** A GraphQL filter, the REST query that means the same, and how many of the data set's rules it selects. */
type FilterCase = [name: string, filter: () => object, query: () => string, count: number];

describe("quota rule filters: the same rules as REST's query parameters", () => {
  it.each<FilterCase>([
    ["uuid", () => ({ uuid: { eq: data.explicit[2] } }), () => `uuid=${data.explicit[2]}`, 1],
    ["uuid in", () => ({ uuid: { in: data.explicit.slice(0, 3) } }), () => `uuid=${data.explicit.slice(0, 3).join("|")}`, 3],
    ["group.id", () => ({ groupId: { eq: "500" } }), () => "group.id=500", 1],
    ["group.id set", () => ({ groupId: { isNull: false } }), () => "group.id=!null", 1],
    ["group.name", () => ({ groupName: { eq: "staff" } }), () => "group.name=staff", 1],
    ["qtree.id", () => ({ qtreeId: { eq: data.qt1 } }), () => `qtree.id=${data.qt1}`, 2], // tree qt1 and alice@qt1 (avol's qt1 has none)
    ["qtree.id range", () => ({ qtreeId: { gt: data.qt1 } }), () => `qtree.id=>${data.qt1}`, 3],
    ["qtree.id in", () => ({ qtreeId: { in: [data.qt1, data.qt1 + 1] } }), () => `qtree.id=${data.qt1}|${data.qt1 + 1}`, 5],
    ["no qtree.id", () => ({ qtreeId: { isNull: true } }), () => "qtree.id=null", 7], // volume-level user and group rules
    ["user_mapping true", () => ({ userMapping: { eq: true } }), () => "user_mapping=true", 1],
    ["user_mapping false", () => ({ userMapping: { eq: false } }), () => "user_mapping=false", 5],
    ["user_mapping unset", () => ({ userMapping: { isNull: true } }), () => "user_mapping=null", 8], // tree and group rules
  ])("%s", async (_name, filter, query, count) => {
    const expected = (await restRules(query())).map((r) => r.uuid);
    expect(expected).toHaveLength(count);
    const page = await gqlRules(filter());
    expect(uuids(page).sort()).toEqual([...expected].sort());
    expect(page.totalCount).toBe(expected.length);
  });

  it("combines the new filters with the others and with `or`, as REST ANDs its parameters", async () => {
    const expected = (await restRules(`type=user&qtree.id=${data.qt1}|null`)).map((r) => r.uuid).sort();
    const page = await gqlRules({ type: ["USER"], or: [{ qtreeId: { eq: data.qt1 } }, { qtreeId: { isNull: true } }] });
    expect(uuids(page).sort()).toEqual(expected);
    expect(expected).toContain(data.explicit[2]);
  });

  it("reports a bad filter as an error naming the field, never a 500", async () => {
    const big = await gql(s.url, RULES, { f: { qtreeId: { eq: 2 ** 31 } } });
    expect(big.errors?.[0].message).toMatch(/Int/);
    const many = await gql(s.url, RULES, { f: { uuid: { in: Array.from({ length: 101 }, (_, i) => `u${i}`) } } });
    expect(many.errors?.[0].message).toBeTruthy();
    expect(many.data?.quotaRules ?? null).toBeNull();
  });
});

describe("quota rule ordering: REST's order_by, the same order", () => {
  it.each([
    ["space.hard_limit desc,type", [{ field: "SPACE_HARD_LIMIT", direction: "DESC" }, { field: "TYPE" }]],
    ["volume.name,qtree.name desc", [{ field: "VOLUME_NAME" }, { field: "QTREE_NAME", direction: "DESC" }]],
    ["user_mapping desc,files.soft_limit", [{ field: "USER_MAPPING", direction: "DESC" }, { field: "FILES_SOFT_LIMIT" }]],
    ["group.name,group.id desc,uuid desc", [{ field: "GROUP_NAME" }, { field: "GROUP_ID", direction: "DESC" }, { field: "UUID", direction: "DESC" }]],
    ["svm.name desc,volume.uuid,files.hard_limit", [{ field: "SVM_NAME", direction: "DESC" }, { field: "VOLUME_UUID" }, { field: "FILES_HARD_LIMIT" }]],
  ])("order_by=%s", async (orderBy, keys) => {
    const expected = (await restRules(`order_by=${encodeURIComponent(orderBy)}`)).map((r) => r.uuid);
    expect(uuids(await gqlRules({}, keys))).toEqual(expected);
    // the same order a page at a time, through the connection's cursors
    const paged: string[] = [];
    let after: string | undefined;
    for (let more = true; more; ) {
      const page = await gqlRules({}, keys, 4, after);
      paged.push(...uuids(page));
      ({ hasNextPage: more, endCursor: after } = page.pageInfo);
    }
    expect(paged).toEqual(expected);
  });

  it("pages backwards (last, before) in the same order", async () => {
    const orderBy = [{ field: "SPACE_HARD_LIMIT", direction: "DESC" }, { field: "VOLUME_NAME" }];
    const BACK = `query($o: [QuotaRuleOrder!], $last: Int, $before: String) { quotaRules(filter: { svmName: { eq: "${SVM}" } }, orderBy: $o, last: $last, before: $before) {
      pageInfo { hasPreviousPage } edges { cursor node { uuid } } } }`;
    const all = (await gql(s.url, BACK, { o: orderBy, last: 100 })).data.quotaRules.edges;
    expect(all.map((e: any) => e.node.uuid)).toEqual((await restRules("order_by=space.hard_limit%20desc,volume.name")).map((r) => r.uuid));
    const page = (await gql(s.url, BACK, { o: orderBy, last: 3, before: all[8].cursor })).data.quotaRules;
    expect(page.edges.map((e: any) => e.node.uuid)).toEqual(all.slice(5, 8).map((e: any) => e.node.uuid));
    expect(page.pageInfo.hasPreviousPage).toBe(true);
  });

  it("sorts an unset value (unlimited, no group) as larger than any, on either database", async () => {
    const limits = async (dir: string) =>
      (await rest(`/api/storage/quota/rules?svm.name=${SVM}&order_by=space.hard_limit%20${dir}&fields=space`)).body.records.map((r: any) => r.space?.hard_limit ?? null);
    const UNLIMITED = 9; // the data set's rules without a space limit
    expect(await limits("asc")).toEqual([1024, 1024, 2048, 4096, 4096, ...Array(UNLIMITED).fill(null)]);
    expect(await limits("desc")).toEqual([...Array(UNLIMITED).fill(null), 4096, 4096, 2048, 1024, 1024]);
    const gqlLimits = await gql(s.url, `{ quotaRules(first: 100, filter: { svmName: { eq: "${SVM}" } }, orderBy: [{ field: SPACE_HARD_LIMIT }]) { edges { node { spaceHardLimitBytes } } } }`);
    expect(gqlLimits.data.quotaRules.edges.map((e: any) => e.node.spaceHardLimitBytes)).toEqual(await limits("asc"));
    const groups = (await restRules("order_by=group.name&type=group&fields=group")).map((r: any) => r.group.name ?? null);
    expect(groups).toEqual(["", "staff", null]); // the rule by id has no name
  });

  it("keeps its place across pages when rules are created before and after the cursor", async () => {
    await storageFixture(s.url, "osvm", "ovol");
    const post = (limit: number, user: string) =>
      call(s.url, "POST", "/api/storage/quota/rules?return_timeout=30", { "svm.name": "osvm", "volume.name": "ovol", type: "user", "users.name": [user], "space.hard_limit": limit });
    for (const [i, limit] of [10, 20, 30, 40, 50, 60].entries()) expect((await post(limit * 1024, `u${i}`)).status).toBe(201);
    const query = (after?: string) =>
      gql(s.url, `query($after: String) { quotaRules(first: 2, after: $after, filter: { svmName: { eq: "osvm" }, spaceHardLimitBytes: { isNull: false } },
        orderBy: [{ field: SPACE_HARD_LIMIT }]) { pageInfo { endCursor } edges { node { spaceHardLimitBytes } } } }`, { after });
    const first = (await query()).data.quotaRules;
    expect(first.edges.map((e: any) => e.node.spaceHardLimitBytes)).toEqual([10240, 20480]);
    // one rule sorts before the cursor, one right after it: the next page starts right after the cursor's rule
    expect((await post(5 * 1024, "early")).status).toBe(201);
    expect((await post(25 * 1024, "late")).status).toBe(201);
    const next = (await query(first.pageInfo.endCursor)).data.quotaRules;
    expect(next.edges.map((e: any) => e.node.spaceHardLimitBytes)).toEqual([25600, 30720]);
  });

  it("offers exactly REST's order_by fields, and bounds the number of keys", async () => {
    const type = await gql(s.url, `{ __type(name: "QuotaRuleOrderField") { enumValues { name description } } }`);
    // Each value's description ends with the ONTAP field it sorts by: "By the rule's space hard limit (`space.hard_limit`)".
    const restFields = type.data.__type.enumValues.map((v: any) => /\(`([^`]+)`\)$/.exec(v.description)?.[1]);
    for (const f of restFields) expect((await rest(`/api/storage/quota/rules?order_by=${f}&max_records=1`)).status, f).toBe(200);
    expect(restFields).toHaveLength(14);
    const tooMany = await gql(s.url, RULES, { o: Array.from({ length: 15 }, () => ({ field: "UUID" })) });
    expect(tooMany.errors?.[0].message).toBe('Invalid value for field "orderBy": expected at most 14 fields.');
    const unknown = await gql(s.url, RULES, { o: [{ field: "USERS_NAME" }] });
    expect(unknown.errors?.[0].message).toMatch(/USERS_NAME/);
  });
});

describe("QuotaRule.qtree: REST's qtree { id name } as { qtreeId name }", () => {
  const restQtrees = async () => new Map((await restRules("")).map((r) => [r.uuid, r.qtree ? { qtreeId: r.qtree.id ?? null, name: r.qtree.name } : null]));

  it("is the qtree REST reports, whichever way the rules are loaded", async () => {
    const expected = await restQtrees();
    expect([...expected.values()]).toContainEqual({ qtreeId: data.qt1, name: "qt1" });
    expect([...expected.values()]).toContainEqual({ qtreeId: null, name: "" }); // the default tree rule names no qtree
    expect([...expected.values()]).toContain(null); // volume-level user and group rules have none
    // the page loader (rule fields only), Prisma's nested load (with the volume), and one rule at a time
    const page = await gqlRules({});
    const nested = await gql(s.url, `{ quotaRules(first: 100, filter: { svmName: { eq: "${SVM}" } }) { edges { node { uuid qtree { qtreeId name } volume { name } } } } }`);
    for (const edges of [page.edges, nested.data.quotaRules.edges]) {
      expect(new Map(edges.map((e: any) => [e.node.uuid, e.node.qtree]))).toEqual(expected);
    }
    for (const uuid of data.explicit.slice(0, 3)) {
      const one = await gql(s.url, `query($u: ID!) { quotaRule(id: $u) { qtree { qtreeId name } } }`, { u: uuid });
      expect(one.data.quotaRule.qtree).toEqual(expected.get(uuid));
    }
  });

  it("follows a qtree rename in the next page (the read cache keeps it only until a storage change)", async () => {
    const { volumeUuid } = await storageFixture(s.url, "rsvm", "rvol");
    const rule = (await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=30&return_records=true", { "svm.name": "rsvm", "volume.name": "rvol", type: "tree", "qtree.name": "qt2" })).body.records[0].uuid;
    const read = async () =>
      (await gql(s.url, `{ quotaRules(first: 10, filter: { svmName: { eq: "rsvm" }, uuid: { eq: "${rule}" } }) { edges { node { qtree { qtreeId name } } } } }`)).data.quotaRules.edges[0]?.node.qtree;
    const before = await read();
    expect(before.name).toBe("qt2");
    expect(await read()).toEqual(before); // kept by the read cache until the next storage change
    expect((await call(s.url, "PATCH", `/api/storage/qtrees/${volumeUuid}/${before.qtreeId}?return_timeout=30`, { name: "renamed" })).status).toBe(200);
    expect(await read()).toEqual({ qtreeId: before.qtreeId, name: "renamed" });
  });
});

describe("returnTimeoutSeconds: REST's synchronous or asynchronous answer", () => {
  const ERR = "... on Error { __typename message code ontapCode target }";
  const JOB = "job { uuid state description }";
  const jobState = async (uuid: string) => (await gql(s.url, `query($u: ID!) { job(id: $u) { state message code } }`, { u: uuid })).data.job;
  /** Polls the job through GraphQL until it ended, as a client does after returnTimeoutSeconds ran out. */
  const ended = (uuid: string) =>
    waitFor(async () => {
      const job = await jobState(uuid);
      return job && job.state !== "QUEUED" && job.state !== "RUNNING" ? job : null;
    }, 10_000, "job ended");

  it("returnTimeoutSeconds 0 answers at once with the queued job, which then succeeds (create, update, delete, quota on)", async () => {
    const { volumeUuid } = await storageFixture(s.url, "jsvm", "jvol");
    const created = await gql(
      s.url,
      `mutation($i: CreateQuotaRuleInput!) { createQuotaRule(input: $i) { __typename ... on CreateQuotaRulePayload { quotaRule { id uuid qtree { name } } ${JOB} } ${ERR} } }`,
      { i: { svm: { name: "jsvm" }, volume: { name: "jvol" }, type: "TREE", qtreeName: "qt1", limits: { filesHardLimit: 7 }, returnTimeoutSeconds: 0 } },
    );
    const c = created.data.createQuotaRule;
    expect(c.__typename).toBe("CreateQuotaRulePayload");
    expect(c.job.state).toBe("QUEUED"); // REST: 202 with the job
    expect(c.quotaRule.qtree.name).toBe("qt1"); // the rule exists at once; its job resizes enforcement
    expect(await ended(c.job.uuid)).toEqual({ state: "SUCCESS", message: "success", code: 0 });
    const restJob = await rest(`/api/cluster/jobs/${c.job.uuid}`);
    expect(restJob.body).toMatchObject({ state: "success", description: "POST /api/storage/quota/rules" });

    const on = await gql(s.url, `mutation($v: ID!) { setVolumeQuota(input: { id: $v, enabled: true, returnTimeoutSeconds: 0 }) { ... on SetVolumeQuotaPayload { ${JOB} } ${ERR} } }`, { v: volumeUuid });
    expect(on.data.setVolumeQuota.job.state).toBe("QUEUED");
    expect((await ended(on.data.setVolumeQuota.job.uuid)).state).toBe("SUCCESS");

    const updated = await gql(
      s.url,
      `mutation($u: ID!) { updateQuotaRule(input: { id: $u, limits: { filesHardLimit: 9 }, returnTimeoutSeconds: 0 }) { ... on UpdateQuotaRulePayload { quotaRule { filesHardLimit } ${JOB} } ${ERR} } }`,
      { u: c.quotaRule.id },
    );
    expect(updated.data.updateQuotaRule).toMatchObject({ quotaRule: { filesHardLimit: 9 }, job: { state: "QUEUED", description: `update quota rule ${c.quotaRule.uuid}` } });
    expect((await ended(updated.data.updateQuotaRule.job.uuid)).state).toBe("SUCCESS");
    const report = await waitFor(async () => (await rest(`/api/storage/quota/reports?volume.uuid=${volumeUuid}&fields=files`)).body.records.find((r: any) => r.files?.hard_limit === 9), 10_000, "resized");
    expect(report).toBeTruthy();

    const deleted = await gql(s.url, `mutation($u: ID!) { deleteQuotaRule(input: { id: $u, returnTimeoutSeconds: 0 }) { ... on DeleteQuotaRulePayload { deletedIds ${JOB} } ${ERR} } }`, { u: c.quotaRule.id });
    expect(deleted.data.deleteQuotaRule.job.state).toBe("QUEUED");
    expect(deleted.data.deleteQuotaRule.deletedIds).toContain(c.quotaRule.id);
    expect((await ended(deleted.data.deleteQuotaRule.job.uuid)).state).toBe("SUCCESS");
    expect((await rest(`/api/storage/quota/rules/${c.quotaRule.uuid}`)).status).toBe(404);
  });

  it("a returnTimeoutSeconds long enough answers with the finished job and the result, as REST's 200/201", async () => {
    await storageFixture(s.url, "ksvm", "kvol");
    const r = await gql(
      s.url,
      `mutation($i: CreateQuotaRuleInput!) { createQuotaRule(input: $i) { ... on CreateQuotaRulePayload { quotaRule { qtreeName filesHardLimit } ${JOB} } ${ERR} } }`,
      { i: { svm: { name: "ksvm" }, volume: { name: "kvol" }, type: "TREE", qtreeName: "qt2", limits: { filesHardLimit: 3 }, returnTimeoutSeconds: 30 } },
    );
    expect(r.data.createQuotaRule).toMatchObject({ quotaRule: { qtreeName: "qt2", filesHardLimit: 3 }, job: { state: "SUCCESS" } });
  });

  it("a job that fails within the wait is the mutation's typed error; after returnTimeoutSeconds 0 the polled job reports it", async () => {
    const { volumeUuid } = await storageFixture(s.url, "fsvm", "fvol"); // no rules: quota cannot be turned on
    const ON = (timeout: string) => `mutation($v: ID!) { setVolumeQuota(input: { id: $v, enabled: true${timeout} }) { __typename ... on SetVolumeQuotaPayload { ${JOB} } ${ERR} } }`;
    for (const timeout of ["", ", returnTimeoutSeconds: 30"]) {
      const failed = await gql(s.url, ON(timeout), { v: volumeUuid });
      expect(failed.data.setVolumeQuota).toMatchObject({ __typename: "ConflictError", code: "CONFLICT", ontapCode: "14958", target: "quota.enabled" });
    }
    const started = await gql(s.url, ON(", returnTimeoutSeconds: 0"), { v: volumeUuid });
    expect(started.data.setVolumeQuota.job.state).toBe("QUEUED");
    expect(await ended(started.data.setVolumeQuota.job.uuid)).toMatchObject({ state: "FAILURE", code: 14958 });
  });

  it("refuses a returnTimeoutSeconds outside 0–120 with a typed error, before changing anything", async () => {
    await storageFixture(s.url, "bsvm", "bvol");
    for (const returnTimeoutSeconds of [-1, 121]) {
      const r = await gql(
        s.url,
        `mutation($i: CreateQuotaRuleInput!) { createQuotaRule(input: $i) { __typename ${ERR} } }`,
        { i: { svm: { name: "bsvm" }, volume: { name: "bvol" }, type: "TREE", qtreeName: "qt1", returnTimeoutSeconds } },
      );
      expect(r.data.createQuotaRule).toMatchObject({
        __typename: "InvalidInputError",
        code: "INVALID_INPUT",
        ontapCode: "262185",
        target: "returnTimeoutSeconds",
        message: 'Invalid value for field "returnTimeoutSeconds": expected an integer from 0 to 120.',
      });
    }
    expect((await rest("/api/storage/quota/rules?svm.name=bsvm")).body.num_records).toBe(0);
  });
});

describe("volumes and qtrees: REST's PATCH and DELETE, with their jobs", () => {
  const ERR = "... on Error { __typename message code ontapCode target }";
  const ended = (uuid: string) =>
    waitFor(async () => {
      const job = (await gql(s.url, `query($u: ID!) { job(id: $u) { state } }`, { u: uuid })).data.job;
      return job?.state === "SUCCESS" || job?.state === "FAILURE" ? job.state : null;
    }, 10_000, "job ended");

  it("reads a volume by uuid; an unknown one is null", async () => {
    const { volumeUuid } = await storageFixture(s.url, "vsvm", "vvol");
    const r = await gql(s.url, `query($u: ID!) { volume(id: $u) { name svm { name } quotaState } }`, { u: volumeUuid });
    expect(r.data.volume).toEqual({ name: "vvol", svm: { name: "vsvm" }, quotaState: "OFF" });
    const gone = await gql(s.url, `{ volume(id: "nope") { name } }`);
    expect([gone.errors, gone.data.volume]).toEqual([undefined, null]);
  });

  it("resizes a volume (job, returnTimeoutSeconds) with REST's size rule", async () => {
    const { volumeUuid } = await storageFixture(s.url, "zsvm", "zvol");
    const RESIZE = `mutation($u: ID!, $size: BigInt!) { resizeVolume(input: { id: $u, sizeBytes: $size, returnTimeoutSeconds: 0 }) { ... on ResizeVolumePayload { volume { sizeBytes } job { uuid state } } ${ERR} } }`;
    const r = await gql(s.url, RESIZE, { u: volumeUuid, size: 64 * 1024 * 1024 });
    expect(r.data.resizeVolume).toMatchObject({ volume: { sizeBytes: 64 * 1024 * 1024 }, job: { state: "QUEUED" } }); // the size is set at once
    expect(await ended(r.data.resizeVolume.job.uuid)).toBe("SUCCESS");
    expect((await rest(`/api/storage/volumes/${volumeUuid}?fields=size`)).body.size).toBe(64 * 1024 * 1024);
    const small = await gql(s.url, RESIZE, { u: volumeUuid, size: 1024 });
    expect(small.data.resizeVolume).toMatchObject({ __typename: "InvalidInputError", target: "sizeBytes", message: "Volume size must be at least 20MB." });
  });

  it("changes a qtree's security style and permissions in its job; bad permissions are a typed error", async () => {
    const { volumeUuid } = await storageFixture(s.url, "qsvm", "qvol");
    const qt = (await rest(`/api/storage/qtrees?volume.uuid=${volumeUuid}&name=qt1`)).body.records[0];
    const UPDATE = `mutation($id: ID!, $p: Int, $t: Int) { updateQtree(input: { id: $id, securityStyle: NTFS, unixPermissions: $p, returnTimeoutSeconds: $t }) {
      ... on UpdateQtreePayload { qtree { securityStyle unixPermissions } job { uuid state } } ${ERR} } }`;
    const id = `${volumeUuid}/${qt.id}`; // the qtree's domain id, as REST's path addresses it
    const started = await gql(s.url, UPDATE, { id, p: 750, t: 0 });
    expect(started.data.updateQtree.job.state).toBe("QUEUED");
    expect(await ended(started.data.updateQtree.job.uuid)).toBe("SUCCESS");
    expect((await rest(`/api/storage/qtrees/${volumeUuid}/${qt.id}?fields=security_style,unix_permissions`)).body).toMatchObject({ security_style: "ntfs", unix_permissions: 750 });
    const waited = await gql(s.url, UPDATE, { id, p: 755 });
    expect(waited.data.updateQtree).toMatchObject({ qtree: { securityStyle: "NTFS", unixPermissions: 755 }, job: { state: "SUCCESS" } });
    const bad = await gql(s.url, UPDATE, { id, p: 9999 });
    expect(bad.data.updateQtree).toMatchObject({ __typename: "InvalidInputError", target: "unixPermissions" });
  });

  it("deletes a volume with its qtrees and rules, as REST's DELETE", async () => {
    const { volumeUuid } = await storageFixture(s.url, "dsvm", "dvol");
    await call(s.url, "POST", "/api/storage/quota/rules?return_timeout=30", { "svm.name": "dsvm", "volume.name": "dvol", type: "tree", "qtree.name": "qt1" });
    const DELETE = `mutation($u: ID!) { deleteVolume(input: { id: $u }) { __typename ... on DeleteVolumePayload { deletedIds } ${ERR} } }`;
    expect((await gql(s.url, DELETE, { u: volumeUuid })).data.deleteVolume.deletedIds).toHaveLength(1 + 2 + 2); // the volume, qt1, qt2, the rule and the default tree rule it brought
    expect((await rest(`/api/storage/volumes/${volumeUuid}`)).status).toBe(404);
    expect((await rest("/api/storage/quota/rules?svm.name=dsvm")).body.num_records).toBe(0);
    expect((await gql(s.url, DELETE, { u: volumeUuid })).data.deleteVolume).toMatchObject({ __typename: "NotFoundError", code: "NOT_FOUND", ontapCode: "4" });
  });
});
