/**
 * Domain errors: operations throw these; each adapter maps them to its own shape (ONTAP envelope, GNS3
 * {"message","status"}, typed GraphQL results). `code`/`target` carry API-specific detail when an operation
 * knows it (e.g. ONTAP error codes); adapters fall back to defaults.
 */
export interface ErrorDetail {
  code?: string;
  target?: string;
  /** Why, finer than the error's class, for programs to branch on (GraphQL `Error.code`); the class's own otherwise. */
  reason?: ErrorReason;
}

/**
 * The reasons a client may branch on. One rule for every create that takes a client-chosen id or a unique name:
 * a taken one is ALREADY_EXISTS; one for every delete: what does not exist is NOT_FOUND (never a silent success).
 */
export const ERROR_REASONS = [
  "invalid_input",
  "too_large",
  "not_found",
  "conflict",
  "already_exists",
  "duplicate_rule",
  "port_in_use",
  "project_closed",
  "forbidden",
  "unavailable",
  "upstream_failed",
] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

export abstract class DomainError extends Error {
  abstract readonly status: number;
  constructor(
    message: string,
    readonly detail: ErrorDetail = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Bad input: wrong type, unknown field, missing field, impossible combination. */
export class InvalidInputError extends DomainError {
  readonly status: number = 400;
}
export class NotFoundError extends DomainError {
  readonly status = 404;
}
/** The request is valid but the current state forbids it (duplicate, busy, in use, missing prerequisite). */
export class ConflictError extends DomainError {
  readonly status = 409;
}
/**
 * A unique constraint refused a write (Prisma P2002): the object already exists, typically created by a concurrent
 * request that passed the same pre-check. Thrown by the database client for every query (src/platform/db/client.ts),
 * so no adapter ever answers 500 for it. `code` stays "P2002" for callers that retry on a collision.
 */
export class UniqueViolationError extends ConflictError {
  readonly code = "P2002";
}
/**
 * The row a write addressed was gone (Prisma P2025): deleted by a concurrent request between the operation's check
 * and its write. Thrown by the database client like UniqueViolationError; `code` stays "P2025".
 */
export class RecordGoneError extends NotFoundError {
  readonly code = "P2025";
}
export class ForbiddenError extends DomainError {
  readonly status = 403;
}
/**
 * A body or upload beyond its configured limit: an invalid input (GraphQL answers InvalidInputError, code TOO_LARGE,
 * wherever a mutation lists it) that REST answers with 413.
 */
export class PayloadTooLargeError extends InvalidInputError {
  override readonly status = 413;
}
/** A dependency (remote compute, emulator) did not answer in time. */
export class UnavailableError extends DomainError {
  readonly status = 504;
}
/** A dependency (remote compute) failed with an internal error of its own. */
export class UpstreamError extends DomainError {
  readonly status = 500;
}

/** The reason a client branches on: the one the operation gave, else its class's. */
export function reasonOf(err: DomainError): ErrorReason {
  if (err.detail.reason) return err.detail.reason;
  if (err instanceof UniqueViolationError) return "already_exists";
  if (err instanceof NotFoundError) return "not_found";
  if (err instanceof ConflictError) return "conflict";
  if (err instanceof ForbiddenError) return "forbidden";
  if (err instanceof PayloadTooLargeError) return "too_large";
  if (err instanceof UnavailableError) return "unavailable";
  if (err instanceof UpstreamError) return "upstream_failed";
  return "invalid_input";
}
