import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, freshDatabaseUrl, gql, startTestServer, type TestServer } from "../support/server.js";

/** GNS3 2.2.59's `/v2/iou_license` (compat §2, transcript 50): the GUI's Preferences read it each time they open. */
const DEFAULTS = { iourc_content: "", license_check: true };
const IOURC = "[license]\ngns3-iouvm = 73635fd3b0a13ad0;\n";

describe("IOU license settings", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());

  it("GET answers GNS3's defaults on a new server", async () => {
    const r = await call(s.url, "GET", "/v2/iou_license");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/json");
    expect(r.headers.get("x-route")).toBe("/v2/iou_license");
    expect(r.body).toEqual(DEFAULTS);
  });

  it("PUT answers 201 with the stored settings, merges a partial body, and GET reads them back", async () => {
    const full = await call(s.url, "PUT", "/v2/iou_license", { iourc_content: IOURC, license_check: false });
    expect(full.status).toBe(201);
    expect(full.headers.get("content-type")).toBe("application/json");
    expect(full.body).toEqual({ iourc_content: IOURC, license_check: false });
    const partial = await call(s.url, "PUT", "/v2/iou_license", { license_check: true });
    expect([partial.status, partial.body]).toEqual([201, { iourc_content: IOURC, license_check: true }]);
    expect((await call(s.url, "PUT", "/v2/iou_license", {})).body).toEqual({ iourc_content: IOURC, license_check: true });
    expect((await call(s.url, "GET", "/v2/iou_license")).body).toEqual({ iourc_content: IOURC, license_check: true });
  });

  it("refuses unknown fields and wrong types with GNS3's 400 shape, storing nothing", async () => {
    const before = (await call(s.url, "GET", "/v2/iou_license")).body;
    const unknown = await call(s.url, "PUT", "/v2/iou_license", { iourc_content: "x", license: "y" });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ status: 400, method: "PUT", path: "/v2/iou_license", request: { iourc_content: "x", license: "y" } });
    expect(unknown.body.message).toMatch(/Additional properties are not allowed \('license' was unexpected\)/);
    for (const body of [{ license_check: "yes" }, { iourc_content: 42 }, { iourc_content: null }, { license_check: null }]) {
      const r = await call(s.url, "PUT", "/v2/iou_license", body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.message, JSON.stringify(body)).toMatch(/is not of type/);
    }
    expect((await call(s.url, "PUT", "/v2/iou_license", [])).status).toBe(400);
    expect((await call(s.url, "PUT", "/v2/iou_license?license_check=false", {})).status).toBe(400); // the query joins the body
    expect((await call(s.url, "GET", "/v2/iou_license")).body).toEqual(before);
  });

  it("keeps the settings across a restart on the same database", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-iou-"));
    const db = await freshDatabaseUrl(dataDir);
    try {
      const first = await startTestServer({}, { databaseUrl: db.url, dataDir });
      expect((await call(first.url, "PUT", "/v2/iou_license", { iourc_content: IOURC })).status).toBe(201);
      await first.close();
      const second = await startTestServer({}, { databaseUrl: db.url, dataDir });
      try {
        expect((await call(second.url, "GET", "/v2/iou_license")).body).toEqual({ iourc_content: IOURC, license_check: true });
      } finally {
        await second.close();
      }
    } finally {
      await db.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("offers the same settings over GraphQL: a query, and a mutation that merges and validates", async () => {
    await call(s.url, "PUT", "/v2/iou_license", DEFAULTS);
    const read = await gql(s.url, `{ iouLicense { iourcContent licenseCheck } }`);
    expect(read).toEqual({ data: { iouLicense: { iourcContent: "", licenseCheck: true } }, extensions: { cost: expect.objectContaining({ limit: 100_000 }) } });

    const UPDATE = `mutation($input: UpdateIouLicenseInput!) { updateIouLicense(input: $input) {
      __typename ... on UpdateIouLicensePayload { iouLicense { iourcContent licenseCheck } } ... on Error { message } } }`;
    const set = await gql(s.url, UPDATE, { input: { iourcContent: IOURC } });
    expect(set.data?.updateIouLicense).toEqual({ __typename: "UpdateIouLicensePayload", iouLicense: { iourcContent: IOURC, licenseCheck: true } });
    const off = await gql(s.url, UPDATE, { input: { licenseCheck: false } });
    expect(off.data?.updateIouLicense.iouLicense).toEqual({ iourcContent: IOURC, licenseCheck: false });
    expect((await call(s.url, "GET", "/v2/iou_license")).body).toEqual({ iourc_content: IOURC, license_check: false });

    const bad = await gql(s.url, UPDATE, { input: { licenseCheck: null } });
    expect(bad.data?.updateIouLicense.__typename).toBe("InvalidInputError");
    expect((await call(s.url, "GET", "/v2/iou_license")).body).toEqual({ iourc_content: IOURC, license_check: false });
  });
});
