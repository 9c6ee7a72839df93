/**
 * What a motion alert says the doorbell saw, beyond plain motion. The config lists the detections
 * that get a motion sensor of their own; the notification parser reads them from the pushed alert.
 */
export const DETECTIONS = ['person', 'vehicle', 'package', 'animal', 'other'] as const;

export type Detection = (typeof DETECTIONS)[number];

/** What each detection's own sensor is called after the doorbell's name, in HomeKit and over Matter. */
export const DETECTION_SUFFIXES: Readonly<Record<Detection, string>> = {
  person: 'Person',
  vehicle: 'Vehicle',
  package: 'Package',
  animal: 'Animal',
  other: 'Other Motion',
};
