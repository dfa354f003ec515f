"""The REST API v1 (Zun's wire contract) on FastAPI: ``app.create_app`` builds the
application; ``routers/`` has one router per resource, thin; ``operations/`` is what
the API does for each request before it casts to or calls an agent (the create's
placing transaction in ``operations/placing``); ``schemas/`` declares and checks every
request body and query (the same declarations feed ``openapi``); ``errors`` is the
only place that builds Zun's error bodies; ``views`` renders records; ``authtoken``
validates Keystone tokens; ``evacuation`` recreates a dead node's containers."""
