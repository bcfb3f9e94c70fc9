import type { AppContext } from "../../platform/context.js";
import { LOCAL_ID } from "../computes/model.js";
import { forwardToCompute } from "../computes/forwarding.js";
import { dockerEngine } from "../runtime/drivers/docker.js";

/**
 * The docker images of a compute (compat-docker §1.1; the GUI's Docker template wizard and node dialog list them):
 * this host's dockerd for the local compute, another compute's own `/v2/compute/docker/images` otherwise. 409 when
 * that dockerd does not answer.
 */
export async function dockerImages(ctx: AppContext, computeId: string): Promise<{ image: string }[]> {
  if (computeId === LOCAL_ID) return dockerEngine.images();
  const list = await forwardToCompute(ctx, computeId, "GET", "docker", "images");
  return Array.isArray(list) ? [...list].sort((a, b) => String(a?.image ?? "").localeCompare(String(b?.image ?? ""))) : [];
}

/** This compute's own list (the compute route). */
export const localDockerImages = () => dockerEngine.images();
