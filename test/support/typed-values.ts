/**
 * Values users type into a platform block, for property tests (config-arbitrary.ts puts them where
 * the schema has a setting): addresses the configuration takes and odd ones (a port past 65535,
 * malformed IPv6, an odd scheme, a control character), text of every kind, device ids, wrong types.
 *
 * Every host in them is on loopback or under `.invalid`, which never resolves: nothing a generated
 * value makes the plugin do leaves this machine.
 */
import fc from 'fast-check';

const LOOPBACK_HOSTS = ['127.0.0.1', '127.1.2.3', 'localhost', '[::1]', '[::ffff:127.0.0.1]', '0x7f.1'];
const INVALID_HOSTS = ['doorbell.invalid', 'a-b.c.invalid', 'INVALID', 'x.invalid.'];
export const HUGE = 'x'.repeat(20_000);

/** An address the https rule takes (plain http to loopback only, unless `anyHttp`). */
export function goodUrl(ownPort: number, anyHttp: boolean): fc.Arbitrary<string> {
  const tail = fc.tuple(fc.constantFrom('', ':1', ':65535', `:${ownPort}`), fc.constantFrom('', '/', '/base', '/a/b//', '/%7Euser', '/é'));
  const https = fc.tuple(fc.constantFrom(...LOOPBACK_HOSTS, ...INVALID_HOSTS), tail).map(([host, [port, rest]]) => `https://${host}${port}${rest}`);
  const loopbackHttp = fc.tuple(fc.constantFrom('127.0.0.1', 'localhost', '[::1]'), tail).map(([host, [port, rest]]) => `http://${host}${port}${rest}`);
  const http = fc.tuple(fc.constantFrom(...LOOPBACK_HOSTS, ...INVALID_HOSTS), tail).map(([host, [port, rest]]) => `http://${host}${port}${rest}`);
  return fc.oneof(https, anyHttp ? http : loopbackHttp);
}

/** Addresses that are no address a request could go to; any host in them is loopback or `.invalid`. */
export const ODD_URLS = fc.oneof(
  fc
    .tuple(fc.constantFrom(...LOOPBACK_HOSTS, ...INVALID_HOSTS), fc.constantFrom('0', '00', '65536', '70000', '99999', '123456', '-1', '1.5', 'x'))
    .map(([host, port]) => `https://${host}:${port}`),
  fc.constantFrom(
    'https://home.example.invalid:99999',
    'http://[1::2::3]',
    'https://[1::2::3]:443',
    'https://[::1',
    'https://[::1]]',
    'https://[]',
    'https://',
    'https:///base',
    'https://:443',
    'https://1.2.3.256',
    'http://127.999.0.1',
    'https://999999999999',
    'https://xn--.invalid',
    'ftp://127.0.0.1',
    'ws://localhost',
    'javascript:alert(1)',
    'file:///etc/passwd',
    'HTTPS://LOCALHOST',
    ' https://localhost',
    'https://localhost\n',
    'https://local\u0000host',
    'https://user:secret@localhost',
    'https://localhost?x=1',
    'https://localhost#top',
    'https://local host',
    'http://doorbell.invalid',
    `https://127.0.0.1:1/${HUGE}`,
    `https://${'a'.repeat(300)}.invalid`,
  ),
);

export const ODD_HOSTS = fc.constantFrom('', ' ', 'home bridge', '127.0.0.1\u0000', '[::1]', '1::2::3', '256.1.1.1', 'x'.repeat(300), 'host.invalid', '0.0.0.0', '::', 'localhost\n');

/** Strings the schema takes where it asks only for text: unicode, control characters, the huge. */
export function anyText(minLength: number): fc.Arbitrary<string> {
  return fc
    .oneof(
      fc.string({ minLength, maxLength: 30 }),
      fc.string({ unit: 'binary', minLength, maxLength: 30 }),
      fc.constantFrom('Front Door (Main)', '🚪 Porch', 'Haustür', '\u0000', '  ', 'a\nb', '\u001b[2J', '\ud800', HUGE),
    )
    .filter((text) => text.length >= minLength);
}

export const WRONG_TYPES = fc.oneof(fc.constantFrom(null, true, false, 0, -1, 1.5, 2 ** 53 + 2, 1e308, -1e308, '', [], {}, [1, 2], { a: 1 }), fc.jsonValue());

export function goodDeviceId(): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map(String),
    fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
    fc.constantFrom('1', '9223372036854775807', '9007199254740993', 1234567),
  );
}

export const ODD_DEVICE_IDS = fc.constantFrom('0', '01', '+1', '1.0', '9223372036854775808', '99999999999999999999', 2 ** 53 + 2, -1, 1.5, '', ' 1', '١٢٣', true, null);
