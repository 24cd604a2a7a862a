import { render, screen } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { ApiError } from '../api'
import { ErrorBox } from './feedback'

describe('ErrorBox', () => {
  it('shows every error in words, never with the field name the API put first', () => {
    render(<ErrorBox error={new ApiError(400, 'name: must not be blank')} />)
    expect(screen.getByRole('alert').textContent).toBe('Name must not be blank')
  })

  it('shows the sign-in link refusal as the server words it for a person', () => {
    render(<ErrorBox error="code: is required (the code in the sign-in link)" />)
    expect(screen.getByRole('alert').textContent).toBe('Code is required (the code in the sign-in link)')
  })
})
