// `npm test` and its tiers: jest with Node's VM modules (the suite is ESM). `node scripts/run-tests.mjs
// [unit|e2e|smoke] [jest options and paths]` runs one tier, or every test without a tier name (the
// tiers are jest projects, see jest.config.js). The plugin needs Node 22 or later (Homebridge 2 refuses
// older ones; the receiver relies on JSON.parse source-text access), so on an older Node the same
// command runs under Node 22 from the npm registry, as `npm start` does. One fast-check seed for the
// whole run, printed first: `FC_SEED=<seed>` replays the run's properties.
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import process from 'node:process';

// `smoke` is the two together, as `npm run test:smoke` runs it; CI runs them apart, one beside the
// unit tier and one after the e2e tier, so that its two columns end together.
const TIERS = { unit: ['unit'], e2e: ['e2e'], smoke: ['smoke', 'older'], runs: ['smoke'], older: ['older'] };
const MINIMUM_MAJOR = 22;

const [first, ...rest] = process.argv.slice(2);
const projects = TIERS[first];
// jest's --selectProjects takes every word after it, paths too: it goes last.
const args = projects === undefined ? process.argv.slice(2) : [...rest, '--selectProjects', ...projects];
const jest = ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', ...args];
const major = Number(process.versions.node.split('.')[0]);
const seed = process.env.FC_SEED ?? String(randomInt(2 ** 31));
process.stdout.write(`fast-check seed ${seed} (FC_SEED=${seed} replays this run's properties)\n`);
const env = { ...process.env, FC_SEED: seed };

let result;
if (major >= MINIMUM_MAJOR) {
  result = spawnSync(process.execPath, jest, { stdio: 'inherit', env });
} else {
  process.stderr.write(
    `Node ${process.versions.node} is older than the plugin supports: running the tests under Node ${MINIMUM_MAJOR} from the npm registry.\n`,
  );
  result = spawnSync('npx', ['-y', '-p', `node@${MINIMUM_MAJOR}`, '--', 'node', ...jest], { stdio: 'inherit', env });
}
process.exit(result.status ?? 1);
