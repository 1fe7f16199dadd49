"""Artifacts and their lineage: the catalog of versions (declared, uploaded, downloaded), the
line diff of two versions, and the lineage graph from a version back to the runs, sessions and
model turns behind it. Reads the records that runs and sessions write.
"""
