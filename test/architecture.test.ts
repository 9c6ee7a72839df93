/**
 * The folders of src/ and what each may import: the stages before the accessories know nothing of
 * Homebridge (the Homebridge UI's plugin server runs the session module in a process of its own), and
 * data flows one way, so no stage imports a later one. And every file of the project stands on its
 * own: it cites nothing a reader of the repository cannot open, and every file its comments name exists.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const SRC = join(ROOT, 'src');

/** Each folder, with the folders it may import from (besides itself and the shared top-level files). */
const ALLOWED: Readonly<Record<string, readonly string[]>> = {
  values: [],
  cloud: [],
  config: [],
  storage: [],
  session: ['cloud', 'storage'],
  connection: ['cloud', 'session'],
  push: ['cloud', 'session'],
  accessories: ['config'],
  status: ['cloud', 'connection', 'storage'],
  alerts: ['cloud', 'session', 'connection', 'status', 'accessories'],
  matter: ['config', 'accessories', 'alerts'],
};

/**
 * The folders whose files may import Homebridge: the accessories, the Matter devices, and the Doorbell
 * Alerts sensor with its link to HomeKit and Matter. The stages before them know nothing of it.
 */
const HOMEBRIDGE_FOLDERS = ['accessories', 'matter', 'alerts'];

/**
 * Folders a folder may take types from but no code: the settings' types, derived from config.schema.json,
 * are the one statement of their shape (the account for the session, the relay settings for the relay
 * stream), while those folders stay free of the config check (Ajv, the schema) at run time. The alerts'
 * link is handed the intake's drops and the relay's outages, and the platform's way to Matter, by the
 * platform, and runs none of their code.
 */
const TYPES_FROM: Readonly<Record<string, readonly string[]>> = {
  session: ['config'],
  push: ['config'],
  alerts: ['push', 'matter-link.ts'],
};

/**
 * What every folder may use: the small checks on values from outside (`values/`) and two top-level
 * files. None of them imports from a folder.
 */
const SHARED = ['values', 'log.ts', 'settings.ts'];

/**
 * The top level of src/: registration, the two names, the platform, the logger, the platform's way to
 * `matter/`, which loads it only on a bridge with Matter on, and what a notification does to the
 * accessories and the status. (The platform's way to the Doorbell Alerts sensor is in `alerts/`.)
 */
const TOP_LEVEL = ['index.ts', 'log.ts', 'matter-link.ts', 'notifications.ts', 'platform.ts', 'settings.ts'];

/**
 * How many files src/ holds, every one counted (the config check Ajv generates included): src/ is cut
 * by concept, a file per idea, not by a count of lines. Past these, look for a file of a few dozen
 * lines that only one other file imports: it usually belongs inside that one.
 */
const MAX_FILES = { src: 70, push: 12, top: 6 };

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

/** The folder a resolved path lies in, or the shared file's name. */
function folderOf(path: string): string {
  const [first] = relative(SRC, path).split('/');
  return first.endsWith('.js') ? first.replace(/\.js$/, '.ts') : first;
}

