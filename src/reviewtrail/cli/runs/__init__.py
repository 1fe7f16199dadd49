"""Run and provenance commands: sandboxed runs (``reviewtrail run``), persistent kernels
(``reviewtrail kernel`` and the kernel host process), sessions, artifacts and their lineage
(``reviewtrail session | artifact | provenance``)."""
