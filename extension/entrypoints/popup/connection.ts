/** Whether memlane can be used now, and the projects to offer: memlane's own, or those it last
 * listed when it cannot be reached (a save made then still goes to the project picked). */
import { ask, type ProjectsView } from '@/lib/messages';
import { byId as $, showMessage } from '@/lib/pages';

function projectLabel(p: ProjectsView['projects'][number]): string {
  return `${p.name} (${p.memory_count} ${p.memory_count === 1 ? 'memory' : 'memories'})`;
}

/** memlane's projects, or the list it last gave when it cannot be reached: the project picked is
 * the one a waiting save is sent to. */
export async function loadProjects(lastProjectId?: string): Promise<void> {
  const view = await ask({ type: 'projects' }).catch(
    (err: Error): ProjectsView => ({ projects: [], live: false, problem: { kind: 'server', message: err.message } }),
  );
  showConnection(view);
  if (!view.projects.length) return; // nothing known yet: saves go to the default project
  const select = $<HTMLSelectElement>('project');
  select.replaceChildren(...view.projects.map((p) => new Option(projectLabel(p), p.id)));
  const preferred = view.projects.find((p) => p.id === lastProjectId) ?? view.projects.find((p) => p.is_default);
  if (preferred) select.value = preferred.id;
}

function seenWhen(at: number | undefined): string {
  if (at === undefined) return 'No project list seen yet: saves go to the default project.';
  const when = new Date(at).toLocaleString('en', { dateStyle: 'medium', timeStyle: 'short' });
  return `Projects as memlane listed them on ${when}.`;
}

/** Why memlane cannot be used now, and what still works: saves wait here, to the project chosen. */
function showConnection(view: ProjectsView): void {
  const box = $('connection');
  const problem = view.problem;
  box.hidden = !problem || problem.message.startsWith('no API key yet'); // the setup notice says that
  document.body.dataset.connection = problem?.kind ?? 'ok';
  if (!problem) return;
  const text = $('connection-text');
  const waits = 'Saves wait here and are sent to the project chosen once memlane takes them.';
  if (problem.kind === 'unreachable') {
    showMessage(text, `Offline: ${problem.message}. ${seenWhen(view.seenAt)} ${waits}`, 'warn');
  } else if (problem.kind === 'auth') {
    showMessage(text, `memlane refused the API key (${problem.message}): fix it in the options. ${seenWhen(view.seenAt)} ${waits}`, 'bad');
  } else if (problem.kind === 'origin') {
    showMessage(text, problem.message, 'bad'); // ends with the command that lets this extension in
  } else {
    showMessage(text, `${problem.message}${problem.message.endsWith('.') ? '' : '.'} ${waits}`, 'bad');
  }
}
