"""The OpenTelemetry export of trace runs (``trace export-otel``): spans and their GenAI
attributes, the ledger facts of reviewer-specialist calls, the OTLP settings, the protobuf
encoding, and the sending to a file or a collector.
"""
