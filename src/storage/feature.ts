import type { Feature } from "../platform/feature.js";

export const storageFeature: Feature = {
  name: "storage",
  mount() {},
};
