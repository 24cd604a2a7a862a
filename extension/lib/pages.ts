/** What the popup and the options page both do with a message: set it as text (never as HTML:
 * it may quote a page or a server), and show a command it names ready to copy. */

export type Tone = '' | 'ok' | 'warn' | 'bad' | 'muted';

export function setStatus(el: HTMLElement, text: string, tone: Tone = ''): void {
  el.textContent = text;
  el.className = tone;
}

/** The service worker's advice for a refused origin ends with the command that fixes it. */
const START_WITH = /Start it with: (memlane serve --allow-origin \S+)$/;

/** `message` in `el`; when it ends with "Start it with: <command>", the command in a code block
 * (id `allow-command`) after "Start memlane with:". */
export function showMessage(el: HTMLElement, text: string, tone: Tone): void {
  const command = START_WITH.exec(text);
  if (!command) {
    setStatus(el, text, tone);
    return;
  }
  setStatus(el, `${text.slice(0, command.index).trim()} Start memlane with:`, tone);
  const pre = document.createElement('pre');
  const code = document.createElement('code');
  code.id = 'allow-command';
  code.textContent = command[1];
  pre.append(code);
  el.append(pre);
}

export const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
