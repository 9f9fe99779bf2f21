"""The Go Text Protocol: a client for other engines (``client``)."""
