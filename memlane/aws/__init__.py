"""The AWS host: what a Lambda function (functions/*) and the `--aws` commands compose at a cold
start, from the AWS adapters (memlane.adapters.aws) and the configuration model's AWS part, into
the `Services` every feature takes. The AWS counterpart of memlane.local; nothing below imports it."""
