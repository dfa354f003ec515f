"""One module per flow of the compute agent. A flow is plain functions named with
verbs; it takes ``AgentDeps``, a request context and a container uuid, re-reads the
row (the database, not the RPC payload, is the truth), and writes every outcome
back to the row, including failures (status Error with a reason a user can act on).
"""
