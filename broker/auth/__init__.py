"""Authentication (SASL PLAIN / SCRAM) and ACL authorization.

Broker properties, Kafka's names unless marked:

- ``listeners`` / ``listener.security.protocol.map``: PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL.
- ``ssl.keystore.location``: a PEM file with the certificate chain and the private key
  (``ssl.keystore.type=PEM``); ``ssl.key.password`` if the key is encrypted;
  ``ssl.truststore.location``: PEM CA certificates for client certificates;
  ``ssl.client.auth``: none / requested / required.
- ``sasl.enabled.mechanisms``: any of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512. PLAIN checks the
  password against the user's SCRAM credential, so one credential store serves both.
- ``sasl.bootstrap.users`` (ours): ``name:SCRAM-SHA-512:password;...`` created at start when
  the user has no credential yet, so a control plane can administer a fresh cluster.
- ``super.users``, ``authorizer.class.name`` (any non-empty value turns ACLs on),
  ``allow.everyone.if.no.acl.found``, ``connections.max.reauth.ms``,
  ``connection.failed.authentication.delay.ms``, ``sasl.server.max.receive.size``.
"""
