import type { Job } from "../../generated/prisma-sqlite/client.js";
import { JOB_RESOURCES, type JobResource } from "./operations.js";

/** ISO 8601 with offset and no fractional seconds, as ONTAP formats times. */
export const ontapTime = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "+00:00");

export const jobHref = (uuid: string) => `/api/cluster/jobs/${uuid}`;

export const jobLink = (job: Job) => ({ uuid: job.uuid, _links: { self: { href: jobHref(job.uuid) } } });

const COLLECTION: Record<JobResource, string> = {
  svm: "/api/svm/svms",
  volume: "/api/storage/volumes",
  qtree: "/api/storage/qtrees",
  "quota rule": "/api/storage/quota/rules",
};
const METHOD = { create: "POST", update: "PATCH", delete: "DELETE" } as const;
const SUBJECT = new RegExp(`^(create|update|delete) (${JOB_RESOURCES.join("|")})(?: (\\S+))?$`);

/**
 * ONTAP describes a job by the request that started it ("PATCH /api/storage/quota/rules/<uuid>"); clients show it.
 * Jobs are described in domain terms ("update quota rule <uuid>", see describeJob); other text passes unchanged.
 */
export function ontapJobDescription(description: string): string {
  const m = SUBJECT.exec(description);
  if (!m) return description;
  const [, action, resource, key] = m as unknown as [string, keyof typeof METHOD, JobResource, string | undefined];
  return `${METHOD[action]} ${COLLECTION[resource]}${action !== "create" && key ? `/${key}` : ""}`;
}

export function jobRecord(job: Job, svmName?: string) {
  return {
    uuid: job.uuid,
    description: ontapJobDescription(job.description),
    state: job.state,
    message: job.message,
    code: job.code,
    ...(job.startTime ? { start_time: ontapTime(job.startTime) } : {}),
    ...(job.endTime ? { end_time: ontapTime(job.endTime) } : {}),
    ...(job.errorJson ? { error: JSON.parse(job.errorJson) } : {}),
    ...(job.svmUuid ? { svm: { uuid: job.svmUuid, ...(svmName ? { name: svmName } : {}), _links: { self: { href: `/api/svm/svms/${job.svmUuid}` } } } } : {}),
    _links: { self: { href: jobHref(job.uuid) } },
  };
}
