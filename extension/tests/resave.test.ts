import { describe, expect, it } from 'vitest';
import { ApiError, type DocumentOut, type DocumentPatch, type MemoryOut } from '@/lib/api';
import { applyEdits, duplicateEdits, duplicateNote } from '@/lib/resave';

const held = (over: Partial<MemoryOut> = {}): MemoryOut => ({
  id: 'doc-1', title: 'Launch checklist board', status: 'ready', summary: null, chunk_count: 1,
  metadata: { tags: ['space'] }, project_id: 'p', content_type: 'text', created_at: '2026-01-01T00:00:00Z',
  duplicate: true, conversation_id: null, message_index: null, kind: 'memory', ...over,
});

/** PATCH /v3/documents/{id} as memlane answers it: the document with the change applied. */
function patcher(fail?: Error) {
  const calls: [string, DocumentPatch][] = [];
  const patch = async (id: string, body: DocumentPatch): Promise<DocumentOut> => {
    calls.push([id, body]);
    if (fail) throw fail;
    const memory = held();
    return { ...memory, title: body.title ?? memory.title, metadata: { ...memory.metadata, tags: body.tags ?? memory.metadata.tags } } as unknown as DocumentOut;
  };
  return { calls, patch };
}

describe('a save memlane already holds', () => {
  it('gets the title the user typed, and their tags added to its own', async () => {
    const p = patcher();
    const d = await applyEdits(held(), { title: 'Pad day', tags: ['launch', 'space'] }, p.patch);
    expect(p.calls).toEqual([['doc-1', { title: 'Pad day', tags: ['space', 'launch'] }]]);
    expect([d.memory.title, d.memory.metadata.tags, d.updated]).toEqual(['Pad day', ['space', 'launch'], ['title', 'tags']]);
    expect(duplicateNote({ duplicate: true, ...d })).toBe('already saved: title and tags updated');
  });

  it('is left alone when nothing typed is new, and a new memory is never patched', async () => {
    const p = patcher();
    expect(duplicateEdits(held(), { title: 'Launch checklist board', tags: ['space'] })).toBeNull();
    expect(duplicateEdits(held(), undefined)).toBeNull();
    expect(duplicateEdits(held({ duplicate: false }), { title: 'Other' })).toBeNull();
    const d = await applyEdits(held(), { tags: ['space'] }, p.patch);
    expect([p.calls.length, d.updated]).toEqual([0, []]);
    expect(duplicateNote({ duplicate: true, ...d })).toBe('already saved: nothing changed');
    expect(duplicateNote({ duplicate: false, updated: [] })).toBe('');
  });

  it('is sent again when memlane cannot take the change now, and stands when memlane refuses it', async () => {
    const down = patcher(new ApiError('unreachable', 'memlane is not reachable'));
    await expect(applyEdits(held(), { title: 'Pad day' }, down.patch)).rejects.toThrow('memlane is not reachable');
    const refused = patcher(new ApiError('rejected', 'title: at most 500 characters', 400));
    const d = await applyEdits(held(), { title: 'Pad day' }, refused.patch);
    expect([d.memory.title, d.updated, d.updateError]).toEqual(['Launch checklist board', [], 'title: at most 500 characters']);
    expect(duplicateNote({ duplicate: true, ...d })).toBe(
      'already saved; the new title and tags were not applied: title: at most 500 characters',
    );
  });
});

describe('tags on a save memlane already holds', () => {
  it("replace the keywords memlane tagged it with, as on a first save, and join a person's own", () => {
    const auto = held({ metadata: { tags: ['launch checklist'], keywords: ['launch checklist'] } });
    expect(duplicateEdits(auto, { tags: ['launch', 'pad'] })).toEqual({ tags: ['launch', 'pad'] });
    const own = held({ metadata: { tags: ['launch', 'pad'], keywords: ['launch checklist'] } });
    expect(duplicateEdits(own, { tags: ['offline', 'pad'] })).toEqual({ tags: ['launch', 'pad', 'offline'] });
    expect(duplicateEdits(own, { tags: ['pad'] })).toBeNull();
  });
});
