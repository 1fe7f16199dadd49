"""Contract suites: what every backend of a kind must do, written once.

Each contract is a base class whose tests run against whatever its ``make_*()`` hook
returns. A backend joins by one small subclass in a test module, named ``Test<Backend>``
so that pytest collects it and the test ids name the backend::

    class TestSQLiteLedger(SqlLedgerContract):
        def make_url(self) -> str: ...

- ``contracts.ledger``: :class:`LedgerContract` (``make_ledger``, ``tamper``) and
  :class:`SqlLedgerContract` (``make_url``, ``tamper_url``); backends in
  ``tests/test_ledger_contract.py``.
- ``contracts.cas``: :class:`CasContract` (``make_cas``, ``tamper``); backends in
  ``tests/test_cas_contract.py``.
- ``contracts.models``: :class:`ModelBackendContract` (``make_backend``,
  ``make_failing_backend``, ``requests_seen``) and :class:`HttpModelBackendContract`
  (``make_http_backend``, against a loopback HTTP server); backends in
  ``tests/test_model_contract.py``.
- ``contracts.store_backend``: :class:`StoreBackend`, a whole store in each configuration
  (``embedded``, ``postgres+s3``), given by the ``store_backend`` fixture of tests/conftest.py to
  the end-to-end tests of every package (listed in ``tests/test_backends_e2e.py``).
"""

import pytest

# The contracts' asserts live here, outside the test modules: have pytest explain them too.
pytest.register_assert_rewrite("contracts.cas", "contracts.ledger", "contracts.models", "contracts.store_backend")

__all__: list[str] = []
