import { ConflictError, type DomainError } from "../core/errors.js";
import { builder } from "./builder.js";

/**
 * Every mutation has one shape: `name(input: NameInput!): NameResult!`, where `NameResult` is `NamePayload` — the
 * changed entity (for a delete: the ids of everything it removed, cascades included) — or one of the errors that
 * mutation can produce, each with a non-null `code`. Only the errors the operation can raise are listed, so a
 * client's exhaustive switch stays short.
 */
type ErrorClass = abstract new (...args: never[]) => DomainError;

/** The `errors` option of a mutation named `name` (camelCase) whose payload type is `<Name>Payload`. */
export const mutationErrors = (name: string, types: readonly ErrorClass[]) => ({
  types: types as unknown as (new (...args: unknown[]) => DomainError)[],
  union: {
    name: `${upperFirst(name)}Result`,
    description: `What \`${name}\` answers: \`${upperFirst(name)}Payload\` on success, or one of the errors it can produce`,
  },
});

/** A mutation's payload type: `<Name>Payload` with the given fields (the changed entity, the deleted ids …). */
export const payloadType = <Shape extends object>(
  name: string,
  description: string,
  fields: Parameters<ReturnType<typeof builder.objectRef<Shape>>["implement"]>[0]["fields"],
) => builder.objectRef<Shape>(`${upperFirst(name)}Payload`).implement({ description, fields });

/** The input of a mutation that acts on one entity named by its id: `<Name>Input { id: ID! }`. */
export const idInput = (name: string, description: string, idDescription: string) =>
  builder.inputType(`${upperFirst(name)}Input`, { description, fields: (t) => ({ id: t.id({ required: true, description: idDescription }) }) });

/**
 * A GraphQL create refuses a client-chosen id that is taken (ALREADY_EXISTS), as every create does; GNS3's REST
 * creates of projects, drawings and computes answer that object instead (gns3-server does), so the operations keep
 * doing so and the GraphQL face asks first. `noun` names the thing as GNS3's messages do.
 */
export async function refuseTakenId(noun: string, id: string | undefined, find: (id: string) => Promise<unknown>): Promise<void> {
  if (id !== undefined && (await find(id))) throw new ConflictError(`${noun} ID ${id} already exists`, { target: "id", reason: "already_exists" });
}

const upperFirst = (s: string) => s[0].toUpperCase() + s.slice(1);

/** A delete's payload: `<Name>Payload { deletedIds }`, the global ids of everything it removed, cascades included. */
export const deletedPayload = (name: string, what: string) =>
  payloadType<{ deletedIds: string[] }>(name, `What \`${name}\` removed`, (t) => ({
    deletedIds: t.idList({ description: `The global ids of ${what}`, resolve: (p) => p.deletedIds }),
  }));
