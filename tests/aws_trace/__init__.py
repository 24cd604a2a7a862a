"""The permission trace: memlane's functions run under moto on their real code paths, every AWS
call they make is recorded and checked against the IAM policies of that function's role in the
synthesized template (and every OpenSearch request against the domain's access policy).

    policy.py      IAM policy evaluation (actions, resource ARNs, the condition operators memlane uses)
    template.py    a synthesized template resolved against the physical resources of one world
    world.py       that world: the template's resources created in moto, each function's Lambda
                   environment, a function run as Lambda would run it (cold start, its role)
    recorder.py    every botocore call and OpenSearch request, attributed to the running role
    needs.py       what IAM authorizes for each recorded call (action, resource, condition context)
    checker.py     calls against grants: what was denied, which grants nothing used
    environ.py     the environment variables memlane's code reads while a function runs

A second search backend (or any new AWS service) plugs in by adding the `needs` of its operations
(needs.py's registry) and, for a resource type the world must create, a provisioner (world.py).
"""
