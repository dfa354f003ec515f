"""Choosing a node for a new container (runs inside the API process): a scheduler
behind a small interface (``base.Scheduler``), the filter scheduler, and one module
per filter under ``filters/``."""
