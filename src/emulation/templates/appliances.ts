/**
 * GET /v2/appliances: appliance files describe qemu, iou, dynamips and docker images to install, none of which this
 * server offers as appliances, so the catalogue is empty.
 */
export function listAppliances(): Record<string, unknown>[] {
  return [];
}
