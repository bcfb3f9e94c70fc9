import { NotFoundError } from "../../platform/core/errors.js";
import { domainId } from "../../platform/graphql/global-id.js";

/**
 * Where a project's item (a node, a link, a drawing, a snapshot) is, from its id alone: GraphQL names such an item by its global
 * id (or its GNS3 id) without its project; the operations take both. NotFoundError when there is none.
 */
export async function itemAddress(
  id: string | number,
  typename: string,
  find: (id: string) => Promise<{ projectId: string } | null>,
  noun = typename,
): Promise<{ projectId: string; id: string }> {
  const itemId = domainId(id, typename, "id");
  const item = await find(itemId);
  // GNS3's message, with its noun for the thing (a node is an EmulatedNode here).
  if (!item) throw new NotFoundError(`${noun} ID ${itemId} doesn't exist`);
  return { projectId: item.projectId, id: itemId };
}
