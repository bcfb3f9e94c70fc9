import { builder } from "../../platform/graphql/builder.js";
import { DownloadUrlRef, downloadUrl, validForArg } from "../files/graphql.js";
import { CAPTURE_READ_ERRORS, linkCapture } from "./capture.js";

/** The capture of a link over GraphQL: a signed URL of GET …/links/{id}/pcap, which follows the capture live. */
builder.prismaObjectField("Link", "pcapUrl", (t) =>
  t.field({
    type: DownloadUrlRef,
    description:
      "A short-lived URL that streams the running capture as a pcap file (for Wireshark) from its start, then live until it stops; ConflictError when the link is not capturing. A stopped capture stays a project file: Project.fileUrl(path: \"project-files/captures/<captureFileName>\")",
    errors: { types: CAPTURE_READ_ERRORS },
    args: { validForSeconds: validForArg(t.arg) },
    resolve: async (l, args, ctx) => {
      await linkCapture(ctx, l.projectId, l.id);
      return downloadUrl(ctx, `/v2/projects/${l.projectId}/links/${l.id}/pcap`, args.validForSeconds);
    },
  }),
);
