/** Page fixtures shared with the end-to-end tests (tests/extension/fixtures at the repository
 * root), opened as jsdom documents at the address the real page has. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { JSDOM } from 'jsdom';

const DIR = fileURLToPath(new URL('../../tests/extension/fixtures/', import.meta.url));

export function fixtureHtml(name: string): string {
  return readFileSync(`${DIR}${name}`, 'utf8');
}

export function page(name: string, url: string): Document {
  return new JSDOM(fixtureHtml(name), { url }).window.document;
}

export function html(markup: string, url = 'https://example.com/page'): Document {
  return new JSDOM(markup, { url }).window.document;
}
