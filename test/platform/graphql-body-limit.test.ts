import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, expect, it } from "vitest";
import { gql, startTestServer, type TestServer } from "../support/server.js";

/** GraphQL request bodies are held to PATCHBAY_BODY_LIMIT as REST's JSON bodies are (uploads: see graphql-files). */
let s: TestServer;
beforeAll(async () => void (s = await startTestServer({ bodyLimit: "4kb" })));
afterAll(() => s?.close());

const post = async (body: BodyInit, headers: Record<string, string> = {}) => {
  const res = await fetch(`${s.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
  return { status: res.status, body: (await res.json()) as any };
};
const request = (padding: number) => JSON.stringify({ query: "query($pad: String) { emulationVersion symbols(theme: $pad) { edges { node { symbolId } } } }", variables: { pad: "x".repeat(padding) } });
const answer = { data: { emulationVersion: "2.2.59", symbols: { edges: [] } } };

it("answers a body within the limit, and refuses a larger one with a 413 GraphQL error before reading it all", async () => {
  expect((await post(request(3000))).body.data).toEqual(answer.data);
  const big = await post(request(10 * 1024 * 1024));
  expect(big.status).toBe(413);
  expect(big.body).toEqual({ errors: [{ message: "request entity too large", extensions: { code: "REQUEST_ENTITY_TOO_LARGE" } }] });
  expect((await gql(s.url, "{ emulationVersion }")).data).toEqual({ emulationVersion: "2.2.59" });
});

it("holds a compressed body to the limit once decompressed", async () => {
  const small = await post(new Uint8Array(gzipSync(request(3000))), { "content-encoding": "gzip" });
  expect(small.body.data).toEqual(answer.data);
  const bomb = gzipSync(request(20 * 1024 * 1024)); // ~20 KB on the wire, 20 MB inflated
  expect(bomb.length).toBeLessThan(64 * 1024);
  expect((await post(new Uint8Array(bomb), { "content-encoding": "gzip" })).status).toBe(413);
  const unknown = await post("{}", { "content-encoding": "br-unknown" });
  expect(unknown.status).toBe(415);
  expect(unknown.body.errors[0].extensions.code).toBe("BAD_REQUEST");
});