describe('the folders of src/', () => {
  it('has a rule for every folder', () => {
    const folders = readdirSync(SRC, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
    expect(folders.sort()).toEqual(Object.keys(ALLOWED).sort());
  });

  it.each(Object.entries(ALLOWED))('%s imports only from the folders before it, and nothing of Homebridge unless it shows accessories', (folder, allowed) => {
    const imports = filesIn(join(SRC, folder)).flatMap(importsOf);
    expect(imports.length).toBeGreaterThan(0);

    const homebridge = imports.filter(({ specifier }) => HOMEBRIDGE.test(specifier));
    const permitted = new Set([folder, ...allowed, ...SHARED]);
    const typesFrom = new Set(TYPES_FROM[folder] ?? []);
    const later = imports
      .filter(({ specifier }) => specifier.startsWith('.'))
      .map(({ file, specifier, typeOnly }) => ({ file: relative(SRC, file), target: folderOf(resolve(dirname(file), specifier)), typeOnly }))
      .filter(({ target, typeOnly }) => !permitted.has(target) && !(typeOnly && typesFrom.has(target)));

    expect(HOMEBRIDGE_FOLDERS.includes(folder) ? [] : homebridge).toEqual([]);
    expect(later).toEqual([]);
  });

  it('keeps the shared top-level files free of imports from the folders and of Homebridge', () => {
    const imports = ['log.ts', 'settings.ts'].flatMap((name) => importsOf(join(SRC, name)));
    expect(imports.filter(({ specifier }) => specifier.startsWith('.') || HOMEBRIDGE.test(specifier))).toEqual([]);
  });

  it('keeps the top level to registration, the names, the platform, the logger, the way to Matter and the notifications', () => {
    const files = readdirSync(SRC, { withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => entry.name);
    expect(files.sort()).toEqual(TOP_LEVEL);
  });

  it(`holds at most ${MAX_FILES.src} files, ${MAX_FILES.push} of them in push/ and ${MAX_FILES.top} at the top`, () => {
    const all = filesIn(SRC, () => true);
    const top = readdirSync(SRC, { withFileTypes: true }).filter((entry) => entry.isFile());
    expect(all).toContain(join(SRC, 'config', 'config-checks.generated.js'));
    expect(all.length).toBeLessThanOrEqual(MAX_FILES.src);
    expect(filesIn(join(SRC, 'push'), () => true).length).toBeLessThanOrEqual(MAX_FILES.push);
    expect(top.length).toBeLessThanOrEqual(MAX_FILES.top);
  });

  it('has no import circle: each file can be read after the files it imports', async () => {
    // madge reads the imports as TypeScript resolves them (a `.js` specifier is the `.ts` file beside it), type-only ones included.
    const graph = await madge(SRC, { fileExtensions: ['ts'], tsConfig: join(ROOT, 'tsconfig.json') });
    expect(graph.warnings().skipped).toEqual([]);
    expect(Object.keys(graph.obj()).length).toBeGreaterThan(50);
    expect(graph.circular()).toEqual([]);
  });

  // A guard against a file that grew two ideas, not a reason to cut one idea in pieces: past this, look
  // at the file and split it only where it holds two.
  it('has no source file over 500 lines', () => {
    const long = filesIn(SRC)
      .map((file) => ({ file: relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > 500);
    expect(long).toEqual([]);
  });
});

/**
 * The modules a file names by a relative path, in any form: static and dynamic imports, re-exports,
 * require, and `new URL(...)` (a file run as a child process is named so).
 */
function relativeModulesOf(file: string): Import[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom|\bimport|\brequire\s*\(|\bnew URL\s*\()\s*\(?\s*(['"`])(\.{1,2}\/[^'"`]*)\1/g)].map((match) => ({
    file,
    specifier: match[2],
    typeOnly: false,
  }));
}

describe('the scripts', () => {
  it('import nothing from the tests: what the scripts (the demo, the bench, the soak) and the tests share lives in scripts/lib/', () => {
    const scripts = filesIn(join(ROOT, 'scripts'), (name) => /\.(ts|mts|mjs|cjs|js)$/.test(name));
    const imports = scripts.flatMap(relativeModulesOf);
    const fromTests = imports
      .filter(({ file, specifier }) => relative(ROOT, resolve(dirname(file), specifier)).split(sep)[0] === 'test')
      .map(({ file, specifier }) => `${relative(ROOT, file)} imports ${specifier}`);

    // Every kind of script is read, and each way of naming a module is seen: the soak loads its week by a dynamic import.
    expect(scripts.map((file) => relative(ROOT, file))).toEqual(
      expect.arrayContaining(['scripts/demo.ts', 'scripts/run-tests.mjs', join('scripts', 'bench', 'main.ts'), join('scripts', 'soak', 'main.ts'), join('scripts', 'lib', 'platform-harness.ts')]),
    );
    expect(imports).toContainEqual(expect.objectContaining({ file: join(ROOT, 'scripts', 'soak', 'main.ts'), specifier: './week.js' }));
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

/** The folders a path in a comment may start with, read from the repository's root: `src/push/intake.ts`, `./docs/`. */
const ROOT_FOLDERS = [...PROJECT_FOLDERS, 'docs'];
const ROOTED_PATH = new RegExp(String.raw`(?<![\w./@#~:-])(?:\./)?((?:${ROOT_FOLDERS.join('|')})/[\w./*-]*)`, 'g');

/** A file's name with an extension the project's files have, bare or after folders: `push/intake.ts`, `../scripts/lib/poll.ts`. */
const FILE_PATH = /(?<![\w./@#~:-])((?:\.{1,2}\/)*(?:[\w-]+\/)*[\w*-][\w.*-]*\.(?:ts|mts|mjs|cjs|js|json|md|html|css))(?![\w/-])/g;

/** Bare names are checked only with these extensions: a bare `status.json` or `Node.js` is no file of the repository. */
const SOURCE_NAME = /\.(ts|mts|mjs|cjs)$/;

/** Every comment of a TypeScript or JavaScript file, with the line each starts on. */
function commentsOf(file: string): Array<{ line: number; text: string }> {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const found = new Map<number, string>();
  // Every token, punctuation too, so that a comment before a closing brace is found as well.
  const visit = (node: ts.Node): void => {
    for (const range of [...(ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []), ...(ts.getTrailingCommentRanges(text, node.getEnd()) ?? [])]) {
      found.set(range.pos, text.slice(range.pos, range.end));
    }
    node.getChildren(source).forEach(visit);
  };
  visit(source);
  return [...found].map(([pos, comment]) => ({ line: source.getLineAndCharacterOfPosition(pos).line + 1, text: comment }));
}

/** The project's folder names (`push`, `support`, `matter` ...): a path that starts with another is some other package's. */
function folderNames(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name !== 'node_modules')
    .flatMap((entry) => [entry.name, ...folderNames(join(folder, entry.name))]);
}

interface Project {
  folders: Set<string>;
  names: Set<string>;
}

/**
 * Whether a path that does not start with one of the root's folders exists: `./` and `../` from the
 * comment's folder; a path that starts with a folder name of the project's from the comment's folder,
 * one above it, or src/ (`push/intake.ts`); a bare source file's name anywhere in the project.
 * Undefined for anything else (a runtime file such as status.json, another package's path).
 */
function pathExists(file: string, path: string, { folders, names }: Project): boolean | undefined {
  if (/^\.{1,2}\//.test(path)) {
    return existsSync(resolve(dirname(file), path));
  }
  if (!path.includes('/')) {
    return SOURCE_NAME.test(path) ? names.has(path) : undefined;
  }
  if (!folders.has(path.split('/')[0])) {
    return undefined;
  }
  const above = relative(ROOT, dirname(file)).split(sep).map((_, index, parts) => join(ROOT, ...parts.slice(0, parts.length - index)));
  return [...above, ROOT, SRC].some((folder) => existsSync(join(folder, path)));
}

interface Citation {
  where: string;
  path: string;
  found: boolean;
}

/** The paths the comments of `file` name, but globs (`*`): a glob names no one file, and may match none while generated modules are built rather than kept. */
function citationsIn(file: string, project: Project): Citation[] {
  const name = relative(ROOT, file);
  return commentsOf(file).flatMap(({ line, text }) => {
    const where = (index: number) => `${name}:${line + text.slice(0, index).split('\n').length - 1}`;
    const rooted = [...text.matchAll(ROOTED_PATH)].map((match) => {
      const path = match[1].replace(/\.+$/, '');
      return { where: where(match.index), path, found: existsSync(join(ROOT, path)) };
    });
    const other = [...text.matchAll(FILE_PATH)]
      .filter((match) => !ROOT_FOLDERS.includes(match[1].split('/')[0]))
      .map((match) => ({ where: where(match.index), path: match[1], found: pathExists(file, match[1], project) }));
    return [...rooted, ...other].flatMap(({ where: at, path, found }) =>
      found === undefined || path.includes('*') ? [] : [{ where: at, path, found }],
    );
  });
}

describe('the project\'s comments', () => {
  it('name only files and folders that exist', () => {
    // A generated module's comments are its generator's, which are checked themselves.
    const files = PROJECT_FOLDERS.flatMap((folder) => filesIn(join(ROOT, folder), (name) => /\.(ts|mjs|js)$/.test(name) && !name.includes('.generated.')));
    const project = { folders: new Set(PROJECT_FOLDERS.flatMap((folder) => folderNames(join(ROOT, folder)))), names: new Set(files.map((file) => basename(file))) };
    const citations = files.flatMap((file) => citationsIn(file, project));
    const missing = citations.filter(({ found }) => !found);

    expect(citations.length).toBeGreaterThan(50);
    expect(missing.map(({ where, path }) => `${where} names ${path}, which does not exist`)).toEqual([]);
  });
});

/**
 * What the settings page's server may import. Only server.ts knows the Homebridge UI; the rest runs
 * in tests without it. The plugin's modules come in as `#plugin/...`, which resolves to dist/ once
 * built: a relative path into src/ would work in tests and break in the built package.
 */
describe('homebridge-ui/', () => {
  const UI_SERVER = join(ROOT, 'homebridge-ui');
  const files = readdirSync(UI_SERVER).filter((name) => name.endsWith('.ts'));

  function specifiersOf(name: string): string[] {
    const text = readFileSync(join(UI_SERVER, name), 'utf8');
    return [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'/gms)].map((match) => match[1] as string);
  }

  it('has its server and the modules it uses', () => {
    expect(files).toEqual(expect.arrayContaining(['server.ts', 'settings-requests.ts']));
  });

  it.each(files)('%s: the Homebridge UI only in server.ts, the plugin only as #plugin/..., no Homebridge', (name) => {
    const imports = specifiersOf(name);
    const homebridge = imports.filter((specifier) => HOMEBRIDGE.test(specifier));
    expect(homebridge).toEqual(name === 'server.ts' ? ['@homebridge/plugin-ui-utils'] : []);
    expect(imports.filter((specifier) => specifier.startsWith('.') && !/^\.\/[a-z-]+\.js$/.test(specifier))).toEqual([]);
  });

  it('has no import circle among its own files', async () => {
    // The plugin's modules (`#plugin/...`) are outside this graph: src/ is checked on its own above, and imports nothing from here.
    const graph = await madge(UI_SERVER, { fileExtensions: ['ts'], tsConfig: join(ROOT, 'tsconfig.ui.json') });
    expect(graph.warnings().skipped.filter((specifier) => !specifier.startsWith('#plugin/'))).toEqual([]);
    expect(Object.keys(graph.obj())).toEqual(expect.arrayContaining(files));
    expect(graph.circular()).toEqual([]);
  });
});
