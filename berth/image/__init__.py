"""Images: parsing references (``reference.py``) and deciding whether to pull them;
the interface of an image store (``base.py``) and its Glance driver (``glance/``)."""
