"""HTTP routers of berth's API, one router per resource."""
