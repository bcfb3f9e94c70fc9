import { GraphQLError, Kind, type DocumentNode, type OperationDefinitionNode } from "graphql";
import type { Plugin } from "graphql-yoga";

/**
 * A document with several operations needs `operationName` (pasting a page of examples into a client sends
 * them all). Yoga's own answer, "Could not determine what operation to execute.", does not say so: this says
 * what the document holds and what to send. Runs before Yoga's check (user plugins come first).
 */
export function explainOperationChoice(document: DocumentNode, operationName: string | undefined | null): string | undefined {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const names = operations.map((o) => o.name?.value ?? "(anonymous)");
  if (operationName) {
    if (operations.some((o) => o.name?.value === operationName)) return undefined;
    return `The document has no operation named "${operationName}" (it has: ${names.join(", ")}).`;
  }
  if (operations.length <= 1) return undefined;
  const anonymous = names.includes("(anonymous)");
  return (
    `The document has ${operations.length} operations (${names.join(", ")}): send one operation, or ` +
    (anonymous ? "name each operation and choose one with operationName." : "choose one with operationName.")
  );
}

export function useOperationChoice(): Plugin<{ params?: { operationName?: string | null } }> {
  return {
    onParse({ context }) {
      return ({ result }) => {
        if (!result || result instanceof Error) return;
        const problem = explainOperationChoice(result as DocumentNode, context.params?.operationName);
        if (problem) throw new GraphQLError(problem, { extensions: { code: "OPERATION_RESOLUTION_FAILURE", http: { status: 400 } } });
      };
    },
  };
}
