import { afterEach, describe, expect, it, vi } from 'vitest'
import { api, ApiError, setUnauthorizedHandler } from './api'
import { getKey, setKey } from './auth'

afterEach(() => vi.unstubAllGlobals())

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status })

describe('api client', () => {
  it('sends the key as a bearer header, no cookies, and the body as JSON', async () => {
    setKey('mlk_k')
    const fetchMock = vi.fn().mockResolvedValue(json(200, { results: [], total: 0, query_time_ms: 1 }))
    vi.stubGlobal('fetch', fetchMock)
    await api.recall({ query: 'cats', limit: 5 })
    const [url, init] = fetchMock.mock.calls[0]
    expect(url).toBe('/v3/recall')
    expect(init.headers.Authorization).toBe('Bearer mlk_k')
    expect(init.credentials).toBe('omit')
    expect(JSON.parse(init.body)).toEqual({ query: 'cats', limit: 5 })
  })

  it("raises the server's error message with its status", async () => {
    setKey('mlk_k')
    vi.stubGlobal('fetch', vi.fn().mockResolvedValue(json(400, { error: 'title: must not be empty' })))
    const failure = api.updateDocument('d1', { title: '' })
    await expect(failure).rejects.toBeInstanceOf(ApiError)
    await expect(failure).rejects.toMatchObject({ status: 400, message: 'title: must not be empty' })
  })

  it('signs out when the key is refused', async () => {
    setKey('mlk_revoked')
    const handler = vi.fn()
    setUnauthorizedHandler(handler)
    vi.stubGlobal('fetch', vi.fn().mockResolvedValue(json(401, { error: 'invalid or revoked API key' })))
    await expect(api.whoami()).rejects.toMatchObject({ status: 401 })
    expect(getKey()).toBeNull()
    expect(handler).toHaveBeenCalledOnce()
  })

  it('escapes ids in paths', async () => {
    setKey('mlk_k')
    const fetchMock = vi.fn().mockResolvedValue(json(200, { related: [] }))
    vi.stubGlobal('fetch', fetchMock)
    await api.related('../keys', 3)
    expect(fetchMock.mock.calls[0][0]).toBe('/v3/documents/..%2Fkeys/related?limit=3')
  })
})
