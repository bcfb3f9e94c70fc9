/**
 * Domain errors: operations throw these; each adapter maps them to its own shape (ONTAP envelope, GNS3
 * {"message","status"}, typed GraphQL results). `code`/`target` carry API-specific detail when an operation
 * knows it (e.g. ONTAP error codes); adapters fall back to defaults.
 */
export interface ErrorDetail {
  code?: string;
  target?: string;
}

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
  readonly status = 400;
}
export class NotFoundError extends DomainError {
  readonly status = 404;
}
/** The request is valid but the current state forbids it (duplicate, busy, in use, missing prerequisite). */
export class ConflictError extends DomainError {
  readonly status = 409;
}
export class ForbiddenError extends DomainError {
  readonly status = 403;
}
/** A dependency (remote compute, emulator) did not answer in time. */
export class UnavailableError extends DomainError {
  readonly status = 504;
}
/** A dependency (remote compute) failed with an internal error of its own. */
export class UpstreamError extends DomainError {
  readonly status = 500;
}
