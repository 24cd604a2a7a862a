/** A save memlane already holds (the same content in the same project: it answers `duplicate`)
 * that brings a title or tags the user typed: memlane's documented way to change them,
 * PATCH /v3/documents/{id}, applies them, so nothing typed is lost. The same for a save sent at
 * once and for one that waited in the outbox. */
import { ApiError, type DocumentOut, type DocumentPatch, type MemoryOut } from './api';

/** What the user typed for a save (not what the page suggested): applied to a duplicate. */
export interface Wanted {
  title?: string;
  tags?: string[];
}

export type EditedField = 'title' | 'tags';

/** A save as memlane answered it, with what a duplicate had changed. */
export interface Delivery {
  memory: MemoryOut;
  updated: EditedField[];
  /** memlane refused the change (the save itself stands). */
  updateError?: string;
}

export type Patch = (documentId: string, patch: DocumentPatch) => Promise<DocumentOut>;

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((t): t is string => typeof t === 'string') : [];
}

/** The tags a person gave the memory: memlane tags a memory saved without any with its keywords
 * (metadata.keywords), which typed tags replace, as they would have on the first save. */
function givenTags(memory: Pick<MemoryOut, 'metadata'>): string[] {
  const metadata = (memory.metadata ?? {}) as Record<string, unknown>;
  const tags = strings(metadata.tags);
  const keywords = strings(metadata.keywords);
  const automatic = tags.length === keywords.length && tags.every((t, i) => t === keywords[i]);
  return automatic ? [] : tags;
}

/** The change a duplicate needs: a typed title it does not have; typed tags added to those a
 * person gave it before (a tag is never taken away by saving again). Null when it has them. */
export function duplicateEdits(memory: MemoryOut, wanted: Wanted | undefined): DocumentPatch | null {
  if (!memory.duplicate || !wanted) return null;
  const patch: DocumentPatch = {};
  const title = wanted.title?.trim();
  if (title && title !== memory.title) patch.title = title;
  const given = givenTags(memory);
  const tags = [...new Set([...given, ...(wanted.tags ?? [])])];
  const current = strings((memory.metadata as Record<string, unknown> | undefined)?.tags);
  if (wanted.tags?.length && (tags.length !== current.length || tags.some((t, i) => t !== current[i]))) patch.tags = tags;
  return Object.keys(patch).length ? patch : null;
}

/** Applies a duplicate's edits. memlane unreachable or failing: thrown, so the save is sent again
 * (with its Idempotency-Key: memlane answers it as before) and the edit retried. memlane refusing
 * the edit: the save stands and says so. */
export async function applyEdits(memory: MemoryOut, wanted: Wanted | undefined, patch: Patch): Promise<Delivery> {
  const edits = duplicateEdits(memory, wanted);
  if (!edits) return { memory, updated: [] };
  try {
    const doc = await patch(memory.id, edits);
    return { memory: { ...memory, title: doc.title, metadata: doc.metadata }, updated: Object.keys(edits) as EditedField[] };
  } catch (err) {
    if (err instanceof ApiError && err.kind === 'rejected') return { memory, updated: [], updateError: err.message };
    throw err;
  }
}

/** What the user is told about a save memlane already held, or '' for a new memory. */
export function duplicateNote(answer: { duplicate: boolean; updated: EditedField[]; updateError?: string }): string {
  if (!answer.duplicate) return '';
  if (answer.updateError) return `already saved; the new title and tags were not applied: ${answer.updateError}`;
  if (!answer.updated.length) return 'already saved: nothing changed';
  return `already saved: ${answer.updated.join(' and ')} updated`;
}
