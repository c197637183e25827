"""Clients of the public API (docs/api.md): the terminal client is a Python package here;
the web client (clients/web/) is static files."""
