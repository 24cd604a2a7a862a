import { fireEvent, render, screen } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Router } from 'wouter'
import { memoryLocation } from 'wouter/memory-location'
import { setKey } from '../auth'
import { ConfirmConnection } from './ConfirmConnection'

afterEach(() => {
  vi.unstubAllGlobals()
  window.history.replaceState(null, '', '/')
})

function serve(confirm: (body: unknown) => Response) {
  const calls: string[] = []
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      calls.push(`${init.method} ${url}`)
      if (url === '/v3/whoami') {
        return new Response(
          JSON.stringify({ user_id: 'u', organization_id: 'o', organization_name: 'Acme', key_id: 'k', can_manage_keys: false }),
        )
      }
      if (url === '/v3/connections/confirm' && init.method === 'POST') return confirm(JSON.parse(String(init.body)))
      return new Response(JSON.stringify({ error: 'not found' }), { status: 404 })
    }),
  )
  return calls
}

function open() {
  window.history.replaceState(null, '', '/connections/confirm?flow=tok3n')
  const { hook } = memoryLocation({ path: '/connections/confirm' })
  render(
    <Router hook={hook}>
      <ConfirmConnection />
    </Router>,
  )
}

describe('confirming a connection the provider sent back', () => {
  it('links nothing until the member clicks, then sends the flow token once', async () => {
    setKey('mlk_k')
    let sent: unknown = null
    const calls = serve((body) => {
      sent = body
      return new Response(JSON.stringify({ id: 'c', provider: 'github', name: 'GitHub: acme/app', status: 'active', account: 'octo' }))
    })
    open()
    const button = await screen.findByRole('button', { name: 'Link it to Acme' })
    expect(calls).not.toContain('POST /v3/connections/confirm')
    fireEvent.click(button)
    expect(await screen.findByRole('status')).toHaveTextContent('Connected: GitHub: acme/app (as octo)')
    expect(sent).toEqual({ flow: 'tok3n' })
    expect(window.location.search).toBe('') // the used token leaves the address bar
  })

  it('says nothing was linked when the flow belongs to another organization', async () => {
    setKey('mlk_k')
    serve(() => new Response(JSON.stringify({ error: 'flow: this authorization was started by another organization' }), { status: 403 }))
    open()
    fireEvent.click(await screen.findByRole('button', { name: 'Link it to Acme' }))
    expect(await screen.findByRole('alert')).toHaveTextContent('nothing was linked')
  })
})
