"""The REST API v1 (Zun's wire contract) on FastAPI: ``app.create_app`` builds the
application; ``routers/`` has one router per resource; ``errors`` is the only place
that builds Zun's error bodies; ``schemas/`` validates input; ``views`` renders
records; ``compute_api`` is what the API does before it casts to or calls an agent."""
