"""The deployment guide (docs/) run for real: every command of every page, in order."""
