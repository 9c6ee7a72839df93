import { describe, expect, it } from '@jest/globals';
import { hasUserInfo, isListenAddress, isWebAddress, originOf } from '../../src/values/address.js';

describe('isWebAddress', () => {
  it.each(['https://home.example.com', 'https://home.example.com:1', 'https://home.example.com:65535/base', 'http://[::1]:8080', 'https://[2001:db8::1]'])(
    'takes %s',
    (url) => {
      expect(isWebAddress(url)).toBe(true);
    },
  );

  it.each([
    ['a port past 65535', 'https://home.example.com:99999'],
    ['port 65536', 'https://home.example.com:65536'],
    ['port 0', 'https://home.example.com:0'],
    ['malformed IPv6', 'http://[1::2::3]'],
    ['an IPv4 address out of range', 'https://1.2.3.256'],
    ['no host', 'https://'],
    ['no URL at all', 'home.example.com'],
    ['a user name and password', 'https://user:password@home.example.com'],
    ['a user name', 'https://user@home.example.com'],
    ['a password alone', 'https://:password@home.example.com'],
  ])('refuses %s', (_, url) => {
    expect(isWebAddress(url)).toBe(false);
  });
});

describe('hasUserInfo', () => {
  it('tells an address with a user name or password before its host, and nothing else', () => {
    expect(['https://user:pw@home.example.com', 'https://user@home.example.com', 'https://:pw@home.example.com'].map(hasUserInfo)).toEqual([true, true, true]);
    expect(['https://home.example.com/@user', 'https://home.example.com/?user@x', 'not a url @ all', 'https://@home.example.com'].map(hasUserInfo)).toEqual([false, false, false, false]);
  });
});

describe('isListenAddress', () => {
  it.each(['0.0.0.0', '::', '127.0.0.1', 'fe80::1%eth0', '::ffff:192.168.1.2', 'localhost', 'homebridge.local', 'pi-4.lan.'])('takes %s', (host) => {
    expect(isListenAddress(host)).toBe(true);
  });

  it.each(['', ' ', 'home bridge', '127.0.0.1\u0000', '[::1]', '1::2::3', '1.2.3.256', '-start.example', `${'a'.repeat(64)}.example`, 'a'.repeat(254)])(
    'refuses %j',
    (host) => {
      expect(isListenAddress(host)).toBe(false);
    },
  );
});

describe('originOf', () => {
  it('names where a URL leads without its path, and never throws', () => {
    expect(originOf('https://home.example.com:8443/push/secret')).toBe('https://home.example.com:8443');
    expect(originOf('https://home.example.com:99999')).toBe('an address that is not a URL');
  });
});
