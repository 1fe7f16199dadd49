"""Persistent kernels: a long-lived worker in one sandbox, a session's kernel whose every
evaluation is a recorded run, and the kernel host process that keeps one alive between
commands, with its files on disk, its protocol and its clients.
"""

import typing

from reviewtrail import _face

if typing.TYPE_CHECKING:
    from reviewtrail.provenance.kernels._client import KernelAnswer as KernelAnswer
    from reviewtrail.provenance.kernels._client import KernelEntry as KernelEntry
    from reviewtrail.provenance.kernels._client import list_kernels as list_kernels
    from reviewtrail.provenance.kernels._client import run_in_kernel as run_in_kernel
    from reviewtrail.provenance.kernels._client import stop_kernels as stop_kernels
    from reviewtrail.provenance.kernels._host import KernelHostConfig as KernelHostConfig
    from reviewtrail.provenance.kernels._host import serve_kernel_host as serve_kernel_host
    from reviewtrail.provenance.kernels._session_kernel import SessionKernel as SessionKernel
else:
    __getattr__, __dir__ = _face.lazy(__name__)
