import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'plinth-cfg-'));
const HEX = 'a'.repeat(64);

describe('config', () => {
  it('has working defaults with no environment at all', () => {
    const dir = tmp();
    const c = loadConfig({ PLINTH_DATA_DIR: dir });
    expect(c.port).toBe(3000);
    expect(c.host).toBe('127.0.0.1');
    expect(c.bodyLimit).toBe(1024 * 1024);
    expect(c.userAccessTokenTtl).toEqual({ text: '15m', seconds: 900 });
    expect(c.storage.driver).toBe('local');
  });

  it('generates ENCRYPTION_KEY into the data dir outside production and reuses it', () => {
    const dir = tmp();
    const first = loadConfig({ PLINTH_DATA_DIR: dir }).encryptionKey;
    const second = loadConfig({ PLINTH_DATA_DIR: dir }).encryptionKey;
    expect(first.length).toBe(32);
    expect(second.equals(first)).toBe(true);
    expect(readFileSync(path.join(dir, 'secrets', 'encryption_key.hex'), 'utf8')).toBe(first.toString('hex'));
  });

  it('requires ENCRYPTION_KEY and DASHBOARD_JWT_SECRET in production', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', PLINTH_DATA_DIR: tmp() })).toThrow(/ENCRYPTION_KEY is required/);
    const c = loadConfig({ NODE_ENV: 'production', ENCRYPTION_KEY: HEX, DASHBOARD_JWT_SECRET: HEX, PLINTH_DATA_DIR: tmp() });
    expect(c.host).toBe('0.0.0.0');
  });

  it('refuses private bucket endpoints by default in production only (SSRF guard), and can be told otherwise', () => {
    const prod = { NODE_ENV: 'production', ENCRYPTION_KEY: HEX, DASHBOARD_JWT_SECRET: HEX, PLINTH_DATA_DIR: tmp() };
    expect(loadConfig(prod).storage.allowPrivateEndpoints).toBe(false);
    expect(loadConfig({ ...prod, STORAGE_ALLOW_PRIVATE_ENDPOINTS: 'true' }).storage.allowPrivateEndpoints).toBe(true);
    expect(loadConfig({ PLINTH_DATA_DIR: tmp() }).storage.allowPrivateEndpoints).toBe(true);
    expect(() => loadConfig({ ...prod, STORAGE_ALLOW_PRIVATE_ENDPOINTS: 'maybe' })).toThrow(/STORAGE_ALLOW_PRIVATE_ENDPOINTS must be true or false/);
  });

  it('refuses private and plain-http webhook URLs by default in production only (SSRF guard)', () => {
    const prod = { NODE_ENV: 'production', ENCRYPTION_KEY: HEX, DASHBOARD_JWT_SECRET: HEX, PLINTH_DATA_DIR: tmp() };
    expect(loadConfig(prod).webhooks.allowPrivateUrls).toBe(false);
    expect(loadConfig({ ...prod, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' }).webhooks.allowPrivateUrls).toBe(true);
    expect(loadConfig({ PLINTH_DATA_DIR: tmp() }).webhooks.allowPrivateUrls).toBe(true);
  });

  it.each([
    ['PORT', 'abc', /PORT must be a whole number/],
    ['PORT', '70000', /PORT must be between/],
    ['ENCRYPTION_KEY', 'short', /ENCRYPTION_KEY must be 64 hexadecimal/],
    ['USER_ACCESS_TOKEN_TTL', 'soon', /USER_ACCESS_TOKEN_TTL must be a duration/],
    ['STORAGE_DRIVER', 'ftp', /STORAGE_DRIVER must be one of local, s3/],
    ['BODY_LIMIT', 'big', /BODY_LIMIT must be a size/],
    ['PUBLIC_URL', 'not a url', /PUBLIC_URL must be an http\(s\) URL/],
    ['S3_FORCE_PATH_STYLE', 'maybe', /S3_FORCE_PATH_STYLE must be true or false/],
    ['RATE_LIMIT_SCALE', '-1', /RATE_LIMIT_SCALE must be a non-negative number/],
  ])('fails fast on a bad %s', (name, value, message) => {
    expect(() => loadConfig({ PLINTH_DATA_DIR: tmp(), [name]: value })).toThrow(message);
  });

  it('picks the log format: readable on a terminal in development, JSON in production and when piped, LOG_FORMAT overrides', () => {
    const dir = tmp();
    const prod = { NODE_ENV: 'production', ENCRYPTION_KEY: HEX, DASHBOARD_JWT_SECRET: HEX, PLINTH_DATA_DIR: dir };
    expect(loadConfig({ PLINTH_DATA_DIR: dir }, true).logFormat).toBe('pretty');
    expect(loadConfig({ PLINTH_DATA_DIR: dir }, false).logFormat).toBe('json');
    expect(loadConfig(prod, true).logFormat).toBe('json');
    expect(loadConfig({ ...prod, LOG_FORMAT: 'pretty' }, false).logFormat).toBe('pretty');
    expect(loadConfig({ PLINTH_DATA_DIR: dir, LOG_FORMAT: 'json' }, true).logFormat).toBe('json');
    expect(() => loadConfig({ PLINTH_DATA_DIR: dir, LOG_FORMAT: 'text' }, true)).toThrow(/LOG_FORMAT must be one of json, pretty, got "text"/);
  });

  it('PASSWORD_HASH_CONCURRENCY: the CPUs this process may use by default, a positive count otherwise', () => {
    const dir = tmp();
    expect(loadConfig({ PLINTH_DATA_DIR: dir }).passwordHashConcurrency).toBe(os.availableParallelism());
    expect(loadConfig({ PLINTH_DATA_DIR: dir, PASSWORD_HASH_CONCURRENCY: '3' }).passwordHashConcurrency).toBe(3);
    for (const bad of ['0', '-1', 'two', '1.5']) {
      expect(() => loadConfig({ PLINTH_DATA_DIR: dir, PASSWORD_HASH_CONCURRENCY: bad }), bad).toThrow(/PASSWORD_HASH_CONCURRENCY/);
    }
  });

  it('parses sizes and lists', () => {
    const c = loadConfig({ PLINTH_DATA_DIR: tmp(), BODY_LIMIT: '2mb', ALLOWED_ORIGINS: 'https://a.com, https://b.com' });
    expect(c.bodyLimit).toBe(2 * 1024 * 1024);
    expect(c.allowedOrigins).toEqual(['https://a.com', 'https://b.com']);
  });

  it('TRUST_PROXY: none by default (also in production), true/false, a hop count, or proxy addresses/CIDRs', () => {
    const prod = { NODE_ENV: 'production', ENCRYPTION_KEY: HEX, DASHBOARD_JWT_SECRET: HEX, PLINTH_DATA_DIR: tmp() };
    expect(loadConfig(prod).trustProxy).toBe(false);
    expect(loadConfig({ ...prod, TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ ...prod, TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ ...prod, TRUST_PROXY: '10.0.0.0/8, 127.0.0.1, ::1, fd00::/8' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);
    for (const bad of ['proxy.local', '10.0.0.0/33', '1.2.3.4/8/9', '-1']) {
      expect(() => loadConfig({ ...prod, TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
    }
  });
});
