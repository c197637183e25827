"""The end-to-end tests' parts are the integration tests' real ones: a private
redis-server, the three projection workers and ``mighty gateway`` on a free port."""

from tests.integration.conftest import plain_logging, redis_client, redis_server  # noqa: F401
from tests.integration.test_gateway import gateway  # noqa: F401
