/**
 * Preloaded (`node --import`) into a Homebridge 2 with Matter on, instead of its `-D` flag: it turns
 * on the debug lines of Homebridge and its plugins, but not matter.js's, which `-D` turns on too and
 * which log every Matter message, slowing the bridge down several times over.
 *
 * It uses the logger of the Homebridge it is preloaded into, found beside that Homebridge's
 * `bin/homebridge.js`, the script Node runs.
 *
 * Plain JavaScript: it runs inside the Node that runs Homebridge, where no TypeScript tooling is.
 */
import process from 'node:process';
import { pathToFileURL, URL } from 'node:url';

const { Logger } = await import(new URL('../dist/logger.js', pathToFileURL(process.argv[1])).href);
Logger.setDebugEnabled(true);
