/**
 * Platform blocks shaped like config.schema.json, for property tests. Each setting the schema
 * declares, read from the file the Homebridge UI draws its form from, gets a value the schema takes,
 * then a few settings get one it must refuse: an odd address (a port past 65535, malformed IPv6, an
 * odd scheme), a number at or past a bound, a huge or control-character string, a wrong type; and
 * keys nobody declared appear at every level.
 *
 * Every address is on loopback or under `.invalid`, which never resolves, and the receiver may only
 * be told to listen on loopback, so nothing a generated block makes the plugin do leaves this machine.
 */
import fc from 'fast-check';
import { platformSchema, type SchemaNode } from '../../src/config/config-schema.js';
import { anyText, goodDeviceId, goodUrl, HUGE, ODD_DEVICE_IDS, ODD_HOSTS, ODD_URLS, WRONG_TYPES } from './typed-values.js';

const SCHEMA = platformSchema();

/** A setting's place in a block; `[]` stands for any doorbell entry. */
type Path = string[];

const nameOf = (path: Path) => path.join('.').replace(/\.\[\]/g, '[]');

/** Every setting the schema declares, with its node. */
function settingsOf(node: SchemaNode, path: Path = []): Array<{ path: Path; node: SchemaNode }> {
  const items = node.items === undefined ? [] : [{ path: [...path, '[]'], node: node.items }, ...settingsOf(node.items, [...path, '[]'])];
  const properties = Object.entries(node.properties ?? {}).flatMap(([key, child]) => [{ path: [...path, key], node: child }, ...settingsOf(child, [...path, key])]);
  return [...items, ...properties];
}

const SETTINGS = settingsOf(SCHEMA);

const isUrl = (node: SchemaNode) => node['x-address'] === 'url';

/** A URL setting that takes plain http only to loopback: its pattern does not allow `http` anywhere. */
const httpsRuled = (node: SchemaNode) => !(node.pattern?.startsWith('^https?://') ?? false);

export interface BlockOptions {
  /** A loopback port this process listens on, so requests the plugin sends somewhere reach a place it owns. */
  ownPort: number;
}

export interface GeneratedBlock {
  block: Record<string, unknown>;
  /** Only unknown keys were added to a block the schema takes: the check must accept it. */
  acceptable: boolean;
}

/** A value the schema takes for `node`, at `path`. */
function goodValue(node: SchemaNode, path: Path, options: BlockOptions): fc.Arbitrary<unknown> {
  const name = nameOf(path);
  if (isUrl(node)) {
    return goodUrl(options.ownPort, !httpsRuled(node));
  }
  if (node['x-address'] === 'listen') {
    return fc.constantFrom('127.0.0.1', '::1', 'localhost');
  }
  if (name === 'doorbells[].deviceId') {
    return goodDeviceId();
  }
  if (node.enum !== undefined) {
    return fc.constantFrom(...node.enum);
  }
  switch (node.type) {
    case 'string':
      return node.pattern === undefined
        ? anyText(node.minLength ?? 0)
        : fc.stringMatching(new RegExp(node.pattern, 'u')).filter((text) => text.length >= (node.minLength ?? 0) && text.length <= 254);
    case 'integer':
      return goodInteger(node, name, options);
    case 'boolean':
      return fc.boolean();
    case 'array':
      // A list of choices (a doorbell's detections), now and then one twice, which is only warned of.
      return node.items?.enum !== undefined ? fc.array(fc.constantFrom(...node.items.enum), { maxLength: 4 }) : doorbellList(node, path, options);
    case 'object':
      return goodObject(node, path, options);
    default:
      throw new Error(`config-arbitrary: no values for ${name} of type ${String(node.type)}`);
  }
}

function goodInteger({ minimum = 0, maximum }: SchemaNode, name: string, options: BlockOptions): fc.Arbitrary<number> {
  if (name === 'push.port') {
    // Only ports nobody else on this machine listens on, or the one this process holds.
    return fc.constantFrom(minimum, maximum ?? minimum, options.ownPort);
  }
  const top = maximum ?? Number.MAX_SAFE_INTEGER;
  return fc.oneof(fc.constantFrom(minimum, top, ...(maximum === undefined ? [2 ** 31, 1e21, 1e300] : [])), fc.integer({ min: minimum, max: Math.min(top, 2 ** 31) }));
}

