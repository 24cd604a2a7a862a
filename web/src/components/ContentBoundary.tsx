// Rendered content that fails never takes the page with it: whatever a memory holds, the rest of
// the page (its details, its edit and delete controls) stays usable. The content is then shown as
// plain text, which cannot fail.
import { Component, type ReactNode } from 'react'

export function PlainText({ text, reason }: { text: string; reason: string }) {
  return (
    <div className="plain-content" data-testid="plain-content">
      <p className="muted small" role="note">
        Shown as plain text: {reason}.
      </p>
      <pre dir="auto">{text}</pre>
    </div>
  )
}

type Props = { text: string; children: ReactNode }
type State = { failed: boolean }

export class ContentBoundary extends Component<Props, State> {
  state: State = { failed: false }

  static getDerivedStateFromError(): State {
    return { failed: true }
  }

  componentDidUpdate(previous: Props) {
    if (previous.text !== this.props.text && this.state.failed) this.setState({ failed: false })
  }

  render() {
    if (this.state.failed) return <PlainText text={this.props.text} reason="it could not be formatted" />
    return this.props.children
  }
}
