/**
 * Preloaded with `node --import` into every Homebridge that startHomebridge runs, to keep its traffic
 * on this machine.
 *
 * Homebridge cannot be told to serve on loopback only: hap-nodejs always listens on the unspecified
 * address (`bridge.bind` narrows only the mDNS advertisement) and ciao binds its mDNS socket to all
 * addresses. Where these tests run, servers may listen on loopback only, so every TCP listen and UDP
 * bind that asks for another address, or for none, is moved to loopback.
 *
 * Tests also give the plugin server names that must not resolve (`*.invalid`). RFC 6761 reserves that
 * domain so that no resolver ever answers it, but asking still sends a query to this machine's
 * resolver, which is elsewhere. Such lookups are answered here, with the resolver's own ENOTFOUND.
 *
 * Each move and each answer is reported on stderr, so the output shows it happened.
 *
 * Plain JavaScript: it runs inside the Node that runs Homebridge, where no TypeScript tooling is.
 */
import dgram from 'node:dgram';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import process from 'node:process';

const LOOPBACK_V4 = '127.0.0.1';
const LOOPBACK_V6 = '::1';

function isLoopback(host) {
  return host === 'localhost' || host === LOOPBACK_V6 || (net.isIPv4(host) && host.startsWith('127.'));
}

function reportMove(what, requestedHost, port, loopback) {
  const host = requestedHost === undefined ? '(any address)' : net.isIPv6(requestedHost) ? `[${requestedHost}]` : requestedHost;
  const from = `${host}:${port ?? 0}`;
  process.stderr.write(`[loopback-guard] ${what} on ${from} moved to ${loopback}\n`);
}

function splitCallback(args) {
  return typeof args.at(-1) === 'function' ? [args.slice(0, -1), args.at(-1)] : [args, undefined];
}

/**
 * `server.listen(...)` arguments as an options object, or undefined when they name no network address
 * (a pipe or Unix socket path, a file descriptor, a handle).
 */
function listenOptions(args) {
  const [values] = splitCallback(args);
  const [first, second, third] = values;
  if (typeof first === 'object' && first !== null) {
    const isAddress = first.path === undefined && first.fd === undefined && first.handle === undefined && first._handle === undefined;
    return isAddress ? first : undefined;
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) {
    return undefined;
  }
  // listen(port, host, backlog) or listen(port, backlog): the host is optional in the middle.
  return typeof second === 'string' ? { port: first, host: second, backlog: third } : { port: first, backlog: second };
}

/** `socket.bind(...)` arguments as an options object, or undefined for a file descriptor. */
function bindOptions(args) {
  const [values] = splitCallback(args);
  const [first, second] = values;
  if (typeof first === 'object' && first !== null) {
    return first.fd === undefined ? first : undefined;
  }
  return { port: first, address: second };
}

const originalListen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenOnLoopback(...args) {
  const options = listenOptions(args);
  if (options === undefined || isLoopback(options.host)) {
    return originalListen.apply(this, args);
  }
  reportMove('TCP listen', options.host, options.port, LOOPBACK_V4);
  const [, callback] = splitCallback(args);
  return originalListen.call(this, { ...options, host: LOOPBACK_V4 }, callback);
};

const originalBind = dgram.Socket.prototype.bind;
dgram.Socket.prototype.bind = function bindToLoopback(...args) {
  const options = bindOptions(args);
  if (options === undefined || isLoopback(options.address)) {
    return originalBind.apply(this, args);
  }
  const loopback = this.type === 'udp6' ? LOOPBACK_V6 : LOOPBACK_V4;
  reportMove('UDP bind', options.address, options.port, loopback);
  const [, callback] = splitCallback(args);
  return originalBind.call(this, { ...options, address: loopback }, callback);
};

/** RFC 6761 §6.4: `invalid.` and every name under it; a trailing dot is the same name. */
function isInvalidName(hostname) {
  return typeof hostname === 'string' && /(^|\.)invalid\.?$/i.test(hostname);
}

/** The error getaddrinfo's NXDOMAIN becomes in Node, so callers handle it as they would the real one. */
function notFound(hostname) {
  process.stderr.write(`[loopback-guard] DNS lookup of ${hostname} answered ENOTFOUND here: .invalid never resolves\n`);
  return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND', syscall: 'getaddrinfo', hostname });
}

// net and tls read dns.lookup when they connect, so replacing the property covers http, https and
// axios; syncBuiltinESMExports carries it to `import { lookup } from 'node:dns'` too.
const originalLookup = dns.lookup;
dns.lookup = function lookupOrRefuseInvalid(hostname, ...rest) {
  if (!isInvalidName(hostname)) {
    return originalLookup.call(this, hostname, ...rest);
  }
  const [, callback] = splitCallback(rest);
  process.nextTick(callback, notFound(hostname));
  return {};
};

const originalPromisesLookup = dns.promises.lookup;
dns.promises.lookup = function lookupOrRefuseInvalid(hostname, ...rest) {
  return isInvalidName(hostname) ? Promise.reject(notFound(hostname)) : originalPromisesLookup.call(this, hostname, ...rest);
};

syncBuiltinESMExports();
