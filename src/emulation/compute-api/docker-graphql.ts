import { builder } from "../../platform/graphql/builder.js";
import { FORWARDED_ERRORS } from "../computes/forwarding.js";
import { arrayConnectionOptions, arrayPage } from "../../platform/graphql/connection.js";
import { computeIdArg } from "../computes/graphql.js";
import { dockerImages } from "./docker-images.js";

/** `GET /v2/computes/{compute_id}/docker/images` over GraphQL: the images a docker node or template can use. */
const DockerImageRef = builder.objectRef<{ image: string }>("DockerImage").implement({
  description: "A container image of a compute's dockerd (a repository tag, e.g. busybox:latest)",
  fields: (t) => ({ image: t.exposeString("image", { description: "The image's repository and tag, as a docker node's `image` names it" }) }),
});

builder.queryField("dockerImages", (t) =>
  t.connection(
    {
      type: DockerImageRef,
      description: "The docker images of a compute, sorted (ConflictError when its dockerd does not answer)",
      errors: { types: FORWARDED_ERRORS },
      args: { computeId: t.arg.id({ required: true, description: "The compute whose dockerd to ask (its global id, or its GNS3 compute_id)" }) },
      resolve: async (_r, args, ctx) => arrayPage(args, await dockerImages(ctx, computeIdArg(args.computeId))),
    },
    arrayConnectionOptions,
  ),
);
