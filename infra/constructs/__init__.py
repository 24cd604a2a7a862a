"""One construct per capability; infra/stack.py composes them."""
