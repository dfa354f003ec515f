"""Images: parsing references (``reference.py``) and deciding whether to pull them."""
