"""The agent's periodic work: one scheduler (``scheduler.PeriodicScheduler``) and one
module per task (heartbeat, inventory, ...)."""
