/** The address classifier and connect-time lookup behind the own-bucket SSRF guard. */
import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { isPublicAddress, isPublicHost, publicOnlyLookup } from '../../src/lib/public-network.js';

describe('isPublicAddress', () => {
  it.each([
    ['127.0.0.1', false], ['127.255.1.2', false], ['10.1.2.3', false], ['172.16.0.1', false], ['172.31.255.255', false],
    ['192.168.1.1', false], ['169.254.169.254', false], ['100.64.0.1', false], ['0.0.0.0', false], ['224.0.0.1', false],
    ['::1', false], ['::', false], ['fd00::1', false], ['fe80::1', false], ['::ffff:127.0.0.1', false], ['::ffff:7f00:1', false],
    ['::ffff:8.8.8.8', false], ['64:ff9b::a9fe:a9fe', false], ['64:ff9b:1::a9fe:a9fe', false], ['not-an-ip', false],
    ['8.8.8.8', true], ['172.32.0.1', true], ['93.184.216.34', true], ['2606:4700::1111', true],
  ])('%s → %s', (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});

describe('isPublicHost', () => {
  it.each([
    ['localhost', false], ['LOCALHOST.', false], ['s3.localhost', false], ['127.0.0.1', false], ['[::1]', false],
    ['[::ffff:7f00:1]', false], ['169.254.169.254', false],
    ['s3.eu-west-1.amazonaws.com', true], ['minio.example.com', true], ['8.8.8.8', true], ['[2606:4700::1111]', true],
  ])('%s → %s', (host, expected) => {
    expect(isPublicHost(host)).toBe(expected);
  });
});

const lookup = (host: string, all: boolean) =>
  new Promise<{ err: NodeJS.ErrnoException | null; result: unknown }>((resolve) =>
    publicOnlyLookup(host, { all }, (err: NodeJS.ErrnoException | null, result: string | LookupAddress[]) => resolve({ err, result })),
  );

describe('publicOnlyLookup', () => {
  it('refuses a name that resolves to loopback, in both callback forms', async () => {
    for (const all of [false, true]) {
      const { err } = await lookup('localhost', all);
      expect(err?.code).toBe('ERR_NON_PUBLIC_ADDRESS');
    }
  });

  it('passes public answers through unchanged', async () => {
    expect((await lookup('93.184.216.34', false)).result).toBe('93.184.216.34');
    expect((await lookup('93.184.216.34', true)).result).toEqual([{ address: '93.184.216.34', family: 4 }]);
  });
});