/** A list of doorbells, now and then exactly as many as the schema allows, and now and then one id twice. */
function doorbellList(node: SchemaNode, path: Path, options: BlockOptions): fc.Arbitrary<unknown[]> {
  const item = goodValue(node.items ?? {}, [...path, '[]'], options);
  const most = node.maxItems ?? 150;
  const full = fc.constant(Array.from({ length: most }, (_, index) => ({ deviceId: String(index + 1) })));
  const few = fc.array(item, { minLength: node.minItems ?? 0, maxLength: 4 });
  const repeated = fc.tuple(few, fc.nat(), fc.boolean()).map(([doorbells, pick, asNumber]) => {
    const first = doorbells[pick % Math.max(doorbells.length, 1)] as { deviceId?: unknown } | undefined;
    const id = String(first?.deviceId);
    return first === undefined ? doorbells : [...doorbells, { deviceId: asNumber && Number.isSafeInteger(Number(id)) ? Number(id) : id }];
  });
  return fc.oneof({ weight: 1, arbitrary: full }, { weight: 20, arbitrary: few }, { weight: 4, arbitrary: repeated });
}

function goodObject(node: SchemaNode, path: Path, options: BlockOptions): fc.Arbitrary<Record<string, unknown>> {
  const properties = node.properties ?? {};
  // Whatever an if/then/else may require: the account's fields once it has any, and the account itself.
  const requiredKeys = [...(node.required ?? []), ...(node.then?.required ?? []), ...(node.then?.else?.required ?? []), ...(node.else?.required ?? [])];
  const record = Object.fromEntries(Object.entries(properties).map(([key, child]) => [key, goodValue(child, [...path, key], options)]));
  return fc.record(record, { requiredKeys: [...new Set(requiredKeys)].filter((key) => key in properties) });
}

/** A value the schema must refuse, or one it may take that the plugin has never seen. */
function oddValue(node: SchemaNode, path: Path): fc.Arbitrary<unknown> {
  const name = nameOf(path);
  const ofType = (): fc.Arbitrary<unknown> => {
    if (isUrl(node)) {
      return ODD_URLS;
    }
    if (node['x-address'] === 'listen') {
      return ODD_HOSTS;
    }
    if (name === 'doorbells[].deviceId') {
      return ODD_DEVICE_IDS;
    }
    if (node.enum !== undefined) {
      return fc.constantFrom('Relay', 'DIRECT', '', 'webhook', 0);
    }
    switch (node.type) {
      case 'integer': {
        const { minimum = 0, maximum = Number.MAX_SAFE_INTEGER } = node;
        return fc.constantFrom(minimum - 1, maximum + 1, minimum + 0.5, -minimum - 1, 2 ** 53, 1e308, -1e308, String(minimum), -0);
      }
      case 'array':
        return fc.constantFrom([], Array.from({ length: (node.maxItems ?? 149) + 1 }, (_, index) => ({ deviceId: String(index + 1) })), [null], [[]], 'doorbells');
      case 'object':
        return fc.constantFrom({}, [], 'object', { note: 'only a note' });
      default:
        return fc.oneof(anyText(0), fc.constantFrom(HUGE + HUGE, '\u0000\u0001\u0002', 'tk_a b', 'é'.repeat(5)));
    }
  };
  return fc.oneof({ weight: 3, arbitrary: ofType() }, { weight: 1, arbitrary: WRONG_TYPES }, { weight: 1, arbitrary: fc.constant(REMOVE) });
}

const REMOVE = Symbol('remove the setting');

const UNKNOWN_KEYS = fc.oneof(fc.constantFrom('note', 'motionTimout', '_comment', '__proto__', 'constructor', '', 'a.b', 'toString', 'chime', 'futureSetting'), fc.string({ maxLength: 10 }));

/** Where a change lands: a setting (the doorbell entry `[]` by an index that may not exist), or an unknown key beside it. */
type Change = { kind: 'set'; path: Path; value: unknown } | { kind: 'unknown'; path: Path; key: string; value: unknown };

