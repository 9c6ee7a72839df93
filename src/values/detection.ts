/**
 * What a motion alert says the doorbell saw, beyond plain motion. The config lists the detections
 * that get a motion sensor of their own; the notification parser reads them from the pushed alert.
 */
export const DETECTIONS = ['person', 'vehicle', 'other'] as const;

export type Detection = (typeof DETECTIONS)[number];
