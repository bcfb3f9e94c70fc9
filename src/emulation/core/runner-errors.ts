import { UnavailableError, UpstreamError } from "../../platform/core/errors.js";

/**
 * What an operation adds to its own errors when the instance that runs the project carries it out (onRunner, release):
 * that instance's silence (UnavailableError) and a failure of its own that is no domain error (UpstreamError, as the
 * command channel maps it); its domain errors come back as they were. Here, not beside the runners, so that the
 * GraphQL adapters of links and projects can list it without their folders depending on instances/.
 */
export const RUNNER_ERRORS = [UnavailableError, UpstreamError];
