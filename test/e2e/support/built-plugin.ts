import { describe } from '@jest/globals';
import { existsSync } from 'node:fs';
import { PLUGIN_ENTRY } from '../../../scripts/lib/paths.js';

/**
 * A working tree may not be built yet, so tests of the plugin itself skip without `dist/`; CI builds
 * before testing, so there a missing build fails them instead of passing unnoticed.
 */
const runsPlugin = existsSync(PLUGIN_ENTRY) || process.env.CI !== undefined;

export const describeWithBuiltPlugin = runsPlugin ? describe : describe.skip;
