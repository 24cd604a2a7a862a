"""The permission trace: memlane's functions run under moto on their real code paths, every AWS
call they make is recorded and checked against the IAM policies of that function's role in the
synthesized template (and every OpenSearch request against the domain's access policy).

    policy.py      IAM policy evaluation (actions, resource ARNs, the condition operators memlane uses)
    template.py    a synthesized template resolved against the physical resources of one world
    world.py       that world: each function's Lambda environment, a function run as Lambda would
                   run it (cold start, its role), SQS event sources, the workflow state by state
    provision.py   the template's resources the functions call, created in moto
    recorder.py    every botocore call, attributed to the running role, checked and refused as AWS would
    needs.py       what IAM authorizes for each call (action, resource, condition context)
    checker.py     calls against grants: what was denied, which grants nothing used
    environ.py     the environment variables memlane's code reads while a function runs
    models.py      Bedrock's answers (embeddings, Converse, Rerank); knn.py: k-NN for osmem-server
    vectors.py     Amazon S3 Vectors: moto, with tests/s3vectors_fake.py for what moto lacks (QueryVectors)
    events.py      the events Lambda hands the functions

The scenarios that drive it are tests/infra/trace_scenarios.py; the tests, test_permission_trace.py
and test_environment.py beside them. The second search backend, S3 Vectors, plugs in through the
`needs` of its operations (needs.py), a provisioner for its bucket (provision.py), its edge
(vectors.py: every s3vectors call checked against the role, then answered by the fake) and the
`s3vectors` variant in tests/infra/conftest.py.
"""
