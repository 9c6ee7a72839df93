/**
 * A clock for code that takes one (performance.now by default), remembering its latest reading. Code
 * that reads its clock for an action's time right before the action lets a test record the very
 * instant the code timed it from. A reading of the test's own would come a moment later, and on a busy
 * machine the process may pause for more than a millisecond in between: two actions would seem closer
 * together than the code placed them.
 */
export class ReadingClock {
  lastReading = 0;
  readonly now = (): number => (this.lastReading = performance.now());
}
