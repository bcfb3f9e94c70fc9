// Prints the GraphQL schema from the code. With --check, fails when the committed schema.graphql differs.
import { readFileSync, writeFileSync } from "node:fs";
import { printedSchema } from "../src/schema.js";

const printed = printedSchema();
if (process.argv.includes("--check")) {
  let committed = "";
  try {
    committed = readFileSync("schema.graphql", "utf8");
  } catch {}
  if (committed !== printed) {
    console.error("schema.graphql is out of date: run `npm run schema:print` and commit it");
    process.exit(1);
  }
  console.log("schema.graphql is up to date");
} else {
  writeFileSync("schema.graphql", printed);
  console.log("wrote schema.graphql");
}
