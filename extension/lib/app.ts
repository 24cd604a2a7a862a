/** memlane's web app: when the server serves it (its `/` answers HTML), a memory opens at
 * `<memlane URL>/memories/<id>`; otherwise the popup shows the memory's text itself. */

export async function servesWebApp(baseUrl: string, fetchImpl: typeof fetch = fetch): Promise<boolean> {
  try {
    const response = await fetchImpl(`${baseUrl.replace(/\/$/, '')}/`, {
      headers: { Accept: 'text/html' },
      credentials: 'omit',
      signal: AbortSignal.timeout(5000),
    });
    return response.ok && (response.headers.get('Content-Type') ?? '').toLowerCase().includes('text/html');
  } catch {
    return false;
  }
}

export function memoryPageUrl(appUrl: string, memoryId: string): string {
  return `${appUrl.replace(/\/$/, '')}/memories/${encodeURIComponent(memoryId)}`;
}
