import path from "node:path";
import { defineConfig } from "prisma/config";

// Offline: Prisma 7's CLI would download its native schema engine. Point it at the
// wasm-backed stand-in (scripts/schema-engine-shim.mjs) unless the caller chose a real binary.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.resolve(import.meta.dirname, "scripts/schema-engine-shim.mjs");

const url = process.env.DATABASE_URL ?? "file:./data/patchbay.db";
const provider = /^postgres(ql)?:\/\//.test(url) ? "postgresql" : "sqlite";

export default defineConfig({
  schema: `prisma/${provider}/schema.prisma`,
  migrations: { path: `prisma/${provider}/migrations` },
  datasource: { url, shadowDatabaseUrl: process.env.SHADOW_DATABASE_URL },
});
