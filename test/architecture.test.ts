/**
 * The rooms of src/ and what each may import: the stages before the accessories know nothing of
 * Homebridge (the Homebridge UI's plugin server runs the session module in a process of its own), and
 * data flows one way, so no stage imports a later one.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** Each room, with the rooms it may import from (besides itself and the shared top-level files). */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  cloud: [],
  config: [],
  session: ['cloud'],
  connection: ['cloud', 'session'],
  push: ['cloud', 'session'],
  accessories: ['config'],
};

/** Top-level files every room may use: they import no room themselves. */
const SHARED = ['log.ts', 'json.ts', 'device-id.ts', 'secure-url.ts', 'settings.ts'];

const HOMEBRIDGE = /^(homebridge|@homebridge\/)/;

interface Import {
  file: string;
  specifier: string;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'/gms)].map((match) => ({ file, specifier: match[1] }));
}

function filesIn(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesIn(join(folder, entry.name)) : entry.name.endsWith('.ts') ? [join(folder, entry.name)] : [],
  );
}

/** The room a resolved path lies in, or the shared file's name. */
function roomOf(path: string): string {
  const [first] = relative(SRC, path).split('/');
  return first.endsWith('.js') ? first.replace(/\.js$/, '.ts') : first;
}

describe('the rooms of src/', () => {
  it.each(Object.entries(ALLOWED))('%s imports only from the rooms before it, and nothing of Homebridge', (room, allowed) => {
    const imports = filesIn(join(SRC, room)).flatMap(importsOf);
    expect(imports.length).toBeGreaterThan(0);

    const homebridge = imports.filter(({ specifier }) => HOMEBRIDGE.test(specifier));
    const permitted = new Set([room, ...allowed, ...SHARED]);
    const later = imports
      .filter(({ specifier }) => specifier.startsWith('.'))
      .map(({ file, specifier }) => ({ file: relative(SRC, file), target: roomOf(resolve(dirname(file), specifier)) }))
      .filter(({ target }) => !permitted.has(target));

    expect(room === 'accessories' ? [] : homebridge).toEqual([]);
    expect(later).toEqual([]);
  });

  it('keeps the shared top-level files free of rooms and of Homebridge', () => {
    const imports = SHARED.flatMap((name) => importsOf(join(SRC, name)));
    expect(imports.filter(({ specifier }) => specifier.startsWith('.') || HOMEBRIDGE.test(specifier))).toEqual([]);
  });

  it('has no source file over 250 lines', () => {
    const long = filesIn(SRC)
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 250);
    expect(long).toEqual([]);
  });
});
