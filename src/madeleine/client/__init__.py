"""``Client`` and ``AsyncClient``: ``Memory``'s methods over the REST server, so moving from
embedded to server is one changed line."""

from madeleine.client.asynchronous import AsyncClient
from madeleine.client.synchronous import Client

__all__ = ["AsyncClient", "Client"]
