"""memlane on AWS: CDK constructs, the stack that composes them, and Docker-free packaging."""
