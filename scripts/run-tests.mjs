// `npm test`: jest with Node's VM modules (the suite is ESM). The plugin needs Node 22 or later
// (Homebridge 2 refuses older ones; the receiver relies on JSON.parse source-text access), so on an
// older Node the same command runs under Node 22 from the npm registry, as `npm start` does.
import { spawnSync } from 'node:child_process';
import process from 'node:process';

const MINIMUM_MAJOR = 22;
const jest = ['--experimental-vm-modules', 'node_modules/jest/bin/jest.js', ...process.argv.slice(2)];
const major = Number(process.versions.node.split('.')[0]);

let result;
if (major >= MINIMUM_MAJOR) {
  result = spawnSync(process.execPath, jest, { stdio: 'inherit' });
} else {
  process.stderr.write(
    `Node ${process.versions.node} is older than the plugin supports: running the tests under Node ${MINIMUM_MAJOR} from the npm registry.\n`,
  );
  result = spawnSync('npx', ['-y', '-p', `node@${MINIMUM_MAJOR}`, '--', 'node', ...jest], { stdio: 'inherit' });
}
process.exit(result.status ?? 1);
