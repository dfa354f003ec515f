"""What ``berth-status upgrade check`` examines (oslo.upgradecheck's contract: each
check returns a ``Result`` of Success, Warning or Failure with details saying what
to do). The checks take plain values and read nothing but what they are given; the
wiring (which options feed which check) is ``berth/cmd/status.py``.

- ``database``: the database answers and is at this code's migration head; every
  compute agent's heartbeat is recent.
- ``unstorable_rows``: no row holds a NUL or a lone surrogate (which an older berth
  let in: issue 42); each one is named with what to do about it.
- ``messaging``: RabbitMQ (``transport_url``) accepts a login.
- ``placement``: OpenStack Placement, when configured, answers with berth's
  credentials.
- ``options``: options set that berth ignores (deprecated for removal), values
  with a comment in them, settings that are unsafe or refused.

Like the migrations, the checks read the database with SQLAlchemy Core on the
tables, never through berth's query modules, and only columns every revision has.
"""
