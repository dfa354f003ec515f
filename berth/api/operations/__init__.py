"""What the API does for each operation before it casts to (or calls) an agent: the
checks (state table, task in progress, host up, policy), the API-side row changes,
the action record, then the RPC. One module per area; routers stay thin; the API
never touches Docker."""
