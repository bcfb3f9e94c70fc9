import type { EmulationEvent } from "../../src/emulation/core/events.js";
import type { AppContext } from "../../src/platform/context.js";
import type { BusEvent } from "../../src/platform/events.js";
import { toGns3Notification } from "./bundle.js";

/** A bus event as the GNS3 notification streams send it (the same wire edge), for tests that read the bus. */
export const asGns3 = (ctx: AppContext, e: BusEvent<EmulationEvent>) => toGns3Notification(ctx, e.data) as { action: string; event: any };
