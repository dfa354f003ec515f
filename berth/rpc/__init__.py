"""RPC between the API and the compute agents: one small interface
(``base.Transport``: cast and call) with two transports, in-process dispatch for
``berth serve`` (``inproc``) and oslo.messaging over RabbitMQ (``oslo``), and the
client with Zun's method names (``client.ComputeAPI``)."""
