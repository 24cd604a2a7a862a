/** Options: the memlane URL and API key (kept by the service worker, shown here only as a hint),
 * "Test connection" (GET /v3/whoami), and this extension's origin for the server's allow-list. */
import { browser } from 'wxt/browser';
import { ask, type SettingsView } from '@/lib/messages';
import { byId as $, setStatus as setText, showMessage } from '@/lib/pages';

function setStatus(text: string, tone: '' | 'ok' | 'bad' = ''): void {
  setText($('status'), text, tone);
}

function isLoopback(url: URL): boolean {
  return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
}

function show(view: SettingsView): void {
  $<HTMLInputElement>('url').value = view.url;
  $<HTMLInputElement>('api-key').value = '';
  $('key-hint').textContent = view.hasKey ? `A key is saved (${view.keyHint}); leave the field empty to keep it.` : 'No key saved yet.';
  $('origin').textContent = view.origin;
  $('serve-command').textContent = `memlane serve --allow-origin ${view.origin}`;
}

/** Asks for access to a non-loopback server. Must run before any other await in the click
 * handler: browsers grant permission prompts only within the user's gesture. */
function requestAccess(raw: string): Promise<boolean> {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return Promise.resolve(true); // the worker reports the bad URL, in words
  }
  if (isLoopback(url)) return Promise.resolve(true);
  return browser.permissions.request({ origins: [`${url.origin}/*`] });
}

async function onSave(event: SubmitEvent): Promise<void> {
  event.preventDefault();
  const url = $<HTMLInputElement>('url').value;
  const granted = requestAccess(url);
  try {
    if (!(await granted)) {
      setStatus(`Not saved: the extension needs your permission to reach ${new URL(url).origin}.`, 'bad');
      return;
    }
    show(await ask({ type: 'settings-set', url, apiKey: $<HTMLInputElement>('api-key').value }));
    setStatus('Saved.', 'ok');
  } catch (err) {
    setStatus(`Not saved: ${(err as Error).message}`, 'bad');
  }
}

async function onTest(): Promise<void> {
  const url = $<HTMLInputElement>('url').value;
  const granted = requestAccess(url);
  setStatus('Connecting…');
  try {
    if (!(await granted)) throw new Error(`no permission to reach ${new URL(url).origin}`);
    const who = await ask({ type: 'whoami', url, apiKey: $<HTMLInputElement>('api-key').value });
    setStatus(`Connected: organization "${who.organization_name}" (${who.organization_id}), key ${who.key_id}.`, 'ok');
  } catch (err) {
    // A server that refuses this extension's origin: the command that allows it, ready to copy.
    showMessage($('status'), `Connection failed: ${(err as Error).message}`, 'bad');
  }
}

async function main(): Promise<void> {
  $('settings-form').addEventListener('submit', (e) => void onSave(e as SubmitEvent));
  $('test').addEventListener('click', () => void onTest());
  show(await ask({ type: 'settings-get' }));
  document.body.dataset.ready = 'true';
}

void main();
