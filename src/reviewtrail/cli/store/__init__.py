"""Store commands: ``reviewtrail init | verify | migrate``, the content-addressed store
(``reviewtrail cas``), the append-only ledger (``reviewtrail ledger``) and writer keys
(``reviewtrail key``)."""
