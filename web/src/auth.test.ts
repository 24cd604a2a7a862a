import { afterEach, describe, expect, it, vi } from 'vitest'
import { getKey, redeemSignInCode, safeNext, setKey, takeSignInCode } from './auth'

describe('sign-in link', () => {
  afterEach(() => {
    vi.unstubAllGlobals()
    window.history.replaceState(null, '', '/')
  })

  it('takes the code from the fragment and removes it from the address bar', () => {
    window.history.replaceState(null, '', '/login?next=%2Fgraph#code=abc123')
    expect(takeSignInCode()).toBe('abc123')
    expect(window.location.hash).toBe('')
    expect(window.location.href).not.toContain('abc123')
    expect(window.location.search).toBe('?next=%2Fgraph')
  })

  it('finds no code when there is no fragment', () => {
    window.history.replaceState(null, '', '/login')
    expect(takeSignInCode()).toBeNull()
  })

  it('redeems the code in a POST body, never in a URL', async () => {
    const fetchMock = vi.fn().mockResolvedValue(new Response(JSON.stringify({ key: 'mlk_secret' }), { status: 200 }))
    vi.stubGlobal('fetch', fetchMock)
    expect(await redeemSignInCode('one-time')).toBe('mlk_secret')
    const [url, init] = fetchMock.mock.calls[0]
    expect(url).toBe('/webapp/sign-in')
    expect(init.method).toBe('POST')
    expect(JSON.parse(init.body)).toEqual({ code: 'one-time' })
  })

  it('reports a used or expired code with the server message', async () => {
    vi.stubGlobal('fetch', vi.fn().mockResolvedValue(new Response(JSON.stringify({ error: 'code: already used' }), { status: 401 })))
    await expect(redeemSignInCode('old')).rejects.toThrow('code: already used')
  })
})

describe('safeNext', () => {
  it.each([
    [null, '/'],
    ['/memories/1', '/memories/1'],
    ['/search?q=x', '/search?q=x'],
    ['//evil.example/', '/'],
    ['https://evil.example/', '/'],
    ['/\\evil.example', '/'],
  ])('%j → %j', (next, expected) => {
    expect(safeNext(next)).toBe(expected)
  })
})

describe('key storage', () => {
  it('keeps the key for this origin', () => {
    setKey('mlk_abc')
    expect(getKey()).toBe('mlk_abc')
  })
})
