import type { AppContext } from "../platform/context.js";

export async function loadDemoFixture(_ctx: AppContext): Promise<void> {}
