import { createRequire } from 'node:module';
import type { AxiosStatic } from 'axios';

/**
 * axios, the plugin's one HTTP client, as its CommonJS build: the one Node's `require` resolves to.
 * One module, where its ES module build is some sixty, each with a record of its own that stays in
 * memory for the life of Homebridge (a third of a MiB, measured with `npm run bench`).
 */
export const axios = createRequire(import.meta.url)('axios') as AxiosStatic;
