import { describe, expect, it } from 'vitest';
import { platformFor } from '@/lib/extract';
import { extractGdocs } from '@/lib/extract/gdocs';
import { html, page } from './fixtures';

describe('Google Docs', () => {
  it("reads the document's text from the editor's accessible layer", () => {
    const e = extractGdocs(page('gdocs-document.html', 'https://docs.google.com/document/d/1AbCdEfGh_ij-KL/edit?tab=t.0'))!;
    expect(e.title).toBe('Mission review notes');
    expect(e.sourceUrl).toBe('https://docs.google.com/document/d/1AbCdEfGh_ij-KL/edit');
    expect(e.content).toBe(
      'Mission review notes\n\nThe deployment sequence ran four seconds late because the hinge heaters were still warming.\n\nAction: start the heaters ten minutes before separation.',
    );
    for (const chrome of ['File', 'Undo', 'stale copy']) expect(e.content).not.toContain(chrome);
    expect(e.metadata).toEqual({ source: 'google-docs', document_id: '1AbCdEfGh_ij-KL' });
  });

  it('reads documents in the HTML renderer too', () => {
    const doc = html(
      '<div class="kix-paragraphrenderer"><div class="kix-lineview">First line of</div><div class="kix-lineview">a paragraph.</div></div><div class="kix-paragraphrenderer"><span>Second.</span></div>',
      'https://docs.google.com/document/d/XYZ/edit',
    );
    expect(extractGdocs(doc)?.content).toBe('First line of a paragraph.\n\nSecond.');
  });

  it('is only for documents', () => {
    expect(platformFor('https://docs.google.com/document/d/x/edit')).toBe('gdocs');
    expect(platformFor('https://docs.google.com/spreadsheets/d/x/edit')).toBeNull();
    expect(extractGdocs(html('<p>hi</p>', 'https://docs.google.com/document/u/0/'))).toBeNull();
  });
});
