import type { Feature } from "./platform/feature.js";
import { emulationFeature } from "./emulation/feature.js";
import { storageFeature } from "./storage/feature.js";

/** Every product area, in mount order. */
export const features: Feature[] = [storageFeature, emulationFeature];
