/**
 * Preloaded (`node --import`) into a Homebridge 2 with Matter on, instead of its `-D` flag: it shows
 * the debug lines of Homebridge and its plugins, but not those of Homebridge's Matter code (loggers
 * named `Matter/...`, which write a line for every state read and update a plugin makes) nor
 * matter.js's, which `-D` turns on too and which log every Matter message. Both slow the bridge down
 * (a log line to a pipe is a synchronous write) and would distort what the tests and the benchmark time.
 *
 * It patches the logger of the Homebridge it is preloaded into, found beside that Homebridge's
 * `bin/homebridge.js`, the script Node runs.
 *
 * Plain JavaScript: it runs inside the Node that runs Homebridge, where no TypeScript tooling is.
 */
import process from 'node:process';
import { pathToFileURL, URL } from 'node:url';

const { Logger } = await import(new URL('../dist/logger.js', pathToFileURL(process.argv[1])).href);
const log = Logger.prototype.log;

Logger.prototype.log = function logWithoutMatterDebug(level, ...rest) {
  const wanted = level === 'debug' && !Logger.debugEnabled && !String(this.prefix ?? '').startsWith('Matter/');
  if (!wanted) {
    return log.call(this, level, ...rest);
  }
  // Logger.log reads the switch when it is called: on for this one line, off again at once.
  Logger.debugEnabled = true;
  try {
    return log.call(this, level, ...rest);
  } finally {
    Logger.debugEnabled = false;
  }
};
