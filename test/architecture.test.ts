/**
 * The rooms of src/ and what each may import: the stages before the accessories know nothing of
 * Homebridge (the Homebridge UI's plugin server runs the session module in a process of its own), and
 * data flows one way, so no stage imports a later one. And every file of the project stands on its
 * own: it cites nothing a reader of the repository cannot open.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SRC = join(ROOT, 'src');

/** Each room, with the rooms it may import from (besides itself and the shared top-level files). */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  values: [],
  cloud: [],
  config: [],
  session: ['cloud'],
  connection: ['cloud', 'session'],
  push: ['cloud', 'session'],
  accessories: ['config'],
  alerts: ['cloud', 'session', 'connection'],
  status: ['cloud', 'session', 'connection', 'alerts'],
  matter: ['config', 'accessories'],
};

/**
 * Rooms a room may take types from but no code: the settings' types, derived from config.schema.json,
 * are the one statement of their shape (the account for the session, the relay settings for the relay
 * stream), while those folders stay free of the config check (Ajv, the schema) at run time.
 */
const TYPES_FROM: Readonly<Record<string, readonly string[]>> = {
  session: ['config'],
  push: ['config'],
};

/**
 * What every room may use: the small checks on values from outside (`values/`) and two top-level
 * files. None of them imports a room.
 */
const SHARED = ['values', 'log.ts', 'settings.ts'];

/**
 * The top level of src/: registration, the two names, the platform, the logger, the platform's way to
 * the Matter room, which loads that room only on a bridge with Matter on, its way to the Doorbell
 * Alerts sensor, which joins the alerts rule to HomeKit and Matter, and what a notification does to
 * the accessories and the status.
 */
const TOP_LEVEL = ['alerts-link.ts', 'index.ts', 'log.ts', 'matter-link.ts', 'notifications.ts', 'platform.ts', 'settings.ts'];

const HOMEBRIDGE = /^(homebridge|@homebridge\/)/;

interface Import {
  file: string;
  specifier: string;
  /** `import type`: erased at run time. */
  typeOnly: boolean;
}

function importsOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^(?:import|export)\b(\s+type\b)?[^;]*?\bfrom\s+'([^']+)'/gms)].map((match) => ({
    file,
    specifier: match[2],
    typeOnly: match[1] !== undefined,
  }));
}

function filesIn(folder: string, wanted = (name: string) => name.endsWith('.ts')): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) {
      return entry.name === 'node_modules' ? [] : filesIn(join(folder, entry.name), wanted);
    }
    return wanted(entry.name) ? [join(folder, entry.name)] : [];
  });
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
    const typesFrom = new Set(TYPES_FROM[room] ?? []);
    const later = imports
      .filter(({ specifier }) => specifier.startsWith('.'))
      .map(({ file, specifier, typeOnly }) => ({ file: relative(SRC, file), target: roomOf(resolve(dirname(file), specifier)), typeOnly }))
      .filter(({ target, typeOnly }) => !permitted.has(target) && !(typeOnly && typesFrom.has(target)));

    expect(['accessories', 'matter'].includes(room) ? [] : homebridge).toEqual([]);
    expect(later).toEqual([]);
  });

  it('keeps the shared top-level files free of rooms and of Homebridge', () => {
    const imports = ['log.ts', 'settings.ts'].flatMap((name) => importsOf(join(SRC, name)));
    expect(imports.filter(({ specifier }) => specifier.startsWith('.') || HOMEBRIDGE.test(specifier))).toEqual([]);
  });

  it('keeps the top level to registration, the names, the platform, the logger, the way to Matter and the notifications', () => {
    const files = readdirSync(SRC, { withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);
    expect(files.sort()).toEqual(TOP_LEVEL);
  });

  it('has no import circle: each file can be read after the files it imports', async () => {
    // madge reads the imports as TypeScript resolves them (`./file.js` is `./file.ts`), type-only ones included.
    const graph = await madge(SRC, { fileExtensions: ['ts'], tsConfig: join(ROOT, 'tsconfig.json') });
    expect(graph.warnings().skipped).toEqual([]);
    expect(Object.keys(graph.obj()).length).toBeGreaterThan(50);
    expect(graph.circular()).toEqual([]);
  });

  it('has no source file over 250 lines', () => {
    const long = filesIn(SRC)
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 250);
    expect(long).toEqual([]);
  });
});

describe('the demo', () => {
  it('imports nothing from the tests: what the demo and the tests share lives in scripts/lib/', () => {
    const demoFiles = [join(ROOT, 'scripts', 'demo.ts'), join(ROOT, 'scripts', 'motion.ts'), ...filesIn(join(ROOT, 'scripts', 'lib'))];
    const fromTests = demoFiles
      .flatMap(importsOf)
      .filter(({ file, specifier }) => specifier.startsWith('.') && relative(ROOT, resolve(dirname(file), specifier)).startsWith('test/'))
      .map(({ file, specifier }) => `${relative(ROOT, file)} imports ${specifier}`);
    expect(demoFiles.length).toBeGreaterThan(2);
    expect(fromTests).toEqual([]);
  });
});

/** The project's own folders; docs/ is where a citation should point. */
const PROJECT_FOLDERS = ['src', 'homebridge-ui', 'simulator', 'scripts', 'test'];

const TEXT_FILE = (name: string) => /\.(ts|mjs|js|json|md|html|css)$/.test(name);

/**
 * How a citation of a document outside the repository reads: a product spec by name, a numbered
 * section (an RFC's is public, and allowed), a seed file. Written so that none matches its own
 * source text (nor the plain searches a reviewer would run), since this file is checked too.
 */
const OUTSIDE_CITATIONS: ReadonlyArray<[string, RegExp]> = [
  ['a product spec', /\bS[P]EC\b/],
  ['a numbered section that is not an RFC\'s', /(?<!RFC \d+ )§\s?\d/],
  ['a seed document', /\bthe\sseed\s(?:says|requires|asks|specifies|documents?)\b|\bseed[s]\//],
];

describe('the project\'s files', () => {
  it('cite no document outside the repository', () => {
    const files = PROJECT_FOLDERS.flatMap((folder) => filesIn(join(ROOT, folder), TEXT_FILE));
    expect(files).toContain(fileURLToPath(import.meta.url));

    const citations = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) => OUTSIDE_CITATIONS.filter(([, pattern]) => pattern.test(line)).map(([what]) => `${relative(ROOT, file)}:${index + 1} cites ${what}`)),
    );
    expect(citations).toEqual([]);
  });
});
