import type { Job } from "../../generated/prisma-sqlite/client.js";

/** ISO 8601 with offset and no fractional seconds, as ONTAP formats times. */
export const ontapTime = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, "+00:00");

export const jobHref = (uuid: string) => `/api/cluster/jobs/${uuid}`;

export const jobLink = (job: Job) => ({ uuid: job.uuid, _links: { self: { href: jobHref(job.uuid) } } });

export function jobRecord(job: Job, svmName?: string) {
  return {
    uuid: job.uuid,
    description: job.description,
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
