/**
 * The matter.js controller's modules, loaded from the folder where the Homebridge under test is
 * installed: the controller must run the same `@matter/*` copy as the bridge's, never a second one.
 * Types come from the repository's own copy (the same API); values from the folder given.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as MainModule from '@matter/main';
import type * as TypesModule from '@matter/types';
import type * as ProtocolModule from '@matter/protocol';
import type * as ControllerModule from '@project-chip/matter.js';

export interface MatterPackages {
  main: typeof MainModule;
  types: typeof TypesModule;
  protocol: typeof ProtocolModule;
  controller: typeof ControllerModule;
}

/** `root` holds a `node_modules` with `@matter/*` and `@project-chip/matter.js`. */
export async function loadMatterPackages(root: string): Promise<MatterPackages> {
  // `@matter/main` first: importing it installs the Node.js platform (crypto, network, storage).
  const main = await importFrom<typeof MainModule>(root, '@matter/main');
  const [types, protocol, controller] = await Promise.all([
    importFrom<typeof TypesModule>(root, '@matter/types'),
    importFrom<typeof ProtocolModule>(root, '@matter/protocol'),
    importFrom<typeof ControllerModule>(root, '@project-chip/matter.js'),
  ]);
  return { main, types, protocol, controller };
}

interface PackageJson {
  exports: { '.': { import: string | { default: string } } };
}

/**
 * A package's ESM entry point as its `exports` name it. Import by file path: a bare name would
 * resolve from this file's folder, which is the repository's copy.
 */
async function importFrom<T>(root: string, name: string): Promise<T> {
  const folder = join(root, 'node_modules', name);
  const { exports } = JSON.parse(await readFile(join(folder, 'package.json'), 'utf8')) as PackageJson;
  const entry = exports['.'].import;
  return (await import(pathToFileURL(join(folder, typeof entry === 'string' ? entry : entry.default)).href)) as T;
}
