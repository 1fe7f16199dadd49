"""The trace commands as library calls: ``trace save`` as a request (its options and input
handling), ``trace verify`` against the schemas, the rules and the project's store, and the
debugging views of ``trace ls``, ``show``, ``diff`` and ``divergence``.
"""
