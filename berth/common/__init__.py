"""Small pieces every package shares: the request context, the exception tree,
logging set-up with the container uuid on every line."""
