import type { AppContext } from "../platform/context.js";
import { createQtree } from "./qtrees/operations.js";
import { createSvm } from "./svms/operations.js";
import { createVolume } from "./volumes/operations.js";

/**
 * The storage demo fixture (`--demo` / `npm run demo`): SVM `vs0`, volume `vol1` (quota off) with qtrees
 * `qt1` and `qt2` — enough to try every quota rule call at once. Idempotent: existing objects are kept.
 */
export async function loadDemoFixture(ctx: AppContext): Promise<void> {
  const svm = (await ctx.db.svm.findUnique({ where: { name: "vs0" } })) ?? (await createSvm(ctx, { name: "vs0" }));
  const volume =
    (await ctx.db.volume.findFirst({ where: { svmUuid: svm.uuid, name: "vol1" } })) ??
    (await createVolume(ctx, { svm: { uuid: svm.uuid }, name: "vol1", size: 100n * 1024n ** 3n }));
  for (const name of ["qt1", "qt2"]) {
    if (!(await ctx.db.qtree.findFirst({ where: { volumeUuid: volume.uuid, name } }))) {
      await createQtree(ctx, { svm: { uuid: svm.uuid }, volume: { uuid: volume.uuid }, name });
    }
  }
  ctx.log.info("demo fixture loaded", { svm: "vs0", volume: "vol1", qtrees: ["qt1", "qt2"] });
}