function changes(): fc.Arbitrary<Change[]> {
  const addresses = SETTINGS.filter(({ node }) => node['x-address'] !== undefined);
  const set = fc
    .oneof({ weight: 3, arbitrary: fc.constantFrom(...SETTINGS) }, { weight: 3, arbitrary: fc.constantFrom(...addresses) })
    .chain(({ path, node }) => oddValue(node, path).map((value): Change => ({ kind: 'set', path, value })));
  const objects = [{ path: [], node: SCHEMA }, ...SETTINGS.filter(({ node }) => node.properties !== undefined)];
  const unknown = fc
    .tuple(fc.constantFrom(...objects), UNKNOWN_KEYS, fc.jsonValue())
    .filter(([{ node }, key]) => !Object.hasOwn(node.properties ?? {}, key))
    .map(([{ path }, key, value]): Change => ({ kind: 'unknown', path, key, value }));
  return fc.array(fc.oneof(set, unknown), { maxLength: 3 });
}

/** `block` with the change made; unchanged where the setting's parent is missing or not an object. */
function applied(block: Record<string, unknown>, change: Change, index: number): Record<string, unknown> {
  const copy = structuredClone(block);
  const place = change.path.map((part) => (part === '[]' ? String(index) : part));
  const parentPath = change.kind === 'set' ? place.slice(0, -1) : place;
  const parent = parentPath.reduce<unknown>((node, key) => (typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined), copy);
  if (typeof parent !== 'object' || parent === null) {
    return block;
  }
  const key = change.kind === 'set' ? (place.at(-1) as string) : change.key;
  if (change.kind === 'set' && change.value === REMOVE) {
    delete (parent as Record<string, unknown>)[key];
  } else {
    // As JSON.parse makes it: an own key, even one named __proto__.
    Object.defineProperty(parent, key, { value: change.value, enumerable: true, writable: true, configurable: true });
  }
  return copy;
}

/** As Homebridge hands a block over: parsed from config.json, so plain objects, and -0 is 0. */
function asReadFromFile(block: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(JSON.stringify(block)) as Record<string, unknown>;
}

/**
 * Without push.relayUrl the plugin subscribes to the public relay on the internet: every block that
 * may deliver through a relay names one on this machine, unless it already names an address of its own.
 */
function withRelayOnThisMachine(block: Record<string, unknown>): Record<string, unknown> {
  const relay = { relayUrl: 'https://relay.invalid' };
  if (block.push === undefined) {
    return { ...block, push: relay };
  }
  const push = block.push;
  return typeof push === 'object' && push !== null && !Array.isArray(push) && !('relayUrl' in push) ? { ...block, push: { ...push, ...relay } } : block;
}

const PLATFORM = fc.constantFrom('DoorbellMotion', 'homebridge-doorbell-motion.DoorbellMotion');

/** A platform block as Homebridge would hand it over: `platform` always there, the rest generated. */
export function platformBlock(options: BlockOptions): fc.Arbitrary<GeneratedBlock> {
  const shaped = fc
    .tuple(PLATFORM, goodObject(SCHEMA, [], options), changes(), fc.nat(3), fc.option(fc.constant({ name: 'Doorbells', port: 51830 })))
    // The one account at the top of the block: `accounts` beside it is a block the plugin must refuse.
    .map(([platform, generated, made, index, bridge]) => [platform, Object.fromEntries(Object.entries(generated).filter(([key]) => key !== 'accounts')), made, index, bridge] as const)
    .map(([platform, settings, made, index, bridge]) => ({
      block: asReadFromFile(withRelayOnThisMachine(made.reduce<Record<string, unknown>>((block, change) => applied(block, change, index), { platform, ...settings, ...(bridge === null ? {} : { _bridge: bridge }) }))),
      acceptable: made.every((change) => change.kind === 'unknown'),
    }));
  const bare = fc.tuple(PLATFORM, fc.option(fc.string())).map(([platform, name]) => ({ block: { platform, ...(name === null ? {} : { name }) }, acceptable: false }));
  return fc.oneof({ weight: 20, arbitrary: shaped }, { weight: 1, arbitrary: bare });
}
