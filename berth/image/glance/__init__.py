"""The glance image driver (``image_driver = glance``): container images kept in
OpenStack Glance as ``docker save`` tarballs (``container_format = docker``).

- ``matching``: which Glance records a name (or id) and tag mean (pure);
- ``cache``: the downloaded tarballs under ``[glance]images_directory``, reused by
  checksum;
- ``client``: Glance's REST API through openstacksdk on a keystoneauth session;
- ``driver``: ``GlanceImageDriver``, the ``berth.image.base.ImageStoreDriver``.
"""
