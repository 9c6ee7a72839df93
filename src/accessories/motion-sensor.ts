import type { API, Service } from 'homebridge';

/**
 * One MotionSensor service: the doorbell's main sensor, or one that only a kind of detection (a
 * person, say) turns on. MotionDetected turns true at a motion and false `timeoutS` seconds after
 * the latest one. The fault is the doorbell's, shown when it changes. State lives in memory and is
 * pushed, never fetched.
 */
export class MotionSensor {
  private detected = false;
  private endTimer?: NodeJS.Timeout;

  constructor(
    private readonly api: API,
    private readonly service: Service,
    private readonly timeoutS: number,
    private readonly statusFault: () => number,
    /** `since`: when the change's cause happened, on `performance.now()`'s clock. */
    private readonly onChange: (detected: boolean, since: number) => void,
  ) {
    const { MotionDetected, StatusFault } = api.hap.Characteristic;
    service.getCharacteristic(MotionDetected).onGet(() => this.detected);
    service.getCharacteristic(StatusFault).onGet(() => this.statusFault());
    // The cache may hold the last session's values; this session knows nothing yet.
    service.updateCharacteristic(MotionDetected, false);
    this.showFault();
  }

  /** Motion, from an alert accepted at `since`; a motion before the timeout ran out extends it. */
  detect(since: number): void {
    clearTimeout(this.endTimer);
    this.endTimer = setTimeout(() => this.set(false, performance.now()), this.timeoutS * 1000);
    // Homebridge's own servers keep the process alive while it runs; a pending end of motion must not
    // hold it open on exit. dispose() clears the timer on an orderly shutdown.
    this.endTimer.unref();
    this.set(true, since);
  }

  /** No motion, at once (motion alerts were turned off). */
  clear(): void {
    clearTimeout(this.endTimer);
    if (this.detected) {
      this.set(false, performance.now());
    }
  }

  showFault(): void {
    this.service.updateCharacteristic(this.api.hap.Characteristic.StatusFault, this.statusFault());
  }

  dispose(): void {
    clearTimeout(this.endTimer);
  }

  private set(detected: boolean, since: number): void {
    this.detected = detected;
    this.service.updateCharacteristic(this.api.hap.Characteristic.MotionDetected, detected);
    this.onChange(detected, since);
  }
}
