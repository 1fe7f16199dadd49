"""Persistent kernels: a long-lived worker in one sandbox, a session's kernel whose every
evaluation is a recorded run, and the kernel host process that keeps one alive between
commands, with its files on disk, its protocol and its clients.
"""
